"""The backend on another host over ssh (issue 15): a real sshd on 127.0.0.1 plays the host."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import yaml

from tfturbo import remote
from tfturbo.errors import UserError

REPO = Path(__file__).resolve().parents[2]

WORKLOAD = '''\
import keras
import numpy as np
from helpers import arrays   # a module beside the workload: the whole folder travels


def build_model():
    model = keras.Sequential([keras.Input(shape=(8,)), keras.layers.Dense(16, activation="relu"),
                              keras.layers.Dense(3, activation="softmax")])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def make_datasets(batch_size):
    x, y = arrays()
    return (x, y), (x[:64], y[:64])
'''
HELPERS = '''\
import numpy as np


def arrays():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(1000, 8)).astype("float32")   # 1000 % 32 != 0: a partial last batch
    return x, (x[:, 0] > 0).astype("int32") + (x[:, 1] > 1).astype("int32")
'''


def tfturbo(sshd, *args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    env = {**os.environ, **sshd.ssh_env, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "tfturbo.cli", *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=timeout)


def remote_args(sshd) -> list[str]:
    return ["--host", sshd.host, "--remote-python", sshd.python]


@pytest.fixture(scope="module")
def remote_run(sshd, tmp_path_factory):
    out = tmp_path_factory.mktemp("remote") / "run"
    proc = tfturbo(sshd, "run", "builtin:mlp", *remote_args(sshd), "--out", str(out), "--steps", "30", "--json")
    return out, proc


def test_remote_run_leaves_a_complete_local_run_dir_that_records_the_host(sshd, remote_run):
    out, proc = remote_run
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = json.loads(proc.stdout)
    assert doc["status"] == "completed" and doc["replicas"] == 1
    for name in ("run.yaml", "events.jsonl", "summary.json", "backend.log", "paired_validation.npz",
                 "checkpoint/model.keras", "checkpoint/tfturbo-settings.yaml"):
        assert (out / name).is_file(), name
    assert (out / "tb").is_dir()
    record = yaml.safe_load((out / "run.yaml").read_text())
    assert record["host"] == {"host": sshd.host, "python": sshd.python}
    assert json.loads((out / "summary.json").read_text())["status"] == "completed"
    types = [json.loads(line)["type"] for line in (out / "events.jsonl").read_text().splitlines()]
    assert "steps" in types and types[-1] == "done"


def test_remote_run_refuses_an_existing_local_run_before_reaching_the_host(sshd, remote_run):
    out, _ = remote_run
    proc = tfturbo(sshd, "run", "builtin:mlp", "--host", "nosuchhost.invalid", "--out", str(out), "--steps", "5")
    assert proc.returncode == 2
    assert "already holds a run" in proc.stderr


def test_remote_audit_of_a_local_file_finds_what_the_local_audit_finds(sshd, tmp_path):
    folder = tmp_path / "my project"  # a space: every remote argument is quoted
    folder.mkdir()
    (folder / "workload.py").write_text(WORKLOAD)
    (folder / "helpers.py").write_text(HELPERS)
    here = tfturbo(sshd, "audit", str(folder / "workload.py"), "--policy", "mixed_float16", "--json")
    there = tfturbo(sshd, "audit", str(folder / "workload.py"), "--policy", "mixed_float16", *remote_args(sshd),
                    "--json")
    assert here.returncode == 0, here.stderr[-2000:]
    assert there.returncode == 0, there.stderr[-2000:]
    codes = sorted(f["code"] for f in json.loads(here.stdout)["findings"])
    assert codes and sorted(f["code"] for f in json.loads(there.stdout)["findings"]) == codes


def _backend_pids(marker: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"trainer_backend" in cmdline and any(marker.encode() in part for part in cmdline):
                pids.append(int(entry.name))
    return pids


def test_killing_the_local_client_stops_the_remote_backend(sshd, tmp_path):
    name = f"killed-{uuid.uuid4().hex[:8]}"
    out = tmp_path / name
    env = {**os.environ, **sshd.ssh_env, "PYTHONPATH": str(REPO)}
    client = subprocess.Popen([sys.executable, "-m", "tfturbo.cli", "run", "builtin:mlp", *remote_args(sshd),
                               "--out", str(out), "--steps", "100000"], cwd=REPO, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        events = out / "events.jsonl"
        while not (events.exists() and '"steps"' in events.read_text()):  # streamed here as they arrive
            assert client.poll() is None and time.monotonic() < deadline, "the remote run never reported steps"
            time.sleep(0.3)
        pids = _backend_pids(name)
        assert pids, "no remote backend process found"
        remote_folder = os.readlink(f"/proc/{pids[0]}/cwd")  # left behind by a killed client (documented)
    finally:
        client.send_signal(signal.SIGKILL)
        client.wait()
    deadline = time.monotonic() + 30
    while _backend_pids(name) and time.monotonic() < deadline:
        time.sleep(0.3)
    assert not _backend_pids(name), "the remote backend outlived its client"
    shutil.rmtree(remote_folder, ignore_errors=True)


def test_host_and_ssh_command_are_checked_before_anything_runs(monkeypatch):
    with pytest.raises(UserError):
        remote.RemoteHost("-oProxyCommand=evil")
    with pytest.raises(UserError):
        remote.from_args(None, "python3")
    monkeypatch.setenv(remote.SSH_ENV, "ssh -F 'unterminated")
    with pytest.raises(UserError):
        remote.ssh_command()


def test_remote_arguments_are_quoted_for_the_remote_shell(monkeypatch):
    monkeypatch.setenv(remote.SSH_ENV, "ssh -F cfg")
    host = remote.RemoteHost("user@box", "/opt/py 3/bin/python")
    argv = remote.backend_argv(host, "/tmp/tfturbo-x", "run", ["w.py", "--out", "/tmp/tfturbo-x/out/r", "--",
                                                                "--name", "$(touch /tmp/pwned)"])
    assert argv[:3] == ["ssh", "-F", "cfg"] and argv[-2:-1] == ["user@box"] and argv[-3] == "--"
    assert "'/opt/py 3/bin/python'" in argv[-1] and "'$(touch /tmp/pwned)'" in argv[-1]


def test_remote_env_answers_from_the_host(sshd):
    proc = tfturbo(sshd, "env", *remote_args(sshd), "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = json.loads(proc.stdout)
    assert doc["devices"] and doc["tensorflow"]


def test_an_unreachable_host_is_one_line_and_exit_2(sshd, tmp_path):
    proc = tfturbo(sshd, "audit", "builtin:mlp", "--host", "nosuchhost.invalid", "--json", timeout=60)
    assert proc.returncode == 2
    assert "cannot prepare a folder on nosuchhost.invalid" in proc.stderr and "Traceback" not in proc.stderr


def test_a_remote_run_reads_its_own_validation_data_not_a_local_folder():
    """--val-set names a folder of this machine's study: on the host the run validates on its own examples, which
    the gate pairs by their digests, and nothing is written at that path there."""
    from tfturbo.remote import remote_argv

    argv = ["train.py", "--out", "/study/runs/02-x", "--val-set", "/study/validation", "--steps", "60", "--",
            "--val-set", "kept"]
    assert remote_argv(argv, None, "/study/runs/02-x", "/tmp/f") == [
        "train.py", "--out", "/tmp/f/out/02-x", "--steps", "60", "--", "--val-set", "kept"]
