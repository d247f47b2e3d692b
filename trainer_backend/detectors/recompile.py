"""RECOMPILE_STORM: XLA keeps compiling after warm-up, and which input shape makes it.

XLA compiles one program per distinct input shape. Each new shape shows as
a step far slower than the rest (the compilation runs on the host, so the
host timestamps see it even on an accelerator). One or two such steps are a
new shape appearing once (the partial last batch); a storm is such steps
recurring after warm-up.

On an accelerator a slow host stamp is not enough: the host runs steps
ahead of the device and then waits in whichever call finds the queue full,
a long stamp that costs the device nothing. There a spike counts only when
its window — bounded by reads that drain the device — lost at least half of
the spike's excess against the run's steady windows (`confirmed`): a
compilation stops the device too, a wait for it does not. The spikes say *that* it happens; sampling the
training data at the start says *why* — the dimensions that vary, with the
sizes seen — and gives the fix for those dimensions.
"""

from __future__ import annotations

import statistics

from tfturbo.findings import RECOMPILE_STORM, Finding

from ..diagnostics.advice import WorkloadShape, partial_batch_fix
from ..diagnostics.dataset_audit import (ShapeSample, describe_varying, sample_shapes, static_shape_fix,
                                         varying_dims)
from .base import Detector, RunContext, Window

SPIKE_FACTOR = 5.0  # a compile-kind step takes more than 5x the median step
# ...and at least this much more: compiling a program takes hundreds of ms (measured 430-1200 ms for a
# tiny model on the CPU), while a busy host's hiccups and the profiler's start/stop took 10-90 ms.
MIN_SPIKE_MS = 100.0
MIN_SPIKES = 3  # "keeps recompiling": one or two spikes are shapes seen once (e.g. the partial last batch)
# ...and at least this share of the steady steps (docs/FINDINGS.md): 3 spikes in 1,134 steps (0.26%) are a few
# shapes seen once in a long run, not a storm, however long each compilation took
MIN_SPIKE_SHARE = 0.02
MIN_TIME_LOST = 0.03  # the spikes' time beyond the steady step, as a share of the steady training time
LIVE_FACTOR = 2.0  # while training, on part of the run, raise only at twice that share (the end decides the rest)
MIN_STEADY_STEPS = 20
CONFIRMED_SHARE = 0.5  # on an accelerator: the share of a spike's excess its drained window must show
SAMPLE_BATCHES = 128
SAMPLE_BUDGET_S = 3.0  # the run waits for this sampling: keep it short


def spikes(step_ms: list[float], warmup_end: int) -> tuple[float, list[int]]:
    """(median steady step ms, indices of compile-kind spikes after warm-up)."""
    steady = step_ms[warmup_end:]
    if not steady:
        return float("nan"), []
    median = statistics.median(steady)
    threshold = max(SPIKE_FACTOR * median, median + MIN_SPIKE_MS)
    return median, [warmup_end + i for i, ms in enumerate(steady) if ms > threshold]


def time_lost(steady_ms: list[float], median: float, spike_ms: list[float]) -> tuple[float, float]:
    """(ms the spikes took beyond the steady step, that as a share of the steady training time without them)."""
    lost = sum(ms - median for ms in spike_ms)
    base = sum(steady_ms) - lost
    return lost, (lost / base if base > 0 else 0.0)


def confirmed(spike_steps: list[int], spike_excess_ms: list[float], windows: list[tuple[int, int, float]],
              first_steady: int) -> list[bool]:
    """For each spike (its step and its host time beyond the median step): whether the drained window holding it
    took at least CONFIRMED_SHARE of that excess longer than its steps at the device's pace — the median pace of
    the steady windows that hold no spike (when a spike recurs in every window: the fastest window's)."""
    steady = [w for w in windows if w[0] >= first_steady and w[2] > 0]
    if not steady:
        return [False] * len(spike_steps)
    pace_of = lambda w: 1000.0 * w[2] / (w[1] - w[0] + 1)  # noqa: E731
    calm = [pace_of(w) for w in steady if not any(w[0] <= s <= w[1] for s in spike_steps)]
    pace = statistics.median(calm) if calm else min(pace_of(w) for w in steady)
    out = []
    for step, excess in zip(spike_steps, spike_excess_ms):
        w = next((w for w in steady if w[0] <= step <= w[1]), None)
        lost = 1000.0 * w[2] - pace * (w[1] - w[0] + 1) if w is not None else 0.0
        out.append(lost >= CONFIRMED_SHARE * excess)
    return out


def _near_profile(step: int, window: tuple[int, int] | None) -> bool:
    """Starting and stopping the profiler costs a step on either side of its window: not a compile."""
    return window is not None and window[0] - 1 <= step <= window[1] + 1


