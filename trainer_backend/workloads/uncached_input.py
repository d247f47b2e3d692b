"""builtin:uncached-input — demo workload; planted problem: an expensive, deterministic map recomputed every epoch.

Task: 32 gaussian features, smoothed by a costly per-example transform
(30 rounds of a matrix-vector product and tanh, all TensorFlow ops); the class
is the sign of the result's sum (chance = 50%).

The transform has no randomness, so its output could be computed once: the
pipeline applies it to every example on every pass, one element at a time,
without cache or prefetch, and the small model waits for it.
Finding it should raise: INPUT_BOUND (probe-input).
Fix that tf.data applies by itself (`--input-fixes`, the ladder's input_pipeline
rung): `.cache()` after the map and `.prefetch(tf.data.AUTOTUNE)` — unlike
`builtin:slow-input`, whose Python parsing step no option can parallelize.
"""

import keras
import numpy as np
import tensorflow as tf

# the problem it plants (the wizard lists it: `workload_catalog`)
PLANTED = "an expensive, deterministic map recomputed every epoch"

BATCH_SIZE = 64
FEATURES = 32
TRAIN_SIZE = 4096
VAL_SIZE = 1024
ROUNDS = 30


def _smooth(x, y):
    mix = tf.eye(FEATURES) * 0.9 + 0.1 / FEATURES
    for _ in range(ROUNDS):
        x = tf.math.tanh(tf.linalg.matvec(mix, x) + 0.01)
    return x, y


def _arrays(n: int, seed: int):
    x = np.random.default_rng(seed).normal(size=(n, FEATURES)).astype("float32")
    return x, (x.sum(axis=1) > 0).astype("int32")


def build_model() -> keras.Model:
    model = keras.Sequential(name="uncached_input")  # the small model the pipeline keeps waiting
    model.add(keras.Input(shape=(FEATURES,)))
    model.add(keras.layers.Dense(64, activation="relu"))
    model.add(keras.layers.Dense(2, activation="softmax", dtype="float32"))
    model.compile(optimizer=keras.optimizers.Adam(3e-3), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    return model


def make_datasets(batch_size: int):
    train = tf.data.Dataset.from_tensor_slices(_arrays(TRAIN_SIZE, 1)).map(_smooth)
    train = train.batch(batch_size, drop_remainder=True)
    val = tf.data.Dataset.from_tensor_slices(_arrays(VAL_SIZE, 2)).map(_smooth)
    val = val.batch(batch_size, drop_remainder=True).cache()
    return train, val
