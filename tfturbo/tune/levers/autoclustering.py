"""XLA auto-clustering: when jit_compile=True was refused or not kept, let TensorFlow compile what XLA supports.

Part of the `xla` stage (its rungs are `xla` rungs in study.yaml, named
NN-xla-autoclustering). Measured once, on the best kept configuration, only
when no jit_compile=True rung was kept, or when none was run because the study
already knew XLA cannot take effect (`xla.cannot_activate`: auto-clustering
compiles the parts of the step around what blocks jit_compile=True).

On a CPU, TensorFlow's auto-clustering clusters nothing unless TF_XLA_FLAGS
holds --tf_xla_cpu_global_jit: the backend sets it for these runs (measured on
builtin:mlp: 0 clusters and per-example losses bit-identical to the
reference's without it; 3 clusters and losses that differ by XLA's rounding
with it), and the recommended code carries it. A run that still compiled no
cluster is "did not take effect" (`not_in_effect`), never a speed verdict.
"""

from __future__ import annotations


from typing import TYPE_CHECKING

from ...findings import FindingDoc
from ... import findings as F
from ...settings import XLA_CPU_AUTOCLUSTERING_FLAG
from ...trials.verdict import NOT_APPLIED
from ...patch import changes as C
from ...run_summary import RunSummary
from . import Candidate, Lever, outcome
from .xla import LEVER as XLA, cannot_activate

if TYPE_CHECKING:
    from ..policy import StudyDecisions


class AutoClustering(Lever):
    name = "xla_autoclustering"
    kind = stage = "xla"
    order = 31
    title = "XLA auto-clustering"
    page = "xla"
    intro = ("TensorFlow's auto-clustering compiles only the parts of the step XLA supports: tried when "
             "jit_compile=True was refused or not faster.")
    settings_changed = ("xla_autoclustering",)

    def candidates(self, decisions: StudyDecisions) -> list[Candidate]:
        if decisions.accelerator == "TPU":
            return []  # the XLA stage records why (`xla.ON_TPU`)
        best = decisions.best
        assert best is not None, "the baseline is measured first"
        xla = [r for r in decisions.rungs if r.kind == XLA.rung_kind]
        if not xla and cannot_activate(decisions) is not None and not best.settings.jit_compile:
            # jit_compile=True was not run (its lever said why): auto-clustering is what may still compile part
            return [Candidate(self.rung_kind, "xla-autoclustering", best.settings.with_(xla_autoclustering=True),
                              "jit_compile=True cannot take effect for this model (XLA_NOT_ACTIVE): TensorFlow's "
                              "auto-clustering compiles only the parts of the step XLA supports", best)]
        if not xla or any(r.kept or r.settings.xla_autoclustering for r in xla) or not xla[0].settings.jit_compile:
            return []  # (XLA measured off: the script compiles with it, and auto-clustering would be less of it)
        first = xla[0].decision
        refused = first is not None and F.XLA_NOT_ACTIVE in F.codes_of(
            list(first.findings) + list((xla[0].summary.findings if xla[0].summary else None) or []))
        why = "jit_compile=True was refused (XLA_NOT_ACTIVE)" if refused else "jit_compile=True was not kept"
        return [Candidate(self.rung_kind, "xla-autoclustering", best.settings.with_(xla_autoclustering=True),
                          f"{why}: TensorFlow's auto-clustering compiles only the parts of the step XLA supports",
                          best)]

    def slug_for(self, settings) -> str:
        return "xla-autoclustering"

    def not_in_effect(self, summary: RunSummary) -> str | None:
        """Auto-clustering compiled no cluster (trainer_backend/xla_clusters.py counts them): the run trained
        exactly as its reference. None when it compiled some, or the run could not tell (an older run)."""
        settings = summary.settings
        asked = settings is not None and settings.xla_autoclustering and not settings.jit_compile
        if not asked or summary.xla_active is not False:
            return None
        return ("TensorFlow's auto-clustering put no operation of the training step into an XLA cluster, so this "
                "run trained exactly as its reference; what would enable it: operations XLA supports on this "
                f"device (custom or Python ops, strings and tf.py_function stay outside clusters), and on a CPU "
                f'TF_XLA_FLAGS="{XLA_CPU_AUTOCLUSTERING_FLAG}" (tfturbo sets it unless TF_XLA_FLAGS already '
                "names it), or jit_compile=True")

    def findings(self, rung, verdict) -> list[FindingDoc]:
        measured = "not measured" if verdict.speed.verdict == NOT_APPLIED else "measured"  # no clusters
        return [F.Finding(F.XLA_AUTOCLUSTERING, f"XLA auto-clustering {measured}: {outcome(verdict)}",
                          'tf.config.optimizer.set_jit("autoclustering")  # before training'
                          if verdict.kept else "").to_dict()]

    def changes(self, rec, base, findings, code=None) -> list[C.Change]:
        if not (rec.xla_autoclustering and not base.xla_autoclustering):
            return []
        on_cpu = code is None or code.accelerator is None  # a GPU clusters its ops without the CPU flag
        return [C.AutoClustering(cpu_flag=on_cpu, why="XLA auto-clustering: XLA compiles the parts of the step it "
                                 "supports" + (" (the flag before TensorFlow starts, as measured on a CPU)"
                                               if on_cpu else ""))]


LEVER = AutoClustering()
