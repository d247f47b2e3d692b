"""A main()+argparse script with tutorial-style custom layers: no get_config(), no **kwargs."""
import argparse

import numpy as np
import keras
from keras import layers, ops


class TokenAndPositionEmbedding(layers.Layer):
    def __init__(self, maxlen, vocab_size, embed_dim):
        super().__init__()
        self.token_emb = layers.Embedding(input_dim=vocab_size, output_dim=embed_dim)
        self.pos_emb = layers.Embedding(input_dim=maxlen, output_dim=embed_dim)

    def call(self, x):
        positions = ops.arange(0, ops.shape(x)[-1], 1)
        return self.token_emb(x) + self.pos_emb(positions)


class MeanPoolBlock(layers.Layer):
    def __init__(self, width):
        super().__init__()
        self.dense = layers.Dense(width, activation="relu")

    def call(self, x):
        return ops.mean(self.dense(x), axis=1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--length", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()

    rng = np.random.default_rng(1)
    x = rng.integers(1, 100, size=(800, args.length)).astype("int32")
    y = (x[:, 0] > 50).astype("int32")
    x_val = rng.integers(1, 100, size=(160, args.length)).astype("int32")
    y_val = (x_val[:, 0] > 50).astype("int32")

    inputs = keras.Input((args.length,), dtype="int32")
    h = TokenAndPositionEmbedding(args.length, 100, 16)(inputs)
    h = MeanPoolBlock(16)(h)
    outputs = layers.Dense(2, activation="softmax")(h)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(x, y, batch_size=args.batch_size, epochs=args.epochs, validation_data=(x_val, y_val))
    model.save("text_saved.keras")


if __name__ == "__main__":
    main()
