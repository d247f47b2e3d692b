"""Judging a trial: whether it is decided, its pairs' rates and ratios, what measurement it lacks, and its
verdict with the design record of how it measured.

Reads the schedule (`trials.schedule`: its setup and runs) and never plans a run; the speed rule
(`trials.speed`), the accuracy gates (`trials.label_free`, `trials.accuracy`) and the keep rule
(`trials.verdict`) are applied here to a trial's runs.
"""

from __future__ import annotations

import math
import time

from ..numbers import counted
from . import label_free
from .design import FULL, PAIRED, SPEED_ONLY, Design, Lengths
from .runs import A, B, COMPLETED, MeasuredRun, steady_s
from .schedule import Schedule
from .verdict import (NOT_APPLIED, NOT_JUDGED, NOT_MEASURED, AccuracyVerdict, Change, ReasonPart, Says, SpeedVerdict,
                      TrialVerdict, keep)


def decided(trial: Schedule) -> bool:
    """Whether the trial needs no more runs: B's change did not take effect, a run failed, the pairs reached
    the maximum or cannot reach the minimum, the budget is spent, or the speed rule is clear."""
    if trial.change_missing():  # B trained as A: no pair can measure a change
        return True
    done = len(trial.runs)
    if done and trial.slot(done)[0] == trial.runs[-1].planned.replicate:  # a replicate under way
        return trial.runs[-1].status != COMPLETED  # a failed run ends the trial; its pair is never completed
    if any(r.status != COMPLETED for r in trial.runs if r.planned.replicate >= 1):  # a seed run's failure only
        return True  # leaves the trainings' noise unmeasured
    pairs = trial.complete_pairs()
    if pairs >= trial.rule.max_pairs:  # whatever the runs measured: a trial never runs past its maximum
        return True
    ratios, errors = measured_ratios(trial)
    if len(ratios) + trial.rule.max_pairs - pairs < trial.rule.min_pairs:
        return True  # the pairs left cannot make up the measured pairs the verdict needs
    over_budget = (trial.budget_s is not None and trial.started is not None
                   and time.monotonic() - trial.started > trial.budget_s)
    if over_budget and len(ratios) >= 2:
        return True
    return trial.rule.clear(ratios, errors)


def pair_rates(trial: Schedule) -> tuple[list[float | None], list[float | None], list[float | None], list[float | None]]:
    """Each complete pair's A and B throughput, its B/A ratio (`rule.pair_ratio`) and that ratio's own error
    (`rule.pair_error`); None for a run that measured too little (`rule.rate`) and for the ratio of its pair."""
    a_rates, b_rates, ratios, errors = [], [], [], []
    for ra, rb in trial.speed_pairs():
        if ra is not None and rb is not None and ra.status == COMPLETED and rb.status == COMPLETED:
            a_rates.append(run_rate(trial, ra))
            b_rates.append(run_rate(trial, rb))
            ratios.append(trial.rule.pair_ratio(a_rates[-1], b_rates[-1], rb.summary))
            errors.append(trial.rule.pair_error(rb.summary))
    return a_rates, b_rates, ratios, errors


def run_rate(trial: Schedule, run: MeasuredRun) -> float | None:
    """The run's throughput by `rule.rate`, or None when the backend ran it with another steps_per_execution
    than planned (`whole_calls` lowers it where a call would span a validation point, e.g. B's full-length
    run validating every 15 steps with 4 per call): that rate is another configuration's, not the arm's."""
    ran = run.summary.settings.steps_per_execution if run.summary and run.summary.settings else None
    planned = run.planned.settings.steps_per_execution  # None: as the script wrote it, whatever it is
    if ran is not None and planned is not None and ran != planned:
        return None
    return trial.rule.rate(run.summary)


def shortfall(trial: Schedule) -> str:
    """What would be enough measurement, when the pairs so far are not: "" when they are."""
    ratios, _ = measured_ratios(trial)
    if len(ratios) >= trial.rule.min_pairs:
        return ""
    short = [(r, why) for r in trial.runs if r.status == COMPLETED and trial.speed_pair_number(r.planned.replicate)
             and (why := trial.rule.shortfall(r.summary)) is not None]
    if short:
        run, why = short[-1]
        arm = run.planned.arm
        steps = trial.speed_steps_of(arm)
        label = trial.label_a if arm == A else trial.label_b
        longer = f" (about {steps} steps of {label})" if steps else ""
        # the run by what it is and where it stands in the trial, not by its folder (issue 42: "02-mixed_bfloat16.a1")
        which = f"{label} in pair {trial.speed_pair_number(run.planned.replicate)}"
        return (f"{counted(len(short), 'replicate run')} measured too little steady state — "
                f"{which}: {why}; each needs {trial.rule.needs_text()}: longer runs{longer}, "
                f"or more pairs (at most {trial.rule.max_pairs})")
    was = "was" if len(ratios) == 1 else "were"
    return (f"{len(ratios)} of the {trial.rule.min_pairs} replicate pairs the verdict needs {was} measured: "
            f"run {counted(trial.rule.min_pairs - len(ratios), 'more pair')}")


def measured_ratios(trial: Schedule) -> tuple[list[float], list[float | None]]:
    """The measured pairs' ratios and their own errors (`pair_rates`), the pairs that measured too little left out."""
    _, _, ratios, errors = pair_rates(trial)
    return [r for r in ratios if r], [e for r, e in zip(ratios, errors) if r]


