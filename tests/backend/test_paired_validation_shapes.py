"""Per-example validation (the accuracy gate's data) on every label and loss shape Keras' own fit accepts.

Each model is written the way keras-io examples write them, trained one short fit() in this process (so the
compiled loss and metrics are built, as in a run), then evaluated per example. The per-example means must equal
what Keras itself reports for the same examples: the gate pairs exactly what the validation curve shows.
"""

from __future__ import annotations

import numpy as np
import pytest

keras = pytest.importorskip("keras")
tf = pytest.importorskip("tensorflow")

from trainer_backend.paired_validation import PairedValidation  # noqa: E402

N = 96


def _per_example(model, val_ds):
    """PairedValidation after one fit on `val_ds`; (paired, Keras' own validation logs)."""
    keras.utils.set_random_seed(0)
    model.fit(val_ds, epochs=1, verbose=0)
    paired = PairedValidation(val_ds, max_examples=N)
    logs = {f"val_{k}": float(v) for k, v in model.evaluate(paired.dataset, verbose=0, return_dict=True).items()}
    paired.evaluate(model, step=1, samples_seen=N, val_logs=logs)
    assert paired.problem is None, paired.problem
    return paired, logs


def _binary_data(rng, label_shape):
    x = rng.normal(size=(N, 8)).astype("float32")
    y = (x[:, 0] > 0).astype("float32").reshape(label_shape)
    return x, y


def _sigmoid_model():
    inputs = keras.Input(shape=(8,))
    outputs = keras.layers.Dense(1, activation="sigmoid")(keras.layers.Dense(16, activation="relu")(inputs))
    model = keras.Model(inputs, outputs)
    model.compile("adam", "binary_crossentropy", metrics=["accuracy"])
    return model


@pytest.mark.parametrize("label_shape", [(N,), (N, 1)], ids=["labels (N,)", "labels (N,1)"])
def test_binary_sigmoid_head_with_either_label_rank(label_shape):
    """Dense(1, sigmoid) with (N,) labels failed: "Arguments target and output must have the same rank"."""
    x, y = _binary_data(np.random.default_rng(1), label_shape)
    paired, logs = _per_example(_sigmoid_model(), tf.data.Dataset.from_tensor_slices((x, y)).batch(32))
    assert paired.accuracy_metric == "val_accuracy"
    assert paired.correct[0].shape == (N,) and paired.loss[0].shape == (N,)
    assert paired.correct[0].mean() == pytest.approx(logs["val_accuracy"], abs=1e-6)
    assert paired.loss[0].mean() == pytest.approx(logs["val_loss"], rel=1e-4)


def test_binary_loss_object_and_sample_weights():
    rng = np.random.default_rng(2)
    x, y = _binary_data(rng, (N,))
    w = rng.uniform(0.2, 2.0, size=N).astype("float32")
    model = _sigmoid_model()
    model.compile("adam", keras.losses.BinaryCrossentropy(), metrics=["accuracy"])
    paired, logs = _per_example(model, tf.data.Dataset.from_tensor_slices((x, y, w)).batch(32))
    assert paired.loss[0].mean() == pytest.approx(logs["val_loss"], rel=1e-4)  # weighted, as Keras weighs it
    assert paired.correct[0].mean() == pytest.approx(logs["val_accuracy"], abs=1e-6)


def _classifier(classes=5):
    return keras.Sequential([keras.Input(shape=(8,)), keras.layers.Dense(16, activation="relu"),
                             keras.layers.Dense(classes, activation="softmax")])


def test_sparse_labels_with_a_top_k_metric():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(N, 8)).astype("float32")
    y = rng.integers(0, 5, size=N)
    model = _classifier()
    model.compile("adam", "sparse_categorical_crossentropy",
                  metrics=[keras.metrics.SparseTopKCategoricalAccuracy(k=2, name="top2")])
    paired, logs = _per_example(model, tf.data.Dataset.from_tensor_slices((x, y)).batch(32))
    assert paired.accuracy_metric == "val_top2"
    assert paired.correct[0].mean() == pytest.approx(logs["val_top2"], abs=1e-6)  # top-2, not argmax
    assert paired.loss[0].mean() == pytest.approx(logs["val_loss"], rel=1e-4)


