"""A Model subclass with its own train_step, built as a graph (keras-io's "customizing fit()" shape)."""
import numpy as np
import keras
from keras import layers, ops


class CustomModel(keras.Model):
    def train_step(self, data):
        x, y = data
        import tensorflow as tf

        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(y=y, y_pred=y_pred)
        gradients = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply(gradients, self.trainable_variables)
        tracked = {m.name: m for m in self.metrics}
        for name, metric in tracked.items():
            given = (loss,) if name == "loss" else (y, y_pred)
            metric.update_state(*given)
        # the metrics' results, as keras-io's example returns them
        return {name: metric.result() for name, metric in tracked.items()}


inputs = keras.Input(shape=(10,))
hidden = layers.Dense(16, activation="relu")(inputs)
outputs = layers.Dense(1)(hidden)
model = CustomModel(inputs, outputs)
model.compile(optimizer=keras.optimizers.RMSprop(0.01), loss="mse", metrics=["mae"])

rng = np.random.default_rng(3)
X = rng.normal(size=(256, 10)).astype("float32")
Y = ops.convert_to_numpy(ops.sum(X, axis=1, keepdims=True)).astype("float32")
model.fit(X, Y, epochs=2, batch_size=64)
