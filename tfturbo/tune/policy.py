"""The tuning policy: which candidate comes next, with which fixes, against which reference.

The study engine (`tune.engine`) asks this class for each stage's
candidates and hands every verdict back to it, whichever front end executes
the runs, so the same measurements give the same keep/reject and the same
recommendation:

- a stage's candidates come from its lever (`tune.levers`), built on the
  best configuration kept so far;
- every candidate is measured against the best configuration kept so far
  (speed), and judged on accuracy against the baseline run, so tolerances do
  not add up along the ladder; a confirming lever (the confirmation) is
  measured against the baseline itself;
- the audit's automatic fixes (float32 head for a 16-bit policy, dropping the
  partial last batch under XLA: each setting's `auto_when`) are applied when
  `auto_fix` is on and the audit raised the finding they fix;
- the recommendation is the best kept configuration; a confirmation that is
  not kept withdraws it.
"""

from __future__ import annotations


from .. import findings as F
from ..findings import FindingDoc
from ..settings import RunSettings, with_audit_fixes
from ..trials.verdict import TrialVerdict
from ..verdicts import ProbeVerdict
from . import levers
from .batch import DEFAULT_MAX_SCALE
from .levers import Candidate, Lever
from .study import Rung

SIXTEEN_BIT = ("mixed_float16", "mixed_bfloat16")


def sixteen_bit_policies(recommended: str | None, both: bool, chosen: str | None = None) -> tuple[list[str], str]:
    """The 16-bit policies to measure, and why: the user's choice or the recommended one first."""
    if chosen in SIXTEEN_BIT:
        # in words a client and a wizard user read ("chosen with --policy" named the command line's flag)
        first, why = chosen, f"{chosen} was the policy asked for" + (
            f" (the hardware report suggests {recommended})" if recommended else "")
    elif recommended in SIXTEEN_BIT:
        # under a card that reads "not recommended" when it loses, "… is the recommended policy" contradicted it
        first, why = recommended, f"{recommended} measured first: the hardware report suggests it for this machine"
    else:
        first = "mixed_float16"
        why = (f"the recommended policy is {recommended or 'unknown'}; mixed_float16 is measured to check "
               "that recommendation")
    policies = [first] + ([p for p in SIXTEEN_BIT if p != first] if both else [])
    return policies, why


class StudyDecisions:
    """Owns the decisions of a study; the front ends own only how runs are executed and shown."""

    def __init__(self, audit: list[FindingDoc], policies: list[str], policy_reason: str, auto_fix: bool = True,
                 max_batch_scale: float = DEFAULT_MAX_SCALE, available_memory: float | None = None,
                 accelerator: str | None = None) -> None:
        """`available_memory`: bytes a larger batch may use (the env document's memory; None: unknown);
        `accelerator`: "GPU" or "TPU" when one trains (`Environment.accelerator`), else None."""
        self.accelerator = accelerator
        self.audit = audit
        self.policies = policies
        self.policy_reason = policy_reason
        self.auto_fix = auto_fix
        self.max_batch_scale = max_batch_scale
        self.available_memory = available_memory
        self.input_bound = False  # the probe's verdict on the baseline's configuration (`probed`)
        self.baseline: Rung | None = None
        self.best: Rung | None = None  # the best kept configuration so far
        self.rungs: list[Rung] = []  # every judged rung, in order
        self._best_before: dict[str, Rung | None] = {}  # rung name -> the best configuration before its verdict

    def fixes_for(self, settings: RunSettings) -> RunSettings:
        """The audit's automatic fixes that apply to `settings` (only with auto_fix, only for raised findings)."""
        return with_audit_fixes(settings, F.codes_of(self.audit)) if self.auto_fix else settings

    def probed(self, verdict: str | None) -> None:
        """The first probe's verdict: an input-bound job measures the automatic tf.data fixes first."""
        self.input_bound = verdict == ProbeVerdict.INPUT_BOUND

    def set_baseline(self, rung: Rung) -> None:
        self.baseline = self.best = rung

    def rung(self, name: str | None) -> Rung | None:
        """A judged rung (or the baseline) by name."""
        return next((r for r in [self.baseline, *self.rungs] if r is not None and r.name == name), self.best)

    def candidates(self, lever: Lever) -> list[Candidate]:
        """What a lever would measure now, built on the best kept configuration so far."""
        assert self.best is not None, "the baseline must be measured first"
        return lever.candidates(self)

    def follow_up(self, lever: Lever) -> list[Candidate]:
        """More candidates of a lever once its last ones are judged (the batch search's next size)."""
        return lever.follow_up(self)

    def reference_for(self, candidate: Candidate, lever: Lever) -> Rung:
        """The rung a candidate is measured against now: the baseline for a confirmation, else the best so far
        (an earlier candidate of the same stage may have been kept since the stage was planned)."""
        reference = self.baseline if lever.confirms else self.best
        assert reference is not None, "the baseline must be measured first"
        return reference

    def conclude(self, rung: Rung, verdict: TrialVerdict, lever: Lever) -> None:
        """Record a rung's verdict; a kept rung becomes the best so far (a confirmation only confirms)."""
        self._best_before[rung.name] = self.best
        rung.decision = verdict
        self.rungs.append(rung)
        found = lever.findings(rung, verdict)
        named = rung.settings.name_against(self.baseline.settings if self.baseline else None)
        for f in found:  # named by what the configuration is ("30 steps per call"), not its run folder
            f["where"] = f.get("where") or named
        verdict.findings = list(verdict.findings) + found
        if lever.confirms:
            if not verdict.kept:  # the whole change did not hold up against the baseline: recommend nothing new
                self.best = self.baseline
            return
        if verdict.kept:
            self.best = rung

    def reconclude(self, rung: Rung, verdict: TrialVerdict, lever: Lever) -> None:
        """The last judged rung's new verdict (judged again under another accuracy rule): the best configuration
        goes back to what it was before that rung, then follows the new verdict."""
        assert self.rungs and self.rungs[-1] is rung, "only the last judged rung can be judged again"
        self.rungs.pop()
        self.best = self._best_before.get(rung.name, self.best)
        self.conclude(rung, verdict, lever)

    def recommendation(self) -> Rung | None:
        """The rung whose settings are recommended (the baseline when nothing was kept)."""
        return self.best


def lever_of(name: str) -> Lever:
    return levers.lever(name)
