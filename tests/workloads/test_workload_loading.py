"""Loading a workload file: every way it can break ends in one line naming the file, the problem and the fix.

Each broken workload is a small file written into tmp_path; the error is what a
user sees (the CLI prints `str(err)` and exits 2).
"""

from __future__ import annotations

import sys
import textwrap

import pytest

from tfturbo.errors import WorkloadError
from trainer_backend.workload import builtin_names, load_workload

DATASETS = """
import numpy as np, tensorflow as tf
def make_datasets(batch_size):
    x, y = np.zeros((64, 4), "float32"), np.zeros(64, "int32")
    return tf.data.Dataset.from_tensor_slices((x, y)).batch(batch_size), None
"""
MODEL = """
import keras
def build_model():
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2, activation="softmax")])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return model
"""


def write(tmp_path, source: str, name: str = "my_workload.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return path


def error_of(call) -> str:
    with pytest.raises(WorkloadError) as info:
        call()
    line = str(info.value)
    assert "\n" not in line, line
    assert info.value.fix, f"no fix in: {line}"
    return line


def load_error(tmp_path, source: str) -> str:
    path = write(tmp_path, source)
    line = error_of(lambda: load_workload(str(path)))
    assert "my_workload.py" in line
    return line


def build_error(tmp_path, source: str) -> str:
    workload = load_workload(str(write(tmp_path, source)))
    line = error_of(workload.build_model)
    assert "my_workload.py" in line
    return line


def data_error(tmp_path, source: str) -> str:
    workload = load_workload(str(write(tmp_path, source)))
    line = error_of(lambda: workload.make_datasets(8))
    assert "my_workload.py" in line
    return line


# -- finding and importing the file ---------------------------------------------------------------

def test_missing_file_names_the_path_and_lists_the_builtins(tmp_path):
    line = error_of(lambda: load_workload(str(tmp_path / "nope.py")))
    assert "nope.py" in line and "not found" in line and "builtin:mlp" not in line and "mlp" in line


def test_a_file_that_is_not_python_is_refused(tmp_path):
    path = write(tmp_path, "BATCH_SIZE = 8\n", name="my_workload.txt")
    line = error_of(lambda: load_workload(str(path)))
    assert "my_workload.txt" in line and ".py" in line


def test_unknown_builtin_lists_the_known_ones():
    line = error_of(lambda: load_workload("builtin:resnet"))
    assert "'resnet'" in line and "builtin:mlp" in line and "builtin:fp16-softmax-head" in line


def test_syntax_error_gives_the_line(tmp_path):
    line = load_error(tmp_path, "import keras\n\ndef build_model(:\n    pass\n")
    assert "syntax error" in line and "line 3" in line


def test_exception_at_import_gives_type_message_and_line(tmp_path):
    line = load_error(tmp_path, "import os\nDATA = os.environ['TFTURBO_NO_SUCH_VARIABLE']\n" + MODEL + DATASETS)
    assert "KeyError" in line and "TFTURBO_NO_SUCH_VARIABLE" in line and "line 2" in line


@pytest.mark.parametrize("missing, present", [("build_model", DATASETS), ("make_datasets", MODEL)])
def test_one_contract_function_alone_is_a_script_and_the_other_is_named(tmp_path, missing, present):
    line = build_error(tmp_path, present)  # a script: it runs, and never calls fit()
    assert "finished without calling model.fit()" in line and f"define {missing}() too" in line


def test_batch_size_must_be_a_positive_int(tmp_path):
    line = load_error(tmp_path, MODEL + DATASETS + "BATCH_SIZE = '64'\n")
    assert "BATCH_SIZE" in line and "'64'" in line


def test_a_failed_load_leaves_no_module_and_no_path_entry(tmp_path):
    modules, path = set(sys.modules), list(sys.path)
    write(tmp_path, "raise RuntimeError('boom')\n" + MODEL + DATASETS)
    error_of(lambda: load_workload(str(tmp_path / "my_workload.py")))
    assert set(sys.modules) == modules and sys.path == path


def test_each_load_is_a_fresh_module_that_can_import_its_own_helpers(tmp_path):
    write(tmp_path, "SCALE = 3\n", name="my_helpers.py")
    path = write(tmp_path, "from my_helpers import SCALE\nBATCH_SIZE = 8 * SCALE\n" + MODEL + DATASETS)
    first, second = load_workload(str(path)), load_workload(str(path))
    assert first.module is not second.module and first.module.__name__ != second.module.__name__
    assert (first.name, first.path, first.default_batch_size) == ("my_workload", str(path), 24)
    assert str(tmp_path) not in sys.path


# -- what build_model() returns -----------------------------------------------------------------

def test_build_model_must_return_a_model(tmp_path):
    line = build_error(tmp_path, "def build_model():\n    model = 1\n    return model\n" + DATASETS)
    assert "returned an int, not a keras.Model" in line and "return the model" in line


def test_build_model_must_compile_the_model(tmp_path):
    line = build_error(tmp_path, MODEL.replace("    model.compile(", "    # model.compile(") + DATASETS)
    assert "not compiled" in line and "model.compile(optimizer=" in line


def test_a_compiled_model_needs_a_loss(tmp_path):
    line = build_error(tmp_path, MODEL.replace(', loss="sparse_categorical_crossentropy"', "") + DATASETS)
    assert "without a loss" in line and "loss=" in line


def test_an_exception_in_build_model_is_one_line_with_its_line(tmp_path):
    line = build_error(tmp_path, "def build_model():\n    return undefined_name\n" + DATASETS)
    assert "build_model() raised NameError" in line and "undefined_name" in line and "line 2" in line


def test_a_custom_train_step_may_compile_without_a_loss(tmp_path):
    source = MODEL.replace(', loss="sparse_categorical_crossentropy"', "").replace(
        "keras.Sequential(", "Loop(") + "\nclass Loop(keras.Sequential):\n    def train_step(self, data):\n" \
        "        return {}\n" + DATASETS
    model = load_workload(str(write(tmp_path, source))).build_model()
    assert model.loss is None


def test_a_model_whose_loss_lives_in_its_own_compute_loss_may_compile_without_one(tmp_path):
    source = MODEL.replace(', loss="sparse_categorical_crossentropy"', "").replace(
        "keras.Sequential(", "OwnLoss(") + "\nclass OwnLoss(keras.Sequential):\n" \
        "    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, allow_empty=False):\n" \
        "        return keras.ops.mean(keras.losses.sparse_categorical_crossentropy(y, y_pred))\n" + DATASETS
    model = load_workload(str(write(tmp_path, source))).build_model()
    assert model.loss is None


# -- what make_datasets() returns ---------------------------------------------------------------

def test_make_datasets_must_return_a_pair(tmp_path):
    line = data_error(tmp_path, MODEL + "def make_datasets(batch_size):\n    return 1, 2, 3\n")
    assert "a tuple of 3 items, not a (train_ds, val_ds) pair" in line and "return train_ds, val_ds" in line


def test_train_set_must_be_a_dataset(tmp_path):
    line = data_error(tmp_path, MODEL + "def make_datasets(batch_size):\n    return 'train.csv', None\n")
    assert "returned a str as train_ds, not a tf.data.Dataset" in line


def test_batches_without_labels_are_refused(tmp_path):
    source = MODEL + DATASETS.replace("from_tensor_slices((x, y))", "from_tensor_slices({'features': x, 'label': y})")
    line = data_error(tmp_path, source)
    assert "without labels" in line and "['features', 'label']" in line and "(features, label)" in line


def test_features_only_val_set_is_refused(tmp_path):
    source = MODEL + DATASETS.replace("batch(batch_size), None", "batch(batch_size), tf.data.Dataset.from_tensor_slices(x).batch(8)")
    line = data_error(tmp_path, source)
    assert "val_ds yields single tensors without labels" in line


def test_an_unbatched_dataset_is_refused(tmp_path):
    line = data_error(tmp_path, MODEL + DATASETS.replace(".batch(batch_size)", ""))
    assert "not batched" in line and "drop_remainder=True" in line


def test_numpy_arrays_become_a_batched_dataset(tmp_path):
    import tensorflow as tf

    source = MODEL + """
import numpy as np
def make_datasets(batch_size):
    x, y = np.arange(80, dtype="float32").reshape(20, 4), np.arange(20) % 2
    return (x, y), (x[:8], y[:8])
"""
    train, val = load_workload(str(write(tmp_path, source))).make_datasets(8)
    assert isinstance(train, tf.data.Dataset) and isinstance(val, tf.data.Dataset)
    assert [int(x.shape[0]) for x, _ in train] == [8, 8, 4]  # nothing dropped: the audit reports the partial batch
    assert sorted(float(v) for x, _ in train for v in x[:, 0]) == [float(4 * i) for i in range(20)]
    assert [x.numpy()[:, 0].tolist() for x, _ in val] == [[0, 4, 8, 12, 16, 20, 24, 28]]  # val in order


def test_builtin_names_are_the_shipped_workloads():
    assert builtin_names() == sorted(["cnn", "custom-loop", "fp16-softmax-head", "mlp", "ragged-batches",
                                      "slow-input", "train-script", "transformer", "uncached-input",
                                      "unaligned-widths"])


def test_forgetting_to_return_the_model_says_so(tmp_path):
    line = build_error(tmp_path, "def build_model():\n    pass\n" + DATASETS)
    assert "returned None, not a keras.Model" in line


PYDATASET = MODEL + """
import math
import numpy as np
X, Y = np.arange(160, dtype="float32").reshape(40, 4), np.arange(40) % 2

class Batches(keras.utils.PyDataset):
    def __init__(self, x, y, batch_size):
        super().__init__()
        self.x, self.y, self.batch_size = x, y, batch_size
    def __len__(self):
        return math.ceil(len(self.x) / self.batch_size)
    def __getitem__(self, i):
        s = slice(i * self.batch_size, (i + 1) * self.batch_size)
        return self.x[s], self.y[s]

def make_datasets(batch_size):
    return Batches(X[:32], Y[:32], batch_size), (X[32:], Y[32:])
"""


def test_a_pydataset_and_a_numpy_validation_tuple_are_measured_as_fit_takes_them(tmp_path):
    """Issue 47: 'make_datasets() returned a Batches as train_ds, not a tf.data.Dataset', although fit() takes a
    PyDataset; it is read through tf.data as script mode reads one, every pass, and a run trains on it."""
    import tensorflow as tf

    from tfturbo.protocol import EventWriter
    from tfturbo.settings import RunSettings
    from trainer_backend.commands.run import prepare

    path = write(tmp_path, PYDATASET)
    train, val = load_workload(str(path)).make_datasets(8)
    assert isinstance(train, tf.data.Dataset) and isinstance(val, tf.data.Dataset)
    firsts = [x.numpy()[:, 0].tolist() for x, _ in train.repeat(2)]
    assert len(firsts) == 8 and firsts[0] == firsts[4] == [0, 4, 8, 12, 16, 20, 24, 28]  # every pass, in order
    job = prepare(RunSettings(workload=str(path), steps=4, batch_size=8), EventWriter())
    history = job.model.fit(job.train_ds.repeat(), steps_per_epoch=4, epochs=1, validation_data=job.val_ds,
                            verbose=0)
    assert "val_loss" in history.history
    line = data_error(tmp_path, PYDATASET.replace("return self.x[s], self.y[s]", "return self.missing"))
    assert "reading the first batch of train_ds (a Batches) raised AttributeError" in line
