"""`tfturbo tune SCRIPT` without --steps trains the script's own length (its epochs × steps per epoch), as the
wizard does; with --steps, or for a builtin, the length given (default 300). A resumed study keeps the length."""

from __future__ import annotations

import argparse

from tfturbo.commands import tune as tune_command
from tfturbo.own_length import OwnLength
from tfturbo.settings import DEFAULT_STEPS, RunSettings
from tfturbo.tune.ladder import Ladder, TuneOptions
from tfturbo.tune.study import Study, StudyStatus

from tests.tune.tune_fakes import FakeBackend


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
    assert "length: every run trains the script's own length: 3 epochs of 32 steps = 96 steps; " \
           "--steps N for another length" in lines


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
    assert "length: every run trains 96 steps, as when the study began; --steps N for another length in a new " \
        "study" in lines  # the resumed output says the length too, not only the first


def test_the_words_of_a_length():
    assert OwnLength.of({"own_length": {"epochs": 1, "steps_per_epoch": 40, "steps": 40}}).words() == \
        "the script's own length: 1 epoch of 40 steps = 40 steps"
    short = OwnLength.of({"own_length": {"epochs": 1, "steps_per_epoch": 10, "steps": 10}})
    assert short.words() == "the script's own length: 1 epoch of 10 steps = 10 steps (at least 20 to measure)"
    assert short.run_steps == 20 and OwnLength(2, 29).run_steps == 58
    assert OwnLength.of({"own_length": {"epochs": 0, "steps_per_epoch": 10}}) is None
    assert OwnLength.of({}) is None and OwnLength.of(None) is None


class LengthBackend(FakeBackend):
    """The fake backend whose audit reads the `own` length of a script (None: it reports none)."""

    own: dict | None = None

    def __call__(self, command, argv, on_event=None, stderr_path=None, cancel=None, env=None):
        answer = super().__call__(command, argv, on_event, stderr_path, cancel, env)
        if command == "audit" and self.own is not None:
            answer.document["own_length"] = self.own
        return answer


def run_with_own(make_summary, tmp_path, own):
    backend = LengthBackend(lambda s: make_summary(10.0, 0.9, steps=s.steps, batch_size=s.batch_size or 64))
    backend.own = own
    lines: list[str] = []
    study = Ladder(TuneOptions("builtin:fake", tmp_path / "s", stages=("mixed_precision",), min_replicates=2,
                               max_replicates=2, steady_s=0, own_length=True), runner=backend,
                   say=lines.append).run()
    return [s.steps for s in backend.runs], study, lines


def test_a_very_short_own_length_trains_the_floor_the_wizard_trains_and_says_so(tmp_path, make_summary):
    """1 epoch of 8 steps: tune trained 8 steps (validating every step) where the wizard trains 20 — one rule."""
    from tfturbo.trials.sizing import MIN_STEADY_STEPS
    steps, study, lines = run_with_own(make_summary, tmp_path, {"epochs": 1, "steps_per_epoch": 8, "steps": 8})
    assert steps and min(steps) >= MIN_STEADY_STEPS and study.options["steps"] == MIN_STEADY_STEPS
    assert f"length: every run trains the script's own length: 1 epoch of 8 steps = 8 steps (at least " \
           f"{MIN_STEADY_STEPS} to measure); --steps N for another length" in lines


def test_a_script_whose_audit_reads_no_length_says_what_every_run_trains(tmp_path, make_summary):
    steps, study, lines = run_with_own(make_summary, tmp_path, None)
    assert set(steps) == {DEFAULT_STEPS}
    said = [line for line in lines if line.startswith("length:")]
    assert said == ["length: the audit could not read the script's own length (no fit() whose steps per epoch are "
                    f"known: steps_per_epoch=, or a dataset of known length); every run trains {DEFAULT_STEPS} "
                    "steps; --steps N for another length"]


def test_options_read_back_before_the_audit_let_the_validation_interval_follow_the_own_length(tmp_path):
    """A study killed before its audit recorded steps 300 and val_every 60 (300 // 5); continued from its
    study.yaml (the wizard's "continue"), the 60 stayed while the audit set 96 steps: 2 validation points."""
    recorded = TuneOptions("builtin:fake", tmp_path / "s", own_length=True).to_dict()
    assert recorded["val_every"] == 60  # 300 steps' default
    options = TuneOptions.from_dict("builtin:fake", tmp_path / "s", recorded)
    assert options.to_dict() == recorded  # read back unchanged: the same command still continues it
    options.steps = OwnLength(3, 32).run_steps  # what the audit sets
    assert options.base_settings().val_every == RunSettings(steps=96).effective_val_every() == 16
    given = TuneOptions.from_dict("builtin:fake", tmp_path / "s", {**recorded, "val_every": 7})
    given.steps = 96
    assert given.base_settings().val_every == 7  # an interval the user gave stays


def test_a_study_begun_before_tune_read_own_lengths_continues_with_the_same_command(tmp_path, make_summary):
    """`tfturbo tune train.py --out d` killed under the previous version recorded 300 steps and no own_length;
    the same command now asks for the own length, and refused: 'made with other options (own_length)'."""
    steps, study, _ = study_steps(make_summary, tmp_path)  # recorded as the previous version did
    assert "own_length" not in study.options and set(steps) == {DEFAULT_STEPS}
    study.status = StudyStatus.INTERRUPTED
    study.save()
    again, resumed, _ = study_steps(make_summary, tmp_path, resume=True, own_length=True)
    assert resumed.status == StudyStatus.COMPLETED and resumed.options["steps"] == DEFAULT_STEPS
    assert set(again) <= {DEFAULT_STEPS}


class DistillBackend(ScriptBackend):
    """A script whose audit measured its 2nd fit() call (a distiller's, after its teacher's)."""

    def __call__(self, command, argv, on_event=None, stderr_path=None, cancel=None, env=None):
        answer = super().__call__(command, argv, on_event, stderr_path, cancel, env)
        if command == "audit":
            answer.document["workload"] = {
                "spec": "distill.py", "name": "distill", "path": "/u/distill.py",
                "fit": {"call": 2, "line": 58, "model": "Distiller", "model_name": "distiller",
                        "calls_in_source": [{"line": 49, "code": "teacher.fit(x, y)"},
                                            {"line": 58, "code": "distiller.fit(x, y)"}]}}
        return answer


def test_the_fit_call_chosen_reaches_the_audit_the_probe_and_every_run_and_a_resumed_study(tmp_path, make_summary):
    """Issue 47: `tune --fit-call 2` measures a script's 2nd fit() in every command, says which call it is, and
    the study keeps the choice."""
    backend = DistillBackend(lambda s: make_summary(10.0, 0.9, steps=s.steps, batch_size=s.batch_size or 64))
    lines: list[str] = []
    study = Ladder(TuneOptions("builtin:fake", tmp_path / "s", stages=("mixed_precision",), min_replicates=2,
                               max_replicates=2, steady_s=0, fit_call=2), runner=backend, say=lines.append).run()
    assert backend.runs and {s.fit_call for s in backend.runs} == {2}
    for command, argv in backend.calls:
        if command in ("audit", "probe-input"):
            assert argv[argv.index("--fit-call") + 1] == "2", (command, argv)
    assert "measured: the 2nd fit() call of distill.py (line 58, Distiller 'distiller'); the script calls .fit( " \
           "at lines 49 and 58: --fit-call N measures the Nth" in lines
    recorded = Study.load(study.path)
    assert recorded.options["fit_call"] == 2
    assert TuneOptions.from_dict(recorded.workload, study.path, recorded.options).fit_call == 2
