"""Scripts written the way keras-io examples are, in this process: the script's own Keras backend, the audit's
integer-input and metric checks, the training-failure diagnosis, and fixes written in the workload's terms."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tfturbo.errors import WorkloadError
from tfturbo.findings import HEAD_NOT_FLOAT32, INTEGER_INPUT_16BIT, PARTIAL_LAST_BATCH

keras = pytest.importorskip("keras")

SCRIPTS = Path(__file__).resolve().parent / "scripts"


def _script(tmp_path, text: str, name: str = "train.py") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


MLP = '''
import numpy as np
import keras
x = np.random.default_rng(0).normal(size=(64, 4)).astype("float32")
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, activation="sigmoid")])
model.compile("adam", "binary_crossentropy")
model.fit(x, (x[:, 0] > 0).astype("float32"))
'''


@pytest.mark.parametrize("selects", ['import os\nos.environ["KERAS_BACKEND"] = "jax"\n',
                                     'import keras\nkeras.config.set_backend("torch")\n'],
                         ids=["os.environ", "keras.config.set_backend"])
def test_a_script_that_selects_another_keras_backend_stops_with_one_line(tmp_path, selects):
    from trainer_backend.workload import load_workload

    before = os.environ.get("KERAS_BACKEND")
    workload = load_workload(str(_script(tmp_path, selects + MLP)))
    with pytest.raises(WorkloadError) as caught:
        workload.build_model()
    line = caught.value.line()
    assert "selects the Keras backend" in line and "(line 2)" in line and "tfturbo measures TensorFlow" in line
    assert "KERAS_BACKEND=tensorflow" in caught.value.fix and "remove that line" in caught.value.fix
    assert os.environ.get("KERAS_BACKEND") == before  # the script's choice did not leak into this process


def test_a_script_that_asks_for_tensorflow_runs(tmp_path):
    from trainer_backend.workload import load_workload

    workload = load_workload(str(_script(tmp_path, 'import os\nos.environ["KERAS_BACKEND"] = "tensorflow"\n' + MLP)))
    assert isinstance(workload.build_model(), keras.Model)


# ------------------------------------------------------------------ the audit on scripts of each kind

def _audit(path: Path, **args) -> dict:
    import argparse
    import io

    from tfturbo import protocol
    from trainer_backend.commands import audit

    sink = io.StringIO()
    writer = protocol.EventWriter(sinks=[sink])
    namespace = argparse.Namespace(**{"batch_size": None, "policy": "float32", "jit": False, "script_args": [],
                                      "workload": str(path), **args})
    cwd = os.getcwd()
    os.chdir(path.parent)
    try:
        assert audit.main(namespace, writer) == 0
    finally:
        os.chdir(cwd)
        keras.mixed_precision.set_global_policy("float32")
    events = [protocol.parse_line(line) for line in sink.getvalue().splitlines()]
    return next(e["document"] for e in events if e["type"] == protocol.RESULT)


def _of(doc: dict, code: str) -> list[dict]:
    return [f for f in doc["findings"] if f["code"] == code]


def test_token_ids_through_a_float_input_are_flagged_before_any_run(tmp_path):
    shutil.copy(SCRIPTS / "token_ids_float_input.py", tmp_path / "t.py")
    [finding] = _of(_audit(tmp_path / "t.py", policy="mixed_bfloat16"), INTEGER_INPUT_16BIT)
    assert "bfloat16 is exact only up to 256" in finding["message"] and "→" in finding["message"]
    assert finding["where"] == "token_and_position_embedding"
    # the script's own Input line, dtype added (its own names: layers.Input, maxlen)
    assert finding["fix"].startswith('# t.py line 40:\ninputs = layers.Input(shape=(maxlen,), dtype="int32")')
    assert "--fix-int-inputs" in finding["fix"]
    assert not _of(_audit(tmp_path / "t.py", policy="float32"), INTEGER_INPUT_16BIT)
    fixed = (tmp_path / "t.py").read_text().replace("layers.Input(shape=(maxlen,))",
                                                    'layers.Input(shape=(maxlen,), dtype="int32")')
    (tmp_path / "int.py").write_text(fixed)
    assert not _of(_audit(tmp_path / "int.py", policy="mixed_bfloat16"), INTEGER_INPUT_16BIT)


def test_an_embedding_fed_directly_is_safe(tmp_path):
    """keras.layers.Embedding does not autocast and casts its input to int32 itself."""
    script = _script(tmp_path, '''
import numpy as np
import keras
x = np.random.default_rng(0).integers(0, 20000, size=(256, 8)).astype("float32")
model = keras.Sequential([keras.Input((8,)), keras.layers.Embedding(20000, 8), keras.layers.Flatten(),
                          keras.layers.Dense(2, activation="softmax")])
model.compile("adam", "sparse_categorical_crossentropy")
model.fit(x, (x[:, 0] % 2).astype("int64"))
''')
    assert not _of(_audit(script, policy="mixed_bfloat16"), INTEGER_INPUT_16BIT)


def test_a_top_k_metric_on_16bit_logits_is_named_as_the_risk(tmp_path):
    shutil.copy(SCRIPTS / "topk_logits.py", tmp_path / "k.py")
    [head] = _of(_audit(tmp_path / "k.py", policy="mixed_bfloat16"), HEAD_NOT_FLOAT32)
    assert "metric top-5-accuracy cannot take bfloat16 predictions" in head["message"]
    assert "every training step fails" in head["message"] and head["severity"] == "error"
    assert head["data"]["metrics_refusing"] == ["top-5-accuracy"]
    # Sequential code, and no softmax after logits the loss takes as logits (from_logits=True)
    # the script's own output layer line, dtype added; no softmax after logits the loss takes as logits
    assert head["fix"].startswith('# k.py line 16:\nkeras.layers.Dense(num_classes, dtype="float32"),')
    assert '"softmax"' not in head["fix"] and 'Activation("linear", dtype="float32")' in head["fix"]


def test_a_logits_head_without_risky_metrics_is_a_warning_that_says_the_loss_is_safe(tmp_path):
    script = _script(tmp_path, '''
import numpy as np
import keras
x = np.random.default_rng(0).normal(size=(256, 4)).astype("float32")
inputs = keras.Input((4,))
outputs = keras.layers.Dense(3)(keras.layers.Dense(8, activation="relu")(inputs))
model = keras.Model(inputs, outputs)
model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
model.fit(x, (x[:, 0] > 0).astype("int64"))
''')
    [head] = _of(_audit(script, policy="mixed_bfloat16"), HEAD_NOT_FLOAT32)
    assert head["severity"] == "warning" and "Keras 3 losses convert outputs to float32" in head["message"]
    assert head["fix"].startswith('# train.py line 6:\noutputs = keras.layers.Dense(3, dtype="float32")(')
    assert "from_logits=True): keep them" in head["fix"] and '"softmax"' not in head["fix"]


PARTIAL = '''
import numpy as np
import tensorflow as tf
import keras
x = np.random.default_rng(0).normal(size=(1000, 4)).astype("float32")
y = (x[:, 0] > 0).astype("int64")
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2, activation="softmax")])
model.compile("adam", "sparse_categorical_crossentropy")
'''


def test_partial_last_batch_advice_for_numpy_fit_in_a_script(tmp_path):
    [f] = _of(_audit(_script(tmp_path, PARTIAL + "model.fit(x, y, batch_size=32)\n"), jit=True), PARTIAL_LAST_BATCH)
    assert "make_datasets" not in f["fix"] and "train_ds" not in f["fix"] and "x_train" not in f["fix"]
    assert "n = len(x) // 32 * 32" in f["fix"] and "model.fit(x[:n], y[:n], batch_size=32" in f["fix"]  # its names


def test_partial_last_batch_advice_for_tf_data_in_a_script(tmp_path):
    script = _script(tmp_path, PARTIAL + "model.fit(tf.data.Dataset.from_tensor_slices((x, y)).batch(32))\n")
    [f] = _of(_audit(script, jit=True), PARTIAL_LAST_BATCH)
    # drop_remainder on the script's own batch() call, never a second .batch() of an already batched dataset
    assert f["fix"].startswith("# train.py line 9:\nmodel.fit(tf.data.Dataset.from_tensor_slices((x, y))"
                               ".batch(32, drop_remainder=True))")
    assert "make_datasets" not in f["fix"] and "train_ds" not in f["fix"]


def test_partial_last_batch_advice_for_a_contract_file(tmp_path):
    path = tmp_path / "w.py"
    path.write_text('''
import numpy as np
import tensorflow as tf
import keras
BATCH_SIZE = 32
def build_model():
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2, activation="softmax")])
    model.compile("adam", "sparse_categorical_crossentropy")
    return model
def make_datasets(batch_size):
    x = np.random.default_rng(0).normal(size=(1000, 4)).astype("float32")
    return tf.data.Dataset.from_tensor_slices((x, (x[:, 0] > 0).astype("int64"))).batch(batch_size), None
''')
    [f] = _of(_audit(path, jit=True), PARTIAL_LAST_BATCH)
    assert "train_ds.batch(32, drop_remainder=True)  # in make_datasets()" in f["fix"]


def test_subclassed_head_advice_is_subclassed_code():
    from trainer_backend.diagnostics.advice import SUBCLASSED, WorkloadShape, head_fix
    from trainer_backend.diagnostics.model_audit import HeadDecision

    fix = head_fix("Dense", "10", HeadDecision("linear", "keep them"), WorkloadShape(model=SUBCLASSED))
    assert fix.startswith('self.head = keras.layers.Dense(10, dtype="float32")  # in __init__')


# ------------------------------------------------------------------ the first failing step names its cause

def test_a_training_error_from_a_16bit_metric_names_the_head_fix():
    from tfturbo.settings import RunSettings
    from trainer_backend.diagnostics.training_failure import diagnose

    exc = TypeError("Input 'predictions' of 'InTopKV2' Op has type bfloat16 that does not match expected type of "
                    "float32.")
    finding, fix = diagnose(exc, None, RunSettings("w", policy="mixed_bfloat16"))
    assert finding.code == HEAD_NOT_FLOAT32 and "InTopKV2" in finding.message and "top-k" in finding.message
    assert "fix_head=on" in fix
    assert diagnose(exc, None, RunSettings("w", policy="mixed_bfloat16", fix_head=True)) is None
    assert diagnose(exc, None, RunSettings("w")) is None  # float32: not a 16-bit failure


def test_a_vocabulary_overflow_under_float16_names_the_integer_input_fix():
    from tfturbo.settings import RunSettings
    from trainer_backend.diagnostics.training_failure import diagnose

    exc = ValueError("Graph execution error: ... indices[16,18] = 20000 is not in [0, 20000) [[{{node gather}}]]")
    finding, fix = diagnose(exc, None, RunSettings("w", policy="mixed_float16"))
    assert finding.code == INTEGER_INPUT_16BIT and "20,000" in finding.message and "fix_int_inputs=on" in fix


# ------------------------------------------------------------------ the verdict's causes, in order

def test_accuracy_regression_names_the_most_likely_cause_first():
    from tfturbo.settings import RunSettings
    from tfturbo.trials.verdict import Change, likely_causes

    base = RunSettings("w", batch_size=64)
    ids = [{"code": INTEGER_INPUT_16BIT}]
    bf16 = base.with_(policy="mixed_bfloat16")
    causes = likely_causes(Change(base, bf16, ["bfloat16"]), ids)
    assert causes[0].startswith("integer ids are rounded") and "output layer" in causes[1]
    assert likely_causes(Change(base, bf16.with_(fix_head=True), ["float32"]), [])[0].startswith(
        "16-bit numerics inside the model")
    batch = likely_causes(Change(base, base.with_(batch_size=128, lr_scale=2.0), ["float32"]), [])
    assert batch[0].startswith("the batch size (64 → 128, learning rate ×2)")
    assert not any("16-bit" in c or "output layer" in c for c in batch)  # a float32 batch rung
