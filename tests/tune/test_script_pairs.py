"""A training script's study measures speed in paired processes (issue 40): both arms run the script in one
backend process (`run-pair`), so a speed replicate no longer costs two processes that each start, run the script
to its fit(), build and compile alone."""

from __future__ import annotations

import json
import re

from tfturbo.tune.ladder import Ladder, TuneOptions

from tests.tune.tune_fakes import FakeBackend, summary
from test_study import gpu_like


def test_a_scripts_trials_measure_speed_in_paired_processes_and_train_only_b_the_full_length(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("print('trains')\n")
    runner = FakeBackend(gpu_like(summary), recommended="mixed_bfloat16", available_memory=8 << 30)
    opts = TuneOptions(str(script), tmp_path / "s", steps=100, min_replicates=3, max_replicates=4)
    Ladder(opts, runner=runner).run()
    commands = [(command, argv) for command, argv in runner.calls if command in ("run", "run-pair")]
    pairs = [argv for command, argv in commands if command == "run-pair"]
    arms = [json.loads(argv[i + 1]) for argv in pairs for i, a in enumerate(argv) if a == "--arm"]
    in_pairs = {_name(arm) for arm in arms}  # the fake answers each arm as a "run" call of its own too
    runs = [_name(argv) for command, argv in commands if command == "run" and _name(argv) not in in_pairs]
    assert pairs, "the scenario: at least one trial measured speed"
    # every separate run is a full-length one (the baseline, each rung's B, the reference from other seeds):
    # no speed-only run has a process of its own, and no trial trains A's reference configuration again
    assert not [name for name in runs if re.search(r"\.[ab][1-9]\d*$", name)], runs
    assert len(arms) == 2 * len(pairs) and all(str(script) in arm and "--speed-only" in arm for arm in arms)


def _name(argv: list[str]) -> str:
    return argv[argv.index("--out") + 1].rsplit("/", 1)[-1]
