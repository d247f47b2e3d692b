"""A larger-batch trial's first pair validates both arms at the same samples seen, so the gate averages its three
points; where whole steps cannot meet, it pairs the nearest and says how far apart they are.

The runs are recorded the way the backend records them: a validation point after every `val_every` steps and
after the last, at steps × batch samples, each with its per-example results (`paired_validation.npz`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tfturbo.compare import replicate_key
from tfturbo.run_summary import RunSummary
from tfturbo.settings import RunSettings
from tfturbo.trials import accuracy
from tfturbo.trials.speed import SpeedRule
from tfturbo.trials.judging import pair_rates
from tfturbo.trials.runs import PlannedRun
from tfturbo.trials.sizing import equal_samples, validation_points
from tfturbo.trials.trial import Trial, run_trial
from tfturbo.trials.verdict import AccuracyVerdict

EXAMPLES = 400


def backend(tmp_path: Path, batch_of=lambda settings: settings.batch_size):
    """A fake `execute`: each full-length run validates where the backend would, B one example worse than A."""
    rng = np.random.default_rng(0)
    truth = (rng.random(EXAMPLES) < 0.9).astype(np.float32)

    def execute(planned):
        settings, batch = planned.settings, batch_of(planned.settings)
        run_dir = tmp_path / planned.name
        run_dir.mkdir(parents=True)
        doc = {"status": "completed", "settings": {**settings.to_dict(), "batch_size": batch},
               "throughput": {"samples_per_s": 1000.0, "windows": 8, "seconds": 4.0}}
        if not settings.speed_only:
            samples = validation_points(settings.steps, settings.effective_val_every(), batch)
            correct = truth.copy()
            correct[:1 if planned.arm == "b" else 0] = 0.0
            np.savez_compressed(run_dir / accuracy.PAIRED_FILE, step=np.array([s // batch for s in samples]),
                                samples=np.array(samples), correct=np.stack([correct] * len(samples)))
            doc["paired_validation"] = {"file": accuracy.PAIRED_FILE, "examples": EXAMPLES,
                                        "accuracy_metric": "val_accuracy"}
        return doc, run_dir
    return execute


def measure(trial: Trial, tmp_path: Path, **kw):
    verdict = run_trial(trial, backend(tmp_path, **kw))
    full = {r.planned.arm: r.planned.settings for r in trial.runs if r.planned.replicate == 1}
    return verdict, full


def points(settings: RunSettings, batch: int | None = None) -> list[int]:
    return validation_points(settings.steps, settings.effective_val_every(), batch or settings.batch_size)


def test_a_96_step_script_at_batch_50_against_100_is_compared_at_the_same_three_points(tmp_path):
    """Issue 23's example: A validates every 19 steps at batch 50 (950 samples), and B at batch 100 was given
    10-step intervals and 50 steps: 1,000…5,000 samples against 950…4,800, so the gate paired one point. B now
    trains 48 steps validating every 19 (1,900 samples, a whole number of both batches): 1,900, 3,800 and 4,800
    samples, each exactly one of A's points, and A is left as it was."""
    a = RunSettings("train.py", batch_size=50, steps=96, val_every=19)  # the issue's own interval (a prime)
    trial = Trial(a, a.with_(batch_size=100), SpeedRule(2, 2, steady_s=3.0), share_process=False)
    verdict, full = measure(trial, tmp_path)
    assert (full["a"].steps, full["a"].effective_val_every()) == (96, 19)
    assert (full["b"].steps, full["b"].val_every) == (48, 19)
    assert points(full["b"]) == [1900, 3800, 4800] and set(points(full["b"])) <= set(points(full["a"]))
    acc = verdict.accuracy
    assert acc.paired and acc.samples_seen == [1900, 3800, 4800] and acc.b_samples_seen == [1900, 3800, 4800]
    assert acc.exact_points() and acc.points_note() == "" and "apart" not in acc.text()
    assert acc.delta == -1 / EXAMPLES
    assert ("accuracy paired on the same 400 validation examples at equal samples seen, averaged over the last 3 "
            "validation points") in verdict.design


