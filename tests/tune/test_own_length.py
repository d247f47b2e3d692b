"""`tfturbo tune SCRIPT` without --steps trains the script's own length (its epochs × steps per epoch), as the
wizard does; with --steps, or for a builtin, the length given (default 300). A resumed study keeps the length."""

from __future__ import annotations

import argparse

from tfturbo.commands import tune as tune_command
from tfturbo.own_length import OwnLength
from tfturbo.settings import DEFAULT_STEPS
from tfturbo.tune.ladder import Ladder, TuneOptions
from tfturbo.tune.study import Study, StudyStatus

from conftest import FakeBackend


class ScriptBackend(FakeBackend):
    """The fake backend whose audit reads a script that trains 3 epochs of 32 steps on its own."""

    def __call__(self, command, argv, on_event=None, stderr_path=None, cancel=None, env=None):
        answer = super().__call__(command, argv, on_event, stderr_path, cancel, env)
        if command == "audit":
            answer.document["own_length"] = {"epochs": 3, "steps_per_epoch": 32, "steps": 96}
        return answer


def study_steps(make_summary, tmp_path, resume: bool = False, **options) -> tuple[list[int], Study, list[str]]:
    backend = ScriptBackend(lambda s: make_summary(10.0, 0.9, steps=s.steps, batch_size=s.batch_size or 64))
    lines: list[str] = []
    study = Ladder(TuneOptions("builtin:fake", tmp_path / "s", stages=("mixed_precision",), min_replicates=2,
                               max_replicates=2, steady_s=0, **options), runner=backend, say=lines.append,
                   resume=resume).run()
    return [s.steps for s in backend.runs], study, lines


def test_without_steps_every_full_length_run_trains_the_scripts_own_length(tmp_path, make_summary):
    steps, study, lines = study_steps(make_summary, tmp_path, own_length=True)
    assert steps and set(steps) == {96}
    assert study.options["steps"] == 96 and Study.load(study.path).options["steps"] == 96
    assert "length: every run trains the script's own length: 3 epochs of 32 steps = 96 steps " \
           "(--steps N for another length)" in lines


def test_a_length_given_is_kept(tmp_path, make_summary):
    steps, study, lines = study_steps(make_summary, tmp_path, steps=120)
    assert set(steps) == {120} and not any(line.startswith("length:") for line in lines)


def test_the_command_line_asks_for_the_own_length_only_of_a_script_without_steps(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("import keras\nmodel = keras.Sequential()\nmodel.fit(x, y, epochs=3)\n")
    parser = argparse.ArgumentParser()
    tune_command.add_arguments(parser)

    def options(*argv: str) -> TuneOptions:
        return tune_command.options_from_args(parser.parse_args([*argv, "--out", str(tmp_path / "out")]))

    assert options(str(script)).own_length and options(str(script)).steps == DEFAULT_STEPS
    assert not options(str(script), "--steps", "50").own_length
    assert not options("builtin:mlp").own_length


def test_a_resumed_study_keeps_the_length_its_audit_read(tmp_path, make_summary):
    steps, study, _ = study_steps(make_summary, tmp_path, own_length=True)
    study.status = StudyStatus.INTERRUPTED  # killed after its audit: the same command (no --steps) continues it
    study.save()
    again, resumed, lines = study_steps(make_summary, tmp_path, resume=True, own_length=True)
    assert resumed.options["steps"] == 96 and resumed.status == StudyStatus.COMPLETED
    assert set(again) <= {96}


def test_the_words_of_a_length():
    assert OwnLength.of({"own_length": {"epochs": 1, "steps_per_epoch": 10, "steps": 10}}).words() == \
        "the script's own length: 1 epoch of 10 steps = 10 steps"
    assert OwnLength.of({"own_length": {"epochs": 0, "steps_per_epoch": 10}}) is None
    assert OwnLength.of({}) is None and OwnLength.of(None) is None
