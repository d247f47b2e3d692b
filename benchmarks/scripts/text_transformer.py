"""Text classification with a small transformer, in the style of keras-io's example (synthetic token ids, no
download): token and position embeddings, one transformer block, pooled, two classes."""

import numpy as np
import keras
from keras import layers, ops

vocab, maxlen, embed, heads, ff = 2000, 64, 32, 2, 32
rng = np.random.default_rng(3)
x_train = rng.integers(1, vocab, size=(1200, maxlen))
y_train = (x_train[:, :8].mean(1) > vocab / 2).astype("int32")
x_val = rng.integers(1, vocab, size=(300, maxlen))
y_val = (x_val[:, :8].mean(1) > vocab / 2).astype("int32")


class TransformerBlock(layers.Layer):
    def __init__(self, embed_dim, num_heads, ff_dim, rate=0.1):
        super().__init__()
        self.att = layers.MultiHeadAttention(num_heads=num_heads, key_dim=embed_dim)
        self.ffn = keras.Sequential([layers.Dense(ff_dim, activation="relu"), layers.Dense(embed_dim)])
        self.layernorm1 = layers.LayerNormalization(epsilon=1e-6)
        self.layernorm2 = layers.LayerNormalization(epsilon=1e-6)
        self.dropout1 = layers.Dropout(rate)
        self.dropout2 = layers.Dropout(rate)

    def call(self, inputs):
        attn_output = self.dropout1(self.att(inputs, inputs))
        out1 = self.layernorm1(inputs + attn_output)
        return self.layernorm2(out1 + self.dropout2(self.ffn(out1)))


class TokenAndPositionEmbedding(layers.Layer):
    """Token embeddings plus a learned table of position embeddings, one row per position."""

    def __init__(self, maxlen, vocab_size, embed_dim):
        super().__init__()
        self.token_emb = layers.Embedding(input_dim=vocab_size, output_dim=embed_dim)
        self.positions = self.add_weight(shape=(maxlen, embed_dim), initializer="uniform", name="positions")

    def call(self, x):
        return self.token_emb(x) + self.positions[: ops.shape(x)[-1]]


inputs = layers.Input(shape=(maxlen,), dtype="int32")
x = TokenAndPositionEmbedding(maxlen, vocab, embed)(inputs)
x = TransformerBlock(embed, heads, ff)(x)
x = layers.GlobalAveragePooling1D()(x)
x = layers.Dropout(0.1)(x)
x = layers.Dense(20, activation="relu")(x)
outputs = layers.Dense(2, activation="softmax")(x)
model = keras.Model(inputs=inputs, outputs=outputs)
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
model.fit(x_train, y_train, batch_size=32, epochs=2, validation_data=(x_val, y_val))
