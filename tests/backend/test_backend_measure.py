"""Repeatable and adaptive measurement: same seed ⇒ same curves; --until-ci stops once precise (section 8)."""

from __future__ import annotations

import pytest

from backend_helpers import TINY, WORKLOADS, run_backend

from tfturbo import protocol


def _curves(run):
    epochs = [(e["step"], e["metrics"]["loss"]) for e in run.of_type(protocol.EPOCH)]
    vals = [(e["step"], e["metrics"]["val_loss"]) for e in run.of_type(protocol.VALIDATION)]
    return epochs, vals


def test_same_seed_gives_identical_loss_curves(tmp_path):
    runs = [run_backend("run", TINY, "--out", str(tmp_path / name), "--steps", "60", "--val-every", "20",
                        "--profile", "0:0") for name in ("a", "b")]
    for run in runs:
        assert run.exit_code == 0, run.stderr[-3000:]
    a, b = (_curves(r) for r in runs)
    assert [s for s, _ in a[0]] == [20, 40, 60] and len(a[1]) == 3
    assert a == b


def test_until_ci_stops_once_the_step_time_is_precise_and_lr_scale_applies(tmp_path):
    run = run_backend("run", TINY, "--out", str(tmp_path / "adaptive"), "--steps", "20000", "--val-every", "100",
                      "--until-ci", "0.2", "--min-steps", "200", "--lr-scale", "2", "--profile", "0:0")
    assert run.exit_code == 0, run.stderr[-3000:]
    doc = run.document
    assert doc["status"] == "completed" and doc["stopped_early"] is True
    assert 200 <= doc["steps_completed"] < 20000 and doc["steps_completed"] % 100 == 0  # at a validation point
    assert doc["steps_saved"] == 20000 - doc["steps_completed"]
    half_width = (doc["step_ms"]["ci95"][1] - doc["step_ms"]["ci95"][0]) / 2
    assert half_width <= 0.2 * doc["step_ms"]["median"]
    assert abs(doc["learning_rate"] - 0.02) < 1e-6  # tiny's Adam(0.01) × 2


def test_time_before_validation_starts_enters_no_window(tmp_path):
    """Keras makes its test function and resets its iterator before on_test_begin: 0.6 s per validation here.

    A window holding a gap would be GAP_S longer than its steps take; judged
    against the run's own median step, so a loaded machine's slower steps do
    not fail it."""
    gap = 0.6  # slow_eval_start.GAP_S
    run = run_backend("run", str(WORKLOADS / "slow_eval_start.py"), "--out", str(tmp_path / "r"), "--steps", "60",
                      "--val-every", "20", "--profile", "0:0")
    assert run.exit_code == 0, run.stderr[-3000:]
    doc = run.document
    assert len(doc["validation"]) == 3
    step_s = doc["step_ms"]["median"] / 1000.0
    windows = doc["windows"][1:]  # after step 1 (tracing)
    assert windows and all(seconds < (last - first + 1) * step_s + gap / 2 for first, last, seconds in windows), windows
    assert doc["wall_s"] > 3 * gap  # the gaps happened, outside the windows


@pytest.mark.parametrize("val_every", [32, 100])
def test_the_partial_last_batchs_compilation_enters_no_window_and_its_cost_is_stated(tmp_path, val_every):
    """Issue 40: a dataset that is not a whole number of batches ends each pass in a smaller batch, which XLA
    compiles at first sight, after warm-up (a keras-io weather run's 8.5 s). Its window measured nothing but that
    compilation and counted as steady state; now the summary names the call and its seconds
    (`one_off_compiles`) and no window holds it — whether the pass's end is an epoch's last call (a script's own
    epochs, `val_every` 32: it has no per-step sample) or a step inside one (a speed-only run, 100)."""
    run = run_backend("run", str(WORKLOADS / "partial_batch.py"), "--out", str(tmp_path / "r"), "--steps", "100",
                      "--val-every", str(val_every), "--jit", "--profile", "0:0", "--no-model")
    assert run.exit_code == 0, run.stderr[-3000:]
    doc = run.document
    assert not [w for w in doc["windows"] if w[0] <= 32 <= w[1]], doc["windows"]  # on any machine
    compiles = doc["one_off_compiles"]
    if doc["first_steady_step"] < 32:  # the scenario: the compile after warm-up (on a loaded machine warm-up
        # may still run at step 32, as it did under a load of 9; the compile is then warm-up's, not a one-off)
        assert compiles and compiles[0][0] == 32 and compiles[0][1] > 0.1, compiles
    assert len(compiles) <= 2  # the later passes' partial batches run the compiled program


