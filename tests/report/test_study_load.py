"""Study.load: study.yaml read back into the typed study that wrote it, and as much of a damaged one as is valid."""

from __future__ import annotations

import yaml

from tfturbo.run_summary import RunSummary
from tfturbo.runfiles import STUDY_YAML
from tfturbo.settings import RunSettings
from tfturbo.trials.verdict import TrialVerdict
from tfturbo.tune.study import Study


def read(study) -> dict:
    return yaml.safe_load((study / STUDY_YAML).read_text())


def write(study, data: dict) -> None:
    (study / STUDY_YAML).write_text(yaml.safe_dump(data))


def test_save_load_save_gives_the_same_document(study):
    before = read(study)
    loaded = Study.load(study)
    loaded.save()
    assert read(study) == before and loaded.problems == []


def test_rungs_come_back_typed_with_their_runs_summaries(study):
    loaded = Study.load(study)
    assert [r.name for r in loaded.rungs] == ["01-baseline", "02-mixed_bfloat16", "03-xla", "04-larger_batch",
                                              "05-confirmation"]
    xla = loaded.rungs[2]
    assert isinstance(xla.settings, RunSettings) and xla.settings.jit_compile
    assert isinstance(xla.decision, TrialVerdict) and xla.kept and xla.decision.speed.verdict == "faster"
    assert xla.summary.status == "completed" and xla.steps_completed == 60  # read from runs/03-xla
    assert loaded.recommended.batch_size == 128 and loaded.recommended_rung == "04-larger_batch"
    assert loaded.audit[0]["code"] == "DIM_NOT_MULTIPLE_OF_8"


def test_keys_a_newer_version_wrote_are_kept_and_written_back(study):
    data = read(study)
    data["energy"] = {"joules": 12.5}
    data["ladder"][1]["power_w"] = 210
    write(study, data)
    loaded = Study.load(study)
    loaded.save()
    again = read(study)
    assert again["energy"] == {"joules": 12.5} and again["ladder"][1]["power_w"] == 210 and loaded.problems == []


def test_a_mistyped_key_is_named_and_the_rest_still_loads(study):
    data = read(study)
    data["status"] = ["completed"]
    data["ladder"][2]["kept"] = "yes"
    data["ladder"][3]["settings"] = {"policy": "float128"}
    data["ladder"].insert(1, "not an entry")
    write(study, data)
    loaded = Study.load(study)
    assert loaded.status == "" and len(loaded.rungs) == 5
    assert any("status is list" in p and "not a text" in p for p in loaded.problems)
    assert any("ladder[3]: kept is str 'yes', not a true/false" in p for p in loaded.problems)
    assert any("04-larger_batch: the settings are not valid (unknown precision policy 'float128'" in p
               for p in loaded.problems)
    assert loaded.rungs[3].settings.batch_size == 128  # its run's own settings, from summary.json
    assert any("ladder[1] is not a mapping" in p for p in loaded.problems)


def test_a_missing_or_corrupt_study_yaml_loads_as_a_study_without_rungs(study):
    (study / STUDY_YAML).write_text("ladder: [unclosed\n  : :")
    corrupt = Study.load(study)
    (study / STUDY_YAML).unlink()
    missing = Study.load(study)
    assert corrupt.rungs == [] and "study.yaml is corrupt" in corrupt.problems[0]
    assert missing.rungs == [] and missing.problems == ["study.yaml is missing"]


def test_a_run_path_outside_the_study_is_never_read(study, tmp_path):
    data = read(study)
    data["ladder"][1]["run"] = "../../elsewhere"
    write(study, data)
    loaded = Study.load(study)
    assert loaded.rungs[1].summary is None or loaded.rungs[1].summary == RunSummary(status=loaded.rungs[1].summary.status)
    assert any("is not under runs/" in p for p in loaded.problems)


def test_a_report_of_a_study_with_a_mistyped_field_renders_and_names_it(study):
    from report_fixtures import pdf_text
    from tfturbo.report import write_report

    data = read(study)
    data["ladder"][2]["compared_with"] = 3
    data["recommended_rung"] = {"name": "04-larger_batch"}
    write(study, data)
    text = " ".join(pdf_text(write_report(study)).split())
    assert "study.yaml: ladder[2]: compared_with is int 3, not a text; ignored" in text
    assert "study.yaml: recommended_rung is dict" in text
    assert "03-xla" in text and "04-larger_batch" in text  # every rung is still in the table
