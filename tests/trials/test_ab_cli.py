"""`tfturbo ab` through the real backend: the JSON document, a candidate that cannot train, and one that trains
but stops learning (rejected on accuracy, not on speed)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import ROOT, run_cli  # the suite runs from the repository root
from tfturbo.findings import codes_of

AB_KEYS = {"a", "b", "speed", "accuracy", "kept", "reason", "findings"}


def test_a_diverging_candidate_is_rejected_and_its_trial_stops(tmp_path):
    """builtin:fp16-softmax-head computes its softmax in float16: under mixed_float16 its loss overflows to NaN.
    The trial ends at the failed run: no replicates of a configuration that cannot train, no speed or accuracy
    verdict, and `ab` exits 1 (a run failed). B runs first, so A's full-length run is never paid for it."""
    proc = run_cli("ab", "builtin:fp16-softmax-head", "--b", "policy=mixed_float16", "--steps", "60",
                   "--out", str(tmp_path / "ab"), "--json", timeout=600)
    assert proc.returncode == 1, proc.stderr[-3000:]
    doc = json.loads(proc.stdout)
    assert AB_KEYS <= set(doc)
    assert doc["a"]["policy"] == "float32" and doc["b"]["policy"] == "mixed_float16"
    assert not doc["kept"] and doc["status"] == "nan_stopped" and "NaN" in doc["reason"]
    assert "NAN_LOSS" in codes_of(doc["findings"])
    assert doc["speed"]["verdict"] == "failed" and doc["accuracy"]["verdict"] == "not measured"
    assert [r["name"] for r in doc["runs"]] == ["b1"]
    assert (tmp_path / "ab" / "trial.json").exists() and (tmp_path / "ab" / "runs" / "b1").is_dir()


def test_a_float16_loop_that_stops_learning_is_rejected_on_accuracy(tmp_path):
    """builtin:custom-loop's train_step never scales the loss: under mixed_float16 it silently stops learning.
    It trains at full speed, so only the paired accuracy gate can catch it."""
    proc = run_cli("ab", "builtin:custom-loop", "--b", "policy=mixed_float16", "--steps", "150",
                   "--min-replicates", "2", "--max-replicates", "2", "--steady-s", "0", "--json", timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(proc.stdout)
    acc = doc["accuracy"]
    assert acc["verdict"] == "worse" and acc["paired"] and acc["n_examples"] == 1024
    assert acc["ci95"][1] < -0.005  # the whole interval is beyond the tolerance
    assert not doc["kept"] and "accuracy worse" in doc["reason"]
    assert "ACCURACY_REGRESSION" in codes_of(doc["findings"])
    # --steady-s 0: every pair full length; and A trained again from two other seeds, for the trainings' noise
    assert doc["speed"]["replicates"] == 2 and len(doc["runs"]) == 6
    assert sorted(r["replicate"] for r in doc["runs"] if r["arm"] == "a")[:2] == [-1, 0]
    # the interval holds the trainings' noise (3 trainings of A: 2 degrees of freedom), and still says worse
    assert acc["noise"]["seeds_a"] == 3 and acc["noise"]["training_df"] == 2


@pytest.mark.slow
def test_ab_pairs_every_validation_example_of_a_one_pass_generator(tmp_path):
    """Issue 39: `ab` paired fewer examples than `run` on a 480-example validation set. A script's finite
    generator gives one pass, and B's 16-bit integer-input check read its first batch before the set was taken:
    B validated on 448 examples, paired by position with A's 480 (shifted by a batch). Now the set is read once,
    first, into the trial's folder, and every arm validates on those 480."""
    script = str(ROOT / "tests" / "trials" / "scripts" / "generator_validation.py")
    proc = run_cli("ab", script, "--b", "policy=mixed_bfloat16", "--steps", "20", "--min-replicates", "2",
                   "--max-replicates", "2", "--steady-s", "0", "--out", str(tmp_path / "ab"), "--json", timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    acc = json.loads(proc.stdout)["accuracy"]
    assert acc["paired"] and acc["n_examples"] == 480
    sets = [json.loads((tmp_path / "ab" / "runs" / name / "summary.json").read_text())["paired_validation"]["set"]
            for name in ("b1", "a1")]  # B's full-length run goes first: it writes the set, A reads it
    assert [s["shared"] for s in sets] == ["written", "read"] and sets[0]["digest"] == sets[1]["digest"]
