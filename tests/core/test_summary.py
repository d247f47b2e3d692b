"""Reading two runs' summaries (`RunSummary`'s readers): per-sample throughput, the accuracy delta, step time and
memory."""

import math

import numpy as np
import pytest

from tfturbo.run_summary import RunSummary


def summary(median_ms, batch=64, metrics=None, seed=0, peak=None, **more):
    rng = np.random.default_rng(seed)
    samples = list(median_ms * (1 + 0.02 * rng.standard_normal(200)))
    return RunSummary.from_dict({"settings": {"batch_size": batch}, "step_ms_samples": samples,
                                 "steps_per_s": 1000 / median_ms, "metrics": metrics or {}, "peak_memory_bytes": peak,
                                 **more})


def primary_metric(metrics):
    return RunSummary(metrics=metrics).primary_metric()


def test_throughput_is_per_sample_so_a_larger_batch_counts_its_extra_data():
    base = summary(10.0, batch=64, seed=1)
    bigger = summary(15.0, batch=128, seed=2)  # slower per step, but 2x data per step
    assert abs(bigger.samples_per_s / base.samples_per_s - 4 / 3) < 1e-9
    assert bigger.step_rate == pytest.approx(bigger.samples_per_s / 128)


def test_primary_metric_prefers_validation_accuracy_then_loss():
    assert primary_metric({"loss": 0.3, "val_loss": 0.4, "val_accuracy": 0.9}) == ("val_accuracy", 0.9, True)
    assert primary_metric({"loss": 0.3, "val_loss": 0.4}) == ("val_loss", 0.4, False)
    assert primary_metric({"val_accuracy": float("nan")}) is None


def test_val_delta_uses_the_baseline_metric():
    name, delta = summary(10, metrics={"val_accuracy": 0.90}).val_delta(summary(8, metrics={"val_accuracy": 0.88}))
    assert name == "val_accuracy" and abs(delta + 0.02) < 1e-12
    assert summary(10, metrics={"val_accuracy": 0.9}).val_delta(summary(8)) is None


def test_step_time_and_memory_ratio():
    s = summary(10.0, step_ms={"median": 10.0, "ci95": [9.8, 10.2]})
    assert s.step_time() == (10.0, (9.8, 10.2))
    med, (lo, hi) = summary(10.0).step_time()
    assert lo < med < hi
    assert summary(1, peak=200).memory_ratio(summary(1, peak=100)) == 0.5
    assert summary(1).memory_ratio(summary(1, peak=100)) is None


def test_a_paired_runs_ratio_and_its_error_come_from_its_hand_overs():
    b = RunSummary(hand_overs=[[110.0, 100.0], [121.0, 110.0], [99.0, 90.0], [300.0, 100.0], [104.0, 100.0]])
    assert b.hand_over_ratio == pytest.approx(1.1)  # the median: the odd 3x hand-over does not decide
    logs = [math.log(r) for r in (1.1, 1.1, 1.1, 3.0, 1.04)]
    mean = sum(logs) / 5
    assert b.hand_over_error == pytest.approx(math.sqrt(sum((v - mean) ** 2 for v in logs) / 4 / 5))
    two = RunSummary(hand_overs=[[110.0, 100.0], [121.0, 110.0]])
    assert two.hand_over_ratio is None and two.hand_over_error is None  # too few: the arms' rates decide
    assert RunSummary(hand_overs=None).hand_over_ratio is None


def test_a_run_whose_mfu_is_not_known_says_so_and_why_in_the_compare_table(tmp_path):
    from tfturbo import compare, runfiles

    run = tmp_path / "01-baseline"
    run.mkdir()
    runfiles.write_json_atomic(run / runfiles.SUMMARY, {
        "v": 1, "status": "completed", "settings": {"workload": "w", "batch_size": 32}, "steps_per_s": 10.0,
        "mfu": None, "mfu_unknown": "the step's FLOPs are not known: the loop 'rnn/while' has no length known"})
    [row] = compare.compare_runs([runfiles.load_run(run)])
    assert row.mfu is None and "rnn/while" in row.mfu_unknown
    assert compare.text_cells(row, [])[10] == "—" and "rnn/while" in compare.mfu_why(row.mfu, row.mfu_unknown)
    assert compare.fmt_mfu(None) == "—" and compare.fmt_mfu(0.234) == "23%"
