"""The verdict of an A/B trial: speed, accuracy, and whether B is kept.

These are the documents `tfturbo ab --json` prints and that every tune rung
and every wizard verdict carries (`speed` and `accuracy` objects). They are
written and read only through these classes.

The keep rule lives in `keep()`: B is kept only if its run completed, it is
faster beyond the noise, its accuracy is shown to be within the tolerance
(non-inferior), nothing disqualifies it, and the change it claims actually
happened (a rung whose XLA never switched on is not credited to XLA).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, TypedDict

from ..protocol import ErrorDoc, error_of
from ..findings import FindingDoc, findings_in
from .. import findings as F
from ..numbers import counted, num
from ..verdicts import AccuracyVerdict as _Accuracy
from ..verdicts import Verdict
from .design import Design, DesignDoc

# the words of the two verdicts, as this module's code reads them (owned by tfturbo.verdicts)
FASTER, SLOWER, NO_CHANGE = Verdict.FASTER, Verdict.SLOWER, Verdict.NO_CHANGE
FAILED, NOT_ENOUGH, NOT_APPLIED = Verdict.FAILED, Verdict.NOT_ENOUGH, Verdict.NOT_APPLIED
WITHIN, WORSE, INCONCLUSIVE = _Accuracy.WITHIN, _Accuracy.WORSE, _Accuracy.INCONCLUSIVE
NOT_MEASURED = _Accuracy.NOT_MEASURED
# what an accuracy explanation of no runs to compare opens with (`AccuracyVerdict.opens_with`)
NOT_CHECKED, NOT_JUDGED = "accuracy not checked", "not judged"

# B's run statuses that make the trial a failed one: no speed or accuracy verdict, the run's error and its fix.
FAILED_STATUSES = ("failed", "crashed", "nan_stopped")

# Findings of B's own runs that disqualify it whatever its speed: it is not training correctly.
DISQUALIFYING = {
    F.RECOMPILE_STORM: "XLA kept recompiling after warm-up (a recompilation storm)",
    F.LOSS_SCALE_COLLAPSE: "the dynamic loss scale collapsed (most steps were skipped)",
}


class ToleranceDoc(TypedDict, total=False):
    """`Tolerance` as study.yaml's rung `rule` and the options carry it."""

    accuracy_pp: float
    loss_rel: float
    judge_on: str  # JUDGE_ON


class SpeedDoc(TypedDict, total=False):
    """`SpeedVerdict` as written (a rung's `speed`, `ab --json`); NaN is written as None."""

    ratio: float | None
    ci95: list[float | None]
    verdict: str
    replicates: int
    ratios: list[float | None]
    a_samples_per_s: float | None
    b_samples_per_s: float | None
    note: str


class NoiseDoc(TypedDict, total=False):
    """The trainings' noise an accuracy interval holds (`accuracy.TrainingNoise.to_dict`)."""

    training_var: float
    examples_part: float
    training_df: int
    seeds_a: int
    seeds_b: int
    examples_se: float
    training_se: float


class AccuracyDoc(TypedDict, total=False):
    """`AccuracyVerdict` as written (a rung's `accuracy`, `ab --json`)."""

    metric: str | None
    delta: float | None
    ci95: list[float | None] | None
    verdict: str
    n_examples: int
    paired: bool
    samples_seen: list[int]
    b_samples_seen: list[int]
    explanation: str
    checked: bool
    base: float | None
    confidence: float
    outputs: list[AccuracyDoc]
    of_examples: int
    capped: bool
    noise: NoiseDoc
    also_worse: list[str]
    unit: str
    opens_with: str


class Says:
    """What one part of a verdict's reason says (`ReasonPart.says`): a reader picks the parts it needs by this,
    never by their words (the wizard's card leaves out what its facts say, the report puts the headline's word
    in the ratio's place)."""

    NOTE = "note"  # why the rung was measured (its lever's note)
    RULE = "rule"  # the accuracy rule the user chose (`TrialVerdict.rule_text`)
    RATIO = "ratio"  # the speed verdict with the measured ratio ("faster: 1.24× [1.13, 1.36] over 3 … vs A")
    SPEED = "speed"  # the speed verdict without a ratio ("not enough measurement (…)", "no throughput measured")
    ACCURACY = "accuracy"  # the accuracy verdict
    OTHER = "other"  # what else decided it: a disqualifying finding, XLA not active, a failed or cancelled run


class ReasonPartDoc(TypedDict):
    says: str  # Says
    text: str


@dataclass(frozen=True)
class ReasonPart:
    """One part of a verdict's reason: its words, and what they say (`Says`)."""

    says: str
    text: str

    def to_dict(self) -> ReasonPartDoc:
        return {"says": self.says, "text": self.text}


