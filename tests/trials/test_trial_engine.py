"""One trial engine for every front end: the plan of runs, the verdict, and the same keep/reject in tune and the wizard."""

from __future__ import annotations


import pytest

from tfturbo.errors import UserError
from tfturbo.run_summary import RunSummary
from tfturbo.settings import RunSettings
from tfturbo.trials.spec import parse_settings
from tfturbo.trials.speed import SpeedRule
from tfturbo.trials.sizing import equal_samples
from tfturbo.trials.trial import Trial, run_trial
from tfturbo.trials.verdict import FASTER, TrialVerdict

from tests.tune.tune_fakes import summary  # the tune tests' recorded summaries and fake backend


def recorded(settings: RunSettings, ms: float = 100.0, status: str = "completed", factor: float = 1.0) -> dict:
    doc = summary(ms * factor, 0.9, status=status, policy=settings.policy, jit=settings.jit_compile,
                  batch_size=settings.batch_size or 64)
    return {**doc, "settings": {**settings.to_dict(), "batch_size": settings.batch_size or 64}}


def test_runs_alternate_ba_ab_and_stop_when_clear():
    a = RunSettings("builtin:fake", batch_size=64)
    trial = Trial(a, a.with_(jit_compile=True), SpeedRule(3, 6))
    order = []
    jitter = iter([1.0, 1.01, 0.99, 1.02, 0.98, 1.0] * 3)

    def execute(planned):
        order.append((planned.arm, planned.replicate, planned.name))
        ms = (80.0 if planned.arm == "b" else 100.0) * next(jitter)
        return recorded(planned.settings, ms), None

    verdict = run_trial(trial, execute)
    # B first (a failing B costs its own run only), then the paired speed pairs' BA, AB (here run one by one)
    assert [o[0] for o in order[:6]] == ["b", "a", "b", "a", "a", "b"]
    assert [o[2] for o in order[:2]] == ["b1", "a1"]
    assert verdict.speed.verdict == FASTER and verdict.speed.replicates == 3  # clear after the minimum
    assert verdict.speed.ci95[0] > 1.0


def test_a_failed_candidate_ends_the_trial_at_once():
    """B runs first, so a candidate that cannot train costs its own run, not A's full-length run before it."""
    a = RunSettings("builtin:fake", batch_size=64)
    trial = Trial(a, a.with_(policy="mixed_float16"), SpeedRule(3, 6))
    calls = []

    def execute(planned):
        calls.append(planned.arm)
        return recorded(planned.settings, status="nan_stopped" if planned.arm == "b" else "completed"), None

    verdict = run_trial(trial, execute)
    assert calls == ["b"] and not verdict.kept and verdict.status == "nan_stopped"
    assert "NaN" in verdict.reason and verdict.findings[0]["code"] == "NAN_LOSS"
    assert verdict.speed.verdict == "failed" and verdict.accuracy.verdict == "not measured"


def test_a_candidate_that_fails_after_completed_pairs_is_a_failed_trial_not_a_verdict():
    """B's runs fail in the third pair (e.g. a metric that refuses 16-bit predictions): the two completed pairs
    must not become "no measurable change" / "worse"; the verdict is "failed" with the error and the fix."""
    a = RunSettings("builtin:fake", batch_size=64)
    trial = Trial(a, a.with_(policy="mixed_bfloat16"), SpeedRule(3, 6))
    error = {"kind": "training_error", "message": "TypeError: Input 'predictions' of 'InTopKV2' Op has type "
             "bfloat16 that does not match expected type of float32", "fix": "fix_head=on"}

    def execute(planned):
        if planned.arm == "b":
            return {**recorded(planned.settings, status="failed"), "error": error}, None
        return recorded(planned.settings), None

    verdict = run_trial(trial, execute)
    assert verdict.failed and not verdict.kept and verdict.status == "failed"
    assert verdict.speed.verdict == "failed" and verdict.accuracy.verdict == "not measured"
    assert verdict.reason == verdict.failure_text() == f"failed: {error['message']} — fix: fix_head=on"
    again = TrialVerdict.from_dict(verdict.to_dict())
    assert again.failed and again.error["fix"] == "fix_head=on" and again.speed.verdict == "failed"


