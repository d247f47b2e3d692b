"""Script mode in this process: which files are scripts, the data a fit() call becomes, the options
after `--`, and re-compiling with the user's own objects."""

from __future__ import annotations

import numpy as np
import pytest
from script_helpers import SCRIPTS

from tfturbo.cli_args import build_backend_parser, parse_args, parse_run_settings, run_argv, settings_from_args
from tfturbo.commands.backend import backend_argv
from tfturbo.errors import WorkloadError
from tfturbo.settings import RunSettings
from tfturbo.workload_kind import builtin_files, defines_contract, is_script
from trainer_backend.script import ScriptWorkload
from trainer_backend.workload import BUILTIN_DIR, builtin_names, load_workload


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


# ------------------------------------------------------------------ scripts and contract files

def test_a_file_with_both_functions_is_a_contract_and_anything_else_a_script(tmp_path):
    assert defines_contract(BUILTIN_DIR / "mlp.py")
    assert not defines_contract(SCRIPTS / "mlp_top_level.py")
    assert not defines_contract(_write(tmp_path, "half.py", "def build_model():\n    pass\n"))
    assert defines_contract(_write(tmp_path, "imported.py", "from helpers import build_model, make_datasets\n"))
    assert isinstance(load_workload(str(SCRIPTS / "never_fits.py")), ScriptWorkload)  # loading runs nothing


def test_the_cores_script_rule_is_the_backends_for_built_ins_and_files(tmp_path):
    """One `is_script` (tfturbo.workload_kind) for the core and the GUI: a built-in is judged by its file, as
    the backend loads it (builtin:train-script runs top-level), without importing the backend."""
    assert sorted(n.removeprefix("builtin:") for n in builtin_files()) == builtin_names()
    for name in builtin_names():
        spec = f"builtin:{name}"
        assert is_script(spec) == isinstance(load_workload(spec), ScriptWorkload), spec
    assert is_script("builtin:train-script") and not is_script("builtin:mlp")
    assert is_script(str(SCRIPTS / "mlp_top_level.py")) and not is_script(str(BUILTIN_DIR / "mlp.py"))
    assert not is_script("builtin:no-such") and not is_script(str(tmp_path / "missing.py"))


def test_script_options_are_refused_for_a_contract_file():
    with pytest.raises(WorkloadError, match="options after `--` are for a training script"):
        load_workload("builtin:mlp", ["--epochs", "2"])


# ------------------------------------------------------------------ the options after `--`

def test_options_after_the_separator_are_the_scripts_even_when_they_look_like_ours():
    args = parse_args(build_backend_parser("b"), ["run", "train.py", "--out", "R", "--steps", "7", "--",
                                                  "--steps", "3", "--json", "--", "x"])
    assert args.steps == 7 and not args.json
    settings = settings_from_args(args)
    assert settings.script_args == ["--steps", "3", "--json", "--", "x"]
    assert run_argv(settings, "R")[-6:] == ["--", "--steps", "3", "--json", "--", "x"]
    assert parse_run_settings(run_argv(settings, "R")) == settings  # the tune ladder's round trip


def test_the_cli_strips_only_its_own_json_before_handing_over():
    assert backend_argv(["t.py", "--json", "--out", "R", "--", "--json"]) == ["t.py", "--out", "R", "--", "--json"]


def test_a_command_without_workload_refuses_script_options(capsys):
    with pytest.raises(SystemExit):
        parse_args(build_backend_parser("b"), ["env", "--", "--epochs", "2"])
    assert "takes no WORKLOAD" in capsys.readouterr().err


def test_settings_round_trip_keeps_script_args():
    s = RunSettings("t.py", script_args=("--lr", "0.1"))
    assert s.script_args == ["--lr", "0.1"]
    assert RunSettings.from_dict(s.to_dict()) == s


# ------------------------------------------------------------------ what a fit() call becomes

SPLIT_SCRIPT = """
import numpy as np, keras
x = np.arange(100, dtype="float32").reshape(100, 1)
y = np.arange(100, dtype="int32")
model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(2)])
model.compile(optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
model.fit(x, y, batch_size=BATCH, validation_split=0.2, class_weight={0: 3.0})
raise SystemExit("never reached")
"""


def _script(tmp_path, batch=16):
    workload = load_workload(str(_write(tmp_path, "split.py", SPLIT_SCRIPT.replace("BATCH", str(batch)))))
    workload.build_model()
    return workload