def test_a_is_moved_to_points_b_can_meet_when_its_own_cannot(tmp_path):
    """Batch 50 against 200: A's 950-sample interval meets B's whole steps only at 3,800 and 4,800 (two points).
    A's first run (its own runs are the reference in `tfturbo ab`) then validates every 1,000 samples (20 steps,
    the multiple of lcm(50, 200) nearest its 950) and B every 5 steps: five points in common. A's run records
    the interval it ran with and is still a replicate of A's configuration."""
    a = RunSettings("train.py", batch_size=50, steps=96, val_every=19)  # the issue's own interval (a prime)
    trial = Trial(a, a.with_(batch_size=200), SpeedRule(2, 2, steady_s=3.0), share_process=False)
    verdict, full = measure(trial, tmp_path)
    assert (full["a"].steps, full["a"].val_every) == (96, 20) and (full["b"].steps, full["b"].val_every) == (24, 5)
    assert points(full["a"]) == points(full["b"]) == [1000, 2000, 3000, 4000, 4800]
    assert replicate_key(full["a"].to_dict()) == replicate_key(trial.a.to_dict())
    assert verdict.accuracy.samples_seen == verdict.accuracy.b_samples_seen == [3000, 4000, 4800]
    assert "96 steps of A, 24 of B (4,800 samples each at batch 50 and 200)" in verdict.design


def test_where_whole_steps_cannot_meet_the_gate_pairs_the_nearest_and_says_how_far_apart(tmp_path):
    """Batch 50 against 128: lcm 3,200 samples leaves one point below the run's 4,800, so nothing aligns. B takes
    the nearest whole steps (38 steps, 4,864 samples); its only point within 5% of one of A's is its last, and the
    verdict and the design say exactly where each arm was compared."""
    a = RunSettings("train.py", batch_size=50, steps=96, val_every=19)  # the issue's own interval (a prime)
    trial = Trial(a, a.with_(batch_size=128), SpeedRule(2, 2, steady_s=3.0), share_process=False)
    verdict, full = measure(trial, tmp_path)
    assert (full["a"].steps, full["a"].effective_val_every()) == (96, 19) and full["b"].steps == 38
    acc = verdict.accuracy
    assert acc.samples_seen == [4800] and acc.b_samples_seen == [4864] and not acc.exact_points()
    assert acc.points_note() == "compared at 4,800 samples of A and 4,864 of B, 1.3% apart"
    assert acc.text().endswith("(compared at 4,800 samples of A and 4,864 of B, 1.3% apart)")
    assert ("at the nearest samples seen (compared at 4,800 samples of A and 4,864 of B, 1.3% apart), at the one "
            "validation point they share") in verdict.design
    again = AccuracyVerdict.from_dict(acc.to_dict())
    assert again.b_samples_seen == [4864] and again.text() == acc.text()


def test_equal_batches_are_unchanged(tmp_path):
    a = RunSettings("train.py", batch_size=50, steps=96, val_every=19)  # the issue's own interval (a prime)
    trial = Trial(a, a.with_(jit_compile=True), SpeedRule(2, 2, steady_s=3.0), share_process=False)
    verdict, full = measure(trial, tmp_path)
    assert (full["a"].steps, full["a"].val_every) == (96, 19)
    assert (full["b"].steps, full["b"].val_every) == (96, 19)
    assert verdict.accuracy.samples_seen == [3800, 4750, 4800] and verdict.accuracy.exact_points()


def test_against_the_baseline_run_b_meets_the_baselines_points_and_a_is_untouched(tmp_path):
    """In a study the gate judges every rung against the baseline's run, measured before the trial: A (the
    reference rung) is not moved, B validates where the baseline did."""
    base = RunSettings("train.py", batch_size=50, steps=96, val_every=19)
    baseline, baseline_path = backend(tmp_path)(PlannedRun("a", 1, base, "baseline"))
    a = base.with_(policy="mixed_float16")
    trial = Trial(a, a.with_(batch_size=200), SpeedRule(2, 2, steady_s=3.0), share_process=False,
                  accuracy_reference=[(RunSummary.from_dict(baseline), baseline_path)])
    verdict, full = measure(trial, tmp_path)
    assert (full["a"].steps, full["a"].val_every) == (96, 19)  # not the reference: as given
    # the baseline's 950-sample points meet batch 200 at 3,800 and 4,800 only: two exact points are more than the
    # one a rounded interval (1,000, 2,000, … samples, 5.3% from the baseline's) would pair within 5%
    assert (full["b"].steps, full["b"].val_every) == (24, 19)
    assert verdict.accuracy.samples_seen == verdict.accuracy.b_samples_seen == [3800, 4800]
    assert "at equal samples seen, averaged over the last 2 validation points" in verdict.design
    b100 = Trial(a, a.with_(batch_size=100), SpeedRule(2, 2, steady_s=3.0), share_process=False,
                 accuracy_reference=[(RunSummary.from_dict(baseline), baseline_path)])
    verdict, full = measure(b100, tmp_path / "b100")
    assert (full["b"].steps, full["b"].val_every) == (48, 19)
    assert verdict.accuracy.samples_seen == verdict.accuracy.b_samples_seen == [1900, 3800, 4800]
    # a baseline whose summary recorded no batch: B follows A's points, and A, not the reference, is never moved
    unknown = {**baseline, "settings": {**baseline["settings"], "batch_size": None}}
    blind = Trial(a, a.with_(batch_size=200), SpeedRule(2, 2, steady_s=3.0), share_process=False,
                  accuracy_reference=[(RunSummary.from_dict(unknown), baseline_path)])
    assert (blind.full_settings("a").steps, blind.full_settings("a").val_every) == (96, 19)
    assert (blind.full_settings("b").steps, blind.full_settings("b").val_every) == (24, 19)


