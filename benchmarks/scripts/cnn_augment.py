"""Image classification with a small CNN and data augmentation, in the style of keras-io's examples (synthetic
32x32 images, no download): random flips and rotations in the model, two conv blocks, ten classes."""

import numpy as np
import keras
from keras import layers

rng = np.random.default_rng(5)
x_train = rng.random((1000, 32, 32, 3), dtype=np.float32)
y_train = rng.integers(0, 10, size=(1000,))
x_val = rng.random((300, 32, 32, 3), dtype=np.float32)
y_val = rng.integers(0, 10, size=(300,))

data_augmentation = keras.Sequential([layers.RandomFlip("horizontal"), layers.RandomRotation(0.1)])
inputs = keras.Input(shape=(32, 32, 3))
x = data_augmentation(inputs)
x = layers.Rescaling(1.0)(x)
x = layers.Conv2D(16, 3, activation="relu")(x)
x = layers.MaxPooling2D()(x)
x = layers.Conv2D(32, 3, activation="relu")(x)
x = layers.GlobalAveragePooling2D()(x)
x = layers.Dropout(0.2)(x)
outputs = layers.Dense(10, activation="softmax")(x)
model = keras.Model(inputs, outputs)
model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
model.fit(x_train, y_train, batch_size=64, epochs=3, validation_data=(x_val, y_val))