class RecompileStorm(Detector):
    def __init__(self) -> None:
        self.sample: ShapeSample | None = None
        self.steps: list[int] = []
        self.step_ms: list[float] = []
        self.windows: list[tuple[int, int, float]] = []  # the drained windows (first step, last step, seconds)
        self.raised = False

    def on_start(self, ctx: RunContext) -> list[Finding]:
        spec = getattr(ctx.train_ds, "element_spec", None)
        if ctx.settings.jit_compile and spec is not None:
            import tensorflow as tf

            if not all(s.shape.is_fully_defined() for s in tf.nest.flatten(spec)):
                self.sample = sample_shapes(ctx.train_ds, SAMPLE_BATCHES, SAMPLE_BUDGET_S)
        return []

    def on_window(self, ctx: RunContext, window: Window) -> list[Finding]:
        self.steps.extend(window.steps)
        self.step_ms.extend(window.step_ms)
        if window.span is not None:
            self.windows.append(window.span)
        return self._judge(ctx, MIN_TIME_LOST * LIVE_FACTOR)

    def on_end(self, ctx: RunContext) -> list[Finding]:
        return self._judge(ctx, MIN_TIME_LOST)

    def _judge(self, ctx: RunContext, min_share: float) -> list[Finding]:
        warmup_end = ctx.warmup_end
        if self.raised or not ctx.settings.jit_compile or warmup_end is None:
            return []
        if len(self.step_ms) - warmup_end < MIN_STEADY_STEPS:
            return []
        median, found = spikes(self.step_ms, warmup_end)
        found = [i for i in found if not _near_profile(self.steps[i], ctx.extra.get("profile_steps"))]
        if ctx.extra.get("accelerator") and found:  # a host stamp alone can be a wait for the device
            ok = confirmed([self.steps[i] for i in found], [self.step_ms[i] - median for i in found], self.windows,
                           self.steps[warmup_end])
            found = [i for i, keep in zip(found, ok) if keep]
        steady = len(self.step_ms) - warmup_end
        lost_ms, share = time_lost(self.step_ms[warmup_end:], median, [self.step_ms[i] for i in found])
        if len(found) < max(MIN_SPIKES, MIN_SPIKE_SHARE * steady) or share < min_share:
            return []
        self.raised = True
        return [self._finding(ctx, median, found, steady, lost_ms, share)]

    def _finding(self, ctx: RunContext, median: float, found: list[int], steady: int, lost_ms: float,
                 share: float) -> Finding:
        spike_ms = [self.step_ms[i] for i in found]
        at = [self.steps[i] for i in found if i < len(self.steps)]
        shown = ", ".join(map(str, at[:8])) + (", …" if len(at) > 8 else "")
        message = (f"XLA keeps recompiling after warm-up: {len(found)} of {steady} steady steps took more than "
                   f"{SPIKE_FACTOR:g}× the median step ({median:.1f} ms; spikes {min(spike_ms):.0f}–"
                   f"{max(spike_ms):.0f} ms, at steps {shown}), costing {lost_ms / 1000:.2f} s — {share:.0%} of the "
                   f"steady training time. ")
        varying = varying_dims(self.sample) if self.sample else []
        batch_size = ctx.settings.batch_size or (max(self.sample.batch_sizes()) if self.sample else None) or 32
        if varying and self.sample is not None:
            distinct = len({tuple(map(tuple, row)) for row in self.sample.shapes})
            message += ("Cause: " + "; ".join(describe_varying(varying)) +
                        f" — {distinct} distinct input shapes in the first {len(self.sample.shapes)} batches, "
                        "one compilation each.")
            fix = static_shape_fix(self.sample, batch_size, ctx.extra.get("workload_shape"))
            where = ", ".join(dict.fromkeys("batch dimension" if v.dim == 0 else f"{v.component} dimension {v.dim}"
                                            for v in sorted(varying, key=lambda v: v.dim == 0)))
        else:
            message += ("The input shapes looked fixed in the first batches: look for Python values or "
                        "tensors whose shape changes passed into the step.")
            shape = ctx.extra.get("workload_shape") or WorkloadShape()
            fix = ("# give every step the same shapes: whole batches (and padded sequence lengths)\n"
                   + partial_batch_fix(batch_size, shape))  # arrays sliced, or drop_remainder on its own batch()
            where = "train step inputs"
        return Finding(RECOMPILE_STORM, message, fix=fix, where=where, data={
            "spikes": len(found), "steady_steps": steady, "median_ms": median, "spike_steps": at,
            "time_lost_s": lost_ms / 1000.0, "time_lost_share": share,
            "spike_ms": spike_ms,
            "varying": [{"component": v.component, "dim": v.dim, "seen": v.seen} for v in varying]})
