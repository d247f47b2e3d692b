"""A text classifier written like keras-io's "Text classification with Transformer": token ids fed through a float
`layers.Input(shape=(maxlen,))` (float32 by default) into a TokenAndPositionEmbedding of a 2,000-token
vocabulary. Under mixed_bfloat16 the layer casts the ids to bfloat16 before its Embedding: ids above 256 round
(427 → 428) and the largest round past the vocabulary's end (1999 → 2000, InvalidArgumentError in the lookup).
The label is the majority sentiment of its tokens, so a model that cannot tell two ids apart loses accuracy.
200 synthetic examples: it trains in seconds."""
import numpy as np
import keras
from keras import layers

vocab_size = 2000
maxlen = 16


class TokenAndPositionEmbedding(layers.Layer):  # keras-io's layer, its position table held as one weight
    def __init__(self, maxlen, vocab_size, embed_dim):
        super().__init__()
        self.token_emb = layers.Embedding(input_dim=vocab_size, output_dim=embed_dim)
        self.position_table = self.add_weight(shape=(maxlen, embed_dim), initializer="uniform", name="positions")

    def call(self, x):
        return self.token_emb(x) + self.position_table


rng = np.random.default_rng(0)
positive = rng.random(vocab_size) < 0.5  # each token's sentiment, learnable per token


def make(n):
    x = rng.integers(1, vocab_size, size=(n, maxlen))
    x[:, 0] = vocab_size - 1  # the last id in every example: bfloat16 rounds it to 2000, past the vocabulary
    return x, (positive[x].sum(axis=1) > maxlen // 2).astype("int64")


x_train, y_train = make(200)
x_val, y_val = make(64)

# the ids reach the model as floats: keras.Input's default dtype, as keras-io's text classifiers declare it;
# the embedding layer then computes in the policy's dtype, and under mixed_bfloat16 the ids round before the
# lookup

inputs = layers.Input(shape=(maxlen,))
pooled = layers.GlobalAveragePooling1D()(TokenAndPositionEmbedding(maxlen, vocab_size, 16)(inputs))
hidden = layers.Dropout(0.1)(layers.Dense(16, activation="relu")(pooled))
model = keras.Model(inputs, layers.Dense(2, activation="softmax")(hidden))
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
model.fit(x_train, y_train, batch_size=32, epochs=2, validation_data=(x_val, y_val))
