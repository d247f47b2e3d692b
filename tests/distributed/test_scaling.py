"""`tfturbo scaling`: the points and the finding from trials fed with recorded run summaries (no training)."""

from __future__ import annotations

import argparse

import pytest

from tfturbo.commands import scaling
from tfturbo.settings import RunSettings
from tfturbo.trials.speed import SpeedRule
from tfturbo.trials.trial import Trial


def summary(samples_per_s: float, batch: int) -> dict:
    return {"status": "completed", "settings": {"batch_size": batch},
            "throughput": {"samples_per_s": samples_per_s}}


def measured(n: int, one: list[float], many: list[float]) -> Trial:
    base = RunSettings("builtin:mlp", batch_size=32, steps=60)
    trial = Trial(scaling.on_replicas(base, "multiworker", 1), scaling.on_replicas(base, "multiworker", n),
                  SpeedRule(min_pairs=len(one), max_pairs=len(one)))
    rates = {"a": iter(one), "b": iter(many)}
    while (planned := trial.next_run()) is not None:
        trial.record(planned, summary(next(rates[planned.arm]), planned.settings.batch_size), None)
    return trial


def test_n_replicas_keep_the_per_replica_batch_and_see_the_same_samples():
    trial = measured(4, [1000, 1010, 990], [3000, 3100, 2900])
    a, b = trial.runs[0].planned.settings, trial.runs[1].planned.settings
    assert (a.workers, a.batch_size) == (1, 32) and (b.workers, b.batch_size) == (4, 128)
    assert b.steps * b.batch_size == a.steps * a.batch_size


def test_efficiency_is_the_speedup_over_n_with_its_interval_and_a_finding_below_0_8():
    trial = measured(4, [1000, 1010, 990], [3000, 3100, 2900])
    p = scaling.point(4, trial)
    assert p["replicas"] == 4 and p["efficiency"] == pytest.approx(p["speedup"] / 4)
    assert p["efficiency"] == pytest.approx(0.75, abs=0.01)
    lo, hi = p["efficiency_ci95"]
    assert lo < p["efficiency"] < hi
    assert p["ci95"][0] < p["samples_per_s"] < p["ci95"][1]
    found = scaling.findings_for([p], "multiworker")
    assert [f.code for f in found] == ["SCALING_INEFFICIENT"] and "efficiency 0.75" in found[0].message
    assert "prefetch" in found[0].fix and "--batch-size" in found[0].fix


def test_near_linear_scaling_raises_nothing():
    trial = measured(2, [1000, 1000, 1000], [1950, 1990, 1970])
    assert scaling.findings_for([scaling.point(2, trial)], "mirrored") == []


def test_the_replica_list_needs_a_count_above_one():
    assert scaling.replica_counts("4,1,2") == [1, 2, 4]
    for bad in ("1", "x", "0,2", ""):
        with pytest.raises(argparse.ArgumentTypeError):
            scaling.replica_counts(bad)


def test_the_table_names_every_point():
    trial = measured(2, [1000, 1000, 1000], [1500, 1520, 1480])
    doc = {"points": [{"replicas": 1, "samples_per_s": 1000.0, "ci95": [990.0, 1010.0], "efficiency": 1.0,
                       "efficiency_ci95": [1.0, 1.0]}, scaling.point(2, trial)],
           "findings": [f.to_dict() for f in scaling.findings_for([scaling.point(2, trial)], "mirrored")]}
    text = scaling.render(doc)
    assert "0.75" in text and "SCALING_INEFFICIENT" in text and "1,000" in text
