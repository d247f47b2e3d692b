"""The accuracy comparison of a model trained without labels: its own loss, at equal samples seen.

The paired gate (`accuracy.py`) judges each validation example by its label.
A model trained on features only (an autoencoder, a VAE, a GAN, a
self-supervised model: `fit(x)` with its own `train_step`; its runs' summaries
say `labels: false`) has no label to judge an example by, and its loss is what
its own `train_step`/`test_step` computes. So its comparison takes that loss:

1. with validation data: the model's own validation loss on each of the same
   fixed validation batches (`batch_validation.npz`, written by
   `trainer_backend/batch_validation.py`), at the last `accuracy.POINTS`
   validation points both arms reached at equal samples seen, averaged over
   those points and the arm's replicates, paired batch by batch (the same
   batches in the same order in both arms), and judged like the paired gate's
   loss: B − A with its 95% interval against `Tolerance.loss_rel` of A's loss
   (within when the interval's worse end stays inside, worse when the whole
   interval is beyond, inconclusive otherwise);
2. without validation data: the training loss the model reported over the
   same stretches of training (`training`: each validation interval's mean, at
   equal samples seen). One run per arm gives no interval, so it is never a
   verdict: inconclusive, labelled as the training loss; within the tolerance
   as a point estimate it does not hold the candidate back (`checked` False,
   as for a job without validation data), beyond it it does, and validation
   data is what would decide.

Every verdict's words say which of the two it is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from ..numbers import finite
from ..stats import paired_difference_ci
from ..run_summary import RunSummary
from .accuracy import POINTS, ArmData, common_points
from .accuracy import gate as accuracy_gate
from .verdict import INCONCLUSIVE, WITHIN, WORSE, AccuracyVerdict, Tolerance

Runs = Sequence[tuple[RunSummary | None, Path | str | None]]
BATCH = "validation batch"  # the unit the batch path pairs (AccuracyVerdict.unit)
WHY = "the model takes no labels"


def compare_runs(reference: Runs, b_runs: Runs, tolerance: Tolerance) -> AccuracyVerdict:
    """B's runs against the reference runs: the paired gate (`accuracy.gate`), or for runs trained without labels
    this module's comparison of the model's own loss — the one choice every reader of two runs' accuracy makes
    (a trial's verdict, compare, the report)."""
    if applies([summary for summary, _ in [*reference, *b_runs]]):
        return gate(reference, b_runs, tolerance)
    arm_a, arm_b = ArmData(), ArmData()
    for summary, run_dir in reference:
        arm_a.add_run(summary, run_dir)
    for summary, run_dir in b_runs:
        arm_b.add_run(summary, run_dir)
    return accuracy_gate(arm_a, arm_b, tolerance)


def applies(summaries: list[RunSummary | None]) -> bool:
    """True when the runs trained without labels (`labels: false` in a summary)."""
    return any(s is not None and s.labels is False for s in summaries)


def gate(reference: Runs, b_runs: Runs, tolerance: Tolerance, points: int = POINTS) -> AccuracyVerdict:
    """B against the reference runs on the model's own loss (see the module's docstring)."""
    a, b = _batch_losses(reference), _batch_losses(b_runs)
    if a and b:
        verdict = _paired_batches(a, b, tolerance, points)
        if verdict is not None:
            return verdict
    return _training_loss(reference, b_runs, tolerance, points)


def _batch_losses(runs: Runs) -> dict[int, list[np.ndarray]]:
    """{samples seen: [per-batch validation losses, one array per run]} of the runs' batch_validation files."""
    table: dict[int, list[np.ndarray]] = {}
    for summary, run_dir in runs:
        meta = summary.batch_validation if summary else None
        if run_dir is None or not isinstance(meta, dict) or not meta.get("file"):
            continue
        try:
            with np.load(Path(run_dir) / str(meta["file"])) as data:
                for samples, losses in zip(data["samples"], data["loss"]):
                    table.setdefault(int(samples), []).append(np.asarray(losses, dtype=np.float64))
        except (OSError, KeyError, ValueError):
            continue  # unreadable: this run adds nothing (the training loss stands in)
    return table


def _mean(table: dict[int, list[np.ndarray]], at: list[int]) -> np.ndarray:
    arrays = [a for p in at for a in table[p]]
    n = min(len(a) for a in arrays)
    return np.mean([a[:n] for a in arrays], axis=0)


def _paired_batches(a: dict[int, list[np.ndarray]], b: dict[int, list[np.ndarray]], tolerance: Tolerance,
                    points: int) -> AccuracyVerdict | None:
    common = common_points(a, b, points)
    if not common:
        return None
    va, vb = _mean(a, [p for p, _ in common]), _mean(b, [p for _, p in common])
    n = min(len(va), len(vb))
    if n < 2:
        return None
    delta, (lo, hi) = paired_difference_ci(vb[:n] - va[:n])
    base = float(np.mean(va[:n]))
    bound = tolerance.loss_rel * abs(base)
    verdict = WITHIN if hi <= bound else WORSE if lo > bound else INCONCLUSIVE
    v = AccuracyVerdict("val_loss", delta, (lo, hi), verdict, n, True, [sa for sa, _ in common],
                        b_samples_seen=[sb for _, sb in common], unit=BATCH)
    measured = (f"val_loss {v.shown(delta)} [{v.shown(lo)}, {v.shown(hi)}] of {base:.4g}, paired on the same {n} "
                f"validation batches (the model's own test_step; {WHY}, so no example is judged by a label)")
    v.explanation = measured if verdict != INCONCLUSIVE else (
        f"inconclusive: {measured}; tolerance {tolerance.loss_rel:.0%} of A's loss — more validation examples "
        "(--val-examples) would narrow it")
    return v


def _training_points(runs: Runs) -> dict[int, list[float]]:
    """{samples seen: [the training loss each run reported over the interval ending there]}."""
    table: dict[int, list[float]] = {}
    for summary, _ in runs:
        batch = summary.settings.batch_size if summary and summary.settings else None
        if summary is None or not batch or batch < 1:
            continue
        for point in summary.training or []:
            loss = (point.get("metrics") or {}).get("loss") if isinstance(point, dict) else None
            step = point.get("step") if isinstance(point, dict) else None
            if isinstance(step, int) and finite(loss):
                table.setdefault(step * batch, []).append(float(loss))
    return table


def _training_loss(reference: Runs, b_runs: Runs, tolerance: Tolerance, points: int) -> AccuracyVerdict:
    a, b = _training_points(reference), _training_points(b_runs)
    common = common_points(a, b, points)
    if not common:
        return AccuracyVerdict(None, None, None, INCONCLUSIVE, 0, False, checked=False, explanation=(
            f"accuracy not checked: {WHY} and no training loss was recorded at equal samples seen"))
    la = float(np.mean([v for p, _ in common for v in a[p]]))
    lb = float(np.mean([v for _, p in common for v in b[p]]))
    delta = lb - la
    rel = delta / abs(la) if la else float("inf")
    within = rel <= tolerance.loss_rel
    v = AccuracyVerdict("loss", delta, None, INCONCLUSIVE, 0, False, [sa for sa, _ in common],
                        b_samples_seen=[sb for _, sb in common], checked=not within)
    said = (f"training loss at equal samples {la:.4g} → {lb:.4g} ({rel:+.1%}; {WHY} and the script has no "
            f"validation data: one run each, no interval, so not a verdict")
    v.explanation = (f"{said}; within the {tolerance.loss_rel:.0%} tolerance as a point estimate)" if within else
                     f"inconclusive: {said}; beyond the {tolerance.loss_rel:.0%} tolerance — validation data "
                     "(fit(..., validation_data=...)) would decide it)")
    return v
