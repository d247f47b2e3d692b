"""The steps_per_execution lever tries divisors of the validation interval; a script's own length often makes that
interval prime (96 steps validate every 19, 116 every 23), and the skip said the interval 'is too short'."""

from __future__ import annotations

from types import SimpleNamespace

from tfturbo.settings import RunSettings
from tfturbo.tune.levers.steps_per_execution import StepsPerExecution, steps_per_execution_values


def skip_reason(steps: int) -> str | None:
    best = SimpleNamespace(settings=RunSettings("train.py", steps=steps), summary={"step_ms": {"median": 1.5}})
    (candidate, *_) = StepsPerExecution().candidates(SimpleNamespace(best=best))
    return candidate.skipped_reason


def test_an_interval_without_a_divisor_says_so_and_names_one_that_lets_the_lever_try():
    assert steps_per_execution_values(19) == [] and steps_per_execution_values(16) != []
    assert skip_reason(96) == ("skipped: the validation interval (19 steps) has no divisor from 2 to 9, so no N "
                               "steps per call fit it (a call must not span a validation point); --val-every 16 "
                               "lets it try")
    assert skip_reason(15) == "skipped: the validation interval (3 steps) is too short"
    assert skip_reason(300) is None  # every 60 steps: N = 4 and 30
