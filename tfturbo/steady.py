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
  moves on until a window's median is within `FINAL_TOLERANCE` of the final
  steady level (slow drift after compilation: caches filling, clocks
  settling), then, while the first half of what is left is measurably slower
  than the second half (`TREND_TOLERANCE`), a quarter more is dropped.
  Dropping steps only makes an interval wider, never a number wrong.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

WINDOW = 5
LIVE_TOLERANCE = 1.5
FINAL_TOLERANCE = 1.15  # a window within 15% of the final steady level
TREND_TOLERANCE = 1.10  # first half of the steady samples >10% slower than the second: still settling
MIN_TREND_SAMPLES = 40  # the trend check needs enough samples for two meaningful halves
MAX_TREND_CUTS = 2


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
    level = _level(x[start:])
    # drift: move on until a window sits within FINAL_TOLERANCE of the final level
    i = start
    while i + WINDOW <= n and float(np.median(x[i:i + WINDOW])) > FINAL_TOLERANCE * level:
        i += 1
    if i + WINDOW > n:  # never settled that close: keep the live answer rather than nothing
        i = start
    # trend: the first half of what is left still slower than the second
    for _ in range(MAX_TREND_CUTS):
        rest = [v for v in x[i:] if math.isfinite(v)]
        if len(rest) < MIN_TREND_SAMPLES:
            break
        half = len(rest) // 2
        if float(np.median(rest[:half])) <= TREND_TOLERANCE * float(np.median(rest[half:])):
            break
        i += (n - i) // 4
    return i


def _level(x: Sequence[float]) -> float:
    """The final steady level: the median of the later half of the candidate steady samples."""
    finite = [v for v in x if math.isfinite(v)]
    if not finite:
        return math.inf
    return float(np.median(finite[len(finite) // 2:]))
