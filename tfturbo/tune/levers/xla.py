"""XLA: compile the training step with jit_compile=True, on the best configuration kept so far.

The audit's partial-last-batch fix (drop_remainder) is applied when it found
one (StudyDecisions.fixes_for): XLA compiles once per input shape. A 16-bit
policy that lost only on speed without XLA is measured once more under it
(bfloat16 on a CPU pays only with XLA's fusion); one rejected for accuracy or
NaN is not retried, since XLA does not change the numerics that failed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ... import findings as F
from ...findings import FindingDoc
from ...trials.verdict import FASTER, WORSE
from ...patch import changes as C
from ...run_summary import RunSummary
from ..skip import NOT_RUN, SKIPPED, Skip
from . import Candidate, Lever, as_written
from .mixed_precision import LEVER as MIXED_PRECISION

if TYPE_CHECKING:
    from ...trials.verdict import TrialVerdict
    from ..policy import StudyDecisions


def speed_only_failure(verdict: TrialVerdict | None) -> bool:
    """The rung completed, was not shown to be less accurate, and lost only on speed."""
    if verdict is None or verdict.kept or verdict.status != "completed":
        return False
    return (verdict.speed.verdict != FASTER and verdict.accuracy.verdict != WORSE
            and set(F.codes_of(verdict.findings)) <= {F.SLOWER_THAN_BASELINE})


# a TPU compiles every step with XLA (TPUStrategy): there is no "without XLA" to measure against
ON_TPU = Skip(SKIPPED, "a TPU always compiles the training step with XLA, so there is no XLA to switch on")


XLA_OFF = "no-xla"  # the slug of the candidate without XLA, measured when the script compiles with it


def _refusal(findings: list[FindingDoc] | None) -> FindingDoc | None:
    return next((f for f in findings or [] if f.get("code") == F.XLA_NOT_ACTIVE), None)


def _causes(refused: FindingDoc | None) -> list[str]:
    return [str(c) for c in ((refused or {}).get("data") or {}).get("causes") or []]


def _blockers(refused: FindingDoc | None) -> list[str]:
    """What blocks XLA, as XLA_NOT_ACTIVE's data names it (`findings.XLA_BLOCKERS`); a finding an older backend
    wrote names none: only this reader looks for them in its causes' words."""
    data = (refused or {}).get("data") or {}
    if isinstance(data.get("blockers"), list):
        return [str(b) for b in data["blockers"]]
    words = {F.CUDNN: "cuDNN", F.NO_JIT_LAYER: "supports_jit", F.DETERMINISM: "determinism"}
    return [kind for kind, word in words.items() if any(word in c for c in _causes(refused))]


def _enable(blockers: list[str]) -> str:
    """What would let XLA compile the step, for what XLA_NOT_ACTIVE found blocks it (detectors/xla.py)."""
    if F.CUDNN in blockers:
        return ("use_cudnn=False on the LSTM/GRU layers (cuDNN's kernels cannot be XLA-compiled; Keras' own "
                "implementation can)")
    if F.NO_JIT_LAYER in blockers:
        return ("move the layers marked supports_jit=False into the tf.data pipeline (ds.map(...); random "
                "augmentation layers belong there) or remove them")
    return "remove what blocks XLA (the XLA_NOT_ACTIVE finding's fix)"


def cannot_activate(decisions: StudyDecisions) -> Skip | None:
    """Why jit_compile=True cannot take effect for this model, when the study already knows it: the audit (it
    compiles the model with jit_compile=True) or the baseline's own run raised XLA_NOT_ACTIVE. Keras then trains
    without XLA, so a trial would measure the same step twice (issue 42: 1 min 37 s for a model whose audit had
    said so). None when nothing says so (the trial's own runs still check, `Xla.not_in_effect`)."""
    summary = decisions.baseline.summary if decisions.baseline is not None else None
    refused = _refusal(decisions.audit) or _refusal(summary.findings if summary else None)
    if refused is None:
        return None
    causes = _causes(refused)
    return Skip(NOT_RUN, f"XLA cannot take effect for this model, Keras trains it without XLA "
                f"({'; '.join(causes) or 'Keras decided the model or platform does not support XLA'}; "
                f"XLA_NOT_ACTIVE, found before training); what would enable it: {_enable(_blockers(refused))}, or "
                "XLA auto-clustering, which compiles the parts of the step XLA supports around what blocks it")