def test_a_script_whose_batch_is_known_only_after_its_first_run(tmp_path):
    """A training script's batch is its own `fit(batch_size=...)` (the settings say none): A's first run is
    planned as given, and B, planned after it, meets the points A ran at."""
    a = RunSettings("train.py", steps=96, val_every=19)
    trial = Trial(a, a.with_(batch_size=100), SpeedRule(2, 2, steady_s=3.0), share_process=False)
    verdict, full = measure(trial, tmp_path, batch_of=lambda s: s.batch_size or 50)
    assert (full["a"].steps, full["a"].val_every) == (96, 19)
    assert (full["b"].steps, full["b"].val_every) == (48, 19)
    assert verdict.accuracy.samples_seen == verdict.accuracy.b_samples_seen == [1900, 3800, 4800]
    assert "96 steps of A, 48 of B (4,800 samples each at batch 50 and 100)" in verdict.design



def test_b_keeps_its_steps_per_execution_where_whole_calls_can_meet_the_points():
    """A kept steps_per_execution=4 before the batch rung: B at batch 128 validating every 30 steps would make the
    backend lower it to 3 (a call must not span a point); every 60 steps meets A's points at 7,680, 15,360 and
    19,200 samples with whole calls of 4."""
    a = RunSettings("w", batch_size=64, steps=300, val_every=60, steps_per_execution=4)
    b = equal_samples(a, a.with_(batch_size=128), 64, 128)
    assert (b.steps, b.val_every, b.steps_per_execution) == (150, 60, 4)
    assert points(b) == [7680, 15360, 19200]
    # at batch 256 whole calls of 4 meet two points only (15,360 and 19,200): B keeps its 4 and the gate its two
    # exact points; every 15 steps (three points) the backend would run B at 3 per call, another configuration
    b256 = equal_samples(a, a.with_(batch_size=256), 64, 256)
    assert (b256.val_every, b256.steps_per_execution) == (60, 4) and points(b256) == [15360, 19200]


def test_a_run_the_backend_ran_with_fewer_steps_per_call_does_not_count_for_speed(tmp_path):
    """Where a call would span a validation point the backend lowers steps_per_execution (`whole_calls`, recorded
    in the summary's settings): that run's rate was another configuration's, and it counted as the arm's. With
    every pair full length (steady_s 0) B at batch 256 and 4 per call now validates on whole calls, so every pair
    counts; a run recorded at 3 per call does not."""
    a = RunSettings("w", batch_size=64, steps=300, val_every=60, steps_per_execution=4)
    fake = backend(tmp_path)

    def as_the_backend(planned):
        doc, run_dir = fake(planned)
        settings = planned.settings
        every = min(settings.effective_val_every(), settings.steps)
        fitted = max(d for d in range(1, settings.steps_per_execution + 1) if every % d == 0)
        doc["settings"] = {**doc["settings"], "steps_per_execution": fitted}
        return doc, run_dir

    trial = Trial(a, a.with_(batch_size=256), SpeedRule(2, 2, steady_s=0), share_process=False)
    verdict = run_trial(trial, as_the_backend)
    assert {r.summary.settings.steps_per_execution for r in trial.runs} == {4}
    assert verdict.speed.replicates == 2

    again = backend(tmp_path / "again")

    def lowered_first_b(planned):
        doc, run_dir = again(planned)
        if planned.arm == "b" and planned.replicate == 1:
            doc["settings"] = {**doc["settings"], "steps_per_execution": 3}
        return doc, run_dir

    trial = Trial(a, a.with_(batch_size=256), SpeedRule(2, 3, steady_s=0), share_process=False)
    verdict = run_trial(trial, lowered_first_b)
    a_rates, b_rates, _, _ = pair_rates(trial)
    assert b_rates[0] is None and all(b_rates[1:]) and all(a_rates) and len(b_rates) == 3
    assert verdict.speed.replicates == 2
