"""A binary classifier as keras-io examples write it: Dense(1, sigmoid) on 1-D labels of shape (N,),
NumPy arrays, validation_data, the model evaluated after fit."""
import numpy as np
import keras

rng = np.random.default_rng(0)
x_train = rng.normal(size=(2048, 16)).astype("float32")
y_train = (x_train[:, :4].sum(axis=1) > 0).astype("float32")  # shape (N,), not (N, 1)
x_val = rng.normal(size=(512, 16)).astype("float32")
y_val = (x_val[:, :4].sum(axis=1) > 0).astype("float32")

model = keras.Sequential([
    keras.Input(shape=(16,)),
    keras.layers.Dense(32, activation="relu"),
    keras.layers.Dense(1, activation="sigmoid"),
])
model.compile(loss="binary_crossentropy", optimizer="adam", metrics=["accuracy"])
model.fit(x_train, y_train, batch_size=32, epochs=5, validation_data=(x_val, y_val))
print(model.evaluate(x_val, y_val))
