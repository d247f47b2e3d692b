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
    assert run.exit_code == 1 and run.done["status"] == protocol.NAN_STOPPED
    summary = json.loads((out / runfiles.SUMMARY).read_text())
    assert summary["status"] == "nan_stopped" and summary["steps_completed"] < 100
    nan = [f for f in summary["findings"] if f["code"] == "NAN_LOSS"]
    assert len(nan) == 1
    assert "float32" in nan[0]["message"] and "learning rate" in nan[0]["message"]
    assert [e["finding"]["code"] for e in run.of_type(protocol.FINDING)] == ["NAN_LOSS"]
