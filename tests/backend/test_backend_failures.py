"""Runs that cannot succeed: a broken workload (exit 2, nothing written) and a diverging one (NaN stop)."""

from __future__ import annotations

import json

from backend_helpers import WORKLOADS, run_backend

from tfturbo import protocol, runfiles
from tests.conftest import run_cli


def test_broken_workload_exits_2_with_one_line_and_no_run_dir(tmp_path):
    out = tmp_path / "never"
    proc = run_cli("run", str(WORKLOADS / "broken.py"), "--out", str(out), "--json")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "broken.py" in lines[0] and "make_datasets" in lines[0]
    assert proc.stdout == ""
    assert not out.exists()


def test_nan_loss_stops_the_run_with_a_finding(tmp_path):
    out = tmp_path / "nan"
    run = run_backend("run", str(WORKLOADS / "diverge.py"), "--out", str(out), "--steps", "500")
    assert run.exit_code == 1 and run.done["status"] == protocol.RunStatus.NAN_STOPPED
    summary = json.loads((out / runfiles.SUMMARY).read_text())
    assert summary["status"] == "nan_stopped" and summary["steps_completed"] < 100
    nan = [f for f in summary["findings"] if f["code"] == "NAN_LOSS"]
    assert len(nan) == 1
    assert "float32" in nan[0]["message"] and "learning rate" in nan[0]["message"]
    assert [e["finding"]["code"] for e in run.of_type(protocol.FINDING)] == ["NAN_LOSS"]


def test_a_run_that_fails_in_training_says_why_and_keeps_its_record(tmp_path):
    out = tmp_path / "failed"
    run = run_backend("run", str(WORKLOADS / "bad_labels.py"), "--out", str(out), "--steps", "20")
    assert run.exit_code == 1 and run.done["status"] == protocol.RunStatus.FAILED
    error = run.of_type(protocol.ERROR)[-1]
    assert error["kind"] == protocol.TRAINING_ERROR and "\n" not in error["message"] and error["traceback"]
    summary = json.loads((out / runfiles.SUMMARY).read_text())
    assert summary["status"] == "failed" and summary["error"]["message"] == error["message"]


def test_out_of_memory_and_user_errors_are_told_apart():
    from tfturbo.errors import WorkloadError
    from trainer_backend.commands import describe_error

    oom = describe_error(MemoryError("cannot allocate"), batch_size=256)
    assert (oom.kind, oom.exit_code) == (protocol.OUT_OF_MEMORY, 1) and "--batch-size 128" in oom.fix
    bad = describe_error(WorkloadError("no build_model() function", "define it", where="w.py"))
    assert (bad.kind, bad.exit_code) == (protocol.BAD_INPUT, 2) and bad.message.startswith("w.py: no build_model()")
