"""`tfturbo tune` SIGKILLed with its backend child (the whole process group) while a trial's run trains: the same
command again finishes the study and measures no finished run twice.

The study engine, the CLI and the backend processes are real; the training is the scripted backend's
(tests/tune/fake_tune.py), so the kill lands in a run directory the backend was still writing. The
recorded-runs tests in test_resume.py cover every kill point in-process.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import yaml

from tests.conftest import ROOT
from tfturbo.numbers import counted
from tfturbo.runfiles import EVENTS, SUMMARY

FAKE_TUNE = ROOT / "tests" / "tune" / "fake_tune.py"
STEP_S = "0.02"  # a simulated step: a 20-step run trains for ~0.4 s, long enough to be caught training


def test_a_study_killed_during_its_third_trial_resumes_without_measuring_a_finished_run_twice(tmp_path):
    out = tmp_path / "mlp"
    # three trials: both 16-bit policies, then the batch search (capped at one doubling)
    args = ["tune", "builtin:mlp", "--out", str(out), "--steps", "20", "--min-replicates", "2",
            "--max-replicates", "2", "--stages", "mixed_precision,larger_batch", "--both-policies",
            "--max-batch-scale", "2", "--no-report"]
    proc = subprocess.Popen([sys.executable, str(FAKE_TUNE), STEP_S, *args], cwd=ROOT, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    runs = out / "runs"

    def third_trial_training() -> bool:
        trials = sorted({p.name[:2] for p in runs.iterdir() if p.name[:2] != "01"}) if runs.is_dir() else []
        if len(trials) < 3:
            return False
        events = [p / EVENTS for p in runs.iterdir() if p.name.startswith(trials[2])]
        return any(e.exists() and '"steps"' in e.read_text() and not (e.parent / SUMMARY).exists()
                   for e in events)

    deadline = time.monotonic() + 300
    while not third_trial_training():
        assert proc.poll() is None, "the study ended before its third trial"
        assert time.monotonic() < deadline
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    finished = {p.name: (p / SUMMARY).stat().st_mtime_ns for p in runs.iterdir() if (p / SUMMARY).exists()}
    unfinished = [p.name for p in runs.iterdir() if not (p / SUMMARY).exists()]
    assert unfinished, "the kill came while a run trained"

    again = subprocess.run([sys.executable, str(FAKE_TUNE), STEP_S, *args], cwd=ROOT, capture_output=True,
                           text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    assert f"resume: continuing the unfinished study in {out}" in again.stderr
    assert f"resume: {counted(len(finished), 'finished run')} re-used" in again.stderr
    for name, mtime in finished.items():  # no finished run measured twice
        assert (runs / name / SUMMARY).stat().st_mtime_ns == mtime, name
    study = yaml.safe_load((out / "study.yaml").read_text())
    for name in unfinished:  # the killed run measured again, from the start
        assert (runs / name / SUMMARY).exists(), name
    assert study["status"] == "completed"
    named = {r for e in study["ladder"] for r in e["replicates"]}
    assert set(finished) <= named and set(unfinished) <= named
