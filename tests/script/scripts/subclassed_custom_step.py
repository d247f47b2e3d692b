"""A subclassed model built before compile, with its own train_step (optimizer.apply), test_step
and metric tracker: it trains under plain fit, so it must train under tfturbo run too."""
import numpy as np
import tensorflow as tf
import keras


class Net(keras.Model):
    def __init__(self):
        super().__init__(name="net")
        self.dense = keras.layers.Dense(32, activation="relu")
        self.out = keras.layers.Dense(2)
        self.loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        self.loss_tracker = keras.metrics.Mean(name="loss")
        self.acc = keras.metrics.SparseCategoricalAccuracy(name="accuracy")

    def call(self, x, training=False):
        return self.out(self.dense(x))

    @property
    def metrics(self):
        return [self.loss_tracker, self.acc]

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            logits = self(x, training=True)
            loss = self.loss_fn(y, logits)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply(grads, self.trainable_variables)
        self.loss_tracker.update_state(loss)
        self.acc.update_state(y, logits)
        return {m.name: m.result() for m in self.metrics}

    def test_step(self, data):
        x, y = data
        logits = self(x, training=False)
        self.loss_tracker.update_state(self.loss_fn(y, logits))
        self.acc.update_state(y, logits)
        return {m.name: m.result() for m in self.metrics}


rng = np.random.default_rng(2)
x = rng.normal(size=(1000, 8)).astype("float32")
y = (x[:, 0] + x[:, 1] > 0).astype("int32")
train = tf.data.Dataset.from_tensor_slices((x[:800], y[:800])).shuffle(800).batch(32)
val = tf.data.Dataset.from_tensor_slices((x[800:], y[800:])).batch(50)

model = Net()
model.build((None, 8))
model.compile(optimizer=keras.optimizers.Adam(1e-2))
model.fit(train, epochs=5, validation_data=val)
