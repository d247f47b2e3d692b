"""How a trial measured, as data (`Design`), and the one place its words are made (`Design.words`).

study.yaml records each trial's design as numbers and names (its rung's `design_record`): the pairs, whether
the arms shared a process, the arms that trained the full length for the accuracy gate and those lengths, the
steady seconds aimed at and measured, the accuracy points compared. The sentence the report, the wizard and
`tfturbo ab` show is made from it here, so no code reads a figure back out of the words (a study.yaml from
before the record keeps its sentence and is shown as written).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

from ..numbers import counted, num

if TYPE_CHECKING:  # the verdict's class: its accuracy points are worded from it
    from .verdict import AccuracyVerdict

PAIRED, SPEED_ONLY, FULL = "paired", "speed_only", "full"  # what the replicate pairs after the gate measure


class LengthsDoc(TypedDict, total=False):
    a_steps: int
    b_steps: int
    a_batch: int | None
    b_batch: int | None


class DesignDoc(TypedDict, total=False):
    """`Design` as study.yaml's `design_record` holds it (its fields, a tuple as a list)."""

    pairs: int
    pairs_measure: str
    gate_arms: list[str]
    lengths: LengthsDoc
    steady_s_aimed: float
    steady_s_measured: float | None
    confidence: float
    accuracy_points: int
    noise_seeds: list[int]
    reused_from: str
    seed_runs: int | None
    profiled_in: dict[str, str]
    b_seeds: list[int]


@dataclass(frozen=True)
class Lengths:
    """The full-length runs' steps and batches (the accuracy gate's runs; every run's when pairs train in full)."""

    a_steps: int
    b_steps: int
    a_batch: int | None = None
    b_batch: int | None = None

    def words(self) -> str:
        return full_length_words(self.a_steps, self.b_steps, self.a_batch, self.b_batch)


