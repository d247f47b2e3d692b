"""The run length a speed verdict needs follows from the baseline's warm-up and step time, not a fixed 20 steps."""

from __future__ import annotations

import re
from dataclasses import replace

from tfturbo.environment import Environment
from tfturbo.run_summary import RunSummary
from tfturbo.settings import RunSettings
from tfturbo.trials.run_length import min_run_steps, run_length_note, too_short
from tfturbo.trials.speed import SpeedRule
from tfturbo.tune.engine import Outcome, TuneOptions
from tfturbo.tune.ladder import Ladder

from tests.trials.test_not_in_effect import FAKES


def baseline_doc(ms: float = 5.0, first_steady: int | None = 41, steps: int = 60, status: str = "completed") -> dict:
    settled = first_steady is not None
    return {"status": status, "steps_completed": steps, "first_steady_step": first_steady,
            "step_ms": {"median": ms if settled else None}, "wall_s": steps * ms / 1000.0,
            "throughput": {"windows": 4 if settled else 0, "seconds": 0.1 if settled else 0.0}}


def baseline(*args, **kwargs) -> RunSummary:
    return RunSummary.from_dict(baseline_doc(*args, **kwargs))


def test_the_minimum_is_the_warm_up_with_its_margin_plus_the_steady_seconds_at_the_measured_step_time():
    rule = SpeedRule(3, 6, steady_s=3.0)
    assert min_run_steps(baseline(5.0, 41), rule) == 60 + 600  # 40 warm-up steps × 1.5, then 3 s at 5 ms
    assert min_run_steps(baseline(0.5, 11), rule) == 15 + 6000  # a 0.5 ms model needs thousands of steps
    assert min_run_steps(baseline(5.0, 41), SpeedRule(3, 6, steady_s=0)) == 60 + 20  # no target: a steady state
    assert min_run_steps(baseline(5.0, 41), rule, per_call=8) % 8 == 0  # whole calls of steps_per_execution
    assert min_run_steps(baseline(status="failed"), rule) is None and min_run_steps(None, rule) is None


def test_the_note_says_why_and_how_many_and_nothing_when_the_runs_are_long_enough():
    rule = SpeedRule(3, 6, steady_s=0)  # every pair full length: the runs' length is the verdict's
    note = run_length_note(baseline(5.0, 41), 30, rule)
    assert note == ("runs of 30 steps are too short for a speed verdict: the baseline measured a warm-up of 40 "
                    "steps, 5 ms a step, so at least 80 steps measure a steady state")
    assert run_length_note(baseline(5.0, 41, steps=100), 100, rule) == ""
    assert run_length_note(baseline(5.0, 41, steps=70), 70, rule) == ""  # within the step time's noise
    unsettled = run_length_note(baseline(5.0, None, steps=20), 20, rule)
    assert "no steady state in 20 steps" in unsettled and "at least" in unsettled
    assert too_short(baseline(5.0, 41), 30, rule) == (note, 80)


def test_with_speed_only_pairs_short_runs_cost_only_the_first_pairs_ratio_and_ask_for_nothing():
    """A script's own 4 epochs (116 steps of 1.7 ms) made tune say "too short for a speed verdict … (--steps
    1745)": the speed-only pairs are sized for 3 s, so the verdict stood; only the first pair (the accuracy gate)
    did not count for speed, and 1745 steps would have made the gate compare 15 epochs instead of 4."""
    rule = SpeedRule(3, 6, steady_s=3.0)
    note, needed = too_short(baseline(5.0, 41), 60, rule)  # 0.1 s of steady state: less than the 0.3 s floor
    assert needed is None
    assert note == ("runs of 60 steps are too short for a trial's first pair to count for speed (it measured 0.1 s "
                    "of steady state in 4 windows); each trial's speed comes from its speed-only pairs, sized for "
                    "3 s of steady state each (at least 660 steps would let the first pair count too)")
    counted = replace(baseline(5.0, 41, steps=300), throughput={"windows": 40, "seconds": 1.2})
    assert too_short(counted, 300, rule) == ("", None)  # its first pair counts: nothing to say
    # where the trials pair (their arms share a process) the first pair never counts for speed: nothing to say
    assert too_short(baseline(5.0, 41), 60, rule, paired=True) == ("", None)
    assert too_short(baseline(5.0, 41), 30, SpeedRule(3, 6, steady_s=0), paired=True)[1] == 80  # no speed pairs


