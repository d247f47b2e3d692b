"""steps_per_execution: when steps are short, run N of them per call of the compiled function.

Short steps (median under SHORT_STEP_MS) spend a large share of their time in
the host's per-call overhead; compile(steps_per_execution=N) amortizes it.
N is a divisor of the validation interval (a call never spans a validation
point). The largest N is measured first: the overhead left per step falls as
1/N, so a smaller N saves a part of what the largest saves, and measuring
both, one after the other, made two trials of small differences (1.06× each
on builtin:transformer, 5 and 6 pairs) where one measures their product. The
smaller N is measured only when the largest was slower (something in the
longer call costs more than it saves).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...findings import FindingDoc
from ... import findings as F
from ...trials.verdict import SLOWER
from ...patch import changes as C
from ..skip import SKIPPED, Skip
from . import Candidate, Lever, as_written, outcome

if TYPE_CHECKING:
    from ..policy import StudyDecisions
    from ..study import Rung

SHORT_STEP_MS = 5.0  # below this median step time the host's per-call overhead is worth amortizing
MAX_STEPS_PER_EXECUTION = 32


def steps_per_execution_values(val_every: int) -> list[int]:
    """The N a trial may measure, smallest first: the smallest divisor of the validation interval from 4 up, and a
    second one at least twice as large when the interval allows (a call never spans a validation point; two
    calls per interval). The lever measures the last first (`StepsPerExecution.follow_up`)."""
    divisors = [d for d in range(2, min(MAX_STEPS_PER_EXECUTION, max(2, val_every // 2)) + 1) if val_every % d == 0]
    small = next((d for d in divisors if d >= 4), divisors[-1] if divisors else None)
    if small is None:
        return []
    large = [d for d in divisors if d >= 2 * small]
    return [small] + ([large[-1]] if large else [])


def no_values_reason(val_every: int) -> str:
    """Why `steps_per_execution_values` has no N to try, and how to get one: an interval under 4 steps is too
    short; a longer one has no small divisor (a script's 96 steps validate every 19, 116 every 23: primes)."""
    if val_every < 4:
        return f"the validation interval ({val_every} steps) is too short"
    return (f"the validation interval ({val_every} steps) has no divisor from 2 to "
            f"{min(MAX_STEPS_PER_EXECUTION, val_every // 2)}, so no N steps per call fit it (a call must not span "
            f"a validation point); --val-every {val_every // 4 * 4} lets it try")


def configuration_step_ms(rung: Rung | None) -> float | None:
    """The configuration's time per step: from its trial's throughput over all of B's runs (their geometric mean)
    when a trial measured it, else its run's median step.

    One run's median step decided this lever before, and this machine runs a
    process at one of two speeds: the XLA rung's own run read 3.42 ms while
    its trial's speed pairs measured 5.52 ms a step. The trial's 4-7 runs
    are the better estimate; a study whose processes all ran at one of the
    two speeds still decides by that speed (benchmarks/RESULTS.md, Trial efficiency)."""
    if rung is None:
        return None
    rate = rung.decision.speed.b_samples_per_s if rung.decision is not None else None
    ran = rung.summary.settings if rung.summary else None
    batch = (ran.batch_size if ran else None) or rung.settings.batch_size  # as run
    if isinstance(rate, (int, float)) and rate > 0 and batch:
        return 1000.0 * batch / rate
    v = rung.summary.median_step_ms if rung.summary else None
    return float(v) if isinstance(v, (int, float)) and v > 0 else None


class StepsPerExecution(Lever):
    name = "steps_per_execution"
    order = 40
    title = "Steps per execution"
    page = "xla"
    intro = ("Short steps spend much of their time in the host's per-call overhead: several steps per call of "
             "the compiled function (compile(steps_per_execution=N)) amortize it.")
    settings_changed = ("steps_per_execution",)

    def candidates(self, decisions: StudyDecisions) -> list[Candidate]:
        best = decisions.best
        assert best is not None, "the baseline is measured first"
        base = best.settings
        step = configuration_step_ms(best)
        values = steps_per_execution_values(base.effective_val_every())
        skip: Skip | None = None
        if as_written(decisions).calls > 1 and base.calls > 1:  # the script's own N: do they pay?
            return [Candidate(self.rung_kind, "spe1", base.with_(steps_per_execution=1),
                              f"the script runs {base.calls} steps per call: measured at 1, in case the longer "
                              "call costs more than the host overhead it saves", best)]
        if base.calls > 1:
            skip = Skip(SKIPPED, f"already {base.calls} steps per call")
        elif step is None:
            skip = Skip(SKIPPED, "the step time of the best configuration was not measured")
        elif step >= SHORT_STEP_MS:
            skip = Skip(SKIPPED, f"a step takes {step:.1f} ms, so the host's per-call overhead is a small share "
                                 f"(tried below {SHORT_STEP_MS:g} ms)")
        elif not values:
            skip = Skip(SKIPPED, no_values_reason(base.effective_val_every()))
        if skip:
            return [Candidate(self.rung_kind, self.name, base, str(skip), best, skipped_reason=skip)]
        n = values[-1]
        return [Candidate(self.rung_kind, f"spe{n}", base.with_(steps_per_execution=n),
                          f"a step takes {step:.1f} ms: {n} steps per call of the compiled function amortize "
                          "the host's per-call overhead", best)]

    def follow_up(self, decisions: StudyDecisions) -> list[Candidate]:
        """The smaller N, once the largest was judged slower than its reference (see the module's docstring)."""
        measured = [r for r in decisions.rungs if r.kind == self.rung_kind]
        if len(measured) != 1 or measured[0].decision is None or measured[0].decision.kept \
                or measured[0].decision.speed.verdict != SLOWER or measured[0].settings.calls == 1:
            return []
        large, reference = measured[0], decisions.rung(measured[0].compared_with)
        assert reference is not None, "a judged rung was measured against one"
        small = steps_per_execution_values(reference.settings.effective_val_every())[0]
        if small >= large.settings.calls:
            return []
        return [Candidate(self.rung_kind, f"spe{small}", reference.settings.with_(steps_per_execution=small),
                          f"{large.settings.steps_per_execution} steps per call were slower: {small} amortize "
                          "less of the host's per-call overhead in a shorter call", reference)]

    def slug_for(self, settings) -> str:
        return f"spe{settings.steps_per_execution}"

    def findings(self, rung, verdict) -> list[FindingDoc]:
        n = rung.settings.calls
        if n == 1:  # the script's own N measured against one step per call: no short-steps finding
            return []
        return [F.Finding(F.SHORT_STEPS, f"steps are short, so {n} steps per call were measured: {outcome(verdict)}",
                          f"model.compile(..., steps_per_execution={n})" if verdict.kept else "",
                          data={"steps_per_execution": n}).to_dict()]

    def changes(self, rec, base, findings, code=None) -> list[C.Change]:
        n = rec.steps_per_execution
        if n is None:  # left as the workload wrote it: nothing to change
            return []
        return [C.CompileArgument(name="steps_per_execution", value=n, unsaid=1,  # Keras' default when unsaid
                                  differs=n != base.steps_per_execution,
                                  why=f"{n} steps per call of the compiled step: compile(steps_per_execution={n})"
                                  + (" (short steps: less host overhead)" if n > 1 else ""))]


LEVER = StepsPerExecution()
