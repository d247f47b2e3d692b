"""The step-time record of one run and the summary numbers made from it (docs/ARCHITECTURE.md, "Measurement rules").

Per-step time is the host time between the starts of consecutive training
steps. Three kinds of step are not steady state and never enter the median:
warm-up (tracing, XLA compilation; found by `stats.detect_warmup`), the
steps inside the profiler window (the profiler slows them), and the last step
of each epoch (validation runs after it, so it has no sample at all).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from tfturbo import stats

MIN_STEADY_FOR_STOP = 10  # the adaptive stop needs at least this many steady samples
MAX_STAT_SAMPLES = 5000  # the bootstrap costs samples × 2000: longer runs are thinned evenly
WARMUP_SEARCH = 2000  # warm-up is looked for in the first samples only; none steady by then: step 2 on


@dataclass
class StepRecord:
    """Samples in step order: step number (1-based), its duration in ms, its start (perf_counter s)."""

    step: list[int] = field(default_factory=list)
    ms: list[float] = field(default_factory=list)
    start: list[float] = field(default_factory=list)
    first_steady: int | None = None  # step number where warm-up ended, once detected
    excluded: tuple[int, int] | None = None  # steps [lo, hi] (inclusive) touched by the profiler

    def add(self, step: int, ms: float, start: float) -> None:
        self.step.append(step)
        self.ms.append(ms)
        self.start.append(start)

    def __len__(self) -> int:
        return len(self.step)

    def find_steady_start(self) -> int | None:
        """The step where warm-up ended, judged on the samples so far; None if not seen yet."""
        head = self.ms[:WARMUP_SEARCH]
        index = stats.detect_warmup(head)
        return self.step[index] if index < len(head) else None

    def is_steady(self, step: int) -> bool:
        if self.first_steady is None or step < self.first_steady:
            return False
        return not (self.excluded and self.excluded[0] <= step <= self.excluded[1])

    def steady_ms(self) -> list[float]:
        return [ms for step, ms in zip(self.step, self.ms) if self.is_steady(step)]

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


def step_time(samples: list[float]) -> dict:
    """{"median", "ci95", "n", "n_steady"} of steady samples; n counts those used after thinning."""
    used = thin(samples)
    if not used:
        return {"median": None, "ci95": None, "n": 0, "n_steady": 0}
    median, ci = stats.median_ci(used)
    return {"median": median, "ci95": [ci[0], ci[1]], "n": len(used), "n_steady": len(samples)}


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
