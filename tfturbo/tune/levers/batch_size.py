"""A larger batch: doubling while kept, then one binary step, within the memory available.

The search itself (sizes, memory margin) is `tune.batch.next_size`; it starts
from the best configuration kept when the stage began (the reference of its
first rung). The learning rate follows the batch by the rule of the optimizer
the training step uses (`tune.batch.rule_for`: linear for SGD, square root for
Adam and the adaptive family), read from the start's run (`optimizer`, and
every optimizer a custom train_step uses where the run recorded them,
`optimizers`); a size that was faster but lost accuracy under a scaled rate is
measured once more under the next milder rule (`tune.batch.milder`) before the
search treats it as rejected, and a size kept under the milder rule keeps that
rule for the sizes after it. Its code changes set the batch size where the
script sets it, the learning rate (or its schedule's rates) times the factor
the rule gave, and drop_remainder=True on the training data's batch() when
the recommendation drops the partial batch.
"""

from __future__ import annotations


from ...findings import FindingDoc
from ... import findings as F
from ...learning_rate import scaling_words
from ...patch import changes as C
from ...verdicts import AccuracyVerdict, Verdict
from ...run_summary import RunSummary
from ..batch import NOT_FASTER, LrRule, milder, next_size, rule_for, rule_of
from ..skip import SKIPPED, Skip
from . import Candidate, Lever


def _peak(rung) -> float | None:
    v = rung.summary.peak_memory_bytes if rung is not None and rung.summary is not None else None
    return float(v) if isinstance(v, (int, float)) and v > 0 else None


def did_not_fit(rung) -> bool:
    """The run ended without completing (out of memory, most often): the search stops growing there."""
    d = rung.decision
    return d is not None and d.status != "completed"


def not_faster(rung) -> bool:
    """Its trial measured it no faster per sample than the size before (no measurable change, or slower)."""
    d = rung.decision
    return d is not None and d.speed.verdict in (Verdict.NO_CHANGE, Verdict.SLOWER)


def lost_accuracy(rung) -> bool:
    """Faster, but not kept for its accuracy: worse beyond the tolerance, or an inconclusive verdict that held it
    back (a rate the rule scaled may be what cost it)."""
    d = rung.decision
    if d is None or d.status != "completed" or rung.kept or d.speed.verdict != Verdict.FASTER:
        return False
    return d.accuracy.verdict == AccuracyVerdict.WORSE or (d.accuracy.verdict == AccuracyVerdict.INCONCLUSIVE
                                                          and d.accuracy.checked)


def optimizer_classes(summary: RunSummary | None) -> list[str | None]:
    """The optimizer classes a run's training step uses: every one it recorded (`optimizers`, a custom train_step
    with several), else its `optimizer`."""
    s = summary or RunSummary()
    found = [o.get("class") for o in s.optimizers or [] if isinstance(o, dict)]
    return found or [(s.optimizer or {}).get("class")]


