"""The built-in workloads: each keeps the contract, the clean ones learn, and each demo's planted problem bites.

Training here uses `model.fit` directly (not the backend) for a few hundred
steps of millisecond-sized models, with the seed fixed as a run fixes it.
"""

from __future__ import annotations

import numpy as np
import pytest

from trainer_backend.workload import builtin_names, load_workload


@pytest.fixture
def policy():
    """set(name) sets the global dtype policy (and the seed, as a run does); float32 is restored after."""
    import keras

    def _set(name: str) -> None:
        keras.mixed_precision.set_global_policy(name)
        keras.utils.set_random_seed(1234)

    yield _set
    keras.mixed_precision.set_global_policy("float32")


def train(name: str, steps: int):
    """Build and fit builtin:NAME for `steps` steps; return (per-step losses, validation metrics)."""
    import keras

    workload = load_workload(f"builtin:{name}")
    model = workload.build_model()
    train_ds, val_ds = workload.make_datasets(workload.default_batch_size)
    losses = []
    record = keras.callbacks.LambdaCallback(on_train_batch_end=lambda _, logs: losses.append(float(logs["loss"])))
    model.fit(train_ds.repeat(), steps_per_epoch=steps, epochs=1, verbose=0, callbacks=[record])
    return np.array(losses), model.evaluate(val_ds, verbose=0, return_dict=True)


@pytest.mark.parametrize("name", builtin_names())
def test_every_builtin_builds_a_compiled_model_and_labelled_batches(name, policy):
    policy("float32")
    workload = load_workload(f"builtin:{name}")
    model = workload.build_model()
    assert model.compiled and model.loss is not None
    train_ds, val_ds = workload.make_datasets(workload.default_batch_size)
    x, y = next(iter(train_ds))
    assert x.shape[0] == y.shape[0] == workload.default_batch_size
    assert model(x).shape == (workload.default_batch_size, model.output_shape[-1])
    assert val_ds is not None and int(val_ds.cardinality()) > 0  # a fixed, finite validation set


@pytest.mark.parametrize("name, chance, needed, steps", [
    ("mlp", 0.25, 0.6, 300),
    ("cnn", 0.25, 0.6, 300),
    ("transformer", 0.5, 0.7, 300),
])
def test_clean_builtin_learns_well_above_chance(name, chance, needed, steps, policy):
    policy("float32")
    _, metrics = train(name, steps)
    assert metrics["accuracy"] >= needed, (
        f"builtin:{name}: validation accuracy {metrics['accuracy']:.3f} after {steps} steps; "
        f"chance is {chance}, expected at least {needed}")


def test_fp16_softmax_head_turns_nan_under_mixed_float16_only(policy):
    policy("float32")
    losses, metrics = train("fp16-softmax-head", 100)
    assert np.isfinite(losses).all() and metrics["accuracy"] > 0.9  # chance 0.125
    policy("mixed_float16")
    losses, _ = train("fp16-softmax-head", 100)
    assert not np.isfinite(losses[-1]), f"the float16 softmax never overflowed; last loss {losses[-1]}"


def test_custom_loop_learns_in_float32_but_not_under_mixed_float16(policy):
    policy("float32")
    _, good = train("custom-loop", 200)
    policy("mixed_float16")
    _, bad = train("custom-loop", 200)
    assert good["accuracy"] > 0.8 and bad["accuracy"] < 0.6, (
        f"float32 {good['accuracy']:.3f}, mixed_float16 {bad['accuracy']:.3f} (chance 0.5)")


def test_ragged_batches_vary_in_length_and_end_in_a_partial_batch():
    workload = load_workload("builtin:ragged-batches")
    train_ds, _ = workload.make_datasets(64)
    shapes = [tuple(x.shape) for x, _ in train_ds]
    assert len({length for _, length in shapes}) > 5
    assert [size for size, _ in shapes[-1:]] == [4000 % 64] and {size for size, _ in shapes[:-1]} == {64}

