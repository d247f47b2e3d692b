"""A script whose compile() asks for XLA and 4 steps per call, trains with a CosineDecay schedule and passes
EarlyStopping, ModelCheckpoint and ReduceLROnPlateau to fit() (issue 38: the script as written is measured)."""
import numpy as np
import keras
from keras import layers

rng = np.random.default_rng(0)
x = rng.normal(size=(512, 8)).astype("float32")
y = (x[:, 0] > 0).astype("int32")

model = keras.Sequential([keras.Input(shape=(8,)), layers.Dense(16, activation="relu"),
                          layers.Dense(2, activation="softmax")])
schedule = keras.optimizers.schedules.CosineDecay(initial_learning_rate=0.001, decay_steps=1000)
model.compile(
    optimizer=keras.optimizers.Adam(learning_rate=schedule),
    loss="sparse_categorical_crossentropy",
    metrics=["accuracy"],
    jit_compile=True,
    steps_per_execution=4,
)
model.fit(x, y, batch_size=32, epochs=2, validation_split=0.25,
          callbacks=[keras.callbacks.EarlyStopping(patience=2), keras.callbacks.ModelCheckpoint("best.keras"),
                     keras.callbacks.ReduceLROnPlateau()])
