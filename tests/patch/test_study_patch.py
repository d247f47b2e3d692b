"""The study's last step: tune of a plain script writes changes.patch and measures the patched copy as written;
the patch says what that run found, a resumed study re-uses it, `tfturbo apply` prints and writes it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests.tune.tune_fakes import FakeBackend, result, summary

from tfturbo import backend_client, cli, protocol
from tfturbo.runfiles import SUMMARY, write_json_atomic
from tfturbo.tune.engine import PATCH, Action
from tfturbo.tune.ladder import Ladder, TuneOptions

SCRIPTS = Path(__file__).parent / "scripts"


def gpu_like(s):
    """bfloat16 and XLA faster, a larger batch faster per sample: the study recommends all three."""
    batch = s.batch_size or 100
    ms = (100.0 if s.policy == "float32" else 60.0) * (0.75 if s.jit_compile else 1) * (batch / 100) ** 0.6
    return summary(ms, 0.90, policy=s.policy, jit=s.jit_compile, batch_size=batch, seed=int(ms * 10))


class Backend(FakeBackend):
    """The recorded backend; the check's run of the patched copy answered by `check` (its argv -> summary or a
    result), its summary written where the run would write it."""

    def __init__(self, check, **kwargs):
        super().__init__(gpu_like, recommended="mixed_bfloat16", **kwargs)
        self.check = check
        self.checks: list[tuple[list[str], dict | None]] = []

    def __call__(self, command, argv, on_event=None, stderr_path=None, cancel=None, env=None):
        if command == "run" and "/patched/" in argv[0]:
            self.checks.append((list(argv), env))
            answer = self.check(argv)
            if isinstance(answer, dict):
                write_json_atomic(Path(argv[argv.index("--out") + 1]) / SUMMARY, answer)
                return result(command, answer)
            return answer
        return super().__call__(command, argv, on_event, stderr_path, cancel, env)


def as_written(settings):
    """What the backend measures when the copy is run as written: the settings its source says."""
    return lambda argv: {**summary(50.0, 0.9), "steps_completed": 16,
                         "settings": {"policy": "mixed_bfloat16", "jit_compile": True, "batch_size": 128,
                                      "steps_per_execution": 1, **settings}}


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "project" / "train.py"
    path.parent.mkdir()
    shutil.copy(SCRIPTS / "constants_numpy.py", path)
    return path


def tune(script, out, backend, **options):
    lines = []
    study = Ladder(TuneOptions(str(script), out, steps=100, max_batch_scale=2, **options), runner=backend,
                   say=lines.append).run()
    return study, lines


def test_tune_of_a_script_writes_its_patch_and_measures_the_patched_copy(script, tmp_path):
    backend = Backend(as_written({}))
    study, lines = tune(script, tmp_path / "study", backend)
    assert study.recommended.label() == "mixed_bfloat16 + XLA, batch 128"
    [(argv, env)] = backend.checks
    copy = tmp_path / "study" / "patched" / "train.py"
    assert argv[0] == str(copy) and not {"--policy", "--jit", "--batch-size", "--steps-per-execution"} & set(argv)
    assert env["PYTHONPATH"].split(":")[0] == str(script.parent)  # the modules beside the script still import
    text = (tmp_path / "study" / "changes.patch").read_text()
    assert text == study.snippet and study.document()["snippet"] == text  # one text: tune, --json, the file
    assert text.splitlines()[1].startswith("# checked: the patched script runs the recommended settings "
                                           "(mixed_bfloat16, XLA on, batch 128, 1 step per call)")
    assert "+BATCH = 128  # the batch size" in text and '+keras.mixed_precision.set_global_policy("mixed_bfloat16")' \
           in text and "jit_compile=True" in text and "LR * 1.414" in text
    assert any(line.startswith("patch: checked") for line in lines)
    assert study.patch["check"]["status"] == "checked" and study.patch["copy"] == "patched/train.py"
    untouched = tmp_path / "untouched"
    untouched.mkdir()
    shutil.copy(SCRIPTS / "constants_numpy.py", untouched / "train.py")
    subprocess.run(["git", "apply", str(tmp_path / "study" / "changes.patch")], cwd=untouched, check=True)
    assert (untouched / "train.py").read_text() == copy.read_text()
    assert script.read_text() == (SCRIPTS / "constants_numpy.py").read_text()  # nothing written beside the script


@pytest.fixture
def import_backend(script, tmp_path):
    """A launcher of a fake backend that reports, as its run's result, what `import helper` finds; helper.py is
    beside the user's script (the modules a real script imports from its own folder)."""
    (script.parent / "helper.py").write_text('WHERE = "beside the script"\n')
    backend = tmp_path / "backend" / "fake_backend.py"
    backend.parent.mkdir()
    backend.write_text("import json\n"
                       "try:\n    import helper\n    found = helper.WHERE\nexcept ImportError as e:\n    found = str(e)\n"
                       "print(json.dumps({'v': 1, 'type': 'result', 'document': {'helper': found}}))\n"
                       "print(json.dumps({'v': 1, 'type': 'done', 'status': 'completed'}))\n")
    return lambda command, argv: [sys.executable, str(backend), command, *argv]


