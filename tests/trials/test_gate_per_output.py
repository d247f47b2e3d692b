"""The accuracy gate per output, and on the same examples whatever order each run saw them in (issue 47).

Per-example tables written the way the backend writes paired_validation.npz, with realistic noise: a classifier
head whose correctness flips on a few percent of the examples between two trainings, a regression head whose
per-example losses spread like a real one's.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.trials.test_accuracy_gate import arm
from tfturbo.run_summary import RunSummary
from tfturbo.trials import accuracy
from tfturbo.trials.verdict import (
    INCONCLUSIVE,
    WITHIN,
    WORSE,
    AccuracyVerdict,
    Tolerance,
    TrialVerdict,
)

POINTS = [(20, 1280), (40, 2560), (60, 3840)]
N = 1200


def digests(n: int, offset: int = 0) -> np.ndarray:
    return (np.arange(n, dtype=np.uint64) + np.uint64(offset)) * np.uint64(2654435761) + np.uint64(7)


def write_run(run_dir: Path, label_correct: np.ndarray, value_loss: np.ndarray, label_loss: np.ndarray,
              order: np.ndarray | None = None, ids: np.ndarray | None | bool = None) -> tuple[dict, Path]:
    """A two-output run (label: accuracy, value: its loss only; loss_weights [1, 0.2]); `order`: the order this
    run's pipeline gave the examples in; `ids`: their digests (default: the study's N examples; False: none, a
    run written before digests)."""
    run_dir.mkdir(parents=True)
    n = len(label_correct)
    order = np.arange(n) if order is None else order
    written = {} if ids is False else {"digest": (digests(n) if ids is None else ids)[order]}
    label_correct, value_loss, label_loss = (a[order] for a in (label_correct, value_loss, label_loss))
    p = len(POINTS)

    def rows(a):
        return np.stack([a] * p).astype(np.float32)

    np.savez_compressed(
        run_dir / accuracy.PAIRED_FILE, step=np.array([s for s, _ in POINTS]), samples=np.array([s for _, s in POINTS]),
        correct=rows(label_correct), loss=rows(label_loss + 0.2 * value_loss), **written,
        output_names=np.array(["label", "value"]), output_metrics=np.array(["val_label_accuracy", ""]),
        output_loss=np.stack([np.stack([label_loss, value_loss])] * p).astype(np.float32),
        output_correct=np.stack([np.stack([label_correct, np.full(n, np.nan)])] * p).astype(np.float32))
    summary = {"status": "completed", "paired_validation": {
        "file": accuracy.PAIRED_FILE, "examples": n, "accuracy_metric": "val_label_accuracy",
        "points": [list(x) for x in POINTS],
        "outputs": [{"name": "label", "loss": "val_label_loss", "metric": "val_label_accuracy", "weight": 1.0},
                    {"name": "value", "loss": "val_value_loss", "metric": None, "weight": 0.2}]}}
    return summary, run_dir


def heads(seed: int, value_worse: float = 1.0, flips: float = 0.03):
    """(label correctness, value loss, label loss) of one training: the label head 85% right with `flips` of its
    examples changed from A's, the value head's per-example squared errors (a chi-square spread) × value_worse."""
    base = np.random.default_rng(0)
    correct = (base.random(N) < 0.85).astype(float)
    value = base.chisquare(1, N) * 0.4
    label = base.gamma(2.0, 0.25, N)
    rng = np.random.default_rng(seed)
    flip = rng.random(N) < flips
    correct = np.where(flip, 1 - correct, correct)
    value = value * value_worse * np.exp(rng.normal(0, 0.05, N))
    label = label * np.exp(rng.normal(0, 0.05, N))
    return correct, value, label


def test_the_output_that_regressed_is_named_under_loss_weights(tmp_path):
    """loss_weights [1, 0.2]: the value head 14% worse moves the total loss by about 2%, and the old gate judged
    the label accuracy only — "within tolerance". Each output is judged on its own now."""
    a = arm(write_run(tmp_path / "a", *heads(0, flips=0.0)))
    b = arm(write_run(tmp_path / "b", *heads(1, value_worse=1.14)))
    v = accuracy.gate(a, b, Tolerance())
    assert v.verdict == WORSE and v.metric == "val_value_loss"
    assert v.delta / v.base == pytest.approx(0.14, abs=0.02) and f"({v.delta / v.base:+.0%})" in v.text()
    assert [o.metric for o in v.outputs] == ["val_label_accuracy", "val_value_loss"]
    assert [o.verdict for o in v.outputs][1] == WORSE
    assert all(o.confidence == pytest.approx(0.975) for o in v.outputs)  # Bonferroni over 2 outputs
    lines = v.output_lines()
    assert lines[1].startswith("val_value_loss +") and lines[1].endswith("— worse") and "%)" in lines[1]
    # the verdict document: the single-output keys are the deciding output's, every output listed beside them
    doc = v.to_dict()
    assert doc["metric"] == "val_value_loss" and doc["verdict"] == WORSE and len(doc["outputs"]) == 2
    assert AccuracyVerdict.from_dict(doc).output_lines() == lines
    assert TrialVerdict.from_dict({"accuracy": doc}).accuracy.outputs[1].metric == "val_value_loss"


def test_outputs_within_tolerance_name_the_one_closest_to_its_bound(tmp_path):
    a = arm(write_run(tmp_path / "a", *heads(0, flips=0.0)))
    b = arm(write_run(tmp_path / "b", *heads(1, flips=0.002)))
    v = accuracy.gate(a, b, Tolerance(loss_rel=0.05))
    assert v.verdict == WITHIN and {o.verdict for o in v.outputs} == {WITHIN}
    assert "the deciding one of 2 outputs" in v.text()
    # judged on the loss, every output is judged on its own loss
    on_loss = accuracy.gate(a, b, Tolerance(loss_rel=0.05, judge_on="loss"))
    assert [o.metric for o in on_loss.outputs] == ["val_label_loss", "val_value_loss"]


def test_a_validation_order_shuffled_after_cache_pairs_as_tightly_as_the_unshuffled_twin(tmp_path):
    """keras-io's translation Transformer: `.cache().shuffle(2048)` without a seed gave each run another order;
    paired by position A's and B's losses correlated at -0.07 and identical predictions got ±2.80 pp. Paired by
    the examples' digests the shuffled twin's interval is the unshuffled one's."""
    single = {"value_loss": np.zeros(N), "label_loss": np.zeros(N)}
    rng = np.random.default_rng(9)
    correct_a = (rng.random(N) < 0.38).astype(float)
    correct_b = correct_a.copy()
    changed = rng.choice(N, 12, replace=False)
    correct_b[changed] = 1 - correct_b[changed]
    a = arm(write_run(tmp_path / "a", correct_a, **single))
    twin = accuracy.gate(a, arm(write_run(tmp_path / "b", correct_b, **single)), Tolerance())
    shuffled = accuracy.gate(a, arm(write_run(tmp_path / "c", correct_b, order=rng.permutation(N), **single)),
                             Tolerance())
    assert shuffled.ci95 == pytest.approx(twin.ci95) and shuffled.delta == pytest.approx(twin.delta)
    assert twin.ci95[1] - twin.ci95[0] < 0.015 and twin.examples == shuffled.examples == N  # ±0.65 pp
    by_position = accuracy.gate(a, arm(write_run(tmp_path / "d", correct_b, order=rng.permutation(N), ids=False,
                                                 **single)), Tolerance())
    assert by_position.ci95[1] - by_position.ci95[0] > 5 * (twin.ci95[1] - twin.ci95[0])  # what the issue saw


