"""The tuning policy: which candidate comes next, with which fixes, against which reference.

`tfturbo tune` walks every stage in order; the wizard lets the user start
each stage from its page. Both ask this class for the candidates and hand
every verdict back to it, so the same measurements give the same keep/reject
and the same recommendation whichever front end ran them:

- every candidate is measured against the best configuration kept so far
  (speed), and judged on accuracy against the baseline run, so tolerances do
  not add up along the ladder;
- the audit's automatic fixes (float32 head for a 16-bit policy, dropping the
  partial last batch under XLA) are applied when `auto_fix` is on and the
  audit raised the finding they fix;
- a 16-bit policy rejected only for speed is measured once more under XLA
  (bfloat16 on a CPU pays only with XLA's fusion; a rung rejected for accuracy
  or NaN is not retried: XLA does not change the numerics that failed);
- the larger batch is sized from the memory the kept rungs freed;
- the recommendation is the best kept configuration, confirmed against the
  baseline by one last trial when it was never compared with it directly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import findings as F
from ..settings import RunSettings
from ..tune.batch import DEFAULT_MAX_SCALE, plan_larger_batch
from ..tune.study import RungKind
from .verdict import FASTER, WORSE, TrialVerdict

SIXTEEN_BIT = ("mixed_float16", "mixed_bfloat16")
MIXED_PRECISION, XLA = RungKind.MIXED_PRECISION, RungKind.XLA
LARGER_BATCH, CONFIRMATION = RungKind.LARGER_BATCH, RungKind.CONFIRMATION
STAGES = (MIXED_PRECISION, XLA, LARGER_BATCH, CONFIRMATION)


@dataclass
class Candidate:
    """A configuration to try: its stage, run-name slug, settings, why, and the reference it must beat."""

    kind: str
    slug: str
    settings: RunSettings
    note: str
    reference: Any  # the Rung it is measured against (speed): the best so far when the stage was planned
    skipped_reason: str | None = None  # set when the stage has nothing to measure (e.g. no memory freed)


def sixteen_bit_policies(recommended: str | None, both: bool, chosen: str | None = None) -> tuple[list[str], str]:
    """The 16-bit policies to measure, and why: the user's choice or the recommended one first."""
    if chosen in SIXTEEN_BIT:
        first, why = chosen, f"{chosen} was chosen with --policy (recommended: {recommended})"
    elif recommended in SIXTEEN_BIT:
        first, why = recommended, f"{recommended} is the recommended policy for this hardware"
    else:
        first = "mixed_float16"
        why = (f"the recommended policy is {recommended or 'unknown'}; mixed_float16 is measured to check "
               "that recommendation")
    policies = [first] + ([p for p in SIXTEEN_BIT if p != first] if both else [])
    return policies, why


def _speed_only_failure(verdict: TrialVerdict | None) -> bool:
    """The rung completed, was not shown to be less accurate, and lost only on speed."""
    if verdict is None or verdict.kept or verdict.status != "completed":
        return False
    return (verdict.speed.verdict != FASTER and verdict.accuracy.verdict != WORSE
            and set(F.codes_of(verdict.findings)) <= {F.SLOWER_THAN_BASELINE})


