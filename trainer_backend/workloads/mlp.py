"""builtin:mlp — tabular classification with a small MLP (a clean example workload).

Task: 32 gaussian features; the class (4 of them, chance = 25%) comes from a
nonlinear rule on two hidden directions: the sign of one, and whether the other
is far from zero. An MLP learns it to ~90% in a few hundred steps.
"""

import keras
import numpy as np

from trainer_backend.workloads._arrays import array_datasets

# what it is (the wizard lists it: `workload_catalog`)
DESCRIPTION = "tabular classification with a small MLP (a clean example workload)"

BATCH_SIZE = 64
FEATURES = 32
CLASSES = 4


def _make_arrays(n: int, seed: int):
    directions = np.random.default_rng(0).normal(size=(FEATURES, 2)) / np.sqrt(FEATURES)
    x = np.random.default_rng(seed).normal(size=(n, FEATURES)).astype("float32")
    a, b = (x @ directions).T * np.sqrt(FEATURES) / 2
    y = 2 * (a > 0) + (np.abs(b) > 0.5)
    return x, y.astype("int32")


def build_model() -> keras.Model:
    model = keras.Sequential([
        keras.Input(shape=(FEATURES,)),
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dense(128, activation="relu"),
        # The head computes in float32 even under a mixed precision policy.
        keras.layers.Dense(CLASSES, activation="softmax", dtype="float32"),
    ])
    model.compile(optimizer=keras.optimizers.Adam(3e-3), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    return model


def make_datasets(batch_size: int):
    return array_datasets(_make_arrays, batch_size)
