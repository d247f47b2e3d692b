"""tiny.py whose validation is slow to start: `evaluate()` spends 0.6 s before `on_test_begin` fires.

Keras builds and resets its evaluation iterator and makes its test function in
that gap (one reset measured 1.1 s on a real workload); none of it is training,
so none of it may enter a measurement window.
"""

import time

import keras

from tiny import make_datasets  # noqa: F401 - the same data

BATCH_SIZE = 32
GAP_S = 0.6


class SlowEvalStart(keras.Sequential):
    def make_test_function(self, force=False):
        time.sleep(GAP_S)
        return super().make_test_function(force)


def build_model():
    model = SlowEvalStart([keras.Input((8,)), keras.layers.Dense(16, activation="relu"),
                           keras.layers.Dense(1, dtype="float32")])
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
    return model
