"""Reading two runs' summaries: per-sample throughput, the accuracy delta, step time and memory."""

import math

import numpy as np
import pytest

from tfturbo.summary import memory_ratio, primary_metric, samples_per_s, step_time, val_delta


def summary(median_ms, batch=64, metrics=None, seed=0, peak=None):
    rng = np.random.default_rng(seed)
    samples = list(median_ms * (1 + 0.02 * rng.standard_normal(200)))
    return {"settings": {"batch_size": batch}, "step_ms_samples": samples, "steps_per_s": 1000 / median_ms,
            "metrics": metrics or {}, "peak_memory_bytes": peak}


def test_throughput_is_per_sample_so_a_larger_batch_counts_its_extra_data():
    base = summary(10.0, batch=64, seed=1)
    bigger = summary(15.0, batch=128, seed=2)  # slower per step, but 2x data per step
    assert abs(samples_per_s(bigger) / samples_per_s(base) - 4 / 3) < 1e-9


def test_primary_metric_prefers_validation_accuracy_then_loss():
    assert primary_metric({"metrics": {"loss": 0.3, "val_loss": 0.4, "val_accuracy": 0.9}}) == \
        ("val_accuracy", 0.9, True)
    assert primary_metric({"metrics": {"loss": 0.3, "val_loss": 0.4}}) == ("val_loss", 0.4, False)
    assert primary_metric({"metrics": {"val_accuracy": float("nan")}}) is None


def test_val_delta_uses_the_baseline_metric():
    name, delta = val_delta(summary(10, metrics={"val_accuracy": 0.90}), summary(8, metrics={"val_accuracy": 0.88}))
    assert name == "val_accuracy" and abs(delta + 0.02) < 1e-12
    assert val_delta(summary(10, metrics={"val_accuracy": 0.9}), summary(8)) is None


def test_step_time_and_memory_ratio():
    s = summary(10.0) | {"step_ms": {"median": 10.0, "ci95": [9.8, 10.2]}}
    assert step_time(s) == (10.0, (9.8, 10.2))
    med, (lo, hi) = step_time(summary(10.0))
    assert lo < med < hi
    assert memory_ratio(summary(1, peak=200), summary(1, peak=100)) == 0.5
    assert memory_ratio(summary(1), summary(1, peak=100)) is None


def test_a_paired_runs_ratio_and_its_error_come_from_its_hand_overs():
    from tfturbo.summary import hand_over_error, hand_over_ratio

    b = {"hand_overs": [[110.0, 100.0], [121.0, 110.0], [99.0, 90.0], [300.0, 100.0], [104.0, 100.0]]}
    assert hand_over_ratio(b) == pytest.approx(1.1)  # the median: the odd 3x hand-over does not decide
    logs = [math.log(r) for r in (1.1, 1.1, 1.1, 3.0, 1.04)]
    mean = sum(logs) / 5
    assert hand_over_error(b) == pytest.approx(math.sqrt(sum((v - mean) ** 2 for v in logs) / 4 / 5))
    two = {"hand_overs": [[110.0, 100.0], [121.0, 110.0]]}
    assert hand_over_ratio(two) is None and hand_over_error(two) is None  # too few: the arms' rates decide
    assert hand_over_ratio({"hand_overs": None}) is None and hand_over_ratio(None) is None


def test_a_run_whose_mfu_is_not_known_says_so_and_why_in_the_compare_table(tmp_path):
    from tfturbo import compare, runfiles

    run = tmp_path / "01-baseline"
    run.mkdir()
    runfiles.write_json_atomic(run / runfiles.SUMMARY, {
        "v": 1, "status": "completed", "settings": {"workload": "w", "batch_size": 32}, "steps_per_s": 10.0,
        "mfu": None, "mfu_unknown": "the step's FLOPs are not known: the loop 'rnn/while' has no length known"})
    [row] = compare.compare_runs([runfiles.load_run(run)])
    assert row.mfu is None and "rnn/while" in row.mfu_unknown
    assert compare.text_cells(row, [])[10] == "not known"
    assert compare.fmt_mfu(None) == "n/a" and compare.fmt_mfu(0.234) == "23%"
