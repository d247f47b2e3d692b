"""The accuracy gate: paired, at equal samples seen, non-inferiority against a tolerance, per output.

Each run writes, at every validation point, every validation example's
correctness and loss on the study's fixed examples (`paired_validation.npz`,
independent of the batch size, each example with a content digest), and for a
model with several outputs each output's own loss and accuracy. The gate:

1. takes the last `points` validation points both arms reached at equal
   samples seen (a larger batch is compared after the same amount of data, not
   the same number of steps), and averages each example over those points and
   over the arm's replicates — smoothing, rather than one noisy point;
2. pairs the examples by their content digests (the same example in A and B,
   whatever order each run's pipeline gave them in); where the arms validated
   on different examples it refuses, saying so, and where one arm's set holds
   the other's it pairs those. Runs written before digests pair by position
   (the common prefix of the two lists);
3. judges each output on its own metric — its accuracy where it has one, else
   its own loss (the total weighted loss hid a second output five times worse
   under loss_weights [1, 0.2]) — the mean difference B − A with its interval
   against the tolerance: within tolerance when the interval's worse end stays
   inside it, worse when the whole interval is beyond it, inconclusive
   otherwise, and then it says how many examples it had and roughly how many
   would decide. With K outputs each interval is at 1 − 0.05/K (Bonferroni), so
   the K intervals hold together with 95%: an output named worse is a claim
   made at most 5% of the time when none is (docs/MEASUREMENT.md). The
   verdict is the worst output's (worse before inconclusive before within),
   with every output's line beside it (`AccuracyVerdict.outputs`).

Without pairs (per-example validation failed in a run, a run from an older
version, no validation points at equal samples seen) the gate never guesses:
the verdict is "inconclusive: not paired (why)", with the runs' unpaired point
estimate shown beside it for information. One point estimate without an
interval is never called within tolerance (nor worse: a difference of that
size is inside the noise of one validation pass more often than not).
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..numbers import finite
from ..run_summary import RunSummary
from ..stats import paired_difference_ci, training_variance, with_training_noise_ci
from .verdict import INCONCLUSIVE, NOT_CHECKED, WITHIN, WORSE, AccuracyVerdict, NoiseDoc, Tolerance

POINTS = 3  # validation points averaged per example (the last ones both arms reached)
PAIRED_FILE = "paired_validation.npz"
CONFIDENCE = 0.95  # of all of a verdict's intervals together (Bonferroni across outputs)
CORRECT, LOSS = "correct", "loss"  # the columns of the primary accuracy metric and of the total loss


@dataclass(frozen=True)
class Output:
    """One output the gate judges: its name, the accuracy metric it has (None: judged on its loss)."""

    name: str
    metric: str | None

    @property
    def loss(self) -> str:
        return f"val_{self.name}_loss"

    def column(self, kind: str) -> str:
        return f"{kind}:{self.name}"


@dataclass
class RunTable:
    """One run's per-example results: columns ("correct", "loss", "loss:<output>", ...) of (points, examples)
    arrays, the samples seen at each point, and each example's content key (None: an older run, by position)."""

    samples: list[int]
    columns: dict[str, np.ndarray]
    keys: list[tuple[int, int]] | None = None
    seed: int | None = None  # the seed it trained from (runs of one seed are bit-identical on a CPU)

    def at(self, column: str, samples: int) -> np.ndarray | None:
        values = self.columns.get(column)
        if values is None or samples not in self.samples:
            return None
        row = np.asarray(values[self.samples.index(samples)], dtype=np.float64)
        return None if np.isnan(row).all() else row


def _keys(digests: np.ndarray) -> list[tuple[int, int]]:
    """Each example's content key: its digest and how many identical examples came before it."""
    seen: dict[int, int] = {}
    keys = []
    for d in digests.tolist():
        seen[d] = seen.get(d, -1) + 1
        keys.append((d, seen[d]))
    return keys


