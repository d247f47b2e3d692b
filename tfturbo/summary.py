"""Reading the measured numbers out of run summaries (summary.json / the `run` document).

The ladder, the compare table, the wizard and the report all ask the same
questions of two runs — how much faster, is accuracy kept — so the answers
are computed here once.

Throughput is compared per *sample*: a run with a larger batch takes longer
per step but may process more data per second, and that is the speed that
matters to the user.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from .numbers import finite, num
from .stats import median_ci, weighted_median, weighted_median_ci

# Validation metrics in order of preference for the accuracy gate; higher_is_better per metric.
PRIMARY_METRICS = (("val_accuracy", True), ("val_sparse_categorical_accuracy", True),
                   ("val_categorical_accuracy", True), ("val_binary_accuracy", True),
                   ("val_loss", False), ("loss", False))


def steady_samples(summary: dict[str, Any]) -> list[float]:
    samples = summary.get("step_ms_samples") or []
    return [float(s) for s in samples if finite(s)]


def batch_size(summary: dict[str, Any]) -> int:
    return int((summary.get("settings") or {}).get("batch_size") or 1)


def samples_per_s(summary: dict[str, Any] | None) -> float | None:
    """A run's throughput in samples/s, the one figure every front end shows and every verdict compares.

    The steady-window statistic the backend wrote (`throughput.samples_per_s`,
    see `window_throughput`); for older runs without windows, the median step
    rate × batch.
    """
    if not summary:
        return None
    tp = summary.get("throughput")
    if isinstance(tp, dict) and finite(tp.get("samples_per_s")) and tp["samples_per_s"] > 0:
        return float(tp["samples_per_s"])
    sps = summary.get("steps_per_s")
    return float(sps) * batch_size(summary) if finite(sps) and sps > 0 else None


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


def hand_over_ratio(summary: dict[str, Any] | None) -> float | None:
    """A run's speed over the other arm of its `run-pair` process, from the windows either side of each hand-over.

    Each hand-over (`hand_overs`: [this run's samples/s, the other's] of the
    last steady window before the baton changed hands and the first after)
    compares two windows a moment apart, which the machine's speed at that
    moment moves alike; the median over the hand-overs (in log) keeps one odd
    hand-over from deciding. The arms' own median rates can sit in different
    stretches of a machine whose speed changes mid-process: on this stack that
    made one process's ratio 0.95 where its hand-overs and the trial's other
    pairs said 1.23–1.30, and it halved the spread of a trial's pair ratios
    (benchmarks/RESULTS.md, Trial efficiency). None: not a paired run, or fewer than
    MIN_HAND_OVERS hand-overs with a steady window on both sides.
    """
    logs = _hand_over_logs(summary)
    return math.exp(_middle(logs)) if len(logs) >= MIN_HAND_OVERS else None


def hand_over_error(summary: dict[str, Any] | None) -> float | None:
    """The standard error, in log, of `hand_over_ratio`: the hand-overs' SD / √count, the pair's own measurement
    error (the floor of a trial's spread, `stats.replicate_ratio_ci`); None without `hand_over_ratio`.

    The plain mean's error, not the median's larger asymptotic one (√(π/2)
    times it): the hand-overs are heavy-tailed, their SD is inflated by the
    odd one the median ignores, and over the 54 paired processes of two
    default transformer tunes this error's root mean square (3.5%) matched
    the spread of the pairs' ratios within a trial (3.6%), where the median's
    formula said 4.4% (benchmarks/RESULTS.md, Trial efficiency).
    """
    logs = _hand_over_logs(summary)
    if len(logs) < MIN_HAND_OVERS:
        return None
    mean = sum(logs) / len(logs)
    return math.sqrt(sum((v - mean) ** 2 for v in logs) / (len(logs) - 1) / len(logs))


def _hand_over_logs(summary: dict[str, Any] | None) -> list[float]:
    rows = [r for r in (summary or {}).get("hand_overs") or [] if isinstance(r, (list, tuple)) and len(r) == 2]
    return [math.log(own / other) for own, other in rows if finite(own) and finite(other) and own > 0 and other > 0]


def throughput_ci(summary: dict[str, Any] | None) -> tuple[float, float] | None:
    """A run's own throughput interval in samples/s by the one rule (MIN_INTERVAL_WINDOWS, `interval_around`),
    from its summary's `throughput`: what `window_throughput` writes, and for a summary written before the rule
    (an interval from 3 windows) the same rule on read. None: no interval to show."""
    tp = (summary or {}).get("throughput")
    if not isinstance(tp, dict):
        return None
    windows = tp.get("windows")
    if not isinstance(windows, int) or windows < MIN_INTERVAL_WINDOWS:
        return None
    return interval_around(num(tp.get("samples_per_s")), tp.get("ci95"))


def steps_per_s(summary: dict[str, Any] | None) -> float | None:
    """The same throughput in steps/s (`samples_per_s` / batch): never a second figure."""
    rate = samples_per_s(summary)
    return rate / batch_size(summary or {}) if rate else None


def step_time(summary: dict[str, Any]) -> tuple[float, tuple[float, float]]:
    """Median step time in ms with its 95% interval (from the summary, else recomputed)."""
    st = summary.get("step_ms") or {}
    if isinstance(st.get("median"), (int, float)) and isinstance(st.get("ci95"), (list, tuple)):
        return float(st["median"]), (float(st["ci95"][0]), float(st["ci95"][1]))
    return median_ci(steady_samples(summary))


def preferred_metric(names: Iterable[str], prefer: str | None = None) -> tuple[str, bool] | None:
    """(name, higher_is_better) of the metric to judge accuracy by among `names`, or None.

    The one order every front end uses: the accuracy gate (`primary_metric`), the live plot of the
    validation metric and the report, so the metric a user watches is the metric that is gated.
    """
    available = set(names)
    candidates = PRIMARY_METRICS if prefer is None else \
        [(prefer, not prefer.endswith("loss"))] + list(PRIMARY_METRICS)
    return next(((name, higher) for name, higher in candidates if name in available), None)


def primary_metric(summary: dict[str, Any], prefer: str | None = None) -> tuple[str, float, bool] | None:
    """(name, value, higher_is_better) of the metric the accuracy gate uses, or None."""
    metrics = summary.get("metrics") or {}
    found = preferred_metric([name for name, value in metrics.items() if finite(value)], prefer)
    if found is None:
        return None
    return found[0], float(metrics[found[0]]), found[1]


def val_delta(baseline: dict[str, Any], candidate: dict[str, Any]) -> tuple[str, float] | None:
    """(metric, candidate - baseline) on the baseline's primary metric; None if either lacks it.

    The sign is raw (for accuracy, negative is worse; for loss, positive is worse).
    """
    base = primary_metric(baseline)
    if base is None:
        return None
    name = base[0]
    value = (candidate.get("metrics") or {}).get(name)
    if not finite(value):
        return None
    return name, float(value) - base[1]


def memory_ratio(baseline: dict[str, Any], candidate: dict[str, Any]) -> float | None:
    a, b = baseline.get("peak_memory_bytes"), candidate.get("peak_memory_bytes")
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and a > 0:
        return float(b) / float(a)
    return None


def _middle(values: list[float]) -> float:
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
        return _middle(self.before)

    @property
    def after_bytes(self) -> float:
        return _middle(self.after)

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