def test_validation_split_holds_out_the_last_examples_whatever_the_trial_batch_size(tmp_path):
    workload = _script(tmp_path)
    assert workload.default_batch_size == 16
    for batch in (8, 16, 64):
        train, val = workload.make_datasets(batch)
        val_y = np.concatenate([y.numpy() for _x, y, *_ in val])
        assert val_y.tolist() == list(range(80, 100))  # Keras' split: the last 20%, in order
        assert [int(x.shape[0]) for x, *_ in val] == [16, 4]  # the script's batch size, not the trial's
        train_y = np.concatenate([y.numpy() for _x, y, *_ in train])
        assert sorted(train_y.tolist()) == list(range(80)) and int(next(iter(train))[0].shape[0]) == batch


def test_class_weight_becomes_sample_weights(tmp_path):
    train, _val = _script(tmp_path).make_datasets(80)
    x, y, w = next(iter(train))
    np.testing.assert_array_equal(w.numpy(), np.where(y.numpy() == 0, 3.0, 1.0))


def test_a_dataset_from_the_script_is_rebatched_for_another_batch_size(tmp_path):
    script = _write(tmp_path, "ds.py", """
import numpy as np, tensorflow as tf, keras
ds = tf.data.Dataset.from_tensor_slices((np.zeros((50, 3), "float32"), np.zeros(50, "int32"))).batch(10)
model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
model.fit(ds, validation_data=ds, epochs=3)
""")
    workload = load_workload(str(script))
    workload.build_model()
    assert workload.default_batch_size == 10
    train, val = workload.make_datasets(25)
    assert [int(x.shape[0]) for x, _y in train] == [25, 25]
    assert [int(x.shape[0]) for x, _y in val] == [10] * 5


def test_a_script_cannot_swallow_the_stop_or_change_the_policy(tmp_path):
    import keras

    script = _write(tmp_path, "sneaky.py", """
import sys, numpy as np, keras
keras.mixed_precision.set_global_policy("mixed_float16")
model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
model.compile(optimizer="sgd", loss="mse")
try:
    model.fit(np.zeros((8, 3)), np.zeros((8, 2)), batch_size=4)
except Exception:
    pass
open(sys.argv[1], "w").write("ran after fit")
""")
    keras.mixed_precision.set_global_policy("float32")
    workload = load_workload(str(script), [str(tmp_path / "after.txt")])
    model = workload.build_model()
    assert model.layers[0].dtype_policy.name == "float32"  # the run's policy held
    assert not (tmp_path / "after.txt").exists()
    assert keras.Model.fit.__name__ == "fit" and keras.Model.fit.__qualname__.startswith(("Trainer", "TensorFlow"))


# ------------------------------------------------------------------ re-compiling keeps the user's objects

def test_recompile_keeps_the_optimizer_loss_and_metric_objects():
    import keras

    from trainer_backend.commands.run import recompile

    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
    optimizer = keras.optimizers.Adam(0.01)
    metric = keras.metrics.SparseCategoricalAccuracy(name="acc")
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    model.compile(optimizer=optimizer, loss=loss, metrics=[metric])
    model.fit(np.zeros((8, 4), "float32"), np.zeros(8, "int32"), verbose=0)  # the optimizer is built
    rate, schedule = recompile(model, RunSettings("w", jit_compile=True, lr_scale=2.0))
    assert rate == pytest.approx(0.02) and schedule is None  # a constant rate
    assert model.optimizer is optimizer and model.loss is loss and model.jit_compile
    logs = model.fit(np.zeros((8, 4), "float32"), np.zeros(8, "int32"), verbose=0).history
    assert "acc" in logs


def test_an_input_bound_scripts_fix_is_written_for_its_numpy_fit_call(tmp_path):
    """Issue 22 walk: INPUT_MODERATELY_BOUND gave a script that fits NumPy arrays a tf.data template of TFRecord
    files. The fix is the change from its own fit(x, y, batch_size=…) call, with its validation_split kept."""
    from trainer_backend.diagnostics.advice import shape_of
    from trainer_backend.diagnostics.input_probe import decide, input_bound_finding

    workload = _script(tmp_path, batch=50)
    shape = shape_of(workload, workload.call.model)
    moderate = decide([50.0] * 5, [80.0] * 5, [90.0] * 5)
    finding = input_bound_finding(moderate, None, shape, 50)
    assert finding.code == "INPUT_MODERATELY_BOUND" and finding.where == "the training data given to fit() at split.py line 7"
    fix = finding.fix.splitlines()
    # the script's own call and names (issue 43: it quoted "model.fit(x_train, y_train, …)" for a line reading
    # model.fit(x, y, …), and its code used the undefined x_train)
    assert fix[0] == "# was at split.py line 7: model.fit(x, y, batch_size=50, validation_split=0.2, " \
                     "class_weight={0: 3.0})"
    assert "train_ds = (tf.data.Dataset.from_tensor_slices((x, y))" in fix and "x_train" not in finding.fix
    assert "    .batch(50)" in fix and any(".prefetch(tf.data.AUTOTUNE))" in line for line in fix)
    assert "x_val, y_val = x[-n_val:], y[-n_val:]" in fix  # fit() cannot split a dataset
    assert any(line.startswith("model.fit(train_ds, validation_data=(x_val, y_val)") for line in fix)
    assert compile("\n".join(line for line in fix if not line.startswith("#")), "fix", "exec")  # it parses
    assert not any(word in finding.fix for word in ("TFRecordDataset", "interleave", "files", "make_datasets"))
    builtin = input_bound_finding(moderate, None).fix  # a contract's tf.data pipeline: the tf.data template
    assert "train_ds = (files" in builtin and "from_tensor_slices" not in builtin