class BatchSize(Lever):
    name = kind = "larger_batch"
    order = 50
    title = "Batch size"
    page = "batch"
    intro = ("Mixed precision and XLA usually lower peak memory. A larger batch uses it: more samples per step, "
             "with the learning rate scaled by the rule of the optimizer (k times the batch: ×k for SGD, ×√k for "
             "Adam and other adaptive optimizers), and a size that loses accuracy measured once more with the "
             "milder rule. Throughput is compared per sample, so a slower but larger step can still be a win.")
    settings_changed = ("batch_size", "lr_scale")

    def start(self, decisions):
        """The best configuration when the search began: the reference of its first rung (else the best now)."""
        first = next((r for r in decisions.rungs if r.kind == self.rung_kind), None)
        return decisions.rung(first.compared_with) if first is not None else decisions.best

    def rule(self, decisions) -> tuple[LrRule, str]:
        """(the learning-rate rule of the search's sizes, why): the optimizer's (`batch.rule_for`, from the
        start's run), or the milder one the last size kept was kept under."""
        rule, why = rule_for(optimizer_classes(self.start(decisions).summary))
        kept = [r for r in self._rungs(decisions) if r.kept]
        under = self._rule_of(decisions, kept[-1]) if kept else None
        if under is not None and under.power < rule.power:
            return under, f"batch {kept[-1].settings.batch_size} was kept under the {under.name} rule"
        return rule, why

    def _rungs(self, decisions) -> list:
        return [r for r in decisions.rungs if r.kind == self.rung_kind]

    def _rule_of(self, decisions, rung) -> LrRule | None:
        base = self.start(decisions).settings
        if not (base.batch_size and rung.settings.batch_size):
            return None
        return rule_of(rung.settings.batch_size / base.batch_size, rung.settings.lr_scale / base.lr_scale)

    def _tried(self, decisions) -> list[tuple[int, str]]:
        """(size, outcome) of each size measured, in order: its last rung's outcome (a size measured again under
        a milder rule counts as that)."""
        outcomes: dict[int, str] = {}
        for r in self._rungs(decisions):
            outcomes[r.settings.batch_size] = ("kept" if r.kept else "failed" if did_not_fit(r) else
                                               NOT_FASTER if not_faster(r) else "rejected")
        return list(outcomes.items())

    def candidates(self, decisions) -> list[Candidate]:
        return self._plan(decisions, [])

    def follow_up(self, decisions) -> list[Candidate]:
        again = self._again(decisions)
        if again is not None:
            return [again]
        tried = self._tried(decisions)
        return [c for c in self._plan(decisions, tried) if c.skipped_reason is None] if tried else []

    def _again(self, decisions) -> Candidate | None:
        """The last size once more under the next milder rule, when it was faster but lost accuracy under its
        scaled rate and that rule was not measured at that size yet."""
        rungs = self._rungs(decisions)
        last = rungs[-1] if rungs else None
        if last is None or not lost_accuracy(last):
            return None
        rule = self._rule_of(decisions, last)
        other = milder(rule) if rule is not None else None
        size = last.settings.batch_size
        if rule is None or other is None or any(r.settings.batch_size == size and self._rule_of(decisions, r) == other for r in rungs):
            return None
        k = size / self.start(decisions).settings.batch_size
        note = (f"batch {size} was faster but lost accuracy with the learning rate ×{rule.factor(k):.2f} ({rule.name} "
                f"rule): measured once more, {other.words(k)}, to tell whether the batch or the rate cost it")
        return self.at_size(decisions, size, note, other)

    def _plan(self, decisions, tried) -> list[Candidate]:
        start = self.start(decisions)
        base = start.settings
        if not base.batch_size:
            unknown = Skip(SKIPPED, "the batch size of the runs is not known")
            return [Candidate(self.rung_kind, self.name, base, str(unknown), start, skipped_reason=unknown)]
        rule, why = self.rule(decisions)
        peaks = {r.settings.batch_size: peak for r in self._rungs(decisions)
                 if r.settings.batch_size and (peak := _peak(r))}
        plan = next_size(base.batch_size, tried, _peak(start), decisions.available_memory,
                         start.summary.memory_kind if start.summary else None, decisions.max_batch_scale, peaks, rule)
        if plan.batch_size is None:  # the search is done
            return [Candidate(self.rung_kind, self.name, base, plan.reason, start, skipped_reason=plan.skip)]
        schedule = scaling_words(start.summary.optimizer if start.summary else None, plan.lr_scale)
        return [self.at_size(decisions, plan.batch_size, f"{plan.reason} — {why}" + (f"; {schedule}" if schedule
                                                                                  else ""), rule, plan.how)]

    def at_size(self, decisions, batch_size: int, note: str = "", rule: LrRule | None = None,
                heading: str = "") -> Candidate:
        """The best kept configuration at `batch_size`, its learning rate scaled from the search's start by `rule`
        (the search's, `rule()`, when not given); `heading`: the kind of step `note` opens with."""
        base = self.start(decisions).settings
        own = self.rule(decisions)[0]
        rule = rule or own
        k = batch_size / base.batch_size if base.batch_size else 1.0
        settings = base.with_(batch_size=batch_size, lr_scale=base.lr_scale * rule.factor(k))
        slug = f"batch{batch_size}" if rule == own else f"batch{batch_size}-lr-{rule.name}"
        return Candidate(self.rung_kind, slug, settings, note or f"batch {batch_size} chosen in the wizard; "
                         f"{rule.words(k)}", decisions.best, heading=heading if note else "")

    def candidate_for(self, decisions, settings) -> Candidate:
        for c in self.candidates(decisions) + self.follow_up(decisions):
            if c.skipped_reason is None and c.settings == settings:
                return c
        return self.at_size(decisions, settings.batch_size)

    def findings(self, rung, verdict) -> list[FindingDoc]:
        if not did_not_fit(rung):
            return []
        s = rung.settings
        return [F.Finding(F.BATCH_DID_NOT_FIT, f"batch {s.batch_size} did not complete ({verdict.reason}); the batch "
                          "search ends below it (an expected outcome: most often out of memory)",
                          "keep a smaller batch", data={"batch_size": s.batch_size}).to_dict()]

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
            k = rec.batch_size / base.batch_size if rec.batch_size and base.batch_size else None
            rule = rule_of(k, factor) if k else None
            how = f"the {rule.name} rule ({rule.source})" if rule is not None else "the scale the search kept"
            out.append(C.LearningRate(factor=factor, optimizer=code.optimizer if code else None,
                                      why=f"learning rate ×{factor:.3g} for the larger batch: {how}"))
        if rec.drop_remainder and not base.drop_remainder:
            # only what was measured and kept: XLA alone never adds it (the runs measured XLA without it unless its
            # shape audit found a partial batch and the fix was kept)
            fix = next((f.get("fix") for f in findings if f.get("code") == F.PARTIAL_LAST_BATCH and f.get("fix")), "")
            out.append(C.DropRemainder(snippet=str(fix or ""), why=(
                "drop_remainder=True on the training data's batch(): one batch shape, so XLA compiles once"
                if rec.jit_compile else "drop the partial last batch of the training data")))
        return out


LEVER = BatchSize()