def test_a_larger_batch_trains_on_as_many_samples():
    a = RunSettings("w", batch_size=64, steps=300, val_every=60)
    b = equal_samples(a, a.with_(batch_size=256), 64, 256)
    assert (b.steps, b.val_every) == (75, 15)
    odd = equal_samples(a, a.with_(batch_size=96), 64, 96)
    assert odd.val_every == 40 and odd.steps == 200
    same = Trial(a, a.with_(jit_compile=True))  # equal batches: both arms exactly as A was given
    assert (same.full_settings("a"), same.full_settings("b")) == (same.a, same.b.with_(steps=300, val_every=60))


def test_trial_runs_never_stop_early_and_only_the_first_pair_profiles():
    a = RunSettings("w", batch_size=64, profile=(5, 9), until_ci=0.02, min_steps=10)
    trial = Trial(a, a.with_(jit_compile=True))
    planned = []
    for _ in range(4):
        p = trial.next_run()
        planned.append(p)
        trial.record(p, {"status": "completed", "throughput": {"samples_per_s": 100.0}}, None)
    assert all(p.settings.until_ci is None for p in planned)
    # both runs of pair 1 get the default profiler window (profile.json for the per-category comparison)
    assert [(p.arm, p.replicate, p.settings.profile) for p in planned] == [
        ("b", 1, None), ("a", 1, None), ("b", 2, (0, 0)), ("a", 2, (0, 0))]


def test_the_verdict_document_round_trips_with_the_ab_keys():
    a = RunSettings("builtin:fake", batch_size=64)
    trial = Trial(a, a.with_(jit_compile=True), SpeedRule(2, 2))
    verdict = run_trial(trial, lambda p: (recorded(p.settings, 80.0 if p.arm == "b" else 100.0), None))
    doc = verdict.to_dict()
    assert set(doc["speed"]) >= {"ratio", "ci95", "verdict", "replicates"}
    assert set(doc["accuracy"]) >= {"metric", "delta", "ci95", "verdict"}
    assert {"kept", "reason", "findings"} <= set(doc)
    again = TrialVerdict.from_dict(doc)
    assert again.speed.ratio == pytest.approx(verdict.speed.ratio) and again.kept == verdict.kept


def test_xla_that_never_switched_on_is_not_credited():
    a = RunSettings("builtin:fake", batch_size=64)
    trial = Trial(a, a.with_(jit_compile=True), SpeedRule(2, 2))

    def execute(planned):
        doc = recorded(planned.settings, 70.0 if planned.arm == "b" else 100.0)
        if planned.arm == "b":
            doc["xla_active"] = False
        return doc, None

    verdict = run_trial(trial, execute)
    assert verdict.speed.verdict == FASTER and not verdict.kept and "XLA_NOT_ACTIVE" in verdict.reason


def test_ab_settings_parse_and_name_their_mistakes():
    base = RunSettings("w")
    b = parse_settings("policy=mixed_bfloat16, jit=on,batch=128,fix_head=on", base, "--b")
    assert (b.policy, b.jit_compile, b.batch_size, b.fix_head) == ("mixed_bfloat16", True, 128, True)
    assert parse_settings("", base, "--a") == base
    assert parse_settings("input-fixes=on", base, "--b").input_fixes is True
    with pytest.raises(UserError, match="jit='maybe' is not valid"):
        parse_settings("jit=maybe", base, "--b")
    with pytest.raises(UserError, match="known key"):
        parse_settings("precision=16", base, "--b")


