"""A text classifier written like keras-io's "Text classification with Transformer": a custom
TokenAndPositionEmbedding layer (no get_config) on a float Input(shape=(maxlen,)), token ids as NumPy arrays.
The label is the majority sentiment of its tokens: a model that cannot tell two ids apart loses accuracy."""
import numpy as np
import keras
from keras import layers

vocab_size = 20000
maxlen = 9


class TokenAndPositionEmbedding(layers.Layer):  # as keras-io writes it
    def __init__(self, maxlen, vocab_size, embed_dim):
        super().__init__()
        self.token_emb = layers.Embedding(input_dim=vocab_size, output_dim=embed_dim)
        self.pos_emb = layers.Embedding(input_dim=maxlen, output_dim=embed_dim)

    def call(self, x):
        maxlen = keras.ops.shape(x)[-1]
        positions = keras.ops.arange(start=0, stop=maxlen, step=1)
        positions = self.pos_emb(positions)
        x = self.token_emb(x)
        return x + positions


rng = np.random.default_rng(0)
vocabulary = rng.choice(np.arange(4096, vocab_size), size=400, replace=False)  # ids well beyond 256 and 2048
positive = dict(zip(vocabulary, rng.random(400) < 0.5))  # each token's sentiment, learnable per token


def make(n):
    x = rng.choice(vocabulary, size=(n, maxlen))
    y = (np.vectorize(positive.get)(x).sum(axis=1) > maxlen // 2).astype("int64")
    return x, y


x_train, y_train = make(4096)
x_val, y_val = make(1024)

inputs = layers.Input(shape=(maxlen,))
x = TokenAndPositionEmbedding(maxlen, vocab_size, 16)(inputs)
x = layers.GlobalAveragePooling1D()(x)
x = layers.Dense(16, activation="relu")(x)
outputs = layers.Dense(2, activation="softmax")(x)
model = keras.Model(inputs=inputs, outputs=outputs)
model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
model.fit(x_train, y_train, batch_size=32, epochs=2, validation_data=(x_val, y_val))
