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
   batches in the same order in both arms), and judged by the paired gate's
   own rule with the batches as its examples (`accuracy.paired_with_noise`,
   `accuracy.judged`): B − A with its 95% interval against `Tolerance.loss_rel`
   of A's loss (within when the interval's worse end stays inside, worse when
   the whole interval is beyond, inconclusive otherwise), the trainings' noise
   measured from the reference's runs of other seeds included as it is for a
   labelled model (issue 39: two trainings of an autoencoder from different
   seeds end at different losses, which the batches' interval does not show);
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
from ..run_summary import RunSummary
from .accuracy import CONFIDENCE, LOSS, POINTS, ArmData, RunTable, common_points, judged, paired_with_noise
from .accuracy import gate as accuracy_gate
from .verdict import INCONCLUSIVE, NOT_CHECKED, AccuracyVerdict, Tolerance

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
    a, b = batch_arm(reference), batch_arm(b_runs)
    if a.runs and b.runs:
        verdict = _paired_batches(a, b, tolerance, points)
        if verdict is not None:
            return verdict
    return _training_loss(reference, b_runs, tolerance, points)


def gate_file(summary: RunSummary | None) -> bool:
    """The run wrote what a gate pairs: per-example results (`paired_validation`) or, for a model trained
    without labels, its own loss per validation batch (`batch_validation`). A trial trains its reference from
    other seeds only then: a run without either gives the trainings' noise nothing to be measured on."""
    return summary is not None and any(isinstance(meta, dict) and bool(meta.get("file"))
                                       for meta in (summary.paired_validation, summary.batch_validation))


def batch_arm(runs: Runs) -> ArmData:
    """The runs' batch_validation files as the paired gate's arm: each run one `RunTable` whose loss column holds
    its per-batch losses at each validation point (the batches are its examples, paired by position: every run
    reads the same fixed batches in the same order), with the seed it trained from."""
    arm = ArmData()
    for summary, run_dir in runs:
        if summary:
            arm.summaries.append(summary)
        meta = summary.batch_validation if summary else None
        if run_dir is None or not isinstance(meta, dict) or not meta.get("file"):
            continue
        try:
            with np.load(Path(run_dir) / str(meta["file"])) as data:
                samples = [int(x) for x in data["samples"]]
                losses = np.asarray(data["loss"], dtype=np.float64)
        except (OSError, KeyError, ValueError):
            continue  # unreadable: this run adds nothing (the training loss stands in)
        seed = summary.settings.seed if summary is not None and summary.settings is not None else None
        arm.runs.append(RunTable(samples, {LOSS: losses}, None,
                                 seed if isinstance(seed, int) and not isinstance(seed, bool) else None))
    return arm


def _paired_batches(a: ArmData, b: ArmData, tolerance: Tolerance, points: int) -> AccuracyVerdict | None:
    """The paired gate's judgement of the per-batch losses (`accuracy.judged`, the trainings' noise included
    where the reference trained from several seeds), in this module's words; None when fewer than two batches
    pair."""
    p, noise = paired_with_noise(a, b, LOSS, points)
    v = judged(p, "val_loss", tolerance, CONFIDENCE, noise)
    if v is None or v.ci95 is None or v.delta is None:
        return None
    v.unit, v.of_examples = BATCH, 0
    lo, hi = v.ci95
    measured = (f"val_loss {v.shown(v.delta)} [{v.shown(lo)}, {v.shown(hi)}] of {v.base:.4g}, paired on the same "
                f"{v.examples} validation batches (the model's own test_step; {WHY}, so no example is judged by a "
                "label)")
    trainings = bool(v.noise) and float(v.noise.get("training_se") or 0.0) > float(v.noise.get("examples_se") or 0.0)
    v.opens_with = INCONCLUSIVE if v.verdict == INCONCLUSIVE else ""
    v.explanation = measured if v.verdict != INCONCLUSIVE else (
        f"{INCONCLUSIVE}: {measured}; tolerance {tolerance.loss_rel:.0%} of A's loss — " +
        ("trainings from other seeds would decide it, not more validation examples" if trainings else
         "more validation examples (--val-examples) would narrow it"))
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
            f"{NOT_CHECKED}: {WHY} and no training loss was recorded at equal samples seen"), opens_with=NOT_CHECKED)
    la = float(np.mean([v for p, _ in common for v in a[p]]))
    lb = float(np.mean([v for _, p in common for v in b[p]]))
    delta = lb - la
    rel = delta / abs(la) if la else float("inf")
    within = rel <= tolerance.loss_rel
    v = AccuracyVerdict("loss", delta, None, INCONCLUSIVE, 0, False, [sa for sa, _ in common],
                        b_samples_seen=[sb for _, sb in common], checked=not within)
    said = (f"training loss at equal samples {la:.4g} → {lb:.4g} ({rel:+.1%}; {WHY} and the script has no "
            f"validation data: one run each, no interval, so not a verdict")
    v.opens_with = "" if within else INCONCLUSIVE
    v.explanation = (f"{said}; within the {tolerance.loss_rel:.0%} tolerance as a point estimate)" if within else
                     f"{INCONCLUSIVE}: {said}; beyond the {tolerance.loss_rel:.0%} tolerance — validation data "
                     "(fit(..., validation_data=...)) would decide it)")
    return v
