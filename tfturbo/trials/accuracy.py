"""The accuracy gate: paired, at equal samples seen, non-inferiority against a tolerance.

Each run writes, at every validation point, every validation example's
correctness and loss on the same fixed examples (`paired_validation.npz`,
independent of the batch size). The gate:

1. takes the last `points` validation points both arms reached at equal
   samples seen (a larger batch is compared after the same amount of data, not
   the same number of steps), and averages each example over those points and
   over the arm's replicates — smoothing, rather than one noisy point;
2. pairs the examples (the common prefix of the two lists: the same examples in
   the same order), so what both get right or wrong cancels;
3. judges the mean difference B − A with its 95% interval against the
   tolerance: within tolerance when the interval's worse end stays inside it,
   worse when the whole interval is beyond it, inconclusive otherwise — and
   then it says how many examples it had and roughly how many would decide.

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
from pathlib import Path
from typing import Any

import numpy as np

from ..numbers import finite
from ..stats import paired_difference_ci
from .verdict import INCONCLUSIVE, WITHIN, WORSE, AccuracyVerdict, Tolerance

POINTS = 3  # validation points averaged per example (the last ones both arms reached)
PAIRED_FILE = "paired_validation.npz"


class ArmData:
    """One arm's per-example results: {samples seen: [array per replicate]} for correctness and loss."""

    def __init__(self) -> None:
        self.correct: dict[int, list[np.ndarray]] = {}
        self.loss: dict[int, list[np.ndarray]] = {}
        self.metric: str | None = None
        self.summaries: list[dict[str, Any]] = []

    def add_run(self, summary: dict[str, Any] | None, run_dir: Path | str | None) -> None:
        if summary:
            self.summaries.append(summary)
        meta = (summary or {}).get("paired_validation") or {}
        if run_dir is None or not isinstance(meta, dict) or not meta.get("file"):
            return
        try:
            with np.load(Path(run_dir) / str(meta["file"])) as data:
                samples = [int(s) for s in data["samples"]]
                correct = data["correct"] if "correct" in data else None
                loss = data["loss"] if "loss" in data else None
                for i, s in enumerate(samples):
                    if correct is not None:
                        self.correct.setdefault(s, []).append(np.asarray(correct[i], dtype=np.float64))
                    if loss is not None:
                        self.loss.setdefault(s, []).append(np.asarray(loss[i], dtype=np.float64))
        except (OSError, KeyError, ValueError):
            return  # unreadable: this replicate adds no pairs (the gate falls back or says so)
        if correct is not None and meta.get("accuracy_metric"):
            self.metric = str(meta["accuracy_metric"])

    def values(self, kind: str, points: list[int]) -> np.ndarray | None:
        """Per-example mean over `points` and over the replicates, on the examples every replicate has."""
        table = self.correct if kind == "correct" else self.loss
        arrays = [a for p in points for a in table.get(p, [])]
        if not arrays:
            return None
        n = min(len(a) for a in arrays)
        return np.asarray(np.mean([a[:n] for a in arrays], axis=0))


SAMPLES_TOLERANCE = 0.05  # validation points within 5% of each other in samples seen count as equal


