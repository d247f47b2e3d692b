"""The automatic tf.data fixes (--input-fixes): which fix applies to which pipeline, and a real run that
records them."""

from __future__ import annotations

import pytest

from tfturbo.findings import INPUT_BOUND, INPUT_FIXES_APPLIED, INPUT_MODERATELY_BOUND
from tfturbo.verdicts import ProbeBand, ProbeVerdict
from trainer_backend.diagnostics.dataset_audit import PipelineOps, pipeline_ops
from trainer_backend.diagnostics.input_probe import decide, input_bound_finding
from trainer_backend.input_fixes import CACHE_MEMORY_SHARE, NOT_DETERMINISTIC, apply_fixes, plan_fixes

GiB = 2.0 ** 30


def ops(*names: str, py_function: bool = False, random_ops: tuple[str, ...] = ()) -> PipelineOps:
    return PipelineOps(list(names), py_function, list(random_ops))


SEQUENTIAL = ops("RangeDataset", "MapDataset", "BatchDatasetV2")


def test_a_deterministic_pipeline_that_fits_is_cached_and_prefetched():
    plan = plan_fixes(SEQUENTIAL, [], 10 * 2 ** 20, 8 * GiB)
    assert plan.cache and plan.prefetch
    assert "train_ds.cache()" in plan.code() and "prefetch(tf.data.AUTOTUNE)" in plan.code()
    assert NOT_DETERMINISTIC in plan.left  # the data order is kept, and the record says why


@pytest.mark.parametrize("pipeline, why", [
    (ops("TensorSliceDataset", "ShuffleDatasetV3", "MapDataset", "BatchDatasetV2"), "shuffles"),
    (ops("RangeDataset", "MapDataset", "BatchDatasetV2", random_ops=("RandomUniform",)), "random"),
    (ops("RangeDataset", "MapDataset", "BatchDatasetV2", py_function=True), "Python"),
    (None, "could not be read"),
])
def test_no_cache_with_randomness_upstream(pipeline, why):
    plan = plan_fixes(pipeline, [], 2 ** 20, 8 * GiB)
    assert not plan.cache and plan.prefetch
    assert any(line.startswith("no cache()") and why in line for line in plan.left)


@pytest.mark.parametrize("size, available", [(None, 8 * GiB), (CACHE_MEMORY_SHARE * 8 * GiB + 1, 8 * GiB),
                                             (2 ** 20, None)])
def test_no_cache_when_it_may_not_fit(size, available):
    assert not plan_fixes(SEQUENTIAL, [], size, available).cache


def test_prefetch_already_at_the_end_is_not_added_twice():
    plan = plan_fixes(ops("TensorSliceDataset", "ShuffleDatasetV3", "MapDataset", "BatchDatasetV2",
                          "PrefetchDataset", "OptionsDataset"), [], 2 ** 20, 8 * GiB)
    assert not plan.prefetch and "no prefetch added: the pipeline already ends with one" in plan.left


def test_numpy_arrays_need_no_fix():
    plan = plan_fixes(ops("TensorSliceDataset", "ShuffleDatasetV3", "BatchDatasetV2", "PrefetchDataset"),
                      [], 2 ** 20, 8 * GiB)
    assert plan.applied == [] and "in-memory arrays" in plan.left[0]
    unprefetched = plan_fixes(ops("TensorSliceDataset", "BatchDatasetV2"), [], 2 ** 20, 8 * GiB)
    assert unprefetched.prefetch and unprefetched.cache  # the user's own slices: fixed like any pipeline


def test_options_turned_off_by_the_pipeline_are_named():
    plan = plan_fixes(SEQUENTIAL, ["map_parallelization"], None, None)
    assert "the pipeline had map_parallelization off" in plan.applied[0]


def test_applied_fixes_change_the_real_pipeline_as_planned():
    import tensorflow as tf

    ds = tf.data.Dataset.range(64).map(lambda x: (tf.cast(x, tf.float32), x)).batch(8)
    fixed = apply_fixes(ds, plan_fixes(pipeline_ops(ds), [], 2 ** 20, 8 * GiB))
    names = pipeline_ops(fixed).ops
    assert names.index("CacheDatasetV2") < names.index("PrefetchDataset")
    assert fixed.options().experimental_optimization.map_parallelization is True
    assert [int(b[1][0]) for b in fixed.take(2)] == [0, 8]  # same order as the user's pipeline
    shuffled = tf.data.Dataset.range(64).shuffle(64, seed=1).batch(8).prefetch(1)
    again = apply_fixes(shuffled, plan_fixes(pipeline_ops(shuffled), [], 2 ** 20, 8 * GiB))
    assert pipeline_ops(again).ops.count("PrefetchDataset") == 1 and "CacheDatasetV2" not in pipeline_ops(again).ops


