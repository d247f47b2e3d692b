"""The report's Scaling section: shown from a study's scaling/scaling.json, absent without one."""

from __future__ import annotations

from report_fixtures import pdf_text
from tfturbo.report import write_report
from tfturbo.scaling import ScalingPoint, ScalingResult, findings_for, scaling_dir


def flat(text: str) -> str:
    return " ".join(text.split())


def scaling_result() -> ScalingResult:
    points = [ScalingPoint(1, 1000.0, [950.0, 1050.0], 1.0, [1.0, 1.0], 1.0, [1.0, 1.0], 3),
              ScalingPoint(2, 1300.0, [1200.0, 1400.0], 1.3, [1.2, 1.4], 0.65, [0.6, 0.7], 3)]
    return ScalingResult("builtin:transformer", "mirrored", 64, points,
                         [f.to_dict() for f in findings_for(points, "mirrored")])


def test_a_study_with_a_scaling_document_shows_the_table_findings_and_what_it_means(study):
    scaling_result().save(scaling_dir(study))
    text = flat(pdf_text(write_report(study)))
    section = text[text.index("Scaling Strategy mirrored"):]
    assert "64 samples per replica per step" in section
    assert "Replicas Samples/s [95% CI] Efficiency [95% CI] Replicate pairs" in section
    assert "1,300 [1,200, 1,400] 0.65 [0.60, 0.70]" in section
    assert "At 2 replicas (mirrored) the job trains 1.30× as fast as on one, an efficiency of 0.65" in section
    assert "scales poorly" in section
    assert "SCALING_INEFFICIENT: 2 replicas (mirrored)" in section and "prefetch(tf.data.AUTOTUNE)" in section


def test_a_study_without_one_has_no_scaling_section(study):
    text = flat(pdf_text(write_report(study)))
    assert "Scaling Strategy" not in text and "SCALING_INEFFICIENT" not in text


def test_an_unreadable_scaling_document_is_a_warning_not_a_section(study):
    folder = scaling_dir(study)
    folder.mkdir()
    (folder / "scaling.json").write_text("{not json")
    text = flat(pdf_text(write_report(study)))
    assert "Scaling Strategy" not in text and "scaling: scaling.json is corrupt" in text
