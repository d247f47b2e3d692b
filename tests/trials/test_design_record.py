"""The trial's design is data (study.yaml's `design_record`), worded in one place (`trials.design`); nothing
reads a figure back out of the words, and a study.yaml from before the record still reads and reports."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.tune.test_study import gpu_like
from tests.tune.tune_fakes import FakeBackend, summary
from tfturbo.report.model import gather
from tfturbo.trials.design import PAIRED, SPEED_ONLY, Design, Lengths, study_words
from tfturbo.tune.ladder import Ladder, TuneOptions
from tfturbo.tune.study import Study


def paired(pairs: int, measured: float | None) -> Design:
    return Design(pairs, PAIRED, ("b",), Lengths(96, 48, 32, 64), 2.0, measured)


def test_a_study_of_trials_sized_apart_is_worded_with_their_ranges_from_the_records():
    text = study_words([(paired(4, 3.2), None), (paired(6, 7.0), None), (paired(3, 3.0), None)])
    assert text.startswith("3 to 6 replicate pairs per trial (each row gives its own), each an A and a B run in "
                           "one process")
    assert "each arm measuring about 3–7 s of steady state (at least 2 s;" in text
    assert "B's first run trained 96 steps of A, 48 of B (3,072 samples each at batch 32 and 64)" in text
    one = paired(4, 3.2).words()
    assert one.startswith("4 replicate pairs,") and "measuring about 3 s of steady state" in one
    speed_only = Design(5, SPEED_ONLY, ("b", "a"), Lengths(100, 100), 2.0, None).words()
    assert "in their own processes" in speed_only and "sized for 2 s of steady state each" in speed_only


def test_the_record_round_trips_through_study_yaml_and_an_unreadable_one_is_none():
    record = paired(4, 3.2)
    assert Design.from_dict(yaml.safe_load(yaml.safe_dump(record.to_dict()))) == record
    assert Design.from_dict(None) is None and Design.from_dict({"pairs": "x", "lengths": {}}) is None


def test_a_study_yaml_from_before_the_record_still_reads_and_reports(tmp_path):
    study = Ladder(TuneOptions("builtin:fake", tmp_path / "s", steps=100, max_batch_scale=2),
                   runner=FakeBackend(gpu_like(summary), recommended="mixed_bfloat16"), say=lambda line: None).run()
    new = gather(study.path)
    recorded = yaml.safe_load((study.path / "study.yaml").read_text(encoding="utf-8"))
    assert all(e.get("design_record") for e in recorded["ladder"][1:] if e.get("speed"))
    for entry in recorded["ladder"]:  # as an older tfturbo wrote it: the words only, no record, no figure
        entry.pop("design_record", None)
        entry.pop("steady_s", None)
        if entry.get("design"):
            entry["design"] = entry["design"].replace("3 replicate pairs,", "3 replicate pair(s),")
    (study.path / "study.yaml").write_text(yaml.safe_dump(recorded, sort_keys=False), encoding="utf-8")

    old = Study.load(Path(study.path))
    decided = [r for r in old.rungs if r.decision is not None and r.kind != "baseline"]
    assert decided and all(r.decision.design_record is None and r.decision.steady_s is None for r in decided)
    assert [(r.name, r.kept, r.decision.reason) for r in decided] == \
        [(r.name, r.kept, r.decision.reason) for r in study.rungs if r.decision is not None and r.kind != "baseline"]
    report = gather(study.path)
    assert report.design.startswith("3 replicate pair(s), each an A and a B run")  # its words, as written
    assert [r.headline.text() for r in report.rungs if r.headline] == \
        [r.headline.text() for r in new.rungs if r.headline]


def test_the_seed_runs_are_said_as_this_trials_an_earlier_trials_or_the_studys():
    """A trial's words say who trained the reference's seed runs; the report's study-wide sentence says they were
    trained once for the study (its first trial's "by this trial" read as if every trial trained them)."""
    from dataclasses import replace

    from tfturbo.trials.verdict import AccuracyVerdict

    acc = AccuracyVerdict("val_accuracy", 0.0, (-0.01, 0.01), "within tolerance", 600, True, [960, 1280, 1600])
    first = replace(paired(4, 3.2), accuracy_points=3, noise_seeds=(1001, 2001), seed_runs=2)
    later = replace(first, seed_runs=0)
    assert "trained again from seed 1001, 2001 (by this trial)," in first.words(acc)
    assert "trained again from seed 1001, 2001 (by an earlier trial of the study)," in later.words(acc)
    study = study_words([(first, acc), (later, acc)])
    assert "trained again from seed 1001, 2001 (once for the study, by its first trial)," in study
