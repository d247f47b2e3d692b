"""`tfturbo tune` for real: short ladders on tiny builtin workloads through the real backend.

The CPU's verdicts are not fixed (16-bit is usually slower here, XLA may or may not help a tiny
MLP), so the ladder test checks that every decision follows its own measurements.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import yaml

from tests.conftest import run_cli  # the suite runs from the repository root
from tfturbo.findings import codes_of
from tfturbo.runfiles import SUMMARY
from tfturbo.stats import change_verdict

TOLERANCE_PP = 0.5


@pytest.fixture(scope="module")
def mlp_study(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("tune") / "mlp"
    proc = run_cli("tune", "builtin:mlp", "--out", str(out), "--steps", "60", "--json", timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out, json.loads(proc.stdout)


def test_ladder_has_the_checklist_rungs_with_their_numbers(mlp_study):
    out, doc = mlp_study
    ladder = doc["ladder"]
    assert [e["rung"] for e in ladder][:3] == ["baseline", "mixed_precision", "xla"]
    assert ladder[0]["speedup"] == 1.0 and ladder[0]["kept"]
    for e in ladder[:3]:
        assert e["status"] == "completed"
        assert e["steps_per_s"] > 0 and e["speedup"] > 0
        lo, hi = e["speedup_ci95"]
        assert lo <= e["speedup"] <= hi
        assert isinstance(e["val_delta"], float) and e["metric"] == "val_accuracy"
        assert isinstance(e["kept"], bool) and e["reason"]
        assert (out / e["run"] / SUMMARY).exists()
        # every rung ran with the baseline's seed, step budget and validation points
        assert (e["settings"]["seed"], e["settings"]["steps"], e["settings"]["val_every"]) == (1234, 60, 12)
    assert ladder[1]["settings"]["policy"] in ("mixed_float16", "mixed_bfloat16")
    assert ladder[2]["settings"]["jit_compile"] is True


def test_decisions_follow_the_measurements(mlp_study):
    _, doc = mlp_study
    for e in doc["ladder"][1:]:
        if e["skipped"]:
            assert not e["kept"] and e["reason"].startswith("skipped")
            continue
        # speed is judged against the rung this one extends (compared_with), else the baseline
        judged = e["compared_speedup_ci95"] if e["compared_with"] else e["speedup_ci95"]
        verdict = change_verdict(tuple(judged))
        accurate = e["val_delta"] is not None and e["val_delta"] * 100 >= -TOLERANCE_PP
        codes = codes_of(e["findings"])
        assert e["kept"] == (verdict == "faster" and accurate and not codes), e
        assert ("SLOWER_THAN_BASELINE" in codes) == (verdict != "faster"), e
        assert ("ACCURACY_REGRESSION" in codes) == (not accurate), e
        assert verdict in e["reason"]


def test_recommendation_and_study_files(mlp_study):
    out, doc = mlp_study
    kept = [e for e in doc["ladder"] if e["kept"]]
    best = next(e for e in doc["ladder"] if e["name"] == doc["recommended_rung"])
    assert best in kept
    for key in ("policy", "jit_compile", "batch_size", "lr_scale"):
        assert doc["recommended"][key] == best["settings"][key]
    study = yaml.safe_load((out / "study.yaml").read_text())
    assert study["workload"] == "builtin:mlp" and study["status"] == "completed"
    assert study["environment"]["recommended_policy"] in ("float32", "mixed_float16", "mixed_bfloat16")
    assert [e["kept"] for e in study["ladder"]] == [e["kept"] for e in doc["ladder"]]
    assert doc["adaptive"]["steps_planned"] >= doc["adaptive"]["steps_run"] > 0
    if doc["report"] is not None:  # written by tfturbo.report when it is installed
        assert Path(doc["report"]).read_bytes()[:5] == b"%PDF-"


def test_a_diverging_16_bit_rung_is_rejected(tmp_path):
    """builtin:fp16-softmax-head computes its softmax in float16: under mixed_float16, measured as written
    (--no-fixes), its loss overflows to NaN; the rung must be rejected with NAN_LOSS."""
    out = tmp_path / "fp16"
    proc = run_cli("tune", "builtin:fp16-softmax-head", "--out", str(out), "--steps", "60",
                   "--policy", "mixed_float16", "--no-fixes", "--no-report", "--json", timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(proc.stdout)
    mp = doc["ladder"][1]
    assert mp["settings"]["policy"] == "mixed_float16" and not mp["settings"]["fix_head"]
    assert mp["status"] == "nan_stopped" and not mp["kept"]
    assert "NAN_LOSS" in codes_of(mp["findings"]) and "NaN" in mp["reason"]
    assert "HEAD_NOT_FLOAT32" in codes_of(doc["findings"])  # the audit said why beforehand
    assert doc["recommended"]["policy"] == "float32"
    assert "set_global_policy" not in (doc["snippet"] or "")


def test_input_bound_job_stops_after_the_probe(tmp_path):
    out = tmp_path / "slow"
    proc = run_cli("tune", "builtin:slow-input", "--out", str(out), "--json", timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(proc.stdout)
    assert doc["status"] == "input_bound" and doc["ladder"] == [] and doc["recommended"] is None
    assert "INPUT_BOUND" in codes_of(doc["findings"])
    assert doc["probe"]["verdict"] == "input_bound"
    assert not any((out / "runs").iterdir())  # no training run was started
    assert yaml.safe_load((out / "study.yaml").read_text())["status"] == "input_bound"
    assert math.isfinite(doc["probe"]["input_fraction"])
