"""A subclassed model whose call() returns its head's logits, a learning-rate schedule, a dataset reassigned."""
import numpy as np
import tensorflow as tf
import keras

BATCH_SIZE = 32


class Classifier(keras.Model):
    def __init__(self, classes):
        super().__init__()
        self.hidden = keras.layers.Dense(24, activation="relu")
        self.logits = keras.layers.Dense(classes)

    def call(self, inputs):
        return self.logits(self.hidden(inputs))


rng = np.random.default_rng(2)
features = rng.normal(size=(320, 8)).astype("float32")
targets = (features.sum(axis=1) > 0).astype("int64")

ds = tf.data.Dataset.from_tensor_slices((features, targets))
ds = ds.shuffle(320, seed=0).batch(BATCH_SIZE)
ds = ds.prefetch(tf.data.AUTOTUNE)

schedule = keras.optimizers.schedules.CosineDecay(initial_learning_rate=0.05, decay_steps=200)
optimizer = keras.optimizers.SGD(learning_rate=schedule, momentum=0.9)
model = Classifier(2)
model.compile(optimizer=optimizer, loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"])
model.fit(ds, epochs=2)