class ArmData:
    """One arm's per-example results, run by run (`RunTable`), and what its runs recorded."""

    def __init__(self) -> None:
        self.runs: list[RunTable] = []
        self.metric: str | None = None  # the primary accuracy metric (`correct`)
        self.outputs: list[Output] = []  # with several outputs, each one the gate judges
        self.summaries: list[RunSummary] = []

    def add_run(self, summary: RunSummary | None, run_dir: Path | str | None) -> None:
        if summary:
            self.summaries.append(summary)
        meta = (summary.paired_validation if summary else None) or {}
        if run_dir is None or not isinstance(meta, dict) or not meta.get("file"):
            return
        try:
            with np.load(Path(run_dir) / str(meta["file"])) as data:
                table = _read_table(data)
                names = [str(n) for n in data["output_names"]] if "output_names" in data.files else []
                metrics = [str(m) or None for m in data["output_metrics"]] if names else []
        except (OSError, KeyError, ValueError):
            return  # unreadable: this replicate adds no pairs (the gate falls back or says so)
        table.seed = summary.settings.seed if summary and summary.settings else None
        self.runs.append(table)
        if CORRECT in table.columns and meta.get("accuracy_metric"):
            self.metric = str(meta["accuracy_metric"])
        if names and not self.outputs:
            self.outputs = [Output(n, m) for n, m in zip(names, metrics)]

    def table(self, column: str) -> dict[int, list[np.ndarray]]:
        """{samples seen: [the column's per-example values in each run]} (unaligned)."""
        out: dict[int, list[np.ndarray]] = {}
        for run in self.runs:
            for s in run.samples:
                row = run.at(column, s)
                if row is not None:
                    out.setdefault(s, []).append(row)
        return out

    @property
    def correct(self) -> dict[int, list[np.ndarray]]:
        return self.table(CORRECT)

    @property
    def loss(self) -> dict[int, list[np.ndarray]]:
        return self.table(LOSS)


def _read_table(data: np.lib.npyio.NpzFile) -> RunTable:
    samples = [int(s) for s in data["samples"]]
    columns = {c: np.asarray(data[c]) for c in (CORRECT, LOSS) if c in data.files}
    if "output_names" in data.files:
        for kind, key in ((LOSS, "output_loss"), (CORRECT, "output_correct")):
            if key in data.files:
                values = np.asarray(data[key])
                for k, name in enumerate(data["output_names"]):
                    columns[f"{kind}:{name}"] = values[:, k, :]
    keys = _keys(np.asarray(data["digest"])) if "digest" in data.files else None
    return RunTable(samples, columns, keys)


SAMPLES_TOLERANCE = 0.05  # validation points within 5% of each other in samples seen count as equal


def common_points(a: dict[int, Any], b: dict[int, Any], points: int) -> list[tuple[int, int]]:
    """The last `points` (A point, B point) pairs at equal samples seen.

    Points at exactly the same samples seen when there are `points` of them
    (the trial sizes a larger batch's run so that there are:
    `trials.sizing.equal_samples`); else, when whole steps of B cannot meet A's
    points, each B point with its nearest A point within SAMPLES_TOLERANCE
    (each point paired once), and the verdict says how far apart they are
    (`AccuracyVerdict.points_note`).
    """
    exact = [(s, s) for s in sorted(a) if s in b]
    if len(exact) >= points:
        return exact[-points:]
    ours = sorted(a)
    best: dict[int, int] = {}  # A point -> its nearest B point, each point of either arm paired once
    for sb in sorted(b):
        i = bisect.bisect_left(ours, sb)
        sa = min(ours[max(0, i - 1):i + 1], key=lambda s: abs(s - sb), default=None)
        if sa is not None and abs(sb - sa) <= SAMPLES_TOLERANCE * sa and (
                sa not in best or abs(sb - sa) < abs(best[sa] - sa)):
            best[sa] = sb
    return sorted(best.items())[-points:]


@dataclass
class Pairs:
    """One column's values of the examples both arms validated on, each averaged over the compared points and the
    arm's replicates, in one order; or why there are none (`refused`)."""

    a: np.ndarray | None
    b: np.ndarray | None
    common: list[tuple[int, int]] = field(default_factory=list)  # the (A, B) points compared
    of: int = 0  # examples the larger of the two sets holds
    refused: str | None = None  # the arms validated on different examples (said, never paired)

    @property
    def n(self) -> int:
        return 0 if self.a is None or self.b is None else min(len(self.a), len(self.b))


