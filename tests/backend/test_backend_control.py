"""Stopping a run from the parent, and keeping stdout for events only."""

from __future__ import annotations

import json

from backend_helpers import TINY, run_backend, send

from tfturbo import protocol, runfiles

PRINTED = "tiny workload says hello on stdout"


def _stop_once_training(how: str):
    def on_event(event, proc):
        if event["type"] == protocol.STEPS and not on_event.sent:
            on_event.sent = True
            if how == "stop":
                send(proc, {"type": "stop"})
            else:
                proc.stdin.close()
    on_event.sent = False
    return on_event


def test_stop_command_cancels_at_a_step_boundary_and_keeps_the_measurements(tmp_path):
    out = tmp_path / "stopped"
    run = run_backend("run", TINY, "--out", str(out), "--steps", "1000000", on_event=_stop_once_training("stop"),
                      timeout=90)
    assert run.exit_code == 1
    assert run.done["status"] == protocol.RunStatus.CANCELLED
    summary = json.loads((out / runfiles.SUMMARY).read_text())
    assert summary["status"] == "cancelled"
    assert 1 <= summary["steps_completed"] < 1_000_000
    assert (out / runfiles.CHECKPOINT_DIR / runfiles.CHECKPOINT_MODEL).is_file()
    # stdout carried nothing but events; the workload's print went to backend.log
    assert all(json.loads(line)["type"] in protocol.EVENT_TYPES for line in run.lines)
    assert not any(PRINTED.encode() in line for line in run.lines)
    assert PRINTED in (out / runfiles.BACKEND_LOG).read_text()


def test_end_of_stdin_means_the_parent_is_gone(tmp_path):
    out = tmp_path / "orphan"
    run = run_backend("run", TINY, "--out", str(out), "--steps", "1000000", on_event=_stop_once_training("eof"),
                      timeout=90)
    assert run.done["status"] == protocol.RunStatus.CANCELLED
    assert json.loads((out / runfiles.SUMMARY).read_text())["status"] == "cancelled"
