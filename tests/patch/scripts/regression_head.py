"""A regression: a one-unit linear output trained with mse (issue 43: it was offered a softmax)."""
import numpy as np
import keras

rng = np.random.default_rng(4)
X = rng.normal(size=(500, 6)).astype("float32")
y = (X @ np.arange(6, dtype="float32"))[:, None]

inputs = keras.Input(shape=(6,))
x = keras.layers.Dense(32, activation="relu")(inputs)
outputs = keras.layers.Dense(1)(x)
model = keras.Model(inputs=inputs, outputs=outputs)
model.compile(optimizer="adam", loss="mse")
model.fit(X, y, epochs=3, validation_split=0.1)
