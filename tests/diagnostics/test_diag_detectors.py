"""Live detectors fed the windows a run would give them."""

from __future__ import annotations

import numpy as np
import pytest

from tfturbo.findings import LOSS_SCALE_COLLAPSE, LOSS_SCALE_SKIPS, RECOMPILE_STORM, XLA_NOT_ACTIVE
from tfturbo.settings import RunSettings
from trainer_backend.detectors import default_detectors
from trainer_backend.detectors.base import RunContext, Window
from trainer_backend.detectors.loss_scale import LossScaleMonitor
from trainer_backend.detectors.recompile import RecompileStorm
from trainer_backend.detectors.xla import FALLBACK_TEXT, XlaNotActive


def _feed(detector, ctx, step_ms, window=10, loss_scales=None, warmup_end=2):
    """Run `detector` over `step_ms` in windows; returns every finding it raised."""
    found = list(detector.on_start(ctx))
    for i in range(0, len(step_ms), window):
        chunk = step_ms[i:i + window]
        ctx.all_step_ms.extend(chunk)
        ctx.warmup_end = warmup_end if len(ctx.all_step_ms) > warmup_end else None
        scale = loss_scales[i // window] if loss_scales else None
        found += detector.on_window(ctx, Window(list(range(i + 1, i + 1 + len(chunk))), chunk, 0.5, scale, None))
    return found + list(detector.on_end(ctx))


def _ragged_dataset():
    import tensorflow as tf

    lengths = np.random.default_rng(0).integers(4, 40, size=300)
    ds = tf.data.Dataset.from_generator(lambda: ((np.ones(n, "int32"), 1) for n in lengths),
                                        output_signature=(tf.TensorSpec([None], tf.int32), tf.TensorSpec([], tf.int32)))
    return ds.padded_batch(32)


def _storm_times(n=150, every=7):
    ms = [3.0 + 0.2 * np.sin(i) for i in range(n)]
    ms[0] = 2000.0
    for i in range(5, n, every):
        ms[i] = 450.0  # a compilation for a new shape
    return ms


def test_recompile_storm_names_the_varying_dimension():
    ctx = RunContext(settings=RunSettings(jit_compile=True, batch_size=32), model=None, train_ds=_ragged_dataset())
    [finding] = _feed(RecompileStorm(), ctx, _storm_times())
    assert finding.code == RECOMPILE_STORM
    assert "dimension 1 of x" in finding.message and "batch size varies" in finding.message
    assert finding.where == "x dimension 1, batch dimension"
    assert "padded_shapes=([40], [])" in finding.fix and "drop_remainder=True" in finding.fix
    assert finding.data["spikes"] >= 3


def test_no_storm_without_xla_or_for_isolated_spikes():
    ds = _ragged_dataset()
    no_jit = RunContext(settings=RunSettings(jit_compile=False), model=None, train_ds=ds)
    assert _feed(RecompileStorm(), no_jit, _storm_times()) == []
    ms = [3.0] * 150
    ms[0], ms[40], ms[90] = 2000.0, 400.0, 60.0  # one new shape once; one hiccup below the compile floor
    jit = RunContext(settings=RunSettings(jit_compile=True), model=None, train_ds=ds)
    assert _feed(RecompileStorm(), jit, ms) == []


def test_storm_with_fixed_shapes_points_at_the_step_inputs():
    import tensorflow as tf

    ds = tf.data.Dataset.from_tensor_slices((np.zeros((64, 4), "float32"), np.zeros(64, "int32"))).batch(
        8, drop_remainder=True)
    ctx = RunContext(settings=RunSettings(jit_compile=True), model=None, train_ds=ds)
    [finding] = _feed(RecompileStorm(), ctx, _storm_times())
    assert "looked fixed" in finding.message and finding.where == "train step inputs"


def test_loss_scale_skips_are_reported_once_at_the_end():
    ctx = RunContext(settings=RunSettings(policy="mixed_float16"), model=None, train_ds=None)
    scales = [2.0 ** 15 / 2 ** 4] + [2.0 ** 11] * 9  # four halvings in the first window, then stable
    [finding] = _feed(LossScaleMonitor(), ctx, [3.0] * 100, loss_scales=scales)
    assert finding.code == LOSS_SCALE_SKIPS and finding.severity == "info"
    assert finding.data["skipped_steps"] == 4 and finding.data["final_scale"] == 2048


def test_loss_scale_collapse_is_raised_live():
    ctx = RunContext(settings=RunSettings(policy="mixed_float16"), model=None, train_ds=None)
    scales = [2.0 ** (15 - 3 * (i + 1)) for i in range(10)]  # keeps halving: below 1 by the 6th window
    found = _feed(LossScaleMonitor(), ctx, [3.0] * 100, loss_scales=scales)
    assert [f.code for f in found] == [LOSS_SCALE_COLLAPSE]
    assert found[0].data["loss_scale"] <= 1.0 and "bfloat16" in found[0].fix


def test_no_loss_scale_findings_without_a_loss_scale():
    ctx = RunContext(settings=RunSettings(), model=None, train_ds=None)
    assert _feed(LossScaleMonitor(), ctx, [3.0] * 50) == []


def test_xla_not_active_from_keras_warning_in_the_backend_log():
    import keras

    log = ["training..."]
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    ctx = RunContext(settings=RunSettings(jit_compile=True), model=model, train_ds=None,
                     backend_log=lambda: "\n".join(log))
    detector = XlaNotActive()
    model.jit_compile = True
    assert _feed(detector, ctx, [3.0] * 20) == []
    log.append("UserWarning: Model doesn't support `jit_compile=True`. " + FALLBACK_TEXT + ".")
    found = _feed(detector, ctx, [3.0] * 20)
    assert [f.code for f in found] == [XLA_NOT_ACTIVE]
    assert _feed(detector, ctx, [3.0] * 20) == []  # raised once


@pytest.mark.parametrize("jit", [False, True])
def test_every_run_gets_the_diagnostics_detectors(jit):
    kinds = {type(d) for d in default_detectors(RunSettings(jit_compile=jit))}
    assert {RecompileStorm, LossScaleMonitor, XlaNotActive} <= kinds