def test_runs_that_validated_on_different_examples_are_not_paired(tmp_path):
    """Each run's own validation data (no study folder, a pipeline that draws other examples): refused, said."""
    correct, value, label = heads(0)
    a = arm(write_run(tmp_path / "a", correct, value, label))
    other = np.concatenate([digests(N // 2), digests(N // 2, offset=10 * N)])  # half of them other examples
    v = accuracy.gate(a, arm(write_run(tmp_path / "b", correct, value, label, ids=other)), Tolerance())
    assert v.verdict == INCONCLUSIVE and not v.paired
    assert "A and B validated on different examples (600 of 1,200 in common)" in v.text()


def test_a_set_that_holds_the_other_pairs_the_examples_both_have(tmp_path):
    """The baseline validated on 1,200 examples, a rung on more of the same data (the way forward "more
    validation examples"): the 1,200 both have are paired, wherever they sit, and the verdict says so."""
    correct, value, label = heads(0)
    a = arm(write_run(tmp_path / "a", correct, value, label))

    def more(x):
        return np.concatenate([x, x[:300]])

    ids = np.concatenate([digests(N), digests(300, offset=5 * N)])
    order = np.random.default_rng(2).permutation(N + 300)
    v = accuracy.gate(a, arm(write_run(tmp_path / "b", more(correct), more(value), more(label), order=order,
                                       ids=ids)), Tolerance())
    assert v.paired and v.examples == N and v.of_examples == N + 300
    assert v.examples_words() == "1,200 of the 1,500 examples (those both arms validated on)"
    assert v.delta == 0.0


def test_the_plan_says_which_gate_will_judge_and_none_without_validation_data():
    """Issue 47: where the script has no validation data the plan still said a validation gate would run."""
    from tfturbo.settings import RunSettings
    from tfturbo.trials.trial import Trial

    base = RunSettings("train.py", steps=60, batch_size=32)
    candidate = base.with_(policy="mixed_bfloat16")
    none = {"status": "completed", "settings": base.to_dict(), "validation": [], "paired_validation": None}
    trial = Trial(base, candidate, accuracy_reference=[(RunSummary.from_dict(none), None)])
    plan = trial.plan().text()
    assert plan.endswith("; accuracy gate: none (the workload has no validation data)")
    assert "with validation" not in plan and "the accuracy gate)" not in plan
    progress = trial.progress_text()
    assert "for the accuracy gate" not in progress and "accuracy gate: none" in progress

    two = {"status": "completed", "settings": base.to_dict(), "paired_validation": {
        "file": accuracy.PAIRED_FILE, "accuracy_metric": "val_label_accuracy",
        "outputs": [{"name": "label", "metric": "val_label_accuracy"}, {"name": "value", "metric": None}]}}
    trial = Trial(base, candidate, accuracy_reference=[(RunSummary.from_dict(two), None)])
    assert trial.plan().text().endswith("; accuracy gate: paired on 2 outputs: label accuracy, value loss")
    assert "for the accuracy gate (then" in trial.progress_text()
    assert "paired on 2 outputs: label accuracy, value loss" in trial.progress_text()
    on_loss = Trial(base, candidate, tolerance=Tolerance(judge_on="loss"), accuracy_reference=[(RunSummary.from_dict(two), None)])
    assert on_loss.plan().text().endswith("paired on 2 outputs: label loss, value loss")
    assert "accuracy gate:" not in Trial(base, candidate).plan().text()  # nothing measured yet says which
