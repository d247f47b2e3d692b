"""Token ids in a float array through a Functional model's one Input to an Embedding."""
import numpy as np
import keras
from keras import layers

maxlen, vocab = 16, 5000
ids = np.random.default_rng(7).integers(0, vocab, size=(256, maxlen)).astype("float32")
labels = (ids[:, 0] > vocab / 2).astype("int64")

inputs = layers.Input(shape=(maxlen,))
x = layers.Embedding(vocab, 16)(inputs)
x = layers.GlobalAveragePooling1D()(x)
outputs = layers.Dense(2, activation="softmax")(x)
model = keras.Model(inputs, outputs)
model.compile("adam", "sparse_categorical_crossentropy")
model.fit(ids, labels, batch_size=64, epochs=1)
