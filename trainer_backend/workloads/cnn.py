"""builtin:cnn — a small image classifier (a clean example workload).

Task: 16x16 grayscale images of one noisy line stroke at a random place; the
class is its orientation (0, 45, 90 or 135 degrees, jittered; chance = 25%).
"""

import keras
import numpy as np

from trainer_backend.workloads._arrays import array_datasets

# what it is (the wizard lists it: `workload_catalog`)
DESCRIPTION = "a small image classifier (a clean example workload)"

BATCH_SIZE = 64
SIZE = 16
CLASSES = 4


def _make_arrays(n: int, seed: int):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, CLASSES, size=n)
    angle = np.deg2rad(45.0 * y + rng.uniform(-15, 15, size=n))
    cx, cy = rng.uniform(5, SIZE - 5, size=(2, n))
    rows, cols = np.mgrid[0:SIZE, 0:SIZE].astype("float32")
    dx, dy = cols[None] - cx[:, None, None], rows[None] - cy[:, None, None]
    cos, sin = np.cos(angle)[:, None, None], np.sin(angle)[:, None, None]
    across, along = dx * sin - dy * cos, dx * cos + dy * sin  # distance from / along the stroke
    x = np.exp(-across ** 2) * (np.abs(along) < 4.5) + rng.normal(0, 0.6, size=(n, SIZE, SIZE))
    return x[..., None].astype("float32"), y.astype("int32")


def build_model() -> keras.Model:
    model = keras.Sequential([
        keras.Input(shape=(SIZE, SIZE, 1)),
        keras.layers.Conv2D(16, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Flatten(),
        keras.layers.Dense(64, activation="relu"),
        # The head computes in float32 even under a mixed precision policy.
        keras.layers.Dense(CLASSES, activation="softmax", dtype="float32"),
    ])
    model.compile(optimizer=keras.optimizers.Adam(2e-3), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    return model


def make_datasets(batch_size: int):
    return array_datasets(_make_arrays, batch_size)
