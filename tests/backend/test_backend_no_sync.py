"""The instrumentation never forces a device sync per step.

Keras turns batch logs into Python floats — a wait for the device on an
accelerator — each time it dispatches a batch-end hook. The backend's
callback hooks no batch end, and its callback list skips that dispatch, so
over 200 steps the logs are converted only at epoch boundaries. Plain
`model.fit(verbose=0)` of the same workload is the control: it converts on
every step, which proves the counter sees per-step conversions.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from backend_helpers import ROOT, TINY

HELPER = Path(__file__).with_name("count_log_conversions.py")


def test_logs_are_not_converted_per_step(tmp_path):
    result = tmp_path / "counts.json"
    # stdin stays open while it runs: its end would tell the backend that its parent is gone
    proc = subprocess.Popen([sys.executable, str(HELPER), TINY, str(tmp_path / "run"), str(result)], cwd=ROOT,
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = proc.stderr.read()  # until the helper exits
    proc.stdin.close()
    assert proc.wait(timeout=60) == 0, err.decode(errors="replace")[-3000:]
    counts = json.loads(result.read_text())
    assert counts["exit_code"] == 0
    assert counts["batch_end_overrides"] == []
    assert counts["plain_fit"] >= 200  # the control: Keras' own list converts every step
    assert counts["instrumented"] <= 10  # only at the 2 epoch ends (and validation ends)