def test_the_check_run_imports_the_modules_beside_the_script(script, tmp_path, monkeypatch, import_backend):
    """The patched copy runs from the study folder: the ladder's own runner (`run_backend`, not a fake) starts the
    check's process with the script's folder first on its PYTHONPATH, so `import helper` beside train.py works."""
    monkeypatch.setattr(backend_client, "backend_command", import_backend)
    (tmp_path / "study").mkdir()
    ladder = Ladder(TuneOptions(str(script), tmp_path / "study"))
    copy = str(tmp_path / "study" / "patched" / "train.py")
    checked = ladder._execute(Action("run", [copy], PATCH, python_path=[str(script.parent)]))
    assert checked.document == {"helper": "beside the script"}
    alone = ladder._execute(Action("run", [copy], PATCH))  # the same process without the check's folder
    assert alone.document == {"helper": "No module named 'helper'"}


def test_the_wizards_check_run_imports_the_modules_beside_the_script(script, tmp_path, qtbot, import_backend):
    """The wizard's record page starts the same check through its own process class: the same PYTHONPATH."""
    from tfturbo_gui.run_process import BackendProcess

    process = BackendProcess(import_backend)
    with qtbot.waitSignal(process.ended, timeout=20_000):
        data = process.start("run", [str(tmp_path / "study" / "patched" / "train.py")], name="patch check",
                             python_path=[str(script.parent)])
    assert data.document == {"helper": "beside the script"}


def test_a_copy_that_runs_other_settings_says_so_in_the_patch(script, tmp_path):
    """Run as written, the copy's XLA was off (a backend that recompiles with its own default): the patch stays,
    its header says what the run measured."""
    study, lines = tune(script, tmp_path / "study", Backend(as_written({"jit_compile": False})))
    assert study.snippet.splitlines()[1] == "# check failed: the patched script ran XLA off where XLA on was " \
                                            "recommended"
    assert study.status == "completed" and study.patch["check"]["status"] == "check failed"


def test_a_copy_that_does_not_load_leaves_the_study_complete(script, tmp_path):
    error = {"kind": protocol.BAD_INPUT, "message": "train.py: raised ModuleNotFoundError: No module named 'utils'",
             "fix": "fix the script"}
    study, _lines = tune(script, tmp_path / "study", Backend(lambda argv: result("run", None, "failed", error)))
    assert study.status == "completed"
    assert study.snippet.splitlines()[1] == ("# not checked: the patched script's run ended failed: train.py: raised "
                                             "ModuleNotFoundError: No module named 'utils' (see its backend.log)")


def test_a_resumed_study_reuses_the_check_of_the_same_patch(script, tmp_path):
    out = tmp_path / "study"
    study, _ = tune(script, out, Backend(as_written({})))
    study.status = "interrupted"  # as if killed after the check: the same command continues
    study.save()
    again = Backend(as_written({"jit_compile": False}))
    resumed = Ladder(TuneOptions(str(script), out, steps=100, max_batch_scale=2), runner=again, resume=True).run()
    assert again.checks == [] and resumed.patch["check"]["status"] == "checked"
    script.write_text(script.read_text().replace("EPOCHS = 2", "EPOCHS = 3"))  # the file changed: checked again
    resumed.status = "interrupted"
    resumed.save()
    third = Backend(as_written({}))
    Ladder(TuneOptions(str(script), out, steps=100, max_batch_scale=2), runner=third, resume=True).run()
    assert len(third.checks) == 1


def test_tfturbo_apply_prints_the_patch_and_writes_the_patched_file(script, tmp_path, capsys):
    study, _ = tune(script, tmp_path / "study", Backend(as_written({})))
    # the command line's way to the patched file is in tune's output, not in the patch the wizard shows
    from tfturbo.tune.render import render_study
    assert f"write the patched file elsewhere: tfturbo apply {study.path} --write PATH" in render_study(study)
    assert "tfturbo apply" not in study.snippet
    assert cli.main(["apply", str(tmp_path / "study")]) == 0
    assert capsys.readouterr().out == study.snippet
    out = tmp_path / "tuned.py"
    assert cli.main(["apply", str(tmp_path / "study"), "--write", str(out)]) == 0
    assert out.read_text() == (tmp_path / "study" / "patched" / "train.py").read_text()
    assert f"patched file written to {out}" in capsys.readouterr().err
    script.write_text(script.read_text() + "\n# a later edit\n")
    assert cli.main(["apply", str(tmp_path / "study"), "--write", str(tmp_path / "again.py")]) == 2
    assert "changed since the study made its patch" in capsys.readouterr().err
    assert cli.main(["apply", str(tmp_path / "nothing")]) == 2
    assert "holds no study" in capsys.readouterr().err


def test_the_report_shows_the_same_patch(script, tmp_path):
    from pypdf import PdfReader

    from tfturbo.report import write_report

    study, _ = tune(script, tmp_path / "study", Backend(as_written({})))
    pdf = write_report(tmp_path / "study")
    shown = " ".join(" ".join(page.extract_text() for page in PdfReader(str(pdf)).pages).split())
    for line in (study.snippet.splitlines()[1], "-BATCH = 100 # the batch size", "+BATCH = 128 # the batch size"):
        assert " ".join(line.split()) in shown