def judge(trial: Schedule) -> TrialVerdict:
    """The trial's verdict from the runs measured so far: speed, accuracy, whether B is kept and why, and how it
    was measured (its design record)."""
    missing = trial.change_missing()
    a_rates, b_rates, ratios, errors = pair_rates(trial)
    speed = (SpeedVerdict(math.nan, (math.nan, math.nan), NOT_APPLIED, 0, note=missing) if missing else
             trial.rule.verdict(a_rates, b_rates, needed=shortfall(trial), pair_ratios=ratios, pair_errors=errors))
    b_runs = [r for r in trial.runs if r.planned.arm == B]
    a_runs = [r for r in trial.runs if r.planned.arm == A]
    validated = [(r.summary, r.run_dir) for r in b_runs  # speed-only runs do not validate
                 if r.status == COMPLETED and not r.planned.settings.speed_only]
    seeds = [(r.summary, r.run_dir) for r in a_runs if r.planned.replicate < 1 and r.status == COMPLETED]
    reference = [*trial.accuracy_reference, *seeds] if trial.accuracy_reference is not None else \
        [(r.summary, r.run_dir) for r in a_runs if r.status == COMPLETED and not r.planned.settings.speed_only]
    acc = not_judged(missing) if missing else label_free.compare_runs(reference, validated, trial.tolerance)

    failed_a = next((r for r in a_runs if r.status != COMPLETED and r.planned.replicate >= 1), None)
    # a training of B from another seed that failed leaves the trainings' noise as it was, not the trial failed
    status = next((r.status for r in b_runs if r.status != COMPLETED and r.planned.replicate >= 1),
                  COMPLETED if b_runs else "crashed")
    b_done = [r.summary for r in b_runs if r.summary is not None]
    findings = [f for s in b_done for f in s.findings or []]
    xla_active = all(r.summary is None or r.summary.xla_active is not False for r in b_runs if r.status == COMPLETED)
    error = next((r.summary.error if r.summary else None for r in b_runs if r.status != COMPLETED), None)
    outputs = next((s.output_dtypes for s in b_done if s.output_dtypes), None)
    kept, said, found = keep(speed, acc, status, findings, trial.label_b, trial.label_a,
                               xla_requested=bool(trial.b.jit_compile and not trial.a.jit_compile),
                               xla_active=xla_active, error=error,
                               change=Change(trial.reference_run_settings() or trial.a, trial.settings_of(B), outputs))
    if failed_a is not None and status == COMPLETED:
        kept = False
        said = [ReasonPart(Says.OTHER, f"the reference run ({trial.label_a}) ended as {failed_a.status}, so nothing "
                                       "was compared")]
    design = design_record(trial, speed.replicates, acc)
    return TrialVerdict(speed, acc, kept, said, found, status, design.words(acc),
                        error=error, rule=trial.tolerance, way_forward=trial.way_forward,
                        steady_s=design.steady_s_measured, design_record=design)


def design_record(trial: Schedule, pairs: int, acc: AccuracyVerdict | None = None) -> Design:
    """How this trial measured, as data (study.yaml's `design_record`; `trials.design` words it)."""
    measure = PAIRED if trial.paired else SPEED_ONLY if trial.rule.steady_s and any(
        r.planned.settings.speed_only for r in trial.runs) else FULL
    paired_accuracy = acc is not None and acc.paired and bool(acc.examples)
    ref = trial.reference_run_settings()
    seeds = sorted({r.planned.settings.seed for r in trial.runs if r.planned.replicate < 1 and r.planned.arm == A} |
                   (trial.reference_seeds() - {ref.seed if ref is not None else trial.a.seed})) \
        if paired_accuracy else []
    found = trial.reused_run()
    return Design(pairs, measure, trial.gate_arms(),
                  Lengths(trial.full_settings(A).steps, trial.full_settings(B).steps, trial.batch(A), trial.batch(B)),
                  trial.rule.steady_s, measured_paired_steady_s(trial), trial.rule.confidence,
                  len(acc.samples_seen) if acc is not None and paired_accuracy else 0, tuple(seeds),
                  found.name if found is not None else "",
                  sum(1 for r in trial.runs if r.planned.replicate < 1 and r.planned.arm == A)
                  if paired_accuracy else 0,
                  trial.profiled_in(),
                  tuple(r.planned.settings.seed for r in trial.runs if r.planned.replicate < 1 and r.planned.arm == B
                        and r.status == COMPLETED) if paired_accuracy else ())


def measured_paired_steady_s(trial: Schedule) -> float | None:
    """The steady seconds each arm measured per paired process (the median run's; `design` words it, the
    verdict records it as a number), None when no pair shared a process."""
    paired = sorted(steady_s(r) for r in trial.runs if r.paired)
    return paired[len(paired) // 2] if paired else None


def not_judged(why: str) -> AccuracyVerdict:
    """The accuracy verdict of a trial whose change did not take effect: B trained A's configuration, so any
    difference is the trainings' noise, never the change's; nothing is judged (`checked` False)."""
    return AccuracyVerdict(None, None, None, NOT_MEASURED, 0, False, checked=False,
                           explanation=f"{NOT_JUDGED}: the change did not take effect ({why})", opens_with=NOT_JUDGED)
