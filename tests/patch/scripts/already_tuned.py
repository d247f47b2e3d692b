"""A script that already sets a policy and compiles with XLA and several steps per call."""
import numpy as np
import keras

keras.mixed_precision.set_global_policy("mixed_float16")

x = np.random.default_rng(6).normal(size=(256, 4)).astype("float32")
y = (x[:, 0] > 0).astype("int64")
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"),
                          keras.layers.Dense(2, activation="softmax", dtype="float32")])
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", jit_compile=True, steps_per_execution=2)
model.fit(x, y, batch_size=32, epochs=1)
