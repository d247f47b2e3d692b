import numpy as np
import keras

data = np.load("no_such_training_data.npz")
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
model.compile(optimizer="sgd", loss="mse")
model.fit(data["x"], data["y"])
