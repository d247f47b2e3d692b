"""changes.patch: a patch git and patch(1) apply to an untouched copy, what its check says, the patched file saved."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tfturbo.run_summary import RunSummary
from tfturbo.errors import UserError
from tfturbo.patch import changes as C
from tfturbo.patch.build import make_patch
from tfturbo.patch.check import CHECK_FAILED, CHECKED, NOT_CHECKED, Check, check_argv, compare
from tfturbo.patch.document import ChangesPatch, save_patched
from tfturbo.settings import RunSettings

SCRIPTS = Path(__file__).parent / "scripts"
REC = RunSettings("train.py", policy="mixed_bfloat16", jit_compile=True, batch_size=128, steps_per_execution=4)


@pytest.fixture
def study(tmp_path):
    """A script of the user's and a study's changes.patch of it, with its patched copy."""
    script = tmp_path / "project" / "train.py"
    script.parent.mkdir()
    shutil.copy(SCRIPTS / "constants_numpy.py", script)
    patch = make_patch(script, [C.Policy(why="mixed_bfloat16 policy", name="mixed_bfloat16"),
                                C.BatchSize(why="batch 128", size=128),
                                C.ByHand(why="a custom loop scales its loss", snippet="loss = opt.scale_loss(loss)")])
    doc = ChangesPatch(REC.label(), patch, Check(CHECKED, "the patched script runs the recommended settings"))
    folder = tmp_path / "study"
    doc.write(folder)
    return script, folder, doc


def test_the_patch_applies_to_an_untouched_copy_with_git_and_patch(study, tmp_path):
    script, folder, doc = study
    text = (folder / "changes.patch").read_text()
    assert text == doc.text(folder)
    assert text.startswith("# tfturbo: the code changes for the recommended settings — mixed_bfloat16 + XLA, batch "
                           "128, 4 steps/call\n# checked: the patched script runs the recommended settings\n")
    assert f"# file: {script}\n" in text and "#   1. mixed_bfloat16 policy\n#   2. batch 128\n" in text
    # the wizard's Record page and the PDF show this text: no tfturbo command in it (issue 42 walk: "or write the
    # patched file elsewhere: tfturbo apply STUDY --write PATH" beside the page's "Save patched script…" button)
    assert "tfturbo apply" not in text and "--write" not in text
    # what is left to the user comes after the diff, as comments both tools skip
    assert text.rstrip().endswith("#   - a custom loop scales its loss — why: tfturbo does not rewrite this part of "
                                  "a script\n#       loss = opt.scale_loss(loss)")
    for tool in (["git", "apply"], ["patch", "-p1", "-i"]):
        if shutil.which(tool[0]) is None:
            continue
        copy = tmp_path / f"copy-{tool[0]}"
        copy.mkdir()
        shutil.copy(SCRIPTS / "constants_numpy.py", copy / "train.py")
        subprocess.run([*tool, str(folder / "changes.patch")], cwd=copy, check=True, capture_output=True)
        assert (copy / "train.py").read_text() == (folder / "patched" / "train.py").read_text() == doc.patch.patched


def test_a_file_without_a_final_newline_keeps_it_so(tmp_path):
    script = tmp_path / "t.py"
    script.write_text("import keras\nBATCH = 10\nmodel.fit(x, y, batch_size=BATCH)")
    doc = ChangesPatch("float32", make_patch(script, [C.BatchSize(why="b", size=16)]))
    doc.write(tmp_path / "s")
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "t.py").write_text(script.read_text())
    subprocess.run(["git", "apply", str(tmp_path / "s" / "changes.patch")], cwd=copy, check=True, capture_output=True)
    assert (copy / "t.py").read_text() == "import keras\nBATCH = 16\nmodel.fit(x, y, batch_size=BATCH)"


def test_no_change_says_so_and_writes_no_copy(tmp_path):
    script = tmp_path / "t.py"
    shutil.copy(SCRIPTS / "already_tuned.py", script)
    doc = ChangesPatch("mixed_float16 + XLA", make_patch(script, [C.Policy(why="mixed_float16", name="mixed_float16")]),
                       kept="mixed_float16 + XLA")
    doc.write(tmp_path / "s")
    assert doc.text() == ("# tfturbo: the code changes for the recommended settings — mixed_float16 + XLA\n"
                          "# No code changes: the measured ladder kept your current settings (mixed_float16 + XLA); "
                          "your script already says them.\n")
    assert not (tmp_path / "s" / "patched").exists() and doc.to_dict()["copy"] is None


def test_the_patched_file_is_saved_where_asked_and_never_over_a_changed_script(study, tmp_path):
    script, folder, doc = study
    out = save_patched(folder, doc.to_dict(), tmp_path / "elsewhere" / "train_tuned.py")
    assert out.read_text() == doc.patch.patched and script.read_text() == doc.patch.original
    script.write_text(script.read_text() + "# edited since\n")
    with pytest.raises(UserError, match="changed since the study made its patch"):
        save_patched(folder, doc.to_dict(), tmp_path / "again.py")
    with pytest.raises(UserError, match="changes nothing"):
        save_patched(folder, {**doc.to_dict(), "copy": "../../etc/passwd"}, tmp_path / "x.py")


def summary(optimizer=None, **settings):
    return RunSummary.from_dict({"status": "completed", "steps_completed": 16, "optimizer": optimizer,
                                 "settings": {"policy": "mixed_bfloat16", "jit_compile": True, "batch_size": 128,
                                              "steps_per_execution": 4, **settings}})


def test_the_check_compares_what_the_copy_ran_with_the_recommendation():
    ok = compare(summary(), REC, run="patched/check")
    assert ok.status == CHECKED and ok.reason.startswith("the patched script runs the recommended settings "
                                                         "(mixed_bfloat16, XLA on, batch 128, 4 steps per call)")
    # the run's folder is the check's `run`, not words of its reason (issue 42 walk: "16-step run (patched/check)")
    assert ok.run == "patched/check" and "patched/check" not in ok.reason
    bad = compare(summary(policy="float32", jit_compile=False), REC)
    assert bad.status == CHECK_FAILED
    assert bad.reason == "the patched script ran float32 where mixed_bfloat16 was recommended; XLA off where XLA on " \
                         "was recommended"
    failed = compare(RunSummary(status="failed", error={"message": "ModuleNotFoundError: No module named 'utils'"}),
                     REC)
    assert failed.status == NOT_CHECKED and "No module named 'utils'" in failed.reason
    assert compare(None, REC).status == NOT_CHECKED
    # the learning rate, when both runs recorded it: the baseline's own rate times the factor
    base = RunSummary(optimizer={"learning_rate": 0.001})
    assert compare(summary({"learning_rate": 0.002}), REC, 2.0, base).passed
    wrong = compare(summary({"learning_rate": 0.001}), REC, 2.0, base)
    assert wrong.status == CHECK_FAILED and "learning rate 0.001 where 0.002 (× 2) was recommended" in wrong.reason


def test_the_check_run_passes_nothing_the_patch_changed(tmp_path):
    """The copy is measured as written: no --policy, --jit, --batch-size, --steps-per-execution or --lr-scale,
    which would set what the patch claims (only how it is measured: steps, seed, speed only, no profiler)."""
    argv = check_argv(tmp_path / "patched" / "train.py", tmp_path / "patched" / "check",
                      REC.with_(lr_scale=2.0, fix_head=True, drop_remainder=True, script_args=["--epochs", "1"]))
    assert not {"--policy", "--jit", "--no-jit", "--batch-size", "--steps-per-execution", "--lr-scale",
                "--fix-head", "--drop-remainder", "--fix-int-inputs"} & set(argv)
    assert argv[0] == str(tmp_path / "patched" / "train.py") and "--speed-only" in argv
    assert argv[argv.index("--steps") + 1] == "16" and argv[-3:] == ["--", "--epochs", "1"]
