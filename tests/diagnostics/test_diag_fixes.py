"""The automatic fixes a run applies: float32 head (keeps the weights), fixed batch shapes."""

from __future__ import annotations

import numpy as np
import pytest

from trainer_backend.diagnostics.model_audit import head_findings
from trainer_backend.fixes import drop_partial_batches, float32_head
from trainer_backend.workload import load_workload


@pytest.fixture
def mixed_float16():
    import keras

    keras.mixed_precision.set_global_policy("mixed_float16")
    yield
    keras.mixed_precision.set_global_policy("float32")


def _functional_model():
    import keras

    inputs = keras.Input((6,))
    x = keras.layers.Dense(16, activation="relu")(inputs)
    outputs = keras.layers.Dense(3, activation="softmax", name="head")(x)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer=keras.optimizers.SGD(0.05), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    return model


def _assert_fixed(model, fixed, x):
    assert head_findings(model) and not head_findings(fixed)
    assert fixed(x).dtype.name == "float32"
    for before, after in zip(model.get_weights(), fixed.get_weights()):
        np.testing.assert_array_equal(before, after)
    # the same function, computed in float32 at the end: equal to float16 precision
    np.testing.assert_allclose(np.asarray(model(x), "float32"), np.asarray(fixed(x)), atol=2e-3)
    assert fixed.compiled and type(fixed.optimizer).__name__ == "LossScaleOptimizer"
    assert fixed.get_compile_config()["loss"] == model.get_compile_config()["loss"]


def test_float32_head_on_the_planted_sequential_workload(mixed_float16):
    workload = load_workload("builtin:fp16-softmax-head")
    model = workload.build_model()
    x = np.random.default_rng(0).normal(size=(8, 32)).astype("float32")
    fixed = float32_head(model)
    _assert_fixed(model, fixed, x)
    train, _ = workload.make_datasets(16)
    fixed.fit(train.take(3), verbose=0)  # the copy trains: it is compiled with the original's settings


def test_float32_head_on_a_functional_model(mixed_float16):
    model = _functional_model()
    fixed = float32_head(model)
    _assert_fixed(model, fixed, np.ones((2, 6), "float32"))
    assert fixed.get_layer("head").dtype_policy.compute_dtype == "float32"


def test_float32_head_leaves_a_float32_head_alone(mixed_float16):
    model = load_workload("builtin:mlp").build_model()
    assert float32_head(model) is model


def test_drop_partial_batches_gives_one_shape_on_ragged_batches():
    workload = load_workload("builtin:ragged-batches")
    train, _ = workload.make_datasets(64)
    fixed = drop_partial_batches(train, 64)
    assert [tuple(s.shape) for s in fixed.element_spec] == [(64, 64), (64,)]
    shapes = {(tuple(x.shape), tuple(y.shape)) for x, y in fixed}
    assert shapes == {((64, 64), (64,))}
    assert sum(1 for _ in fixed) == 4000 // 64  # the 32 examples of the partial batch are dropped


def test_drop_partial_batches_only_drops_when_the_length_is_fixed():
    import tensorflow as tf

    ds = tf.data.Dataset.from_tensor_slices((np.zeros((100, 5), "float32"), np.zeros(100, "int32"))).batch(16)
    fixed = drop_partial_batches(ds, 16)
    assert [tuple(s.shape) for s in fixed.element_spec] == [(16, 5), (16,)]
    assert sum(1 for _ in fixed) == 6