def test_one_hot_labels():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(N, 8)).astype("float32")
    y = keras.utils.to_categorical(rng.integers(0, 5, size=N), 5)
    model = _classifier()
    model.compile("adam", "categorical_crossentropy", metrics=["accuracy"])
    paired, logs = _per_example(model, tf.data.Dataset.from_tensor_slices((x, y)).batch(32))
    assert paired.correct[0].mean() == pytest.approx(logs["val_accuracy"], abs=1e-6)
    assert paired.loss[0].mean() == pytest.approx(logs["val_loss"], rel=1e-4)


def test_sequence_labels():
    """A token tagger: labels (N, T), outputs (N, T, C); one number per example (the mean over its tokens)."""
    rng = np.random.default_rng(5)
    x = rng.integers(0, 50, size=(N, 12))
    y = (x % 3).astype("int32")
    model = keras.Sequential([keras.Input(shape=(12,), dtype="int32"), keras.layers.Embedding(50, 8),
                              keras.layers.Dense(3, activation="softmax")])
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    paired, logs = _per_example(model, tf.data.Dataset.from_tensor_slices((x, y)).batch(32))
    assert paired.correct[0].shape == (N,)
    assert paired.correct[0].mean() == pytest.approx(logs["val_accuracy"], abs=1e-6)
    assert paired.loss[0].mean() == pytest.approx(logs["val_loss"], rel=1e-4)


def test_multi_output_with_loss_weights():
    """Two named heads, dict labels, loss weights: the per-example loss sums the outputs as Keras does."""
    rng = np.random.default_rng(6)
    x = rng.normal(size=(N, 8)).astype("float32")
    labels = {"kind": rng.integers(0, 3, size=N), "size": rng.normal(size=(N, 1)).astype("float32")}
    inputs = keras.Input(shape=(8,))
    h = keras.layers.Dense(16, activation="relu")(inputs)
    model = keras.Model(inputs, {"kind": keras.layers.Dense(3, activation="softmax", name="kind")(h),
                                 "size": keras.layers.Dense(1, name="size")(h)})
    model.compile("adam", loss={"kind": "sparse_categorical_crossentropy", "size": "mse"},
                  loss_weights={"kind": 1.0, "size": 0.5}, metrics={"kind": ["accuracy"]})
    paired, logs = _per_example(model, tf.data.Dataset.from_tensor_slices((x, labels)).batch(32))
    assert paired.accuracy_metric == "val_kind_accuracy"
    assert paired.correct[0].mean() == pytest.approx(logs["val_kind_accuracy"], abs=1e-6)
    assert paired.loss[0].mean() == pytest.approx(logs["val_loss"], rel=1e-4)


def test_regression_with_one_dimensional_targets_is_judged_on_its_loss():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(N, 8)).astype("float32")
    y = x.sum(axis=1)  # (N,) targets, Dense(1) output: Keras aligns them
    model = keras.Sequential([keras.Input(shape=(8,)), keras.layers.Dense(1)])
    model.compile("adam", "mse")
    paired, logs = _per_example(model, tf.data.Dataset.from_tensor_slices((x, y)).batch(32))
    assert paired.accuracy_metric is None and not paired.correct
    assert paired.loss[0].mean() == pytest.approx(logs["val_loss"], rel=1e-4)


def test_a_bfloat16_logits_head_with_top_k_is_judged_in_float32():
    """SparseTopKCategoricalAccuracy refuses bfloat16 logits (InTopKV2); the gate judges the predictions."""
    rng = np.random.default_rng(8)
    x = rng.normal(size=(N, 8)).astype("float32")
    y = rng.integers(0, 5, size=N)
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        model = keras.Sequential([keras.Input(shape=(8,)), keras.layers.Dense(16), keras.layers.Dense(5)])
        model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=[keras.metrics.SparseTopKCategoricalAccuracy(k=2)])
        # fit itself cannot run this metric: build what fit builds, on float32 logits
        model.layers[-1].dtype_policy = keras.DTypePolicy("float32")
        paired, logs = _per_example(model, tf.data.Dataset.from_tensor_slices((x, y)).batch(32))
        model.layers[-1].dtype_policy = keras.DTypePolicy("mixed_bfloat16")
        assert "bfloat16" in str(model(x[:2]).dtype)
        paired.evaluate(model, step=2, samples_seen=2 * N, val_logs=logs)
        assert paired.problem is None and len(paired.correct) == 2
    finally:
        keras.mixed_precision.set_global_policy("float32")