def common_points(a: dict[int, Any], b: dict[int, Any], points: int) -> list[tuple[int, int]]:
    """The last `points` (A point, B point) pairs at equal samples seen.

    Points at exactly the same samples seen when there are `points` of them
    (the trial sizes a larger batch's run so that there are:
    `trials.trial.equal_samples`); else, when whole steps of B cannot meet A's
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


def paired(a: ArmData, b: ArmData, kind: str, tolerance: Tolerance, points: int = POINTS) -> AccuracyVerdict | None:
    """B against A judged pairwise on `kind` ("correct": the accuracy metric, "loss": the per-example loss) at
    their common validation points, or None when fewer than two examples pair there."""
    common = common_points(*_tables(a, b, kind), points)
    if not common:
        return None
    va, vb = a.values(kind, [p for p, _ in common]), b.values(kind, [p for _, p in common])
    if va is None or vb is None or min(len(va), len(vb)) < 2:
        return None
    n = min(len(va), len(vb))
    metric = a.metric if kind == "correct" else "val_loss"
    if metric is None:  # per-example correctness without the metric's name: nothing to call it (gate() checks)
        return None
    return _judge(metric, vb[:n] - va[:n], float(np.mean(va[:n])), tolerance, common)


def gate(a: ArmData, b: ArmData, tolerance: Tolerance, points: int = POINTS) -> AccuracyVerdict:
    """B against A on the validation examples (on the per-example loss when the rule says so, or when there is
    no accuracy metric); see the module's docstring."""
    on_metric = a.metric and b.metric and a.correct and b.correct
    kind = "correct" if on_metric and not (tolerance.judge_on == "loss" and a.loss and b.loss) else "loss"
    verdict = paired(a, b, kind, tolerance, points)
    if verdict is not None:
        return verdict
    return _unpaired(a, b, _why_not_paired(a, b, bool(common_points(*_tables(a, b, kind), points))))


def _tables(a: ArmData, b: ArmData, kind: str) -> tuple[dict[int, Any], dict[int, Any]]:
    """Each arm's table of `kind` ("correct" or "loss"): validation point -> per-example values."""
    return (a.correct, b.correct) if kind == "correct" else (a.loss, b.loss)


def _why_not_paired(a: ArmData, b: ArmData, had_common_points: bool) -> str:
    """Why the two arms could not be paired, in words, from what their runs recorded."""
    for arm, label in ((a, "A"), (b, "B")):
        for s in arm.summaries:
            problem = (s.get("paired_validation") or {}).get("problem") if isinstance(
                s.get("paired_validation"), dict) else None
            if problem:
                return f"per-example validation failed in {label}'s runs: {problem}"
    for arm, label in ((a, "A"), (b, "B")):
        if arm.summaries and not (arm.correct or arm.loss):
            return f"{label}'s runs wrote no per-example results"
    if not had_common_points:
        return "no validation points of A and B at equal samples seen"
    return "fewer than 2 examples in common"


def _judge(metric: str, d: np.ndarray, base_mean: float, tolerance: Tolerance, common: list[tuple[int, int]]
           ) -> AccuracyVerdict:
    delta, (lo, hi) = paired_difference_ci(d)
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
                        b_samples_seen=[sb for _, sb in common])
    if verdict == INCONCLUSIVE:
        ci = f"[{v.shown(lo)}, {v.shown(hi)}]"
        need = _examples_needed(n, delta, lo, hi, bound, loss)
        more = f"; about {need:,} examples would decide it" if need else ""
        v.explanation = f"inconclusive: {n} examples, interval {ci} ({tol_text}){more}"
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
    from ..summary import primary_metric

    def last(arm: ArmData) -> dict[str, Any]:
        metrics: dict[str, Any] = {}
        for s in arm.summaries:
            for v in s.get("validation") or []:
                if isinstance(v, dict) and isinstance(v.get("metrics"), dict):
                    metrics = v["metrics"]
        return metrics

    ma, mb = last(a), last(b)
    if not ma:
        return AccuracyVerdict(None, None, None, INCONCLUSIVE, 0, False,
                               explanation="accuracy not checked: the runs have no validation data",
                               checked=False)
    primary = primary_metric({"metrics": ma})
    if primary is None:
        return AccuracyVerdict(None, None, None, INCONCLUSIVE, 0, False,
                               explanation="accuracy not checked: no validation metric was reported", checked=False)
    name, base, higher = primary
    value = mb.get(name)
    if not finite(value):
        return AccuracyVerdict(name, None, None, WORSE, 0, False,
                               explanation=f"{name} of B was not measured or is not a finite number")
    delta = float(value) - base
    v = AccuracyVerdict(name, delta, None, INCONCLUSIVE, 0, False)
    v.explanation = f"inconclusive: not paired ({why}); unpaired point estimate {name} {v.shown(delta)}, no interval"
    return v
