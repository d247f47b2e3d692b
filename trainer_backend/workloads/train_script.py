"""builtin:train-script — a plain training script, written the way most people write one.

No build_model()/make_datasets(): top-level code with argparse options, NumPy
arrays, `validation_split`, an EarlyStopping callback, and evaluate/save after
fit. tfturbo runs it as `__main__`, measures its first `fit()` and stops it
there, so the evaluation and the saved file never happen. Try:

    tfturbo run builtin:train-script --out runs/script -- --width 128
    python trainer_backend/workloads/train_script.py --epochs 3   # the same script, plain Keras

Task: 32 gaussian features, 4 classes from a nonlinear rule (as builtin:mlp).
"""

import argparse

import keras
import numpy as np

# what it is (the wizard lists it: `workload_catalog`)
DESCRIPTION = "a plain training script, written the way most people write one"

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--epochs", type=int, default=20)
parser.add_argument("--batch-size", type=int, default=64)
parser.add_argument("--width", type=int, default=128)
parser.add_argument("--lr", type=float, default=3e-3)
parser.add_argument("--save", default="train_script_model.keras")
args = parser.parse_args()

rng = np.random.default_rng(0)
directions = rng.normal(size=(32, 2)) / np.sqrt(32)
x = rng.normal(size=(9216, 32)).astype("float32")
a, b = (x @ directions).T * np.sqrt(32) / 2
y = (2 * (a > 0) + (np.abs(b) > 0.5)).astype("int32")

model = keras.Sequential([
    keras.Input(shape=(32,)),
    keras.layers.Dense(args.width, activation="relu"),
    keras.layers.Dense(args.width, activation="relu"),
    keras.layers.Dense(4, activation="softmax"),
])
model.compile(optimizer=keras.optimizers.Adam(args.lr), loss="sparse_categorical_crossentropy",
              metrics=["accuracy"])
model.fit(x, y, batch_size=args.batch_size, epochs=args.epochs, validation_split=0.1,
          callbacks=[keras.callbacks.EarlyStopping(patience=3, restore_best_weights=True)])
print(model.evaluate(x[-1024:], y[-1024:], return_dict=True))
model.save(args.save)
