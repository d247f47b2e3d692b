"""The workload page's "Script options": shown for a training script only, parsed as a shell would, and
passed after `--` to every backend command the wizard starts (the fake backend parses them as the backend)."""

from tests.gui.gui_helpers import fake_launcher, go_next, make_window
from PySide6.QtCore import Qt

from tfturbo.cli_args import split_script_args
from tfturbo_gui.step_status import PASSED

LEFT = Qt.MouseButton.LeftButton


def recording_launcher(calls: list):
    """The fake backend, with every (command, argv) the wizard asked for kept in `calls`."""
    launch = fake_launcher()

    def record(command: str, argv: list[str]) -> list[str]:
        calls.append((command, list(argv)))
        return launch(command, argv)
    return record


def test_script_options_are_offered_for_a_script_only_and_reach_every_command(qtbot, tmp_path):
    calls: list = []
    window = make_window(qtbot, tmp_path, workload="builtin:mlp", launcher=recording_launcher(calls))
    page = window.pages[0]
    assert not page.script_edit.isVisible()  # a contract workload takes no options
    page.workload_edit.setText("builtin:train-script")
    page.study_edit.setText(str(tmp_path / "study"))
    assert page.script_edit.isVisible()

    page.script_edit.setText('--epochs 3 --note "two words')
    assert page.script_error.isVisible() and page.script_error.text().startswith("Script options: no closing quotation")
    assert "close the quote" in page.script_error.text()
    assert not window.next_button.isEnabled() and window.hint.text() == "Fix the script options"
    page.script_edit.setText('--epochs 3 --note "two words"')
    assert not page.script_error.isVisible() and window.next_button.isEnabled()

    go_next(qtbot, window, 1)
    assert window.session.script_args == ["--epochs", "3", "--note", "two words"]
    assert not page.script_edit.isEnabled()  # locked with the workload once checked
    baseline = window.pages[1]
    qtbot.mouseClick(baseline.measure_button, LEFT)
    qtbot.waitUntil(lambda: baseline.status == PASSED, timeout=20_000)
    window.goto(2)
    precision = window.pages[2]
    qtbot.waitUntil(lambda: any(c == "audit" for c, _ in calls[2:]), timeout=20_000)

    measured = [(c, a) for c, a in calls if c != "env"]
    assert {c for c, _ in measured} >= {"audit", "probe-input", "run"}
    for command, argv in measured:
        assert split_script_args(argv)[1] == ["--epochs", "3", "--note", "two words"], (command, argv)
    assert precision.audit_panel.data is not None


def test_a_script_s_options_are_not_offered_for_a_workload_file(qtbot, tmp_path):
    contract = tmp_path / "model.py"
    contract.write_text("def build_model():\n    pass\n\ndef make_datasets(batch_size):\n    pass\n")
    script = tmp_path / "train.py"
    script.write_text("import keras\nmodel = keras.Sequential()\n")
    window = make_window(qtbot, tmp_path)
    page = window.pages[0]
    page.workload_edit.setText(str(contract))
    assert not page.script_edit.isVisible()
    page.workload_edit.setText(str(script))
    assert page.script_edit.isVisible()


def test_a_script_that_calls_fit_twice_offers_which_call_is_measured_and_every_command_measures_it(qtbot, tmp_path):
    """A teacher's fit() then its distiller's: the wizard lists the script's .fit( calls, the one chosen reaches
    every backend command as --fit-call, and the check says which call was measured."""
    script = tmp_path / "distill.py"
    script.write_text("import keras\nteacher = keras.Sequential()\nteacher.fit(x, y)\n"
                      "distiller = keras.Sequential()\ndistiller.fit(x, y, epochs=3)\n")
    calls: list = []
    window = make_window(qtbot, tmp_path, launcher=recording_launcher(calls))
    page = window.pages[0]
    page.workload_edit.setText("builtin:train-script")
    assert not page.fit_combo.isVisible()  # one fit() call: nothing to choose
    page.workload_edit.setText(str(script))
    page.study_edit.setText(str(tmp_path / "study"))
    assert page.fit_combo.isVisible() and page.fit_combo.count() == 2
    assert page.fit_combo.itemText(1) == "2nd call — line 5: distiller.fit(x, y, epochs=3)"
    page.fit_combo.setCurrentIndex(1)
    assert "up to its 2nd fit() call" in page.check_hint.text()

    go_next(qtbot, window, 1)
    assert window.session.fit_call == 2 and not page.fit_combo.isEnabled()
    assert "up to the 2nd fit() call of distill.py (line 5" in page.check_hint.text()
    baseline = window.pages[1]
    qtbot.mouseClick(baseline.measure_button, LEFT)
    qtbot.waitUntil(lambda: baseline.status == PASSED, timeout=20_000)
    measured = [(c, a) for c, a in calls if c != "env"]
    assert {c for c, _ in measured} >= {"audit", "probe-input", "run"}
    for command, argv in measured:
        own = split_script_args(argv)[0]
        assert own[own.index("--fit-call") + 1] == "2", (command, argv)
