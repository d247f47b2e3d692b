"""A training script whose validation data is a finite Python generator (one pass), of 480 examples in batches of
32, with float token ids that a 16-bit policy makes tfturbo check (its first validation batch) before training."""

import numpy as np

import keras

rng = np.random.default_rng(0)
x_train = rng.integers(1, 400, size=(1600, 20)).astype("float32")
y_train = (x_train[:, 0] > 200).astype("float32")
x_val = rng.integers(1, 400, size=(480, 20)).astype("float32")
y_val = (x_val[:, 0] > 200).astype("float32")


def val_batches():
    for i in range(0, len(x_val), 32):
        yield x_val[i:i + 32], y_val[i:i + 32]


inputs = keras.Input(shape=(20,))
hidden = keras.layers.GlobalAveragePooling1D()(keras.layers.Embedding(400, 8)(inputs))
model = keras.Model(inputs, keras.layers.Dense(1, activation="sigmoid")(hidden))
model.compile("adam", "binary_crossentropy", metrics=["accuracy"])
model.fit(x_train, y_train, batch_size=32, epochs=2, validation_data=val_batches())