class TrialVerdictDoc(TypedDict, total=False):
    """`TrialVerdict` as written: `ab --json`, and the decision keys of a study.yaml ladder entry."""

    speed: SpeedDoc | None  # None: a ladder entry without a decision
    accuracy: AccuracyDoc | None
    kept: bool
    reason: str
    findings: list[FindingDoc]
    status: str | None  # B's run status (a ladder entry's: its run's, None when it has none)
    design: str | None
    error: ErrorDoc | None
    rule: ToleranceDoc | None
    way_forward: str
    steady_s: float | None
    design_record: DesignDoc | None
    reason_parts: list[ReasonPartDoc]  # `reason` in its parts, each with what it says (from issue 41)
    speed_said: str  # read only: the reason's ratio part in a study written before `reason_parts`


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def _pair(v: Any) -> tuple[float, float] | None:
    if isinstance(v, (list, tuple)) and len(v) == 2 and all(isinstance(x, (int, float)) for x in v):
        return float(v[0]), float(v[1])
    return None


def _json_float(v: float) -> float | None:
    return float(v) if isinstance(v, (int, float)) and math.isfinite(v) else None


JUDGE_ON = ("metric", "loss")  # what the gate judges: the accuracy metric (default) or the per-example loss


@dataclass
class Tolerance:
    """The accuracy rule: what the gate judges (`judge_on`: the validation metric, or the per-example
    validation loss — continuous, so far tighter on a small validation set) and how much worse B may be and
    still count as accurate: percentage points of an accuracy, or a share of the loss."""

    accuracy_pp: float = 0.5
    loss_rel: float = 0.02
    judge_on: str = "metric"

    def __post_init__(self) -> None:
        if self.judge_on not in JUDGE_ON:
            raise ValueError(f"judge_on must be one of {JUDGE_ON}, got {self.judge_on!r}")

    @property
    def is_default(self) -> bool:
        return self == Tolerance()

    def text(self) -> str:
        """The rule in words: "the validation loss, tolerance 2% of the baseline's" / "the validation metric,
        tolerance 0.5 pp (an accuracy) or 2% (a loss)"."""
        if self.judge_on == "loss":
            return f"the validation loss, tolerance {self.loss_rel:.0%} of the baseline's"
        return f"the validation metric, tolerance {self.accuracy_pp:g} pp (an accuracy) or {self.loss_rel:.0%} (a loss)"

    def to_dict(self) -> ToleranceDoc:
        return {"accuracy_pp": self.accuracy_pp, "loss_rel": self.loss_rel, "judge_on": self.judge_on}

    @classmethod
    def from_dict(cls, d: ToleranceDoc | None) -> Tolerance:
        d = d or {}  # what a file lacks is the default (the fields' own)
        judge = d.get("judge_on")
        judge = judge if judge in JUDGE_ON else cls.judge_on
        return cls(accuracy_pp=float(d.get("accuracy_pp", cls.accuracy_pp)),
                   loss_rel=float(d.get("loss_rel", cls.loss_rel)), judge_on=judge)


@dataclass
class SpeedVerdict:
    """B's throughput per sample over A's, across replicates, with its 95% interval."""

    ratio: float
    ci95: tuple[float, float]
    verdict: str
    replicates: int
    ratios: list[float] = field(default_factory=list)  # one per replicate pair, in run order
    a_samples_per_s: float | None = None  # geometric means over the replicates
    b_samples_per_s: float | None = None
    # with NOT_ENOUGH: what would be enough (longer runs, more pairs); NOT_APPLIED: why, what would enable it;
    # NO_CHANGE: why the trial stopped before its maximum (`SpeedRule.futility_note`), shown after the interval;
    # with any measured verdict also how many pairs ran but measured too little to count
    note: str = ""

    def text(self) -> str:
        if self.verdict == FAILED:
            return "not measured: the candidate's run failed"
        if self.verdict == NOT_ENOUGH:
            return f"not enough measurement ({self.note})" if self.note else "not enough measurement"
        if self.verdict == NOT_APPLIED:
            return "not measured: the change did not take effect" + (f" — {self.note}" if self.note else "")
        if not math.isfinite(self.ratio):
            return "no throughput measured"
        lo, hi = self.ci95
        text = f"{self.ratio:.2f}× [{lo:.2f}, {hi:.2f}] over {counted(self.replicates, 'replicate pair')}"
        notes = "; ".join(n for n in (self.direction(), self.note) if n)
        return f"{text} ({notes})" if notes else text

    def direction(self) -> str:
        """"slower in 6 of 6 pairs; size uncertain": a verdict of no measurable change whose pairs all point one
        way says so beside its interval (pairs 0.44–0.96 gave 0.72× [0.48, 1.07]: honest, but B was slower in
        every one). Words only: the decision stays the interval's (it contains 1), so it is never a win or a
        loss. "" otherwise."""
        ratios = [r for r in self.ratios if math.isfinite(r)]
        if self.verdict != NO_CHANGE or len(ratios) < 2:
            return ""
        way = "slower" if all(r < 1.0 for r in ratios) else "faster" if all(r > 1.0 for r in ratios) else ""
        return f"{way} in {len(ratios)} of {len(ratios)} pairs; size uncertain" if way else ""

    def to_dict(self) -> SpeedDoc:
        return {"ratio": _json_float(self.ratio), "ci95": [_json_float(self.ci95[0]), _json_float(self.ci95[1])],
                "verdict": self.verdict, "replicates": self.replicates,
                "ratios": [_json_float(r) for r in self.ratios],
                "a_samples_per_s": self.a_samples_per_s, "b_samples_per_s": self.b_samples_per_s,
                **({"note": self.note} if self.note else {})}

    @classmethod
    def from_dict(cls, d: SpeedDoc) -> SpeedVerdict:
        raw_ci = d.get("ci95")
        ci = _pair(raw_ci) if raw_ci and None not in raw_ci else None
        ratio = _num(d.get("ratio"))
        return cls(ratio if ratio is not None else math.nan, ci or (math.nan, math.nan),
                   str(d.get("verdict") or NO_CHANGE), int(d.get("replicates") or 0),
                   [x for r in d.get("ratios") or [] if (x := _num(r)) is not None],
                   _num(d.get("a_samples_per_s")), _num(d.get("b_samples_per_s")), str(d.get("note") or ""))


