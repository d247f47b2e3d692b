"""XLA_NOT_ACTIVE: jit_compile was asked for, but the model trains without XLA.

Keras does not fail when it cannot use XLA: `model.jit_compile = True` on a
model it thinks unsupported warns "Model doesn't support `jit_compile=True`.
Proceeding with `jit_compile=False`." and trains as before — the user then
measures "XLA gave nothing". The causes Keras checks (its
`model_supports_jit`) are named so the user knows what to change.

On a GPU, Keras' LSTM and GRU layers with `use_cudnn="auto"` (the default)
set `supports_jit=False` as soon as a GPU is listed and their arguments fit
cuDNN (keras/src/layers/rnn/lstm.py and gru.py, `backend.cudnn_ok`): cuDNN's
kernels cannot be XLA-compiled. The fix there is `use_cudnn=False`, whose
implementation XLA compiles (whether that beats cuDNN without XLA is what
the XLA rung then measures).
"""

from __future__ import annotations

from typing import Any

from tfturbo.findings import CUDNN, DETERMINISM, NO_JIT_LAYER, XLA_NOT_ACTIVE, Finding

from .base import Detector, RunContext, Window

FALLBACK_TEXT = "Proceeding with `jit_compile=False`"


CUDNN_CAUSE = "uses cuDNN"


def _cudnn(layer: Any) -> bool:
    """An LSTM/GRU that Keras gave to cuDNN (`use_cudnn` "auto" or True, with a GPU): the reason it refuses XLA."""
    return getattr(layer, "use_cudnn", None) in ("auto", True) and not getattr(layer, "supports_jit", True)


def _causes(model: Any) -> list[tuple[str, str]]:
    """Why Keras refuses XLA for `model`, each as (what blocks it, `findings.XLA_BLOCKERS`; in words): layers with
    supports_jit=False (an LSTM/GRU on cuDNN named as such), op determinism."""
    causes = [(CUDNN, f"layer {getattr(layer, 'path', layer.name)!r} ({type(layer).__name__}) {CUDNN_CAUSE} "
                      f"(use_cudnn={layer.use_cudnn!r} with a GPU listed), whose kernels XLA cannot compile, so Keras "
                      "set supports_jit=False") if _cudnn(layer) else
              (NO_JIT_LAYER, f"layer {getattr(layer, 'path', layer.name)!r} ({type(layer).__name__}) has "
                             "supports_jit=False")
              for layer in model._flatten_layers() if not getattr(layer, "supports_jit", True)]
    try:
        from tensorflow.python.framework.config import is_op_determinism_enabled

        if is_op_determinism_enabled():
            causes.append((DETERMINISM, "tf.config.experimental.enable_op_determinism() is on (Keras then disables "
                                        "XLA)"))
    except ImportError:  # pragma: no cover - private TF path moved
        pass
    return causes


def xla_fallback_finding(model: Any, evidence: str) -> Finding:
    found = _causes(model)
    causes, blockers = [said for _, said in found], sorted({kind for kind, _ in found})
    why = "; ".join(causes) if causes else "Keras decided the model or platform does not support XLA"
    fix = ["# remove what blocks XLA, then compile with jit_compile=True:"]
    if CUDNN in blockers:
        fix.append("# the LSTM/GRU layers run on cuDNN, which XLA cannot compile: give them Keras' own "
                   "implementation\nkeras.layers.LSTM(units, use_cudnn=False)  # likewise GRU(..., use_cudnn=False)")
    if NO_JIT_LAYER in blockers:
        fix.append("# move the layers marked supports_jit=False (e.g. text preprocessing, py_function) "
                   "into the tf.data pipeline: ds.map(preprocess)")
    if DETERMINISM in blockers:
        fix.append("# drop tf.config.experimental.enable_op_determinism() for speed runs")
    fix.append("model.compile(optimizer=..., loss=..., jit_compile=True)\nassert model.jit_compile")
    return Finding(XLA_NOT_ACTIVE, f"jit_compile=True was requested but the model runs without XLA ({evidence}): "
                   f"{why}", fix="\n".join(fix), where="model.compile(jit_compile=True)",
                   data={"causes": causes, "blockers": blockers, "evidence": evidence})


def jit_support_findings(model: Any) -> list[Finding]:
    """XLA_NOT_ACTIVE if Keras falls back from jit_compile=True for `model` (re-compiles it with XLA on)."""
    config = model.get_compile_config()
    model.compile_from_config({**config, "jit_compile": True})
    return [] if model.jit_compile else [xla_fallback_finding(model, "model.jit_compile is False after compiling")]


class XlaNotActive(Detector):
    """Checks the compiled model at the start, then the backend log for Keras' fallback warning."""

    def __init__(self) -> None:
        self.raised = False

    def _raise(self, ctx: RunContext, evidence: str) -> list[Finding]:
        self.raised = True
        return [xla_fallback_finding(ctx.model, evidence)]

    def on_start(self, ctx: RunContext) -> list[Finding]:
        if ctx.settings.jit_compile and getattr(ctx.model, "jit_compile", None) is False:
            return self._raise(ctx, "model.jit_compile is False after compiling")
        return []

    def on_window(self, ctx: RunContext, window: Window) -> list[Finding]:
        if self.raised or not ctx.settings.jit_compile or not callable(ctx.backend_log):
            return []
        if FALLBACK_TEXT in (ctx.backend_log() or ""):
            return self._raise(ctx, "Keras warned: " + FALLBACK_TEXT)
        return []
