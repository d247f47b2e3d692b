"""The typed documents that flow (issue 41 item 1): a run's summary with its settings inside, and the `env`
document. Each round-trips through its file form, reads an older or newer file tolerantly, and answers the
questions every front end asks of it in one place."""

from __future__ import annotations

import json

import pytest

from tfturbo.environment import Environment
from tfturbo.run_summary import RunSummary
from tfturbo.runfiles import SUMMARY, load_run
from tfturbo.settings import RunSettings
from tfturbo.tune.study import Rung, Study

ENV = {"devices": [{"type": "CPU", "name": "/device:CPU:0"}, {"type": "GPU", "name": "NVIDIA A100", "memory": 40}],
       "tensorflow": "2.21.0", "keras": "3.15.0", "versions": {"tensorflow": "2.21.0"}, "device": "GPU: NVIDIA A100",
       "accelerator": "GPU", "recommended_policy": "mixed_bfloat16", "reason": "Ampere GPU",
       "tf32": True, "memory": {"available_bytes": 38 * 2**30}}


def test_a_summary_carries_its_settings_as_run_settings_and_writes_them_back():
    settings = RunSettings("builtin:mlp", batch_size=128, policy="mixed_bfloat16", steps=60)
    summary = RunSummary(status="completed", settings=settings, steps_per_s=10.0)
    doc = json.loads(json.dumps(summary.to_dict()))
    assert doc["settings"] == settings.to_dict()
    again = RunSummary.from_dict(doc)
    assert again == summary and again.settings == settings and again.batch_size == 128
    assert again.samples_per_s == 1280.0 and again.step_rate == 10.0


def test_an_older_summary_with_partial_settings_reads_and_invalid_settings_are_named_not_fatal():
    old = RunSummary.from_dict({"status": "completed", "settings": {"batch_size": 32}, "steps_per_s": 5.0})
    assert old.settings is not None and old.settings.batch_size == 32 and old.samples_per_s == 160.0
    bad = RunSummary.from_dict({"status": "completed", "settings": {"batch_size": 0}, "wall_s": 2.0})
    assert bad.settings is None and bad.wall_s == 2.0 and bad.batch_size == 1
    assert any("settings are not valid" in p for p in bad.problems)


def test_load_run_hands_back_the_class_not_a_dict(tmp_path):
    run = tmp_path / "01-baseline"
    run.mkdir()
    (run / SUMMARY).write_text(json.dumps({"v": 1, "status": "completed", "settings": {"batch_size": 64},
                                           "throughput": {"samples_per_s": 6400.0, "windows": 8, "seconds": 2.0,
                                                          "ci95": [6000.0, 6800.0]},
                                           "energy_j": 12.5}))
    record = load_run(run)
    assert isinstance(record.summary, RunSummary) and record.status == "completed"
    assert record.summary.samples_per_s == 6400.0 and record.summary.throughput_ci == (6000.0, 6800.0)
    assert record.summary.extra == {"energy_j": 12.5}  # a newer tfturbo's key survives


def test_a_rung_entry_reads_its_numbers_from_the_typed_summary():
    base = RunSummary.from_dict({"status": "completed", "settings": {"batch_size": 64}, "steps_per_s": 10.0,
                                 "peak_memory_bytes": 1000, "step_ms": {"median": 100.0, "ci95": [99.0, 101.0]}})
    tuned = RunSummary.from_dict({"status": "completed", "settings": {"batch_size": 128}, "steps_per_s": 8.0,
                                  "peak_memory_bytes": 1500, "steps_completed": 60})
    entry = Rung("02-larger_batch", "larger_batch", RunSettings(batch_size=128), summary=tuned).entry(base)
    assert entry["samples_per_s"] == 1024.0 and entry["memory_ratio"] == 1.5 and entry["steps_completed"] == 60
    assert entry["status"] == "completed" and entry["peak_memory_bytes"] == 1500


def test_the_env_document_round_trips_and_answers_once():
    env = Environment.from_dict(json.loads(json.dumps(ENV)))
    assert env.problems == [] and env.recommended_policy == "mixed_bfloat16" and env.accelerator == "GPU"
    assert env.available_memory == 38 * 2**30 and env.device_names() == ["/device:CPU:0", "NVIDIA A100"]
    assert env.policy_text() == "mixed_bfloat16 (Ampere GPU)"
    assert env.to_dict() == ENV  # every key as the backend wrote it, the unknown ones included
    assert env.extra == {"versions": {"tensorflow": "2.21.0"}, "tf32": True}


def test_an_older_env_document_is_read_tolerantly():
    """Written before the `accelerator` key: the accelerator comes from the devices; a key of the wrong type
    is named and dropped, the rest still read."""
    old = Environment.from_dict({"devices": [{"type": "CPU"}, {"type": "TPU", "name": "TPU:0"}],
                                 "recommended_policy": 16, "reason": "TPU", "memory": None})
    assert old.accelerator == "TPU" and old.recommended_policy is None and old.reason == "TPU"
    assert old.available_memory is None and any("recommended_policy" in p for p in old.problems)
    assert Environment.from_dict(None).problems == ["environment is not a mapping; nothing in it was read"]


def test_a_study_keeps_its_environment_typed_across_save_and_load(tmp_path):
    study = Study(tmp_path, "builtin:mlp", {})
    study.environment = Environment.from_dict(ENV)
    study.save()
    loaded = Study.load(tmp_path)
    assert isinstance(loaded.environment, Environment) and loaded.environment.accelerator == "GPU"
    assert loaded.environment.to_dict() == ENV
    assert loaded.document()["environment"]["recommended_policy"] == "mixed_bfloat16"


@pytest.mark.parametrize("doc", [{"status": "completed"}, {}])
def test_a_summary_without_numbers_answers_none_not_an_error(doc):
    s = RunSummary.from_dict(doc)
    assert s.samples_per_s is None and s.step_rate is None and s.throughput_ci is None
    assert s.primary_metric() is None and s.hand_over_ratio is None and s.median_step_ms is None