def measured(settings: RunSettings, ms: float, steady_from: int | None = 5, windows: int = 6,
             seconds: float = 3.0) -> dict:
    """A recorded run with its steady windows (None, 0: it never reached a steady state)."""
    doc = recorded(settings, ms)
    doc["steps_completed"] = settings.steps
    doc["first_steady_step"] = steady_from
    rate = 64 * 1000.0 / ms
    doc["throughput"] = {"samples_per_s": rate if windows else None, "steps": int(seconds * 1000 / ms) if windows else 0,
                         "seconds": seconds if windows else 0.0, "windows": windows}
    if steady_from is None:
        doc["step_ms"] = {"median": None, "ci95": None}
        doc["wall_s"] = settings.steps * ms / 1000.0
    return doc


def test_a_trial_whose_runs_never_reach_a_steady_state_ends_within_its_maximum():
    """The digits-MLP rung that ran 77 pairs: B never settled, so no ratio was ever formed."""
    a = RunSettings("builtin:fake", batch_size=64, steps=150)
    trial = Trial(a, a.with_(batch_size=128), SpeedRule(3, 6))
    calls = []

    def execute(planned):
        calls.append(planned)
        if planned.arm == "b":
            return measured(planned.settings, 2.0, steady_from=None, windows=0), None
        return measured(planned.settings, 1.0), None

    verdict = run_trial(trial, execute)
    assert len(calls) <= 2 * 6
    assert verdict.speed.verdict == "not enough measurement" and verdict.speed.replicates == 0
    assert "not enough measurement" in verdict.speed.text() and "[" not in verdict.speed.text()
    assert "longer runs" in verdict.speed.note and not verdict.kept
    # the later pairs were sized to reach a steady state: B's speed-only runs grew past twice its length
    later_b = next(c for c in calls if c.arm == "b" and c.settings.speed_only)
    assert later_b.settings.steps >= 2 * 75


def test_a_trial_stopped_after_its_first_pair_gives_no_ratio():
    a = RunSettings("builtin:fake", batch_size=64)
    # in their own processes pair 1 counts for speed; paired, the first pair is the accuracy gate's only
    for share, counted_pairs in ((False, "1 of the 3 replicate pairs"), (True, "0 of the 3 replicate pairs")):
        trial = Trial(a, a.with_(jit_compile=True), SpeedRule(3, 6), share_process=share)
        for _ in range(2):
            planned = trial.next_run()
            trial.record(planned, measured(planned.settings, 80.0 if planned.arm == "b" else 100.0), None)
        trial.stop()
        verdict = trial.verdict()
        assert verdict.speed.verdict == "not enough measurement" and not verdict.kept
        assert counted_pairs in verdict.speed.note and "inf" not in verdict.reason


def test_later_pairs_measure_speed_only_sized_for_the_steady_seconds():
    """Separate speed-only processes: what a trial does where the arms cannot share one (`can_share_process`)."""
    a = RunSettings("builtin:fake", batch_size=64, steps=300)
    trial = Trial(a, a.with_(xla_autoclustering=True), SpeedRule(3, 6, steady_s=3.0))
    plan = trial.plan()
    assert (plan.min_pairs, plan.max_pairs, plan.min_runs, plan.max_runs) == (3, 6, 6, 12)
    assert "3–6 pairs (6–12 runs)" in plan.text() and "3 s of steady state" in plan.text()
    assert trial.estimate_remaining_s() is None  # nothing measured yet
    first = trial.next_run()  # pair 1 starts with B (BA order: a failing candidate costs its own run only)
    assert first.arm == "b" and not first.settings.speed_only and first.settings.steps == 300
    trial.record(first, measured(first.settings, 5.0, steady_from=41), None)
    second = trial.next_run()
    trial.record(second, measured(second.settings, 10.0, steady_from=21), None)
    third = trial.next_run()  # pair 2 starts with A (AB order)
    fourth_steps = trial.speed_steps_of("b")
    assert third.arm == "a" and third.settings.speed_only
    # A: warm-up 20 steps × 1.5 + 3 s at 10 ms/step; B: warm-up 40 steps × 1.5 + 3 s at 5 ms/step
    assert abs(third.settings.steps - (30 + 300)) <= 8 and third.settings.val_every == third.settings.steps
    sized_a, sized_b = trial.plan().speed_steps
    assert sized_a == third.settings.steps and abs(sized_b - (60 + 600)) <= 15 and sized_b == fourth_steps
    low, high = trial.estimate_remaining_s()
    assert 0 <= low <= high
    # each speed-only run: its overhead (≈0 s here) plus the 3 s it aims at; 4 runs to the minimum, 10 to the max
    assert low == pytest.approx(4 * 3.0, abs=1.0) and high == pytest.approx(10 * 3.0, abs=2.0)
    assert trial.progress_text().startswith("pair 2 of 3–6 · about 12 s left (at most 30 s)")


