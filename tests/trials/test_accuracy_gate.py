"""The paired accuracy gate, on per-example results written the way the backend writes them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tfturbo.run_summary import RunSummary
from tfturbo.trials import accuracy
from tfturbo.trials.verdict import INCONCLUSIVE, WITHIN, WORSE, Tolerance

POINTS = [(20, 1280), (40, 2560), (60, 3840)]


def write_run(run_dir: Path, correct: np.ndarray | None, loss: np.ndarray | None = None,
              points=POINTS, metric: str = "val_accuracy") -> tuple[dict, Path]:
    """A run directory with paired_validation.npz (one row per validation point) and its summary."""
    run_dir.mkdir(parents=True)
    arrays = {"step": np.array([p[0] for p in points]), "samples": np.array([p[1] for p in points])}
    if correct is not None:
        arrays["correct"] = np.stack([correct] * len(points)).astype(np.float32)
    if loss is not None:
        arrays["loss"] = np.stack([loss] * len(points)).astype(np.float32)
    np.savez_compressed(run_dir / accuracy.PAIRED_FILE, **arrays)
    n = len(correct if correct is not None else loss)
    summary = {"status": "completed", "paired_validation": {
        "file": accuracy.PAIRED_FILE, "examples": n, "accuracy_metric": metric if correct is not None else None,
        "points": [list(p) for p in points]}}
    return summary, run_dir


def arm(*runs) -> accuracy.ArmData:
    a = accuracy.ArmData()
    for summary, path in runs:  # each summary as the backend wrote it
        a.add_run(RunSummary.from_dict(summary), path)
    return a


def test_identical_predictions_are_within_tolerance(tmp_path):
    correct = (np.random.default_rng(0).random(1000) < 0.9).astype(float)
    v = accuracy.gate(arm(write_run(tmp_path / "a", correct)), arm(write_run(tmp_path / "b", correct)), Tolerance())
    assert v.verdict == WITHIN and v.delta == 0.0 and v.ci95 == (0.0, 0.0) and v.examples == 1000 and v.paired


def test_one_flipped_example_of_180_is_inconclusive_not_worse(tmp_path):
    """The old gate rejected on one example (0.56 pp > 0.5 pp); the paired gate says it cannot tell."""
    a = np.ones(180)
    b = a.copy()
    b[17] = 0.0
    v = accuracy.gate(arm(write_run(tmp_path / "a", a)), arm(write_run(tmp_path / "b", b)), Tolerance())
    assert v.verdict == INCONCLUSIVE
    assert v.delta == pytest.approx(-1 / 180)
    assert v.ci95[0] < -0.005 < v.ci95[1]
    assert "inconclusive: 180 examples, interval [" in v.explanation and "pp" in v.explanation


def test_a_model_that_stopped_learning_is_worse(tmp_path):
    rng = np.random.default_rng(1)
    a = (rng.random(1024) < 0.95).astype(float)
    b = (rng.random(1024) < 0.50).astype(float)  # a 16-bit loop that stopped learning: chance
    v = accuracy.gate(arm(write_run(tmp_path / "a", a)), arm(write_run(tmp_path / "b", b)), Tolerance())
    assert v.verdict == WORSE and v.ci95[1] < -0.005


def test_many_examples_confirm_a_small_difference_within_tolerance(tmp_path):
    rng = np.random.default_rng(2)
    a = (rng.random(20000) < 0.9).astype(float)
    b = a.copy()
    flip = rng.choice(20000, 40, replace=False)  # 0.2% of the examples change, both ways
    b[flip] = 1 - b[flip]
    v = accuracy.gate(arm(write_run(tmp_path / "a", a)), arm(write_run(tmp_path / "b", b)), Tolerance())
    assert v.verdict == WITHIN and abs(v.delta) < 0.002


def test_larger_batch_is_compared_at_equal_samples_seen(tmp_path):
    """B with 4x the batch validates every 5 steps: its points pair with A's by samples seen."""
    a = np.ones(500)
    b = np.ones(500)
    b[:3] = 0
    b_points = [(5, 1280), (10, 2560), (15, 3840)]
    v = accuracy.gate(arm(write_run(tmp_path / "a", a)), arm(write_run(tmp_path / "b", b, points=b_points)),
                      Tolerance())
    assert v.samples_seen == [1280, 2560, 3840] and v.delta == pytest.approx(-3 / 500)
    # points that never meet in samples seen are not paired: the gate falls back to what it can say
    far = [(1, 100), (2, 200), (3, 300)]
    w = accuracy.gate(arm(write_run(tmp_path / "c", a)), arm(write_run(tmp_path / "d", b, points=far)), Tolerance())
    assert not w.paired and w.verdict == INCONCLUSIVE


