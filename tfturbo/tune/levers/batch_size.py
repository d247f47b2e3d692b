"""A larger batch: doubling while kept, then one binary step, within the memory available.

The search itself (sizes, memory margin, learning-rate scale) is
`tune.batch.next_size`; it starts from the best configuration kept when the
stage began (the reference of its first rung). Its code changes set the
batch size where the script sets it, scale the learning rate (or its
schedule) by the factor the batch grew, and add drop_remainder=True to the
training data's batch() when the recommendation drops the partial batch.
"""

from __future__ import annotations

from typing import Any

from ... import findings as F
from ...patch import changes as C
from ...verdicts import Verdict
from ..batch import NOT_FASTER, next_size
from . import Candidate, Lever


def _fmt_scale(x: float) -> str:
    return f"{x:.3f}".rstrip("0").rstrip(".")


def _peak(rung) -> float | None:
    v = (rung.summary or {}).get("peak_memory_bytes") if rung is not None else None
    return float(v) if isinstance(v, (int, float)) and v > 0 else None


def did_not_fit(rung) -> bool:
    """The run ended without completing (out of memory, most often): the search stops growing there."""
    d = rung.decision
    return d is not None and d.status != "completed"


def not_faster(rung) -> bool:
    """Its trial measured it no faster per sample than the size before (no measurable change, or slower)."""
    d = rung.decision
    return d is not None and d.speed.verdict in (Verdict.NO_CHANGE, Verdict.SLOWER)


class BatchSize(Lever):
    name = kind = "larger_batch"
    order = 50
    title = "Batch size"
    page = "batch"
    intro = ("Mixed precision and XLA usually lower peak memory. A larger batch uses it: more samples per step, "
             "with the learning rate scaled by the same factor (linear scaling rule). Throughput is compared per "
             "sample, so a slower but larger step can still be a win.")
    settings_changed = ("batch_size", "lr_scale")

    def start(self, policy):
        """The best configuration when the search began: the reference of its first rung (else the best now)."""
        first = next((r for r in policy.rungs if r.kind == self.rung_kind), None)
        return policy.rung(first.compared_with) if first is not None else policy.best

    def _tried(self, policy) -> list[tuple[int, str]]:
        return [(r.settings.batch_size, "kept" if r.kept else "failed" if did_not_fit(r) else
                 NOT_FASTER if not_faster(r) else "rejected") for r in policy.rungs if r.kind == self.rung_kind]

    def candidates(self, policy) -> list[Candidate]:
        return self._plan(policy, [])

    def follow_up(self, policy) -> list[Candidate]:
        tried = self._tried(policy)
        return [c for c in self._plan(policy, tried) if c.skipped_reason is None] if tried else []

    def _plan(self, policy, tried) -> list[Candidate]:
        start = self.start(policy)
        base = start.settings
        if not base.batch_size:
            why = "skipped: the batch size of the runs is not known"
            return [Candidate(self.rung_kind, self.name, base, why, start, skipped_reason=why)]
        peaks = {r.settings.batch_size: _peak(r) for r in policy.rungs if r.kind == self.rung_kind and _peak(r)}
        plan = next_size(base.batch_size, tried, _peak(start), policy.available_memory,
                         (start.summary or {}).get("memory_kind"), policy.max_batch_scale, peaks)
        if plan.done:
            return [Candidate(self.rung_kind, self.name, base, plan.reason, start, skipped_reason=plan.reason)]
        return [self.at_size(policy, plan.batch_size, plan.reason)]

    def at_size(self, policy, batch_size: int, note: str = "") -> Candidate:
        """The best kept configuration at `batch_size`, its learning rate scaled by the linear rule from the
        search's start."""
        base = self.start(policy).settings
        scale = batch_size / base.batch_size if base.batch_size else 1.0
        settings = base.with_(batch_size=batch_size, lr_scale=base.lr_scale * scale)
        return Candidate(self.rung_kind, f"batch{batch_size}", settings,
                         note or f"batch {batch_size} chosen in the wizard", policy.best)

    def candidate_for(self, policy, settings) -> Candidate:
        for c in self.candidates(policy) + self.follow_up(policy):
            if c.skipped_reason is None and c.settings == settings:
                return c
        return self.at_size(policy, settings.batch_size)

    def findings(self, rung, verdict) -> list[dict[str, Any]]:
        if not did_not_fit(rung):
            return []
        s = rung.settings
        return [F.Finding(F.BATCH_DID_NOT_FIT, f"batch {s.batch_size} did not complete ({verdict.reason}); the batch "
                          "search ends below it (an expected outcome: most often out of memory)",
                          "keep a smaller batch", rung.name, data={"batch_size": s.batch_size}).to_dict()]

    def changes(self, rec, base, findings, code=None) -> list[C.Change]:
        out: list[C.Change] = []
        if rec.batch_size and rec.batch_size != base.batch_size:
            out.append(C.BatchSize(size=rec.batch_size, was=base.batch_size, why=(
                f"batch size {base.batch_size or 'as written'} → {rec.batch_size}: the largest size the batch "
                "search kept (faster per sample, accuracy within tolerance)")))
        elif rec.batch_size:  # what the study measured; a script that says another (tune --batch-size) is set to it
            out.append(C.BatchSize(size=rec.batch_size, differs=False,
                                   why=f"batch size {rec.batch_size}, the size the study measured"))
        if abs(rec.lr_scale - base.lr_scale) > 1e-9:
            factor = rec.lr_scale / base.lr_scale
            out.append(C.LearningRate(factor=factor, optimizer=code.optimizer if code else None, why=(
                f"learning rate × {_fmt_scale(factor)}: the linear scaling rule for the larger batch (the "
                "schedule's initial rate, when it has one)")))
        if rec.drop_remainder and not base.drop_remainder:
            # only what was measured and kept: XLA alone never adds it (the runs measured XLA without it unless its
            # shape audit found a partial batch and the fix was kept)
            fix = next((f.get("fix") for f in findings if f.get("code") == F.PARTIAL_LAST_BATCH and f.get("fix")), "")
            out.append(C.DropRemainder(snippet=str(fix or ""), why=(
                "drop_remainder=True on the training data's batch(): one batch shape, so XLA compiles once"
                if rec.jit_compile else "drop the partial last batch of the training data")))
        return out


LEVER = BatchSize()