def pairs(a: ArmData, b: ArmData, column: str, points: int = POINTS) -> Pairs:
    """`column`'s per-example values of A and B at their common validation points, paired by the examples'
    content digests (the same example whatever order each run saw it in), or by position for runs that recorded
    none. Refused where the arms' sets differ and neither holds the other."""
    common = common_points(a.table(column), b.table(column), points)
    rows_a = [(run, row) for sa, _ in common for run in a.runs if (row := run.at(column, sa)) is not None]
    rows_b = [(run, row) for _, sb in common for run in b.runs if (row := run.at(column, sb)) is not None]
    if not rows_a or not rows_b:
        return Pairs(None, None, common)
    rows = rows_a + rows_b
    keys = {id(run): run.keys for run, _ in rows if run.keys is not None}
    if all(run.keys is not None and len(run.keys) == len(row) for run, row in rows):  # `keys` holds every run
        key_a = set.intersection(*(set(keys[id(run)]) for run, _ in rows_a))
        key_b = set.intersection(*(set(keys[id(run)]) for run, _ in rows_b))
        of = max(len(key_a), len(key_b))
        if not (key_a <= key_b or key_b <= key_a):
            return Pairs(None, None, common, of, refused=(
                f"A and B validated on different examples ({len(key_a & key_b):,} of {of:,} in common): each run "
                "read its own validation data instead of the study's fixed set"))
        shared = key_a & key_b
        order = [k for k in keys[id(rows_a[0][0])] if k in shared]

        index = {run_id: {k: i for i, k in enumerate(run_keys)} for run_id, run_keys in keys.items()}

        def mean(arm_rows: list[tuple[RunTable, np.ndarray]]) -> np.ndarray:
            return np.asarray(np.mean([row[[index[id(run)][k] for k in order]] for run, row in arm_rows], axis=0))
        return Pairs(mean(rows_a), mean(rows_b), common, of)
    n = min(len(row) for _, row in rows)  # by position: the common prefix (drop_remainder shortens a list)
    return Pairs(np.mean([row[:n] for _, row in rows_a], axis=0), np.mean([row[:n] for _, row in rows_b], axis=0),
                 common, max(len(row) for _, row in rows))


def judged(p: Pairs, metric: str, tolerance: Tolerance, confidence: float = CONFIDENCE,
           noise: TrainingNoise | None = None) -> AccuracyVerdict | None:
    """One output's paired differences judged (`_judge`), with the trainings' noise when it was measured
    (`training_noise`), or None when fewer than two examples pair."""
    if p.a is None or p.b is None or p.n < 2:
        return None
    n = p.n
    v = _judge(metric, p.b[:n] - p.a[:n], float(np.mean(p.a[:n])), tolerance, p.common, confidence, noise)
    v.of_examples = p.of if p.of > n else 0
    return v


def units(a: ArmData, b: ArmData, tolerance: Tolerance) -> list[tuple[str, str]]:
    """(column, metric) of each thing the gate judges: with several outputs each output on its own accuracy where
    it has one (and the rule does not say the loss), else its own loss; with one, the accuracy metric or the
    per-example loss."""
    if a.outputs and b.outputs:
        theirs = {o.name for o in b.outputs}
        out = []
        for o in (o for o in a.outputs if o.name in theirs):
            if o.metric and tolerance.judge_on != "loss" and a.table(o.column(CORRECT)) and b.table(o.column(CORRECT)):
                out.append((o.column(CORRECT), o.metric))
            else:
                out.append((o.column(LOSS), o.loss))
        if out:
            return out
    if a.metric and b.metric and a.correct and b.correct and not (tolerance.judge_on == "loss" and a.loss and b.loss):
        return [(CORRECT, a.metric)]
    return [(LOSS, "val_loss")]


