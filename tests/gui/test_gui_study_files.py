"""File → New study, Open, Recent studies and the files a study leaves: what a user finds after each."""

from __future__ import annotations

import os
import stat

from PySide6.QtWidgets import QFileDialog

from tests.gui.gui_helpers import go_next, make_window, measure_baseline
from tests.report.report_fixtures import make_study
from tfturbo.report import write_report
from tfturbo.settings import DEFAULT_STEPS
from tfturbo.tune.study import Study
from tfturbo_gui.main_window import remember_study

SCRIPT = "import keras\nmodel = keras.Sequential()\nmodel.fit(x, y, epochs=3)\n"


def test_new_study_starts_at_the_windows_length_and_leaves_no_empty_study_folder(qtbot, tmp_path):
    """A 1,250-step script measured 200 steps after File → New study (the last script's length stayed, greyed out,
    and "each run trains the script's own length" vanished); each abandoned check left its study folder."""
    first, second = tmp_path / "a" / "first.py", tmp_path / "b" / "second.py"
    for script in (first, second):
        script.parent.mkdir()
        script.write_text(SCRIPT)
    window = make_window(qtbot, tmp_path, workload=str(first), steps=DEFAULT_STEPS)
    go_next(qtbot, window, 1)
    assert window.session.steps == 96 and (tmp_path / "study" / "study.yaml").exists()
    window.new_action.trigger()  # nothing was measured in it: the folder the check made goes
    assert not (tmp_path / "study").exists()
    assert str(tmp_path / "study") not in [a.data() for a in window.recent_menu.actions()]
    page = window.pages[0]
    assert page.steps.value() == DEFAULT_STEPS and page.steps.isEnabled()
    page._select(str(second))
    page.study_edit.setText(str(tmp_path / "study2"))
    go_next(qtbot, window, 1)
    assert window.session.steps == 96  # the second script's own length, not a length left from the first
    assert "Each run trains the script's own length: 3 epochs of 32 steps = 96 steps" in page.check_hint.text()
    window.close()  # quit: an empty study goes too
    assert not (tmp_path / "study2").exists()


def test_open_starts_in_the_scripts_folder_then_beside_the_study(qtbot, tmp_path, monkeypatch):
    script = tmp_path / "project" / "train.py"
    script.parent.mkdir()
    script.write_text(SCRIPT)
    asked: list[str] = []
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda _parent, _title, folder: asked.append(folder) or "")
    monkeypatch.setattr(QFileDialog, "getOpenFileName",
                        lambda _parent, _title, folder, _filter: asked.append(folder) or ("", ""))
    window = make_window(qtbot, tmp_path, workload=str(script))
    window.open_action.trigger()  # File → Open study…
    window.pages[0]._choose_file()  # the workload page's "Open…"
    assert asked == [str(script.parent)] * 2
    go_next(qtbot, window, 1)
    window.open_action.trigger()
    assert asked[-1] == str(tmp_path)  # beside the study (tmp_path/study)


def test_recent_marks_unfinished_studies_and_opens_a_finished_one_in_the_wizard(qtbot, tmp_path):
    finished = make_study(tmp_path / "finished")
    window = make_window(qtbot, tmp_path)
    measure_baseline(qtbot, window)
    unfinished = window.session.study.path
    window.close()  # the study says interrupted
    remember_study(finished)

    again = make_window(qtbot, tmp_path / "again")
    labels = {a.data(): a.text() for a in again.recent_menu.actions()}
    assert labels[str(unfinished)] == f"{unfinished} — unfinished (1 measured)"
    assert labels[str(finished)] == f"{finished} — completed"
    for _ in range(2):  # opened twice: the wizard shows it, no runs window appears
        next(a for a in again.recent_menu.actions() if a.data() == str(finished)).trigger()
        assert again.session.study.path == finished and again.browser is None
        assert again.current() == len(again.pages) - 1  # its record
    assert again.pages[-1].recommended.values["Speed-up"].text().startswith("1.")
    assert Study.load(finished).status == "completed"
    again.close()
    assert Study.load(finished).status == "completed"  # closing never makes a finished study "interrupted"


def test_report_pdf_is_written_with_the_users_normal_mode(tmp_path):
    root = make_study(tmp_path / "study")
    umask = os.umask(0o022)
    os.umask(umask)
    pdf = write_report(root)
    assert stat.S_IMODE(pdf.stat().st_mode) == 0o666 & ~umask != 0o600


def test_open_a_workload_file_starts_in_the_last_scripts_folder_after_a_restart(qtbot, tmp_path, monkeypatch):
    """The issue 42 walk: on the app's second start "Open a workload file…" opened in ~/tfturbo-studies, not the
    folder of the script opened before."""
    script = tmp_path / "project" / "train.py"
    script.parent.mkdir()
    script.write_text(SCRIPT)
    asked: list[str] = []
    monkeypatch.setattr(QFileDialog, "getOpenFileName",
                        lambda _parent, _title, folder, _filter: asked.append(folder) or (str(script), ""))
    window = make_window(qtbot, tmp_path)  # a built-in workload
    window.pages[0]._choose_file()
    again = make_window(qtbot, tmp_path / "again")  # the next start, on a built-in workload again
    again.pages[0]._choose_file()
    assert asked[-1] == str(script.parent)


def test_recent_lists_neither_a_study_with_no_run_nor_a_removed_folder(qtbot, tmp_path):
    """The issue 42 walk: Next on page 1 made a study folder, listed as "… — unfinished" in File → Recent, and
    still listed after the folder was removed."""
    finished = make_study(tmp_path / "finished")
    remember_study(finished)
    window = make_window(qtbot, tmp_path)
    go_next(qtbot, window, 1)  # the workload check makes the study folder; nothing measured in it
    empty = window.session.study.path
    window.file_menu.aboutToShow.emit()  # File opened
    listed = [a.data() for a in window.recent_menu.actions()]
    assert str(finished) in listed and str(empty) not in listed
    gone = make_study(tmp_path / "gone")
    remember_study(gone)
    import shutil

    shutil.rmtree(gone)
    window.file_menu.aboutToShow.emit()
    assert str(gone) not in [a.data() for a in window.recent_menu.actions()]
