"""A saved model only where a run may be kept (issue 40): a rung's own run saves checkpoint/model.keras; its
reference's runs, the seed replicates, the speed pairs, the confirmation and a scaling measurement save none."""

from __future__ import annotations

import json

from tfturbo.cli_args import parse_run_settings
from tfturbo.scaling import ScalingMeasurement
from tfturbo.settings import RunSettings
from tfturbo.tune.ladder import Ladder, TuneOptions

from tests.tune.tune_fakes import FakeBackend, summary
from test_study import gpu_like


def run_command_lines(runner):
    """(run folder name, `run` arguments) of every run the study asked for, a paired process's two arms each."""
    out = []
    for command, argv in runner.calls:
        arms = [json.loads(argv[i + 1]) for i, a in enumerate(argv) if a == "--arm"] if command == "run-pair" \
            else [argv] if command == "run" else []
        out += [(arm[arm.index("--out") + 1].rsplit("/", 1)[-1], arm) for arm in arms]
    return out


def test_only_a_rungs_own_run_that_may_be_kept_saves_its_model(tmp_path):
    runner = FakeBackend(gpu_like(summary), recommended="mixed_bfloat16", available_memory=8 << 30)
    Ladder(TuneOptions("builtin:fake", tmp_path / "s", steps=100, min_replicates=2, max_replicates=3),
           runner=runner).run()
    runs = run_command_lines(runner)
    saving = sorted(name for name, argv in runs if "--no-model" not in argv and "--speed-only" not in argv)
    confirmation = [name for name, _ in runs if "confirmation" in name]
    assert confirmation, "the scenario: the recommendation confirmed against the baseline"
    # the baseline's and each lever's own run; never the confirmation's (its configuration's model is its rung's)
    assert saving == sorted(name for name, _ in runs if "." not in name and "+" not in name
                            and "confirmation" not in name), saving
    assert all(not parse_run_settings(argv).speed_only and "." not in name for name, argv in runs
               if name in saving)


def test_a_scaling_measurement_saves_no_model():
    scaling = ScalingMeasurement(RunSettings("builtin:mlp", batch_size=64, steps=40), "mirrored", [1, 2])
    planned = scaling.next_run()
    assert planned is not None and planned.settings.no_model
    scaling.record(planned, {**summary(10.0), "settings": planned.settings.to_dict()}, None)
    following = scaling.next_run()
    assert following is not None and following.arm == "b" and following.settings.no_model
