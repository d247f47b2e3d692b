"""Shared fixtures. Runs of the real backend are expensive (TensorFlow import
alone costs seconds), so the ones several tests read are made once per session.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tfturbo import warm_start

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

ROOT = Path(__file__).resolve().parents[1]

# The files that train most (tens of backend processes each), first: `make test` runs the files on two
# workers in collection order (`--no-loadscope-reorder`: pytest-xdist 3.8 would otherwise order the files by
# their number of tests), and a long file started last would leave one worker idle at the end. Then the
# long ones collected late (tune, truthful and trials come last alphabetically), so the tail is short files.
LONGEST_FIRST = ("tests/tune/test_tune_e2e.py", "tests/script/test_script_cli.py",
                 "tests/diagnostics/test_diag_cli.py", "tests/gui/test_gui_end_to_end.py",
                 "tests/gui/test_gui_engine.py", "tests/trials/test_ab_cli.py", "tests/gui/test_gui_trust.py",
                 "tests/truthful/test_truthful_ab.py", "tests/tune/test_resume_killed_cli.py",
                 "tests/truthful/test_truthful_runs.py", "tests/patch/test_patch_real.py",
                 "tests/script/test_as_written.py", "tests/backend/test_backend_precision.py",
                 "tests/distributed/test_multiworker.py", "tests/backend/test_backend_measure.py",
                 "tests/backend/test_run_pair.py", "tests/backend/test_warm_start.py")


def pytest_collection_modifyitems(config, items):
    rank = {path: i for i, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(LONGEST_FIRST)))  # stable otherwise


def run_cli(*args: str, timeout: float = 300, check_json: bool = False, stdin: str | None = None,
            cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run `tfturbo ARGS...` as a user would (a fresh process), capturing its output."""
    proc = subprocess.run([sys.executable, "-m", "tfturbo.cli", *args], capture_output=True, text=True,
                          timeout=timeout, input=stdin, cwd=cwd or ROOT)
    if check_json:
        assert proc.returncode == 0, proc.stderr[-3000:]
        json.loads(proc.stdout)
    return proc


@pytest.fixture(scope="session")
def _machine_cache(tmp_path_factory) -> Path:
    """One cache for the session: the matmul ceiling is measured once per machine, as for a user."""
    return tmp_path_factory.mktemp("machine-cache")


@pytest.fixture(autouse=True)
def _private_home(tmp_path_factory, monkeypatch, _machine_cache):
    """Logs and default study folders go to a temporary home, not the user's."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("TFTURBO_CACHE_DIR", str(_machine_cache))
    return home


@pytest.fixture(scope="session", autouse=True)
def _warm_server():
    """One warm server per test process (trainer_backend/warm.py), its socket in the environment every backend
    command of the session inherits — through the CLI, the GUI or backend_client: each then forks from one
    TensorFlow import, as a study's runs do, instead of importing TensorFlow itself (seconds of CPU each, most
    of the suite's cost). A command whose import-time environment differs still runs cold (the server refuses),
    and tests of the cold start itself take `cold_backend`. TFTURBO_WARM=0 runs the whole session cold."""
    if os.environ.get(warm_start.SOCKET_ENV) or os.environ.get(warm_start.SWITCH_ENV) == "0":
        yield
        return
    server = warm_start.Server(None)
    if server.start():
        os.environ[warm_start.SOCKET_ENV] = server.path
    try:
        yield
    finally:
        os.environ.pop(warm_start.SOCKET_ENV, None)
        server.stop()


@pytest.fixture
def cold_backend(monkeypatch):
    """This test's backend commands import TensorFlow themselves (a test of the cold start or of a server of
    its own), not forked from the session's warm server."""
    monkeypatch.delenv(warm_start.SOCKET_ENV, raising=False)


@pytest.fixture(autouse=True)
def _environment_restored():
    """Whatever a test's code changed in os.environ without monkeypatch is undone after it: a local cluster's
    chief sets TF_CONFIG in its own process, and once that leaked from an in-process test, every later
    multi-worker backend in the same worker inherited it and waited forever for workers that never came."""
    saved = dict(os.environ)
    yield
    if os.environ != saved:
        os.environ.clear()
        os.environ.update(saved)


@pytest.fixture(scope="session")
def mlp_run(tmp_path_factory) -> Path:
    """One completed float32 run of builtin:mlp, shared by every test that only reads a run."""
    out = tmp_path_factory.mktemp("runs") / "mlp-f32"
    proc = run_cli("run", "builtin:mlp", "--out", str(out), "--steps", "120", "--profile", "30:40", "--json")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out
