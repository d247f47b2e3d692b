"""Warm start: backend commands forked from a server that imported TensorFlow behave as fresh processes.

Real backend runs of builtin:mlp (a few seconds each), one server for the module.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time

import pytest

from tfturbo import protocol, warm_start
from tfturbo.backend_client import backend_command, run_backend
from tfturbo.cli_args import run_argv
from tfturbo.settings import RunSettings
from trainer_backend.warm import import_time_env

pytestmark = pytest.mark.slow

SHORT = RunSettings("builtin:mlp", steps=60, val_every=60, profile=(0, 0), no_model=True)


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    """A warm server for the module's runs, and the log its refusals go to: the module's own, started as a study
    starts it, not the test session's (its socket is out of the environment while the module runs)."""
    log = tmp_path_factory.mktemp("warm") / "backend.log"
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv(warm_start.SOCKET_ENV, raising=False)
        with warm_start.warm_backend(str(log)):
            yield log


def hello(result) -> dict:
    return next(e for e in result.events if e.get("type") == protocol.HELLO)


def test_a_run_forked_from_the_server_is_written_like_a_fresh_one(warm, tmp_path):
    warm_out = tmp_path / "warm"
    forked = run_backend("run", run_argv(SHORT, str(warm_out)))
    assert forked.status == protocol.RunStatus.COMPLETED, forked.error
    assert hello(forked)["warm"] is True and hello(forked)["pid"] != os.getpid()
    summary = json.loads((warm_out / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["steps_completed"] == SHORT.steps
    assert (warm_out / "run.yaml").is_file() and (warm_out / "events.jsonl").is_file()
    cold_out = tmp_path / "cold"  # the same run in a process of its own
    cold = run_backend("run", run_argv(SHORT, str(cold_out)), env={**os.environ, warm_start.SOCKET_ENV: ""})
    assert hello(cold)["warm"] is False
    fresh = json.loads((cold_out / "summary.json").read_text())
    assert set(summary) == set(fresh)  # the same document
    # its process time counts from the client's start, and the TensorFlow import (seconds) is not in it
    before_fit = summary["process_s"] - summary["wall_s"]
    assert 0 < before_fit < fresh["process_s"] - fresh["wall_s"] - 1.0


def test_a_command_whose_import_time_environment_differs_runs_cold(warm, tmp_path):
    env = {**os.environ, **warm_start.child_env(), "TF_ENABLE_ONEDNN_OPTS": "0"}
    result = run_backend("run", run_argv(SHORT, str(tmp_path / "r")), env=env, stderr_path=str(tmp_path / "log"))
    assert result.status == protocol.RunStatus.COMPLETED, result.error
    assert hello(result)["warm"] is False
    assert "warm start refused (TF_ENABLE_ONEDNN_OPTS differ" in (tmp_path / "log").read_text()


def test_without_a_reachable_server_a_command_runs_cold(tmp_path):
    env = {**os.environ, warm_start.SOCKET_ENV: str(tmp_path / "no-socket")}
    result = run_backend("env", [], env=env)
    assert result.status == protocol.RunStatus.COMPLETED and hello(result)["warm"] is False


def test_the_stop_command_reaches_the_forked_child(warm, tmp_path):
    cancel = threading.Event()

    def on_event(event):
        if event.get("type") == protocol.STEPS:
            cancel.set()

    long = SHORT.with_(steps=200_000, val_every=200_000)
    result = run_backend("run", run_argv(long, str(tmp_path / "r")), on_event=on_event, cancel=cancel)
    assert hello(result)["warm"] is True
    assert result.status == protocol.RunStatus.CANCELLED
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["status"] == "cancelled" and 0 < summary["steps_completed"] < long.steps


def test_a_killed_client_takes_its_child_with_it(warm, tmp_path):
    long = SHORT.with_(steps=200_000, val_every=200_000)
    env = {**os.environ, **warm_start.child_env(), "PYTHONUNBUFFERED": "1"}
    client = subprocess.Popen(backend_command("run", run_argv(long, str(tmp_path / "r"))), stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    pid = None
    for line in client.stdout:
        event = json.loads(line)
        if event.get("type") == protocol.HELLO:
            assert event["warm"] is True
            pid = event["pid"]
        if event.get("type") == protocol.STEPS:
            break
    assert pid is not None and pid != client.pid
    client.kill()
    client.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.1)
    assert not _alive(pid), "the forked child went on training after its client was killed"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as stat:  # a zombie waits for the server to reap it: it trains no more
            return stat.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_only_what_is_read_at_import_time_must_match():
    env = {"TF_XLA_FLAGS": "--x", "PYTHONUNBUFFERED": "1", "HOME": "/h", "KERAS_BACKEND": "tensorflow",
           "TFTURBO_WARM_SOCKET": "/s", "OMP_NUM_THREADS": "2"}
    assert import_time_env(env) == {"TF_CPP_MIN_LOG_LEVEL": "1", "KERAS_BACKEND": "tensorflow",
                                    "OMP_NUM_THREADS": "2"}
    assert import_time_env({"TF_CPP_MIN_LOG_LEVEL": "2"})["TF_CPP_MIN_LOG_LEVEL"] == "2"