@pytest.mark.parametrize("train_ms, band, verdict", [
    (100.0, ProbeBand.HIGH, ProbeVerdict.INPUT_BOUND),       # 20% waiting: XProf's "highly input-bound"
    (90.0, ProbeBand.MODERATE, ProbeVerdict.COMPUTE_BOUND),   # 11%: moderate, a warning only
    (82.0, ProbeBand.LOW, ProbeVerdict.COMPUTE_BOUND),        # 2.4%
])
def test_probe_bands_follow_xprof(train_ms, band, verdict):
    v = decide([50.0] * 5, [80.0] * 5, [train_ms] * 5)
    assert (v.band, v.verdict) == (band, verdict)
    if band != ProbeBand.LOW:
        finding = input_bound_finding(v, SEQUENTIAL)
        assert finding.code == (INPUT_BOUND if band == ProbeBand.HIGH else INPUT_MODERATELY_BOUND)
        assert finding.severity == ("error" if band == ProbeBand.HIGH else "warning")


def test_a_gap_the_input_cannot_explain_is_low():
    assert decide([1.0] * 5, [50.0] * 5, [100.0] * 5).band == ProbeBand.LOW


def test_slow_input_run_applies_and_records_the_fixes(slow_input_fixed_run):
    summary, events = slow_input_fixed_run
    assert summary["status"] == "completed" and summary["settings"]["input_fixes"] is True
    [recorded] = [f for f in summary["findings"] if f["code"] == INPUT_FIXES_APPLIED]
    assert recorded["data"]["prefetch"] and not recorded["data"]["cache"]  # shuffled upstream: no cache
    assert any("shuffles" in line for line in recorded["data"]["left"])
    assert any("tf.numpy_function" in line for line in recorded["data"]["left"])
    assert any(e["type"] == "finding" and e["finding"]["code"] == INPUT_FIXES_APPLIED for e in events)


def _fake_probe(monkeypatch, train_rounds: list[float], data_ms: float = 50.0) -> dict:
    """probe() with timed probes replaced: data `data_ms`, compute 80 ms, real training per round as given."""
    from trainer_backend.diagnostics import input_probe, profile_reader

    rounds = iter(train_rounds)
    monkeypatch.setattr(input_probe, "time_input", lambda ds, steps, warmup: [data_ms] * steps)
    monkeypatch.setattr(input_probe, "cached_batch", lambda ds: "cached")
    monkeypatch.setattr(input_probe, "time_steps", lambda model, ds, steps, warmup:
                        [80.0] * steps if ds == "cached" else [next(rounds)] * steps)
    monkeypatch.setattr(input_probe, "pipeline_ops", lambda ds: SEQUENTIAL)
    monkeypatch.setattr(profile_reader, "profile_steps", lambda model, ds, logdir: None)
    return input_probe.probe(None, "train", 20)


def test_a_wait_seen_once_is_measured_again_and_a_burst_of_load_is_not_called_input_bound(monkeypatch):
    doc = _fake_probe(monkeypatch, [110.0, 82.0])  # a load burst during the first real-training probe
    assert doc["rounds"] == 2 and doc["verdict"] == ProbeVerdict.COMPUTE_BOUND and doc["band"] == ProbeBand.LOW
    assert doc["findings"] == []


def test_a_wait_seen_in_both_rounds_is_input_bound_with_the_smaller_share(monkeypatch):
    doc = _fake_probe(monkeypatch, [110.0, 105.0])
    assert doc["rounds"] == 2 and doc["verdict"] == ProbeVerdict.INPUT_BOUND
    assert doc["input_fraction"] == round(25 / 105, 4) and doc["findings"][0]["code"] == INPUT_BOUND


def test_the_probe_writes_whether_the_input_explains_the_gap_and_the_fact_reads_it(monkeypatch):
    """The probe's own decision is in its document (`input_explains_gap`); the cards and the report show it
    (`verdicts.input_share_fact`) rather than deriving it again from the thresholds."""
    from tfturbo.input_probe import InputProbe
    from tfturbo.verdicts import input_share_fact as fact_of

    def input_share_fact(doc: dict) -> tuple[str, str]:
        return fact_of(InputProbe.from_dict(doc))

    waits = _fake_probe(monkeypatch, [110.0, 105.0])  # the input alone (50 ms) accounts for the 25 ms gap
    assert waits["input_explains_gap"] is True and input_share_fact(waits) == ("Time waiting for input", "24%")
    noise = _fake_probe(monkeypatch, [110.0], data_ms=5.0)  # 5 ms cannot explain a 30 ms gap: host noise
    assert noise["input_explains_gap"] is False and noise["band"] == ProbeBand.LOW and noise["rounds"] == 1
    label, value = input_share_fact(noise)
    assert label == "Slower than compute alone" and value.startswith("27% of a step (30.00 ms): not the input")
    assert input_share_fact({**noise, "input_explains_gap": True})[0] == "Time waiting for input"  # the field decides
    older = {k: v for k, v in noise.items() if k != "input_explains_gap"}  # written before the field: same rule
    assert input_share_fact(older) == (label, value)
    tiny = {**noise, "step_ms": {"data": 0.003, "compute": 1.0, "train": 1.002}}  # a 2 µs gap is not "0.00 ms"
    assert input_share_fact(tiny)[1].startswith("27% of a step (under 0.01 ms): not the input, which alone takes "
                                                "under 0.01 ms a batch")


def test_no_wait_needs_no_second_round(monkeypatch):
    doc = _fake_probe(monkeypatch, [81.0])
    assert doc["rounds"] == 1 and doc["verdict"] == ProbeVerdict.COMPUTE_BOUND
