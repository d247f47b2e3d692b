"""An unchanged training script under `tfturbo run | audit | tune` (GitHub issue 11), through the real CLI."""

from __future__ import annotations

import shutil

import pytest
import yaml

from tests.conftest import run_cli
from tfturbo.run_summary import RunSummary
from tfturbo import findings as F

from script_helpers import SCRIPTS, cli_json, script_in_folder


def _files(folder):
    return sorted(p.name for p in folder.iterdir())


# ------------------------------------------------------------------ the top-level MLP script

def test_run_measures_the_first_fit_with_its_validation_split(mlp_script_run):
    doc, out = mlp_script_run
    assert doc["status"] == "completed" and doc["steps_completed"] == 40
    assert doc["steps_per_s"] > 0
    assert {"val_loss", "val_accuracy"} <= set(doc["metrics"])  # validation_split became a held-out set
    assert doc["settings"]["batch_size"] == 32  # the script's batch_size is the default
    log = (out / "backend.log").read_text()
    assert "measured the fit() call of mlp_top_level.py (line 17, Sequential 'sequential'); the rest of the script " \
           "did not run" in log
    assert doc["workload"]["fit"]["line"] == 17 and doc["workload"]["fit"]["calls_in_source"][0]["line"] == 17
    assert "callbacks were not run (EarlyStopping)" in log


def test_code_after_fit_never_runs_and_nothing_is_saved(mlp_script_run, mlp_script):
    _doc, out = mlp_script_run
    assert set(_files(mlp_script.parent)) <= {"mlp_top_level.py", "run"}
    assert not list(mlp_script.parent.rglob("mlp_top_level_saved.keras"))
    assert "evaluate" not in (out / "backend.log").read_text()


def test_audit_sees_the_model_the_script_compiled(mlp_script_audit):
    codes = [f["code"] for f in mlp_script_audit["findings"]]
    assert F.HEAD_NOT_FLOAT32 in codes and F.DIM_NOT_MULTIPLE_OF_8 in codes
    assert mlp_script_audit["batch_size"] == 32


# ------------------------------------------------------------------ main() + argparse, custom layers

def test_options_after_the_separator_reach_the_script_and_are_recorded(text_script_run):
    doc, out = text_script_run
    assert doc["status"] == "completed"
    assert doc["settings"]["script_args"] == ["--epochs", "2", "--length", "48"]
    run_yaml = yaml.safe_load((out / "run.yaml").read_text())
    assert run_yaml["settings"]["script_args"] == ["--epochs", "2", "--length", "48"]
    assert run_yaml["command_line"].endswith("-- --epochs 2 --length 48")
    checkpoint = yaml.safe_load((out / "checkpoint" / "tfturbo-settings.yaml").read_text())
    assert checkpoint["script_args"] == ["--epochs", "2", "--length", "48"]
    log = (out / "backend.log").read_text()
    assert "fit(epochs=2) gives way to --steps" in log  # the script parsed --epochs 2


def test_fix_head_works_on_custom_layers_without_get_config(text_script_run):
    doc, out = text_script_run
    assert F.FIX_NOT_APPLIED not in [f["code"] for f in doc["findings"]]
    assert "--fix-head: dense_1 now computes in float32" in (out / "backend.log").read_text()
    assert doc["settings"]["fix_head"] is True and doc["settings"]["policy"] == "mixed_bfloat16"


def test_tune_measures_every_rung_of_a_script(text_script_tune):
    """One tune of a script serves the tune tests (a study is a dozen backend processes); the top-level script
    above runs through the same script runner."""
    ladder = text_script_tune[0]["ladder"]
    measured = [rung for rung in ladder if rung.get("status") != "skipped"]
    assert len(measured) >= 2  # baseline and the 16-bit rung (the stages the test asks for)
    for rung in measured:
        assert rung.get("status") == "completed", rung
        assert rung.get("steps_per_s"), rung


def test_tune_measures_the_16bit_rung_of_a_script_with_custom_layers(text_script_tune):
    doc, out = text_script_tune
    sixteen = [r for r in doc["ladder"] if r["settings"]["policy"] == "mixed_bfloat16"]
    assert sixteen and all(r.get("status") == "completed" and r.get("steps_per_s") for r in sixteen), sixteen
    assert all(r["settings"]["script_args"] == ["--length", "48"] for r in doc["ladder"])
    assert any(r["settings"]["fix_head"] for r in sixteen)  # the audit's HEAD_NOT_FLOAT32, fixed automatically


def test_the_cli_shows_the_script_options(text_script_run):
    from tfturbo.console import render_run_summary

    assert "script opts   --epochs 2 --length 48" in render_run_summary(RunSummary.from_dict(text_script_run[0]))


# ------------------------------------------------------------------ several fit() calls, a loss of the model's own

