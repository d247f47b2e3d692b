"""tiny.py with a training set that is not a whole number of batches: 1,000 examples at batch 32 are 31 full
batches and one of 8, so each pass's 32nd step has a shape XLA has not compiled at first sight (a keras-io
script's dataset, batched without drop_remainder)."""

import runpy
from pathlib import Path

import numpy as np
import tensorflow as tf

BATCH_SIZE = 32
EXAMPLES = 1000  # 31 x 32 + 8

build_model = runpy.run_path(str(Path(__file__).with_name("tiny.py")))["build_model"]  # tiny.py's model


def make_datasets(batch_size):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(EXAMPLES + 64, 8)).astype("float32")
    y = (x @ rng.normal(size=(8, 1))).astype("float32")
    train = tf.data.Dataset.from_tensor_slices((x[:EXAMPLES], y[:EXAMPLES])).batch(batch_size)
    val = tf.data.Dataset.from_tensor_slices((x[EXAMPLES:], y[EXAMPLES:])).batch(batch_size)
    return train, val
