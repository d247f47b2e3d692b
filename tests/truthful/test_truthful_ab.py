"""`tfturbo ab` on training scripts written the way keras-io examples are (tests/truthful/scripts), through the
real CLI: the accuracy gate pairs a binary classifier with 1-D labels, and a candidate that cannot train is a
failed trial, not a verdict."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import run_cli

SCRIPTS = Path(__file__).resolve().parent / "scripts"


def _script(tmp_path_factory, name: str) -> Path:
    folder = tmp_path_factory.mktemp(Path(name).stem)
    shutil.copy(SCRIPTS / name, folder / name)
    return folder / name


@pytest.fixture(scope="module")
def binary_ab(tmp_path_factory):
    script = _script(tmp_path_factory, "binary_sigmoid.py")
    proc = run_cli("ab", str(script), "--b", "batch=64", "--steps", "60", "--min-replicates", "2",
                   "--max-replicates", "2", "--json", timeout=900, cwd=script.parent)
    return proc


def test_a_sigmoid_head_on_1d_labels_gets_a_paired_verdict_with_an_interval(binary_ab):
    assert binary_ab.returncode == 0, binary_ab.stderr[-3000:]
    acc = json.loads(binary_ab.stdout)["accuracy"]
    assert acc["paired"] and acc["metric"] == "val_accuracy" and acc["n_examples"] == 512
    assert acc["ci95"] is not None and acc["ci95"][0] <= acc["delta"] <= acc["ci95"][1]
    assert "not paired" not in acc["explanation"]


@pytest.fixture(scope="module")
def topk_script(tmp_path_factory) -> Path:
    return _script(tmp_path_factory, "topk_logits.py")


def test_a_candidate_whose_metric_refuses_bfloat16_fails_with_the_error_and_the_fix(topk_script):
    """SparseTopKCategoricalAccuracy on bfloat16 logits: every B run fails (InTopKV2). `ab` used to exit 0 with
    "speed — no measurable change" and "accuracy — worse"; it must say failed, why, and what to try."""
    proc = run_cli("ab", str(topk_script), "--b", "policy=mixed_bfloat16", "--steps", "30", timeout=900,
                   cwd=topk_script.parent)
    assert proc.returncode == 1, proc.stderr[-3000:]
    out = proc.stdout
    assert "B failed: TypeError: Input 'predictions' of 'InTopKV2' Op has type bfloat16" in out
    assert "fix: compute the output layer in float32: --fix-head (ab/tune settings: fix_head=on)" in out
    assert "no measurable change" not in out and "worse" not in out and "{" not in out  # no verdict, no dicts
    assert "A  policy=float32  jit=off" in out and "B  policy=mixed_bfloat16" in out


def test_with_the_fix_it_names_the_16bit_run_is_measured(topk_script):
    proc = run_cli("run", str(topk_script), "--policy", "mixed_bfloat16", "--fix-head", "--steps", "30",
                   "--val-examples", "256", "--out", str(topk_script.parent / "fixed"), "--json", timeout=600,
                   cwd=topk_script.parent)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(proc.stdout)
    assert doc["status"] == "completed" and "val_top-5-accuracy" in doc["metrics"]
