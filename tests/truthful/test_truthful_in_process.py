"""Scripts written the way keras-io examples are, in this process: the script's own Keras backend, the audit's
integer-input and metric checks, the training-failure diagnosis, and fixes written in the workload's terms."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
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
