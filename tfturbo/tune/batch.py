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

The learning rate follows the batch by the rule of the optimizer that uses it
(`rule_for`): the linear rule for SGD, plain or with momentum (Goyal et al.,
2017, "Accurate, Large Minibatch SGD: Training ImageNet in 1 Hour": "when the
minibatch size is multiplied by k, multiply the learning rate by k"), the
square-root rule for adaptive optimizers — Adam, AdamW, RMSprop, Adagrad and
the rest of the family — whose update is normalised by the gradient's own
scale (Malladi, Lyu, Panigrahi & Arora, 2022, "On the SDEs and Scaling Rules
for Adaptive Gradient Algorithms": learning rate × √k; Hoffer, Hubara & Soudry,
2017, "Train longer, generalize better", argued √k for SGD's noise too). An
optimizer the rule does not know gets the square root, the milder one. Either
holds less well the further the batch grows, so the batch is capped at
max_scale × b0 (4× by default), and a size that loses accuracy under a scaled
rate is measured once more under the next milder rule (`milder`: linear → square
root → unscaled) before it is rejected: whether the batch or the rate cost the
accuracy is then known (a text transformer's batch 128 with Adam at ×4 lost
1.33 pp, and nothing told which). Sizes stay multiples of 8 (what 16-bit
hardware wants) when b0 is one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .skip import SEARCH_ENDED, SKIPPED, Skip

DEFAULT_MAX_SCALE = 4.0
SAFETY = 0.8  # use at most this share of the available memory
NOT_FASTER = "not faster"  # a tried size's outcome: its trial found no speed-up over the size before
NEAR_LIMIT = 0.9  # a peak at this share of the device's memory or more: a slowdown there can be memory pressure


@dataclass(frozen=True)
class LrRule:
    """How the learning rate follows a batch grown k times: × k**power (1 linear, 0.5 square root, 0 none)."""

    name: str
    power: float
    source: str  # where the rule comes from, in words

    def factor(self, k: float) -> float:
        return k ** self.power

    def words(self, k: float) -> str:
        """"learning rate ×1.41 by the square-root rule (batch ×k, learning rate ×√k: Malladi et al., 2022)"."""
        if not self.power:
            return "learning rate unscaled"
        how = "×k" if self.power == 1 else "×√k"
        return f"learning rate ×{self.factor(k):.2f} by the {self.name} rule (batch ×k, learning rate {how}: {self.source})"


LINEAR = LrRule("linear", 1.0, "Goyal et al., 2017, for SGD")
SQUARE_ROOT = LrRule("square-root", 0.5, "Malladi et al., 2022, for adaptive optimizers such as Adam")
UNSCALED = LrRule("unscaled", 0.0, "the rate as the workload wrote it")
RULES = (LINEAR, SQUARE_ROOT, UNSCALED)  # from the strongest to the mildest
LINEAR_OPTIMIZERS = ("SGD",)  # Keras' SGD, plain, with momentum or Nesterov: the linear rule's own


def rule_for(optimizers: list[str | None]) -> tuple[LrRule, str]:
    """(the rule, why) for the optimizer classes the training step uses: linear when every one is SGD, else the
    square root (an adaptive optimizer, or one the rule does not know: the milder)."""
    known = [c for c in optimizers if c]
    if known and all(c in LINEAR_OPTIMIZERS for c in known):
        return LINEAR, f"{' and '.join(dict.fromkeys(known))}: the linear rule"
    if not known:
        return SQUARE_ROOT, "the optimizer is not known: the square-root rule, the milder"
    return SQUARE_ROOT, f"{' and '.join(dict.fromkeys(known))}: the square-root rule for adaptive optimizers"


def milder(rule: LrRule) -> LrRule | None:
    """The next milder rule (linear → square root → unscaled), None after unscaled."""
    at = RULES.index(rule)
    return RULES[at + 1] if at + 1 < len(RULES) else None


def rule_of(k: float, lr_ratio: float) -> LrRule | None:
    """The rule a size k times the start's ran under, from the learning-rate ratio it ran with (None: another)."""
    return next((r for r in RULES if math.isclose(r.factor(k), lr_ratio, rel_tol=1e-6)), None)


@dataclass
class BatchStep:
    """The next size to measure with its learning-rate scale (relative to b0), or why the search stops: what
    kind of step it is and what it does, kept apart so a page can say them apart ("Proposed (doubling): …")."""

    batch_size: int | None
    lr_scale: float
    how: str  # the step ("doubling", "the largest size allowed"; "" for a binary step, which says it in `what`),
    # or when the search is done how that is said (`skip.SKIPPED`, `skip.SEARCH_ENDED`)
    what: str  # "batch 64 → 128; learning rate ×2.00 by the linear rule …", or why the search is done

    @property
    def done(self) -> bool:
        return self.batch_size is None

    @property
    def reason(self) -> str:
        """In one line: "doubling: batch 64 → 128; …", "search ended: the largest batch kept is 128"."""
        return f"{self.how}: {self.what}" if self.how else self.what

    @property
    def skip(self) -> Skip | None:
        """Why the search is done, as a skipped step records it; None while it goes on."""
        return Skip(self.how, self.what) if self.done else None


def _align(x: float, b0: int) -> int:
    return int(x) // 8 * 8 if b0 % 8 == 0 and x >= 8 else int(x)


def largest_fitting(b0: int, peak: float | None, available: float | None) -> int | None:
    """The largest size whose linearly predicted peak stays under SAFETY × available (None: memory unknown)."""
    if not (peak and available):
        return None
    return _align(SAFETY * available / peak * b0, b0)


def next_size(b0: int, tried: list[tuple[int, str]], peak: float | None, available: float | None,
              memory_kind: str | None = None, max_scale: float = DEFAULT_MAX_SCALE,
              peaks: dict[int, float] | None = None, rule: LrRule = LINEAR) -> BatchStep:
    """The next batch of the search after `tried` [(size, "kept" | "rejected" | NOT_FASTER | "failed")], in
    order, its learning rate by `rule`; `peaks`: the measured peak memory of tried sizes (where a "not faster"
    one came near the limit)."""
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
            return BatchStep(None, 1.0, SEARCH_ENDED, f"batch {hi} was not measurably faster than {lo}, so a size "
                                                      f"between them would not be either; the largest batch kept is {lo}"
                             + pressure_note(hi, (peaks or {}).get(hi), available, memory_kind))
        mid = _align((lo + hi) / 2, b0)
        if first_loss == len(tried) - 1 and lo < mid < hi:
            return _step(mid, b0, "", f"binary step between batch {lo} (kept) and {hi} ({outcome})", rule)
        return BatchStep(None, 1.0, SEARCH_ENDED, f"the largest batch kept is {lo}")
    target = min(lo * 2, cap, limit if limit is not None else lo * 2)
    if target <= lo:
        why = (f"batch {lo} is already at the {max_scale:g}× cap" if lo * 2 > cap else
               f"a larger batch would not fit with a safety margin{budget}")
        return BatchStep(None, 1.0, SKIPPED if not tried else SEARCH_ENDED, why)
    return _step(target, b0, "doubling" if target == lo * 2 else "the largest size allowed",
                 f"batch {lo} → {target}{budget}", rule)


def pressure_note(size: int, peak: float | None, available: float | None, memory_kind: str | None) -> str:
    """'; batch 512 peaked at 94% of the device's memory: …' when a size's peak came within NEAR_LIMIT of an
    accelerator's memory ('' otherwise: a host's RSS is not an allocator that slows down near its limit)."""
    if memory_kind != "device" or not (peak and available) or peak < NEAR_LIMIT * available:
        return ""
    return (f"; batch {size} peaked at {peak / available:.0%} of the device's memory: near the limit TensorFlow "
            "often slows down instead of failing, so its 'not faster' can be memory pressure")


def _step(size: int, b0: int, how: str, what: str, rule: LrRule) -> BatchStep:
    k = size / b0
    return BatchStep(size, rule.factor(k), how, f"{what}; {rule.words(k)}")
