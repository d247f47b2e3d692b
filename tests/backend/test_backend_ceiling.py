"""MFU: the measured matmul ceiling (cached per machine) and the FLOPs of a run's step."""

from __future__ import annotations

import json

from trainer_backend import ceiling


def test_a_run_reports_its_flops_and_a_utilization_between_0_and_1(mlp_run):
    doc = json.loads((mlp_run / "summary.json").read_text())
    assert doc["flops_per_step"] > 0 and doc["flops_source"]
    assert 0 < doc["mfu"] <= 1 and doc["ceiling_dtype"] == "float32" and doc["ceiling_flops"] > 0


def test_the_ceiling_is_read_from_the_cache_for_this_device_and_version(tmp_path, monkeypatch):
    monkeypatch.setenv(ceiling.CACHE_ENV, str(tmp_path))
    assert ceiling.ceilings([], "CPU: X", "2.21.0", measure=False) == {}
    path = ceiling._cache_file("CPU: X", "2.21.0")
    path.write_text(json.dumps({"device": "CPU: X", "tensorflow": "2.21.0", "ceiling": {"float32": 5e10}}))
    assert ceiling.ceilings([], "CPU: X", "2.21.0", measure=False) == {"float32": 5e10}
    assert ceiling.ceilings([], "CPU: X", "2.22.0", measure=False) == {}  # another TensorFlow: measured again


def test_utilization_uses_the_compute_dtype_ceiling_and_falls_back_to_float32():
    peaks = {"float32": 1e11, "bfloat16": 2e11}
    bf16 = ceiling.utilization(1e9, 50.0, peaks, "mixed_bfloat16")
    assert bf16["ceiling_dtype"] == "bfloat16" and bf16["mfu"] == 0.25
    f16 = ceiling.utilization(1e9, 50.0, peaks, "mixed_float16")  # no float16 ceiling measured on this device
    assert f16["ceiling_dtype"] == "float32" and f16["mfu"] == 0.5
    over = ceiling.utilization(1e9, 500.0, peaks, "float32")  # a ceiling measured on a busy moment
    assert over["mfu"] == 5.0 and "above 100%" in over["mfu_note"]  # never capped silently
    assert ceiling.utilization(1e9, 50.0, peaks, "float32")["mfu_note"] is None
    assert ceiling.utilization(None, 50.0, peaks, "float32")["mfu"] is None


def test_the_dtypes_measured_follow_the_hardware():
    assert ceiling.ceiling_dtypes([{"type": "CPU", "native_bf16": False}]) == ("CPU", ["float32"])
    assert ceiling.ceiling_dtypes([{"type": "CPU", "native_bf16": True}]) == ("CPU", ["float32", "bfloat16"])
    assert ceiling.ceiling_dtypes([{"type": "CPU"}, {"type": "GPU", "compute_capability": "8.0"}]) == \
        ("GPU", ["float32", "float16", "bfloat16"])
    assert ceiling.ceiling_dtypes([{"type": "GPU", "compute_capability": "7.5"}]) == ("GPU", ["float32", "float16"])
