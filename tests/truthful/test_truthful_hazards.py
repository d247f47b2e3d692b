"""16-bit hazards outside fit(), in this process (issue 44): an error only the policy under test causes is a finding
with its cause, place and fix, never "fix the script"; the policy reaches the model where the script builds it, so
preprocessing adapted in tf.data before it stays float32; a schedule is scaled and recorded as a schedule."""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path

import pytest

from tfturbo import findings as F
from tfturbo import protocol
from tfturbo.learning_rate import learning_rate_text
from tfturbo.settings import RunSettings

from tests.truthful.test_truthful_in_process import _audit

keras = pytest.importorskip("keras")

SCRIPTS = Path(__file__).resolve().parent / "scripts"
VAE = Path(__file__).resolve().parents[1] / "script" / "scripts" / "vae_fit_x.py"


@pytest.fixture(autouse=True)
def _float32_after():
    yield
    keras.mixed_precision.set_global_policy("float32")


def _copy(tmp_path: Path, source: Path) -> Path:
    shutil.copy(source, tmp_path / source.name)
    return tmp_path / source.name


def _build(path: Path, policy: str, *script_args: str):
    """The script's model built as `run` builds it: the policy under test set first, then the script runs."""
    from trainer_backend.workload import load_workload

    workload = load_workload(str(path), list(script_args))
    keras.mixed_precision.set_global_policy(policy)
    cwd = os.getcwd()
    os.chdir(path.parent)
    try:
        return workload, workload.build_model()
    finally:
        os.chdir(cwd)


def test_a_layer_that_adds_float32_noise_is_a_finding_with_its_cause_and_fix(tmp_path):
    from trainer_backend.diagnostics.sixteen_bit_hazard import SixteenBitFailure

    script = _copy(tmp_path, VAE)
    with pytest.raises(SixteenBitFailure) as caught:  # a failed configuration, not a WorkloadError (exit 2)
        _build(script, "mixed_bfloat16")
    finding = caught.value.finding
    assert finding.code == F.DTYPE_MISMATCH_16BIT and finding.where == "Sampling (vae_fit_x.py line 29)"
    assert "got a bfloat16 and a float32 tensor under mixed_bfloat16" in finding.message
    assert "epsilon is float32 while z_mean is bfloat16" in finding.message
    assert "The 16-bit policy tfturbo measures is the cause" in finding.message
    assert finding.fix.startswith("make epsilon in z_mean's dtype: pass dtype=z_mean.dtype to random.normal(...) "
                                  "at line 28")
    assert "\x1b" not in finding.message + finding.fix
    _, model = _build(script, "float32")  # as written, it builds
    assert isinstance(model, keras.Model)


def test_the_audit_reports_the_hazard_and_audits_the_rest_under_float32(tmp_path):
    doc = _audit(_copy(tmp_path, VAE), policy="mixed_bfloat16")
    [hazard] = [f for f in doc["findings"] if f["code"] == F.DTYPE_MISMATCH_16BIT]
    assert "dtype=z_mean.dtype" in hazard["fix"]
    assert doc["built_under"] == "float32" and doc["own_length"]["steps"] == 60  # 3 epochs of 20 batches
    assert doc["dataset"]["element_spec"] == [{"name": "x", "shape": [None, 16], "dtype": "float32"}]  # no labels


def test_the_same_hazard_inside_fit_is_read_the_same_way():
    """A subclassed model builds its layers in fit(): the error comes from the training step."""
    import numpy as np

    from trainer_backend.diagnostics.training_failure import diagnose

    class Noisy(keras.layers.Layer):
        def call(self, x):
            noise = keras.random.normal(keras.ops.shape(x))
            return x + noise

    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = keras.layers.Dense(4)
            self.noisy = Noisy()

        def call(self, x):
            return self.noisy(self.dense(x))

    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    model = Net()
    model.compile("adam", "mse")
    x = np.zeros((8, 4), "float32")
    with pytest.raises(Exception) as caught:
        model.fit(x, x, epochs=1, verbose=0)
    finding, fix = diagnose(caught.value, model, RunSettings("w.py", policy="mixed_bfloat16"))
    assert finding.code == F.DTYPE_MISMATCH_16BIT and finding.data["from"] == "training error"
    assert "noise is float32 while x is bfloat16" in finding.message and "dtype=x.dtype" in fix


def test_preprocessing_adapted_in_tf_data_is_not_forced_to_16bit(tmp_path):
    """keras-io's structured-data example adapts its preprocessing on tf.data before the model: under a global
    bfloat16 policy set before the script, adapt() fails ("cannot compute AddV2 ... bfloat16")."""
    script = _copy(tmp_path, SCRIPTS / "preprocessing_in_tf_data.py")
    workload, model = _build(script, "mixed_bfloat16")
    dense = [layer for layer in model.layers if isinstance(layer, keras.layers.Dense)]
    assert [layer.compute_dtype for layer in dense] == ["bfloat16", "float32"]  # the script's float32 head kept
    assert keras.mixed_precision.global_policy().name == "mixed_bfloat16"  # and for what fit() builds later
    train, _ = workload.make_datasets(32)
    assert next(iter(train))[0].dtype.name == "float32"  # normalised in float32, in tf.data


def test_a_script_that_sets_its_own_policy_gets_the_run_policy_at_that_line(tmp_path, capfd):
    script = _copy(tmp_path, SCRIPTS / "preprocessing_in_tf_data.py")
    _, model = _build(script, "float32", "--own-policy")  # the script asks for mixed_bfloat16 after adapt()
    assert model.layers[1].compute_dtype == "float32"  # the run measures float32 from the script's own line
    assert "set_global_policy('mixed_bfloat16') (preprocessing_in_tf_data.py line 28) sets float32" in \
        capfd.readouterr().err
    _, model = _build(script, "mixed_bfloat16", "--own-policy")  # as written
    assert model.layers[1].compute_dtype == "bfloat16"


def test_a_schedule_is_scaled_and_recorded_as_a_schedule(tmp_path):
    from trainer_backend.commands.run import prepare

    script = _copy(tmp_path, SCRIPTS / "preprocessing_in_tf_data.py")
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        job = prepare(RunSettings(str(script), steps=20, lr_scale=2.0), protocol.EventWriter(sinks=[io.StringIO()]))
    finally:
        os.chdir(cwd)
    written = job.optimizers.summary_fields()["optimizer"]  # the record as the workload wrote it
    assert written["schedule"] == "ExponentialDecay"
    assert written["schedule_config"]["initial_learning_rate"] == pytest.approx(0.001)  # as written
    assert job.learning_rate == pytest.approx(0.002)
    schedule = job.learning_rate_schedule
    assert schedule["class"] == "ExponentialDecay" and schedule["config"]["decay_steps"] == 100
    shown = learning_rate_text({"learning_rate": job.learning_rate, "learning_rate_schedule": schedule})
    assert shown.startswith("ExponentialDecay(initial_learning_rate=0.002, decay_steps=100, decay_rate=0.9")
    assert float(job.model.optimizer.learning_rate) == pytest.approx(0.002)  # the optimizer trains with it
