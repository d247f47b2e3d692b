"""The step-time record of one run and the summary numbers made from it (docs/MEASUREMENT.md,
"Steady state: what one run measures").

Two measurements are kept:

* per-step time, the host time between the starts of consecutive training
  steps: cheap, fine-grained, for plots, detectors and the warm-up decision;
* windows: the steps between two reads of the training state (each read
  waits for the device), with the wall time between those reads. A window's
  samples/second cannot be fooled by asynchronous dispatch, and stalls or
  recompilations inside it count. Verdicts between configurations use the
  windows' throughput.

On an accelerator the host stamps time the dispatch, not the step: a GPU
runs asynchronously and under XLA the host runs steps ahead, then waits in
whichever call finds the queue full. There (`StepRecord.drained`) every
per-step time the figures, the warm-up decision and the detectors use is its
window's: the window's drained seconds over its steps
(`StepRecord.timing_ms`); the host stamps stay in the events, for the plots.

Three kinds of step are not steady state and never enter the figures:
warm-up (tracing, XLA compilation; `tfturbo.steady` decides it), the steps
inside the profiler window (the profiler slows them), and the last step of
each epoch in the per-step samples (validation runs after it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from tfturbo import stats, steady
from tfturbo.summary import window_throughput

MIN_STEADY_FOR_STOP = 10  # the adaptive stop needs at least this many steady samples
MAX_STAT_SAMPLES = 5000  # the bootstrap costs samples × 2000: longer runs are thinned evenly
WARMUP_SEARCH = 2000  # warm-up is looked for in the first samples only; none steady by then: step 2 on


@dataclass
class StepRecord:
    """Samples in step order: step number (1-based), its duration in ms, its start (perf_counter s).

    With steps_per_sample N > 1 (compile(steps_per_execution=N)) a sample is one call of N steps: `step` is its
    first step, `ms` the call's time divided by N (comparable with single steps), `start` the call's start.
    """

    step: list[int] = field(default_factory=list)
    ms: list[float] = field(default_factory=list)
    start: list[float] = field(default_factory=list)
    first_steady: int | None = None  # step number where warm-up ended, once detected
    excluded: tuple[int, int] | None = None  # steps [lo, hi] (inclusive) touched by the profiler
    # (first step, last step, seconds between the device-draining reads that closed the window before and this one)
    windows: list[tuple[int, int, float]] = field(default_factory=list)
    steps_per_sample: int = 1
    # on an accelerator: per-step times from the drained windows, not the host stamps (`timing_ms`)
    drained: bool = False

    def add(self, step: int, ms: float, start: float) -> None:
        self.step.append(step)
        self.ms.append(ms)
        self.start.append(start)

    def __len__(self) -> int:
        return len(self.step)

    @property
    def clock(self) -> str:
        """What the per-step times are, as the summary labels them."""
        return "drained windows" if self.drained else "host"

    def timing_ms(self) -> list[float]:
        """The per-step times every figure and decision uses, one per sample: the host stamps, or on an
        accelerator (`drained`) each sample's window's seconds over its steps (a sample no window holds yet, or
        one outside every measured window, keeps its stamp). A window's end waits for the device, so its time
        is the device's, however far the host ran ahead inside it."""
        if not self.drained or not self.windows:
            return self.ms
        out, windows, w = [], sorted(self.windows), 0
        for step, ms in zip(self.step, self.ms):
            while w < len(windows) and windows[w][1] < step:
                w += 1
            first, last, seconds = windows[w] if w < len(windows) else (math.inf, math.inf, 0.0)
            out.append(1000.0 * seconds / (last - first + 1) if first <= step <= last and seconds > 0 else ms)
        return out

    def find_steady_start(self) -> int | None:
        """The step where warm-up ended, judged on the samples so far; None if not seen yet."""
        head = self.timing_ms()[:WARMUP_SEARCH]
        index = steady.live_start(head)
        return self.step[index] if index < len(head) else None

    def settle(self) -> None:
        """Revisit the live warm-up decision on the whole record (see `tfturbo.steady.final_start`)."""
        if self.first_steady is None or self.first_steady not in self.step:
            return
        live = self.step.index(self.first_steady)
        index = steady.final_start(self.timing_ms(), live)
        if index < len(self.step):
            self.first_steady = self.step[index]

    def settled_steady_s(self) -> float:
        """The steady windows' seconds as the run's end will count them: the live warm-up decision revisited on
        the record so far (`settle`'s rule), without changing it. A paired arm's last block ends on this: on
        the live count, an arm aiming at 3 s kept 2.5 s once the end moved its steady start a window on."""
        if self.first_steady is None or self.first_steady not in self.step:
            return 0.0
        index = steady.final_start(self.timing_ms(), self.step.index(self.first_steady))
        return sum(w[2] for w in self.steady_windows(self.step[index] if index < len(self.step) else math.inf))

    def is_steady(self, step: int) -> bool:
        """The sample starting at `step` (its whole call) is after warm-up and outside the profiler."""
        if self.first_steady is None or step < self.first_steady:
            return False
        last = step + self.steps_per_sample - 1
        return not (self.excluded and self.excluded[0] <= last and step <= self.excluded[1])

    def steady_ms(self) -> list[float]:
        return [ms for step, ms in zip(self.step, self.timing_ms()) if self.is_steady(step)]

    def steady_windows(self, first: float | None = None) -> list[tuple[int, int, float]]:
        """Windows whose every step is steady (from `first`, default the warm-up's end; outside the profiler)."""
        first = self.first_steady if first is None else first
        if first is None:
            return []
        lo, hi = self.excluded or (math.inf, -math.inf)
        return [w for w in self.windows if w[0] >= first and (w[1] < lo or w[0] > hi) and w[2] > 0]

    def start_of(self, step: int) -> float | None:
        """perf_counter time at which `step` began, if it has a sample."""
        for s, t in zip(reversed(self.step), reversed(self.start)):
            if s == step:
                return t
            if s < step:
                return None
        return None


def thin(samples: list[float]) -> list[float]:
    """At most MAX_STAT_SAMPLES samples, evenly spaced through the run (wider, never narrower, intervals)."""
    if len(samples) <= MAX_STAT_SAMPLES:
        return samples
    return samples[::math.ceil(len(samples) / MAX_STAT_SAMPLES)]


def step_time(samples: list[float], clock: str = "host") -> dict:
    """{"median", "ci95", "n", "n_steady", "clock"} of steady samples; n counts those used after thinning, `clock`
    says what timed them (`StepRecord.clock`)."""
    used = thin(samples)
    if not used:
        return {"median": None, "ci95": None, "n": 0, "n_steady": 0, "clock": clock}
    median, ci = stats.median_ci(used)
    return {"median": median, "ci95": [ci[0], ci[1]], "n": len(used), "n_steady": len(samples), "clock": clock}


def precise_enough(samples: list[float], until_ci: float) -> bool:
    """True when the 95% interval of the median is within ±until_ci of it (adaptive stop)."""
    if len(samples) < MIN_STEADY_FOR_STOP:
        return False
    median, ci = stats.median_ci(thin(samples))
    return stats.relative_half_width(median, ci) <= until_ci


def finite_or_none(value) -> float | None:
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def throughput(windows: list[tuple[int, int, float]], batch_size: int) -> dict:
    """{"samples_per_s", "steps", "seconds", "windows"} of the steady windows (`tfturbo.summary.window_throughput`,
    the one statistic every reader of a run uses)."""
    return window_throughput(windows, batch_size)
