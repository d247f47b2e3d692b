"""The one speed-up a configuration is shown with: on the wizard's pages, in the compare table and its CSV,
and in the PDF.

A study measures a configuration more than once: its own rung's trial (against
the best configuration kept before it, which may be the baseline), and, for the
recommendation, the confirmation trial against the baseline. Single runs have
their own rates too. Shown side by side these disagreed (1.55x, 1.63x, 1.69x
and a one-run 1.92x for one configuration), so every front end asks this
module: a configuration's headline is the last trial that measured it against
the baseline's configuration, with that trial's interval and pairs; a
configuration never measured against the baseline has its own trial's ratio,
which says what it was measured against. Single runs' rates are details.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from .compare import replicate_key
from .numbers import counted
from .stats import replicate_ratio_ci
from .trials.speed import SpeedRule
from .trials.verdict import Says, speed_verdict_of
from .tune.study import Rung, RungKind
from .verdicts import Verdict


@dataclass(frozen=True)
class Headline:
    """B's throughput per sample over the baseline's (or over `against` when `vs_baseline` is False)."""

    ratio: float
    ci95: tuple[float, float]
    verdict: str
    pairs: int
    trial: str  # the rung whose trial measured it (the last, when several trials' pairs are pooled)
    against: str  # the rung that trial measured it against
    vs_baseline: bool
    trials: tuple[str, ...] = ()  # every rung whose trial's pairs it pools (empty: `trial` alone)
    # what `against` and each trial are, in words ("the baseline", "mixed_float16, batch 64", "the confirmation"):
    # a user reads configurations, not run folders ("vs 01-baseline", "05-confirmation's trial", "04-spe20")
    words: tuple[tuple[str, str], ...] = ()

    @property
    def against_words(self) -> str:
        return self.word(self.against)

    def word(self, name: str) -> str:
        """Rung `name` in words (its name when it is none of this headline's)."""
        return dict(self.words).get(name, name)

    @property
    def has_interval(self) -> bool:
        return all(math.isfinite(c) for c in self.ci95)

    def text(self, times: str = "×") -> str:
        """'1.63× [1.52, 1.75]'."""
        if not math.isfinite(self.ratio):
            return "no throughput measured"
        interval = f" [{self.ci95[0]:.2f}, {self.ci95[1]:.2f}]" if self.has_interval else ""
        return f"{self.ratio:.2f}{times}{interval}"

    def source(self, own: str = "") -> str:
        """'vs 01-baseline, 4 pairs (05-confirmation's trial)': what the number is; `own`: the rung the number
        is shown for — its own trial is "its own trial" (the Record page said "(02-xla's trial)" of 02-xla)."""
        if len(self.trials) > 1:
            return f"vs {self.against_words}, {counted(self.pairs, 'pair')} ({self.pooled_words(own)})"
        whose = " (its own trial)" if self.trial and self.trial == own else \
            f" ({self.word(self.trial)}'s trial)" if self.trial else ""
        return f"vs {self.against_words}, {counted(self.pairs, 'pair')}{whose}"

    def pooled_words(self, own: str = "") -> str:
        """'its own trial and the confirmation's, pooled': the trials whose pairs it pools."""
        return pooled_words(tuple(self.word(t) if t != own else t for t in self.trials), own)


def pooled_words(trials: tuple[str, ...], own: str = "") -> str:
    """'its own trial and the confirmation's, pooled': the trials (in words) whose pairs one headline pools."""
    names = [("its own trial" if t == own else f"{t}'s") for t in trials]
    names.sort(key=lambda n: n != "its own trial")
    return (", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]) + ", pooled"


# the key a configuration's speed-up is shown under (the verdict card, the Record page): the value says what it
# was measured against (`Headline.source`, or the trial's own "vs …"), so the key never repeats it ("Speed-up vs
# baseline: 1.42× … vs 01-baseline" said the baseline twice)
SPEED_UP = "Speed-up"

BASELINE_HEADLINE = Headline(1.0, (1.0, 1.0), "baseline", 0, "", "", True)


def config_words(name: str | None, rungs: list[Rung]) -> str:
    """A rung of the study in words, as the pages and the report name it: "the baseline", "the confirmation" (its
    second: "the 2nd confirmation"), else its configuration against the baseline's (`RunSettings.name_against`:
    "mixed_bfloat16", "20 steps per call"); never its run folder's name."""
    rung = next((r for r in rungs if r.name == name), None)
    if rung is None:
        return "the baseline" if not name else name
    if rung.kind == RungKind.BASELINE or rung is rungs[0]:  # (an old study.yaml may not say its kind)
        return "the baseline"
    if rung.kind == "confirmation":
        n = [r.name for r in rungs if r.kind == "confirmation"].index(rung.name) + 1
        return "the confirmation" if n == 1 else f"the {n}{'nd' if n == 2 else 'rd' if n == 3 else 'th'} confirmation"
    return rung.settings.name_against(rungs[0].settings)


def step_words(name: str, rungs: list[Rung]) -> str:
    """Which of a configuration's rungs `name` is, beside its configuration's name where two rungs share one
    ("XLA + batch 128 + learning rate x2, the confirmation" / "…, the batch size step"): "the baseline", "the
    confirmation" (`config_words`), else the checklist step that tried it. Never its run folder."""
    words = config_words(name, rungs)
    rung = next((r for r in rungs if r.name == name), None)
    if rung is None or words != rung.settings.name_against(rungs[0].settings):
        return words
    from .tune.levers import LEVERS

    title = next((lv.title for lv in LEVERS if lv.rung_kind == rung.kind), "")
    return f"the {title[:1].lower()}{title[1:]} step" if title else words


def _words(names: list[str], rungs: list[Rung]) -> tuple[tuple[str, str], ...]:
    return tuple((n, config_words(n, rungs)) for n in dict.fromkeys(names) if n)


def configuration_key(rung: Rung) -> tuple[Any, ...]:
    """What makes two rungs one configuration (a kept rung and its confirmation): their trainings' settings."""
    return replicate_key(rung.settings.to_dict())


def _measured(rung: Rung) -> bool:
    return rung.skipped_reason is None and rung.decision is not None and rung.decision.speed.replicates >= 1 \
        and math.isfinite(rung.decision.speed.ratio)


def headline(name: str, rungs: list[Rung]) -> Headline | None:
    """The headline of rung `name`'s configuration; None when no trial measured it (skipped, failed before a
    ratio, a run outside the ladder)."""
    by_name = {r.name: r for r in rungs}
    rung = by_name.get(name)
    if rung is None or rung.skipped_reason is not None:  # a skipped step was never measured
        return None
    base = rungs[0] if rungs and rungs[0].kind == RungKind.BASELINE else None
    if rung is base:
        return BASELINE_HEADLINE
    key = configuration_key(rung)
    against_base = [r for r in rungs if base is not None and _measured(r) and configuration_key(r) == key
                    and r.compared_with in by_name
                    and configuration_key(by_name[r.compared_with]) == configuration_key(base)]
    shown: Headline | None = _pooled(against_base) if len(against_base) > 1 else \
        _of(against_base[-1], True) if against_base else _of(rung, False) if _measured(rung) else None
    if shown is None:
        return None
    # the words of what it and its own rung were measured against (`reason_beside` names the latter)
    return replace(shown, words=_words([shown.against, shown.trial, *shown.trials, rung.compared_with or ""],
                                       rungs))


def _pooled(trials: list[Rung]) -> Headline:
    """One estimate from every pair of `trials`, each of which compared the same two configurations: the pairs'
    ratios together, with their interval at the trials' confidence (`SpeedRule.confidence`)."""
    ratios = [r for t in trials if t.decision is not None for r in t.decision.speed.ratios
              if math.isfinite(r) and r > 0]
    last = _of(trials[-1], True)
    if len(ratios) < 2:
        return last
    ratio, ci = replicate_ratio_ci(ratios, SpeedRule().confidence)
    return Headline(ratio, ci, speed_verdict_of(ci), len(ratios), last.trial, last.against, True,
                    tuple(t.name for t in trials))


def _of(rung: Rung, vs_baseline: bool) -> Headline:
    assert rung.decision is not None, "a measured rung (_measured)"
    speed = rung.decision.speed
    return Headline(speed.ratio, (speed.ci95[0], speed.ci95[1]), speed.verdict, speed.replicates, rung.name,
                    rung.compared_with or "the baseline", vs_baseline)


def headlines(rungs: list[Rung]) -> dict[str, Headline]:
    """Every measured rung's headline, by rung name."""
    out = {r.name: headline(r.name, rungs) for r in rungs}
    return {k: v for k, v in out.items() if v is not None}


def reason_beside(rung: Rung, shown: Headline | None) -> str:
    """A rung's reason to show beside its configuration's headline: the trial's own ratio gives way to the
    verdict's word when it is that headline (the number is beside it), and is labelled as the rung's own trial
    when the headline is another trial's (a PDF Decision cell read "faster: 1.72× …" beside the confirmation's
    1.91×)."""
    decision = rung.decision
    if decision is None:
        return ""
    speed = decision.speed
    if shown is not None and (shown.trial == rung.name or rung.name in shown.trials):  # its trial is the number
        said = "not measurably faster" if speed.verdict == Verdict.NO_CHANGE else speed.verdict
    else:
        lo, hi = speed.ci95
        against = shown.word(rung.compared_with) if shown is not None and rung.compared_with else \
            rung.compared_with or "the baseline"
        said = (f"its own trial, against {against}: {speed.ratio:.2f}× "
                f"[{lo:.2f}, {hi:.2f}] over {counted(speed.replicates, 'pair')}, {speed.verdict}")
    # the part that says the ratio (`Says.RATIO`, as the keep rule recorded it) gives way: put in its place
    return "; ".join(said if part.says == Says.RATIO else part.text for part in decision.said)
