"""A small augmented CNN (the issue 39 walk's kind): RandomFlip and RandomRotation inside the model, Dropout, and
a shuffled tf.data pipeline. Trainings of one configuration from different seeds end several points apart;
RandomRotation has supports_jit=False, so jit_compile=True does not take effect."""

import numpy as np
import tensorflow as tf

import keras

CLASSES = 4
rng = np.random.default_rng(0)


def images(n):
    """Noisy 16×16 images whose class is the quadrant of a bright blob; the vertical flip moves it to another
    quadrant, so the augmentation is noise the model has to learn through (trainings from different seeds end
    a few points apart, as the issue's CNN did)."""
    y = rng.integers(0, CLASSES, n)
    x = rng.normal(0.0, 1.0, (n, 16, 16, 3)).astype("float32")
    for i, c in enumerate(y):
        r, q = (c // 2) * 8 + rng.integers(1, 5), (c % 2) * 8 + rng.integers(1, 5)
        x[i, r:r + 3, q:q + 3, c % 3] += 4.0
    return x, y.astype("int32")


x_train, y_train = images(2400)
x_val, y_val = images(600)
train = tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(2400).batch(32).repeat()
val = tf.data.Dataset.from_tensor_slices((x_val, y_val)).batch(100)

model = keras.Sequential([
    keras.Input(shape=(16, 16, 3)),
    keras.layers.RandomFlip("vertical"),
    keras.layers.RandomRotation(0.05),
    keras.layers.Conv2D(8, 3, activation="relu"),
    keras.layers.MaxPooling2D(),
    keras.layers.Conv2D(16, 3, activation="relu"),
    keras.layers.GlobalAveragePooling2D(),
    keras.layers.Dropout(0.3),
    keras.layers.Dense(CLASSES, activation="softmax", dtype="float32"),
])
model.compile(keras.optimizers.Adam(3e-3), "sparse_categorical_crossentropy", metrics=["accuracy"])
model.fit(train, steps_per_epoch=30, epochs=4, validation_data=val)
