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


class NanLossDetector(Detector):
    def __init__(self) -> None:
        self.raised = False

    def on_window(self, ctx: RunContext, window: Window) -> list[Finding]:
        if self.raised or window.loss is None or math.isfinite(window.loss):
            return []
        self.raised = True
        first, last = (window.steps[0], window.steps[-1]) if window.steps else (None, None)
        span = f"steps {first}–{last}" if first is not None else "the last window"
        heads = _heads(ctx.model)
        sixteen = [(name, dtype) for name, dtype in heads if dtype in ("float16", "bfloat16")]
        layer, dtype = (sixteen or heads or [("", "unknown")])[0]
        where = f"output layer '{layer}'" if layer else "output layer"
        lr = ctx.extra.get("learning_rate")
        lr_text = f" (learning rate {lr:g})" if isinstance(lr, (int, float)) else ""
        if sixteen:
            message = (f"The training loss became {_kind(window.loss)} in {span}. First suspect: the {where} "
                       f"computes in {dtype} — a softmax or loss in 16-bit overflows; then the learning rate{lr_text}.")
            fix = ("# compute the head in float32 (or rerun with --fix-head)\n"
                   "outputs = keras.layers.Activation('softmax', dtype='float32')(x)")
        else:
            message = (f"The training loss became {_kind(window.loss)} in {span}. The {where} already computes in "
                       f"{dtype}, so suspect the learning rate{lr_text} or the data (NaN/Inf inputs or labels).")
            fix = "lower the learning rate (e.g. rerun with --lr-scale 0.1) and check the inputs for NaN/Inf"
        return [Finding(findings.NAN_LOSS, message, fix, where=layer,
                        data={"step": last, "head_dtype": dtype})]


def _heads(model) -> list[tuple[str, str]]:
    """(layer path, compute dtype) of every output layer, read the same way the audit reads them."""
    from ..diagnostics.model_audit import compute_dtype, layer_path, output_layers

    try:
        return [(layer_path(layer), compute_dtype(layer)) for layer in output_layers(model)]
    except (AttributeError, TypeError, ValueError):
        return []


def _kind(value: float) -> str:
    return "NaN" if math.isnan(value) else "infinite"
