"""The rules the measured numbers of a run summary are read by (summary.json / the `run` document).

The ladder, the compare table, the wizard and the report all ask the same
questions of two runs — how much faster, is accuracy kept — so the answers
are computed once: the readers are `RunSummary`'s properties
(`tfturbo.run_summary`: `samples_per_s`, `step_rate`, `throughput_ci`,
`primary_metric`, `val_delta`, ...), and the rules they apply live here (the
metric order, when an interval is shown, how windows make a rate, how peak
memory is compared).

Throughput is compared per *sample*: a run with a larger batch takes longer
per step but may process more data per second, and that is the speed that
matters to the user.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from .numbers import finite
from .stats import weighted_median, weighted_median_ci

# Validation metrics in order of preference for the accuracy gate; higher_is_better per metric.
PRIMARY_METRICS = (("val_accuracy", True), ("val_sparse_categorical_accuracy", True),
                   ("val_categorical_accuracy", True), ("val_binary_accuracy", True),
                   ("val_loss", False), ("loss", False))


# The one rule for a run's OWN throughput interval (`throughput.ci95`): written into summary.json, and shown by
# every table, page, CSV and PDF, only from at least this many steady windows, and only when it lies around the
# figure (`interval_around`). The bootstrap of a median over fewer windows resamples a handful of values and its
# ends fall on them (even at 6 a baseline showed 812.4 steps/s [566.5, 812.4], its upper end the point itself,
# which `interval_around` drops); six is also the fewest values whose distribution-free interval for a median, [min, max], covers 95%
# (1 - 2 × 0.5^6 = 96.9%). Not to be confused with `trials.speed.MIN_RATE_WINDOWS` (3): whether a replicate's median
# rate counts in a verdict at all; a verdict's interval is across replicate pairs, never this one.
MIN_INTERVAL_WINDOWS = 6


def interval_around(point: float | None, ci: Sequence[float] | None) -> tuple[float, float] | None:
    """`ci` when it is an interval around `point`, each end on its side and apart from it by more than the
    rounding of the figures (0.1%), else None: a degenerate interval is never written or shown."""
    if ci is None or len(ci) != 2 or point is None or not finite(point) or not all(finite(c) for c in ci):
        return None
    lo, hi = float(ci[0]), float(ci[1])
    if not (lo < point < hi) or any(math.isclose(end, point, rel_tol=1e-3) for end in (lo, hi)):
        return None
    return lo, hi


def window_throughput(windows: Iterable[Sequence[float]], batch_size: int) -> dict[str, Any]:
    """{"samples_per_s", "ci95", "steps", "seconds", "windows"} of a run's steady windows (first step, last
    step, seconds).

    Each window ends in a read that waits for the device, so its rate cannot be
    flattered by asynchronous dispatch. The run's figure is the median of the
    windows' rates, each window weighted by its steps: one window that holds a
    descheduled moment, a partial-batch recompilation or an iterator reset does
    not decide the run (a plain sum of steps over a sum of seconds lets one
    such window move it by a factor 3), and a short window (an epoch's tail)
    counts for the few steps it holds. Time lost to stalls and recompilations
    is reported by the findings (RECOMPILE_STORM's time lost), not hidden in
    this figure's noise. `ci95`: its block-bootstrap interval over the windows,
    None from fewer than MIN_INTERVAL_WINDOWS windows or when it is degenerate
    (`interval_around`). `steps` and `seconds` are the totals measured.
    """
    valid = [w for w in windows if float(w[2]) > 0 and int(w[1]) >= int(w[0])]
    rows = [(int(last) - int(first) + 1, float(seconds)) for first, last, seconds in valid]
    steps = sum(n for n, _ in rows)
    seconds = sum(t for _, t in rows)
    rates, weights = [window_rate(w, batch_size) for w in valid], [n for n, _ in rows]
    if len(rows) >= MIN_INTERVAL_WINDOWS:
        rate, ci = weighted_median_ci(rates, weights)
        ci = interval_around(rate, ci)
    else:  # the median alone: no bootstrap over a handful of windows
        rate, ci = weighted_median(rates, weights), None
    return {"samples_per_s": rate, "ci95": list(ci) if ci else None, "steps": steps, "seconds": seconds,
            "windows": len(rows)}


def window_rate(window: Sequence[float], batch_size: int) -> float:
    """One window's samples/s: its steps (first step, last step, seconds) × the batch over its seconds."""
    first, last, seconds = window
    return (int(last) - int(first) + 1) * batch_size / float(seconds)


# A paired run's ratio to the other arm comes from its hand-overs once there are this many (`hand_over_ratio`): the
# median of fewer is one or two pairs of single windows, noisier than the arms' median rates it would replace.
MIN_HAND_OVERS = 3


def preferred_metric(names: Iterable[str], prefer: str | None = None) -> tuple[str, bool] | None:
    """(name, higher_is_better) of the metric to judge accuracy by among `names`, or None.

    The one order every front end uses: the accuracy gate (`primary_metric`), the live plot of the
    validation metric and the report, so the metric a user watches is the metric that is gated.
    """
    available = set(names)
    candidates = PRIMARY_METRICS if prefer is None else \
        [(prefer, not prefer.endswith("loss"))] + list(PRIMARY_METRICS)
    return next(((name, higher) for name, higher in candidates if name in available), None)


def middle(values: list[float]) -> float:
    """The median of `values` (not empty)."""
    s = sorted(values)
    return (s[(len(s) - 1) // 2] + s[len(s) // 2]) / 2


@dataclass(frozen=True)
class MemoryChange:
    """Peak memory before and after, over every run of each configuration measured in its own process.

    One run's peak is one draw: identical runs differ (the process's RSS by
    allocator and thread timing), so a change is claimed only when the two
    configurations' runs do not overlap and their medians differ by more than
    the larger spread (highest minus lowest) of either configuration's runs.
    With one run of each the spread is not known and no change is claimed
    ("1% lower (1.1 GiB to 1.1 GiB)" was one run against one run).
    """

    before: list[float]
    after: list[float]

    @property
    def before_bytes(self) -> float:
        return middle(self.before)

    @property
    def after_bytes(self) -> float:
        return middle(self.after)

    @property
    def ratio(self) -> float:
        return self.after_bytes / self.before_bytes

    @property
    def spread(self) -> float | None:
        """The larger range of one configuration's runs; None with a single run of each (not known)."""
        if len(self.before) + len(self.after) < 3:
            return None
        return max(max(v) - min(v) for v in (self.before, self.after))

    @property
    def beyond_spread(self) -> bool:
        """True when the change is larger than the runs' own variation (and the ranges do not overlap)."""
        spread = self.spread
        if spread is None:
            return False
        apart = min(self.after) > max(self.before) or max(self.after) < min(self.before)
        return apart and abs(self.after_bytes - self.before_bytes) > spread


def memory_change(before: Iterable[Any], after: Iterable[Any]) -> MemoryChange | None:
    """The peak memory of two configurations' runs (their `peak_memory_bytes`); None when either has none."""
    a = [float(v) for v in before if finite(v) and v > 0]
    b = [float(v) for v in after if finite(v) and v > 0]
    return MemoryChange(a, b) if a and b else None