@dataclass(frozen=True)
class Design:
    """How one trial measured (`judging.design_record`)."""

    pairs: int  # replicate pairs the speed verdict used
    pairs_measure: str  # PAIRED: speed only, both arms in one process | SPEED_ONLY: in their own | FULL: full length
    gate_arms: tuple[str, ...]  # the arms that trained the full length with validation, in the order they ran
    lengths: Lengths
    steady_s_aimed: float  # the steady seconds each speed-only replicate aimed at (SpeedRule.steady_s)
    steady_s_measured: float | None  # per arm per paired process (the median run's); None: no pair shared one
    confidence: float = 0.95  # the speed verdict's: identical settings called different at most 1 - this
    accuracy_points: int = 0  # validation points the accuracy gate averaged over (0: no paired accuracy)
    # the seeds the accuracy reference trained again from, for the trainings' noise in the gate (issue 39)
    noise_seeds: tuple[int, ...] = ()
    reused_from: str = ""  # the run A's full-length run re-used, trained the same way earlier in the study (issue 40)
    # how many of those trainings this trial made itself (`Trial.seed_runs`): a later rung of a study is judged
    # against the first trial's and trains none (None: a study.yaml from before the count, which did not say)
    seed_runs: int | None = None
    # arm ("a", "b") -> the run holding its configuration's profile: a configuration is profiled once per study,
    # so an arm's profile may be an earlier rung's run (`Trial.profiled_in`); {}: a study from before the record,
    # whose profiles are where they were (`profile.rung_profile_dirs`)
    profiled_in: dict[str, str] = field(default_factory=dict)
    # the seeds B trained again from, when the user took the way forward "train more seeds" (`Trial.more_seeds`)
    b_seeds: tuple[int, ...] = ()

    def words(self, acc: AccuracyVerdict | None = None, pairs: str | None = None,
              steady: str | None = None) -> str:
        """The design in words, for the report, the wizard and `ab` (`acc`: the accuracy verdict, whose points
        and examples the words give exactly; `pairs`, `steady`: words for a study's range of trials instead of
        this one's figures — the seed runs are then the study's, trained once)."""
        measured = self.steady_s_measured
        where = "in one process" if measured is not None else "in their own processes"
        ratio = ("a pair's ratio: the median, over the hand-overs between its arms, of the windows either side; "
                 if measured is not None else "")
        count = f"{pairs} replicate pairs per trial (each row gives its own)" if pairs else counted(
            self.pairs, "replicate pair")
        text = (f"{count}, each an A and a B run {where}, alternating AB/BA; "
                f"throughput: the median rate of device-drained windows of the steady state; {ratio}the speed "
                f"interval is a Student-t interval across the pairs' ratios, so it includes run-to-run variation, "
                f"widened for the trial's looks after each pair, so identical settings are called different at most "
                f"{1 - self.confidence:.0%} of the time; a trial stops early once the verdict is clear or the "
                f"pairs left could hardly change it. ")
        full = self.lengths.words()
        reused = (f" (A's re-uses {self.reused_from}, trained the same way earlier in this study)"
                  if self.reused_from else "")
        if self.pairs_measure == PAIRED:
            gate = "B's first run trained" if self.gate_arms == ("b",) or self.reused_from else "A and B each trained"
            text += (f"Before the pairs, {gate} {full} with validation{reused}, for the accuracy gate only (a "
                     f"ratio of two separate full-length runs does not count for speed); ")
            text += (f"each pair measures speed only with A and B in one process, in interleaved blocks (ABBA "
                     f"BAAB) so a drift of the machine falls on both, each arm "
                     f"{steady_words(steady if steady else measured)} (at least {self.steady_s_aimed:g} s; the "
                     f"two arms together as long as the process's own start-up, builds and warm-ups)"
                     if measured is not None else
                     f"each pair measures speed only, sized for {self.steady_s_aimed:g} s of steady state each")
        elif self.reused_from:
            text += (f"Before the pairs, B's first run trained {full} with validation{reused}, for the accuracy "
                     f"gate only (a ratio against a run trained minutes before does not count for speed); " +
                     (f"the pairs measure speed only, sized for {self.steady_s_aimed:g} s of steady state each"
                      if self.steady_s_aimed else f"each pair then trains {full}"))
        elif self.pairs_measure == SPEED_ONLY:
            text += (f"The first pair trains {full} with validation; the others measure speed only, sized for "
                     f"{self.steady_s_aimed:g} s of steady state each")
        else:
            text += f"Each pair trains {full}"
        if acc is not None and acc.paired and acc.examples:
            over = (f"averaged over the last {self.accuracy_points} validation points" if self.accuracy_points > 1
                    else "at the one validation point they share")
            at = "at equal samples seen" if acc.exact_points() else f"at the nearest samples seen ({acc.points_note()})"
            text += f"; accuracy paired on the same {acc.paired_on()} {at}, {over}"
            text += f" ({acc.examples_words()})" if acc.examples_words() else ""
            if self.noise_seeds:
                by = ("" if self.seed_runs is None else " (once for the study, by its first trial)" if pairs
                      else " (by an earlier trial of the study)" if not self.seed_runs
                      else " (by this trial)" if self.seed_runs >= len(self.noise_seeds) else
                      f" ({self.seed_runs} of them by this trial)")
                text += (f"; the accuracy reference trained again from seed {', '.join(map(str, self.noise_seeds))}"
                         f"{by}, so the interval holds the trainings' noise as well as the examples'")
            if self.b_seeds:
                text += (f"; B trained again from seed {', '.join(map(str, self.b_seeds))} (the way forward "
                         "\u201ctrain more seeds\u201d), so each arm's mean rests on several trainings")
            if len(acc.outputs) > 1:
                text += (f", each of the model's {len(acc.outputs)} outputs judged on its own metric "
                         f"({', '.join(o.metric or '?' for o in acc.outputs)}) with a {acc.confidence:.1%} interval "
                         "(Bonferroni: together 95%)")
        return text + "."

    def to_dict(self) -> DesignDoc:
        lengths = self.lengths
        return {"pairs": self.pairs, "pairs_measure": self.pairs_measure, "gate_arms": list(self.gate_arms),
                "lengths": {"a_steps": lengths.a_steps, "b_steps": lengths.b_steps, "a_batch": lengths.a_batch,
                            "b_batch": lengths.b_batch},
                "steady_s_aimed": self.steady_s_aimed, "steady_s_measured": self.steady_s_measured,
                "confidence": self.confidence, "accuracy_points": self.accuracy_points,
                "noise_seeds": list(self.noise_seeds), "reused_from": self.reused_from, "seed_runs": self.seed_runs,
                "profiled_in": dict(self.profiled_in), "b_seeds": list(self.b_seeds)}

    @classmethod
    def from_dict(cls, d: Any) -> Design | None:
        """A study.yaml's record; None when there is none (a study from before it) or it cannot be read."""
        if not isinstance(d, dict) or not isinstance(d.get("lengths"), dict):
            return None
        try:
            lengths = d["lengths"]
            return cls(int(d["pairs"]), str(d["pairs_measure"]), tuple(str(a) for a in d.get("gate_arms") or ()),
                       Lengths(int(lengths["a_steps"]), int(lengths["b_steps"]), _int(lengths.get("a_batch")),
                               _int(lengths.get("b_batch"))),
                       float(d.get("steady_s_aimed") or 0.0), num(d.get("steady_s_measured")),
                       float(d.get("confidence") or 0.95), int(d.get("accuracy_points") or 0),
                       tuple(int(x) for x in d.get("noise_seeds") or ()), str(d.get("reused_from") or ""),
                       _int(d.get("seed_runs")),
                       _names(d.get("profiled_in")), tuple(int(x) for x in d.get("b_seeds") or ()))
        except (KeyError, TypeError, ValueError):
            return None


