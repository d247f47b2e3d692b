"""The larger-batch search: how far the batch can grow, measured size by size.

The search starts from the best configuration kept so far (batch b0) and
doubles the batch while each larger size is kept by its trial (faster per
sample, accuracy within tolerance at equal samples seen); when a size is
rejected or does not fit, one binary step tries the middle between the last
kept size and that one, and the search ends — unless that size was measured
no faster per sample than the last kept one (NOT_FASTER): the throughput has
levelled off, a size between the two would not be measurably faster either,
and its trial would cost as much as any other. A size is proposed only when it
fits with a safety margin: its peak memory, predicted linearly from the
measured peak at b0 (an upper bound: part of the peak does not grow with the
batch), must stay under SAFETY of the memory available — the device's on an
accelerator, the host's available memory on a CPU. A size that runs out of
memory anyway ends the search there; it is an outcome, not an error. Near a
device's limit TensorFlow often slows down instead of failing (its allocator
frees and retries, rematerialises, falls back to slower kernels with less
workspace), so a size measured "not faster" whose peak came within
NEAR_LIMIT of the device's memory is said to be possibly memory pressure.

The learning rate is scaled with the batch by the linear scaling rule
(Goyal et al., 2017: "when the minibatch size is multiplied by k, multiply the
learning rate by k"), which holds less well the further the batch grows, so
the batch is capped at max_scale × b0 (4× by default). Sizes stay multiples
of 8 (what 16-bit hardware wants) when b0 is one.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_MAX_SCALE = 4.0
SAFETY = 0.8  # use at most this share of the available memory
NOT_FASTER = "not faster"  # a tried size's outcome: its trial found no speed-up over the size before
NEAR_LIMIT = 0.9  # a peak at this share of the device's memory or more: a slowdown there can be memory pressure


@dataclass
class BatchStep:
    """The next size to measure with its learning-rate scale (relative to b0), or why the search stops."""

    batch_size: int | None
    lr_scale: float
    reason: str

    @property
    def done(self) -> bool:
        return self.batch_size is None


def _align(x: float, b0: int) -> int:
    return int(x) // 8 * 8 if b0 % 8 == 0 and x >= 8 else int(x)


def largest_fitting(b0: int, peak: float | None, available: float | None) -> int | None:
    """The largest size whose linearly predicted peak stays under SAFETY × available (None: memory unknown)."""
    if not (peak and available):
        return None
    return _align(SAFETY * available / peak * b0, b0)


def next_size(b0: int, tried: list[tuple[int, str]], peak: float | None, available: float | None,
              memory_kind: str | None = None, max_scale: float = DEFAULT_MAX_SCALE,
              peaks: dict[int, float] | None = None) -> BatchStep:
    """The next batch of the search after `tried` [(size, "kept" | "rejected" | NOT_FASTER | "failed")], in
    order; `peaks`: the measured peak memory of tried sizes (where a "not faster" one came near the limit)."""
    kept = [b for b, outcome in tried if outcome == "kept"]
    lo = max(kept, default=b0)
    cap = _align(b0 * max_scale, b0)
    limit = largest_fitting(b0, peak, available)
    kind = f" {memory_kind}" if memory_kind else ""
    budget = (f"; the largest that fits in {SAFETY:.0%} of the available{kind} memory is about {limit}"
              if limit else "")
    first_loss = next((i for i, (_, outcome) in enumerate(tried) if outcome != "kept"), None)
    if first_loss is not None:  # the doubling stopped: one binary step between the last kept size and the loser
        hi, outcome = tried[first_loss]
        if outcome == NOT_FASTER:
            return BatchStep(None, 1.0, f"search ended: batch {hi} was not measurably faster than {lo}, so a size "
                                        f"between them would not be either; the largest batch kept is {lo}"
                             + pressure_note(hi, (peaks or {}).get(hi), available, memory_kind))
        mid = _align((lo + hi) / 2, b0)
        if first_loss == len(tried) - 1 and lo < mid < hi:
            return _step(mid, b0, f"binary step between batch {lo} (kept) and {hi} ({outcome})")
        return BatchStep(None, 1.0, f"search ended: the largest batch kept is {lo}")
    target = min(lo * 2, cap, limit if limit is not None else lo * 2)
    if target <= lo:
        why = (f"batch {lo} is already at the {max_scale:g}× cap" if lo * 2 > cap else
               f"a larger batch would not fit with a safety margin{budget}")
        return BatchStep(None, 1.0, ("skipped: " if not tried else "search ended: ") + why)
    return _step(target, b0, f"{'doubling' if target == lo * 2 else 'the largest size allowed'}: batch {lo} → "
                             f"{target}{budget}")


def pressure_note(size: int, peak: float | None, available: float | None, memory_kind: str | None) -> str:
    """'; batch 512 peaked at 94% of the device's memory: …' when a size's peak came within NEAR_LIMIT of an
    accelerator's memory ('' otherwise: a host's RSS is not an allocator that slows down near its limit)."""
    if memory_kind != "device" or not (peak and available) or peak < NEAR_LIMIT * available:
        return ""
    return (f"; batch {size} peaked at {peak / available:.0%} of the device's memory: near the limit TensorFlow "
            "often slows down instead of failing, so its 'not faster' can be memory pressure")


def _step(size: int, b0: int, why: str) -> BatchStep:
    scale = size / b0
    return BatchStep(size, scale, f"{why}; learning rate scaled {scale:.2f}× by the linear scaling rule "
                                  "(batch ×k, learning rate ×k)")
