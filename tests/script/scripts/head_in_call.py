"""A subclassed model whose call() ends in 16-bit after its last layer: --fix-head cannot fix it."""
import numpy as np
import keras


class Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = keras.layers.Dense(16, activation="relu")
        self.head = keras.layers.Dense(2)

    def call(self, x):
        return keras.ops.softmax(keras.ops.cast(self.head(self.hidden(x)), self.compute_dtype))


x = np.random.default_rng(3).normal(size=(256, 6)).astype("float32")
model = Net()
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
model.fit(x, (x[:, 0] > 0).astype("int32"), validation_split=0.25)
