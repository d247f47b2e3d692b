"""The steps_per_execution lever tries divisors of the validation interval; a script's own length often makes that
interval prime (96 steps validate every 19, 116 every 23), and the skip said the interval 'is too short'."""

from __future__ import annotations

from tfturbo.run_summary import RunSummary
from tfturbo.settings import RunSettings
from tfturbo.trials.verdict import AccuracyVerdict, SpeedVerdict, TrialVerdict
from tfturbo.tune.levers.steps_per_execution import StepsPerExecution, steps_per_execution_values
from tfturbo.tune.policy import StudyDecisions
from tfturbo.tune.study import Rung


def decided(best: Rung, rungs: list[Rung] | None = None) -> StudyDecisions:
    """A study's decisions with `best` the best configuration so far and `rungs` judged."""
    decisions = StudyDecisions([], ["float32"], "")
    decisions.best, decisions.rungs = best, list(rungs or [])
    return decisions


def verdict(speed: str, kept: bool, b_samples_per_s: float | None = None) -> TrialVerdict:
    return TrialVerdict(SpeedVerdict(1.0, (1.0, 1.0), speed, 3, b_samples_per_s=b_samples_per_s),
                        AccuracyVerdict(None, None, None, "within tolerance"), kept, [])


def rung(settings: RunSettings, summary: RunSummary, name: str = "01-baseline", kind: str = "baseline",
         decision: TrialVerdict | None = None) -> Rung:
    return Rung(name, kind, settings, summary=summary, decision=decision)


def skip_reason(steps: int) -> str | None:
    best = rung(RunSettings("train.py", steps=steps), RunSummary(step_ms={"median": 1.5}))
    (candidate, *_) = StepsPerExecution().candidates(decided(best))
    return str(candidate.skipped_reason) if candidate.skipped_reason is not None else None


def test_an_interval_without_a_divisor_says_so_and_names_one_that_lets_the_lever_try():
    assert steps_per_execution_values(19) == [] and steps_per_execution_values(16) != []
    best = rung(RunSettings("train.py", steps=96, val_every=19), RunSummary(step_ms={"median": 1.5}))
    (candidate, *_) = StepsPerExecution().candidates(decided(best))
    assert str(candidate.skipped_reason) == (
        "skipped: the validation interval (19 steps) has no divisor from 2 to 9, so no N steps per call fit it (a "
        "call must not span a validation point); --val-every 16 lets it try")
    assert skip_reason(15) == "skipped: the validation interval (3 steps) is too short"
    assert skip_reason(300) is None  # every 60 steps: N = 4 and 30


def test_a_scripts_own_length_gets_a_default_interval_the_lever_can_divide():
    """A script's own 96 or 116 steps gave default intervals of 19 and 23 (primes): the steps_per_execution rung,
    worth 1.70x on a 1.8 ms script at 300 steps, was skipped for every such script."""
    for steps, interval in ((96, 16), (116, 20), (300, 60), (60, 12), (100, 20), (40, 8), (30, 6)):
        assert RunSettings("train.py", steps=steps).effective_val_every() == interval, steps
    assert skip_reason(96) is None and skip_reason(116) is None
    assert RunSettings("train.py", steps=96, val_every=19).effective_val_every() == 19  # a given one stays


def test_the_largest_n_is_measured_first_and_the_smaller_only_when_it_was_slower():
    """Measured one after the other, 4 then 30 steps per call were two trials of 1.06× each (5 and 6 pairs on
    builtin:transformer); the largest alone measures their product in one."""
    from tfturbo.trials.verdict import FASTER, NO_CHANGE, SLOWER

    base = RunSettings("builtin:transformer", steps=300)  # validates every 60 steps: N = 4 and 30
    best = rung(base, RunSummary(step_ms={"median": 3.4}))
    lever = StepsPerExecution()
    (candidate,) = lever.candidates(decided(best))
    assert candidate.slug == "spe30" and candidate.settings.steps_per_execution == 30

    def after(speed: str, kept: bool) -> list:
        measured = Rung("02-spe30", lever.rung_kind, candidate.settings, compared_with="01-baseline",
                        decision=verdict(speed, kept))
        return lever.follow_up(decided(best, [measured]))

    (smaller,) = after(SLOWER, False)
    assert smaller.slug == "spe4" and smaller.settings == base.with_(steps_per_execution=4)
    assert smaller.note.startswith("30 steps per call were slower")
    assert after(NO_CHANGE, False) == [] and after(FASTER, True) == []


def test_the_step_time_that_decides_is_the_trials_over_all_its_runs_not_one_runs():
    """This machine runs a process at one of two speeds: one XLA run read 5.5 ms a step where the configuration's
    trial measured 3.9 ms over all its runs, and the lever was skipped in one study and measured in the next."""
    from tfturbo.tune.levers.steps_per_execution import configuration_step_ms

    base = RunSettings("builtin:transformer", steps=300)
    run = RunSummary.from_dict({"step_ms": {"median": 5.5}, "settings": {"batch_size": 32}})
    measured = rung(base, run, "03-xla", "xla", verdict("faster", True, b_samples_per_s=32 / 0.0039))
    assert abs(configuration_step_ms(measured) - 3.9) < 1e-9
    (candidate,) = StepsPerExecution().candidates(decided(measured))
    assert candidate.skipped_reason is None and candidate.note.startswith("a step takes 3.9 ms")
    baseline = rung(base, run)  # no trial: its run
    (skipped,) = StepsPerExecution().candidates(decided(baseline))
    assert str(skipped.skipped_reason).startswith("skipped: a step takes 5.5 ms")


def test_the_short_steps_finding_names_the_configuration_and_carries_no_stale_speed_up():
    """Issue-42 walk: after the confirmation pooled 7 pairs (1.76× [1.59, 1.95] on every card, table and page), the
    finding raised with the rung still read "SHORT_STEPS 04-spe30 … faster: 1.71× [1.48, 1.96] over 3 replicate
    pairs". The finding says kept and points to the decision, named by the configuration."""
    from tfturbo.trials.verdict import ReasonPart, Says
    from tfturbo.tune.levers import lever

    base = RunSettings("train.py", steps=300)
    decisions = StudyDecisions([], ["float32"], "")
    decisions.set_baseline(rung(base, RunSummary(step_ms={"median": 2.1})))
    kept = verdict("faster", True)
    kept.said = [ReasonPart(Says.RATIO, "faster: 1.71× [1.48, 1.96] over 3 replicate pairs")]
    spe = rung(base.with_(steps_per_execution=30), RunSummary(), "04-spe30", "steps_per_execution")
    decisions.conclude(spe, kept, lever("steps_per_execution"))
    [finding] = [f for f in kept.findings if f["code"] == "SHORT_STEPS"]
    assert finding["where"] == "30 steps per call"
    assert "×" not in finding["message"] and "1.71" not in finding["message"]
    assert finding["message"] == ("steps are short, so 30 steps per call were measured: kept (its speed-up and "
                                  "accuracy are in this configuration's decision)")
