"""A workload whose learning rate is far too high: the loss overflows to Inf/NaN within a few steps."""

import keras
import numpy as np
import tensorflow as tf

BATCH_SIZE = 32


def build_model():
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(1e6), loss="mse")
    return model


def make_datasets(batch_size):
    x = np.random.default_rng(0).normal(size=(512, 8)).astype("float32") * 100
    y = x.sum(axis=1, keepdims=True)
    return tf.data.Dataset.from_tensor_slices((x, y)).batch(batch_size, drop_remainder=True), None