def gate(a: ArmData, b: ArmData, tolerance: Tolerance, points: int = POINTS) -> AccuracyVerdict:
    """B against A on the validation examples, every output judged (on the per-example loss when the rule says
    so, or when there is no accuracy metric); see the module's docstring."""
    judging = units(a, b, tolerance)
    level = 1 - (1 - CONFIDENCE) / len(judging)  # Bonferroni: the intervals hold together at CONFIDENCE
    found = [(metric, p, judged(p, metric, tolerance, level, noise))
             for column, metric in judging for p, noise in [paired_with_noise(a, b, column, points)]]
    if all(v is None for _, _, v in found):
        return _unpaired(a, b, _why_not_paired(a, b, found[0][1]))
    if len(found) == 1:
        verdict = found[0][2]
        assert verdict is not None, "the one output is paired: not all verdicts are None"
    else:
        verdict = combined([v if v is not None else AccuracyVerdict(
            metric, None, None, INCONCLUSIVE, 0, False,
            explanation=f"{INCONCLUSIVE}: not paired ({_why_not_paired(a, b, p)})", opens_with=INCONCLUSIVE)
            for metric, p, v in found], tolerance)
    verdict.capped = any(((s.paired_validation or {}).get("set") or {}).get("capped") is True
                         for s in a.summaries + b.summaries)
    if tolerance.judge_on != "loss" and not verdict.is_loss and verdict.paired:
        verdict.also_worse = worse_losses(a, b, tolerance, points)
    return verdict


def worse_losses(a: ArmData, b: ArmData, tolerance: Tolerance, points: int = POINTS) -> list[str]:
    """Each validation loss of B worse than A's beyond its noise (its whole interval above 0, the same paired
    gate on the loss: trainings' noise included), in words: what an accuracy verdict does not show and a
    looser tolerance would also accept (the issue's val_loss +0.097, +13%, beside an "inconclusive")."""
    on_loss = gate(a, b, replace(tolerance, judge_on="loss"), points)
    return [f"{v.metric} {v.shown(v.delta)}{v.relative()} [{v.shown(v.ci95[0])}, {v.shown(v.ci95[1])}]"
            for v in (on_loss.outputs or [on_loss])
            if v.paired and v.is_loss and v.delta is not None and v.ci95 is not None and v.ci95[0] > 0]


RANK = {WITHIN: 0, INCONCLUSIVE: 1, WORSE: 2}


def combined(outputs: list[AccuracyVerdict], tolerance: Tolerance) -> AccuracyVerdict:
    """The verdict of several outputs: the worst verdict (worse, then inconclusive, then within), and among the
    outputs that have it the one whose interval's worse end goes furthest towards or beyond its bound — its
    metric, delta and interval are the verdict's (the keys a one-output verdict has), every output's beside."""
    worst = max(RANK.get(v.verdict, 1) for v in outputs)
    deciding = max((v for v in outputs if RANK.get(v.verdict, 1) == worst), key=lambda v: severity(v, tolerance))
    top = AccuracyVerdict.from_dict(deciding.to_dict())
    top.outputs = outputs
    return top


def severity(v: AccuracyVerdict, tolerance: Tolerance) -> float:
    """How far the interval's worse end goes, in tolerances (1: at the bound; above: beyond it)."""
    if v.ci95 is None:
        return math.inf
    if v.is_loss:
        bound = tolerance.loss_rel * abs(v.base or 0.0)
        return v.ci95[1] / bound if bound > 0 else math.inf
    return -v.ci95[0] / (tolerance.accuracy_pp / 100.0) if tolerance.accuracy_pp > 0 else math.inf


@dataclass(frozen=True)
class TrainingNoise:
    """How much one output's validation value moves between trainings of one configuration from different seeds
    (`training_noise`), and what it adds to the variance of B − A."""

    variance: float  # of one training's mean (pooled over both arms' configurations), examples' share included
    examples_part: float  # the share of `variance` the example-by-run interaction explains
    df: int  # its degrees of freedom: seeds less one, summed over the configurations trained from several
    seeds_a: int  # the distinct seeds each arm's mean rests on
    seeds_b: int
    examples_se: float = 0.0  # filled in by the gate (`measured`): the paired examples' standard error of B − A

    @property
    def scale(self) -> float:
        return 1 / max(1, self.seeds_a) + 1 / max(1, self.seeds_b)

    @property
    def difference_var(self) -> float:
        """The variance of the difference of the two arms' means (each a mean over its seeds) trainings give."""
        return self.variance * self.scale

    @property
    def training_se(self) -> float:
        """The trainings' own part of B − A's standard error (the offsets, the examples' share taken out)."""
        return math.sqrt(max(0.0, self.variance - self.examples_part) * self.scale)

    def measured(self, examples_se: float) -> TrainingNoise:
        return replace(self, examples_se=examples_se)

    def to_dict(self) -> NoiseDoc:
        return {"training_var": self.variance, "examples_part": self.examples_part, "training_df": self.df,
                "seeds_a": self.seeds_a, "seeds_b": self.seeds_b, "examples_se": self.examples_se,
                "training_se": self.training_se}


