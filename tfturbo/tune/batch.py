"""The larger-batch rung: spend the memory the earlier rungs freed, measured, not guessed.

Mixed precision and XLA usually lower peak memory; the ratio baseline_peak /
best_peak says how much larger a batch fits in the memory the baseline
already used. The new batch is the old one times that ratio, rounded down to
a multiple of 8 (what 16-bit hardware wants), at least 8 more than before when
any memory was freed, and capped (2× by default) because the learning rate
is scaled with it by the linear scaling rule (Goyal et al., 2017:
"when the minibatch size is multiplied by k, multiply the learning rate by
k"), which holds less well the further the batch grows.
"""

from __future__ import annotations

from dataclasses import dataclass

# Peak memory readings move a little from run to run: less than this much freed is "none freed".
MIN_FREED_RATIO = 1.05
DEFAULT_MAX_SCALE = 2.0


@dataclass
class BatchPlan:
    """Either a new batch size with its learning-rate scale, or why the rung is skipped."""

    batch_size: int | None
    lr_scale: float
    freed_ratio: float | None
    reason: str

    @property
    def skipped(self) -> bool:
        return self.batch_size is None


def _round_down8(x: float) -> int:
    return int(x) // 8 * 8


def plan_larger_batch(batch: int | None, baseline_peak: float | None, best_peak: float | None,
                      memory_kind: str | None = None, max_scale: float = DEFAULT_MAX_SCALE) -> BatchPlan:
    """The next batch size from measured peak memory (bytes) of the baseline and the best rung so far."""
    kind = f" {memory_kind}" if memory_kind else ""
    if not batch:
        return BatchPlan(None, 1.0, None, "skipped: the batch size of the runs is not known")
    if not baseline_peak or not best_peak or baseline_peak <= 0 or best_peak <= 0:
        return BatchPlan(None, 1.0, None, f"skipped: peak{kind} memory was not measured, so the freed memory "
                                          "is unknown (the ladder does not guess)")
    freed = baseline_peak / best_peak
    measured = f"peak{kind} memory {best_peak / baseline_peak:.2f}× the baseline's"
    if freed < MIN_FREED_RATIO:
        note = "; host memory on a CPU, which 16-bit compute and XLA barely change" if memory_kind == "host" else ""
        return BatchPlan(None, 1.0, freed, f"skipped: no memory was freed ({measured}{note}); "
                                           f"try a larger --batch-size yourself if the device has room")
    target = batch * min(freed, max_scale)
    new = max(_round_down8(target), _round_down8(batch + 8 + 7))  # at least +8, on a multiple of 8
    cap = max(8, _round_down8(batch * max_scale))
    new = min(new, cap)
    if new <= batch:
        return BatchPlan(None, 1.0, freed, f"skipped: {measured}, but batch {batch} cannot grow by a multiple "
                                           f"of 8 within the {max_scale:g}× cap")
    scale = new / batch
    capped = f", capped at {max_scale:g}×" if freed > max_scale else ""
    reason = (f"batch {batch} → {new}: {measured} frees {freed:.2f}× the memory{capped}, rounded down to a "
              f"multiple of 8; learning rate scaled {scale:.2f}× by the linear scaling rule")
    return BatchPlan(new, scale, freed, reason)
