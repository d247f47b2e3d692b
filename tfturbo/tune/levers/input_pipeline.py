"""Input pipeline: an input-bound job first gets the automatic tf.data fixes, measured, then probed again.

Only when the input probe found the job input-bound. The fixes
(`--input-fixes`, `trainer_backend/input_fixes.py`) are measured as a trial
against the baseline; the probe then runs again with them on, and the study
goes on from the fixed configuration only when they were kept and the job is
no longer input-bound — else it stops (`input_bound`) with the code changes
and what the fixes gained.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator

from ...findings import FindingDoc
from ...input_probe import InputProbe
from ... import findings as F
from ...verdicts import ProbeVerdict
from ...patch import changes as C
from . import Candidate, Lever, outcome

if TYPE_CHECKING:
    from ..policy import StudyDecisions

INPUT_BOUND_ADVICE = ("the device waits for data, so precision and XLA would not make it faster; make the "
                      "input pipeline changes of the INPUT_BOUND finding in your code, then tune again")


class InputPipeline(Lever):
    name = "input_pipeline"
    order = 10
    title = "Input pipeline"
    page = "baseline"  # the wizard shows an input-bound job on the Profile & baseline page
    intro = ("The input probe found the device waiting for data: the automatic tf.data fixes (prefetch, a "
             "finite cache, parallel maps that keep the data order) are measured first, then the probe runs "
             "again with them on.")
    settings_changed = ("input_fixes",)

    def candidates(self, decisions) -> list[Candidate]:
        base = decisions.best.settings
        if not decisions.input_bound or base.input_fixes:
            return []
        return [Candidate(self.rung_kind, "input_fixes", base.with_(input_fixes=True),
                          "the probe found the job input-bound: the automatic tf.data fixes first", decisions.best)]

    def findings(self, rung, verdict) -> list[FindingDoc]:
        applied = [f for f in (rung.summary.findings if rung.summary else None) or []
                   if f.get("code") == F.INPUT_FIXES_APPLIED]
        return [F.Finding(F.INPUT_FIXES_APPLIED, f"automatic tf.data fixes measured: {outcome(verdict)}",
                          applied[0].get("fix", "") if applied and verdict.kept else "").to_dict()]

    def changes(self, rec, base, findings, code=None) -> list[C.Change]:
        if not (rec.input_fixes and not base.input_fixes):
            return []
        applied = next((f.get("fix") for f in findings if isinstance(f, dict)
                        and f.get("code") == F.INPUT_FIXES_APPLIED and f.get("fix")), None)
        return [C.ByHand(snippet=applied or "train_ds = train_ds.prefetch(tf.data.AUTOTUNE)",
                         reason="tfturbo applied these tf.data fixes to the pipeline it was given; write them at the "
                                "end of your training pipeline",
                         why="input pipeline: the automatic tf.data fixes tfturbo measured")]

    def handles_input_bound(self) -> bool:
        return True

    def after_stage(self, engine) -> Iterator[Any]:
        """The probe again with the fixes on (only when they were kept), then go on or stop input-bound."""
        rung = self._rung(engine.decisions)
        if engine.decisions.input_bound and rung is not None and rung.kept:
            engine.study.probe_input_fixes = yield from engine.probe(["--input-fixes"])
        reason = stop_reason(engine.decisions, engine.study.probe_input_fixes)
        if reason is not None:
            engine.stop_input_bound(reason)

    def _rung(self, decisions):
        return next((r for r in reversed(decisions.rungs) if r.kind == self.rung_kind), None)


def stop_reason(decisions: StudyDecisions, reprobe: InputProbe | None) -> str | None:
    """None when the study goes on; else why it stops input-bound, with what the fixes gained.

    `reprobe` is the probe-input document with the fixes on (None: not run or failed). The study goes on
    only from a configuration that is not input-bound: the fixes kept and the re-probe compute-bound.
    """
    if not decisions.input_bound:
        return None
    rung = LEVER._rung(decisions)
    if rung is None:
        return f"the job is input-bound: {INPUT_BOUND_ADVICE}"
    d = rung.decision
    gained = f"speed {d.speed.text()}, {d.speed.verdict}" if d is not None else "not measured"
    if not rung.kept:
        return (f"the job is input-bound and the automatic tf.data fixes were not kept ({gained}: "
                f"{d.reason if d else 'no verdict'}): {INPUT_BOUND_ADVICE}")
    if reprobe is None or reprobe.verdict != ProbeVerdict.COMPUTE_BOUND:
        share = reprobe.input_fraction if reprobe is not None else None
        still = (f"{share:.0%} of each step still waits for data" if isinstance(share, (int, float))
                 else "the probe with the fixes on did not answer")
        return (f"the job is still input-bound with the automatic tf.data fixes (kept: {gained}; {still}): "
                f"{INPUT_BOUND_ADVICE}")
    return None


LEVER = InputPipeline()
