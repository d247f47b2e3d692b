"""Every lever measures a change from the script as written, in either direction (issue 38): XLA off when the
script compiles with XLA, one step per call when it runs several, float32 when it trains in 16-bit; the code to
apply never adds what the script already has and changes what lost."""

from __future__ import annotations

from pathlib import Path

from tfturbo.run_summary import RunSummary
from tfturbo.cli_args import parse_run_settings, run_argv
from tfturbo.patch.build import make_patch
from tfturbo.settings import UNSAID, RunSettings
from tfturbo.tune import code_changes
from tfturbo.tune.ladder import TuneOptions
from tfturbo.tune.levers import lever
from tfturbo.tune.policy import StudyDecisions
from tfturbo.tune.study import Rung, RungKind

OWN = Path(__file__).resolve().parents[1] / "script" / "scripts" / "compiled_own.py"  # jit True, 4 per call


def policy_on(base: RunSettings, step_ms: float = 1.0) -> StudyDecisions:
    policy = StudyDecisions([], ["mixed_bfloat16"], "recommended")
    rung = Rung("01-baseline", RungKind.BASELINE, base, "runs/01-baseline",
                summary=RunSummary(status="completed", step_ms={"median": step_ms}))
    policy.set_baseline(rung)
    return policy


def test_no_option_means_as_written_on_the_command_line_and_in_a_study_baseline(tmp_path):
    unset = parse_run_settings(["train.py", "--out", "R"])
    assert (unset.policy, unset.jit_compile, unset.steps_per_execution) == (None, None, None)
    assert not {"--policy", "--jit", "--no-jit", "--steps-per-execution"} & set(run_argv(unset, "R"))
    off = parse_run_settings(["train.py", "--out", "R", "--no-jit", "--steps-per-execution", "1"])
    assert (off.jit_compile, off.steps_per_execution) == (False, 1) and "--no-jit" in run_argv(off, "R")
    base = TuneOptions("train.py", tmp_path).base_settings()
    assert (base.policy, base.jit_compile, base.steps_per_execution) == (None, None, None)
    ran = {"policy": "float32", "jit_compile": True, "steps_per_execution": 4}
    resolved = base.resolved(ran)
    assert (resolved.policy, resolved.jit_compile, resolved.steps_per_execution) == ("float32", True, 4)
    assert off.resolved(ran).jit_compile is False  # a setting given is never replaced by the script's


def test_a_script_with_xla_and_steps_per_call_is_measured_without_them():
    base = RunSettings("train.py", jit_compile=True, steps_per_execution=4, val_every=8)
    policy = policy_on(base, step_ms=20.0)  # long steps: a script without N per call would not try it
    xla = lever("xla").candidates(policy)
    assert [c.settings.jit_compile for c in xla] == [False] and xla[0].skipped_reason is None
    assert "the script compiles with XLA" in xla[0].note
    assert lever("xla_autoclustering").candidates(policy) == []  # nothing measured yet
    spe = lever("steps_per_execution").candidates(policy)
    assert [c.settings.steps_per_execution for c in spe] == [1] and spe[0].skipped_reason is None
    plain = policy_on(RunSettings("train.py", val_every=8).resolved(UNSAID))
    assert [c.settings.jit_compile for c in lever("xla").candidates(plain)] == [True]


def test_a_script_in_16_bit_is_measured_in_float32():
    policy = policy_on(RunSettings("train.py", policy="mixed_bfloat16"))
    assert [c.settings.policy for c in lever("mixed_precision").candidates(policy)] == ["float32"]


def test_the_code_to_apply_adds_nothing_the_script_has_and_changes_what_lost():
    base = RunSettings(str(OWN), jit_compile=True, steps_per_execution=4)
    kept = make_patch(OWN, code_changes.changes_for(base, base))
    assert kept.diff() == ""  # the recommendation is the script as written
    lost = make_patch(OWN, code_changes.changes_for(base.with_(jit_compile=False, steps_per_execution=1), base))
    diff = lost.diff()
    assert "-    jit_compile=True,\n-    steps_per_execution=4,\n+    jit_compile=False,\n" \
           "+    steps_per_execution=1,\n" in diff
    assert not any(line.startswith("+") and "jit_compile=True" in line for line in diff.splitlines())


def test_a_change_the_study_kept_is_not_measured_back():
    """The direction is the script's: a plain script whose study kept XLA and 4 steps per call is not offered
    their removal (the wizard asks a lever again after its verdict)."""
    policy = policy_on(RunSettings("train.py", val_every=8).resolved(UNSAID))
    policy.best = Rung("02-spe4", "steps_per_execution", RunSettings("train.py", val_every=8, jit_compile=True,
                                                                      steps_per_execution=4), "runs/02-spe4")
    assert str(lever("steps_per_execution").candidates(policy)[0].skipped_reason) == "skipped: already 4 steps per call"
    assert [c.settings.jit_compile for c in lever("xla").candidates(policy)] == [True]
