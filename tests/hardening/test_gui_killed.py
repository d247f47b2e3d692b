"""The GUI killed: the backends it started exit on their own (end of stdin), no orphan keeps training."""

from __future__ import annotations

import json
import subprocess
import threading

import psutil
from hardening_helpers import HERE, PYTHON, ROOT, wait_exited

from tfturbo import protocol, runfiles

EXIT_WITHIN_S = 15  # finish the step, write the checkpoint and the summary, exit


def test_backend_exits_when_its_gui_is_killed(tmp_path):
    out = tmp_path / "orphan"
    gui = subprocess.Popen([PYTHON, str(HERE / "gui_parent.py"), str(out)], cwd=ROOT, stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
    watchdog = threading.Timer(180, gui.kill)
    watchdog.start()
    try:
        line = gui.stdout.readline()
    finally:
        watchdog.cancel()
    assert line.startswith("backend "), f"the stand-in GUI ended early (exit {gui.poll()})"
    backend = psutil.Process(int(line.split()[1]))
    family = psutil.Process(gui.pid).children(recursive=True)
    assert backend in family

    gui.kill()
    gui.wait()
    assert wait_exited(family, EXIT_WITHIN_S) == []

    summary = json.loads((out / runfiles.SUMMARY).read_text())
    assert summary["status"] == protocol.RunStatus.CANCELLED  # stopped cooperatively at the end of its stdin, not killed
