"""compile(steps_per_execution=N): the measurement times whole calls, never N copies of one."""

from __future__ import annotations

import json

from tests.conftest import run_cli


def test_each_sample_is_one_call_and_the_windows_cover_every_step(tmp_path):
    out = tmp_path / "spe"
    proc = run_cli("run", "builtin:mlp", "--out", str(out), "--steps", "48", "--steps-per-execution", "4",
                   "--profile", "0:0", "--json")
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(proc.stdout)
    assert doc["settings"]["steps_per_execution"] == 4 and doc["steps_per_sample"] == 4
    assert doc["steps_completed"] == 48
    # the windows tile steps 1..48 without gaps or overlaps, each ending on a call boundary
    windows = doc["windows"]
    assert windows[0][0] == 1 and windows[-1][1] == 48
    assert all(b[0] == a[1] + 1 for a, b in zip(windows, windows[1:]))
    assert all(last % 4 == 0 for _, last, _ in windows)
    # one sample per call (48 steps, 12 calls; the last call of each validation interval has no successor),
    # not one per step: at most 12 samples in all, and steady throughput counts each step once
    assert len(doc["step_ms_samples"]) <= 12
    assert doc["throughput"]["steps"] > 0 and doc["throughput"]["steps"] % 4 == 0  # whole calls only


def test_calls_never_span_a_validation_point():
    from tfturbo.settings import RunSettings
    from trainer_backend.commands.run import whole_calls

    # the default interval (60 // 5 = 12) moves to a multiple of 8
    assert whole_calls(RunSettings("w.py", steps=60, steps_per_execution=8)).val_every == 8
    # an interval given (a trial scaled it for a larger batch) keeps its value; N becomes its largest divisor
    fitted = whole_calls(RunSettings("w.py", steps=60, val_every=6, steps_per_execution=4))
    assert (fitted.val_every, fitted.steps_per_execution) == (6, 3)
    same = RunSettings("w.py", steps=60, val_every=12, steps_per_execution=4)
    assert whole_calls(same) == same