def _seed_means(arm: ArmData, column: str, at: list[int]) -> dict[int, list[tuple[RunTable, np.ndarray]]]:
    """{seed: [(run, each example's `column` averaged over the points `at`)]} of `arm`'s runs with a seed."""
    by_seed: dict[int, list[tuple[RunTable, np.ndarray]]] = {}
    for run in arm.runs:
        rows = [row for s in at if (row := run.at(column, s)) is not None]
        if run.seed is not None and rows and len(rows) == len(at):
            by_seed.setdefault(run.seed, []).append((run, np.mean(rows, axis=0)))
    return by_seed


def seed_rows(arm: ArmData, column: str, at: list[int]) -> list[np.ndarray]:
    """One row per distinct seed of `arm`'s runs: each example's `column` averaged over the points `at` (runs of
    one seed averaged: they are the same training), all rows on the examples every seed validated on, in one
    order (by content keys; by position for runs without them); [] from fewer than two seeds."""
    by_seed = _seed_means(arm, column, at)
    if len(by_seed) < 2:
        return []
    runs = [pair for group in by_seed.values() for pair in group]
    if all(r.keys is not None and len(r.keys) == len(row) for r, row in runs):
        shared = set.intersection(*(set(r.keys or []) for r, _ in runs))
        order = [k for k in runs[0][0].keys or [] if k in shared]

        def aligned(run: RunTable, row: np.ndarray) -> np.ndarray:
            index = {k: i for i, k in enumerate(run.keys or [])}
            return np.asarray(row[[index[k] for k in order]])
    else:
        n = min(len(row) for _, row in runs)

        def aligned(run: RunTable, row: np.ndarray) -> np.ndarray:
            return row[:n]
    return [np.mean([aligned(r, row) for r, row in group], axis=0) for group in by_seed.values()]


def same_training(a: ArmData, b: ArmData, column: str, common: list[tuple[int, int]]) -> bool:
    """True when B's runs trained exactly as a run of A from the same seed (every compared value equal): the
    change did not alter the training, so there is no trainings' difference between them to allow for."""
    mine = _seed_means(b, column, [sb for _, sb in common])
    theirs = _seed_means(a, column, [sa for sa, _ in common])
    for seed, group in mine.items():
        for (run_b, row_b) in group:
            for (run_a, row_a) in theirs.get(seed, []):
                if len(row_a) == len(row_b) and (run_a.keys or None) == (run_b.keys or None) \
                        and np.array_equal(row_a, row_b):
                    return True
    return False


def paired_with_noise(a: ArmData, b: ArmData, column: str, points: int) -> tuple[Pairs, TrainingNoise | None]:
    """One column's pairs and the trainings' noise to allow for: the one rule of both gates (a model trained
    without labels pairs its validation batches through here, `label_free`). Where B trained exactly as A's run
    of its seed (`same_training`: the change left the training bit-identical), B is paired with A's runs of B's
    seeds only — its own training, not the mean of A's seeds — and there is no trainings' noise between them."""
    p = pairs(a, b, column, points)
    if p.common and same_training(a, b, column, p.common):
        seeds = {r.seed for r in b.runs}
        same = ArmData()
        same.runs = [r for r in a.runs if r.seed in seeds]
        same.metric, same.outputs, same.summaries = a.metric, a.outputs, a.summaries
        return pairs(same, b, column, points), None
    return p, training_noise(a, b, column, p.common) if p.common else None