class TuningPolicy:
    """Owns the decisions of a study; the front ends own only how runs are executed and shown."""

    def __init__(self, audit: list[dict[str, Any]], policies: list[str], policy_reason: str, auto_fix: bool = True,
                 max_batch_scale: float = DEFAULT_MAX_SCALE) -> None:
        self.audit = audit
        self.policies = policies
        self.policy_reason = policy_reason
        self.auto_fix = auto_fix
        self.max_batch_scale = max_batch_scale
        self.baseline = None  # Rung
        self.best = None  # Rung: the best kept configuration so far
        self.rungs: list[Any] = []  # every judged rung, in order

    # -- automatic fixes ------------------------------------------------------------------------

    def fixes_for(self, settings: RunSettings) -> RunSettings:
        """The audit's automatic fixes that apply to `settings` (only with auto_fix, only for raised findings)."""
        codes = F.codes_of(self.audit)
        if not self.auto_fix:
            return settings
        return settings.with_(
            fix_head=settings.fix_head or (settings.sixteen_bit and F.HEAD_NOT_FLOAT32 in codes),
            drop_remainder=settings.drop_remainder or (settings.jit_compile and F.PARTIAL_LAST_BATCH in codes))

    # -- candidates -----------------------------------------------------------------------------

    def set_baseline(self, rung) -> None:
        self.baseline = self.best = rung

    def candidates(self, kind: str, policy: str | None = None) -> list[Candidate]:
        """What to measure for a stage, built on the best kept configuration so far."""
        assert self.best is not None, "the baseline must be measured first"
        best, base = self.best, self.best.settings
        if kind == MIXED_PRECISION:
            chosen = [policy] if policy else self.policies
            return [Candidate(kind, p, self.fixes_for(base.with_(policy=p)),
                              self.policy_reason if p == self.policies[0] else "measured on request", best)
                    for p in chosen]
        if kind == XLA:
            out = [Candidate(kind, XLA, self.fixes_for(base.with_(jit_compile=True)),
                             f"XLA on the best configuration so far ({base.label()})", best)]
            if best.kind != MIXED_PRECISION:
                for r in self.rungs:
                    if r.kind == MIXED_PRECISION and _speed_only_failure(r.decision) and not r.settings.jit_compile:
                        out.append(Candidate(kind, f"{r.settings.policy}-{XLA}",
                                             self.fixes_for(r.settings.with_(jit_compile=True)),
                                             f"{r.settings.policy} lost only on speed without XLA; XLA's fusion is "
                                             "what makes 16-bit pay on some hardware", best))
            return out
        if kind == LARGER_BATCH:
            plan = plan_larger_batch(base.batch_size, _peak(self.baseline), _peak(best), _memory_kind(best),
                                     self.max_batch_scale)
            settings = base.with_(batch_size=plan.batch_size or base.batch_size,
                                  lr_scale=base.lr_scale * plan.lr_scale)
            return [Candidate(kind, LARGER_BATCH, settings, plan.reason, best,
                              skipped_reason=plan.reason if plan.skipped else None)]
        if kind == CONFIRMATION:
            if best is self.baseline or best.compared_with in (None, self.baseline.name):
                return []  # already measured against the baseline itself
            return [Candidate(kind, CONFIRMATION, best.settings,
                              f"the recommended configuration ({best.settings.label()}) against the baseline, "
                              "side by side", self.baseline)]
        raise ValueError(f"unknown stage {kind!r}")

    def reference_for(self, candidate: Candidate):
        """The rung a candidate is measured against now: the baseline for a confirmation, else the best so far
        (an earlier candidate of the same stage may have been kept since the stage was planned)."""
        return self.baseline if candidate.kind == CONFIRMATION else self.best

    # -- verdicts -------------------------------------------------------------------------------

    def conclude(self, rung, verdict: TrialVerdict) -> None:
        """Record a rung's verdict; a kept rung becomes the best so far (a confirmation only confirms)."""
        rung.decision = verdict
        self.rungs.append(rung)
        if rung.kind == CONFIRMATION:
            if not verdict.kept:  # the whole change did not hold up against the baseline: recommend nothing new
                self.best = self.baseline
            return
        if verdict.kept:
            self.best = rung

    def recommendation(self):
        """The rung whose settings are recommended (the baseline when nothing was kept)."""
        return self.best


def _peak(rung) -> float | None:
    v = (rung.summary or {}).get("peak_memory_bytes") if rung is not None else None
    return float(v) if isinstance(v, (int, float)) and v > 0 else None


def _memory_kind(rung) -> str | None:
    return (rung.summary or {}).get("memory_kind") if rung is not None else None
