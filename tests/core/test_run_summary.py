"""summary.json has one owner: RunSummary writes it, reads it, and rebuilds it from events."""

from __future__ import annotations

import json

from tfturbo.run_summary import VERSION, RunSummary
from tfturbo.runfiles import SUMMARY, load_run


def test_round_trip_keeps_every_field_and_the_version():
    s = RunSummary(status="completed", steps_per_s=812.5, step_ms={"median": 1.2, "ci95": [1.1, 1.3]},
                   throughput={"samples_per_s": 5e4, "steps": 100, "seconds": 0.13, "windows": 3},
                   first_steady_step=12, xla_active=False, findings=[])
    doc = s.to_dict()
    assert doc["v"] == VERSION and list(doc)[0] == "v"
    again = RunSummary.from_dict(json.loads(json.dumps(doc)))
    assert again == s and again.problems == []


def test_unknown_keys_from_a_newer_version_survive():
    doc = {"v": VERSION + 1, "status": "completed", "energy_j": 2, "new_section": {"a": 1}}
    s = RunSummary.from_dict(doc)
    assert s.extra == {"energy_j": 2, "new_section": {"a": 1}} and s.to_dict()["energy_j"] == 2


def test_wrong_types_are_named_and_dropped_the_rest_loads():
    s = RunSummary.from_dict({"status": "completed", "steps_per_s": "fast", "warmup_steps": 2.5,
                              "xla_active": "yes", "peak_memory_bytes": 10})
    assert s.status == "completed" and s.peak_memory_bytes == 10
    assert s.steps_per_s is None and s.warmup_steps is None and s.xla_active is None
    assert len(s.problems) == 3 and any("steps_per_s is str" in p and "not a number" in p for p in s.problems)


def test_a_run_dir_with_a_mistyped_summary_still_loads_with_a_warning(tmp_path):
    run = tmp_path / "r"
    run.mkdir()
    (run / SUMMARY).write_text(json.dumps({"status": "completed", "steps_per_s": [1, 2], "wall_s": 3.0}))
    record = load_run(run)
    assert record.summary.status == "completed" and record.summary.wall_s == 3.0
    assert record.summary.steps_per_s is None
    assert any("steps_per_s is list" in w for w in record.warnings)


def test_not_a_mapping_reads_as_nothing():
    s = RunSummary.from_dict(["not", "a", "summary"])
    assert s.status is None and "not a mapping" in s.problems[0]