def training_noise(a: ArmData, b: ArmData, column: str, common: list[tuple[int, int]]) -> TrainingNoise | None:
    """The trainings' noise of one output at the compared points (`common`), from each arm's runs of distinct
    seeds (`stats.training_variance`, pooled over the two configurations by their degrees of freedom); None when
    neither arm trained from two seeds (the paired interval then holds the examples' noise only, and the
    verdict does not claim more), when the seeds' trainings gave exactly the same values (the seed changes
    nothing this workload's training draws: no trainings' noise to allow for), or when B trained exactly as
    A's run of its seed (`same_training`)."""
    if not common or same_training(a, b, column, common):
        return None
    parts = [training_variance(rows) for rows in (seed_rows(a, column, [sa for sa, _ in common]),
                                                   seed_rows(b, column, [sb for _, sb in common]))]
    df = sum(k for _, _, k in parts)
    if df == 0 or all(v == 0.0 and e == 0.0 for v, e, k in parts if k):
        return None  # no seeds to compare, or trainings from other seeds gave exactly the same results

    def seeds(arm: ArmData, at: int) -> int:
        return len({r.seed for r in arm.runs if r.at(column, at) is not None}) or 1
    return TrainingNoise(sum(v * k for v, _, k in parts) / df, sum(e * k for _, e, k in parts) / df, df,
                         seeds(a, common[-1][0]), seeds(b, common[-1][1]))


def _why_not_paired(a: ArmData, b: ArmData, p: Pairs) -> str:
    """Why the two arms could not be paired, in words, from what their runs recorded."""
    for arm, label in ((a, "A"), (b, "B")):
        for s in arm.summaries:
            problem = (s.paired_validation or {}).get("problem")
            if problem:
                return f"per-example validation failed in {label}'s runs: {problem}"
    for arm, label in ((a, "A"), (b, "B")):
        if arm.summaries and not arm.runs:
            return f"{label}'s runs wrote no per-example results"
    if p.refused:
        return p.refused
    if not p.common:
        return "no validation points of A and B at equal samples seen"
    return "fewer than 2 examples in common"


def _judge(metric: str, d: np.ndarray, base_mean: float, tolerance: Tolerance, common: list[tuple[int, int]],
           confidence: float = CONFIDENCE, noise: TrainingNoise | None = None) -> AccuracyVerdict:
    if noise is None:
        delta, (lo, hi) = paired_difference_ci(d, confidence)
    else:
        delta, (lo, hi), examples_se = with_training_noise_ci(d, noise.difference_var, noise.df, confidence)
        noise = noise.measured(examples_se)
    n = len(d)
    loss = metric.endswith("loss")
    # distance of each end from the tolerance bound, in "worse" units (positive: worse than allowed)
    if loss:
        bound = tolerance.loss_rel * abs(base_mean)
        worst, best = hi, lo
        verdict = WITHIN if worst <= bound else WORSE if best > bound else INCONCLUSIVE
        tol_text = f"tolerance {tolerance.loss_rel:.0%} of {base_mean:.4f}"
    else:
        bound = tolerance.accuracy_pp / 100.0
        worst, best = lo, hi
        verdict = WITHIN if worst >= -bound else WORSE if best < -bound else INCONCLUSIVE
        tol_text = f"tolerance {tolerance.accuracy_pp:g} pp"
    v = AccuracyVerdict(metric, delta, (lo, hi), verdict, n, True, [sa for sa, _ in common],
                        b_samples_seen=[sb for _, sb in common], base=base_mean, confidence=confidence,
                        noise=noise.to_dict() if noise is not None else {})
    if verdict == INCONCLUSIVE and noise is not None and noise.training_se > noise.examples_se:
        ci = f"[{v.shown(lo)}, {v.shown(hi)}]"
        tol_text = f"tolerance {tolerance.loss_rel:.0%} of {base_mean:.4f}" if loss else \
            f"tolerance {tolerance.accuracy_pp:g} pp"
        v.explanation = (f"{INCONCLUSIVE}: interval {ci} ({tol_text}); trainings from other seeds would decide it, "
                         "not more examples")
        v.opens_with = INCONCLUSIVE
    elif verdict == INCONCLUSIVE:
        ci = f"[{v.shown(lo)}, {v.shown(hi)}]"
        need = _examples_needed(n, delta, lo, hi, bound, loss)
        more = f"; about {need:,} examples would decide it" if need else ""
        v.explanation, v.opens_with = f"{INCONCLUSIVE}: {n} examples, interval {ci} ({tol_text}){more}", INCONCLUSIVE
    return v