def test_a_batch_trials_plan_states_each_arms_samples_exactly():
    """Issue 22 walk: a batch trial on a script (96 steps at batch 50) said "96 steps of A, 50 of B (equal
    samples)" for 4,800 and 5,000 samples. B now trains A's 4,800 samples (48 steps of 100); where A's samples
    are not a whole number of B's batches (batch 128), the words say what each arm trains."""
    a = RunSettings("script.py", batch_size=50, steps=96)
    text = Trial(a, a.with_(batch_size=100), SpeedRule(3, 6, steady_s=3.0)).plan().text()
    assert "first A and B each train 96 steps of A, 48 of B (4,800 samples each at batch 50 and 100)" in text, text
    odd = Trial(a, a.with_(batch_size=128), SpeedRule(3, 6, steady_s=3.0)).plan().text()
    assert ("first A and B each train 96 steps of A (4,800 samples at batch 50), 38 of B (4,864 samples at batch 128: "
            "the nearest whole number of its batches) with validation") in odd, odd
    even = RunSettings("script.py", batch_size=50, steps=100)  # 20-step intervals: B's 10 steps are exact
    text = Trial(even, even.with_(batch_size=100), SpeedRule(3, 6, steady_s=3.0)).plan().text()
    assert "first A and B each train 100 steps of A, 50 of B (5,000 samples each at batch 50 and 100)" in text, text
    same = Trial(a, a.with_(jit_compile=True), SpeedRule(3, 6, steady_s=3.0)).plan().text()
    assert "first A and B each train 96 steps with validation" in same


def test_the_accuracy_gate_uses_only_the_runs_that_validated():
    a = RunSettings("builtin:fake", batch_size=64, steps=300)
    trial = Trial(a, a.with_(jit_compile=True), SpeedRule(3, 3))
    jitter = iter([1.0, 1.02, 0.98, 1.01, 0.99, 1.0, 1.01, 0.99])

    def execute(planned):
        return measured(planned.settings, (80.0 if planned.arm == "b" else 100.0) * next(jitter)), None

    verdict = run_trial(trial, execute)
    # the gate's two full-length runs, then the three speed pairs (paired: each one process)
    assert [r.planned.settings.speed_only for r in trial.runs] == [False, False] + [True] * 6
    assert verdict.speed.verdict == FASTER and verdict.speed.replicates == 3
    assert "speed only" in verdict.design


def test_the_estimate_never_says_nothing_is_left_while_a_pair_is_under_way():
    a = RunSettings("builtin:fake", batch_size=64, steps=300)
    trial = Trial(a, a.with_(jit_compile=True), SpeedRule(3, 6), share_process=False)
    # B/A 1.12, 1.02, 1.09 (pair 2 is BA): promising, yet not clear at 3 pairs, and not futile either
    jitter = iter([1.0, 1.12, 1.02, 1.0, 1.0, 1.09, 1.0, 1.0])
    for _ in range(6):
        planned = trial.next_run()
        trial.record(planned, measured(planned.settings, 100.0 * next(jitter)), None)
    assert trial.next_run() is not None and trial.next_run().replicate == 4
    low, high = trial.estimate_remaining_s()
    assert low > 0 and high == pytest.approx(3 * low)  # pair 4's two runs at least; at most pairs 4, 5 and 6


