"""Precision policies, XLA and the mirrored strategy on the CPU (issue 2, "Done when")."""

from __future__ import annotations

import json
import math

from backend_helpers import TINY, WORKLOADS, run_backend

from tfturbo import protocol
from tfturbo.runfiles import load_run
from tests.conftest import run_cli


def test_mixed_float16_records_the_loss_scale_and_counts_skipped_steps(tmp_path):
    out = tmp_path / "f16"
    proc = run_cli("run", str(WORKLOADS / "overflow16.py"), "--out", str(out), "--policy", "mixed_float16",
                   "--steps", "60", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["settings"]["policy"] == "mixed_float16"
    scale = doc["loss_scale"]
    assert 1 <= scale["min"] <= scale["final"] < 32768  # float16 gradients overflowed: the scale fell
    # each overflow skips the step and halves the scale; growth needs 2000 clean steps, so none here
    assert scale["skipped_steps"] == math.log2(32768 / scale["min"])
    scales = [v for v in load_run(out).steps().loss_scale if v is not None]
    assert scales[-1] == scale["final"] and scales == sorted(scales, reverse=True)


def test_mixed_bfloat16_with_xla_runs_and_says_xla_was_active(tmp_path):
    out = tmp_path / "bf16-xla"
    proc = run_cli("run", "builtin:mlp", "--out", str(out), "--policy", "mixed_bfloat16", "--jit",
                   "--steps", "60", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert (doc["status"], doc["xla_active"], doc["loss_scale"]) == ("completed", True, None)
    assert doc["settings"]["policy"] == "mixed_bfloat16" and doc["settings"]["jit_compile"] is True
    assert doc["step_ms"]["median"] > 0 and doc["metrics"]["val_accuracy"] > 0.3


def test_mirrored_strategy_trains_two_replicas_on_two_logical_cpus(tmp_path):
    out = tmp_path / "mirrored"
    run = run_backend("run", TINY, "--out", str(out), "--strategy", "mirrored", "--steps", "40",
                      env={"TFTURBO_LOGICAL_CPUS": "2"})
    assert run.exit_code == 0, run.stderr[-3000:]
    cpu = run.of_type(protocol.HELLO)[0]["devices"][0]
    assert cpu["logical_devices"] == 2
    assert run.document["settings"]["strategy"] == "mirrored"
    assert "2 logical devices" in run.document["device"]
    assert run.document["steps_completed"] == 40
    losses = [e["metrics"]["loss"] for e in run.of_type(protocol.EPOCH)]
    assert losses[-1] < losses[0]  # the replicas' gradients were combined into one model that learns


def test_xla_with_mirrored_on_logical_cpus_is_refused_up_front(tmp_path, monkeypatch):
    monkeypatch.setenv("TFTURBO_LOGICAL_CPUS", "2")
    out = tmp_path / "never"
    proc = run_cli("run", TINY, "--out", str(out), "--strategy", "mirrored", "--jit", "--json")
    assert proc.returncode == 2 and "--no-jit" in proc.stderr and not out.exists()


def test_auto_clustering_compiles_clusters_on_a_cpu_and_says_so(tmp_path, monkeypatch):
    """Issue 23: set_jit("autoclustering") alone clusters nothing on a CPU (per-example losses bit-identical to
    float32's): the backend adds --tf_xla_cpu_global_jit and counts the clusters; with it turned off by the user
    the run says it compiled none, so a trial stops with "did not take effect"."""
    docs = {}
    for name, flags in (("on", ""), ("off", "--tf_xla_cpu_global_jit=false")):
        monkeypatch.setenv("TF_XLA_FLAGS", flags)  # the backend child inherits it
        proc = run_cli("run", "builtin:mlp", "--out", str(tmp_path / name), "--xla-autoclustering", "--steps", "12",
                       "--profile", "0:0", "--no-model", "--json")
        assert proc.returncode == 0, proc.stderr
        docs[name] = json.loads(proc.stdout)
    assert docs["on"]["xla_active"] is True and docs["on"]["xla_clusters"] > 0
    assert docs["off"]["xla_active"] is False and docs["off"]["xla_clusters"] == 0
    assert not (tmp_path / "on" / "checkpoint" / "model.keras").exists()  # --no-model: the settings only
    assert (tmp_path / "on" / "checkpoint" / "tfturbo-settings.yaml").exists()