def _older_opening(d: AccuracyDoc) -> str:
    """What the explanation of an accuracy verdict written before tfturbo recorded it (`opens_with`) opens with:
    its words are all that file has, so only this reader of older files looks at them."""
    explanation = str(d.get("explanation") or "")
    return next((w for w in (str(d.get("verdict") or INCONCLUSIVE), NOT_CHECKED, NOT_JUDGED, NOT_MEASURED)
                 if explanation.startswith(w)), "")


@dataclass
class AccuracyVerdict:
    """B minus A on the validation metric, paired on the same examples, against the tolerance."""

    metric: str | None
    delta: float | None  # raw units: a fraction for accuracy (0.01 = 1 pp), the loss's own for a loss
    ci95: tuple[float, float] | None
    verdict: str
    examples: int = 0
    paired: bool = True
    samples_seen: list[int] = field(default_factory=list)  # the validation points compared (samples seen)
    explanation: str = ""
    checked: bool = True  # False: there was nothing to check (no validation data)
    # B's samples seen at the points compared, in `samples_seen` order ([]: the same as A's, or not recorded)
    b_samples_seen: list[int] = field(default_factory=list)
    # what was paired: "example" (the paired gate), or "validation batch" for a model trained without labels, whose
    # own loss is compared batch by batch (`trials.label_free`)
    unit: str = "example"

    def paired_on(self) -> str:
        """What the pairs were, counted: "2048 validation examples", "64 validation batches"."""
        noun = "validation example" if self.unit == "example" else self.unit
        plural = noun + ("es" if noun.endswith("ch") else "s")
        return f"{self.examples} {noun if self.examples == 1 else plural}"
    base: float | None = None  # A's mean on the examples compared (a loss's change is also said relative to it)
    confidence: float = 0.95  # of this interval (below 95% with several outputs: together they hold at 95%)
    # with several outputs, each output's own verdict; this one's metric, delta and interval are the deciding one's
    outputs: list[AccuracyVerdict] = field(default_factory=list)
    of_examples: int = 0  # the larger set's examples when only those both arms validated on were paired (else 0)
    capped: bool = False  # the workload has more validation examples than the runs kept (--val-examples)
    # the trainings' noise held in the interval (`accuracy.TrainingNoise.to_dict`); {}: each arm trained from one
    # seed, so the interval holds the validation examples' noise only
    noise: NoiseDoc = field(default_factory=lambda: NoiseDoc())
    # judged on an accuracy: every validation loss that got worse beyond its noise (its whole interval above 0),
    # in words ("val_loss +0.0970 (+13%) [+0.0510, +0.1430]"): what a looser tolerance would also accept
    also_worse: list[str] = field(default_factory=list)
    # the words `explanation` opens with, recorded where it is made so no reader looks for them: its own verdict
    # ("inconclusive: 300 examples, …"), NOT_CHECKED, NOT_JUDGED; "" when it opens with none
    opens_with: str = ""

    @property
    def says_verdict(self) -> bool:
        """Whether `text()` opens with this verdict's own word, so a line that gives the verdict need not add it."""
        return (self.opens_with if self.explanation else NOT_MEASURED if self.delta is None else "") == self.verdict

    @property
    def is_loss(self) -> bool:
        return bool(self.metric and self.metric.endswith("loss"))

    def shown(self, value: float, points: str = " pp") -> str:
        """A difference as the user reads it (every front end prints it through here): an accuracy in
        percentage points (`points`: the unit's text); a loss in its own units with enough decimals (at least
        four) that this verdict's delta shows two significant digits, so a tiny difference never prints as
        "-0.0000" and the interval's bounds keep the delta's precision."""
        if not self.is_loss:
            return f"{value * 100:+.2f}{points}"
        delta = abs(self.delta or 0.0)
        decimals = 4 if not delta or not math.isfinite(delta) else max(4, min(8, 1 - math.floor(math.log10(delta))))
        return f"{value:+.{decimals}f}"

    def trainings(self) -> int:
        """How many trainings (distinct seeds, both arms) the interval rests on; 0: not measured."""
        return int(self.noise.get("seeds_a") or 0) + int(self.noise.get("seeds_b") or 0) if self.noise else 0

    def noise_note(self) -> str:
        """Which part of the interval dominates and how many trainings it rests on: "training noise dominates
        (±2.9 pp of one training's ±1.1 pp examples'; 3 trainings: 2 of A from different seeds, 1 of B)"; ""
        when the trainings' noise was not measured."""
        n = self.noise
        if not n or not isinstance(n.get("examples_se"), (int, float)):
            return ""
        ex, tr = float(n.get("examples_se") or 0.0), float(n.get("training_se") or 0.0)

        def unit(x: float) -> str:
            return f"±{x:.4g}" if self.is_loss else f"±{x * 100:.2f} pp"
        pairs = "examples" if self.unit == "example" else "batches"  # what was paired (`unit`)
        which = "the trainings' noise dominates" if tr > ex else f"the validation {pairs}' noise dominates"
        return (f"{which}: trainings {unit(tr)}, {pairs} {unit(ex)} (standard errors); "
                f"{self.trainings()} trainings: {n.get('seeds_a')} of A, {n.get('seeds_b')} of B, from "
                f"different seeds")

    def text(self) -> str:
        notes = "; ".join(n for n in (self.points_note(), self.outputs_note(), self.noise_note()) if n)
        if self.explanation:
            return f"{self.explanation} ({notes})" if notes else self.explanation
        if self.delta is None:
            return NOT_MEASURED  # `says_verdict` knows it opens with that verdict's word
        ci = f" [{self.shown(self.ci95[0])}, {self.shown(self.ci95[1])}]" if self.ci95 else ""
        return f"{self.metric} {self.shown(self.delta)}{self.relative()}{ci}" + (f" ({notes})" if notes else "")

    def relative(self) -> str:
        """A loss's change relative to A's: " (+14%)"; "" for an accuracy, or without A's value."""
        if not self.is_loss or self.delta is None or not self.base or not math.isfinite(self.base):
            return ""
        return f" ({self.delta / abs(self.base):+.0%})"

    def outputs_note(self) -> str:
        """With several outputs, which one this verdict is and how its intervals were taken; else ""."""
        if len(self.outputs) < 2:
            return ""
        return (f"the deciding one of {len(self.outputs)} outputs, each judged on its own with a "
                f"{self.confidence:.1%} interval, so together they hold at 95%")

    def output_lines(self) -> list[str]:
        """Each output's verdict in one line ("val_value_loss +0.0460 (+14%) [+0.0310, +0.0610] — worse"), the
        report's and the wizard's per-output lines; [] for one output."""
        if len(self.outputs) < 2:
            return []
        return [o.text() if o.says_verdict else f"{o.text()} — {o.verdict}" for o in self.outputs]

    def outputs_sentence(self) -> str:
        """" Each of the model's 2 outputs was judged on its own: …; … — worse." after a sentence that gives this
        (the deciding output's) verdict; "" for one output."""
        lines = self.output_lines()
        return f" Each of the model's {len(lines)} outputs was judged on its own: {'; '.join(lines)}." if lines else ""

    def examples_words(self) -> str:
        """How many examples were paired, where that is less than the data holds: "960 of the 1,024" / "10,000
        (the --val-examples cap: the data holds more)"; "" otherwise."""
        if self.of_examples > self.examples:
            return (f"{self.examples:,} of the {self.of_examples:,} examples (those both arms validated on)")
        if self.capped:
            return f"{self.examples:,} examples (the --val-examples cap: the validation data holds more)"
        return ""

    def exact_points(self) -> bool:
        """True when A and B were compared at exactly the same samples seen."""
        return not self.b_samples_seen or self.b_samples_seen == self.samples_seen

    def points_note(self) -> str:
        """"" at exactly equal samples seen; else where each arm was compared and how far apart: "compared at
        4,800 samples of A and 4,864 of B, 1.3% apart" (the nearest points, when B's whole steps cannot meet
        A's)."""
        if self.exact_points():
            return ""
        a, b = self.samples_seen, self.b_samples_seen
        apart = max((abs(sb - sa) / sa for sa, sb in zip(a, b) if sa), default=0.0)

        def each(values: list[int]) -> str:
            return ", ".join(f"{v:,}" for v in values)

        return (f"compared at {each(a)} samples of A and {each(b)} of B, {'up to ' if len(a) > 1 else ''}"
                f"{apart:.1%} apart")

    def to_dict(self) -> AccuracyDoc:
        return {"metric": self.metric, "delta": _json_float(self.delta) if self.delta is not None else None,
                "ci95": [_json_float(self.ci95[0]), _json_float(self.ci95[1])] if self.ci95 else None,
                "verdict": self.verdict, "n_examples": self.examples, "paired": self.paired,
                "samples_seen": list(self.samples_seen), "b_samples_seen": list(self.b_samples_seen),
                "explanation": self.explanation, "checked": self.checked, "base": _json_float(self.base)
                if self.base is not None else None, "confidence": self.confidence,
                **({"outputs": [o.to_dict() for o in self.outputs]} if self.outputs else {}),
                **({"of_examples": self.of_examples} if self.of_examples else {}),
                **({"capped": True} if self.capped else {}),
                **({"noise": NoiseDoc(**self.noise)} if self.noise else {}),
                **({"also_worse": list(self.also_worse)} if self.also_worse else {}),
                **({"unit": self.unit} if self.unit != "example" else {}),
                **({"opens_with": self.opens_with} if self.explanation else {})}

    @classmethod
    def from_dict(cls, d: AccuracyDoc) -> AccuracyVerdict:
        raw_ci = d.get("ci95")
        ci = _pair(raw_ci) if isinstance(raw_ci, list) and None not in raw_ci else None
        return cls(d.get("metric"), _num(d.get("delta")), ci, str(d.get("verdict") or INCONCLUSIVE),
                   int(d.get("n_examples") or 0), bool(d.get("paired", True)),
                   [int(s) for s in d.get("samples_seen") or [] if isinstance(s, int)],
                   str(d.get("explanation") or ""), bool(d.get("checked", True)),
                   [int(s) for s in d.get("b_samples_seen") or [] if isinstance(s, int)],
                   str(d.get("unit") or "example"),
                   _num(d.get("base")), _num(d.get("confidence")) or 0.95,
                   [cls.from_dict(o) for o in d.get("outputs") or [] if isinstance(o, dict)],
                   int(d.get("of_examples") or 0), bool(d.get("capped", False)),
                   NoiseDoc(**d["noise"]) if isinstance(d.get("noise"), dict) else NoiseDoc(),
                   [str(w) for w in d.get("also_worse") or [] if isinstance(w, str)],
                   str(d["opens_with"]) if "opens_with" in d else _older_opening(d))


