"""builtin:unaligned-widths — demo workload; planted problem: sizes that are not multiples of 8.

Task: 24-token sequences from a 1001-token vocabulary; the label says whether
tokens 1-10 occur more often than tokens 11-20 (chance = 50%).

The vocabulary (1001), the embedding width (100), the attention (3 heads x 33),
the hidden Dense (250) and the batch (60) are not multiples of 8, so float16 /
bfloat16 matrix units (Tensor Cores) are used poorly or not at all.
Findings it should raise under a 16-bit policy: DIM_NOT_MULTIPLE_OF_8 (one per
layer, with the rounded size) and BATCH_NOT_MULTIPLE_OF_8.
Fix: round up, e.g. vocabulary 1008, width 104, 4 heads x 32, Dense(256), batch 64.
"""

import keras
import numpy as np

from trainer_backend.workloads._arrays import array_datasets

# the problem it plants (the wizard lists it: `workload_catalog`)
PLANTED = "sizes that are not multiples of 8"

BATCH_SIZE = 60  # PLANTED
VOCAB = 1001  # PLANTED
LENGTH = 24
WIDTH = 100  # PLANTED
TRAIN_SIZE = 7680
VAL_SIZE = 960


def _make_arrays(n: int, seed: int):
    rng = np.random.default_rng(seed)
    tokens = rng.integers(1, VOCAB, size=(n, LENGTH))
    keywords = rng.random((n, LENGTH)) < 0.25
    tokens[keywords] = rng.integers(1, 21, size=keywords.sum())
    a, b = ((tokens >= 1) & (tokens <= 10)).sum(1), ((tokens >= 11) & (tokens <= 20)).sum(1)
    return tokens.astype("int32"), (a > b).astype("int32")


def build_model() -> keras.Model:
    inputs = keras.Input(shape=(LENGTH,), dtype="int32")
    x = keras.layers.Embedding(VOCAB, WIDTH)(inputs)
    x = keras.layers.MultiHeadAttention(num_heads=3, key_dim=33)(x, x)  # PLANTED
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(250, activation="relu")(x)  # PLANTED
    outputs = keras.layers.Dense(2, activation="softmax", dtype="float32")(x)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer=keras.optimizers.Adam(2e-3), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    return model


def make_datasets(batch_size: int):
    return array_datasets(_make_arrays, batch_size, TRAIN_SIZE, VAL_SIZE)
