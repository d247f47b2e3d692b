"""builtin:ragged-batches — demo workload; planted problem: batch shapes vary.

Task: variable-length token sequences (4 to 64 tokens); the label says whether
tokens 1-4 occur more often than tokens 5-8 (chance = 50%).

Sequences are padded per batch (`padded_batch` without fixed `padded_shapes`),
so the sequence dimension changes from batch to batch, and the training set
(4000 examples) ends in a partial batch. Under XLA every new shape is a new
compilation. Findings it should raise with jit_compile: DYNAMIC_SHAPE and
PARTIAL_LAST_BATCH (audit), RECOMPILE_STORM (live).
Fix: `padded_batch(batch_size, padded_shapes=([MAX_LENGTH], []), drop_remainder=True)`
(or bucket lengths into a few fixed sizes).
"""

import keras
import numpy as np
import tensorflow as tf

# the problem it plants (the wizard lists it: `workload_catalog`)
PLANTED = "batch shapes vary"

BATCH_SIZE = 64
VOCAB = 32
MAX_LENGTH = 64
TRAIN_SIZE = 4000  # not a multiple of the batch size
VAL_SIZE = 1024


def _dataset(n: int, seed: int) -> tf.data.Dataset:
    """Examples of varying length: each row of `tokens` is cut to its own length."""
    rng = np.random.default_rng(seed)
    lengths = np.clip(rng.exponential(16, size=n).astype(int) + 4, 4, MAX_LENGTH)
    tokens = rng.integers(1, VOCAB, size=(n, MAX_LENGTH)) * (np.arange(MAX_LENGTH) < lengths[:, None])
    labels = np.isin(tokens, [1, 2, 3, 4]).sum(1) > np.isin(tokens, [5, 6, 7, 8]).sum(1)
    ds = tf.data.Dataset.from_tensor_slices((tokens.astype("int32"), lengths, labels.astype("int32")))
    return ds.map(lambda x, length, y: (x[:length], y))


def build_model() -> keras.Model:
    model = keras.Sequential([
        keras.Input(shape=(None,), dtype="int32"),
        keras.layers.Embedding(VOCAB, 32),
        keras.layers.Dense(32, activation="relu"),
        keras.layers.GlobalAveragePooling1D(),
        keras.layers.Dense(2, activation="softmax", dtype="float32"),
    ])
    model.compile(optimizer=keras.optimizers.Adam(3e-3), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    return model


def make_datasets(batch_size: int):
    train = _dataset(TRAIN_SIZE, seed=1).cache().shuffle(TRAIN_SIZE)
    train = train.padded_batch(batch_size).prefetch(tf.data.AUTOTUNE)  # PLANTED: per-batch length, partial last batch
    val = _dataset(VAL_SIZE, seed=2).padded_batch(batch_size, drop_remainder=True).cache()
    return train, val