@dataclass
class TrialVerdict:
    """The whole verdict on B against A. Also what a ladder rung and a wizard page show."""

    speed: SpeedVerdict
    accuracy: AccuracyVerdict
    kept: bool
    said: list[ReasonPart]  # why, in parts (`reason` joins them): each says what it is about (`Says`)
    findings: list[FindingDoc] = field(default_factory=list)
    status: str = "completed"  # B's run status (completed, failed, nan_stopped, cancelled, crashed)
    design: str = ""  # how it was measured, in words (for the report)
    error: ErrorDoc | None = None  # B's failed run's error: {"kind", "message", "fix"}
    rule: Tolerance | None = None  # the accuracy rule the gate applied (None: not recorded, the default)
    # the way forward the user took after an inconclusive accuracy verdict ("loss", "tolerance", "examples"; "")
    way_forward: str = ""
    # the steady seconds each arm measured per paired process, the figure `design` words (None: no paired process)
    steady_s: float | None = None
    design_record: Design | None = None  # how it was measured, as data (`design` words it; None: an older study)

    def __post_init__(self) -> None:
        """A failed arm is a failed trial: whatever pairs completed before it, neither speed nor accuracy is
        judged (a ratio of the runs that did complete would describe a configuration that cannot train)."""
        if self.status in FAILED_STATUSES:
            self.speed = SpeedVerdict(math.nan, (math.nan, math.nan), FAILED, self.speed.replicates)
            self.accuracy = AccuracyVerdict(None, None, None, NOT_MEASURED, explanation=(
                f"{NOT_MEASURED}: the candidate's run failed"), checked=False, opens_with=NOT_MEASURED)
            self.kept = False

    @property
    def failed(self) -> bool:
        return self.status in FAILED_STATUSES

    @property
    def reason(self) -> str:
        """Why, in one line: its parts in order ("XLA on the best so far; faster: 1.24× […] vs A; …")."""
        return "; ".join(part.text for part in self.said)

    def parts(self, *says: str) -> list[str]:
        """The words of the reason's parts that say one of `says` (`Says`), in order."""
        return [part.text for part in self.said if part.says in says]

    def say_first(self, says: str, text: str) -> None:
        """Put a part before the reason (why the rung was measured, the rule the user chose)."""
        self.said.insert(0, ReasonPart(says, text))

    def failure_text(self) -> str:
        """"failed: <the run's error in one line>", the one line every front end shows for a failed trial."""
        return failure_line(self.status, self.error)

    # -- the names the ladder table, the compare view and older readers use ---------------------
    @property
    def speedup(self) -> float:
        return self.speed.ratio

    @property
    def speedup_ci95(self) -> tuple[float, float]:
        return self.speed.ci95

    @property
    def val_delta(self) -> float | None:
        return self.accuracy.delta

    @property
    def metric(self) -> str | None:
        return self.accuracy.metric

    def to_dict(self) -> TrialVerdictDoc:
        return {"speed": self.speed.to_dict(), "accuracy": self.accuracy.to_dict(), "kept": self.kept,
                "reason": self.reason, "reason_parts": [part.to_dict() for part in self.said],
                "findings": list(self.findings), "status": self.status,
                "design": self.design, "error": ErrorDoc(**self.error) if self.error else None,
                "rule": self.rule.to_dict() if self.rule is not None else None, "way_forward": self.way_forward,
                "steady_s": self.steady_s,
                "design_record": self.design_record.to_dict() if self.design_record is not None else None}

    @classmethod
    def from_dict(cls, d: TrialVerdictDoc) -> TrialVerdict:
        rule = Tolerance.from_dict(d["rule"]) if isinstance(d.get("rule"), dict) else None
        speed, accuracy = SpeedVerdict.from_dict(d.get("speed") or {}), AccuracyVerdict.from_dict(d.get("accuracy") or {})
        reason, parts = str(d.get("reason") or ""), d.get("reason_parts")
        said = [ReasonPart(str(p.get("says") or Says.OTHER), str(p.get("text") or "")) for p in parts
                if isinstance(p, dict)] if isinstance(parts, list) else []
        older = "; ".join(p.text for p in said) != reason  # an older file, or a reason edited by hand: its words
        if older:
            said = _older_reason(reason, str(d.get("speed_said") or ""), speed, accuracy)
        verdict = cls(speed, accuracy, bool(d.get("kept")), said,
                      findings_in(d.get("findings")), str(d.get("status") or "completed"),
                      str(d.get("design") or ""), error_of(d.get("error")),
                      rule, str(d.get("way_forward") or ""), num(d.get("steady_s")),
                      Design.from_dict(d.get("design_record")))
        if older:  # an older study's rule part: the words `rule_text` gives, as they were
            verdict.said = [ReasonPart(Says.RULE, p.text) if p.text == verdict.rule_text() else p for p in said]
        return verdict

    def rule_text(self) -> str:
        """Which rule judged the accuracy, in words, for the report, ab and the reason: "accuracy judged on "
        and `rule_detail()`; "" for the default rule nobody chose."""
        detail = self.rule_detail()
        return f"accuracy judged on {detail}" if detail else ""

    def rule_detail(self) -> str:
        """The rule and the way forward that chose it, where a label already says "Accuracy rule" (the pages): ""
        for the default rule nobody chose."""
        if self.rule is None or (self.rule.is_default and not self.way_forward):
            return ""
        chosen = {"loss": "judging on the validation loss", "tolerance": "a tolerance the user set",
                  "examples": "more validation examples"}.get(self.way_forward)
        why = f" (the way forward chosen after an inconclusive accuracy verdict: {chosen})" if chosen else \
            " (the study's options)"
        return f"{self.rule.text()}{why}"


