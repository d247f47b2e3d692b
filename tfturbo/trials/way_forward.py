"""What would decide an inconclusive accuracy verdict, and which of those ways to take.

On a small validation set (400 examples) every change that alters the numerics
ends "accuracy inconclusive — about 2,309 examples would decide it", even one
that is 1.26x faster: honest, and a dead end. The three ways forward, each
measured or computed from what the trial already recorded:

- judge on the validation loss: the same examples, paired, and continuous, so
  its interval is far tighter than a 0/1 accuracy's on a small set;
- a tolerance the user chooses: the smallest accuracy tolerance under which the
  measured interval passes (recorded in the study and the report when used);
- more validation examples, when the data holds them.

Nothing here keeps anything: the front ends show the options and the
recommendation, and the user decides — in the wizard with a button on the
rung's page (`StudyEngine.rejudge`: the loss and a tolerance judge the runs
already measured again; more examples measure the trial again), on the command
line with `tfturbo tune`/`ab` `--judge-on loss`, `--accuracy-tolerance PP`,
`--val-examples N` (tune's text output ends with these options for each such
rung: `commands.tune.ways_forward_text`). The choice is recorded with the rung's verdict (`rule`,
`way_forward` in study.yaml) and named in the report.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Iterable
from pathlib import Path

from ..runfiles import RUNS_DIR, load_run
from ..run_summary import RunSummary

from .accuracy import POINTS, ArmData, gate
from .runs import A
from ..verdicts import Verdict
from .verdict import INCONCLUSIVE, WITHIN, AccuracyVerdict, Tolerance

FASTER = Verdict.FASTER
# every way forward `WayForward.lines` offers, in the order it lists them after the recommended one: each is a
# button in the wizard (`tfturbo_gui.cards.WayForwardBar`) and an option of `tfturbo tune`/`ab`
WAYS = ("loss", "seeds", "examples", "tolerance")


@dataclass(frozen=True)
class WayForward:
    """The options for one inconclusive verdict, and the one recommended."""

    loss: AccuracyVerdict | None  # the same trial judged on the per-example validation loss
    tolerance_pp: float | None  # the accuracy tolerance under which the measured interval passes
    examples_needed: int | None
    examples_available: int | None  # validation examples the data holds (None: not known)
    recommended: str  # "loss" | "examples" | "seeds" | "" — never "tolerance" (it accepts a model, decides nothing)
    worst_pp: float | None = None  # the interval's worse end (pp below A): what a tolerance would accept
    also_worse: tuple[str, ...] = ()  # every loss worse beyond its noise (`AccuracyVerdict.also_worse`)
    seeds: bool = False  # the trainings' noise dominates the interval: more trainings, not examples, decide it

    def lines(self, offered: Iterable[str] | None = None) -> list[str]:
        """The options in words, the recommended one first and marked; `offered`: only these ways (a page names
        only the buttons it shows: "more examples" is no way where the trial was measured against a later
        configuration)."""
        options = {}
        if self.loss is not None and self.loss.delta is not None:
            options["loss"] = (f"Judge on the validation loss (paired on the same examples, continuous, so tighter "
                               f"on a small set): {self.loss.text()} — {self.loss.verdict}.")
        if self.seeds:
            options["seeds"] = ("Train more seeds: the trainings' noise dominates this interval, so more "
                                "validation examples would not narrow it; each seed of either configuration costs "
                                "one full-length training (tfturbo ab --b seed=N, or a study's reference trained "
                                "again).")
        if self.examples_needed and self.examples_available and self.examples_available < self.examples_needed:
            pass  # not a way: the data holds too few (the verdict's own words say how many it had)
        elif self.examples_needed and not self.seeds:
            have = f" (the data holds {self.examples_available:,})" if self.examples_available else ""
            options["examples"] = (f"Validate on more examples: about {self.examples_needed:,} would decide it"
                                   f"{have}; --val-examples {self.examples_needed}.")
        if self.tolerance_pp is not None:
            worst = f"{self.worst_pp:.2f}" if self.worst_pp is not None else f"{self.tolerance_pp:.2g}"
            worse = (" It would also accept what got worse beyond its noise: " + "; ".join(self.also_worse) + "."
                     if self.also_worse else "")
            options["tolerance"] = (f"Accept a larger accuracy tolerance ({self.tolerance_pp:.2g} pp, "
                                    f"--accuracy-tolerance {self.tolerance_pp:.2g}): it decides nothing, it accepts "
                                    f"a model whose accuracy may be up to {worst} pp below the baseline's (the "
                                    f"interval's worse end).{worse} A study setting: the confirmation, the record "
                                    "and the report use and state it.")
        order = [self.recommended] + [k for k in WAYS if k != self.recommended]
        shown = set(options) if offered is None else set(offered) & set(options)
        order = [k for k in order if k in shown]
        return [("Recommended: " if k == self.recommended else "Or: ") + options[k] for k in order]


def way_forward(acc: AccuracyVerdict, tolerance: Tolerance, a: ArmData | None = None, b: ArmData | None = None,
                examples_available: int | None = None) -> WayForward | None:
    """The ways to decide `acc` (None unless it is an inconclusive accuracy verdict with an interval)."""
    if acc.verdict != INCONCLUSIVE or acc.ci95 is None or acc.is_loss or acc.delta is None:
        return None
    # the trial's arms judged on the per-example loss, by the gate's own paired rule (each output's own loss, as
    # the rule "loss" judges a model with several outputs)
    loss = gate(a, b, replace(tolerance, judge_on="loss"), POINTS) if a is not None and b is not None else None
    loss = loss if loss is not None and loss.paired and loss.is_loss and loss.delta is not None else None
    lo = acc.ci95[0]
    tolerance_pp = math.ceil(-lo * 100 * 10) / 10 if lo < 0 else None  # the worse end, rounded up to 0.1 pp
    half, room = (acc.ci95[1] - lo) / 2, acc.delta + tolerance.accuracy_pp / 100
    needed = int(math.ceil(acc.examples * (half / room) ** 2)) if half > 0 and room > 0 else None
    noise = acc.noise or {}
    seeds = float(noise.get("training_se") or 0.0) > float(noise.get("examples_se") or 0.0)
    also_worse = tuple(acc.also_worse)
    if loss is not None and loss.verdict == WITHIN:
        recommended = "loss"
    elif seeds:
        recommended = "seeds"
    elif needed and (examples_available is None or examples_available >= needed):
        recommended = "examples"
    else:
        recommended = ""  # nothing the data allows decides it; a looser tolerance is never the recommendation
    return WayForward(loss, tolerance_pp, needed, examples_available, recommended,
                      -lo * 100 if lo < 0 else None, also_worse, seeds)


def examples_available(summaries: list[RunSummary]) -> int | None:
    """Validation examples the data holds, when the runs show it: a run that asked for more examples than it
    paired used them all. None: every run paired as many as it asked for (the data may hold more)."""
    for s in summaries:
        meta = s.paired_validation
        asked = s.settings.val_examples if s.settings else None
        used = meta.get("examples") if isinstance(meta, dict) else None
        if isinstance(used, int) and isinstance(asked, int) and 0 < used < asked:
            return used
    return None


def for_rung(study_dir: Path, rung, tolerance: Tolerance, baseline) -> WayForward | None:
    """`way_forward` of a study's rung whose accuracy alone stood in the way (faster, accuracy inconclusive),
    its arms read from its replicate runs (each one's arm and replicate as the rung recorded them,
    `Rung.role`), A's from `baseline`'s run (the study's baseline rung, or None) when its trial trained no
    full-length A: that run is what the gate judged it against. `tolerance`: the rule it was judged by (its decision's own
    when it recorded one)."""
    decision = getattr(rung, "decision", None)
    if decision is None or decision.accuracy is None or decision.accuracy.verdict != INCONCLUSIVE \
            or decision.speed.verdict != FASTER:
        return None
    a, b = ArmData(), ArmData()
    seeds = []  # the reference trained from other seeds (`Trial.seed_settings`: replicates 0, -1, ... of A)
    for name in rung.replicates or [rung.name]:
        record = load_run(Path(study_dir) / RUNS_DIR / name)
        if record.summary and record.summary.settings and record.summary.settings.speed_only:
            continue  # as the trial's gate: speed-only runs do not validate
        role = rung.role(name)  # as study.yaml recorded it (`Rung.role`)
        if role.seed:
            seeds.append(record)
        else:
            (a if role.arm == A else b).add_run(record.summary, record.path)
    if not (a.correct or a.loss) and baseline is not None and baseline.run:
        record = load_run(Path(study_dir) / baseline.run)
        a.add_run(record.summary, record.path)
    for record in seeds:
        a.add_run(record.summary, record.path)
    return way_forward(decision.accuracy, decision.rule or tolerance, a, b,
                       examples_available(a.summaries + b.summaries))


def rule_for(way: str, forward: WayForward, tolerance: Tolerance, accuracy_pp: float | None = None) -> Tolerance:
    """The accuracy rule a way forward judges by: on the loss (the same tolerances), or with an accuracy
    tolerance (`accuracy_pp`, the user's; by default the one the measured interval passes at); "metric" undoes
    "loss" (the validation metric again, the same tolerances)."""
    if way == "loss":
        return replace(tolerance, judge_on="loss")
    if way == "metric":
        return replace(tolerance, judge_on="metric")
    pp = accuracy_pp if accuracy_pp is not None else forward.tolerance_pp
    if way == "tolerance" and pp is not None:
        return replace(tolerance, accuracy_pp=pp, judge_on="metric")
    raise ValueError(f"no rule for the way forward {way!r}")


def can_use_more_examples(forward: WayForward, measured_against_baseline: bool) -> bool:
    """Whether measuring the trial again on `examples_needed` examples can decide it here: the data may hold
    them (or is known to), and the trial's reference is the baseline's configuration, whose runs then validate
    on them too (a rung measured against a later configuration is judged against the baseline's one run)."""
    needed, available = forward.examples_needed, forward.examples_available
    return bool(needed and measured_against_baseline and not forward.seeds  # the trainings' noise: seeds decide
                and (available is None or available >= needed))
