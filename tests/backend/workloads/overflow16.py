"""Large regression targets: under mixed_float16 the first scaled gradients overflow float16.

The dynamic loss scale must fall from 32768 and the overflowing steps are
skipped — what the backend has to count and report.
"""

import keras
import numpy as np
import tensorflow as tf

BATCH_SIZE = 32


def build_model():
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16), keras.layers.Dense(1, dtype="float32")])
    model.compile(optimizer=keras.optimizers.SGD(1e-6), loss="mse")
    return model


def make_datasets(batch_size):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(512, 8)).astype("float32")
    y = (x @ rng.normal(size=(8, 1)) * 3000).astype("float32")
    return tf.data.Dataset.from_tensor_slices((x, y)).batch(batch_size, drop_remainder=True), None
