"""decide() on recorded summaries: the keep/reject rule of the ladder, without training."""

from __future__ import annotations

import pytest

from tfturbo.findings import codes_of
from tfturbo.stats import change_verdict
from tfturbo.tune.decision import Tolerance, decide, reference_decision


def test_faster_and_accurate_is_kept(make_summary):
    base = make_summary(100.0, 0.90, seed=1)
    cand = make_summary(70.0, 0.899, policy="mixed_float16", seed=2)
    d = decide(base, cand)
    assert d.kept
    assert d.speedup == pytest.approx(100 / 70, rel=0.03)
    assert d.speedup_ci95[0] > 1.0 and d.speedup_ci95[0] <= d.speedup <= d.speedup_ci95[1]
    assert d.metric == "val_accuracy" and d.val_delta == pytest.approx(-0.001)
    assert d.val_step == 100 and d.findings == []
    assert "faster" in d.reason and "within tolerance" in d.reason


def test_difference_inside_the_noise_is_not_a_win(make_summary):
    base = make_summary(100.0, 0.90, noise=0.05, seed=1)
    cand = make_summary(99.0, 0.90, noise=0.05, seed=2)
    d = decide(base, cand)
    assert d.speedup > 1.0  # the point estimate looks faster ...
    assert change_verdict(d.speedup_ci95) == "no measurable change"
    assert not d.kept  # ... but it is inside the noise
    assert "no measurable change" in d.reason
    assert codes_of(d.findings) == ["SLOWER_THAN_BASELINE"]


def test_slower_is_rejected_as_slower(make_summary):
    d = decide(make_summary(100.0, seed=1), make_summary(130.0, policy="mixed_float16", seed=2))
    assert not d.kept
    assert d.speedup_ci95[1] < 1.0
    assert d.reason.startswith("slower")
    assert codes_of(d.findings) == ["SLOWER_THAN_BASELINE"]
    assert "mixed_float16" in d.findings[0]["where"]


def test_accuracy_drop_beyond_tolerance_is_rejected_even_when_faster(make_summary):
    base = make_summary(100.0, 0.90, seed=1)
    cand = make_summary(60.0, 0.88, policy="mixed_float16", seed=2)
    d = decide(base, cand)
    assert not d.kept and d.speedup_ci95[0] > 1.0
    assert codes_of(d.findings) == ["ACCURACY_REGRESSION"]
    assert d.val_delta == pytest.approx(-0.02)
    assert "-2.00 pp" in d.reason and "tolerance 0.5 pp" in d.reason
    # the same drop passes a looser, user-chosen tolerance
    assert decide(base, cand, Tolerance(accuracy_pp=3.0)).kept


def test_drop_within_tolerance_is_kept(make_summary):
    d = decide(make_summary(100.0, 0.90, seed=1), make_summary(60.0, 0.896, seed=2))
    assert d.kept and d.val_delta == pytest.approx(-0.004)


def test_loss_metric_uses_relative_tolerance(make_summary):
    base = make_summary(100.0, None, val_loss=0.50, seed=1)
    ok = make_summary(60.0, None, val_loss=0.509, seed=2)   # +1.8%
    bad = make_summary(60.0, None, val_loss=0.52, seed=3)   # +4%
    assert decide(base, ok).kept
    d = decide(base, bad)
    assert not d.kept and d.metric == "val_loss" and codes_of(d.findings) == ["ACCURACY_REGRESSION"]


def test_nan_stopped_run_is_rejected_with_nan_loss(make_summary):
    cand = make_summary(50.0, None, status="nan_stopped", policy="mixed_float16", seed=2)
    d = decide(make_summary(100.0, seed=1), cand)
    assert not d.kept and codes_of(d.findings) == ["NAN_LOSS"]
    assert "NaN" in d.reason


def test_nan_validation_metric_is_nan_loss(make_summary):
    cand = make_summary(50.0, 0.9, policy="mixed_float16", seed=2)
    cand["metrics"]["val_accuracy"] = None  # NaN is written as null
    for v in cand["validation"]:
        v["metrics"]["val_accuracy"] = None
    d = decide(make_summary(100.0, seed=1), cand)
    assert not d.kept and "NAN_LOSS" in codes_of(d.findings)


def test_recompile_storm_disqualifies_a_faster_rung(make_summary):
    storm = {"code": "RECOMPILE_STORM", "severity": "error", "message": "recompiling", "where": "train_ds"}
    d = decide(make_summary(100.0, seed=1), make_summary(60.0, jit=True, findings=[storm], seed=2))
    assert not d.kept and codes_of(d.findings) == ["RECOMPILE_STORM"]
    assert "recompil" in d.reason


@pytest.mark.parametrize("status, words", [("failed", "failed"), ("crashed", "crashed"),
                                           ("cancelled", "cancelled")])
def test_runs_that_did_not_complete_are_not_kept(make_summary, status, words):
    cand = make_summary(60.0, status=status, seed=2)
    cand["error"] = {"message": "out of memory"} if status == "failed" else None
    d = decide(make_summary(100.0, seed=1), cand)
    assert not d.kept and words in d.reason
    if status == "failed":
        assert "out of memory" in d.reason


def test_accuracy_is_compared_at_the_largest_common_validation_step(make_summary):
    # the candidate stopped early (adaptive measurement) at step 60; the baseline ran to 100
    base = make_summary(100.0, 0.90, steps=100, seed=1)
    cand = make_summary(60.0, 0.54, steps=100, steps_completed=60, seed=2)  # 0.54 * 60/60 at step 60
    d = decide(base, cand)
    assert d.val_step == 60
    # baseline at step 60 is 0.90 * 60/100 = 0.54: equal, so kept despite the lower final number
    assert d.kept and d.val_delta == pytest.approx(0.0)


def test_reference_must_also_be_beaten(make_summary):
    base = make_summary(100.0, seed=1)
    mp = make_summary(70.0, policy="mixed_float16", seed=2)
    xla_same = make_summary(70.5, policy="mixed_float16", jit=True, seed=3)
    d = decide(base, xla_same, reference=mp)
    assert d.speedup_ci95[0] > 1.0  # faster than the baseline ...
    assert not d.kept  # ... but not than the rung it extends
    assert "no measurable change" in d.reason and "mixed_float16" in d.reason
    assert d.reference_speedup is not None and d.reference_speedup[1][0] <= 1.0 <= d.reference_speedup[1][1]
    assert decide(base, make_summary(50.0, policy="mixed_float16", jit=True, seed=4), reference=mp).kept


def test_throughput_is_compared_per_sample(make_summary):
    base = make_summary(100.0, batch_size=64, seed=1)
    bigger = make_summary(150.0, batch_size=128, seed=2)  # 1.5x the step time for 2x the samples
    d = decide(base, bigger)
    assert d.kept and d.speedup == pytest.approx(200 / 150, rel=0.03)


def test_reference_decision_is_the_baseline_row(make_summary):
    d = reference_decision(make_summary(100.0, 0.9, seed=1))
    assert d.kept and d.speedup == 1.0 and d.val_delta == 0.0
    assert d.speedup_ci95[0] < 1.0 < d.speedup_ci95[1]
