"""A workload whose activations grow with the batch: --batch-size 1048576 asks for 64 GiB in one tensor.

The hardening tests run it under an address-space limit (RLIMIT_AS), so the
allocation fails the same way on any machine instead of depending on its RAM.
"""

import keras
import tensorflow as tf

BATCH_SIZE = 32
FEATURES = 16
HIDDEN = 16384


def build_model():
    model = keras.Sequential([keras.Input((FEATURES,)), keras.layers.Dense(HIDDEN, activation="relu"),
                              keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    return model


def make_datasets(batch_size):
    def batch(_):
        return tf.random.uniform([batch_size, FEATURES]), tf.zeros([batch_size, 1])

    return tf.data.Dataset.range(1).repeat().map(batch), None
