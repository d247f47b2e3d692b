"""A binary classifier with a sigmoid head, its tf.data pipeline batched inline in the fit() call."""
import numpy as np
import tensorflow as tf
import keras

rng = np.random.default_rng(5)
x = rng.normal(size=(300, 5)).astype("float32")
y = (x[:, 0] > 0).astype("float32")
train = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(300, seed=0)

model = keras.Sequential([keras.Input((5,)), keras.layers.Dense(8, activation="relu"),
                          keras.layers.Dense(1, activation="sigmoid")])
model.compile("adam", "binary_crossentropy", metrics=["accuracy"])
model.fit(train.batch(30), epochs=2)
