"""Run directories: written safely, read tolerantly (crashed runs, corrupt files, foreign paths)."""

import json
import shutil

import pytest

from tfturbo import protocol, runfiles
from tfturbo.errors import OutputDirError
from tfturbo.runfiles import load_run, load_study_runs, prepare_run_dir, safe_child, write_json_atomic, write_yaml
from tfturbo.settings import RunSettings
from tfturbo.tune.study import Study


def make_run(d, summary=True, done=True, events_tail=b""):
    d.mkdir(parents=True)
    write_yaml(d / runfiles.RUN_YAML, {"policy": "float32", "batch_size": 64})
    lines = [protocol.encode({"type": "hello", "seq": 1}),
             protocol.encode({"type": "steps", "seq": 2, "step": [1, 2, 3], "step_ms": [50.0, 10.0, 11.0],
                              "loss": [None, None, 0.5]})]
    if done:
        lines.append(protocol.encode({"type": "done", "seq": 3, "status": "cancelled"}))
    (d / runfiles.EVENTS).write_bytes(("\n".join(lines) + "\n").encode() + events_tail)
    if summary:
        write_json_atomic(d / runfiles.SUMMARY, {"status": "completed", "steps_per_s": 90.0, "findings": []})
    return d


def test_complete_run_loads_without_warnings(tmp_path):
    rec = load_run(make_run(tmp_path / "r1"))
    assert rec.status == "completed" and rec.warnings == []
    assert rec.steps().step_ms == [50.0, 10.0, 11.0]
    assert rec.settings["batch_size"] == 64


def test_killed_run_is_marked_crashed_and_keeps_its_steps(tmp_path):
    rec = load_run(make_run(tmp_path / "r", summary=False, done=False, events_tail=b'{"type":"steps","st'))
    assert rec.status == protocol.RunStatus.CRASHED
    assert rec.steps().step == [1, 2, 3]
    text = " ".join(rec.warnings)
    assert "truncated" in text and "killed" in text


def test_cancelled_run_without_summary_reports_its_done_status(tmp_path):
    rec = load_run(make_run(tmp_path / "r", summary=False, done=True))
    assert rec.status == "cancelled"


def test_corrupt_files_are_reported_and_the_rest_loads(tmp_path):
    d = make_run(tmp_path / "r")
    (d / runfiles.RUN_YAML).write_text("policy: [unclosed")
    (d / runfiles.SUMMARY).write_text("{not json")
    rec = load_run(d)
    assert rec.settings == {} and rec.summary is None
    assert any("run.yaml is corrupt" in w for w in rec.warnings)
    assert any("summary.json is corrupt" in w for w in rec.warnings)
    assert rec.steps().step == [1, 2, 3]


def test_yaml_is_safe_loaded(tmp_path):
    d = make_run(tmp_path / "r")
    (d / runfiles.RUN_YAML).write_text("x: !!python/object/apply:os.system ['echo pwned']\n")
    rec = load_run(d)
    assert rec.settings == {} and any("corrupt" in w for w in rec.warnings)


def test_study_lists_runs_and_survives_missing_study_yaml(tmp_path):
    make_run(tmp_path / "s" / "runs" / "01-baseline")
    make_run(tmp_path / "s" / "runs" / "02-mixed", summary=False, done=False)
    study = load_study_runs(tmp_path / "s")
    assert [r.name for r in study.runs] == ["01-baseline", "02-mixed"] and study.warnings == []
    assert Study.load(tmp_path / "s").problems == ["study.yaml is missing"]


def test_prepare_run_dir_refuses_an_existing_run_and_unwritable_dirs(tmp_path):
    d = make_run(tmp_path / "r")
    with pytest.raises(OutputDirError, match="already holds a run"):
        prepare_run_dir(d)
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputDirError, match="not a directory"):
        prepare_run_dir(tmp_path / "file")
    with pytest.raises(OutputDirError, match="cannot write"):
        prepare_run_dir(tmp_path / "file" / "sub")  # a path through a file: unwritable even for root


def test_prepare_run_dir_refuses_a_full_disk(tmp_path, monkeypatch):
    monkeypatch.setattr(runfiles.shutil, "disk_usage", lambda p: shutil._ntuple_diskusage(10**9, 10**9, 1024))
    with pytest.raises(OutputDirError, match="MiB free"):
        prepare_run_dir(tmp_path / "new")


def test_atomic_json_leaves_no_temp_files_and_strict_json(tmp_path):
    write_json_atomic(tmp_path / "s.json", {"x": float("nan"), "y": [1.5]})
    assert json.loads((tmp_path / "s.json").read_text()) == {"x": None, "y": [1.5]}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json"]
    assert (tmp_path / "s.json").stat().st_mode & 0o044 == 0o044  # readable by others, like any file


@pytest.mark.parametrize("name", ["../escape", "/etc", "a/../../b", "..", "", "a/b"])
def test_names_from_files_never_leave_the_study(tmp_path, name):
    with pytest.raises(ValueError):
        safe_child(tmp_path, name)


def test_safe_child_accepts_run_names(tmp_path):
    assert safe_child(tmp_path, "03-mixed_bfloat16+xla") == (tmp_path / "03-mixed_bfloat16+xla").resolve()


def test_the_checkpoint_settings_record_reads_back_as_the_runs_settings(tmp_path):
    settings = RunSettings("builtin:mlp", policy="mixed_bfloat16", jit_compile=True, batch_size=128, lr_scale=2.0,
                           fix_head=True, script_args=["--length", "48"])
    d = make_run(tmp_path / "r")
    runfiles.write_checkpoint_settings(d, settings, 0.002, 120, {"versions": {"tensorflow": "2.21.0"}, "device": "CPU"})
    record = load_run(d)
    assert record.trained_settings() == settings.with_(steps=120)  # the steps it actually trained
    assert record.checkpoint_settings()["learning_rate"] == 0.002 and record.checkpoint_settings()["device"] == "CPU"
    assert load_run(make_run(tmp_path / "none")).trained_settings() is None
