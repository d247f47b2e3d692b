"""How long a trial's runs train and where they validate: the rules, as functions of settings and summaries.

B's full-length run on the samples of the run it is judged against, at the same validation points where
whole steps allow (`equal_samples`, `aligned_reference`); a speed-only run's length from its arm's runs so far
(`speed_steps`); whether the speed pairs share a process (`speed_in_paired_processes`). The schedule
(`trials.schedule`) applies them to a trial's runs.
"""

from __future__ import annotations

import math

from ..run_summary import RunSummary
from ..settings import NO_PROFILE, RunSettings, can_share_process
from . import accuracy
from .speed import SpeedRule


def trial_settings(settings: RunSettings) -> RunSettings:
    """A replicate measures the whole step budget, without the adaptive stop, and without the profiler (it slows
    steps) except in the first pair (`PROFILED_REPLICATE`), and with per-example results at every validation point
    but in B's full-length run (`Trial.gate_from`)."""
    return settings.with_(profile=NO_PROFILE, until_ci=None, min_steps=0, paired_from=None)


def validation_points(steps: int, val_every: int, batch: int) -> list[int]:
    """The samples seen at each validation point of a full-length run, as the backend validates: after every
    `val_every` steps (one Keras epoch each) and after the last step, samples being steps × batch."""
    every = max(1, min(val_every, steps))
    return [k * batch for k in range(every, steps, every)] + [steps * batch]


def compared_points(ref: RunSettings, ref_batch: int, b: RunSettings, b_batch: int) -> list[tuple[int, int]]:
    """The (reference, B) points the accuracy gate would compare for these two full-length runs
    (`accuracy.common_points` on their validation points)."""
    mine = validation_points(b.steps, b.effective_val_every(), b_batch)
    theirs = validation_points(ref.steps, ref.effective_val_every(), ref_batch)
    return accuracy.common_points(dict.fromkeys(theirs), dict.fromkeys(mine), accuracy.POINTS)


def enough_exact(pairs: list[tuple[int, int]], ref: RunSettings, ref_batch: int) -> bool:
    """True when the gate compares as many points as it averages (`accuracy.POINTS`, or every point the
    reference has when it has fewer), each at exactly equal samples seen."""
    wanted = min(accuracy.POINTS, len(validation_points(ref.steps, ref.effective_val_every(), ref_batch)))
    return len(pairs) >= wanted and all(sa == sb for sa, sb in pairs)


