"""The tuning policy: which candidate comes next, with which fixes, against which reference.

`tfturbo tune` walks every stage in order; the wizard lets the user start
each stage from its page. Both ask this class for the candidates and hand
every verdict back to it, so the same measurements give the same keep/reject
and the same recommendation whichever front end ran them:

- every candidate is measured against the best configuration kept so far
  (speed), and judged on accuracy against the baseline run, so tolerances do
  not add up along the ladder;
- an input-bound job (the probe's verdict) first measures the automatic tf.data
  fixes (`input_fixes`); the ladder goes on from them only when they were kept
  and the probe, run again with them, no longer finds the job input-bound
  (`input_stop_reason`); otherwise the study stops with the code changes;
- the audit's automatic fixes (float32 head for a 16-bit policy, dropping the
  partial last batch under XLA: each setting's `auto_when`) are applied when
  `auto_fix` is on and the audit raised the finding they fix;
- a 16-bit policy rejected only for speed is measured once more under XLA
  (bfloat16 on a CPU pays only with XLA's fusion; a rung rejected for accuracy
  or NaN is not retried: XLA does not change the numerics that failed);
- short steps (median under SHORT_STEP_MS) try compile(steps_per_execution=N):
  the host's per-call overhead is then a large share of each step;
- the larger batch is searched (`tune.batch.next_size`): doubling while kept,
  then one binary step, within the memory available with a safety margin;
- the recommendation is the best kept configuration, confirmed against the
  baseline by one last trial when it was never compared with it directly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import findings as F
from ..settings import RunSettings, with_audit_fixes
from ..tune.batch import DEFAULT_MAX_SCALE, next_size
from ..tune.study import RungKind
from ..verdicts import ProbeVerdict
from .verdict import FASTER, WORSE, TrialVerdict

SIXTEEN_BIT = ("mixed_float16", "mixed_bfloat16")
MIXED_PRECISION, XLA = RungKind.MIXED_PRECISION, RungKind.XLA
LARGER_BATCH, CONFIRMATION = RungKind.LARGER_BATCH, RungKind.CONFIRMATION
STEPS_PER_EXECUTION, INPUT_PIPELINE = RungKind.STEPS_PER_EXECUTION, RungKind.INPUT_PIPELINE
STAGES = (INPUT_PIPELINE, MIXED_PRECISION, XLA, STEPS_PER_EXECUTION, LARGER_BATCH, CONFIRMATION)
INPUT_BOUND_ADVICE = ("the device waits for data, so precision and XLA would not make it faster; make the "
                      "input pipeline changes of the INPUT_BOUND finding in your code, then tune again")
SHORT_STEP_MS = 5.0  # below this median step time the host's per-call overhead is worth amortizing
MAX_STEPS_PER_EXECUTION = 32


def steps_per_execution_values(val_every: int) -> list[int]:
    """A few N to try: the smallest divisor of the validation interval from 4 up, and a second one at least
    twice as large when the interval allows (a call never spans a validation point; two calls per interval)."""
    divisors = [d for d in range(2, min(MAX_STEPS_PER_EXECUTION, max(2, val_every // 2)) + 1) if val_every % d == 0]
    small = next((d for d in divisors if d >= 4), divisors[-1] if divisors else None)
    if small is None:
        return []
    large = [d for d in divisors if d >= 2 * small]
    return [small] + ([large[-1]] if large else [])


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
                 max_batch_scale: float = DEFAULT_MAX_SCALE, available_memory: float | None = None) -> None:
        """`available_memory`: bytes a larger batch may use (the env document's memory; None: unknown)."""
        self.audit = audit
        self.policies = policies
        self.policy_reason = policy_reason
        self.auto_fix = auto_fix
        self.max_batch_scale = max_batch_scale
        self.available_memory = available_memory
        self.input_bound = False  # the probe's verdict on the baseline's configuration (`probed`)
        self._batch_start = None  # Rung: the best configuration when the batch search began
        self.baseline = None  # Rung
        self.best = None  # Rung: the best kept configuration so far
        self.rungs: list[Any] = []  # every judged rung, in order

    # -- automatic fixes ------------------------------------------------------------------------

    def fixes_for(self, settings: RunSettings) -> RunSettings:
        """The audit's automatic fixes that apply to `settings` (only with auto_fix, only for raised findings)."""
        return with_audit_fixes(settings, F.codes_of(self.audit)) if self.auto_fix else settings

    # -- the input probe ------------------------------------------------------------------------

    def probed(self, verdict: str | None) -> None:
        """The first probe's verdict: an input-bound job measures the automatic tf.data fixes first."""
        self.input_bound = verdict == ProbeVerdict.INPUT_BOUND

    def needs_reprobe(self) -> bool:
        """The input fixes were kept: probe again with them on before anything else is tuned."""
        rung = self._input_rung()
        return self.input_bound and rung is not None and rung.kept

    def input_stop_reason(self, reprobe: dict[str, Any] | None) -> str | None:
        """None when the ladder goes on; else why the study stops input-bound, with what the fixes gained.

        `reprobe` is the probe-input document with the fixes on (None: not run or failed). The ladder goes on
        only from a configuration that is not input-bound: the fixes kept and the re-probe compute-bound.
        """
        if not self.input_bound:
            return None
        rung = self._input_rung()
        if rung is None:
            return f"the job is input-bound: {INPUT_BOUND_ADVICE}"
        d = rung.decision
        gained = f"speed {d.speed.text()}, {d.speed.verdict}" if d is not None else "not measured"
        if not rung.kept:
            return (f"the job is input-bound and the automatic tf.data fixes were not kept ({gained}: "
                    f"{d.reason if d else 'no verdict'}): {INPUT_BOUND_ADVICE}")
        verdict = (reprobe or {}).get("verdict")
        if verdict != ProbeVerdict.COMPUTE_BOUND:
            share = (reprobe or {}).get("input_fraction")
            still = (f"{share:.0%} of each step still waits for data" if isinstance(share, (int, float))
                     else "the probe with the fixes on did not answer")
            return (f"the job is still input-bound with the automatic tf.data fixes (kept: {gained}; {still}): "
                    f"{INPUT_BOUND_ADVICE}")
        return None

    def _input_rung(self):
        return next((r for r in reversed(self.rungs) if r.kind == INPUT_PIPELINE), None)

    # -- candidates -----------------------------------------------------------------------------

    def set_baseline(self, rung) -> None:
        self.baseline = self.best = rung

    def candidates(self, kind: str, policy: str | None = None) -> list[Candidate]:
        """What to measure for a stage, built on the best kept configuration so far."""
        assert self.best is not None, "the baseline must be measured first"
        best, base = self.best, self.best.settings
        if kind == INPUT_PIPELINE:
            if not self.input_bound or base.input_fixes:
                return []
            return [Candidate(kind, "input_fixes", base.with_(input_fixes=True),
                              "the probe found the job input-bound: the automatic tf.data fixes first", best)]
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
        if kind == STEPS_PER_EXECUTION:
            step = _median_step_ms(best)
            values = steps_per_execution_values(base.effective_val_every())
            skip = None
            if base.steps_per_execution > 1:
                skip = f"skipped: already {base.steps_per_execution} steps per call"
            elif step is None:
                skip = "skipped: the step time of the best configuration was not measured"
            elif step >= SHORT_STEP_MS:
                skip = (f"skipped: a step takes {step:.1f} ms, so the host's per-call overhead is a small share "
                        f"(tried below {SHORT_STEP_MS:g} ms)")
            elif not values:
                skip = f"skipped: the validation interval ({base.effective_val_every()} steps) is too short"
            if skip:
                return [Candidate(kind, STEPS_PER_EXECUTION, base, skip, best, skipped_reason=skip)]
            return [Candidate(kind, f"spe{n}", base.with_(steps_per_execution=n),
                              f"a step takes {step:.1f} ms: {n} steps per call of the compiled function amortize "
                              "the host's per-call overhead", best) for n in values]
        if kind == LARGER_BATCH:
            self._batch_start = best
            return self._batch_candidates([])
        if kind == CONFIRMATION:
            if best is self.baseline or best.compared_with in (None, self.baseline.name):
                return []  # already measured against the baseline itself
            return [Candidate(kind, CONFIRMATION, best.settings,
                              f"the recommended configuration ({best.settings.label()}) against the baseline, "
                              "side by side", self.baseline)]
        raise ValueError(f"unknown stage {kind!r}")

    def follow_up(self, kind: str) -> list[Candidate]:
        """More candidates of a stage once its last ones are judged: XLA auto-clustering when jit_compile=True
        was refused or not faster; the batch search's next size."""
        if kind == XLA:
            return self._autoclustering()
        if kind == MIXED_PRECISION:
            return self._fixed_retry()
        if kind != LARGER_BATCH or self._batch_start is None:
            return []
        tried = [(r.settings.batch_size, "kept" if r.kept else "failed" if _did_not_fit(r) else "rejected")
                 for r in self.rungs if r.kind == LARGER_BATCH]
        if not tried:
            return []
        return [c for c in self._batch_candidates(tried) if c.skipped_reason is None]

    def _fixed_retry(self) -> list[Candidate]:
        """A 16-bit rung whose runs failed on a cause an automatic fix cures (its first failing step named it:
        a metric refusing 16-bit outputs, integer ids rounded) is measured once more with that fix."""
        last = next((r for r in reversed(self.rungs) if r.kind == MIXED_PRECISION), None)
        if not self.auto_fix or last is None or last.decision is None or not last.decision.failed:
            return []
        codes = set(F.codes_of(list((last.summary or {}).get("findings") or [])))
        s = last.settings
        fixed = s.with_(fix_head=s.fix_head or F.HEAD_NOT_FLOAT32 in codes,
                        fix_int_inputs=s.fix_int_inputs or F.INTEGER_INPUT_16BIT in codes)
        if fixed == s or any(r.settings == fixed for r in self.rungs):
            return []
        self.audit = list(self.audit) + [f for f in (last.summary or {}).get("findings") or []
                                         if f.get("code") in (F.HEAD_NOT_FLOAT32, F.INTEGER_INPUT_16BIT)]
        return [Candidate(MIXED_PRECISION, f"{s.policy}-fixed", fixed,
                          f"the {s.policy} run {last.decision.reason}; measured again with that fix", self.best)]

    def _autoclustering(self) -> list[Candidate]:
        xla = [r for r in self.rungs if r.kind == XLA]
        if not xla or any(r.kept or r.settings.xla_autoclustering for r in xla):
            return []
        first = xla[0].decision
        refused = first is not None and F.XLA_NOT_ACTIVE in F.codes_of(
            list(first.findings) + list((xla[0].summary or {}).get("findings") or []))
        why = ("jit_compile=True was refused (XLA_NOT_ACTIVE)" if refused else
               "jit_compile=True was not kept")
        base = self.best.settings
        return [Candidate(XLA, "xla-autoclustering", base.with_(xla_autoclustering=True),
                          f"{why}: TensorFlow's auto-clustering compiles only the parts of the step XLA supports",
                          self.best)]

    def _batch_candidates(self, tried: list[tuple[int, str]]) -> list[Candidate]:
        start = self._batch_start
        base = start.settings
        if not base.batch_size:
            why = "skipped: the batch size of the runs is not known"
            return [Candidate(LARGER_BATCH, LARGER_BATCH, base, why, start, skipped_reason=why)]
        plan = next_size(base.batch_size, tried, _peak(start), self.available_memory, _memory_kind(start),
                         self.max_batch_scale)
        if plan.done:
            return [Candidate(LARGER_BATCH, LARGER_BATCH, base, plan.reason, start, skipped_reason=plan.reason)]
        settings = base.with_(batch_size=plan.batch_size, lr_scale=base.lr_scale * plan.lr_scale)
        return [Candidate(LARGER_BATCH, f"batch{plan.batch_size}", settings, plan.reason, self.best)]

    def reference_for(self, candidate: Candidate):
        """The rung a candidate is measured against now: the baseline for a confirmation, else the best so far
        (an earlier candidate of the same stage may have been kept since the stage was planned)."""
        return self.baseline if candidate.kind == CONFIRMATION else self.best

    # -- verdicts -------------------------------------------------------------------------------

    def conclude(self, rung, verdict: TrialVerdict) -> None:
        """Record a rung's verdict; a kept rung becomes the best so far (a confirmation only confirms)."""
        rung.decision = verdict
        self.rungs.append(rung)
        verdict.findings = list(verdict.findings) + _lever_findings(rung, verdict)
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


def _lever_findings(rung, verdict: TrialVerdict) -> list[dict[str, Any]]:
    """The finding a lever's rung carries (docs/FINDINGS.md), kept or not."""
    s = rung.settings
    where = rung.name
    if rung.kind == STEPS_PER_EXECUTION:
        return [F.Finding(F.SHORT_STEPS, f"steps are short, so {s.steps_per_execution} steps per call were measured: "
                          f"{'kept' if verdict.kept else 'not kept'} ({verdict.reason})",
                          f"model.compile(..., steps_per_execution={s.steps_per_execution})" if verdict.kept else "",
                          where, data={"steps_per_execution": s.steps_per_execution}).to_dict()]
    if rung.kind == LARGER_BATCH and _did_not_fit(rung):
        return [F.Finding(F.BATCH_DID_NOT_FIT, f"batch {s.batch_size} did not complete ({verdict.reason}); the batch "
                          "search ends below it (an expected outcome: most often out of memory)",
                          "keep a smaller batch", where, data={"batch_size": s.batch_size}).to_dict()]
    if rung.kind == INPUT_PIPELINE:
        applied = [f for f in (rung.summary or {}).get("findings") or [] if f.get("code") == F.INPUT_FIXES_APPLIED]
        return [F.Finding(F.INPUT_FIXES_APPLIED, f"automatic tf.data fixes measured: "
                          f"{'kept' if verdict.kept else 'not kept'} ({verdict.reason})",
                          applied[0].get("fix", "") if applied and verdict.kept else "", where).to_dict()]
    if rung.kind == XLA and s.xla_autoclustering:
        return [F.Finding(F.XLA_AUTOCLUSTERING, f"XLA auto-clustering measured: {'kept' if verdict.kept else 'not kept'}"
                          f" ({verdict.reason})", 'tf.config.optimizer.set_jit("autoclustering")  # before training'
                          if verdict.kept else "", where).to_dict()]
    return []


def _median_step_ms(rung) -> float | None:
    v = ((rung.summary or {}).get("step_ms") or {}).get("median") if rung is not None else None
    return float(v) if isinstance(v, (int, float)) and v > 0 else None


def _did_not_fit(rung) -> bool:
    """The run ended without completing (out of memory, most often): the search stops growing there."""
    d = rung.decision
    return d is not None and d.status != "completed"


def _memory_kind(rung) -> str | None:
    return (rung.summary or {}).get("memory_kind") if rung is not None else None
