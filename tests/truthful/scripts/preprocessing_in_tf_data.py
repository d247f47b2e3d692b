"""Structured data as keras-io writes it ("Structured data classification with FeatureSpace", made small): a
Normalization layer adapted on a tf.data pipeline, the pipeline mapped through it, then the model. Under a
global bfloat16 policy set before the script, adapt() fails ("cannot compute AddV2 ... bfloat16"); the script
runs as written. `--own-policy` sets mixed_bfloat16 itself, after adapt() and before the model, as the
mixed-precision guide would have it."""
import argparse

import numpy as np
import tensorflow as tf
import keras

parser = argparse.ArgumentParser()
parser.add_argument("--own-policy", action="store_true")
args = parser.parse_args()

rng = np.random.default_rng(3)
features = (rng.normal(size=(640, 8)) * [1, 10, 100, 1, 5, 50, 2, 20]).astype("float32")
labels = (features[:, 0] + features[:, 1] / 10 > 0).astype("int32")
raw_train = tf.data.Dataset.from_tensor_slices((features[:512], labels[:512])).batch(32)
raw_val = tf.data.Dataset.from_tensor_slices((features[512:], labels[512:])).batch(32)

normalizer = keras.layers.Normalization()
normalizer.adapt(raw_train.map(lambda x, y: x))
train_ds = raw_train.map(lambda x, y: (normalizer(x), y)).prefetch(tf.data.AUTOTUNE)
val_ds = raw_val.map(lambda x, y: (normalizer(x), y))

if args.own_policy:
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
inputs = keras.Input(shape=(8,))
x = keras.layers.Dense(32, activation="relu")(inputs)
outputs = keras.layers.Dense(1, activation="sigmoid", dtype="float32")(x)
model = keras.Model(inputs, outputs)
schedule = keras.optimizers.schedules.ExponentialDecay(1e-3, decay_steps=100, decay_rate=0.9)
model.compile(optimizer=keras.optimizers.Adam(schedule), loss="binary_crossentropy", metrics=["accuracy"])
model.fit(train_ds, validation_data=val_ds, epochs=3)