def test_without_a_steady_target_every_pair_is_full_length_and_any_window_counts():
    rule = SpeedRule(2, 2, steady_s=0)
    a = RunSettings("builtin:fake", batch_size=64, steps=60)
    trial = Trial(a, a.with_(jit_compile=True), rule)
    verdict = run_trial(trial, lambda p: (measured(p.settings, 80.0 if p.arm == "b" else 100.0, windows=2,
                                                   seconds=0.05), None))
    assert not any(r.planned.settings.speed_only for r in trial.runs) and len(trial.runs) == 4
    assert verdict.speed.replicates == 2 and verdict.speed.verdict != "not enough measurement"


def test_a_measured_step_time_sizes_the_next_pair_even_when_the_first_pairs_wall_time_says_otherwise():
    """A script at 26 steps per call: the first pair's runs (a few calls) never settled, so pair 2 was sized from
    their wall time per step (tracing included: 14 ms for a 0.4 ms step) and measured too little steady state.
    Pair 3 kept the same length, because the median of that estimate and pair 2's measured step was the
    estimate: a second pair lost. Pair 3 is now sized from the step pair 2 measured."""
    a = RunSettings("script.py", batch_size=64, steps=150)
    trial = Trial(a, a.with_(batch_size=128, steps=75), SpeedRule(3, 6, steady_s=3.0), share_process=False)
    for _ in range(2):  # pair 1: too short to settle; 14 ms per step of wall time
        planned = trial.next_run()
        trial.record(planned, measured(planned.settings, 14.0, steady_from=None, windows=0), None)
    for _ in range(2):  # pair 2: sized from the wall time, settles, measures a 0.4 ms step but only 0.25 s of it
        planned = trial.next_run()
        assert planned.replicate == 2 and planned.settings.speed_only
        assert planned.settings.steps * 0.4 / 1000 < 1.0  # far too short for 3 s at the real step time
        trial.record(planned, measured(planned.settings, 0.4, steady_from=27, seconds=0.25), None)
    planned = trial.next_run()
    assert planned.replicate == 3
    # 3 s at 0.4 ms is 7,500 steps; before, pair 3 was as long as pair 2 (the wall time's median)
    assert planned.settings.steps >= 3.0 * 1000 / 0.4, planned.settings.steps


def test_a_verdict_says_how_many_pairs_ran_but_measured_too_little_to_count():
    """The script tune's batch-128 rung ran 6 pairs and printed "1.76× [0.74, 4.22] over 3 replicate pairs":
    pairs 1-3 measured too little steady state to count, and nothing said so."""
    rule = SpeedRule(3, 6, steady_s=3.0)
    a = [None, 150_000.0, 150_000.0, 156_000.0, 139_000.0, 223_000.0]
    b = [None, None, None, 219_000.0, 339_000.0, 358_000.0]
    verdict = rule.verdict(a, b)
    assert verdict.replicates == 3
    assert verdict.text().endswith("over 3 replicate pairs (faster in 3 of 3 pairs; size uncertain; 3 more pairs "
                                   "measured too little steady state to count)"), verdict.text()
    every = rule.verdict(a[3:], b[3:])  # all counted: nothing to add
    assert "too little" not in every.text()


