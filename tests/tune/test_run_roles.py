"""A run's role in its trial (its arm, its replicate; a training of the reference from another seed) comes from
what study.yaml recorded for it (`Rung.roles`), never from its folder's name; a study written before tfturbo
recorded roles still reads, its runs' roles taken from their names as they were made (`rung_run_names`)."""

from __future__ import annotations

import json
from pathlib import Path

from tfturbo.run_summary import RunSummary
from tfturbo.runfiles import RUNS_DIR
from tfturbo.settings import RunSettings
from tfturbo.trials.runs import RunRole
from tfturbo.trials.speed import SpeedRule
from tfturbo.trials.trial import Trial
from tfturbo.tune.engine import record_runs, seed_references
from tfturbo.tune.study import Rung, Study, role_in_name, rung_run_names

from tests.trials.test_trial_engine import recorded

BASE = RunSettings("builtin:mlp", batch_size=64, steps=30, val_every=10, seed=1)


def seed_run(study: Path, name: str, seed: int) -> None:
    """A completed full-length run of the baseline's configuration from `seed`, with per-example results."""
    folder = study / RUNS_DIR / name
    folder.mkdir(parents=True)
    summary = {"status": "completed", "settings": BASE.with_(seed=seed).to_dict(),
               "paired_validation": {"file": "paired_validation.npz"}}
    (folder / "summary.json").write_text(json.dumps(summary), encoding="utf-8")


def baseline() -> Rung:
    return Rung("01-baseline", "baseline", BASE, run=f"{RUNS_DIR}/01-baseline",
                summary=RunSummary.from_dict({"status": "completed", "settings": BASE.to_dict()}))


def test_a_rungs_trial_records_each_runs_role_in_study_yaml_and_reads_it_back(tmp_path):
    trial = Trial(BASE, BASE.with_(jit_compile=True), SpeedRule(2, 2, steady_s=0), names=rung_run_names("02-xla"),
                  share_process=False)
    while (planned := trial.next_run()) is not None:  # two pairs, each run on its own
        trial.record(planned, recorded(planned.settings), None)
    rung = Rung("02-xla", "xla", BASE.with_(jit_compile=True), run=f"{RUNS_DIR}/02-xla")
    record_runs(rung, trial)
    assert rung.roles == {"02-xla": RunRole("b", 1), "02-xla.a1": RunRole("a", 1),
                          "02-xla.a2": RunRole("a", 2), "02-xla.b2": RunRole("b", 2)}

    study = Study(tmp_path, "builtin:mlp", {})
    study.rungs = [baseline(), rung]
    study.save()
    again = Study.load(tmp_path).rungs[1]
    assert again.roles == rung.roles and again.replicates == rung.replicates
    assert study.run_roles()["02-xla.a2"] == ("02-xla", RunRole("a", 2))


def test_the_seed_runs_a_trial_is_judged_against_are_the_ones_recorded_as_seed_runs_whatever_their_names(tmp_path):
    seed_run(tmp_path, "02-mixed.a0", 1001)  # named like a seed run, recorded as A's first run: not one
    seed_run(tmp_path, "02-mixed.extra", 2001)  # a name that says nothing, recorded as a seed run: one
    seed_run(tmp_path, "03-xla.a0", 3001)  # the rung's own seed run: never its own reference
    recorded = {"02-mixed.a0": ("02-mixed", RunRole("a", 1)), "02-mixed.extra": ("02-mixed", RunRole("a", -1)),
                "03-xla.a0": ("03-xla", RunRole("a", 0))}
    found = seed_references(tmp_path, baseline(), "03-xla", recorded)
    assert [path.name for _, path in found if path is not None] == ["02-mixed.extra"]


def test_a_study_written_before_roles_were_recorded_takes_them_from_the_names_its_trials_gave(tmp_path):
    seed_run(tmp_path, "02-mixed.a0", 1001)
    seed_run(tmp_path, "02-mixed.a-1", 2001)
    seed_run(tmp_path, "02-mixed.a1", 1)
    found = seed_references(tmp_path, baseline(), "03-xla")
    assert sorted(path.name for _, path in found if path is not None) == ["02-mixed.a-1", "02-mixed.a0"]
    old = Rung("02-mixed", "mixed_precision", BASE, replicates=["02-mixed", "02-mixed.a1", "02-mixed.a0"])
    assert [old.role(n) for n in old.replicates] == [RunRole("b", 1), RunRole("a", 1), RunRole("a", 0)]
    names = rung_run_names("02-mixed")
    assert all(role_in_name(names(arm, k)) == ("02-mixed", RunRole(arm, k)) for arm in "ab" for k in (-1, 0, 1, 2))