def test_replicates_and_last_points_are_averaged_per_example(tmp_path):
    a = np.ones(200)
    b1, b2 = np.ones(200), np.ones(200)
    b1[:10] = 0  # one replicate got 10 examples wrong, the other none: B averages 0.95 on those
    v = accuracy.gate(arm(write_run(tmp_path / "a", a)),
                      arm(write_run(tmp_path / "b1", b1), write_run(tmp_path / "b2", b2)), Tolerance())
    assert v.delta == pytest.approx(-5 / 200)


def test_the_common_prefix_of_examples_is_paired(tmp_path):
    """drop_remainder at another batch size shortens the list of fixed examples; the prefix still pairs."""
    a = np.ones(1024)
    b = np.ones(960)
    v = accuracy.gate(arm(write_run(tmp_path / "a", a)), arm(write_run(tmp_path / "b", b)), Tolerance())
    assert v.examples == 960 and v.verdict == WITHIN


def test_loss_gate_when_there_is_no_accuracy(tmp_path):
    rng = np.random.default_rng(4)
    a = rng.gamma(2.0, 0.5, 2000)
    ok = a * (1 + rng.normal(0, 0.001, 2000))
    bad = a * 1.2
    base = write_run(tmp_path / "a", None, loss=a)
    assert accuracy.gate(arm(base), arm(write_run(tmp_path / "b", None, loss=ok)), Tolerance()).verdict == WITHIN
    v = accuracy.gate(arm(base), arm(write_run(tmp_path / "c", None, loss=bad)), Tolerance())
    assert v.verdict == WORSE and v.metric == "val_loss"


def test_without_validation_data_nothing_is_checked():
    v = accuracy.gate(arm(({"status": "completed"}, None)), arm(({"status": "completed"}, None)), Tolerance())
    assert not v.checked and v.verdict == INCONCLUSIVE and "no validation data" in v.explanation


def test_without_pairs_the_gate_never_guesses(tmp_path):
    """A point estimate without an interval is never a verdict: a real binary classifier's gate once said
    "within tolerance" at -0.50 pp from one unpaired point, because its per-example validation had failed."""
    def summary(acc, problem=None):
        s = {"status": "completed", "validation": [{"step": 60, "metrics": {"val_accuracy": acc}}]}
        if problem:
            s["paired_validation"] = {"file": None, "problem": problem}
        return s
    for b_acc in (0.895, 0.80, 0.95):
        v = accuracy.gate(arm((summary(0.90), None)), arm((summary(b_acc), None)), Tolerance())
        assert v.verdict == INCONCLUSIVE and not v.paired and v.ci95 is None
        assert v.explanation.startswith("inconclusive: not paired (") and "no interval" in v.explanation
    why = "ValueError: Arguments `target` and `output` must have the same rank"
    v = accuracy.gate(arm((summary(0.90, why), None)), arm((summary(0.895, why), None)), Tolerance())
    assert v.text().startswith(f"inconclusive: not paired (per-example validation failed in A's runs: {why})")
    assert "val_accuracy -0.50 pp" in v.text()


def test_without_pairs_a_trial_is_not_kept(tmp_path):
    from tfturbo.trials.verdict import SpeedVerdict, keep

    def summary(acc):
        return {"status": "completed", "validation": [{"step": 60, "metrics": {"val_accuracy": acc}}]}
    acc = accuracy.gate(arm((summary(0.90), None)), arm((summary(0.90), None)), Tolerance())
    kept, said, _ = keep(SpeedVerdict(1.5, (1.3, 1.7), "faster", 3), acc, "completed", [], "B", "A")
    reason = "; ".join(part.text for part in said)
    assert not kept and "not paired" in reason and "within tolerance" not in reason


def test_a_tiny_loss_difference_is_never_printed_as_zero():
    """A real run's verdict read "val_loss -0.0000 [-0.0001, -0.0000]": a difference that is not zero."""
    from tfturbo.trials.verdict import AccuracyVerdict

    v = AccuracyVerdict("val_loss", -2.3e-5, (-8.4e-5, -1.1e-6), WITHIN)
    assert v.text() == "val_loss -0.000023 [-0.000084, -0.000001]"
    assert AccuracyVerdict("val_loss", 0.0123, (0.0, 0.02), WITHIN).text() == "val_loss +0.0123 [+0.0000, +0.0200]"
    assert AccuracyVerdict("val_accuracy", -0.004, None, WITHIN).text() == "val_accuracy -0.40 pp"