def test_a_reference_run_the_study_already_trained_the_same_way_is_reused_not_trained_again(tmp_path):
    """Issue 40: in a trial whose arms cannot share a process (a training script), A's full-length run would train
    the reference configuration again with validation, as its rung's own run already did. The trial takes that
    run (same settings, seed, length and validation points: `training_key`), says so in its plan, and counts no
    speed ratio against it (it ran minutes before B's); a run trained another way is not taken."""
    from tfturbo.settings import training_key
    from tfturbo.trials.runs import FinishedRun

    a = RunSettings("builtin:fake", batch_size=64, steps=300, val_every=60)
    b = a.with_(xla_autoclustering=True)  # a process-global setting: each run in its own process
    earlier = RunSummary.from_dict(measured(a, 10.0, steady_from=21))
    other_length = a.with_(steps=200)
    finished = {training_key(a.with_(profile=None, xla_cache="cache", no_model=True)):
                FinishedRun("01-baseline", earlier, tmp_path / "01-baseline"),
                training_key(other_length): FinishedRun("09-shorter", RunSummary.from_dict(measured(other_length, 10.0)), None)}
    trial = Trial(a, b, SpeedRule(3, 6, steady_s=3.0), finished=finished, xla_cache="cache")
    plan = trial.plan()
    assert plan.reused == "01-baseline" and "A's full-length run re-used from 01-baseline" in plan.text()
    assert (plan.min_runs, plan.max_runs) == (7, 13)  # B's gate run, then 3–6 speed pairs
    executed = []

    def execute(planned):
        executed.append((planned.arm, planned.replicate, planned.settings.speed_only))
        return measured(planned.settings, 8.0 if planned.arm == "b" else 10.0, steady_from=21), None

    verdict = run_trial(trial, execute)
    assert executed[0] == ("b", 1, False)  # B's full-length run; A's is never planned
    assert all(speed_only for arm, replicate, speed_only in executed[1:])
    assert ("a", 1, False) not in executed
    taken = [r for r in trial.runs if r.reused]
    assert [(r.planned.name, r.summary is earlier) for r in taken] == [("01-baseline", True)]
    assert trial.own_runs() == [r for r in trial.runs if not r.reused] and len(trial.own_runs()) == len(executed)
    assert verdict.speed.replicates == len(trial.speed_pairs()) and trial.first_speed_replicate == 2
    assert "A's re-uses 01-baseline" in verdict.design
    # the same trial where the study trained A's configuration only for another length: A trains its own run
    again = Trial(a, b, SpeedRule(3, 6, steady_s=3.0), finished={training_key(other_length): finished[
        training_key(other_length)]})
    assert again.plan().reused == "" and again.next_run().arm == "b"
    again.record(again.next_run(), measured(b, 8.0), None)
    assert (again.next_run().arm, again.next_run().replicate) == ("a", 1)


def test_a_reference_run_is_trained_again_where_taking_it_would_cost_more_than_it_saves():
    """Taking A's run costs one more speed pair: with full-length pairs (steady_s 0) that pair is as long as the
    run, and a run whose own time is mostly start-up (two speed-only runs would take longer) is not worth it."""
    from tfturbo.settings import training_key
    from tfturbo.trials.runs import FinishedRun

    a = RunSettings("builtin:fake", batch_size=64, steps=300, val_every=60)
    b = a.with_(xla_autoclustering=True)
    # 8 s to start and build, 1 s of warm-up: a speed-only run of 3 s steady takes 12 s, two of them 24 s
    quick = {**measured(a, 10.0, steady_from=21), "process_s": 12.0, "wall_s": 4.0}  # its fit() took 4 s
    slow = {**measured(a, 10.0, steady_from=21), "process_s": 60.0, "wall_s": 52.0}  # epochs and validation
    for summary_, rule, taken in [(quick, SpeedRule(3, 6, steady_s=3.0), False),
                                  (slow, SpeedRule(3, 6, steady_s=3.0), True),
                                  (slow, SpeedRule(3, 6, steady_s=0.0), False)]:
        trial = Trial(a, b, rule, finished={training_key(a): FinishedRun("01-baseline", RunSummary.from_dict(summary_))})
        assert (trial.plan().reused == "01-baseline") is taken


