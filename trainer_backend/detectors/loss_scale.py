"""LOSS_SCALE_SKIPS and LOSS_SCALE_COLLAPSE, from the dynamic loss scale of mixed_float16.

Keras' LossScaleOptimizer skips a step and halves the scale when a gradient
is not finite, and doubles it after 2000 good steps. A few skips are normal
(most happen in the first steps, while the scale comes down from 32768 to a
level the gradients fit); a scale that keeps falling means the gradients
are non-finite step after step, and the model stops learning.

When the runner cannot count skipped steps directly, each halving of the
scale between two windows counts as one skipped step (a lower bound: a
doubling in between would hide a halving).
"""

from __future__ import annotations

import math

from tfturbo.findings import LOSS_SCALE_COLLAPSE, LOSS_SCALE_SKIPS, Finding

from .base import Detector, RunContext, Window

INITIAL_SCALE = 2.0 ** 15
COLLAPSED_SCALE = 1.0  # at or below 1 the "scaling" no longer lifts small gradients at all
RECENT_STEPS = 50  # the span over which "most steps skipped" is judged
MOST_SKIPPED = 0.5

FIX = """# find the op that overflows: the head first (a 16-bit softmax/loss), then normalisation and attention logits
outputs = keras.layers.Activation("softmax", dtype="float32")(logits)
# lower the learning rate or clip gradients:
optimizer = keras.optimizers.Adam(learning_rate=1e-4, global_clipnorm=1.0)
# or train in mixed_bfloat16 (float32's range, no loss scaling): tfturbo run ... --policy mixed_bfloat16"""


class LossScaleMonitor(Detector):
    def __init__(self) -> None:
        self.last_scale: float | None = None
        self.min_scale: float | None = None
        self.skipped = 0
        self.steps = 0
        self.recent: list[tuple[int, int]] = []  # (steps, skipped) per window
        self.collapsed = False

    def on_start(self, ctx: RunContext) -> list[Finding]:
        optimizer = getattr(ctx.model, "optimizer", None)
        initial = getattr(optimizer, "initial_scale", None)
        self.last_scale = float(initial) if initial else None
        return []

    def _skipped_in(self, window: Window) -> int:
        if window.skipped_steps is not None:
            return int(window.skipped_steps)
        previous = self.last_scale or INITIAL_SCALE
        assert window.loss_scale is not None, "on_window reads only windows with a loss scale"
        if window.loss_scale <= 0:
            return len(window.steps)
        if window.loss_scale >= previous:
            return 0
        return min(len(window.steps), round(math.log2(previous / window.loss_scale)))

    def on_window(self, ctx: RunContext, window: Window) -> list[Finding]:
        if window.loss_scale is None:
            return []
        skipped = self._skipped_in(window)
        self.skipped += skipped
        self.steps += len(window.steps)
        self.last_scale = float(window.loss_scale)
        self.min_scale = self.last_scale if self.min_scale is None else min(self.min_scale, self.last_scale)
        self.recent.append((len(window.steps), skipped))
        while sum(n for n, _ in self.recent[1:]) >= RECENT_STEPS:
            self.recent.pop(0)
        if self.collapsed:
            return []
        recent_steps = sum(n for n, _ in self.recent)
        recent_skipped = sum(s for _, s in self.recent)
        most_skipped = recent_steps >= RECENT_STEPS // 2 and recent_skipped > MOST_SKIPPED * recent_steps
        if self.last_scale <= COLLAPSED_SCALE or most_skipped:
            self.collapsed = True
            step = window.steps[-1] if window.steps else None
            return [Finding(
                LOSS_SCALE_COLLAPSE,
                f"the dynamic loss scale collapsed to {self.last_scale:g} by step {step} "
                f"({recent_skipped} of the last {recent_steps} steps skipped for non-finite gradients): "
                "the model is not learning",
                fix=FIX, where=f"optimizer loss scale (step {step})",
                data={"loss_scale": self.last_scale, "skipped_steps": self.skipped, "step": step})]
        return []

    def on_end(self, ctx: RunContext) -> list[Finding]:
        if self.collapsed or not self.skipped:
            return []
        share = self.skipped / self.steps if self.steps else 0.0
        return [Finding(
            LOSS_SCALE_SKIPS,
            f"{self.skipped} of {self.steps} steps ({share:.1%}) were skipped by dynamic loss scaling "
            f"(final scale {self.last_scale:g}); normal in small numbers, mostly in the first steps",
            fix="# nothing to do while skips stay rare; if they grow, see LOSS_SCALE_COLLAPSE",
            where="optimizer loss scale",
            data={"skipped_steps": self.skipped, "steps": self.steps, "final_scale": self.last_scale,
                  "min_scale": self.min_scale})]