def test_the_optimizer_a_script_names_by_string_is_recorded_with_keras_default_rate(tmp_path):
    """What the recommended code's learning-rate line is written from (issue 22 walk: optimizer="adam")."""
    import inspect

    import keras

    from trainer_backend.optimizer_code import find_optimizers, recording_compile

    workload = load_workload(str(_write(tmp_path, "split.py", SPLIT_SCRIPT.replace("BATCH", "16"))))
    with recording_compile():  # as `run` builds the model
        workload.build_model()
    code = find_optimizers(workload.call.model).summary_fields()["optimizer"]
    default = inspect.signature(keras.optimizers.SGD.__init__).parameters["learning_rate"].default
    assert code == {"class": "SGD", "module": "keras.optimizers", "given_as": "sgd", "learning_rate": pytest.approx(default),
                    "default_learning_rate": default, "schedule": None, "schedule_config": None}
    assert keras.Model.compile.__qualname__ == "Trainer.compile"  # Keras' own again


# ------------------------------------------------------------------ several fit() calls, a loss of the model's own

def test_a_distiller_trained_after_its_teacher_is_measured_at_the_fit_call_chosen():
    """keras-io's distillation: the teacher's fit() first, then the Distiller's, whose loss lives in its own
    compute_loss (its compile() takes no loss=; it was refused). --fit-call 2 measures the Distiller's, the
    teacher's fit() returning untrained; every result names the call measured."""
    from tfturbo.workload_kind import measured_fit_text

    script = str(SCRIPTS / "distiller_two_fits.py")
    first = load_workload(script)
    assert type(first.build_model()).__name__ == "Sequential"  # the default: the script's first fit()
    assert first.describe()["fit"]["model_name"] == "teacher"
    chosen = load_workload(script, fit_call=2)
    model = chosen.build_model()
    assert type(model).__name__ == "Distiller" and model.loss is None
    assert not model.teacher.optimizer.built  # the teacher's fit() did not train
    fit = chosen.describe()["fit"]
    assert (fit["call"], fit["line"], fit["model"], fit["model_name"]) == (2, 58, "Distiller", "distiller")
    assert [c["line"] for c in fit["calls_in_source"]] == [49, 58]
    assert fit["calls_in_source"][0]["code"].startswith("teacher.fit(x_train, y_train")
    assert measured_fit_text(chosen.describe()) == (
        "the 2nd fit() call of distiller_two_fits.py (line 58, Distiller 'distiller'); the script calls .fit( at "
        "lines 49 and 58: --fit-call N measures the Nth")
    train, val = chosen.make_datasets(16)
    assert val is not None and int(next(iter(train))[0].shape[0]) == 16
    with pytest.raises(WorkloadError, match=r"--fit-call 3 asks for the script's 3rd fit\(\) call, and it made 2 "
                                             r"\(line 49, line 58\).*pass --fit-call 2 or less"):
        load_workload(script, fit_call=3).build_model()


def test_fit_call_is_refused_for_a_contract_file_and_round_trips_as_a_run_setting():
    with pytest.raises(WorkloadError, match="--fit-call chooses among a training script's fit"):
        load_workload("builtin:mlp", fit_call=2)
    settings = parse_run_settings(["train.py", "--out", "R", "--fit-call", "2"])
    assert settings.fit_call == 2 and "--fit-call" in run_argv(settings, "R")
    assert RunSettings.from_dict(settings.to_dict()).fit_call == 2
    assert RunSettings.from_dict({"workload": "old.py"}).fit_call is None  # a run.yaml from before: the first