def test_a_validated_replicate_loads_its_evaluation_step_from_the_xla_cache(tmp_path):
    """Two full-length XLA runs validating at other intervals (a trial's first pairs at other lengths): the
    second compiles neither its training nor its evaluation step. The evaluation step is traced at the first
    validation, after as many steps as the interval, so its name (TensorFlow's uid counter) differed and it was
    compiled in every run before `xla_flags.align_trace_uid` gave it a start of its own."""
    cache = tmp_path / "xla-cache"
    entries = []
    for every in (100, 150):
        run = run_backend("run", TINY, "--out", str(tmp_path / f"r{every}"), "--steps", "300", "--val-every",
                          str(every), "--profile", "0:0", "--jit", "--xla-cache", str(cache))
        assert run.exit_code == 0, run.stderr[-3000:]
        assert run.document["validation"]
        entries.append(sorted(p.name for p in cache.glob("xla_compile_cache__*")))
    assert len(entries[0]) == 2 and entries[1] == entries[0]  # the training and the evaluation step, once each


def test_a_speed_only_replicate_neither_validates_nor_saves_its_model_and_shares_the_xla_cache(tmp_path):
    cache = tmp_path / "xla-cache"
    # 300 steps of a sub-millisecond XLA step: 0.1-0.2 s of steady state, shorter than one 0.5 s window; the one
    # window it had was dropped whenever the run's end moved the warm-up's end past its first step (0 windows,
    # no throughput). The steady windows are sized to the steps left, so such a run still has several.
    run = run_backend("run", TINY, "--out", str(tmp_path / "r"), "--steps", "300", "--val-every", "600",
                      "--profile", "0:0", "--speed-only", "--jit", "--xla-cache", str(cache))
    assert run.exit_code == 0, run.stderr[-3000:]
    doc = run.document
    assert doc["validation"] == [] and doc["paired_validation"] is None and doc["checkpoint"] is None
    assert (tmp_path / "r" / "checkpoint" / "tfturbo-settings.yaml").exists()  # how it was trained, still
    assert not (tmp_path / "r" / "checkpoint" / "model.keras").exists()
    assert doc["settings"]["speed_only"] and doc["throughput"]["windows"] >= 3, doc["windows"]
    assert doc["steps_per_s"] == doc["throughput"]["samples_per_s"] / doc["settings"]["batch_size"]
    assert list(cache.glob("xla_compile_cache__*")), "XLA kept nothing in its persistent cache"


def test_paired_from_keeps_every_validation_point_on_the_curve_and_per_example_results_from_that_step(tmp_path):
    """--paired-from STEP (a candidate's gate run, `Trial.gate_from`): Keras validates at every point, as the plots
    show them; the accuracy gate's pass over every example runs only from STEP on (here 3 of 6 points)."""
    import numpy as np

    run = run_backend("run", TINY, "--out", str(tmp_path / "r"), "--steps", "60", "--val-every", "10",
                      "--paired-from", "40", "--profile", "0:0", "--no-model")
    assert run.exit_code == 0, run.stderr[-3000:]
    assert [e["step"] for e in run.of_type(protocol.VALIDATION)] == [10, 20, 30, 40, 50, 60]
    with np.load(tmp_path / "r" / run.document["paired_validation"]["file"]) as data:
        assert list(data["step"]) == [40, 50, 60]
