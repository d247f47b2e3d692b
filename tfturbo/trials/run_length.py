"""How many steps a run must train for its speed to count in a verdict, from the baseline's own measurement.

A fixed minimum (the wizard accepted 20 steps) says nothing about a given
model: 20 steps of a 2 ms script are 40 ms, all of it warm-up, and every
verdict on such runs is "not enough measurement". What a run needs is its
warm-up plus the steady seconds each replicate aims at (`SpeedRule.steady_s`):
the baseline measures both, so once it has run, the minimum follows from them
by the same rule that sizes a trial's speed-only replicates
(`trial.speed_steps`: the warm-up with a margin, then the steady seconds at the
measured step time). `tfturbo tune` and the wizard both ask here.
"""

from __future__ import annotations

from typing import Any

from .speed import SpeedRule
from .trial import settled_warmup, speed_steps


# runs within this share of the minimum are long enough: the step time a baseline measures varies by more than
# that between runs on a shared machine, and a note asking for 308 steps after a run of 307 helps nobody
ENOUGH = 0.8


def min_run_steps(baseline: dict[str, Any] | None, rule: SpeedRule, per_call: int = 1) -> int | None:
    """The fewest steps a full-length run of this workload needs to measure `rule.steady_s` seconds of steady
    state (with no steady target, a steady state at all), from the baseline's summary; None before a baseline
    completed."""
    if not baseline or baseline.get("status") != "completed":
        return None
    return speed_steps([baseline], rule.steady_s, per_call)


def run_length_note(baseline: dict[str, Any] | None, steps: int, rule: SpeedRule, per_call: int = 1) -> str:
    """Why `steps` are too few for a verdict and how many are enough, in one sentence; "" when they are enough
    (or no baseline tells). The numbers are the baseline's: its warm-up and its step time."""
    needed = min_run_steps(baseline, rule, per_call)
    if needed is None or steps >= ENOUGH * needed:
        return ""
    warm_steps = settled_warmup(baseline)
    warm = (f"a warm-up of {warm_steps} step{'' if warm_steps == 1 else 's'}" if warm_steps is not None
            else f"no steady state in {steps} steps")
    median = (baseline.get("step_ms") or {}).get("median")
    per_step = f", {median:.3g} ms a step" if isinstance(median, (int, float)) and median > 0 else ""
    aim = (f"the {rule.steady_s:g} s of steady state each replicate aims at" if rule.steady_s
           else "a steady state")
    # a trial sizes its speed-only pairs by the same rule, so its verdict stands either way: only its first,
    # full-length pair (validation) does not count for speed. "too short for a speed verdict" made a user of a
    # 90-step script think every verdict needed 17 times its length (issue 22 walk)
    return (f"runs of {steps} steps are too short for their own speed to count: the baseline measured "
            f"{warm}{per_step}, so at least {needed} steps measure {aim}; each trial measures speed in runs that "
            "long meanwhile")


def too_short(baseline: dict[str, Any] | None, steps: int, rule: SpeedRule, per_call: int = 1
              ) -> tuple[str, int | None]:
    """(`run_length_note`, `min_run_steps`) when `steps` are too few for a verdict, else ("", None): what
    `tfturbo tune` says after its baseline and the wizard's baseline page shows."""
    note = run_length_note(baseline, steps, rule, per_call)
    return note, (min_run_steps(baseline, rule, per_call) if note else None)
