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