def _examples_needed(n: int, delta: float, lo: float, hi: float, bound: float, loss: bool) -> int | None:
    """Examples for the interval's worse end to clear the bound, if the difference stays as measured."""
    half = (hi - lo) / 2
    room = (bound - delta) if loss else (delta + bound)
    if half <= 0 or room <= 0:
        return None  # the estimate itself is beyond the tolerance: more examples would not make it pass
    return int(math.ceil(n * (half / room) ** 2))


def _unpaired(a: ArmData, b: ArmData, why: str) -> AccuracyVerdict:
    """Without pairs: inconclusive, saying why, with the validation metrics at the last point shown as measured."""
    def last(arm: ArmData) -> dict[str, float]:
        metrics: dict[str, float] = {}
        for s in arm.summaries:
            for v in s.validation or []:
                if isinstance(v, dict) and isinstance(v.get("metrics"), dict):
                    metrics = v["metrics"]
        return metrics

    ma, mb = last(a), last(b)
    if not ma and (a.runs or b.runs):  # per-example results that could not be paired, and no curve beside them
        return AccuracyVerdict(None, None, None, INCONCLUSIVE, 0, False, explanation=f"{INCONCLUSIVE}: not paired ({why})",
                               opens_with=INCONCLUSIVE)
    if not ma:
        return AccuracyVerdict(None, None, None, INCONCLUSIVE, 0, False,
                               explanation=f"{NOT_CHECKED}: the runs have no validation data",
                               checked=False, opens_with=NOT_CHECKED)
    primary = RunSummary(metrics=ma).primary_metric()
    if primary is None:
        return AccuracyVerdict(None, None, None, INCONCLUSIVE, 0, False,
                               explanation=f"{NOT_CHECKED}: no validation metric was reported", checked=False,
                               opens_with=NOT_CHECKED)
    name, base, higher = primary
    value = mb.get(name)
    if not finite(value):
        return AccuracyVerdict(name, None, None, WORSE, 0, False,
                               explanation=f"{name} of B was not measured or is not a finite number")
    delta = float(value) - base
    v = AccuracyVerdict(name, delta, None, INCONCLUSIVE, 0, False, opens_with=INCONCLUSIVE)
    v.explanation = f"{INCONCLUSIVE}: not paired ({why}); unpaired point estimate {name} {v.shown(delta)}, no interval"
    return v


NO_VALIDATION = "none (the workload has no validation data)"


def planned_gate(summaries: list[RunSummary], tolerance: Tolerance) -> str:
    """Which gate a trial's accuracy will be judged by, in words, from the runs of the workload measured so far:
    "paired on 2 outputs: label accuracy, value loss", "paired on val_accuracy", NO_VALIDATION when a run that
    validated found no validation data, "" while no run says."""
    on_loss = tolerance.judge_on == "loss"
    for s in summaries:
        meta = s.paired_validation
        if not isinstance(meta, dict) or not meta.get("file"):
            continue
        outputs = [o for o in meta.get("outputs") or [] if isinstance(o, dict)]
        if len(outputs) > 1:
            return f"paired on {len(outputs)} outputs: " + ", ".join(
                f"{o.get('name')} {'accuracy' if o.get('metric') and not on_loss else 'loss'}" for o in outputs)
        metric = meta.get("accuracy_metric")
        return f"paired on {metric if metric and not on_loss else 'val_loss'}"
    validated = [s for s in summaries if s.status == "completed" and not (s.settings and s.settings.speed_only)]
    # a run's summary says it validated nothing: its curve recorded and empty, no per-example results
    if validated and all(s.validation == [] and not s.paired_validation for s in validated):
        return NO_VALIDATION
    return ""
