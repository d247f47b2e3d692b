"""The steady-state rule: which measured steps are warm-up and which count.

One rule, used by the backend while it trains (to announce the steady state
and place the profiler window), by the backend at the end of a run (the
figures in summary.json), and by every reader that rebuilds a run from its
events (compare, report, GUI).

Two decisions, made on different evidence:

* `live_start` sees only the steps so far: warm-up ends at the first
  `WINDOW` consecutive steps whose slowest is within `LIVE_TOLERANCE` of
  their median, and whose median is within `LIVE_TOLERANCE` of the later
  half of what was seen. It must answer early (the profiler waits for it).
* `final_start` sees the whole record and revisits that answer: the start
  moves on while its window is slower than the later half of the run ever is
  (slow drift after compilation: caches filling, clocks settling) — slower
  than both `FINAL_TOLERANCE` × the final level and the `NOISE_QUANTILE` of
  the later half's window medians. A tiny model on a shared CPU wanders by
  ±30% over tens of steps everywhere in a run; judged against the final level
  alone, that wandering looked like settling and half of every short run was
  dropped (1 ms steps: steady state from step 130–150 of 300). A drift that
  lasts half the run is no warm-up: the live answer stands.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

WINDOW = 5
LIVE_TOLERANCE = 1.5
FINAL_TOLERANCE = 1.15  # a window within 15% of the final steady level is steady whatever the noise
NOISE_QUANTILE = 0.95  # ... and so is one no slower than 95% of the later half's windows


def _clean(step_ms: Sequence[float]) -> list[float]:
    return [float(v) if v is not None and math.isfinite(v) else math.inf for v in step_ms]


def live_start(step_ms: Sequence[float]) -> int:
    """Index of the first steady step judged on a partial series; len(step_ms) when none is seen yet.

    The first step (tracing, XLA compilation) is always warm-up.
    """
    x = _clean(step_ms)
    n = len(x)
    if n <= 1:
        return n
    tail = [v for v in x[max(1, n // 2):] if math.isfinite(v)]
    ref = float(np.median(tail)) if tail else math.inf
    for i in range(1, n - WINDOW + 1):
        w = x[i:i + WINDOW]
        m = float(np.median(w))
        if max(w) <= LIVE_TOLERANCE * m and m <= LIVE_TOLERANCE * ref:
            return i
    return n


def final_start(step_ms: Sequence[float], live: int | None = None) -> int:
    """Index of the first steady step judged on the whole record, never before `live`.

    `live` is the live decision (None: computed here). Returns len(step_ms)
    when no steady stretch exists.
    """
    x = _clean(step_ms)
    n = len(x)
    start = live_start(x) if live is None else max(1 if n > 1 else 0, live)
    if start >= n:
        return n
    medians = _window_medians(x, start)
    if not medians:
        return start
    level = _level(x[start:])
    later = medians[len(medians) // 2:]
    # the noise band: how slow a window gets in the later half, where warm-up is over by any account
    band = max(FINAL_TOLERANCE * level, float(np.quantile(later, NOISE_QUANTILE)))
    # drift: the start moves on while its window is slower than the later half ever is (caches filling,
    # clocks settling); a slow stretch the later half also shows is the machine's noise, not warm-up
    i = 0
    while i < len(medians) and medians[i] > band:
        i += 1
    if i >= len(medians) // 2:  # "settling" for half the run is no settling: keep the live answer
        i = 0
    return start + i


def _window_medians(x: Sequence[float], start: int) -> list[float]:
    return [float(np.median(x[i:i + WINDOW])) for i in range(start, len(x) - WINDOW + 1)]


def _level(x: Sequence[float]) -> float:
    """The final steady level: the median of the later half of the candidate steady samples."""
    finite = [v for v in x if math.isfinite(v)]
    if not finite:
        return math.inf
    return float(np.median(finite[len(finite) // 2:]))
