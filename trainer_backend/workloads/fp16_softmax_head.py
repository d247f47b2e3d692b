"""builtin:fp16-softmax-head — demo workload; planted problem: the softmax head runs in 16-bit.

Task: 8 gaussian clusters in 32 dimensions (chance = 12.5%), easy enough that
the model grows confident (large logits) within a few dozen steps.

The head is a hand-written softmax built under the global dtype policy, so under
mixed_float16 it computes `exp(logits)` in float16, which overflows at logits
above ~11 (float16 max is 65504): the loss turns NaN soon after the model
becomes confident, while the same model trains cleanly in float32.
Findings it should raise under a 16-bit policy: HEAD_NOT_FLOAT32 (audit) and,
when trained under mixed_float16, NAN_LOSS.
Fix: build the head in float32, `Softmax(dtype="float32")` (or Dense(...,
dtype="float32") and keras' own softmax).
"""

import keras
import numpy as np

from trainer_backend.workloads._arrays import array_datasets

# the problem it plants (the wizard lists it: `workload_catalog`)
PLANTED = "the softmax head runs in 16-bit"

BATCH_SIZE = 64
FEATURES = 32
CLASSES = 8


def _make_arrays(n: int, seed: int):
    centers = np.random.default_rng(0).normal(0, 1.0, size=(CLASSES, FEATURES))
    rng = np.random.default_rng(seed)
    y = rng.integers(0, CLASSES, size=n)
    x = centers[y] + rng.normal(0, 1.0, size=(n, FEATURES))
    return x.astype("float32"), y.astype("int32")


class Softmax(keras.layers.Layer):
    """softmax(x) = exp(x) / sum(exp(x)), written out (no max subtraction)."""

    def call(self, logits):
        e = keras.ops.exp(logits)
        return e / keras.ops.sum(e, axis=-1, keepdims=True)


def build_model() -> keras.Model:
    model = keras.Sequential([
        keras.Input(shape=(FEATURES,)),
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dense(CLASSES),
        Softmax(),  # PLANTED: computes in the global policy's dtype (float16 under mixed_float16)
    ])
    model.compile(optimizer=keras.optimizers.Adam(3e-3), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    return model


def make_datasets(batch_size: int):
    return array_datasets(_make_arrays, batch_size)