def equal_samples(ref: RunSettings, b: RunSettings, ref_batch: int, b_batch: int) -> RunSettings:
    """B's steps and validation interval for as many samples as the reference run `ref` at each validation
    point, at exactly the same sample counts where whole steps of B allow it.

    B's points are whole steps, so they can only meet the reference's at
    multiples of `b_batch`: validating every lcm(reference interval in
    samples, `b_batch`) samples gives every point the two can share (every
    point when the reference's interval is a whole number of B's batches, as
    for 300 steps at batch 64 against 96 or 256); with steps_per_execution N
    every lcm(interval, N × `b_batch`), so a call never spans a point and B
    keeps its N (the backend lowers N otherwise, `whole_calls`, and B's run
    would measure another configuration's speed: such a run's rate does not
    count, `judging.run_rate`; two exact points at B's own N are worth more than
    three at another N). B trains the reference's samples to the nearest
    whole step. When that gives the gate fewer points to compare than the
    reference's interval rounded to whole calls of B (its nearest points,
    within `accuracy.SAMPLES_TOLERANCE`), B takes that instead, and the gate
    says how far apart the points it compares are
    (`AccuracyVerdict.points_note`).
    """
    every = max(1, min(ref.effective_val_every(), ref.steps))
    interval, total = every * ref_batch, ref.steps * ref_batch
    steps = max(1, round(total / b_batch))
    n = b.calls  # whole calls: B's run is measured at its own steps_per_execution
    candidates = [b.with_(steps=steps, val_every=min(math.lcm(interval, n * b_batch) // b_batch, steps)),
                  b.with_(steps=steps, val_every=min(max(1, round(interval / (n * b_batch))) * n, steps))]
    compared = [compared_points(ref, ref_batch, c, b_batch) for c in candidates]
    exact = next((c for c, pairs in zip(candidates, compared) if enough_exact(pairs, ref, ref_batch)), None)
    if exact is not None:
        return exact
    most = max(len(pairs) for pairs in compared)
    return next(c for c, pairs in zip(candidates, compared) if len(pairs) == most)


def aligned_reference(a: RunSettings, a_batch: int, b_batch: int) -> RunSettings:
    """A's full-length run moved, only where needed, to validation points B can meet exactly.

    Where A's own points already give the gate enough exact points with B
    (`equal_samples`, `enough_exact`), A is unchanged. Else A validates every
    multiple of lcm(`a_batch`, `b_batch`) samples nearest its own interval
    (both arms stop there after whole steps), and trains a multiple of it when
    its samples are not a whole number of B's batches and the nearest
    multiple is within `accuracy.SAMPLES_TOLERANCE` of them (so both arms end
    at the same count). When that does not give enough exact points either
    (the lcm is longer than the run), A is unchanged and B takes the nearest
    points. A's run records the interval it validated at (its run.yaml and
    summary), and the interval is a measurement setting
    (`compare.replicate_key`), so the run is still a replicate of A's
    configuration.
    """
    def enough(ref: RunSettings) -> bool:
        return enough_exact(compared_points(ref, a_batch, equal_samples(ref, ref, a_batch, b_batch), b_batch),
                            a, a_batch)

    if a_batch == b_batch or enough(a):
        return a
    lcm = math.lcm(a_batch, b_batch)
    total = a.steps * a_batch
    if total % b_batch:
        nearest = round(total / lcm) * lcm
        total = nearest if nearest and abs(nearest - total) <= accuracy.SAMPLES_TOLERANCE * total else total
    interval = max(1, round(min(a.effective_val_every(), a.steps) * a_batch / lcm)) * lcm
    moved = a.with_(steps=total // a_batch, val_every=min(interval, total) // a_batch)
    return moved if enough(moved) else a


def speed_in_paired_processes(share_process: bool, rule: SpeedRule, a: RunSettings, b: RunSettings,
                              accelerator: bool = False) -> bool:
    """The one rule of whether a trial of `a` against `b` takes its speed from paired processes only
    (`Trial.paired`): its runs may share a process (`share_process`: they run here), it has speed pairs to
    size (`rule.steady_s`), and the settings allow it on this device (`settings.can_share_process`; `accelerator`:
    a GPU or TPU trains them)."""
    return share_process and bool(rule.steady_s) and can_share_process(a, b, accelerator)


MAX_SPEED_STEPS = 1_000_000  # a speed-only replicate never trains longer than this, whatever the step time
# A paired replicate process measures, per arm, at least this many steady seconds per second of the process's own
# overhead (interpreter start, TensorFlow import, both builds, both warm-ups), split between its two arms: with
# 1.0 the arms' steady windows together last as long as everything else, so the process is at least half steady
# measurement by construction, as pyperf and Criterion size a benchmark's loops to outweigh its fixed cost.
STEADY_PER_OVERHEAD = 1.0
# A paired replicate ends each arm once it measured its steady seconds; its steps are only a cap, this many times
# what the arm's step time says, so blocks that overshoot or a slow moment never cut the measurement short.
PAIRED_STEPS_CAP = 1.5
WARMUP_MARGIN = 1.5  # a speed-only run allows its arm's longest warm-up so far times this, plus MIN_STEADY_STEPS
MIN_STEADY_STEPS = 20


def settled_warmup(summary: RunSummary) -> int | None:
    """The warm-up steps of a run that reached a steady state (`first_steady_step` - 1, with steady windows),
    None when it never settled."""
    first = summary.first_steady_step
    return first - 1 if first is not None and first > 0 and (summary.throughput or {}).get("windows") else None


def speed_steps(summaries: list[RunSummary], steady_s: float, per_call: int = 1) -> int | None:
    """Steps a speed-only replicate needs for `steady_s` seconds of steady state, from the arm's runs so far.

    Warm-up: the longest seen (a run that never settled counts its whole
    length, so the next one trains at least twice as long). Step time: the
    median of the runs' median steady steps, else (nothing steady yet) their
    wall time per step, which over-estimates it and errs towards shorter runs
    the next calibration lengthens; once any run measured a step, the
    wall-time estimates are dropped (14 ms against a measured 0.4 ms kept a
    script's pair 3 too short to count). None: no completed run to size from.
    """
    warmups, steady_ms, wall_ms = [], [], []
    for s in summaries:
        done = s.steps_completed or 0
        if not done:
            continue
        warmup = settled_warmup(s)
        warmups.append(warmup if warmup is not None else 2 * done)
        median = s.median_step_ms
        if median is not None and median > 0:
            steady_ms.append(median)
        elif s.wall_s is not None and s.wall_s > 0:
            wall_ms.append(1000.0 * s.wall_s / done)
    step_ms = steady_ms or wall_ms
    if not warmups or not step_ms:
        return None
    ms = sorted(step_ms)[len(step_ms) // 2]
    steps = math.ceil(WARMUP_MARGIN * max(warmups)) + max(MIN_STEADY_STEPS, math.ceil(steady_s * 1000.0 / ms))
    steps = min(MAX_SPEED_STEPS, steps)
    return steps + (-steps) % max(1, per_call)  # whole calls of steps_per_execution