class Xla(Lever):
    name = "xla"
    order = 30
    title = "XLA compilation"
    page = "xla"
    intro = ("Compile the training step with XLA (jit_compile=True) to fuse element-wise operations. The first "
             "steps compile and are excluded from the timings; a dataset whose batch shape varies makes XLA "
             "recompile, so the shapes are audited first. A script that already compiles with XLA is measured "
             "without it: XLA is not faster for every model.")
    settings_changed = ("jit_compile", "drop_remainder")

    def candidates(self, decisions: StudyDecisions) -> list[Candidate]:
        best = decisions.best
        assert best is not None, "the baseline is measured first"
        base = best.settings
        if decisions.accelerator == "TPU":
            return [Candidate(self.rung_kind, self.name, base, str(ON_TPU), best, skipped_reason=ON_TPU)]
        refused = cannot_activate(decisions)
        if refused is not None:  # the lever decides: nothing to measure (what it would have asked for is recorded)
            on = decisions.fixes_for(base.with_(jit_compile=True))
            return [Candidate(self.rung_kind, self.name, on, str(refused), best, skipped_reason=refused)]
        if as_written(decisions).jit_compile and base.jit_compile:  # the script compiles with XLA: slower here?
            off = base.with_(jit_compile=False)
            return [Candidate(self.rung_kind, XLA_OFF, off, "the script compiles with XLA: measured without it, in "
                              f"case XLA is slower for this model ({off.label()})", best)]
        out = [Candidate(self.rung_kind, self.name, decisions.fixes_for(base.with_(jit_compile=True)),
                         f"XLA on the best configuration so far ({base.label()})", best)]
        if best.kind != MIXED_PRECISION.rung_kind:
            for r in decisions.rungs:
                if r.kind == MIXED_PRECISION.rung_kind and speed_only_failure(r.decision) and r.settings.sixteen_bit \
                        and not r.settings.jit_compile:
                    out.append(Candidate(self.rung_kind, f"{r.settings.policy}-{self.name}",
                                         decisions.fixes_for(r.settings.with_(jit_compile=True)),
                                         f"{r.settings.policy} lost only on speed without XLA; XLA's fusion is "
                                         "what makes 16-bit pay on some hardware", best))
        return out

    def slug_for(self, settings) -> str:
        return self.name if settings.jit_compile else XLA_OFF

    def not_in_effect(self, summary: RunSummary) -> str | None:
        """jit_compile=True asked for, and Keras trained without XLA (it falls back with only a warning)."""
        if not (summary.settings and summary.settings.jit_compile) or summary.xla_active is not False:
            return None
        refused = _refusal(summary.findings)
        causes, enable = _causes(refused), _enable(_blockers(refused))
        return (f"jit_compile=True was requested but Keras trained without XLA "
                f"({'; '.join(causes) or 'Keras decided the model or platform does not support XLA'}); what would "
                f"enable it: {enable}, or XLA auto-clustering, which compiles only the parts of the step XLA "
                "supports")

    def changes(self, rec, base, findings, code=None) -> list[C.Change]:
        on = rec.jit_compile
        if on is None:  # left as the workload wrote it: nothing to change
            return []
        return [C.CompileArgument(name="jit_compile", value=on, unsaid=base.jit_compile, differs=on != base.jit_compile,
                                  why="XLA: compile(jit_compile=True) compiles the training step" if on else
                                  "XLA off: compile(jit_compile=False), as measured")]


LEVER = Xla()
