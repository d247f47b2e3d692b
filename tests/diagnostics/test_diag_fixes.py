"""The automatic fixes a run applies: float32 head (in place: any model, no serialisation), fixed batch shapes."""

from __future__ import annotations

import numpy as np
import pytest

from trainer_backend.diagnostics.model_audit import head_findings
from trainer_backend.fixes import FixNotApplied, drop_partial_batches, float32_head
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


def _assert_fixed(model, x):
    """float32_head changed the model in place: float32 outputs, the same weights, the same function."""
    before = model.get_weights()
    out16 = np.asarray(model(x), "float32")
    optimizer = model.optimizer
    assert head_findings(model, sample_x=x)
    changed = float32_head(model, _spec(x))
    assert changed and not head_findings(model, sample_x=x)
    assert model(x).dtype.name == "float32"
    for b, a in zip(before, model.get_weights()):
        np.testing.assert_array_equal(b, a)
    np.testing.assert_allclose(out16, np.asarray(model(x)), atol=2e-3)  # computed in float32 at the end
    assert model.optimizer is optimizer  # nothing rebuilt
    return changed


def _spec(x):
    import tensorflow as tf

    return tf.TensorSpec((None, *x.shape[1:]), tf.as_dtype(x.dtype))


def test_float32_head_on_the_planted_sequential_workload(mixed_float16):
    workload = load_workload("builtin:fp16-softmax-head")
    model = workload.build_model()
    _assert_fixed(model, np.random.default_rng(0).normal(size=(8, 32)).astype("float32"))
    train, _ = workload.make_datasets(16)
    model.fit(train.take(3), verbose=0)  # it still trains with its own optimizer


def test_float32_head_on_a_functional_model(mixed_float16):
    model = _functional_model()
    _assert_fixed(model, np.ones((2, 6), "float32"))
    assert model.get_layer("head").dtype_policy.compute_dtype == "float32"


def test_float32_head_leaves_a_float32_head_alone(mixed_float16):
    model = load_workload("builtin:mlp").build_model()
    assert float32_head(model) == []


def _custom_layer_model():
    import keras

    class Block(keras.layers.Layer):
        def __init__(self, width):
            super().__init__()
            self.dense = keras.layers.Dense(width, activation="relu")

        def call(self, x):
            return self.dense(x)

    inputs = keras.Input((6,))
    outputs = keras.layers.Dense(3, activation="softmax")(Block(16)(inputs))
    model = keras.Model(inputs, outputs)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return model


def test_float32_head_on_custom_layers_without_get_config(mixed_float16):
    import keras

    model = _custom_layer_model()
    with pytest.raises(Exception):  # noqa: B017 - what tfturbo used to do: clone through get_config/from_config
        keras.models.clone_model(model)
    _assert_fixed(model, np.ones((4, 6), "float32"))
    model.compile(optimizer=model.optimizer, loss=model.loss)
    model.fit(np.ones((8, 6), "float32"), np.zeros(8, "int32"), verbose=0)


def _subclassed(cast_back: bool = False):
    import keras

    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.hidden = keras.layers.Dense(16, activation="relu")
            self.head = keras.layers.Dense(3, activation="softmax")

        def call(self, x, training=False):
            y = self.head(self.hidden(x))
            return keras.ops.cast(y, "float16") if cast_back else y

    model = Net()
    model.build((None, 6))
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return model


def test_float32_head_on_a_subclassed_model_finds_its_last_layer(mixed_float16):
    model = _subclassed()
    assert _assert_fixed(model, np.ones((2, 6), "float32")) == [model.head.path]


def test_a_fix_that_cannot_work_changes_nothing_and_says_why(mixed_float16):
    model = _subclassed(cast_back=True)
    with pytest.raises(FixNotApplied, match="still returns float16 outputs"):
        float32_head(model, _spec(np.ones((2, 6), "float32")))
    assert model.head.dtype_policy.compute_dtype == "float16"  # put back as it was


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

