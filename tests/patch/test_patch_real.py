"""For real: `tfturbo tune` of a plain top-level script writes changes.patch, git applies it to an untouched copy,
and the patched script, run as written by the real backend, measures what the patch claims (two real backend
uses, shared by the tests of each: one short study, one run of a patched copy)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import run_cli  # the suite runs from the repository root
from tfturbo.backend_client import env_with_path, run_backend
from tfturbo.patch import changes as C
from tfturbo.patch.build import make_patch
from tfturbo.patch.check import CHECKED, check_argv, compare
from tfturbo.patch.document import ChangesPatch
from tfturbo.run_summary import RunSummary
from tfturbo.runfiles import SUMMARY
from tfturbo.settings import RunSettings

pytestmark = pytest.mark.slow
SCRIPTS = Path(__file__).parent / "scripts"


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> tuple[Path, Path, dict]:
    """`tfturbo tune` of constants_numpy.py (BATCH = 100) told to study batch 64: whatever its stages keep, the
    recommendation trains at 64, so the script's BATCH is changed and the patched copy is checked. Only the input
    stage is selected (nothing to measure on a compute-bound job): environment, audit, probe, baseline, check."""
    root = tmp_path_factory.mktemp("real")
    script = root / "project" / "train.py"
    script.parent.mkdir()
    shutil.copy(SCRIPTS / "constants_numpy.py", script)
    out = root / "study"
    proc = run_cli("tune", str(script), "--out", str(out), "--steps", "40", "--batch-size", "64", "--stages",
                   "input_pipeline", "--steady-s", "0", "--min-replicates", "2", "--max-replicates", "2", "--no-report",
                   "--json", timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return script, out, json.loads(proc.stdout)


def test_tune_of_a_script_writes_a_patch_git_applies_to_an_untouched_copy(study, tmp_path):
    script, out, doc = study
    text = (out / "changes.patch").read_text()
    assert text == doc["snippet"] and "-BATCH = 100  # the batch size\n+BATCH = 64  # the batch size" in text
    untouched = tmp_path / "untouched"
    untouched.mkdir()
    shutil.copy(SCRIPTS / "constants_numpy.py", untouched / "train.py")
    subprocess.run(["git", "apply", "--check", str(out / "changes.patch")], cwd=untouched, check=True)
    subprocess.run(["git", "apply", str(out / "changes.patch")], cwd=untouched, check=True)
    assert (untouched / "train.py").read_text() == (out / "patched" / "train.py").read_text()
    assert script.read_text() == (SCRIPTS / "constants_numpy.py").read_text()  # the user's file untouched


def test_the_patched_script_runs_and_measures_the_recommended_settings(study):
    _script, out, doc = study
    checked = json.loads((out / "patched" / "check" / SUMMARY).read_text())
    assert checked["status"] == "completed" and checked["settings"]["batch_size"] == 64
    assert doc["patch"]["check"]["status"] == CHECKED, doc["patch"]["check"]
    assert (out / "changes.patch").read_text().splitlines()[1].startswith(
        "# checked: the patched script runs the recommended settings (float32, XLA off, batch 64, 1 step per call)")


@pytest.fixture(scope="module")
def patched_run(tmp_path_factory) -> tuple[RunSettings, dict]:
    """A patched copy that sets a 16-bit policy, XLA, steps per call and the batch, run as the study's check runs
    it (no flag for any of them)."""
    root = tmp_path_factory.mktemp("patched")
    script = root / "project" / "train.py"
    script.parent.mkdir()
    shutil.copy(SCRIPTS / "argparse_tfdata.py", script)
    rec = RunSettings(str(script), policy="mixed_bfloat16", jit_compile=True, batch_size=40, steps_per_execution=2)
    patch = make_patch(script, [C.Policy(why="policy", name=rec.policy),
                                C.CompileArgument(why="xla", name="jit_compile", value=True, unsaid=False),
                                C.CompileArgument(why="spe", name="steps_per_execution", value=2, unsaid=1),
                                C.BatchSize(why="batch", size=40), C.Float32Head(why="head")])
    assert patch.placed == ["policy", "xla", "spe", "batch", "head"]
    ChangesPatch(rec.label(), patch).write(root / "study")
    copy, run_dir = root / "study" / "patched" / "train.py", root / "study" / "patched" / "check"
    result = run_backend("run", check_argv(copy, run_dir, rec), env=env_with_path([str(script.parent)]))
    assert result.document is not None, result.error
    return rec, result.document


def test_a_patched_copy_runs_as_written_with_its_own_batch(patched_run):
    rec, summary = patched_run
    assert summary["status"] == "completed" and summary["settings"]["batch_size"] == 40  # the argparse default


def test_a_patched_copy_measures_the_policy_xla_and_steps_per_call_it_says(patched_run):
    rec, summary = patched_run
    checked = compare(RunSummary.from_dict(summary), rec)
    assert checked.status == CHECKED, checked.reason
