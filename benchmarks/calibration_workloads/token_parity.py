"""Token ids fed as float32 (the model's Input has no dtype) to a token-embedding layer of the script's own (as
keras-io writes them); the label is the first token's parity. Under a 16-bit policy the layer autocasts its
input before its Embedding casts to int32, so the ids are rounded (ids 256–511 are 2 apart in bfloat16): every
odd id reads its even neighbour's embedding and the parity is lost — a real accuracy regression."""

import numpy as np
import tensorflow as tf

import keras

rng = np.random.default_rng(0)


def tokens(n):
    x = rng.integers(256, 512, size=(n, 4)).astype("float32")
    return x, (x[:, 0] % 2).astype("float32")


x_train, y_train = tokens(3200)
x_val, y_val = tokens(600)
train = tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(3200).batch(32).repeat()
val = tf.data.Dataset.from_tensor_slices((x_val, y_val)).batch(100)



class TokenEmbedding(keras.layers.Layer):
    def __init__(self, vocab, dim, **kwargs):
        super().__init__(**kwargs)
        self.embed = keras.layers.Embedding(vocab, dim)

    def call(self, x):
        return self.embed(x)


inputs = keras.Input(shape=(4,))
hidden = keras.layers.Flatten()(TokenEmbedding(520, 8)(inputs))
hidden = keras.layers.Dropout(0.2)(keras.layers.Dense(16, activation="relu")(hidden))
model = keras.Model(inputs, keras.layers.Dense(1, activation="sigmoid", dtype="float32")(hidden))
model.compile(keras.optimizers.Adam(1e-2), "binary_crossentropy", metrics=["accuracy"])
model.fit(train, steps_per_epoch=40, epochs=4, validation_data=val)
