"""The study's time estimate while a trial's first pair runs (issue 22).

Measured in a walk (a top-level Keras script on this 2-core machine): the
baseline's fit() took 1.6 s of its 6.8 s process, and during the first trial's
first pair the stages after it read "about 6 s" each, for trials that then took
about a minute. A trial's first pair is two full-length processes (validation,
profiler: runs like the baseline, whose whole process time is the measure), the
later pairs speed-only runs of start-up, warm-up and a few steady seconds each.
The numbers below are a loaded machine's: TensorFlow's import ~24 s of a 31 s
baseline process.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tfturbo.run_summary import RunSummary
from tfturbo.settings import RunSettings
from tfturbo.trials.speed import SpeedRule
from tfturbo.trials.trial import Trial
from tfturbo.tune.estimate import progress_text, remaining, remaining_text, trial_remaining, trial_s

BASELINE = RunSummary(status="completed", process_s=31.0, wall_s=6.2, warmup_s=1.4, steps_completed=300)
RULE = SpeedRule(3, 6, steady_s=3.0)
FULL = 31.0  # a first-pair process: as long as the baseline's (full length, validation, profiler)
SPEED = (31.0 - 6.2) + 1.4 + 3.0  # a speed-only run: the start-up outside fit(), its warm-up, 3 steady seconds


def engine(trials: dict, stages: int = 2, share_process: bool = False) -> SimpleNamespace:
    """What the estimate reads of a StudyEngine: its trials, baseline, rule, whether its runs may share a process
    (paired trials), and the stages not begun."""
    lever = SimpleNamespace(title="XLA compilation", confirms=False,
                            candidates=lambda policy: [SimpleNamespace(skipped_reason=None)])
    confirm = SimpleNamespace(title="Re-measure & compare", confirms=True, candidates=lambda policy: [])
    return SimpleNamespace(trials=trials, baseline=SimpleNamespace(summary=BASELINE), decisions=object(),
                           best=object(), opts=SimpleNamespace(speed_rule=lambda: RULE),
                           stages_left=lambda: [lever, confirm][:stages],
                           trials_pair=lambda settings=None: share_process)


def first_pair_trial() -> Trial:
    a = RunSettings("builtin:fake", batch_size=64, steps=300)
    return Trial(a, a.with_(policy="mixed_float16"), RULE, share_process=False)


def full_run(trial: Trial, elapsed: float) -> None:
    planned = trial.next_run()
    trial.record(planned, {"status": "completed", "settings": planned.settings.to_dict(), "steps_completed": 300,
                           "process_s": elapsed - 1.0, "wall_s": 6.0, "warmup_s": 1.5}, None)
    trial.runs[-1].elapsed_s = elapsed


def test_during_the_first_pair_a_trial_and_the_stages_after_it_cost_what_their_runs_will_take():
    trial = first_pair_trial()
    study = engine({"02-mixed_float16": trial})
    assert trial.estimate_remaining_s() is None  # the trial itself has nothing to estimate from yet
    low, high = trial_remaining(study, trial)
    # 3 pairs: both first-pair processes and 2 speed-only pairs; 6 pairs: 5 speed-only pairs
    assert low == pytest.approx(2 * FULL + 4 * SPEED) and high == pytest.approx(2 * FULL + 10 * SPEED)
    assert 170 < low < 190 and 340 < high < 370  # about 3 and 6 minutes: what such a trial takes
    assert progress_text(study, trial) == "pair 1 of 3–6 · about 2 min 59 s left (at most 5 min 54 s)"
    stages = remaining(study)
    # each stage left one trial of the same shape; the fit() time alone said 2 × 3 × 6.2 s = 37 s
    assert [(s.title, round(s.low_s), round(s.high_s)) for s in stages] == \
        [("XLA compilation", round(low), round(high)), ("Re-measure & compare", round(low), round(high))]
    assert remaining_text(study).startswith("Still to come: XLA compilation about 2 min 59 s – 5 min 54 s")


def test_once_a_first_pair_run_ended_its_measured_time_replaces_the_baselines():
    trial = first_pair_trial()
    study = engine({"02-mixed_float16": trial})
    full_run(trial, 40.0)  # the reference run, on a busier minute than the baseline's
    low, high = trial_remaining(study, trial)
    assert low == pytest.approx(40.0 + 4 * SPEED) and high == pytest.approx(40.0 + 10 * SPEED)
    stages = remaining(study)
    assert stages[0].low_s == pytest.approx(2 * 40.0 + 4 * SPEED)
    full_run(trial, 38.0)  # the pair is complete: the trial's own estimate from its arms' runs takes over
    assert trial_remaining(study, trial) == trial.estimate_remaining_s()
    assert progress_text(study, trial) == trial.progress_text()


def test_without_steady_seconds_every_pair_is_a_full_length_run():
    full = SpeedRule(2, 3, steady_s=0)
    study = engine({}, stages=1)
    study.opts = SimpleNamespace(speed_rule=lambda: full)
    (stage,) = remaining(study)  # no trial yet: the first also trains the baseline from 2 other seeds
    assert stage.low_s == pytest.approx((4 + 2) * FULL) and stage.high_s == pytest.approx((6 + 2) * FULL)


def test_a_paired_trial_costs_bs_full_length_run_and_its_speed_pairs():
    """Where the arms share a process (a study's default), B alone trains the full length (the accuracy gate,
    judged against the baseline run) and every pair after it counts for speed: full + 2 × P × speed."""
    a = RunSettings("builtin:fake", batch_size=64, steps=300)
    trial = Trial(a, a.with_(jit_compile=True), RULE, accuracy_reference=[(BASELINE, None)])
    assert trial.gate_arms() == ("b",) and trial.plan().min_runs == 7
    study = engine({"03-xla": trial}, share_process=True)
    low, high = trial_remaining(study, trial)
    assert low == pytest.approx(FULL + 6 * SPEED) and high == pytest.approx(FULL + 12 * SPEED)
    assert progress_text(study, trial).startswith("full-length run for the accuracy gate (then 3–6 speed pairs) · ")
    stages = remaining(study)
    assert stages[0].low_s == pytest.approx(FULL + 6 * SPEED)
    full_run(trial, 40.0)  # B's run ended: the first speed pair is next, the trial's own estimate takes over
    planned = trial.next_run()
    assert planned.replicate == 2 and trial.progress_text().startswith("pair 1 of 3–6: A and B in one process")
    assert trial_remaining(study, trial) == trial.estimate_remaining_s() is not None


def test_a_trial_that_trains_the_reference_from_other_seeds_counts_those_runs_in_its_time_and_plan():
    """A study's first trial also trains the baseline from two other seeds (the accuracy gate's training noise):
    two more full-length runs before its speed pairs, in its plan's run count and its time left."""
    a = RunSettings("builtin:fake", batch_size=64, steps=300)
    trial = Trial(a, a.with_(jit_compile=True), RULE, accuracy_reference=[(BASELINE, None)], seed_replicates=2,
                  label_reference="the baseline")
    assert trial.plan().min_runs == 9 and "then 2 trainings of the baseline from seeds" in trial.plan().text()
    study = engine({"03-xla": trial}, share_process=True)
    low, high = trial_remaining(study, trial)
    assert low == pytest.approx(3 * FULL + 6 * SPEED) and high == pytest.approx(3 * FULL + 12 * SPEED)


def test_before_any_trial_the_first_stage_also_costs_the_studys_seed_runs():
    """The study trains the baseline from two other seeds once, in its first trial: the first stage still to come
    costs two more full-length runs while no trial has begun; the stages after it, and every stage once a trial
    began, do not."""
    first, second = remaining(engine({}))
    low, high = trial_s(engine({}), RULE.min_pairs), trial_s(engine({}), RULE.max_pairs)
    assert first.low_s == pytest.approx(low + 2 * FULL) and first.high_s == pytest.approx(high + 2 * FULL)
    assert second.low_s == pytest.approx(low) and second.high_s == pytest.approx(high)
    begun = remaining(engine({"02-mixed_float16": first_pair_trial()}))
    assert begun[0].low_s == pytest.approx(trial_s(engine({}), RULE.min_pairs))
