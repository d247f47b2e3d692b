"""An image-classifier script in keras-io style: a logits head (Dense without activation), a from_logits loss
and a top-k metric, NumPy arrays, validation_split."""
import numpy as np
import keras

num_classes = 10
rng = np.random.default_rng(0)
x_train = rng.normal(size=(2048, 8, 8, 1)).astype("float32")
y_train = (x_train.reshape(2048, -1)[:, :10].argmax(axis=1)).astype("int64")

model = keras.Sequential([
    keras.Input(shape=(8, 8, 1)),
    keras.layers.Conv2D(16, 3, activation="relu"),
    keras.layers.Flatten(),
    keras.layers.Dense(32, activation="relu"),
    keras.layers.Dense(num_classes),
])
model.compile(
    optimizer=keras.optimizers.Adam(1e-3),
    loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    metrics=[keras.metrics.SparseCategoricalAccuracy(name="accuracy"),
             keras.metrics.SparseTopKCategoricalAccuracy(5, name="top-5-accuracy")],
)
model.fit(x_train, y_train, batch_size=64, epochs=3, validation_split=0.25)