# the speed part of the reason of a study written before tfturbo recorded it (`TrialVerdict.said`): "faster:
# 1.24× [1.13, 1.36] over 3 replicate pairs vs float32 + XLA, batch 64" ("pair(s)" before tfturbo counted its nouns)
_OLDER_RATIO = re.compile(r"^(?:[a-z ]+: )?\d+\.\d+× \[[^\]]*\] over \d+ replicate pairs?(?:\(s\))?(?: vs .*)?$")


def _older_reason(reason: str, speed_said: str, speed: SpeedVerdict, accuracy: AccuracyVerdict,
                  ratio_words: bool = True) -> list[ReasonPart]:
    """The parts of a reason written before tfturbo recorded them (`TrialVerdict.said`): the words are all that
    file has, so only this reader of older files cuts them apart. The ratio part is the one the keep rule recorded
    (`speed_said`); older still, the rest is cut at "; " (the speed's and the accuracy's own words kept whole, a
    "; " inside them), a part holding the speed's words or reading as a ratio saying the speed, one holding the
    accuracy's (or "inconclusive") the accuracy."""
    if speed_said and speed_said in reason:
        before, _, after = reason.partition(speed_said)
        return [*_older_reason(before.removesuffix("; "), "", speed, accuracy, False),
                ReasonPart(Says.RATIO, speed_said), *_older_reason(after.removeprefix("; "), "", speed, accuracy, False)]
    words = [w for w in (speed.text(), accuracy.text()) if w]
    kept_whole = reason
    for i, w in enumerate(words):
        kept_whole = kept_whole.replace(w, f"\0{i}\0")

    def whole(part: str) -> str:
        for i, w in enumerate(words):
            part = part.replace(f"\0{i}\0", w)
        return part

    spoken = "\x000\x00"
    measured = math.isfinite(speed.ratio) and speed.verdict != NOT_ENOUGH

    def says(part: str, said: str) -> str:
        if ratio_words and (_OLDER_RATIO.match(said) or (spoken in part and measured)):
            return Says.RATIO
        if spoken in part:
            return Says.SPEED
        return Says.ACCURACY if "\x001\x00" in part or INCONCLUSIVE in said else Says.OTHER
    return [ReasonPart(says(part, whole(part)), whole(part)) for part in kept_whole.split("; ")] if reason else []


