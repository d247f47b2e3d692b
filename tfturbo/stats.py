"""Statistics for honest step-time numbers (docs/ARCHITECTURE.md, "Measurement rules").

Step times are autocorrelated (a slow stretch lasts several steps), so the
confidence intervals come from a moving-block bootstrap rather than treating
every step as independent. The bootstrap uses a fixed seed: the same samples
always give the same interval, so reports are reproducible.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from .verdicts import Verdict

BOOTSTRAP_SAMPLES = 2000
_RNG_SEED = 20261130


def _block_length(n: int) -> int:
    return max(1, min(20, int(round(n ** (1 / 3)))))


def _block_bootstrap_medians(x: np.ndarray, rng: np.random.Generator, n_boot: int) -> np.ndarray:
    n = len(x)
    b = _block_length(n)
    n_blocks = math.ceil(n / b)
    starts = rng.integers(0, n - b + 1, size=(n_boot, n_blocks))
    idx = (starts[:, :, None] + np.arange(b)[None, None, :]).reshape(n_boot, -1)[:, :n]
    return np.median(x[idx], axis=1)


def median_ci(samples: Sequence[float], confidence: float = 0.95,
              n_boot: int = BOOTSTRAP_SAMPLES) -> tuple[float, tuple[float, float]]:
    """Median and its bootstrap confidence interval. Needs at least 2 samples for an interval."""
    x = np.asarray([s for s in samples if s is not None and math.isfinite(s)], dtype=float)
    if len(x) == 0:
        return float("nan"), (float("nan"), float("nan"))
    med = float(np.median(x))
    if len(x) < 2:
        return med, (med, med)
    rng = np.random.default_rng(_RNG_SEED)
    meds = _block_bootstrap_medians(x, rng, n_boot)
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(meds, [alpha, 1 - alpha])
    return med, (float(lo), float(hi))


def speedup_ci(baseline_ms: Sequence[float], candidate_ms: Sequence[float], confidence: float = 0.95,
               n_boot: int = BOOTSTRAP_SAMPLES) -> tuple[float, tuple[float, float]]:
    """Speed-up of candidate over baseline (>1 is faster) = median(baseline) / median(candidate),
    with a bootstrap interval from resampling both runs independently."""
    a = np.asarray([s for s in baseline_ms if s is not None and math.isfinite(s)], dtype=float)
    b = np.asarray([s for s in candidate_ms if s is not None and math.isfinite(s)], dtype=float)
    if len(a) == 0 or len(b) == 0:
        return float("nan"), (float("nan"), float("nan"))
    ratio = float(np.median(a) / np.median(b))
    if len(a) < 2 or len(b) < 2:
        return ratio, (ratio, ratio)
    rng = np.random.default_rng(_RNG_SEED)
    ratios = _block_bootstrap_medians(a, rng, n_boot) / _block_bootstrap_medians(b, rng, n_boot)
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(ratios, [alpha, 1 - alpha])
    return ratio, (float(lo), float(hi))


def change_verdict(ci: tuple[float, float]) -> str:
    """`Verdict.FASTER`, `SLOWER` or `NO_CHANGE` for a speed-up interval."""
    lo, hi = ci
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return Verdict.NO_CHANGE
    if lo > 1.0:
        return Verdict.FASTER
    if hi < 1.0:
        return Verdict.SLOWER
    return Verdict.NO_CHANGE


def relative_half_width(median: float, ci: tuple[float, float]) -> float:
    """Half the interval's width relative to the median (0.02 = ±2%)."""
    if not median or not math.isfinite(median):
        return float("inf")
    return (ci[1] - ci[0]) / 2 / median


def detect_warmup(step_ms: Sequence[float], window: int = 5, tolerance: float = 1.5) -> int:
    """Index of the first steady-state step.

    The first step (tracing, XLA compilation) is always warm-up. Warm-up ends
    at the first step that starts `window` consecutive steps whose slowest is
    within `tolerance` of their median, and whose median is within `tolerance`
    of the median of the later half of the run. Works on a partial series (live).
    Returns len(step_ms) when no steady stretch is seen yet.
    """
    x = [float(v) for v in step_ms]
    n = len(x)
    if n <= 1:
        return n
    tail = x[max(1, n // 2):]
    ref = float(np.median(tail)) if tail else x[-1]
    for i in range(1, n - window + 1):
        w = x[i:i + window]
        m = float(np.median(w))
        if max(w) <= tolerance * m and m <= tolerance * ref:
            return i
    return n
