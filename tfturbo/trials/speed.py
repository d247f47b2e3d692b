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
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..numbers import finite
from ..stats import replicate_ratio_ci
from .verdict import NO_CHANGE, SpeedVerdict, speed_verdict_of


def batch_size(summary: dict[str, Any]) -> int:
    return int((summary.get("settings") or {}).get("batch_size") or 1)


def samples_per_s(summary: dict[str, Any] | None) -> float | None:
    """Steady throughput in samples/s: from the device-drained windows, else from the median step (older runs)."""
    if not summary:
        return None
    tp = summary.get("throughput")
    if isinstance(tp, dict) and finite(tp.get("samples_per_s")) and tp["samples_per_s"] > 0:
        return float(tp["samples_per_s"])
    sps = summary.get("steps_per_s")
    return float(sps) * batch_size(summary) if finite(sps) and sps > 0 else None


@dataclass
class SpeedRule:
    """When the replicates are enough.

    After `min_pairs`, stop as soon as the verdict is clear: the interim
    interval (99%, stricter than the final one, because looking repeatedly
    gives chance more tries) excludes 1, or the whole 95% interval lies within
    ±`equivalence` (any difference is smaller than that); else go on until
    `max_pairs`. The final verdict is the 95% interval's.
    """

    min_pairs: int = 3
    max_pairs: int = 6
    equivalence: float = 0.03
    confidence: float = 0.95
    interim_confidence: float = 0.99

    def __post_init__(self) -> None:
        self.min_pairs = max(2, int(self.min_pairs))
        self.max_pairs = max(self.min_pairs, int(self.max_pairs))

    def clear(self, ratios: list[float]) -> bool:
        """True when the pairs so far decide the speed verdict."""
        if len(ratios) < self.min_pairs:
            return False
        if len(ratios) >= self.max_pairs:
            return True
        _, (lo, hi) = replicate_ratio_ci(ratios, self.interim_confidence)
        if lo > 1.0 or hi < 1.0:
            return True
        _, (lo, hi) = replicate_ratio_ci(ratios, self.confidence)
        return 1.0 - self.equivalence <= lo and hi <= 1.0 + self.equivalence

    def verdict(self, a_rates: list[float | None], b_rates: list[float | None]) -> SpeedVerdict:
        """The speed verdict from the throughput of each pair's A and B run (None: not measured)."""
        ratios = [b / a for a, b in zip(a_rates, b_rates) if a and b and math.isfinite(a) and math.isfinite(b)]
        if not ratios:
            return SpeedVerdict(math.nan, (math.nan, math.nan), NO_CHANGE, 0)
        ratio, ci = replicate_ratio_ci(ratios, self.confidence)
        good_a = [a for a in a_rates if a]
        good_b = [b for b in b_rates if b]
        return SpeedVerdict(ratio, ci, speed_verdict_of(ci), len(ratios), ratios, _geomean(good_a), _geomean(good_b))

    def to_dict(self) -> dict[str, Any]:
        return {"min_pairs": self.min_pairs, "max_pairs": self.max_pairs, "equivalence": self.equivalence,
                "confidence": self.confidence, "interim_confidence": self.interim_confidence}


def _geomean(values: list[float]) -> float | None:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None
