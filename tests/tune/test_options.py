"""A study option is declared once (tfturbo/tune/options.py): its `tune` and `ab` flags, its study.yaml key, the
report's rerun command and the wizard's defaults all come from the declaration, and an older study.yaml reads."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import pytest

from tfturbo.cli_args import parse_args
from tfturbo.commands import ab as ab_command
from tfturbo.commands import tune as tune_command
from tfturbo.trials.verdict import Tolerance
from tfturbo.tune import options as options_module
from tfturbo.tune.options import AB, TUNE, TuneOptions, option, rerun_argv, values_from_args
from tfturbo_gui.session import WizardSession


@dataclass
class WithWarmUp(TuneOptions):
    """TuneOptions with one more option, declared as a new one would be: one field."""

    warm_up_s: float = option(5.0, flag="--warm-up-s", parse=float, ab=True, key="replicates.warm_up_s",
                              help="seconds of warm-up before a {each}'s steady state")


def parser_of(command, monkeypatch) -> argparse.ArgumentParser:
    monkeypatch.setattr(options_module, "TuneOptions", WithWarmUp)  # the module's declarations, with the new one
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    return parser


def test_a_new_option_is_one_declaration_in_both_commands_study_yaml_and_the_rerun_command(monkeypatch):
    tune = parse_args(parser_of(tune_command, monkeypatch), ["builtin:mlp", "--out", "s", "--warm-up-s", "2.5"])
    ab = parse_args(parser_of(ab_command, monkeypatch), ["builtin:mlp", "--b", "jit=on", "--warm-up-s", "7"])
    assert values_from_args(ab, AB)["warm_up_s"] == 7.0
    options = WithWarmUp("builtin:mlp", Path("s"), **values_from_args(tune, TUNE))
    assert options.warm_up_s == 2.5

    recorded = options.to_dict()
    assert recorded["replicates"]["warm_up_s"] == 2.5 and recorded["replicates"]["min"] == options.min_replicates
    assert WithWarmUp.from_dict("builtin:mlp", Path("s"), recorded).to_dict() == recorded

    argv = rerun_argv("builtin:mlp", recorded, "s-rerun")
    assert argv[argv.index("--warm-up-s") + 1] == "2.5"
    again = parse_args(parser_of(tune_command, monkeypatch), argv[2:])
    assert WithWarmUp("builtin:mlp", Path("s"), **values_from_args(again, TUNE)).to_dict() == recorded


def test_both_commands_take_the_shared_options_with_the_same_defaults():
    parsed = {}
    for command, argv in ((tune_command, ["w", "--out", "s"]), (ab_command, ["w", "--b", "jit=on"])):
        parser = argparse.ArgumentParser()
        command.add_arguments(parser)
        parsed[command] = parse_args(parser, argv + ["--min-replicates", "4", "--steady-s", "0", "--seed", "9",
                                                     "--judge-on", "loss", "--val-examples", "512"])
    tune = values_from_args(parsed[tune_command], TUNE)
    ab = values_from_args(parsed[ab_command], AB)
    assert {k: tune[k] for k in ab} == ab
    assert ab["min_replicates"] == 4 and ab["steady_s"] == 0 and ab["seed"] == 9 and ab["val_examples"] == 512
    assert ab["tolerance"] == Tolerance(judge_on="loss")
    assert "both_policies" in tune and "both_policies" not in ab  # the 16-bit policies are a study's, not a trial's
    trial = ab_command.build_trial(parsed[ab_command].__class__(**{**vars(parsed[ab_command]), "steps": 60}))
    assert (trial.rule.min_pairs, trial.rule.steady_s, trial.tolerance.judge_on) == (4, 0, "loss")


def test_an_older_study_yaml_reads_with_the_defaults_for_what_it_lacks():
    old = {"steps": 60, "seed": 7, "batch_size": None, "val_every": 12, "val_examples": 256,
           "replicates": {"min": 2, "max": 4}, "policy": None, "both_policies": False, "auto_fix": False,
           "max_batch_scale": 4, "script_args": [], "tolerance": {"accuracy_pp": 1, "judge_on": "???"},
           "stages": ["mixed_precision"]}
    options = TuneOptions.from_dict("builtin:mlp", Path("s"), old)
    assert (options.steps, options.seed, options.min_replicates, options.max_replicates) == (60, 7, 2, 4)
    assert options.steady_s == TuneOptions("w", Path()).steady_s and options.auto_fix is False
    assert options.tolerance == Tolerance(accuracy_pp=1, judge_on="metric")
    assert options.stages == ("mixed_precision",)
    argv = rerun_argv("builtin:mlp", old, "s-rerun")
    assert "--no-fixes" in argv and "--judge-on" not in argv and argv[argv.index("--stages") + 1] == "mixed_precision"


def test_the_wizard_starts_from_the_declared_defaults_and_changes_options_through_the_engine(tmp_path):
    defaults = TuneOptions("builtin:mlp", tmp_path)
    session = WizardSession("builtin:mlp")
    session.study_path = tmp_path / "study"
    assert session.options().to_dict() == TuneOptions("builtin:mlp", tmp_path / "study").to_dict()
    assert (session.steps, session.seed, session.steady_s) == (defaults.steps, defaults.seed, defaults.steady_s)
    session.ensure_study()
    engine = session.engine
    assert engine is not None
    engine.change_options(steps=120)
    assert engine.opts.steps == 120 and engine.study.options["steps"] == 120
    with pytest.raises(TypeError, match="not a study option: stepz"):
        engine.change_options(stepz=1)


def test_a_new_option_reaches_the_reports_rerun_command_and_the_wizards_defaults(tmp_path, monkeypatch):
    """The same one declaration (`WithWarmUp`) as the report and the wizard see it: the report's "whole study"
    command gives the recorded value back, the wizard starts from the declared default, and the wizard changes
    it through the engine, which writes it to study.yaml under its declared key."""
    from tfturbo.report.model import gather
    from tfturbo.tune.study import Study
    from tfturbo_gui import session as session_module

    monkeypatch.setattr(options_module, "TuneOptions", WithWarmUp)
    monkeypatch.setattr(session_module, "TuneOptions", WithWarmUp)
    recorded = WithWarmUp("builtin:mlp", tmp_path / "s", warm_up_s=2.5).to_dict()
    Study(tmp_path / "s", "builtin:mlp", recorded).save()
    (_, command), *_ = gather(tmp_path / "s").commands
    assert "--warm-up-s 2.5" in command

    session = WizardSession("builtin:mlp")
    session.study_path = tmp_path / "study"
    assert session.options().warm_up_s == 5.0
    session.ensure_study()
    assert session.engine is not None
    assert session.engine.study.options["replicates"]["warm_up_s"] == 5.0
    session.engine.change_options(warm_up_s=7.5)
    assert session.engine.study.options["replicates"]["warm_up_s"] == 7.5
