"""The baseline is the script as written (issue 38): a script that compiles with jit_compile=True and
steps_per_execution=4 is measured at exactly that by `tfturbo run`, and `tfturbo tune` of it has that as its
baseline, measures XLA off and one step per call as the changes, and its code to apply adds neither; the
script's callbacks that a measured run leaves out are a finding; its CosineDecay schedule is recorded and shown
as a schedule. One real `run` and one short real `tune`, shared by the tests of each."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from script_helpers import script_in_folder

from tests.conftest import run_cli
from tfturbo import findings as F
from tfturbo.compare import compare_runs, fmt_settings_record, to_csv
from tfturbo.learning_rate import learning_rate_text
from tfturbo.runfiles import RUN_YAML, load_run

pytestmark = pytest.mark.slow
SCRIPT = "compiled_own.py"
SCRIPTS_DIR = Path(__file__).resolve().parents[1] / "truthful" / "scripts"


@pytest.fixture(scope="module")
def own_run(tmp_path_factory):
    """`tfturbo run compiled_own.py` with no option for policy, XLA or steps per call: text output and run dir."""
    script = script_in_folder(tmp_path_factory, SCRIPT)
    out = script.parent / "run"
    proc = run_cli("run", SCRIPT, "--out", str(out), "--steps", "24", "--profile", "0:0", timeout=400,
                   cwd=script.parent)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout, out


def test_a_run_measures_the_xla_and_steps_per_call_the_script_compiles_with(own_run):
    text, out = own_run
    summary = json.loads((out / "summary.json").read_text())
    ran = summary["settings"]
    assert (ran["policy"], ran["jit_compile"], ran["steps_per_execution"]) == ("float32", True, 4)
    assert summary["xla_active"] is True  # Keras really compiled the step with XLA
    written = summary["as_written"]
    assert (written["jit_compile"], written["jit_compile_given"], written["steps_per_execution"]) == (True, True, 4)
    assert yaml.safe_load((out / RUN_YAML).read_text())["as_written"]["steps_per_execution"] == 4
    assert "settings      float32 + XLA, batch 32, 4 steps per call" in text
    assert "as written    float32, XLA on (compile(jit_compile=True)), 4 steps per call" in text


def test_the_callbacks_a_run_leaves_out_are_a_finding_shown_by_run(own_run):
    text, out = own_run
    summary = json.loads((out / "summary.json").read_text())
    found = [f for f in summary["findings"] if f["code"] == F.CALLBACKS_NOT_RUN]
    assert len(found) == 1 and found[0]["severity"] == F.WARNING
    assert found[0]["data"]["callbacks"] == ["EarlyStopping", "ModelCheckpoint", "ReduceLROnPlateau"]
    assert "ReduceLROnPlateau lowers the learning rate" in found[0]["message"]  # what it means for the comparison
    assert "the speed comparison stands" in found[0]["message"]
    assert "[WARNING] CALLBACKS_NOT_RUN" in text
    assert "not run       the script's callbacks EarlyStopping, ModelCheckpoint, ReduceLROnPlateau" in text
    assert not (out.parent / "best.keras").exists()  # the script's ModelCheckpoint really did not run


def test_a_cosine_schedule_is_recorded_and_shown_as_a_schedule(own_run):
    text, out = own_run
    summary = json.loads((out / "summary.json").read_text())
    assert summary["as_written"]["learning_rate_schedule"]["class"] == "CosineDecay"
    assert summary["as_written"]["learning_rate_schedule"]["config"]["decay_steps"] == 1000
    shown = learning_rate_text(summary)
    assert shown.startswith("CosineDecay(initial_learning_rate=0.001, decay_steps=1000")
    assert "Adam at CosineDecay(initial_learning_rate=0.001" in text  # `run`'s as-written line
    rows = compare_runs([load_run(out)])
    assert rows[0].learning_rate_schedule == shown and shown in to_csv(rows)  # the CSV
    assert f"learning rate {shown}" in fmt_settings_record(rows[0].recorded_settings)  # the record


@pytest.fixture(scope="module")
def own_study(tmp_path_factory):
    """`tfturbo tune compiled_own.py` of the XLA and steps-per-call stages, two pairs a trial."""
    script = script_in_folder(tmp_path_factory, SCRIPT)
    out = script.parent / "study"
    proc = run_cli("tune", SCRIPT, "--out", str(out), "--steps", "40", "--stages", "xla,steps_per_execution",
                   "--steady-s", "0", "--min-replicates", "2", "--max-replicates", "2", "--no-report", timeout=900,
                   cwd=script.parent)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return script, out, proc.stdout, yaml.safe_load((out / "study.yaml").read_text())


def test_tune_s_baseline_is_the_script_as_written(own_study):
    _script, _out, text, study = own_study
    base = study["ladder"][0]
    assert base["rung"] == "baseline"
    assert (base["settings"]["jit_compile"], base["settings"]["steps_per_execution"]) == (True, 4)
    assert study["as_written"]["jit_compile"] is True and study["as_written"]["steps_per_execution"] == 4
    assert "baseline: the script as written: float32, XLA on (compile(jit_compile=True)), 4 steps per call" in text
    assert F.CALLBACKS_NOT_RUN in text  # tune's findings


def test_tune_measures_xla_off_and_one_step_per_call_as_the_changes(own_study):
    _script, _out, _text, study = own_study
    xla = next(r for r in study["ladder"] if r["rung"] == "xla")
    assert xla["settings"]["jit_compile"] is False and xla["settings"]["steps_per_execution"] == 4
    spe = next(r for r in study["ladder"] if r["rung"] == "steps_per_execution")
    assert spe["settings"]["steps_per_execution"] == 1


def test_tune_s_code_to_apply_adds_neither_xla_nor_steps_per_call(own_study):
    script, out, _text, study = own_study
    patch = (out / "changes.patch").read_text() if (out / "changes.patch").exists() else ""
    added = [line for line in patch.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert not any("jit_compile=True" in line or "steps_per_execution=4" in line for line in added), patch
    recommended = study["recommended"]
    for key, line in (("jit_compile", "jit_compile=True,"), ("steps_per_execution", "steps_per_execution=4,")):
        if recommended[key] == study["ladder"][0]["settings"][key]:  # kept as written: not touched
            assert f"-    {line}" not in patch
        else:  # what lost is removed (changed to the measured value)
            assert f"-    {line}" in patch


def test_a_script_s_own_policy_is_measured_when_the_run_gives_none(tmp_path):
    """No --policy: the script's set_global_policy("mixed_bfloat16") takes effect (with --policy float32 the
    run's policy replaces it from that line: tests/truthful/test_truthful_hazards.py)."""
    import io
    import os
    import shutil

    from tfturbo import protocol
    from tfturbo.settings import RunSettings
    from trainer_backend.commands.run import prepare

    source = SCRIPTS_DIR / "preprocessing_in_tf_data.py"
    script = tmp_path / source.name
    shutil.copy(source, script)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        job = prepare(RunSettings(str(script), steps=20, script_args=["--own-policy"]).as_written(),
                      protocol.EventWriter(sinks=[io.StringIO()]))
        forced = prepare(RunSettings(str(script), steps=20, script_args=["--own-policy"], policy="float32"),
                         protocol.EventWriter(sinks=[io.StringIO()]))
    finally:
        os.chdir(cwd)
        import keras

        keras.mixed_precision.set_global_policy("float32")  # no policy leaks into the next test of this process
    # --policy float32 measures float32, and the record still says what the script asked for
    assert forced.settings.policy == "float32" and forced.as_written["policy"] == "mixed_bfloat16"
    assert job.settings.policy == "mixed_bfloat16" and job.as_written["policy"] == "mixed_bfloat16"
    assert job.model.layers[1].compute_dtype == "bfloat16"
    assert (job.settings.jit_compile, job.settings.steps_per_execution) == (False, 1)  # Keras' "auto" on a CPU
    assert job.as_written["jit_compile_given"] == "auto"
