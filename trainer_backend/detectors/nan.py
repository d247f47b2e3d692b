"""NAN_LOSS: the training loss became NaN or infinite.

The tutorial's first suspect is an op that should be float32 running in
16-bit — above all the output layer (softmax or loss in float16 overflows) —
and the second a learning rate already at the edge. The finding names the
head's compute dtype so the user checks the likelier cause first. The run
stops on this finding (status `nan_stopped`).
"""

from __future__ import annotations

import math

from tfturbo import findings
from tfturbo.findings import Finding

from .base import Detector, RunContext, Window


def head_dtype(model) -> tuple[str, str]:
    """(layer name, compute dtype) of the layer producing the model's (first) output."""
    try:
        layer = model.layers[-1]
        outputs = getattr(model, "outputs", None)
        if outputs:
            history = getattr(outputs[0], "_keras_history", None)
            if history is not None:
                layer = history[0]
        return layer.name, str(layer.dtype_policy.compute_dtype)
    except (AttributeError, IndexError, TypeError, ValueError):
        return "", "unknown"


class NanLossDetector(Detector):
    def __init__(self) -> None:
        self.raised = False

    def on_window(self, ctx: RunContext, window: Window) -> list[Finding]:
        if self.raised or window.loss is None or math.isfinite(window.loss):
            return []
        self.raised = True
        first, last = (window.steps[0], window.steps[-1]) if window.steps else (None, None)
        span = f"steps {first}–{last}" if first is not None else "the last window"
        layer, dtype = head_dtype(ctx.model)
        where = f"output layer '{layer}'" if layer else "output layer"
        lr = ctx.extra.get("learning_rate")
        lr_text = f" (learning rate {lr:g})" if isinstance(lr, (int, float)) else ""
        if dtype in ("float16", "bfloat16"):
            message = (f"The training loss became {_kind(window.loss)} in {span}. First suspect: the {where} "
                       f"computes in {dtype} — a softmax or loss in 16-bit overflows; then the learning rate{lr_text}.")
            fix = (f"# compute the head in float32 (or rerun with --fix-head)\n"
                   f"outputs = keras.layers.Activation('softmax', dtype='float32')(x)")
        else:
            message = (f"The training loss became {_kind(window.loss)} in {span}. The {where} already computes in "
                       f"{dtype}, so suspect the learning rate{lr_text} or the data (NaN/Inf inputs or labels).")
            fix = "lower the learning rate (e.g. rerun with --lr-scale 0.1) and check the inputs for NaN/Inf"
        return [Finding(findings.NAN_LOSS, message, fix, where=layer,
                        data={"step": last, "head_dtype": dtype})]


def _kind(value: float) -> str:
    return "NaN" if math.isnan(value) else "infinite"
