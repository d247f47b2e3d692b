"""A workload that breaks the contract: make_datasets() is missing."""

import keras


def build_model():
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    return model
