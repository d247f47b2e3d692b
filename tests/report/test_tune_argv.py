"""The report's whole-study command repeats the study: parsed by `tfturbo tune`, it gives the options the study
recorded (a `--steady-s 0` study's command dropped the flag and would have rerun with speed-only pairs)."""

from __future__ import annotations

import argparse
from pathlib import Path

from tfturbo.cli_args import parse_args
from tfturbo.commands import tune as tune_command
from tfturbo.tune.options import TuneOptions, rerun_argv


def reparsed(options: TuneOptions) -> dict:
    argv = rerun_argv(options.workload, options.to_dict(), str(options.out))
    assert argv[:2] == ["tfturbo", "tune"]
    parser = argparse.ArgumentParser()
    tune_command.add_arguments(parser)
    return tune_command.options_from_args(parse_args(parser, argv[2:])).to_dict()


def test_the_rerun_command_gives_back_the_options_the_study_recorded(tmp_path):
    for options in (TuneOptions("builtin:mlp", Path("rerun"), steps=60, steady_s=0, min_replicates=2,
                                max_replicates=4, stages=("mixed_precision", "xla")),
                    TuneOptions("builtin:mlp", Path("rerun"), steps=120, steady_s=1.5, seed=7, batch_size=32,
                                script_args=["--lr", "0.1"])):
        assert reparsed(options) == options.to_dict()
