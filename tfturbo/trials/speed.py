"""Speed: one run's throughput, and the verdict across replicated, interleaved runs.

A run's throughput is its steady samples divided by the wall time of its
steady windows. A window ends with a read of the training state that waits for
the device, so on an accelerator queued work cannot make a run look faster
than it is, and every stall and recompilation inside the steady state counts
(a median of host-stamped steps would hide both).

A verdict never rests on one run per configuration: identical runs on a busy
machine differ by more than any single run's own interval (±10–15% on a shared
2-core CPU). Runs are measured in pairs, A next to B in alternating order
(AB, BA, AB, …) so that slow minutes of the machine and drifts hit both, and
the interval of B/A comes from the spread of the pair ratios
(`stats.replicate_ratio_ci`): it covers run-to-run noise by construction.
A pair whose arms shared a process (`run-pair`) takes its ratio from the
windows either side of each hand-over (`pair_ratio`): neighbours in time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..numbers import counted
from ..stats import final_look_chance, replicate_ratio_ci, sequential_levels
from ..run_summary import RunSummary
from .verdict import NO_CHANGE, NOT_ENOUGH, SpeedVerdict, speed_verdict_of

STEADY_S = 3.0  # steady-state seconds a replicate's speed measurement aims at (docs/MEASUREMENT.md)
# Whether a replicate's median rate counts in a verdict at all: a median over fewer windows is one window's. Not
# the rule for showing a run's own throughput interval (`summary.MIN_INTERVAL_WINDOWS`, 6: a bootstrap over a
# handful of windows means nothing); a verdict's interval is across the replicate pairs, never that one.
MIN_RATE_WINDOWS = 3


@dataclass
class SpeedRule:
    """When the replicates are enough.

    After `min_pairs`, stop as soon as the verdict is clear: the interim
    interval (99%, stricter than the final one, because looking repeatedly
    gives chance more tries) excludes 1, or the whole 95% interval lies within
    ±`equivalence` (any difference is smaller than that), or as soon as the
    pairs left could hardly tell B from A: the predictive chance that the
    final look excludes 1 is below `futility` (`stats.final_look_chance`, a
    non-binding futility stop: it only ends trials with "no measurable
    change", so it never adds a false difference); else go on until
    `max_pairs`. Without it a near-null change (mixed_bfloat16 on a CPU
    without XLA, 1.00–1.04×) ran every trial to its maximum: replayed on five
    calibration runs, the futility stop ends identical settings' trials at
    3.7 pairs instead of 6.0 with the same verdicts, and the known
    differences at the same pairs (benchmarks/RESULTS.md, Trial efficiency 2026-12-02). The verdict's
    interval is the final look's, at the level `stats.sequential_levels`
    derives (96.5% for 3–6 pairs): with the interim looks, identical settings are then called different at most 5% of the
    time (`confidence`), as a single 95% look would; the final look alone at
    95% made it 6.3%.

    Each replicate aims at `steady_s` seconds of steady state (the trial sizes
    its runs for it); a replicate that measured less than a tenth of that, or
    fewer than MIN_RATE_WINDOWS windows, has no throughput, and a verdict with
    fewer than `min_pairs` measured pairs is "not enough measurement".
    """

    min_pairs: int = 3
    max_pairs: int = 6
    equivalence: float = 0.03
    confidence: float = 0.95
    interim_confidence: float = 0.99
    steady_s: float = STEADY_S
    futility: float = 0.10

    def __post_init__(self) -> None:
        self.min_pairs = max(2, int(self.min_pairs))
        self.max_pairs = max(self.min_pairs, int(self.max_pairs))
        self.steady_s = max(0.0, float(self.steady_s))

    @property
    def levels(self) -> tuple[float, float]:
        """(interim, final) confidence of the looks, so the whole rule errs at most 1 - `confidence`."""
        return sequential_levels(self.min_pairs, self.max_pairs, self.interim_confidence, self.confidence)

    @property
    def min_steady_s(self) -> float:
        """The least steady time a replicate must have measured for its throughput to count: a tenth of what
        it aims at. The figure is a median over windows, so what this floor guards against is a run whose
        every window is a few milliseconds, all of them inside one descheduled moment."""
        return self.steady_s / 10

    def needs_text(self) -> str:
        """What a replicate must measure for its throughput to count, in words (the "not enough measurement"
        note): a steady state at all when the rule aims at none (`steady_s` 0), else its floor."""
        if not self.steady_s:
            return "a steady state (at least one steady window)"
        return f"at least {self.min_steady_s:.2g} s of steady state in {MIN_RATE_WINDOWS} windows"

    def shortfall(self, summary: RunSummary | None) -> str | None:
        """Why this completed run's throughput does not count (too little steady measurement), or None."""
        tp = summary.throughput if summary else None
        if not isinstance(tp, dict):  # a run from before the windows: its median step rate is all there is
            return None if summary and summary.samples_per_s else "it reached no steady state"
        windows, seconds = int(tp.get("windows") or 0), float(tp.get("seconds") or 0.0)
        if not windows:
            return "it reached no steady state"
        if self.steady_s and (windows < MIN_RATE_WINDOWS or seconds < self.min_steady_s):  # 0: any steady window
            return f"it measured {seconds:.1f} s of steady state in {counted(windows, 'window')}"
        return None

    def rate(self, summary: RunSummary | None) -> float | None:
        """The replicate's throughput (samples/s, `RunSummary.samples_per_s`) if it measured enough, else None."""
        return None if summary is None or self.shortfall(summary) else summary.samples_per_s

    @staticmethod
    def pair_ratio(a_rate: float | None, b_rate: float | None, b_summary: RunSummary | None) -> float | None:
        """B/A of one replicate pair, None unless both runs measured enough (`rate`): the median over its
        hand-overs for arms that shared a process (`RunSummary.hand_over_ratio`), else the ratio of the runs'
        throughputs."""
        if not (a_rate and b_rate and math.isfinite(a_rate) and math.isfinite(b_rate)):
            return None
        return (b_summary.hand_over_ratio if b_summary else None) or b_rate / a_rate

    @staticmethod
    def pair_error(b_summary: RunSummary | None) -> float | None:
        """The standard error in log of a paired process's ratio (`RunSummary.hand_over_error`), None for others."""
        return b_summary.hand_over_error if b_summary else None

    def clear(self, ratios: list[float], errors: list[float | None] | None = None) -> bool:
        """True when the pairs so far decide the speed verdict (`errors`: each ratio's own, `pair_error`)."""
        if len(ratios) < self.min_pairs:
            return False
        if len(ratios) >= self.max_pairs:
            return True
        _, (lo, hi) = replicate_ratio_ci(ratios, self.levels[0], errors)
        if lo > 1.0 or hi < 1.0:
            return True
        _, (lo, hi) = replicate_ratio_ci(ratios, self.confidence, errors)
        return (1.0 - self.equivalence <= lo and hi <= 1.0 + self.equivalence) or self.futile(ratios, errors)

    def _futile_chance(self, ratios: list[float], errors: list[float | None] | None = None) -> float | None:
        """The chance the pairs left tell B from A (`stats.final_look_chance`) when it is below `futility`, from
        `min_pairs` on and before `max_pairs`; else None."""
        if not self.min_pairs <= len(ratios) < self.max_pairs:
            return None
        chance = final_look_chance(ratios, self.max_pairs, self.levels[1], errors)
        return chance if chance < self.futility else None

    def futile(self, ratios: list[float], errors: list[float | None] | None = None) -> bool:
        """True when the pairs left could hardly tell B from A: the trial stops with no difference."""
        return self._futile_chance(ratios, errors) is not None

    def futility_note(self, ratios: list[float], errors: list[float | None] | None = None) -> str:
        """Why a trial with no difference stopped before `max_pairs` ("" when it did not stop for futility)."""
        chance = self._futile_chance(ratios, errors)
        if chance is None:
            return ""
        return (f"stopped at {len(ratios)} of at most {self.max_pairs} pairs: the rest had a {chance:.0%} chance "
                f"of telling them apart")

    def verdict(self, a_rates: list[float | None], b_rates: list[float | None], needed: str = "",
                pair_ratios: list[float | None] | None = None,
                pair_errors: list[float | None] | None = None) -> SpeedVerdict:
        """The speed verdict from the throughput of each pair's A and B run (None: not measured) and each pair's
        ratio (`pair_ratio`; not given: B's throughput over A's) and its own error (`pair_error`).

        Fewer than `min_pairs` measured pairs give no ratio: "not enough
        measurement", with `needed` (what would be enough) as its note.
        """
        if pair_ratios is None:
            pair_ratios = [self.pair_ratio(a, b, None) for a, b in zip(a_rates, b_rates)]
        errors = [e for r, e in zip(pair_ratios, pair_errors or [None] * len(pair_ratios)) if r]
        ratios = [r for r in pair_ratios if r]
        good_a = [a for a in a_rates if a]
        good_b = [b for b in b_rates if b]
        if len(ratios) < self.min_pairs:
            was = "was" if len(ratios) == 1 else "were"
            note = needed or (f"{len(ratios)} of the {self.min_pairs} replicate pairs it needs {was} measured: "
                              f"run {counted(self.min_pairs - len(ratios), 'more pair')}")
            return SpeedVerdict(math.nan, (math.nan, math.nan), NOT_ENOUGH, len(ratios), ratios,
                                _geomean(good_a), _geomean(good_b), note=note)
        ratio, ci = replicate_ratio_ci(ratios, self.levels[1], errors)
        verdict = speed_verdict_of(ci)
        # the pairs run but not counted are said, so "over 3 replicate pairs" never hides three more that ran
        uncounted = min(len(a_rates), len(b_rates)) - len(ratios)
        notes = [self.futility_note(ratios, errors) if verdict == NO_CHANGE else "",
                 f"{counted(uncounted, 'more pair')} measured too little steady state to count" if uncounted else ""]
        note = "; ".join(n for n in notes if n)
        return SpeedVerdict(ratio, ci, verdict, len(ratios), ratios, _geomean(good_a), _geomean(good_b), note=note)


def _geomean(values: list[float]) -> float | None:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None
