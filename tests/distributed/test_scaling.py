"""`tfturbo scaling`: the points, the finding and scaling.json from trials fed with recorded summaries (no training)."""

from __future__ import annotations

import argparse

import pytest

from tfturbo import scaling
from tfturbo.commands.scaling import replica_counts
from tfturbo.runfiles import STUDY_YAML
from tfturbo.settings import RunSettings
from tfturbo.trials.speed import SpeedRule
from tfturbo.trials.trial import Trial


def summary(samples_per_s: float, batch: int) -> dict:
    return {"status": "completed", "settings": {"batch_size": batch},
            "throughput": {"samples_per_s": samples_per_s, "windows": 6, "seconds": 3.0}}  # measured enough


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
    a, b = (next(r.planned.settings for r in trial.runs if r.planned.arm == arm) for arm in ("a", "b"))
    assert (a.workers, a.batch_size) == (1, 32) and (b.workers, b.batch_size) == (4, 128)
    assert b.steps * b.batch_size == a.steps * a.batch_size


def test_efficiency_is_the_speedup_over_n_with_its_interval_and_a_finding_below_0_8():
    trial = measured(4, [1000, 1010, 990], [3000, 3100, 2900])
    p = scaling.ScalingPoint.from_trial(4, trial)
    assert p.replicas == 4 and p.efficiency == pytest.approx(p.speedup / 4)
    assert p.efficiency == pytest.approx(0.75, abs=0.01)
    lo, hi = p.efficiency_ci95
    assert lo < p.efficiency < hi
    assert p.ci95[0] < p.samples_per_s < p.ci95[1]
    found = scaling.findings_for([p], "multiworker")
    assert [f.code for f in found] == ["SCALING_INEFFICIENT"] and "efficiency 0.75" in found[0].message
    assert "prefetch" in found[0].fix and "--batch-size" in found[0].fix


def test_near_linear_scaling_raises_nothing():
    trial = measured(2, [1000, 1000, 1000], [1950, 1990, 1970])
    assert scaling.findings_for([scaling.ScalingPoint.from_trial(2, trial)], "mirrored") == []


def test_the_replica_list_needs_a_count_above_one():
    assert replica_counts("4,1,2") == [1, 2, 4]
    for bad in ("1", "x", "0,2", ""):
        with pytest.raises(argparse.ArgumentTypeError):
            replica_counts(bad)


def test_the_table_names_every_point():
    trial = measured(2, [1000, 1000, 1000], [1500, 1520, 1480])
    points = [scaling.ScalingPoint.one_replica([990.0, 1010.0]), scaling.ScalingPoint.from_trial(2, trial)]
    result = scaling.ScalingResult("builtin:mlp", "mirrored", 32, points,
                                   [f.to_dict() for f in scaling.findings_for(points, "mirrored")])
    text = scaling.render(result)
    assert "0.75" in text and "SCALING_INEFFICIENT" in text and "1,000" in text


def measure(counts: list[int], rates: dict[int, float], fail_one: bool = False) -> scaling.ScalingMeasurement:
    """A whole measurement driven as the CLI and the wizard drive it; `rates[n]` is n replicas' throughput."""
    m = scaling.ScalingMeasurement(RunSettings("builtin:mlp", steps=60), "mirrored", counts, SpeedRule(2, 2))
    while (planned := m.next_run()) is not None:
        n = m.replicas_of(planned)
        status = "failed" if fail_one and n == 1 else "completed"
        # the workload's own batch (32 per replica) comes back in the summary, as the backend reports it
        m.record(planned, {**summary(rates[n], planned.settings.batch_size or 32), "status": status}, None)
    return m


def test_a_measurement_plans_every_count_and_fixes_the_global_batch_from_the_first_run():
    m = measure([1, 2, 4], {1: 1000.0, 2: 1900.0, 4: 2400.0})
    assert [n for n, _ in m.measured()] == [2, 4]
    assert {r.planned.settings.batch_size for _, t in m.measured() for r in t.runs if r.planned.arm == "b"} == {64, 128}
    result = m.result()
    assert [p.replicas for p in result.points] == [1, 2, 4] and result.per_replica_batch_size == 32
    assert result.points[2].efficiency == pytest.approx(0.6) and result.findings[0]["where"] == "4 replicas"
    assert "At 4 replicas (mirrored)" in result.interpretation() and "scales poorly" in result.interpretation()


def test_a_failed_one_replica_run_ends_the_measurement():
    m = measure([1, 2, 4], {1: 1000.0, 2: 1900.0, 4: 2400.0}, fail_one=True)
    assert len(m.trials) == 1 and m.result().points[0].status == "failed"
    assert "nothing can be said" in m.result().interpretation()


def test_scaling_json_round_trips_and_reads_tolerantly(tmp_path):
    result = measure([1, 2], {1: 1000.0, 2: 1950.0}).result()
    result.save(tmp_path)
    again = scaling.ScalingResult.load(tmp_path)
    assert again == result and again.to_dict()["v"] == scaling.VERSION
    broken = scaling.ScalingResult.from_dict({"points": [{"replicas": "two"}, {"replicas": 2, "efficiency": "x"}]})
    assert [p.efficiency for p in broken.points] == [None] and "point 1 has no replica count" in broken.problems[0]
    assert scaling.ScalingResult.load(tmp_path / "nowhere") is None


def test_a_study_keeps_its_scaling_measurement_in_its_scaling_folder(tmp_path):
    assert scaling.scaling_dir(tmp_path) == tmp_path
    (tmp_path / STUDY_YAML).write_text("workload: builtin:mlp\n")
    assert scaling.scaling_dir(tmp_path) == tmp_path / scaling.SCALING_DIR
    measure([1, 2], {1: 1000.0, 2: 1950.0}).result().save(scaling.scaling_dir(tmp_path))
    assert scaling.ScalingResult.load(tmp_path).points[1].replicas == 2
