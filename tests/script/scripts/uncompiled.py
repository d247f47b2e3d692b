import numpy as np
import keras

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
model.fit(np.zeros((64, 4), "float32"), np.zeros((64, 1), "float32"))