def test_a_distiller_after_its_teacher_is_measured_as_written_at_the_fit_call_chosen(tmp_path_factory):
    """keras-io's distillation: `run` stopped with "compiled without a loss"; now --fit-call 2 measures the
    Distiller's fit() (its compute_loss, the teacher's forward pass counted in its FLOPs) and every result
    names the call measured: summary.json, run.yaml, the run's output."""
    from tfturbo.console import render_run_summary

    script = script_in_folder(tmp_path_factory, "distiller_two_fits.py")
    doc = cli_json("run", script.name, "--out", "run", "--steps", "20", "--fit-call", "2", cwd=script.parent)
    assert doc["status"] == "completed" and doc["validation"]
    fit = doc["workload"]["fit"]
    assert (fit["call"], fit["line"], fit["model"], fit["model_name"]) == (2, 58, "Distiller", "distiller")
    run_yaml = yaml.safe_load((script.parent / "run" / "run.yaml").read_text())
    assert run_yaml["workload"]["fit"]["line"] == 58 and run_yaml["settings"]["fit_call"] == 2
    assert "--fit-call 2" in run_yaml["command_line"]
    assert "measured      the 2nd fit() call of distiller_two_fits.py (line 58, Distiller 'distiller'); the script " \
           "calls .fit( at lines 49 and 58: --fit-call N measures the Nth" in render_run_summary(RunSummary.from_dict(doc))
    student = 2 * 32 * (32 * 16 + 16 * 10) * 2  # forward and weight gradients, less than the step counted
    assert doc["flops_per_step"] > 2 * 32 * (32 * 256 + 256 * 10) + student  # the teacher's forward pass is in it
    [optimizer] = doc["optimizers"]
    assert optimizer["attribute"] == "optimizer" and optimizer["class"] == "Adam"
    log = (script.parent / "run" / "backend.log").read_text()
    assert "skipped the script's 1st fit() call (distiller_two_fits.py line 49, Sequential 'teacher') without " \
           "training" in log


# ------------------------------------------------------------------ a pre-built subclassed model

@pytest.mark.parametrize("jit", ["--no-jit", "--jit"])
def test_prebuilt_subclassed_model_with_its_own_train_step_trains(jit, tmp_path_factory):
    script = script_in_folder(tmp_path_factory, "subclassed_custom_step.py")
    doc = cli_json("run", script.name, "--out", "run", "--steps", "40", jit, cwd=script.parent)
    assert doc["status"] == "completed"
    assert doc["settings"]["jit_compile"] is (jit == "--jit")
    assert doc["validation"] and doc["metrics"]["val_accuracy"] > 0.8  # the user's own optimizer learns


# ------------------------------------------------------------------ clear failures

@pytest.mark.parametrize("name, says", [
    ("never_fits.py", "never_fits.py finished without calling model.fit(); tfturbo measures the first fit() call"),
    ("missing_data.py", "raised FileNotFoundError: [Errno 2] No such file or directory: "
                        "'no_such_training_data.npz' (missing_data.py line 4) before calling model.fit()"),
    ("uncompiled.py", "model.fit() at uncompiled.py line 5 was called on a model that is not compiled"),
])
def test_a_script_that_cannot_be_measured_exits_2_with_one_line(name, says, tmp_path):
    shutil.copy(SCRIPTS / name, tmp_path / name)
    proc = run_cli("run", name, "--out", "run", "--steps", "5", cwd=tmp_path)
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if line.strip() and not line.startswith("·")]
    assert len(lines) == 1 and says in lines[0], proc.stderr
    assert _files(tmp_path) == [name]  # no run directory, nothing half-written


def test_bad_script_options_are_quoted_from_argparse(tmp_path):
    shutil.copy(SCRIPTS / "text_main_argparse.py", tmp_path / "train.py")
    proc = run_cli("audit", "train.py", "--json", "--", "--bogus", cwd=tmp_path)
    assert proc.returncode == 2
    assert "exited with sys.exit(2) before calling model.fit(): train.py: error: unrecognized arguments: --bogus" \
        in proc.stderr


def test_a_fix_that_cannot_be_applied_is_reported_and_the_run_goes_on(tmp_path_factory):
    script = script_in_folder(tmp_path_factory, "head_in_call.py")
    doc = cli_json("run", script.name, "--out", "run", "--steps", "20", "--policy", "mixed_bfloat16",
                   "--fix-head", cwd=script.parent)
    assert doc["status"] == "completed"
    [finding] = [f for f in doc["findings"] if f["code"] == F.FIX_NOT_APPLIED]
    assert finding["message"].startswith("fix not applied: --fix-head: the model still returns bfloat16 outputs")
    assert 'dtype="float32"' in finding["fix"]
    assert "fix not applied: --fix-head" in (script.parent / "run" / "backend.log").read_text()