def speed_verdict_of(ci: tuple[float, float]) -> str:
    """'faster', 'slower' or 'no measurable change' for a ratio interval (B over A)."""
    lo, hi = ci
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return NO_CHANGE
    if lo > 1.0:
        return FASTER
    if hi < 1.0:
        return SLOWER
    return NO_CHANGE


def _finding(code: str, message: str, fix: str, where: str, **data: Any) -> FindingDoc:
    return F.Finding(code, message, fix, where, data={k: v for k, v in data.items() if v is not None}).to_dict()


def failure_line(status: str, error: ErrorDoc | None) -> str:
    """What a failed run says in one line: its error's message and the fix to try (when the backend knew one)."""
    error = error or {}
    message = " ".join(str(error.get("message") or "").split())
    fix = " ".join(str(error.get("fix") or "").split())
    if status == "nan_stopped":
        message = message or "the loss became NaN or infinite; training was stopped"
    elif status == "crashed":
        message = message or "the backend ended without a summary (crashed)"
    text = f"failed: {message or 'the run failed'}"
    if fix and not error.get("log_only"):  # a fix to try, not only a log to read
        text += f" — fix: {fix}"
    elif fix:
        text += f" ({fix})"
    return text


SIXTEEN_BIT_DTYPES = ("float16", "bfloat16")


