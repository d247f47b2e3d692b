"""A 16-bit policy whose heaviest layers stay float32 (built with dtype="float32"): MATMUL_NOT_16BIT's case."""

import keras
import numpy as np
import tensorflow as tf

BATCH_SIZE = 64


def build_model():
    model = keras.Sequential([
        keras.Input((64,)),
        keras.layers.Dense(32, activation="relu"),  # small, follows the global 16-bit policy
        keras.layers.Dense(512, activation="relu", dtype="float32", name="wide_a"),  # the heavy math, float32
        keras.layers.Dense(512, activation="relu", dtype="float32", name="wide_b"),
        keras.layers.Dense(4, activation="softmax", dtype="float32"),
    ])
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy")
    return model


def make_datasets(batch_size):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2048, 64)).astype("float32")
    y = (x[:, 0] > 0).astype("int32") + 2 * (x[:, 1] > 0).astype("int32")
    train = tf.data.Dataset.from_tensor_slices((x[:1792], y[:1792])).batch(batch_size, drop_remainder=True)
    val = tf.data.Dataset.from_tensor_slices((x[1792:], y[1792:])).batch(batch_size)
    return train, val
