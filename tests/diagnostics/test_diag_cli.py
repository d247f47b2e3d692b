"""What the issue's "done when" names, through the real `tfturbo` CLI (one backend process each)."""

from __future__ import annotations

import json

from diag_helpers import codes, findings_of

from tests.conftest import run_cli
from tfturbo.findings import HEAD_NOT_FLOAT32, INPUT_BOUND, RECOMPILE_STORM
from trainer_backend.diagnostics.input_probe import HIGH_INPUT_SHARE

RATES = ("data_steps_per_s", "compute_steps_per_s", "train_steps_per_s")


def test_slow_input_is_input_bound_with_the_three_rates_and_the_tfdata_fixes(probe_slow_input):
    doc = probe_slow_input
    assert doc["verdict"] == "input_bound"
    assert all(doc[k] > 0 for k in RATES)
    assert doc["data_steps_per_s"] < doc["compute_steps_per_s"]  # the pipeline alone is the slower part
    assert doc["band"] == "high" and doc["input_fraction"] >= HIGH_INPUT_SHARE  # XProf's "highly input-bound"
    [finding] = findings_of(doc, INPUT_BOUND)
    for code in ("prefetch(tf.data.AUTOTUNE)", "num_parallel_calls=tf.data.AUTOTUNE", ".cache()", ".interleave("):
        assert code in finding["fix"]
    assert "MapDataset" in finding["fix"]  # read from the user's own pipeline
    assert doc["profiler"]["available"] is False and "CPU" in doc["profiler"]["reason"]


def probe(*args: str) -> dict:
    proc = run_cli("probe-input", *args, "--steps", "40", "--json", timeout=400)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def test_an_uncached_pipeline_is_input_bound_until_the_automatic_tfdata_fixes_cache_and_prefetch_it():
    plain = probe("builtin:uncached-input")
    assert plain["verdict"] == "input_bound" and plain["band"] == "high"
    fixed = probe("builtin:uncached-input", "--input-fixes")
    assert fixed["verdict"] == "compute_bound" and fixed["input_fixes"] is True
    assert fixed["data_steps_per_s"] > 5 * plain["data_steps_per_s"]  # the map runs once, then from the cache
    [applied] = findings_of(fixed, "INPUT_FIXES_APPLIED")
    assert ".cache()" in applied["fix"] and "prefetch" in applied["fix"]


def test_mlp_is_compute_bound(probe_mlp):
    assert probe_mlp["verdict"] == "compute_bound" and probe_mlp["band"] in ("low", "moderate")
    assert all(probe_mlp[k] > 0 for k in RATES)
    assert INPUT_BOUND not in codes(probe_mlp)


def test_audit_cli_reports_the_planted_head():
    proc = run_cli("audit", "builtin:fp16-softmax-head", "--policy", "mixed_float16", "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert HEAD_NOT_FLOAT32 in codes(json.loads(proc.stdout))


def test_ragged_batches_under_xla_raise_a_recompile_storm_naming_the_dimension(ragged_jit_run):
    [storm] = findings_of(ragged_jit_run, RECOMPILE_STORM)
    assert "x dimension 1" in storm["where"]
    assert "dimension 1 of x" in storm["message"] and "distinct input shapes" in storm["message"]
    assert "drop_remainder=True" in storm["fix"] and "--drop-remainder" in storm["fix"]
    assert storm["data"]["spikes"] >= 3


def test_the_automatic_fix_ends_the_storm(ragged_jit_fixed_run):
    assert ragged_jit_fixed_run["status"] == "completed"
    assert RECOMPILE_STORM not in codes(ragged_jit_fixed_run)
    assert ragged_jit_fixed_run["settings"]["drop_remainder"] is True