@dataclass
class Change:
    """What B changed against A and what B's runs saw: the evidence `likely_causes` orders causes from."""

    a: Any = None  # RunSettings of A (None: not known)
    b: Any = None  # RunSettings of B
    b_output_dtypes: list[str] | None = None  # what B's model head computed in (summary `output_dtypes`)


def likely_causes(change: Change, b_findings: list[FindingDoc], nan: bool = False) -> list[str]:
    """The most likely causes of B's accuracy loss (or NaN loss), most likely first, each with its fix: what the
    runs saw (integer ids rounded, a 16-bit head) before what the settings changed (policy, batch, XLA)."""
    a, b = change.a, change.b
    codes = set(F.codes_of(b_findings))
    causes: list[str] = []
    sixteen = b is not None and b.policy != "float32" and (a is None or a.policy != b.policy)
    if sixteen and F.INTEGER_INPUT_16BIT in codes and not b.fix_int_inputs:
        causes.append("integer ids are rounded to 16-bit before their lookup (INTEGER_INPUT_16BIT): "
                      'keras.Input(shape=..., dtype="int32"), or fix_int_inputs=on')
    head16 = change.b_output_dtypes is None or any(d in SIXTEEN_BIT_DTYPES for d in change.b_output_dtypes)
    if sixteen and head16 and not b.fix_head:
        causes.append(f"the output layer computes in {b.policy.split('_')[-1]}: compute it in float32 "
                      "(dtype=\"float32\" on the last layer, or fix_head=on)")
    elif sixteen:
        causes.append("16-bit numerics inside the model (its head is float32 already): keep float32, or keep "
                      "the layers that lose precision (custom layers, normalization, attention) in float32")
    if nan and b is not None and (a is None or b.lr_scale > a.lr_scale):
        causes.append(f"the learning rate (×{b.lr_scale:g}): lower it (--lr-scale)")
    if a is not None and b is not None and a.batch_size and b.batch_size and a.batch_size != b.batch_size:
        causes.append(f"the batch size ({a.batch_size} → {b.batch_size}, learning rate ×{b.lr_scale / a.lr_scale:g}):"
                      f" keep batch {a.batch_size}, or scale the learning rate less (--lr-scale)")
    if a is not None and b is not None and b.jit_compile and not a.jit_compile:
        causes.append("XLA reorders floating-point operations: a small difference is expected; decide on more "
                      "validation examples (--val-examples)")
    if nan and not causes:
        causes.append("lower the learning rate (--lr-scale 0.1) or check the inputs for NaN/inf")
    return causes or ["keep the previous settings"]


