"""Files a newer tfturbo wrote in a newer major format are refused with the fix; older ones are read
(issue 19, point 4): events.jsonl, summary.json, study.yaml and scaling.json, through one rule
(`tfturbo.formats.check_version`)."""

from __future__ import annotations

import json

import pytest
import yaml

from tfturbo import cli, protocol, run_summary, scaling
from tfturbo.formats import FormatVersionError, check_version
from tfturbo.runfiles import EVENTS, RUNS_DIR, STUDY_YAML, SUMMARY, load_run
from tfturbo.scaling import SCALING_JSON, ScalingResult, scaling_dir
from tfturbo.tune import study as study_mod
from tfturbo.tune.study import Study

from test_report_scaling import scaling_result


def baseline(study):
    return study / RUNS_DIR / "01-baseline"


def set_events_version(run_dir, v) -> None:
    path = run_dir / EVENTS
    lines = path.read_text().splitlines()
    lines = [json.dumps({**json.loads(line), "v": v}) for line in lines]
    path.write_text("\n".join(lines) + "\n")


def set_json_version(path, v) -> None:
    path.write_text(json.dumps({**json.loads(path.read_text()), "v": v}))


def set_study_format(study, v) -> None:
    data = yaml.safe_load((study / STUDY_YAML).read_text())
    data["format"] = v
    (study / STUDY_YAML).write_text(yaml.safe_dump(data))


def saved_scaling(study):
    scaling_result().save(scaling_dir(study))
    return scaling_dir(study) / SCALING_JSON


def refused(call, path, found, reads):
    with pytest.raises(FormatVersionError) as e:
        call()
    line = e.value.line()
    assert f"{path} is format version {found}, written by a newer tfturbo" in line
    assert f"reads format version {reads} and older" in line and "upgrade tfturbo" in e.value.fix
    return line


def test_newer_events_are_refused_and_older_ones_read(study, monkeypatch):
    run_dir = baseline(study)
    set_events_version(run_dir, protocol.PROTOCOL_VERSION + 1)
    refused(lambda: load_run(run_dir), run_dir / EVENTS, protocol.PROTOCOL_VERSION + 1, protocol.PROTOCOL_VERSION)
    # a tfturbo one version on reads this file, and one without "v" (before versions) is read as well
    monkeypatch.setattr(protocol, "PROTOCOL_VERSION", protocol.PROTOCOL_VERSION + 1)
    assert load_run(run_dir).status == "completed"
    set_events_version(run_dir, None)
    assert load_run(run_dir).status == "completed"


def test_a_newer_summary_is_refused_and_an_older_one_read(study, monkeypatch):
    run_dir = baseline(study)
    newer = run_summary.VERSION + 1
    set_json_version(run_dir / SUMMARY, newer)
    refused(lambda: load_run(run_dir), run_dir / SUMMARY, newer, run_summary.VERSION)
    monkeypatch.setattr(run_summary, "VERSION", newer)
    assert load_run(run_dir).summary.status == "completed"


def test_a_newer_study_yaml_is_refused_and_an_older_one_read(study, monkeypatch):
    newer = study_mod.STUDY_FORMAT + 1
    set_study_format(study, f"{newer}.0")  # a MAJOR.MINOR version counts by its major part
    refused(lambda: Study.load(study), study / STUDY_YAML, f"{newer}.0", study_mod.STUDY_FORMAT)
    set_study_format(study, f"{study_mod.STUDY_FORMAT}.3")  # a newer minor: additions only, read
    assert len(Study.load(study).rungs) == 5
    set_study_format(study, newer)
    monkeypatch.setattr(study_mod, "STUDY_FORMAT", newer)
    loaded = Study.load(study)
    assert len(loaded.rungs) == 5 and loaded.problems == []


def test_a_newer_scaling_json_is_refused_and_an_older_one_read(study, monkeypatch):
    path = saved_scaling(study)
    newer = scaling.VERSION + 1
    set_json_version(path, newer)
    refused(lambda: ScalingResult.load(study), path, newer, scaling.VERSION)
    monkeypatch.setattr(scaling, "VERSION", newer)
    assert [p.replicas for p in ScalingResult.load(study).points] == [1, 2]


@pytest.mark.parametrize("command", ["report", "compare"])
def test_the_cli_says_which_file_is_newer_and_exits_2(study, command, capsys):
    set_study_format(study, 7)
    set_events_version(baseline(study), 7)
    assert cli.main([command, str(study)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "is format version 7, written by a newer tfturbo" in err
    assert err.endswith("upgrade tfturbo (pip install --upgrade tfturbo) to open it")


def test_the_rule_reads_every_version_shape():
    for found in (None, 0, 1, "1", "1.9", 1.0, "v-next", True, [2]):
        check_version(found, 1, "x.json")  # older, current, or no readable version: read
    for found in (2, "2", "2.0", 2.0):
        with pytest.raises(FormatVersionError):
            check_version(found, 1, "x.json")
