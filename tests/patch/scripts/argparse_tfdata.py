"""argparse options, a tf.data pipeline made by a function, a Functional model, everything in main()."""
import argparse

import numpy as np
import tensorflow as tf
import keras
from keras import layers

NUM_CLASSES = 4


def make_dataset(x, y, batch_size, training=True):
    ds = tf.data.Dataset.from_tensor_slices((x, y))
    if training:
        ds = ds.shuffle(len(x), seed=0)
    return ds.batch(batch_size).prefetch(tf.data.AUTOTUNE)


def build_model():
    inputs = keras.Input(shape=(12,))
    x = layers.Dense(32, activation="relu")(inputs)
    outputs = layers.Dense(NUM_CLASSES, activation="softmax", name="predictions")(x)
    return keras.Model(inputs, outputs)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default=50)
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()

    rng = np.random.default_rng(1)
    x = rng.normal(size=(400, 12)).astype("float32")
    y = np.argmax(x[:, :NUM_CLASSES], axis=1)
    train_ds = make_dataset(x[:320], y[:320], args.batch_size)
    val_ds = make_dataset(x[320:], y[320:], args.batch_size, training=False)

    model = build_model()
    model.compile(
        optimizer="adam",
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    model.fit(train_ds, validation_data=val_ds, epochs=args.epochs)


if __name__ == "__main__":
    main()