def _names(value: Any) -> dict[str, str]:
    """A record's arm -> run name mapping, read tolerantly (what is not a name is dropped)."""
    return {str(k): v for k, v in value.items() if isinstance(v, str) and v} if isinstance(value, dict) else {}


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) else None


def study_words(designs: list[tuple[Design, AccuracyVerdict | None]]) -> str:
    """A study's trials in words (the report's "How each trial measured"): the first trial's design with the
    range of pairs of every trial and, where paired processes were sized per trial, the range of their steady
    seconds ("" without a trial)."""
    if not designs:
        return ""
    pairs = sorted({d.pairs for d, _ in designs})
    count = f"{pairs[0]}" if len(pairs) == 1 else f"{pairs[0]} to {pairs[-1]}"
    steady = sorted({round(d.steady_s_measured) for d, _ in designs if d.steady_s_measured is not None})
    first, acc = designs[0]
    span = f"{steady[0]}–{steady[-1]}" if len(steady) > 1 and first.steady_s_measured is not None else None
    return first.words(acc, pairs=count, steady=span)


def full_length_words(a_steps: int, b_steps: int, a_batch: int | None, b_batch: int | None) -> str:
    """The first pair's lengths exactly: "96 steps", "96 steps of A, 48 of B (4,800 samples each)", or, when
    A's samples are not a whole number of B's batches (`equal_samples` trains B to the nearest whole step;
    the issue 22 walk read "96 steps of A, 50 of B (equal samples)" for 4,800 and 5,000 samples), each arm's
    samples. Samples are steps × batch, as the backend counts them: a pass of the data that ends in a
    partial batch gives that step fewer."""
    if a_steps == b_steps and (a_batch == b_batch or not (a_batch and b_batch)):
        return f"{a_steps} steps"
    if not (a_batch and b_batch):
        return f"{a_steps} steps of A, {b_steps} of B (about as many samples)"
    sa, sb = a_steps * a_batch, b_steps * b_batch
    if sa == sb:
        return f"{a_steps} steps of A, {b_steps} of B ({sa:,} samples each at batch {a_batch} and {b_batch})"
    return (f"{a_steps} steps of A ({sa:,} samples at batch {a_batch}), {b_steps} of B ({sb:,} samples at batch "
            f"{b_batch}: the nearest whole number of its batches)")


def seed_runs_words(count: int, seeds: tuple[int, ...] | list[int], reference: str) -> str:
    """The trainings of the accuracy reference from other seeds a trial adds, and why, for its plan line: "2
    trainings of the baseline from seeds 1000, 2000 for the accuracy gate's training noise" ("" for none)."""
    if not count:
        return ""
    named = f" from seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))}" if seeds else ""
    return f"{counted(count, 'training')} of {reference}{named} for the accuracy gate's training noise"


def steady_words(seconds: float | str | None) -> str:
    """The words for the steady seconds each arm of a paired process measured (a number, or a range)."""
    figure = f"{seconds:.0f}" if isinstance(seconds, (int, float)) else seconds
    return f"measuring about {figure} s of steady state"
