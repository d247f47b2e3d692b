"""builtin:transformer — a small text classifier (a clean example workload).

Task: "reviews" of 32 tokens from a 64-token vocabulary. Tokens 4-11 are
positive words, 12-19 negative words, token 2 ("not") flips the word after it;
the label is whether the (flipped) sum is positive (chance = 50%). Counting
words alone gets ~86% right; the rest needs word order ("not" before a word),
which the attention block has to learn.
"""

import keras
import numpy as np

from trainer_backend.workloads._arrays import array_datasets

# what it is (the wizard lists it: `workload_catalog`)
DESCRIPTION = "a small text classifier (a clean example workload)"

BATCH_SIZE = 64
VOCAB = 64
LENGTH = 32
WIDTH = 64
HEADS = 4
SENTIMENT_WORDS = 9
NOT, POSITIVE, NEGATIVE = 2, range(4, 12), range(12, 20)


def _make_arrays(n: int, seed: int):
    rng = np.random.default_rng(seed)
    tokens = rng.integers(20, VOCAB, size=(n, LENGTH))  # neutral filler
    # Nine sentiment words per review (an odd count, so the sum is never a tie).
    sentiment = np.argsort(rng.random((n, LENGTH)), axis=1) < SENTIMENT_WORDS
    positive = rng.random((n, LENGTH)) < 0.5
    tokens[sentiment & positive] = rng.choice(POSITIVE, size=(sentiment & positive).sum())
    tokens[sentiment & ~positive] = rng.choice(NEGATIVE, size=(sentiment & ~positive).sum())
    negated = (rng.random((n, LENGTH)) < 0.1) & np.roll(sentiment, -1, axis=1) & ~sentiment
    negated[:, -1] = False
    tokens[negated] = NOT
    value = np.where(sentiment, np.where(positive, 1, -1), 0)
    value[:, 1:] *= np.where(negated[:, :-1], -1, 1)
    return tokens.astype("int32"), (value.sum(axis=1) > 0).astype("int32")


class PositionalEmbedding(keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.tokens = keras.layers.Embedding(VOCAB, WIDTH)
        self.positions = keras.layers.Embedding(LENGTH, WIDTH)

    def call(self, x):
        return self.tokens(x) + self.positions(keras.ops.arange(LENGTH))


def _transformer_block(x):
    attention = keras.layers.MultiHeadAttention(num_heads=HEADS, key_dim=WIDTH // HEADS)(x, x)
    x = keras.layers.LayerNormalization()(x + attention)
    ff = keras.layers.Dense(2 * WIDTH, activation="relu")(x)
    ff = keras.layers.Dense(WIDTH)(ff)
    return keras.layers.LayerNormalization()(x + ff)


def build_model() -> keras.Model:
    inputs = keras.Input(shape=(LENGTH,), dtype="int32")
    x = _transformer_block(PositionalEmbedding()(inputs))
    x = keras.layers.GlobalAveragePooling1D()(x)
    # The head computes in float32 even under a mixed precision policy.
    outputs = keras.layers.Dense(2, activation="softmax", dtype="float32")(x)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    return model


def make_datasets(batch_size: int):
    return array_datasets(_make_arrays, batch_size)
