"""builtin:custom-loop — demo workload; planted problem: a custom train_step without loss scaling.

Task: 32 gaussian features; the class is whether two hidden directions agree
in sign (chance = 50%).

The model overrides `train_step` the way the Keras guide's first example does,
without `self.optimizer.scale_loss(loss)`. Under mixed_float16, compile() wraps
the optimizer in a LossScaleOptimizer, which divides the gradients by the loss
scale (32768) that was never applied: the model silently stops learning
(validation accuracy stays near chance; fine under float32 and bfloat16).
Finding it should raise under mixed_float16: CUSTOM_LOOP_NO_LOSS_SCALING.
Fix: `loss = self.optimizer.scale_loss(loss)` inside the tape, before `tape.gradient`.
"""

import keras
import numpy as np
import tensorflow as tf

from trainer_backend.workloads._arrays import array_datasets

# the problem it plants (the wizard lists it: `workload_catalog`)
PLANTED = "a custom train_step without loss scaling"

BATCH_SIZE = 64
FEATURES = 32


def _make_arrays(n: int, seed: int):
    directions = np.random.default_rng(0).normal(size=(FEATURES, 2))
    x = np.random.default_rng(seed).normal(size=(n, FEATURES)).astype("float32")
    a, b = (x @ directions).T
    return x, ((a > 0) == (b > 0)).astype("int32")


class CustomLoopModel(keras.Model):
    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(y=y, y_pred=y_pred)  # PLANTED: never self.optimizer.scale_loss(loss)
        gradients = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply(gradients, self.trainable_variables)
        for metric in self.metrics:
            if metric.name == "loss":
                metric.update_state(loss)
            else:
                metric.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}


def build_model() -> keras.Model:
    inputs = keras.Input(shape=(FEATURES,))
    x = keras.layers.Dense(64, activation="relu")(inputs)
    x = keras.layers.Dense(64, activation="relu")(x)
    outputs = keras.layers.Dense(2, activation="softmax", dtype="float32")(x)
    model = CustomLoopModel(inputs, outputs)
    model.compile(optimizer=keras.optimizers.SGD(0.05, momentum=0.9), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    return model


def make_datasets(batch_size: int):
    return array_datasets(_make_arrays, batch_size)
