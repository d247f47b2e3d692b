"""Issue 44 through the real CLI: a model trained without labels (keras-io's VAE: its own train_step, fit(x)) is
measured, and a candidate that fails before fit() (its Sampling layer adds float32 noise to a bfloat16 z_mean) is
a failed arm that costs seconds. Two backend processes; the rest of the issue's patterns are tested in this
process (tests/truthful/test_truthful_hazards.py) or on recorded documents."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from tests.conftest import run_cli
from tfturbo import findings as F

from script_helpers import cli_json, script_in_folder

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def vae(tmp_path_factory):
    return script_in_folder(tmp_path_factory, "vae_fit_x.py")


@pytest.fixture(scope="module")
def vae_run(vae):
    """fit(x) with validation_data=(x_val,): the VAE's own test_step is the only judge of its validation."""
    return cli_json("run", vae.name, "--out", "run", "--steps", "80", "--", "--validation", cwd=vae.parent), \
        vae.parent / "run"


@pytest.fixture(scope="module")
def vae_failing_candidate(vae):
    """B under mixed_bfloat16 fails in the script, before fit(); --steps given, so no audit runs first."""
    started = time.monotonic()
    proc = run_cli("ab", vae.name, "--b", "policy=mixed_bfloat16", "--steps", "30", "--out", "ab-fails", "--json",
                   timeout=400, cwd=vae.parent)
    return proc, time.monotonic() - started


# ------------------------------------------------------------------ a model trained without labels

def test_run_measures_a_model_trained_on_features_only(vae_run):
    doc, out = vae_run
    assert doc["status"] == "completed" and doc["steps_per_s"] > 0 and doc["labels"] is False
    assert doc["paired_validation"] is None  # no label to judge an example by
    batches = doc["batch_validation"]
    assert batches["problem"] is None and batches["metric"] == "val_loss" and batches["batches"] == 4  # 128 / 32
    with np.load(out / batches["file"]) as data:
        assert data["loss"].shape == (len(batches["points"]), 4) and np.isfinite(data["loss"]).all()
    assert [p["step"] for p in doc["training"]][-1] == 80 and "loss" in doc["training"][-1]["metrics"]
    assert "has no labels" not in (out / "backend.log").read_text()


def test_the_gate_compares_its_own_validation_loss_batch_by_batch(vae_run):
    """The same run as both arms: the label-free gate reads the backend's per-batch file and says what it paired."""
    from tfturbo.run_summary import RunSummary
    from tfturbo.trials.label_free import compare_runs
    from tfturbo.trials.verdict import Tolerance

    doc, out = vae_run
    summary = RunSummary.from_dict(doc)
    acc = compare_runs([(summary, out)], [(summary, out)], Tolerance())
    assert acc.verdict == "within tolerance" and acc.delta == 0.0 and acc.unit == "validation batch"
    assert acc.examples == 4 and "paired on the same 4 validation batches" in acc.text()
    assert "the model's own test_step" in acc.text() and acc.paired_on() == "4 validation batches"


def test_no_advice_asks_for_labels(vae_run):
    said = json.dumps(vae_run[0]["findings"])
    assert "fit(x, y" not in said and "(x, y) pairs" not in said


# ------------------------------------------------------------------ a 16-bit hazard outside fit()

def test_a_candidate_that_fails_before_fit_is_a_failed_arm_that_costs_seconds(vae_failing_candidate):
    proc, seconds = vae_failing_candidate
    assert proc.returncode == 1, proc.stderr[-3000:]
    doc = json.loads(proc.stdout)
    assert doc["status"] == "failed" and doc["speed"]["verdict"] == "failed" and not doc["kept"]
    assert [r["name"] for r in doc["runs"]] == ["b1"]  # B first: A's full-length run is never paid for it
    [hazard] = [f for f in doc["findings"] if f["code"] == F.DTYPE_MISMATCH_16BIT]
    assert hazard["arm"] == "b" and hazard["run"] == "b1"
    assert "mixed_bfloat16" in hazard["message"] and "policy tfturbo measures is the cause" in hazard["message"]
    assert "Sampling" in hazard["where"] and "vae_fit_x.py line 29" in hazard["where"]
    assert "epsilon is float32 while z_mean is bfloat16" in hazard["message"]
    assert "dtype=z_mean.dtype" in hazard["fix"] and "line 28" in hazard["fix"]
    assert "dtype=z_mean.dtype" in doc["reason"] and "\x1b" not in doc["reason"]
    assert doc["reason"].count("fix:") == 1  # the message and its fix once ("fix the script (…) — fix the script")
    assert seconds < 60
