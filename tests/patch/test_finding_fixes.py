"""Each finding's fix fits the model and the script (issue 43): the head fix follows the head, the batch fix edits
where the batch is set, the names and lines are the script's own, arrays never get a tf.data fix, and a model with
its own train_step is never told to pass labels. The fixes that are code parse."""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
from pathlib import Path


from tfturbo.findings import BATCH_NOT_MULTIPLE_OF_8, HEAD_NOT_FLOAT32, PARTIAL_LAST_BATCH
from tfturbo.patch.advice import fit_facts
from trainer_backend.diagnostics.advice import NUMPY, SCRIPT, TF_DATA, WorkloadShape, partial_batch_fix

SCRIPTS = Path(__file__).parent / "scripts"


def audit(tmp_path: Path, name: str, **args) -> dict[str, list[dict]]:
    """The audit of a copy of scripts/NAME, in this process: its findings by code."""
    from tfturbo import protocol
    from trainer_backend.commands import audit as command

    path = tmp_path / name
    shutil.copy(SCRIPTS / name, path)
    sink = io.StringIO()
    namespace = argparse.Namespace(**{"batch_size": None, "policy": "mixed_bfloat16", "jit": False, "script_args": [],
                                      "workload": str(path), **args})
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert command.main(namespace, protocol.EventWriter(sinks=[sink])) == 0
    finally:
        os.chdir(cwd)
    doc = next(json.loads(line)["document"] for line in sink.getvalue().splitlines() if '"result"' in line)
    found: dict[str, list[dict]] = {}
    for f in doc["findings"]:
        found.setdefault(f["code"], []).append(f)
    return found


def code_of(fix: str) -> str:
    """A fix's code lines (its comments dropped), which must parse."""
    code = "\n".join(line for line in fix.splitlines() if line.strip() and not line.lstrip().startswith("#"))
    compile(code, "fix", "exec")
    return code


def test_a_regression_head_is_fixed_with_float32_never_a_softmax(tmp_path):
    [head] = audit(tmp_path, "regression_head.py")[HEAD_NOT_FLOAT32]
    assert head["fix"].startswith('# regression_head.py line 11:\noutputs = keras.layers.Dense(1, dtype="float32")(x)')
    assert "softmax" not in head["fix"] and "a regression output: keep its values" in head["fix"]
    assert 'Activation("linear", dtype="float32")' in head["fix"]
    code_of(head["fix"])


def test_a_sigmoid_head_keeps_its_sigmoid(tmp_path):
    [head] = audit(tmp_path, "sigmoid_head.py")[HEAD_NOT_FLOAT32]
    assert head["fix"].startswith('# sigmoid_head.py line 12:\nkeras.layers.Dense(1, activation="sigmoid", '
                                  'dtype="float32")])')
    assert "softmax" not in head["fix"] and 'Activation("sigmoid", dtype="float32")' in head["fix"]


def test_numpy_arrays_get_their_batch_at_the_constant_and_their_own_names(tmp_path):
    """Issue 43: BATCH = 100 was told `train_ds = train_ds.batch(104)` before fit(), for arrays."""
    found = audit(tmp_path, "constants_numpy.py", jit=True)
    [batch] = found[BATCH_NOT_MULTIPLE_OF_8]
    assert batch["fix"].startswith("# constants_numpy.py line 6:\nBATCH = 104  # the batch size")
    [partial] = found[PARTIAL_LAST_BATCH]
    assert "n = len(x_all) // 100 * 100" in partial["fix"]
    assert "model.fit(x_all[:n], labels[:n], batch_size=BATCH, epochs=EPOCHS, validation_split=0.2)" in partial["fix"]
    code_of(partial["fix"])
    assert ".batch(" not in partial["fix"] + batch["fix"] and "x_train" not in partial["fix"] + batch["fix"]


def test_a_pipeline_gets_drop_remainder_on_its_own_batch_call_and_its_argparse_default(tmp_path):
    found = audit(tmp_path, "argparse_tfdata.py", jit=True)
    [batch] = found[BATCH_NOT_MULTIPLE_OF_8]
    assert batch["fix"].startswith('# argparse_tfdata.py line 28:\nparser.add_argument("--batch-size", type=int, '
                                   'default=56)')
    [partial] = found[PARTIAL_LAST_BATCH]
    assert partial["fix"].startswith("# argparse_tfdata.py line 16:\n"
                                     "return ds.batch(batch_size, drop_remainder=True).prefetch(tf.data.AUTOTUNE)")
    assert "train_ds" not in partial["fix"]  # never a new .batch() of the already batched dataset


def test_a_model_with_its_own_train_step_is_never_told_to_pass_labels(tmp_path):
    """Issue 43: a keras-io VAE (fit(x), its own train_step(self, data)) was told "pass fit(x, y, ...)", which
    would break its train_step."""
    from trainer_backend.workload import load_workload

    path = tmp_path / "vae.py"
    path.write_text('''
import numpy as np
import keras


class AutoEncoder(keras.Model):
    def __init__(self):
        super().__init__()
        self.encode = keras.layers.Dense(2)
        self.decode = keras.layers.Dense(4)

    def call(self, x):
        return self.decode(self.encode(x))

    def train_step(self, data):
        return {"loss": 0.0}


model = AutoEncoder()
model.compile(optimizer="adam")
model.fit(np.zeros((64, 4), "float32"), epochs=1)
''')
    workload = load_workload(str(path))
    workload.build_model()
    train_ds, _ = workload.make_datasets(16)  # measured as it trains: features alone (issue 44), nothing to fix
    assert not isinstance(train_ds.element_spec, tuple)


def test_arrays_never_get_a_tf_data_fix_and_names_come_from_the_script():
    """RECOMPILE_STORM and PARTIAL_LAST_BATCH write the partial batch's fix for the data the script has: a script
    that fits arrays has no train_ds (issue 43)."""
    path = SCRIPTS / "custom_train_step.py"
    facts = fit_facts(path)
    shape = WorkloadShape(SCRIPT, NUMPY, fit_where="custom_train_step.py line 37", path=str(path), given=facts)
    fix = partial_batch_fix(64, shape)
    assert "n = len(X) // 64 * 64" in fix and "model.fit(X[:n], Y[:n], epochs=2, batch_size=64)" in fix
    assert "train_ds" not in fix and ".batch(" not in fix
    code_of(fix)
    template = partial_batch_fix(64, WorkloadShape(SCRIPT, TF_DATA))  # nothing read: the place, not a variable
    assert template.startswith("# add drop_remainder=True to the batch() call that batches the training data")
