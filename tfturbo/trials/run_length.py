"""How many steps a run must train for its speed to count in a verdict, from the baseline's own measurement.

A fixed minimum (the wizard accepted 20 steps) says nothing about a given
model: 20 steps of a 2 ms script are 40 ms, all of it warm-up, and every
verdict on such runs is "not enough measurement". What a run needs is its
warm-up plus the steady seconds each replicate aims at (`SpeedRule.steady_s`):
the baseline measures both, so once it has run, the minimum follows from them
by the same rule that sizes a trial's speed-only replicates
(`trial.speed_steps`: the warm-up with a margin, then the steady seconds at the
measured step time). `tfturbo tune` and the wizard both ask here.

Where a trial measures speed in speed-only pairs sized for the steady
seconds (`SpeedRule.steady_s` > 0), the full-length runs' length decides no
verdict: only whether a trial's first pair (the accuracy gate, as long as the
baseline) also counts for speed. Lengthening them would change what the
accuracy gate compares (a script's 4 epochs would become 15) for one pair's
ratio, so the note then says what happens and asks for nothing.
"""

from __future__ import annotations


from .speed import SpeedRule
from ..run_summary import RunSummary
from .sizing import settled_warmup, speed_steps


# runs within this share of the minimum are long enough: the step time a baseline measures varies by more than
# that between runs on a shared machine, and a note asking for 308 steps after a run of 307 helps nobody
ENOUGH = 0.8


def min_run_steps(baseline: RunSummary | None, rule: SpeedRule, per_call: int = 1) -> int | None:
    """The fewest steps a full-length run of this workload needs to measure `rule.steady_s` seconds of steady
    state (with no steady target, a steady state at all), from the baseline's summary; None before a baseline
    completed."""
    if not baseline or baseline.status != "completed":
        return None
    return speed_steps([baseline], rule.steady_s, per_call)


def run_length_note(baseline: RunSummary | None, steps: int, rule: SpeedRule, per_call: int = 1,
                    paired: bool = False) -> str:
    """Why `steps` are too few for a verdict and how many are enough, in one sentence; "" when they are enough
    (or no baseline tells). The numbers are the baseline's: its warm-up and its step time. `paired`: the
    trials' arms share a process (`settings.can_share_process`), so their speed comes from the sized speed
    pairs alone and the full-length runs' length decides no verdict: nothing to say."""
    needed = min_run_steps(baseline, rule, per_call)
    if baseline is None or needed is None or (paired and rule.steady_s):  # needed: None without a baseline
        return ""
    if rule.steady_s:  # the speed-only pairs are sized: only the first pair's ratio is at stake, and whether
        short = rule.shortfall(baseline)  # it counts is the rule the trial applies to each replicate
        if short is None:
            return ""
        more = f" (at least {needed} steps would let the first pair count too)" if needed > steps else ""
        return (f"runs of {steps} steps are too short for a trial's first pair to count for speed ({short}); "
                f"each trial's speed comes from its speed-only pairs, sized for {rule.steady_s:g} s of steady "
                f"state each{more}")
    if steps >= ENOUGH * needed:
        return ""
    warm_steps = settled_warmup(baseline)
    warm = (f"a warm-up of {warm_steps} step{'' if warm_steps == 1 else 's'}" if warm_steps is not None
            else f"no steady state in {steps} steps")
    median = baseline.median_step_ms
    per_step = f", {median:.3g} ms a step" if isinstance(median, (int, float)) and median > 0 else ""
    return (f"runs of {steps} steps are too short for a speed verdict: the baseline measured {warm}{per_step}, so "
            f"at least {needed} steps measure a steady state")


def too_short(baseline: RunSummary | None, steps: int, rule: SpeedRule, per_call: int = 1,
              paired: bool = False) -> tuple[str, int | None]:
    """(`run_length_note`, the steps that are enough) when `steps` are too few for a verdict, else (the note,
    None): what `tfturbo tune` says after its baseline and the wizard's baseline page shows; the steps only
    where the verdict needs them (no speed-only pairs)."""
    note = run_length_note(baseline, steps, rule, per_call, paired)
    return note, (min_run_steps(baseline, rule, per_call) if note and not rule.steady_s else None)
