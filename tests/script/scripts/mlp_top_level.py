"""A training script as people write it: top-level code, NumPy arrays, validation_split,
EarlyStopping, and the model saved after fit (tfturbo must measure fit and save nothing)."""
import numpy as np
import keras

rng = np.random.default_rng(0)
x = rng.normal(size=(1200, 20)).astype("float32")
y = (x[:, :3].sum(axis=1) > 0).astype("int32")

model = keras.Sequential([
    keras.Input((20,)),
    keras.layers.Dense(30, activation="relu"),
    keras.layers.Dense(2, activation="softmax"),
])
model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="sparse_categorical_crossentropy",
              metrics=["accuracy"])
model.fit(x, y, batch_size=32, epochs=20, validation_split=0.2,
          callbacks=[keras.callbacks.EarlyStopping(patience=2)])
model.evaluate(x, y)
model.save("mlp_top_level_saved.keras")
