"""builtin:slow-input — demo workload; planted problem: the input pipeline is the bottleneck.

Task: rows of 32 numbers stored as CSV text; the class is the sign of a fixed
weighted sum (chance = 50%).

Each row is parsed by Python one element at a time (`tf.numpy_function`, with
a simulated 0.1 ms storage read per row), with no parallelism and no prefetch,
so the model (about a millisecond per step) waits for data.
Finding it should raise: INPUT_BOUND (probe-input).
Fix: parse in TensorFlow (`tf.io.decode_csv`) on whole batches, use
`map(..., num_parallel_calls=tf.data.AUTOTUNE)`, `.cache()` and `.prefetch(tf.data.AUTOTUNE)`.
"""

import time

import keras
import numpy as np
import tensorflow as tf

from trainer_backend.workloads._arrays import TRAIN_SIZE, VAL_SIZE

# the problem it plants (the wizard lists it: `workload_catalog`)
PLANTED = "the input pipeline is the bottleneck"

BATCH_SIZE = 64
FEATURES = 32
READ_DELAY_S = 0.0001


def _make_lines(n: int, seed: int):
    weights = np.random.default_rng(0).normal(size=FEATURES)
    x = np.random.default_rng(seed).normal(size=(n, FEATURES))
    lines = [",".join(f"{v:.4f}" for v in row) for row in x]
    return lines, (x @ weights > 0).astype("int32")


def _parse(line: bytes) -> np.ndarray:
    time.sleep(READ_DELAY_S)  # stands in for a slow disk or network read
    return np.array([float(v) for v in line.decode().split(",")], dtype="float32")


def _parse_row(line, label):
    features = tf.numpy_function(_parse, [line], tf.float32)
    return tf.ensure_shape(features, [FEATURES]), label


def build_model() -> keras.Model:
    model = keras.Sequential([
        keras.Input(shape=(FEATURES,)),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(2, activation="softmax", dtype="float32"),
    ])
    model.compile(optimizer=keras.optimizers.Adam(3e-3), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    return model


def make_datasets(batch_size: int):
    train = tf.data.Dataset.from_tensor_slices(_make_lines(TRAIN_SIZE, seed=1)).shuffle(TRAIN_SIZE)
    train = train.map(_parse_row).batch(batch_size, drop_remainder=True)  # PLANTED: serial Python, no prefetch
    val = tf.data.Dataset.from_tensor_slices(_make_lines(VAL_SIZE, seed=2))
    val = val.map(_parse_row).batch(batch_size, drop_remainder=True).cache()
    return train, val