def test_with_speed_only_pairs_the_note_follows_the_rule_that_decides_whether_a_replicate_counts():
    """The note said nothing for runs within 80% of the minimum even where the trial drops the first pair's rate
    (two steady windows: fewer than MIN_RATE_WINDOWS), and nothing of it where the rate counts however short."""
    rule = SpeedRule(3, 6, steady_s=3.0)
    few_windows = replace(baseline(5.0, 41, steps=600), throughput={"windows": 2, "seconds": 2.8})
    assert rule.shortfall(few_windows) is not None  # the trial would not count this replicate's rate
    note, needed = too_short(few_windows, 600, rule)
    assert needed is None and note == (
        "runs of 600 steps are too short for a trial's first pair to count for speed (it measured 2.8 s of steady "
        "state in 2 windows); each trial's speed comes from its speed-only pairs, sized for 3 s of steady state "
        "each (at least 660 steps would let the first pair count too)")
    long_enough = replace(few_windows, steps_completed=700)
    assert "would let" not in too_short(long_enough, 700, rule)[0]  # no "at least 660" after 700 steps
    counts = replace(baseline(5.0, 41, steps=100), throughput={"windows": 3, "seconds": 0.3})
    assert rule.shortfall(counts) is None and too_short(counts, 100, rule) == ("", None)


def test_a_one_step_warm_up_is_one_step():
    """A fast script settles after its first step: the walk of issue 22 read "a warm-up of 1 steps"."""
    note = run_length_note(baseline(1.12, 2, steps=10), 10, SpeedRule(3, 6, steady_s=0))
    assert "a warm-up of 1 step, 1.12 ms a step" in note


def test_tune_says_when_its_runs_are_too_short_for_a_verdict(tmp_path):
    def run(s):
        doc = FAKES.summary(5.0, 0.9, jit=s.jit_compile, steps=s.steps)
        return {**doc, "first_steady_step": 41, "throughput": {"samples_per_s": 64 / 0.005, "steps": 20,
                                                               "seconds": 0.1, "windows": 4}}
    lines: list[str] = []
    Ladder(TuneOptions("builtin:fake", tmp_path / "s", steps=60, stages=("xla",), steady_s=0),
           runner=FAKES.FakeBackend(run), say=lines.append).run()
    said = [line for line in lines if "too short for a speed verdict" in line]
    assert len(said) == 1 and said[0].startswith("[01] baseline: runs of 60 steps")
    assert re.search(r"\(--steps [89]\d\)$", said[0])  # 60 + a steady state at the fake's noisy ~5 ms
    lines.clear()
    Ladder(TuneOptions("builtin:fake", tmp_path / "sized", steps=60, stages=("xla",)),
           runner=FAKES.FakeBackend(run), say=lines.append).run()
    # sized speed pairs, and the trials pair (builtin:fake shares a process): the full-length runs' length
    # decides no verdict, so tune says nothing of it
    assert not [line for line in lines if "too short" in line]


def test_the_wizard_session_lengthens_the_next_baseline_to_what_the_verdict_needs(tmp_path):
    from tfturbo_gui.session import WizardSession

    session = WizardSession("builtin:fake", steps=30)
    session.steady_s = 0  # every pair full length: the runs' length is the verdict's
    session.study_path = tmp_path / "study"
    session.ensure_study()
    session.environment = Environment.from_dict({"recommended_policy": "float32", "reason": "test", "devices": []})
    rung, _ = session.start_baseline()
    session.engine.record(session._action, Outcome({**baseline_doc(5.0, 41), "settings": RunSettings(
        "builtin:fake", steps=30, batch_size=64).to_dict()}))
    assert session.engine.next_action() is None and session.baseline is rung
    note, needed = session.run_length()
    assert needed == 80 and "at least 80 steps" in note
    session.lengthen_runs(needed)
    assert session.baseline_settings().steps == 80
    assert session.study.options["steps"] == 30  # the study still describes the runs it holds ...
    session.start_baseline()
    assert session.study.options["steps"] == 80  # ... until the longer baseline starts
