"""A tiny regression workload for backend tests: sub-millisecond steps, learnable."""

import keras
import numpy as np
import tensorflow as tf

BATCH_SIZE = 32


PRINTED = "tiny workload says hello on stdout"  # must end up in backend.log, never among the events


def build_model():
    print(PRINTED)
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"),
                              keras.layers.Dense(1, dtype="float32")])
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
    return model


def make_datasets(batch_size):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(1024, 8)).astype("float32")
    y = (x @ rng.normal(size=(8, 1))).astype("float32")
    train = tf.data.Dataset.from_tensor_slices((x[:768], y[:768])).shuffle(768).batch(batch_size, drop_remainder=True)
    val = tf.data.Dataset.from_tensor_slices((x[768:], y[768:])).batch(batch_size)
    return train, val
