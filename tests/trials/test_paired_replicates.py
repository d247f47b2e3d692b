"""Paired speed replicates: pairs 2..N of a trial as one process measuring both arms (docs/MEASUREMENT.md,
"Paired speed replicates"), driven with recorded summaries."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tfturbo.settings import RunSettings, can_share_process
from tfturbo.run_summary import RunSummary
from tfturbo.trials.speed import SpeedRule
from tfturbo.trials.design import steady_words
from tfturbo.trials.runs import PlannedPair, PlannedRun, validation_s
from tfturbo.trials.sizing import STEADY_PER_OVERHEAD
from tfturbo.trials.trial import Trial, run_trial
from tfturbo.trials.verdict import NO_CHANGE, NOT_ENOUGH, TrialVerdict
from trainer_backend.blocks import hand_overs

BASE = RunSettings("builtin:fake", batch_size=64, steps=300)


def summary(settings: RunSettings, rate: float, steady_s: float = 3.0, windows: int = 8, steady_from: int | None = 5,
            steps: int | None = None) -> dict:
    """A completed run: `rate` samples/s over `steady_s` seconds of steady windows (windows=0: never steady)."""
    steps = steps or settings.steps
    ms = 64 * 1000.0 / rate
    return {"status": "completed", "settings": settings.to_dict(), "steps_completed": steps,
            "first_steady_step": steady_from if windows else None, "step_ms": {"median": ms if windows else None},
            "wall_s": steps * ms / 1000.0 + 1.0, "warmup_s": 1.0,
            "throughput": {"samples_per_s": rate if windows else None, "seconds": steady_s if windows else 0.0,
                           "windows": windows, "steps": int(steady_s * 1000 / ms) if windows else 0}}


def test_workload_trials_pair_later_replicates_and_scripts_or_process_wide_settings_do_not(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("import keras\nmodel = keras.Sequential()\nmodel.fit()\n")
    assert can_share_process(BASE, BASE.with_(policy="mixed_float16", jit_compile=True, batch_size=128))
    assert not can_share_process(BASE, BASE.with_(xla_autoclustering=True))  # TensorFlow's global jit config
    assert not can_share_process(BASE.with_(strategy="mirrored"), BASE.with_(strategy="mirrored"))
    assert not can_share_process(RunSettings(str(script)), RunSettings(str(script), policy="mixed_float16"))
    # a script built in is still a script (the core once took every builtin: for a contract workload)
    assert not can_share_process(RunSettings("builtin:train-script"), RunSettings("builtin:train-script", policy="mixed_float16"))
    assert can_share_process(RunSettings("builtin:mlp"), RunSettings("builtin:mlp", policy="mixed_float16"))

    kinds = {}
    for label, b, a in (("policy", BASE.with_(policy="mixed_float16"), BASE),
                        ("autoclustering", BASE.with_(xla_autoclustering=True), BASE),
                        ("script", RunSettings(str(script), steps=300, policy="mixed_float16"),
                         RunSettings(str(script), steps=300))):
        trial = Trial(a, b, SpeedRule(3, 3))
        seen = []

        def execute(planned: PlannedRun, seen=seen):
            seen.append(planned)
            return summary(planned.settings, 1000.0), None

        def execute_pair(pair: PlannedPair, seen=seen):
            seen.append(pair)
            return [summary(run.settings, 1000.0) for run in pair.runs], [None, None]

        run_trial(trial, execute, execute_pair=execute_pair)
        kinds[label] = [type(p).__name__ for p in seen]
        if label == "policy":
            pair = seen[2]
            assert pair.replicate == 2 and [r.arm for r in pair.runs] == ["b", "a"]  # pair 2 is BA
            assert all(r.settings.speed_only for r in pair.runs) and pair.runs[1].settings.policy == "float32"
            assert "A and B in one process" in trial.plan().text()
            verdict = trial.verdict()
            assert "one process, in interleaved blocks" in verdict.design
            # the figure the design words, recorded as a number (the report reads it, not the words)
            assert verdict.steady_s == 3.0 and steady_words(3.0) in verdict.design
            assert TrialVerdict.from_dict(verdict.to_dict()).steady_s == 3.0
    # the gate's two full-length runs (no external accuracy reference: A's own runs are it), then 3 speed pairs
    assert kinds["policy"] == ["PlannedRun", "PlannedRun", "PlannedPair", "PlannedPair", "PlannedPair"]
    assert kinds["autoclustering"] == kinds["script"] == ["PlannedRun"] * 6


def test_each_arm_measures_as_long_as_the_process_spends_outside_its_windows():
    trial = Trial(BASE, BASE.with_(jit_compile=True), SpeedRule(3, 6, steady_s=3.0))
    assert "at least 3 s of steady state per arm" in trial.plan().text()  # before pair 1: the floor
    for process_s in (20.0, 22.0):  # pair 1: processes of 20 s and 22 s, 3 s steady each
        planned = trial.next_run()
        trial.record(planned, {**summary(planned.settings, 1000.0), "process_s": process_s}, None)
    pair = trial.next_run()
    assert isinstance(pair, PlannedPair)
    overhead = (20 - 3 - validation_s(trial.runs[0])) + (22 - 3 - validation_s(trial.runs[1]))
    assert pair.steady_s == pytest.approx(STEADY_PER_OVERHEAD * overhead / 2)
    assert f"{pair.steady_s:.0f} s of steady state per arm (the two arms together as long as" in trial.plan().text()
    assert trial.progress_text().startswith("pair 1 of 3–6: A and B in one process")  # the first speed pair
    # the paired process itself: 30 s with 2 × 8 s steady → 14 s of overhead → 7 s per arm from now on
    trial.record(pair, [{**summary(r.settings, 1000.0, steady_s=8.0), "process_s": p}
                        for r, p in zip(pair.runs, (29.5, 30.0))], [None, None])
    third = trial.next_run()
    assert third.steady_s == pytest.approx(max(3.0, STEADY_PER_OVERHEAD * 14.0 / 2))
    assert all(r.settings.steps < pair.runs[0].settings.steps for r in third.runs)  # a shorter cap
    # by construction the paired process was at least half steady measurement
    assert sum(r.summary.throughput["seconds"] for r in trial.runs[2:]) >= 0.5 * 30.0 * STEADY_PER_OVERHEAD


def test_the_first_paired_process_is_sized_on_what_the_gate_run_spent_before_it_measured():
    """Issue 40: a script's gate run spent 23 s in its process, 5 of them reading its profile and saving its model
    after training: counted as overhead, they made the first paired process measure 17 s per arm where the later
    ones, sized on their own overhead, measured 6 s. A paired process pays, per arm, the time to fit() and the
    warm-up, so that is what the first one is sized on."""
    study_reference = [(RunSummary.from_dict(summary(BASE, 1000.0)), None)]  # B is judged against the baseline
    trial = Trial(BASE, BASE.with_(policy="mixed_float16"), SpeedRule(3, 6, steady_s=3.0),
                  accuracy_reference=study_reference)
    gate = trial.next_run()
    assert gate.arm == "b" and trial.gate_arms() == ("b",)
    trial.record(gate, {**summary(gate.settings, 1000.0), "process_s": 23.0, "fit_start_s": 1.5, "warmup_s": 3.5},
                 None)
    pair = trial.next_run()
    assert isinstance(pair, PlannedPair)
    assert trial.paired_overhead_s() == pytest.approx(2 * (1.5 + 3.5))  # two arms' start-to-fit and warm-up
    assert pair.steady_s == pytest.approx(max(3.0, STEADY_PER_OVERHEAD * 10.0 / 2))


def test_a_trial_of_paired_runs_that_never_reach_a_steady_state_ends_within_its_maximum():
    trial = Trial(BASE, BASE.with_(policy="mixed_float16"), SpeedRule(3, 5))
    processes = 0

    def execute(planned):
        return summary(planned.settings, 1000.0), None

    def execute_pair(pair):
        nonlocal processes
        processes += 1
        return [summary(run.settings, 1000.0, windows=0) for run in pair.runs], [None, None]

    verdict = run_trial(trial, execute, execute_pair=execute_pair)
    assert len(trial.runs) <= 2 * 5 and processes <= 4
    assert verdict.speed.verdict == NOT_ENOUGH and math.isnan(verdict.speed.ratio)


def test_a_paired_process_that_fails_in_one_arm_ends_the_trial_with_that_runs_status():
    trial = Trial(BASE, BASE.with_(policy="mixed_float16"), SpeedRule(3, 6))

    def execute_pair(pair):
        return [dict(summary(r.settings, 1000.0), status="failed" if r.arm == "b" else "cancelled")
                for r in pair.runs], [None, None]

    verdict = run_trial(trial, lambda p: (summary(p.settings, 1000.0), None), execute_pair=execute_pair)
    assert len(trial.runs) == 4 and verdict.status == "failed" and trial.next_run() is None


def test_a_paired_process_that_fails_before_training_leaves_the_trial_to_separate_processes(tmp_path):
    """Two arms that do not fit in one process (both models' memory, a workload that refuses a second build)
    fail it before either arm trains. Each arm trained in its own process before, so that is the pairing's
    failure, not B's: the trial measures on in separate processes and judges B on them."""
    a = BASE.with_(batch_size=64, steps=300)
    trial = Trial(a, a.with_(policy="mixed_float16"), SpeedRule(3, 6))
    seen = []

    def execute(planned):
        seen.append(planned)
        return summary(planned.settings, 1200.0 if planned.arm == "b" else 1000.0), None

    def execute_pair(pair):
        seen.append(pair)
        return [None, {"status": "failed", "steps_completed": 0, "error": {"kind": "bad_input", "message": "x"}}], \
            [None, None]

    verdict = run_trial(trial, execute, execute_pair=execute_pair)
    assert [type(p).__name__ for p in seen][:3] == ["PlannedRun", "PlannedRun", "PlannedPair"]
    assert all(isinstance(p, PlannedRun) for p in seen[3:]) and trial.unpaired and not trial.paired
    assert all(r.status == "completed" for r in trial.runs)  # the failed process is no run of the trial
    assert verdict.status != "failed" and verdict.speed.verdict == "faster"


def test_a_a_paired_replicates_keep_covering_process_to_process_variation():
    """A/A: every process has its own offset (memory layout, clocks: ±6%) that both arms in it share only in
    part, and steps within a process are autocorrelated. The interval is across processes, so it must cover
    1 in about 95% of trials — the blocks inside a process do not shrink it below the process noise."""
    rng = np.random.default_rng(23)
    covered, no_change, trials = 0, 0, 200
    for _ in range(trials):
        trial = Trial(BASE, BASE.with_(seed=1234), SpeedRule(3, 6))

        def arm_rate(process_offset: float) -> float:
            own = rng.normal(0, 0.03)  # this arm's build in this process (layout, caches)
            ar = [0.0]
            for _ in range(40):  # AR(1) step noise, averaged over the arm's steady windows
                ar.append(0.8 * ar[-1] + rng.normal(0, 0.05))
            return 1000.0 * math.exp(process_offset + own + float(np.mean(ar)))

        def execute(planned):
            return summary(planned.settings, arm_rate(rng.normal(0, 0.06))), None

        def execute_pair(pair):
            offset = rng.normal(0, 0.06)
            return [summary(r.settings, arm_rate(offset)) for r in pair.runs], [None, None]

        verdict = run_trial(trial, execute, execute_pair=execute_pair)
        lo, hi = verdict.speed.ci95
        covered += lo <= 1.0 <= hi
        no_change += verdict.speed.verdict == NO_CHANGE
    assert covered / trials >= 0.9 and no_change / trials >= 0.9


def paired_process(rng, order: str, b_over_a: float, slows: bool) -> dict[str, dict]:
    """Both arms' summaries from one simulated run-pair process: blocks in `order` (abbabaab), two 0.5 s windows
    each; every arm's build has its own offset (±2%), the windows AR(1) noise; with `slows` the machine drops to
    0.65 of its speed at a random moment (this stack runs a process at one of two speeds)."""
    windows = len(order) * 2
    drop = int(rng.integers(1, windows)) if slows else windows
    own = {"a": rng.normal(0, 0.02), "b": math.log(b_over_a) + rng.normal(0, 0.02)}
    noise, rows, holding = 0.0, {"a": [], "b": []}, 0
    for k, arm in enumerate(order):
        holding += k == 0 or order[k - 1] != arm
        for w in range(2):
            noise = 0.5 * noise + rng.normal(0, 0.03)
            t = 2 * k + w
            rows[arm].append((holding, 1000.0 * math.exp(own[arm] + noise) * (0.65 if t >= drop else 1.0)))
    overs = hand_overs(rows)
    out = {}
    for arm in "ab":
        s = summary(BASE, float(np.median([r for _, r in rows[arm]])))
        s["hand_overs"] = overs[arm]
        out[arm] = s
    return out


def test_a_machine_that_changes_speed_mid_process_moves_the_arms_medians_but_not_the_hand_overs():
    """The arms' median rates sit in different stretches of a process whose machine slows down mid-way; the
    windows either side of a hand-over see the same machine. 1.25 is the true ratio."""
    rng = np.random.default_rng(5)
    by_median, by_hand_over = [], []
    for _ in range(300):
        p = paired_process(rng, "abbabaab", 1.25, slows=True)
        pa, pb = RunSummary.from_dict(p["a"]), RunSummary.from_dict(p["b"])
        a, b = pa.samples_per_s, pb.samples_per_s
        by_median.append(math.log(b / a / 1.25))
        by_hand_over.append(math.log(SpeedRule.pair_ratio(a, b, pb) / 1.25))
    assert abs(np.mean(by_hand_over)) < 0.01  # no bias
    assert np.std(by_hand_over) < 0.5 * np.std(by_median)
    assert np.mean(np.abs(by_hand_over) > 0.1) < 0.01 < np.mean(np.abs(by_median) > 0.1)  # the 0.95-for-1.25 pairs


def test_a_a_trials_from_hand_overs_still_cover_process_to_process_variation():
    """Identical settings, half the processes slowing mid-way, each arm's build its own: judged "no measurable
    change" in at least 90% of trials (the interval is across processes; each arm's own offset stays in it)."""
    rng = np.random.default_rng(11)
    no_change, trials = 0, 200
    for _ in range(trials):
        trial = Trial(BASE, BASE.with_(seed=1234), SpeedRule(3, 6))

        def execute_pair(pair):
            order = "abbabaab" if pair.runs[0].arm == "a" else "baababba"
            p = paired_process(rng, order, 1.0, slows=bool(rng.integers(0, 2)))
            return [p[r.arm] for r in pair.runs], [None, None]

        verdict = run_trial(trial, lambda planned: (summary(planned.settings, 1000.0), None),
                            execute_pair=execute_pair)
        assert verdict.speed.replicates >= 3
        no_change += verdict.speed.verdict == NO_CHANGE
    assert no_change / trials >= 0.9
