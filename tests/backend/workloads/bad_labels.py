"""Loads and builds fine, but its labels do not fit the model's output: training fails at the first step."""

import keras
import numpy as np
import tensorflow as tf

BATCH_SIZE = 16


def build_model():
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    return model


def make_datasets(batch_size):
    x = np.zeros((64, 4), "float32")
    y = np.zeros((64, 3, 5), "float32")  # (batch, 3, 5) labels for a (batch, 1) output
    return tf.data.Dataset.from_tensor_slices((x, y)).batch(batch_size), None