def keep(speed: SpeedVerdict, accuracy: AccuracyVerdict, status: str, b_findings: list[FindingDoc],
         where: str, against: str, xla_requested: bool = False, xla_active: bool = True,
         error: ErrorDoc | None = None, change: Change | None = None
         ) -> tuple[bool, list[ReasonPart], list[FindingDoc]]:
    """(kept, reason, findings): the one keep/reject rule of tfturbo, its reason in parts (`TrialVerdict.said`).
    A failed run's reason is its `failure_line` (its `error` document: message and fix); ACCURACY_REGRESSION and
    NAN_LOSS name the likely causes from `change` (what B changed and saw), in order."""
    change = change or Change()
    if status == "nan_stopped":
        fix = "; or ".join(likely_causes(change, b_findings, nan=True))
        line = failure_line(status, {"message": "NaN loss: the loss became NaN or infinite; training was stopped",
                                     "fix": fix})
        return False, [ReasonPart(Says.OTHER, line)], [
            _finding(F.NAN_LOSS, f"{where}: the loss became NaN or infinite; training was stopped", fix, where)]
    if status in FAILED_STATUSES:
        return False, [ReasonPart(Says.OTHER, failure_line(status, error))], []
    if status != "completed":
        what = {"cancelled": "was cancelled before it finished"}.get(status, f"ended as {status}")
        return False, [ReasonPart(Says.OTHER, f"the run {what}")], []

    reasons: list[ReasonPart] = []
    found: list[FindingDoc] = []
    codes = F.codes_of(b_findings)
    for code, text in DISQUALIFYING.items():
        if code in codes:  # the run's own fix, carried here: the run may be gone (`ab` without --out removes it)
            fix = next((str(f.get("fix") or "") for f in b_findings if f.get("code") == code and f.get("fix")), "")
            reasons.append(ReasonPart(Says.OTHER, text))
            found.append(_finding(code, f"{where}: {text}", fix or "keep the previous settings", where))
    if xla_requested and (not xla_active or F.XLA_NOT_ACTIVE in codes):
        reasons.append(ReasonPart(Says.OTHER, "XLA never switched on in this run (XLA_NOT_ACTIVE): its speed is not "
                                              "XLA's"))

    if speed.verdict == NOT_APPLIED:  # B's run was the reference's: nothing about its speed or accuracy to say
        return False, [ReasonPart(Says.SPEED, speed.text())], found
    speed_text = f"{speed.verdict}: {speed.text()} vs {against}"
    ratio = Says.RATIO if math.isfinite(speed.ratio) else Says.SPEED  # the headline's place when it has a ratio
    if speed.verdict == NOT_ENOUGH:
        reasons.insert(0, ReasonPart(Says.SPEED, speed.text()))
    elif speed.verdict != FASTER:
        reasons.insert(0, ReasonPart(ratio, "not measurably faster: " + speed.text() + f" vs {against}"
                                     if speed.verdict == NO_CHANGE else speed_text))
    if speed.verdict == SLOWER:
        found.insert(0, _finding(
            F.SLOWER_THAN_BASELINE, f"{where} is slower than {against} (throughput per sample {speed.text()})",
            "not recommended: keep the previous settings", where, speedup=_json_float(speed.ratio),
            speedup_ci95=[_json_float(c) for c in speed.ci95], verdict=speed.verdict, compared_with=against))

    if accuracy.verdict == WORSE:
        reasons.append(ReasonPart(Says.ACCURACY, f"accuracy worse: {accuracy.text()}"))
        found.append(_finding(
            F.ACCURACY_REGRESSION, f"{where}: {accuracy.metric} is worse beyond the tolerance ({accuracy.text()})",
            "not recommended; most likely cause first: " + "; or ".join(likely_causes(change, b_findings)),
            where, metric=accuracy.metric, delta=accuracy.delta,
            ci95=list(accuracy.ci95) if accuracy.ci95 else None))
    elif accuracy.verdict == INCONCLUSIVE and accuracy.checked:
        reasons.append(ReasonPart(Says.ACCURACY, f"accuracy {accuracy.text()}"))

    if reasons:
        return False, reasons, found
    gate = accuracy.text() + (", within tolerance" if accuracy.checked else "")
    return True, [ReasonPart(ratio, speed_text), ReasonPart(Says.ACCURACY, gate)], []
