"""XLA auto-clustering: when jit_compile=True was refused or not kept, let TensorFlow compile what XLA supports.

Part of the `xla` stage (its rungs are `xla` rungs in study.yaml, named
NN-xla-autoclustering). Measured once, on the best kept configuration, only
when no jit_compile=True rung was kept.
"""

from __future__ import annotations

from typing import Any

from ... import findings as F
from . import Candidate, Hunk, Lever
from .xla import LEVER as XLA


class AutoClustering(Lever):
    name = "xla_autoclustering"
    kind = stage = "xla"
    order = 31
    title = "XLA auto-clustering"
    page = "xla"
    intro = ("TensorFlow's auto-clustering compiles only the parts of the step XLA supports: tried when "
             "jit_compile=True was refused or not faster.")
    settings_changed = ("xla_autoclustering",)

    def candidates(self, policy) -> list[Candidate]:
        xla = [r for r in policy.rungs if r.kind == XLA.rung_kind]
        if not xla or any(r.kept or r.settings.xla_autoclustering for r in xla):
            return []
        first = xla[0].decision
        refused = first is not None and F.XLA_NOT_ACTIVE in F.codes_of(
            list(first.findings) + list((xla[0].summary or {}).get("findings") or []))
        why = "jit_compile=True was refused (XLA_NOT_ACTIVE)" if refused else "jit_compile=True was not kept"
        return [Candidate(self.rung_kind, "xla-autoclustering", policy.best.settings.with_(xla_autoclustering=True),
                          f"{why}: TensorFlow's auto-clustering compiles only the parts of the step XLA supports",
                          policy.best)]

    def slug_for(self, settings) -> str:
        return "xla-autoclustering"

    def findings(self, rung, verdict) -> list[dict[str, Any]]:
        return [F.Finding(F.XLA_AUTOCLUSTERING, f"XLA auto-clustering measured: {'kept' if verdict.kept else 'not kept'}"
                          f" ({verdict.reason})", 'tf.config.optimizer.set_jit("autoclustering")  # before training'
                          if verdict.kept else "", rung.name).to_dict()]

    def hunks(self, rec, base, findings) -> list[Hunk]:
        if not (rec.xla_autoclustering and not base.xla_autoclustering):
            return []
        return [("XLA auto-clustering: XLA compiles the parts of the step it supports (set before training)",
                 [" import tensorflow as tf", '+tf.config.optimizer.set_jit("autoclustering")'])]


LEVER = AutoClustering()