def test_a_candidates_gate_run_keeps_per_example_results_only_at_the_points_the_gate_compares():
    """Issue 40: a full-length run validated twice at each point — Keras' validation (the curve the plots show)
    and a pass over every example for the gate — while the gate compares the last 3 points only. B's gate run now
    asks for the per-example pass from its first compared point on (`--paired-from`); the reference's runs, which a
    later candidate may meet at any point, keep every point."""
    from tfturbo.cli_args import run_argv

    a = RunSettings("builtin:fake", batch_size=64, steps=300, val_every=60)
    trial = Trial(a, a.with_(policy="mixed_float16"), SpeedRule(3, 6, steady_s=0.0), seed_replicates=2)
    first = trial.next_run()
    assert (first.arm, first.replicate) == ("b", 1)
    assert first.settings.paired_from == 180  # points 60..300: the gate compares 180, 240, 300
    assert run_argv(first.settings, "out")[run_argv(first.settings, "out").index("--paired-from") + 1] == "180"
    trial.record(first, recorded(first.settings, 80.0), None)
    reference = trial.next_run()
    assert (reference.arm, reference.replicate) == ("a", 1) and reference.settings.paired_from is None
    # a candidate at another batch meets the reference where whole steps allow: from its first such point
    larger = Trial(a, a.with_(batch_size=128), SpeedRule(3, 6, steady_s=0.0))
    planned = larger.next_run()
    assert planned.settings.steps == 150 and planned.settings.paired_from == 90


def test_what_would_be_enough_names_the_short_run_by_its_configuration_and_pair_not_its_folder():
    """Issue 42 walk: the card said "not enough measurement (2 replicate runs measured too little steady state —
    02-mixed_bfloat16.a1: it measured 0.2 s …)", a run folder a user never chose."""
    a = RunSettings("builtin:mlp", batch_size=64, steps=60)
    trial = Trial(a, a.with_(policy="mixed_bfloat16"), SpeedRule(3, 6, steady_s=3.0), share_process=False,
                  names=lambda arm, k: f"02-mixed_bfloat16.{arm}{k}")
    for _ in range(2):
        planned = trial.next_run()
        trial.record(planned, measured(planned.settings, 2.0, windows=2, seconds=0.2), None)
    text = trial.shortfall()
    assert "measured too little steady state — " in text and "in pair 1: " in text, text
    assert "02-mixed_bfloat16" not in text and (trial.label_a in text or trial.label_b in text), text


def test_more_pairs_after_a_stop_measure_exactly_the_pairs_asked_for():
    """Issue 42 walk: "Run 1 more pair" after Esc ran two pairs (the rule wanted more once the first was in).
    `resume(pairs)` measures that many more complete pairs, then the trial is stopped again and judged."""
    a = RunSettings("builtin:fake", batch_size=64)
    trial = Trial(a, a.with_(jit_compile=True), SpeedRule(4, 8), share_process=False)  # noisy: 4 pairs needed
    jitter = iter([1.0, 1.3, 0.8, 1.2, 0.9, 1.25, 0.85, 1.1] * 4)

    def measure() -> None:
        planned = trial.next_run()
        trial.record(planned, recorded(planned.settings, (90.0 if planned.arm == "b" else 100.0) * next(jitter)), None)

    while trial.complete_pairs() < 2:
        measure()
    trial.stop()
    assert trial.next_run() is None and trial.stopped
    trial.resume(1)
    while trial.next_run() is not None:
        measure()
    assert trial.complete_pairs() == 3 and trial.stopped  # one more pair, not two
    assert trial.verdict().speed.replicates == 3
    trial.resume()  # without a count: on until the rule decides
    assert trial.next_run() is not None and not trial.stopped


def test_a_run_handed_back_from_disk_counts_its_recorded_process_time():
    """Issue 42 walk: after File → Recent, the estimates read "about 0 s": each run read back from its folder was
    timed as the instant the read took. Its seconds are the process time it recorded; unknown, none."""
    a = RunSettings("builtin:fake", batch_size=64)
    trial = Trial(a, a.with_(jit_compile=True), SpeedRule(3, 6))
    planned = trial.next_run()
    trial.record(planned, {**recorded(planned.settings), "process_s": 42.0}, None, handed_back=True)
    assert trial.runs[-1].elapsed_s == 42.0
    planned = trial.next_run()
    doc = {k: v for k, v in recorded(planned.settings).items() if k not in ("process_s", "wall_s")}
    trial.record(planned, doc, None, handed_back=True)
    assert trial.runs[-1].elapsed_s is None  # unknown: left out of every estimate, never 0 s
