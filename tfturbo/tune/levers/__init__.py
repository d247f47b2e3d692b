"""The levers of the checklist, one module each, found here and walked in order.

A lever is one thing the study may change in the user's training (mixed
precision, XLA, a larger batch, …). Its module owns everything about it:
when it applies and what it measures (`candidates`, `follow_up`), the finding
its rung carries (`findings`), its part of the recommended code changes
(`changes`, which `tfturbo.patch` places in the user's file), and its words for the wizard's step list and the report (`title`,
`intro`). `StudyDecisions`, the study engine, `tfturbo tune --stages`, the
wizard's step list and the patch walk `LEVERS`; nothing else switches on a
lever's kind.

A new lever is one new module in this package defining a `Lever` subclass
instance named `LEVER` (found by `discover`), or, from outside the package
(a test, a plug-in), a call to `register`.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterator

from ...findings import FindingDoc
from ...learning_rate import OptimizerDoc
from ...patch.changes import Change
from ...settings import RunSettings
from ...trials.verdict import TrialVerdict
from ...run_summary import RunSummary
from ..skip import Skip

if TYPE_CHECKING:  # the study's decisions walk the levers; a lever reads their state
    from ..engine import StudyEngine
    from ..policy import StudyDecisions
    from ..study import Rung


@dataclass(frozen=True)
class WorkloadCode:
    """How the workload's own code reads where a change touches it, from its baseline run's summary."""

    optimizer: OptimizerDoc | None = None  # summary "optimizer" (trainer_backend/optimizer_code.py)
    device: str | None = None  # summary "device": where the baseline trained ("GPU: NVIDIA A100 …", "CPU: …")

    @property
    def accelerator(self) -> str | None:
        """"GPU" or "TPU" when the baseline trained on one (its device line), else None."""
        kind = (self.device or "").split(":", 1)[0]
        return kind if kind in ("GPU", "TPU") else None


@dataclass
class Candidate:
    """One configuration a stage would measure, why, and against which rung (speed)."""

    kind: str  # the rung kind in study.yaml (the lever's `kind`)
    slug: str  # the run folder's name after NN-
    settings: RunSettings
    note: str  # why it is measured: written before the verdict's reason
    reference: Any  # the Rung it is measured against (speed): the best so far when the stage was planned
    skipped_reason: Skip | None = None  # set when the stage has nothing to measure (e.g. no memory freed)
    heading: str = ""  # the kind of step `note` opens with ("doubling" of "doubling: batch 64 → 128; …"), or ""

    def after_heading(self) -> str:
        """`note` less its heading ("batch 64 → 128; …"), for a page that says the heading its own way."""
        return self.note[len(self.heading) + 2:] if self.heading else self.note


class Lever:
    """One lever of the checklist. Subclasses override what they need; the defaults do nothing."""

    name = ""  # the stage: `tune --stages NAME`, the rung kind in study.yaml unless `kind` says otherwise
    kind = ""  # the rung kind its rungs are recorded with ("" = name); never changes (users keep their files)
    order = 0.0  # its place in the checklist (levers run in increasing order)
    title = ""  # its step in the wizard's step list and its heading in the report
    intro = ""  # one paragraph: what it changes and why it may be faster (the wizard page's and the report's)
    stage = ""  # the `tune --stages` name it is measured under ("" = name; auto-clustering is part of "xla")
    page = ""  # the wizard page that shows it ("": a page of its own, `pages.lever.LeverPage`)
    settings_changed: tuple[str, ...] = ()  # the RunSettings fields it changes (what its rungs differ in)
    confirms = False  # measured against the baseline; not kept, it withdraws the recommendation (confirmation)

    @property
    def rung_kind(self) -> str:
        return self.kind or self.name

    @property
    def stage_name(self) -> str:
        return self.stage or self.name

    def candidates(self, decisions: StudyDecisions) -> list[Candidate]:
        """What to measure when the stage begins, built on the best kept configuration so far."""
        return []

    def follow_up(self, decisions: StudyDecisions) -> list[Candidate]:
        """More candidates once the last ones are judged (a search's next size, a fallback)."""
        return []

    def candidate_for(self, decisions: StudyDecisions, settings: RunSettings) -> Candidate:
        """The wizard user's own configuration for this stage (one of the policy's candidates when it is one)."""
        for c in self.candidates(decisions) + self.follow_up(decisions):
            if c.skipped_reason is None and c.settings == settings:
                return c
        return Candidate(self.rung_kind, self.slug_for(settings), settings,
                         f"chosen in the wizard: {settings.label()}", decisions.best)

    def slug_for(self, settings: RunSettings) -> str:
        """The run folder's name after NN- for settings chosen by the user."""
        return self.name

    def findings(self, rung: Rung, verdict: TrialVerdict) -> list[FindingDoc]:
        """The finding a rung of this lever carries (docs/FINDINGS.md), kept or not. Its `where` is left empty:
        the study names the configuration (`StudyDecisions.conclude`)."""
        return []

    def changes(self, rec: RunSettings, base: RunSettings, findings: list[FindingDoc],
                code: WorkloadCode | None = None) -> list[Change]:
        """Its part of the code changes from `base` to the recommended `rec` (`tfturbo.patch.changes`), placed
        in the user's file where it says that thing; `code` says how the workload wrote what a change
        multiplies (its optimizer)."""
        return []

    def not_in_effect(self, summary: RunSummary) -> str | None:
        """Why its change did not take effect in this completed run of the candidate ("why; what would enable
        it"), or None when it did or the run cannot tell. The trial stops after its first candidate run when
        this says something (`trials.trial.Trial.not_in_effect`): that run is the reference's, not a change."""
        return None

    def after_stage(self, engine: StudyEngine) -> Iterator[Any]:
        """Backend actions once the stage's trials are judged (the input probe again); may end the study."""
        return iter(())

    def handles_input_bound(self) -> bool:
        """True for the lever that measures an input-bound job's fixes (the study does not stop before it)."""
        return False


LEVERS: list[Lever] = []


def as_written(decisions: StudyDecisions) -> RunSettings:
    """The script's own settings as written: the baseline's (resolved from its run), else the best so far. A
    lever measures the reverse of what the script has (XLA off, one step per call, float32), never of what the
    study kept (the wizard asks a lever again after its verdict)."""
    first = decisions.baseline or decisions.best
    assert first is not None, "the baseline is measured first"
    return first.settings


def outcome(verdict: TrialVerdict) -> str:
    """"kept" or "not kept" for a lever's finding, without the figures it was decided on. A finding is written once,
    when its rung is decided, while the speed-up of that comparison is one estimate that later pairs of the same two
    configurations (the confirmation) pool into: a copy would go stale (issue-42 walk: SHORT_STEPS kept "1.71×
    [1.48, 1.96]" beside the pooled 1.76× [1.59, 1.95] everywhere else). The figure is the decision's alone."""
    return ("kept" if verdict.kept else "not kept") + " (its speed-up and accuracy are in this configuration's decision)"


def effect_check(a: RunSettings, b: RunSettings) -> Callable[[RunSummary], str | None] | None:
    """The check of a trial of `b` against `a` that `b`'s changes took effect: each lever whose settings differ
    between them asked in turn (`Lever.not_in_effect`); None when no lever changes anything between them."""
    changed = [lv for lv in LEVERS if any(getattr(a, f) != getattr(b, f) for f in lv.settings_changed)]
    if not changed:
        return None

    def check(summary: RunSummary) -> str | None:
        return next((why for lv in changed if (why := lv.not_in_effect(summary))), None)

    return check


def register(lever: Lever) -> Lever:
    """Add a lever (or replace one of the same name) at its `order`."""
    LEVERS[:] = sorted([lv for lv in LEVERS if lv.name != lever.name] + [lever], key=lambda lv: lv.order)
    return lever


def unregister(name: str) -> None:
    LEVERS[:] = [lv for lv in LEVERS if lv.name != name]


def discover() -> None:
    """Register the `LEVER` of every module in this package."""
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        lever = getattr(module, "LEVER", None)
        if isinstance(lever, Lever):
            register(lever)


def stages() -> tuple[str, ...]:
    """Every stage name in order (what `tune --stages` accepts); levers sharing a stage name appear once."""
    out: list[str] = []
    for lv in LEVERS:
        if lv.stage_name not in out:
            out.append(lv.stage_name)
    return tuple(out)


def lever(name: str) -> Lever:
    return next(lv for lv in LEVERS if lv.name == name)


def of_kind(kind: str) -> list[Lever]:
    return [lv for lv in LEVERS if lv.rung_kind == kind]


def confirms(kind: str | None) -> bool:
    """A rung of this kind confirms the recommendation against the baseline (its lever's `confirms`)."""
    return any(lv.confirms for lv in of_kind(kind or ""))


discover()

