"""A trial's progress for the front ends: the seconds its runs still need (from what it measured) and where
it stands in words ("pair 2 of 3–6 · about 1 min 40 s left").

Reads the schedule (`trials.schedule`) and the run it plans next; changes nothing.
"""

from __future__ import annotations

from ..numbers import counted, duration_text
from . import accuracy
from .runs import A, B, Planned, PlannedPair, PlannedRun, steady_s, validation_s
from .schedule import Schedule


def remaining_s(trial: Schedule, done_all: bool, decided: bool) -> tuple[float, float] | None:
    """(at least, at most) seconds of runs left: to the fewest pairs the rule allows (at least the pair under
    way), and to its maximum.

    None while nothing of the trial is measured to estimate from (before
    its full-length runs ended) and once it has no run left, (0, 0); a decided trial that trains more seeds
    (the way forward, `Schedule.more_seeds_run`) has full-length trainings left, as long as its gate's.
    Each run still to come is estimated from what the trial measured,
    process start, warm-up and validation included: a paired process as
    the overhead its trial's processes showed plus its arms' steady
    seconds; a separate speed-only run as its arm's runs so far.
    """
    if done_all:
        return (0.0, 0.0)
    if decided:
        one = _slot_estimate(trial, 0, A)
        runs = 2 * trial.more_seeds - sum(map(len, trial.more_seeds_measured()))
        return (one * runs, one * runs) if one is not None else None
    done = len(trial.runs)
    if done < len(trial.gate_arms()):
        return None
    estimates: dict[tuple[int, str], float] = {(1, A): 0.0} if trial.reused_run() is not None else {}

    def left(pairs: int) -> float | None:
        total = 0.0
        for k in range(done, trial.runs_through(pairs)):
            replicate, arm = trial.slot(k)
            if (replicate, arm) not in estimates:
                one = _slot_estimate(trial, replicate, arm)
                if one is None:
                    return None
                estimates[replicate, arm] = one
            total += estimates[replicate, arm]
        return total
    under_way = trial.speed_pair_number(trial.slot(done)[0])  # the pair begun counts
    low, high = left(max(trial.rule.min_pairs, under_way)), left(trial.rule.max_pairs)
    return (low, high) if low is not None and high is not None else None


def progress_text(trial: Schedule, planned: Planned, left: tuple[float, float] | None,
                  decided: bool = False) -> str:
    """Where the trial stands, for a log line or a page: "pair 2 of 3–6 · about 1 min 40 s left (at most
    3 min 10 s)", or "full-length run for the accuracy gate (then 3–6 speed pairs)" while the gate's runs
    go. `planned`: the run the trial wants next; `left`: `remaining_s`; `decided`: its pairs are decided (the
    run is a training of the way forward "train more seeds")."""
    rule = trial.rule
    span = f"{rule.min_pairs}–{rule.max_pairs}" if rule.max_pairs > rule.min_pairs else str(rule.min_pairs)
    number = trial.speed_pair_number(planned.replicate)
    if isinstance(planned, PlannedRun) and planned.replicate < 1 and decided:
        who = trial.label_b if planned.arm == B else trial.reference_words()
        text = f"{who} trained again from seed {planned.settings.seed}, to narrow the trainings' noise"
    elif isinstance(planned, PlannedRun) and planned.replicate < 1:
        text = (f"the accuracy reference trained again from another seed (seed {planned.settings.seed}), for "
                f"the trainings' noise (then {span} speed pairs)")
    elif number:
        text = f"pair {number} of {span}"
    else:
        gate = trial.gate_arms()
        first = planned.first if isinstance(planned, PlannedPair) else planned
        which = f" {gate.index(first.arm) + 1} of {len(gate)}" if len(gate) > 1 and trial.reused_run() is None \
            else ""
        words = trial.planned_gate()
        seeds = trial.seed_runs()
        then = (f"{counted(seeds, 'training')} from other seeds and " if seeds else "") + f"{span} speed pairs"
        text = (f"full-length run{which} (then {then}; accuracy gate: {words})"
                if words == accuracy.NO_VALIDATION else
                f"full-length run{which} for the accuracy gate (then {then}"
                + (f"; {words}" if words else "") + ")")
    if isinstance(planned, PlannedPair):
        text += f": {trial.label_a} and {trial.label_b} in one process"
    if left is not None:
        low, high = left
        text += f" · about {duration_text(low)} left"
        if high > low * 1.1 + 5:
            text += f" (at most {duration_text(high)})"
    return text


def _slot_estimate(trial: Schedule, replicate: int, arm: str) -> float | None:
    """Seconds of the run in `replicate` of `arm` (a paired process: half of it), from what was measured."""
    if replicate < 1:  # the reference from another seed: as long as the gate's full-length runs
        full = [r.elapsed_s for r in trial.runs if r.planned.replicate == 1 and r.elapsed_s]
        return sorted(full)[len(full) // 2] if full else None
    if replicate >= 2 and trial.paired:  # half a paired process: half its overhead, and its own steady seconds
        overhead = trial.paired_overhead_s()
        return overhead / 2 + (trial.paired_steady_s() or 0.0) if overhead is not None else None
    return _run_estimate(trial, arm)


def _run_estimate(trial: Schedule, arm: str) -> float | None:
    """Seconds of `arm`'s next run on its own: its speed-only runs' median, else its last run's start-up and
    warm-up plus `rule.steady_s` (its full length when every pair trains the full length)."""
    runs = [r for r in trial.runs if r.planned.arm == arm and r.elapsed_s]
    if not runs:
        return None
    speed = [r for r in runs if r.planned.settings.speed_only]
    if speed:
        return sorted(r.elapsed_s or 0.0 for r in speed)[len(speed) // 2]
    if not trial.rule.steady_s:
        return runs[-1].elapsed_s
    last = runs[-1]
    overhead = max(0.0, (last.elapsed_s or 0.0) - steady_s(last) - validation_s(last))
    return overhead + trial.rule.steady_s
