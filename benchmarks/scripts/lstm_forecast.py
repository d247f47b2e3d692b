"""Timeseries forecasting with an LSTM, in the style of keras-io's weather example (synthetic data, no download):
a window of past readings of 7 features predicts the temperature 6 steps ahead, trained with MSE."""

import numpy as np
import keras

rng = np.random.default_rng(7)
steps = 4000
t = np.arange(steps, dtype="float32")
features = np.stack([np.sin(t / (20 + 5 * k)) + 0.1 * rng.standard_normal(steps) for k in range(7)], axis=1)
features = ((features - features.mean(0)) / features.std(0)).astype("float32")
past, future, split = 48, 6, 3300
target = features[:, 1]

train = keras.utils.timeseries_dataset_from_array(features[:split - past - future], target[past + future:split],
                                                  sequence_length=past, batch_size=64)
val = keras.utils.timeseries_dataset_from_array(features[split:-past - future], target[split + past + future:],
                                                sequence_length=past, batch_size=64)

inputs = keras.layers.Input(shape=(past, features.shape[1]))
x = keras.layers.LSTM(32)(inputs)
outputs = keras.layers.Dense(1)(x)
model = keras.Model(inputs=inputs, outputs=outputs)
model.compile(optimizer=keras.optimizers.Adam(learning_rate=0.001), loss="mse")
model.fit(train, epochs=8, validation_data=val)
