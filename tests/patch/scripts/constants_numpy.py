"""Module constants, NumPy arrays given to fit(), a Sequential model (the plainest keras-io shape)."""
import numpy as np
import keras
from keras import layers

BATCH = 100  # the batch size
LR = 3e-3
EPOCHS = 2

rng = np.random.default_rng(0)
x_all = rng.normal(size=(600, 16)).astype("float32")
labels = (x_all[:, 0] > 0).astype("int64") + (x_all[:, 1] > 0).astype("int64")

model = keras.Sequential([
    keras.Input(shape=(16,)),
    layers.Dense(32, activation="relu"),
    layers.Dense(3, activation="softmax"),
])
model.compile(optimizer=keras.optimizers.Adam(learning_rate=LR),
              loss="sparse_categorical_crossentropy", metrics=["accuracy"])
model.fit(x_all, labels, batch_size=BATCH, epochs=EPOCHS, validation_split=0.2)
model.evaluate(x_all, labels)
