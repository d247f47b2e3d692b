"""A larger batch: doubling while kept, then one binary step, within the memory available.

The search itself (sizes, memory margin, learning-rate scale) is
`tune.batch.next_size`; it starts from the best configuration kept when the
stage began (the reference of its first rung). The snippet's batch() line
also carries drop_remainder=True when the recommendation compiles with XLA or
drops the partial batch.
"""

from __future__ import annotations

from typing import Any

from ... import findings as F
from ...workload_kind import is_script
from ...verdicts import Verdict
from ..batch import NOT_FASTER, next_size
from . import Candidate, Hunk, Lever


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
        peaks = {r.settings.batch_size: peak for r in policy.rungs
                 if r.kind == self.rung_kind and r.settings.batch_size and (peak := _peak(r))}
        plan = next_size(base.batch_size, tried, _peak(start), policy.available_memory,
                         (start.summary or {}).get("memory_kind"), policy.max_batch_scale, peaks)
        if plan.batch_size is None:  # the search is done
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

    def hunks(self, rec, base, findings, code=None) -> list[Hunk]:
        out: list[Hunk] = []
        changed = rec.batch_size and base.batch_size and rec.batch_size != base.batch_size
        # only what was measured and kept: the recommendation's own drop_remainder (XLA alone never adds it; the
        # runs measured XLA without it unless its shape audit found a partial batch and the fix was kept)
        drop = rec.drop_remainder and not base.drop_remainder
        if changed or drop:
            old, new = base.batch_size or "BATCH_SIZE", rec.batch_size or base.batch_size or "BATCH_SIZE"
            why = []
            if drop:
                why.append("drop_remainder=True keeps the batch shape fixed, so XLA compiles once"
                           if rec.jit_compile else "drop the partial last batch")
            if changed:
                why.append(f"batch {old} → {new}: the largest size the batch search kept (faster per sample, "
                           "accuracy within tolerance)")
            if is_script(rec.workload) and not drop:
                # a training script batches in fit() or in its own tf.data pipeline: both said, in its words
                # (the issue 22 walk read "train_ds.batch(50)" for a script calling fit(x, y, batch_size=50))
                lines = [f"-model.fit(x, y, batch_size={old}, ...)  # or, batched in tf.data: train_ds.batch({old})",
                         f"+model.fit(x, y, batch_size={new}, ...)  # or, batched in tf.data: train_ds.batch({new})"]
            else:
                lines = [f"-train_ds = train_ds.batch({old})",
                         f"+train_ds = train_ds.batch({new}{', drop_remainder=True' if drop else ''})"]
            out.append(("input pipeline: " + "; ".join(why), lines))
        if abs(rec.lr_scale - base.lr_scale) > 1e-9:
            out.append(("learning rate: linear scaling rule (multiply it by the factor the batch grew)",
                        learning_rate_lines(_fmt_scale(rec.lr_scale / base.lr_scale), code.optimizer if code else None)))
        return out


def learning_rate_lines(factor: str, optimizer: dict[str, Any] | None) -> list[str]:
    """The learning rate times `factor`, as the workload wrote its optimizer (`trainer_backend/optimizer_code.py`):
    a string given to compile() becomes its class at Keras' default rate (the issue 22 walk read
    "keras.optimizers.Adam(learning_rate=LEARNING_RATE * 2)" for optimizer="adam"); an object keeps its class
    and rate; a schedule its initial rate; unknown (an older run), a generic Adam line."""
    opt = optimizer or {}
    cls, given = opt.get("class"), opt.get("given_as")
    name = f"keras.optimizers.{cls}" if opt.get("module") == "keras.optimizers" else cls
    rate, default = opt.get("learning_rate"), opt.get("default_learning_rate")
    if cls and given and isinstance(default, (int, float)):
        return [f'-model.compile(optimizer="{given}", ...)',
                f'+model.compile(optimizer={name}(learning_rate={default:g} * {factor}), ...)'
                f'  # "{given}" is {cls} at Keras\' default learning rate, {default:g}']
    if cls and opt.get("schedule") and isinstance(rate, (int, float)):
        schedule = opt["schedule"]
        return [f"-schedule = keras.optimizers.schedules.{schedule}(initial_learning_rate={rate:.6g}, ...)",
                f"+schedule = keras.optimizers.schedules.{schedule}(initial_learning_rate={rate:.6g} * {factor}, ...)"]
    if cls and isinstance(rate, (int, float)):
        return [f"-optimizer = {name}(learning_rate={rate:.6g}, ...)",
                f"+optimizer = {name}(learning_rate={rate:.6g} * {factor}, ...)"]
    return ["-optimizer = keras.optimizers.Adam(learning_rate=LEARNING_RATE)",
            f"+optimizer = keras.optimizers.Adam(learning_rate=LEARNING_RATE * {factor})"]


LEVER = BatchSize()
