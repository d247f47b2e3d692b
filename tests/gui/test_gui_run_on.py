"""The wizard's "Run on: ssh host" (issue 15): fields checked and locked, and commands run through ssh.

No sshd is needed: TFTURBO_SSH points at a fake ssh that records its argv and
runs the remote command line here with `sh -c`, and the "remote Python" runs
the fake backend. So the real path runs end to end (the relay, `remote.py`'s
upload, ssh argv, fetch and clean-up) with only the network left out; the
tests in tests/remote/ cover a real sshd.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import yaml
from tests.gui.gui_helpers import FAKE_BACKEND, fake_launcher, go_next, make_window

from tfturbo.cli_args import run_argv
from tfturbo.protocol import RunStatus
from tfturbo.remote import RemoteHost
from tfturbo.settings import RunSettings
from tfturbo_gui.run_process import BackendProcess, SessionLauncher
from tfturbo_gui.session import WizardSession

FAKE_SSH = '''\
import json, os, sys
args = sys.argv[1:]
with open(os.environ["FAKE_SSH_LOG"], "a") as log:
    log.write(json.dumps(args) + "\\n")
host, command = args[args.index("--") + 1:]
os.execvp("sh", ["sh", "-c", command])
'''


def fake_host(tmp_path: Path, monkeypatch, scenario: str = "ok") -> tuple[RemoteHost, Path, Path]:
    """A RemoteHost reached through the fake ssh; returns it, the ssh argv log and the 'remote' temp folder."""
    ssh = tmp_path / "fake_ssh.py"
    ssh.write_text(FAKE_SSH)
    python = tmp_path / "remote-python"  # gets `-m trainer_backend COMMAND ARGS`, as a real Python would
    python.write_text(f'#!/bin/sh\nshift 2\nexec "{sys.executable}" "{FAKE_BACKEND}" --scenario {scenario} "$@"\n')
    python.chmod(0o755)
    log, remote_tmp = tmp_path / "ssh.log", tmp_path / "remote-tmp"
    remote_tmp.mkdir()
    monkeypatch.setenv("TFTURBO_SSH", f"{sys.executable} {ssh}")
    monkeypatch.setenv("FAKE_SSH_LOG", str(log))
    monkeypatch.setenv("TMPDIR", str(remote_tmp))  # where the remote folder is made (mktemp on the "host")
    return RemoteHost("me@gpu-box", str(python)), log, remote_tmp


def ssh_calls(log: Path) -> list[list[str]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_a_run_goes_through_ssh_and_its_files_come_back_into_the_local_run_dir(qtbot, tmp_path, monkeypatch):
    host, log, remote_tmp = fake_host(tmp_path, monkeypatch)
    session = WizardSession("builtin:mlp")
    session.host = host
    process = BackendProcess(SessionLauncher(session, fake_launcher()))
    out = tmp_path / "study" / "runs" / "01-baseline"
    with qtbot.waitSignal(process.ended, timeout=60_000):
        data = process.start("run", run_argv(RunSettings("builtin:mlp", steps=30), str(out)), name="baseline",
                             stderr_path=str(tmp_path / "backend.log"))
    assert data.status == RunStatus.COMPLETED, (tmp_path / "backend.log").read_text()[-2000:]
    backend = [argv for argv in ssh_calls(log) if "trainer_backend" in argv[-1]]
    assert len(backend) == 1 and backend[0][-2] == "me@gpu-box"
    assert f"{host.python} -m trainer_backend run builtin:mlp" in backend[0][-1]
    for name in ("run.yaml", "events.jsonl", "summary.json"):
        assert (out / name).is_file(), name
    assert yaml.safe_load((out / "run.yaml").read_text())["host"] == host.describe()
    assert json.loads((out / "summary.json").read_text())["status"] == "completed"
    assert os.listdir(remote_tmp) == []  # the remote folder was removed


def test_stop_ends_the_remote_backend(qtbot, tmp_path, monkeypatch):
    host, log, remote_tmp = fake_host(tmp_path, monkeypatch, scenario="slow")
    session = WizardSession("builtin:mlp")
    session.host = host
    process = BackendProcess(SessionLauncher(session, fake_launcher()))
    out = tmp_path / "run"
    data = process.start("run", run_argv(RunSettings("builtin:mlp", steps=100_000), str(out)), name="baseline")
    qtbot.waitUntil(lambda: len(data.step.view()) > 3, timeout=60_000)
    with qtbot.waitSignal(process.ended, timeout=process.stop_grace_ms - 1000):  # the stop line, not a kill
        process.stop()
    assert data.status == RunStatus.CANCELLED
    assert json.loads((out / "summary.json").read_text())["status"] == RunStatus.CANCELLED
    assert os.listdir(remote_tmp) == []


def test_the_ssh_host_field_is_checked_as_typed_and_locked_after_the_check(qtbot, tmp_path, monkeypatch):
    window = make_window(qtbot, tmp_path)
    page = window.pages[0]
    assert page.run_on.currentText() == "this machine" and not page.host_edit.isVisible()
    page.run_on.setCurrentIndex(1)
    assert page.host_edit.isVisible() and page.python_edit.text() == "python3"
    assert "[user@]host" in page.host_error.text() and not window.next_button.isEnabled()
    page.host_edit.setText("me@gpu box")
    assert "no spaces" in page.host_error.text() and window.session.host is None
    host, log, _ = fake_host(tmp_path, monkeypatch)
    page.python_edit.setText(host.python)
    page.host_edit.setText("me@gpu-box")
    assert page.host_error.text() == "" and window.session.host is None  # not asked per keystroke
    page.host_edit.editingFinished.emit()
    assert window.session.host == host
    qtbot.waitUntil(lambda: window.session.environment is not None, timeout=60_000)  # asked again, on the host
    assert page.machine_title.text() == "Host me@gpu-box"
    assert any("-m trainer_backend env" in argv[-1] for argv in ssh_calls(log))
    go_next(qtbot, window, 1, timeout=60_000)
    assert any("-m trainer_backend audit" in argv[-1] for argv in ssh_calls(log))
    assert not any(w.isEnabled() for w in (page.run_on, page.host_edit, page.python_edit))
