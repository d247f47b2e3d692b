"""The fixed validation set (trainer_backend/validation_set.py): per-output metrics as model.evaluate gives them,
and the same examples for every run that shares the study's folder, whatever its own pipeline does."""

from __future__ import annotations

import numpy as np
import pytest

keras = pytest.importorskip("keras")
tf = pytest.importorskip("tensorflow")

from trainer_backend.paired_validation import PairedValidation  # noqa: E402 - after the skip when TF is missing
from trainer_backend.validation_set import balanced_batch, fixed_set  # noqa: E402

N = 300  # not a multiple of 256: the old set's last batch was short, and its cardinality unknown


def _two_outputs():
    """A functional model with dict inputs, a loss per output and loss_weights, as keras-io writes them."""
    rng = np.random.default_rng(0)
    x = {"tokens": rng.normal(size=(N, 8)).astype("float32"), "extra": rng.normal(size=(N, 4)).astype("float32")}
    y = {"label": rng.integers(0, 3, size=N), "value": rng.normal(size=(N, 1)).astype("float32")}
    a, b = keras.Input((8,), name="tokens"), keras.Input((4,), name="extra")
    h = keras.layers.Dense(16, activation="relu")(keras.layers.Concatenate()([a, b]))
    model = keras.Model({"tokens": a, "extra": b},
                        {"label": keras.layers.Dense(3, activation="softmax", name="label")(h),
                         "value": keras.layers.Dense(1, name="value")(h)})
    model.compile("adam", loss={"label": "sparse_categorical_crossentropy", "value": "mse"},
                  loss_weights={"label": 1.0, "value": 0.2}, metrics={"label": ["accuracy"]})
    return model, x, y


def test_per_output_validation_metrics_equal_model_evaluate():
    """Issue 47: val_label_loss + val_value_loss read 1.364 where val_loss was 2.046 — the set rebuilt as
    unbatch().take(N).batch(256).cache() had no known cardinality, and Keras averaged an extra empty step into
    each output's loss. Now fit's validation on the fixed set equals a plain evaluate() on the same examples."""
    keras.utils.set_random_seed(0)
    model, x, y = _two_outputs()
    script_val = tf.data.Dataset.from_tensor_slices((x, y)).batch(32).map(lambda a, b: (a, b))  # unknown size
    paired = PairedValidation(script_val, max_examples=10_000)
    assert paired.set.examples == N and not paired.set.capped
    assert int(paired.dataset.cardinality()) == 2 and balanced_batch(N) == 150
    history = model.fit(tf.data.Dataset.from_tensor_slices((x, y)).batch(32), validation_data=paired.dataset,
                        epochs=1, verbose=0)
    val = {k: v[-1] for k, v in history.history.items() if k.startswith("val_")}
    plain = model.evaluate(x, y, batch_size=N, return_dict=True, verbose=0)
    for name in ("loss", "label_loss", "value_loss", "label_accuracy"):
        assert val[f"val_{name}"] == pytest.approx(plain[name], rel=1e-5), name
    assert val["val_label_loss"] + 0.2 * val["val_value_loss"] == pytest.approx(val["val_loss"], rel=1e-5)

    paired.evaluate(model, step=10, samples_seen=320, val_logs=val)
    table = {o["name"]: o for o in paired.outputs}
    assert table["label"]["metric"] == "val_label_accuracy" and table["value"]["metric"] is None
    assert table["value"]["weight"] == pytest.approx(0.2)
    names = [o["name"] for o in paired.outputs]
    own_loss = dict(zip(names, paired.output_loss[0]))
    assert own_loss["value"].mean() == pytest.approx(plain["value_loss"], rel=1e-4)  # unweighted, as Keras says
    assert own_loss["label"].mean() == pytest.approx(plain["label_loss"], rel=1e-4)
    assert dict(zip(names, paired.output_correct[0]))["label"].mean() == pytest.approx(plain["label_accuracy"])
    assert paired.loss[0].mean() == pytest.approx(plain["loss"], rel=1e-4)


def _shuffled_after_cache(seed_of_run: int):
    """keras-io's translation Transformer ends its validation pipeline in `.cache().shuffle(2048)` with no seed:
    each run's process sees the examples in another order (here: another seed per run)."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(200, 6)).astype("float32")
    y = rng.integers(0, 2, size=200)
    tf.random.set_seed(seed_of_run)
    return tf.data.Dataset.from_tensor_slices((x, y)).cache().shuffle(2048).batch(16)


def _order(fixed) -> np.ndarray:
    return np.concatenate([b[0].numpy()[:, 0] for b in fixed.dataset])


def test_runs_sharing_the_study_folder_validate_on_the_same_examples_in_the_same_order(tmp_path):
    first = fixed_set(_shuffled_after_cache(1), 10_000, folder=str(tmp_path))
    second = fixed_set(_shuffled_after_cache(2), 10_000, folder=str(tmp_path))
    assert (first.shared, second.shared) == ("written", "read")
    assert np.array_equal(first.digests, second.digests) and np.array_equal(_order(first), _order(second))
    own = fixed_set(_shuffled_after_cache(2), 10_000)  # no study folder: its own order, the same examples
    assert own.shared is None and not np.array_equal(own.digests, first.digests)
    assert sorted(own.digests.tolist()) == sorted(first.digests.tolist()) and own.digest() == first.digest()


def test_the_cap_is_said_and_more_examples_get_a_file_of_their_own(tmp_path):
    ds = _shuffled_after_cache(1)
    small = fixed_set(ds, 50, folder=str(tmp_path))
    assert small.examples == 50 and small.capped
    every = fixed_set(ds, 10_000, folder=str(tmp_path))
    assert every.examples == 200 and not every.capped and every.shared == "written"


def test_batches_whose_length_varies_are_kept_whole(tmp_path):
    """Padded text: a dimension varies between batches, so the workload's own batches are the set — all of
    them up to the cap (the old fallback kept 20 batches), with a known cardinality."""
    rng = np.random.default_rng(5)
    lengths = rng.integers(3, 30, size=100)
    rows = [(rng.integers(1, 50, size=int(n)), int(rng.integers(0, 2))) for n in lengths]
    ds = tf.data.Dataset.from_generator(lambda: iter(rows), output_signature=(
        tf.TensorSpec((None,), tf.int64), tf.TensorSpec((), tf.int64))).padded_batch(8)
    written = fixed_set(ds, 10_000, folder=str(tmp_path))
    assert written.mode == "batches" and written.examples == 100 and int(written.dataset.cardinality()) == 13
    read = fixed_set(ds, 10_000, folder=str(tmp_path))
    assert read.shared == "read" and np.array_equal(read.digests, written.digests)
    assert [b[0].shape[1] for b in read.dataset] == [b[0].shape[1] for b in written.dataset]
