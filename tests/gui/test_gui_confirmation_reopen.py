"""The issue 42 walk: the confirmation's card read "the recommended configuration (…) against the baseline, side
by side; …" live and "chosen in the wizard: …; …" once the study was reopened. Its words come from the study's
files, the same before and after."""

from __future__ import annotations

from PySide6.QtCore import Qt

from tests.gui.gui_helpers import fake_launcher, make_window, measure_baseline, start_page_trial

LEFT = Qt.MouseButton.LeftButton


def test_the_confirmation_card_reads_the_same_after_a_reopen(qtbot, tmp_path):
    window = make_window(qtbot, tmp_path, launcher=fake_launcher(delay=0.02))
    measure_baseline(qtbot, window)
    precision = start_page_trial(qtbot, window, 2)  # kept against the baseline itself
    qtbot.waitUntil(lambda: precision.rung.decision is not None and not precision.run_panel.is_running(),
                    timeout=60_000)
    assert precision.rung.kept and precision.rung.compared_with == window.session.study.rungs[0].name
    window.goto(5)
    page = window.pages[5]
    qtbot.waitUntil(lambda: page.run_button.isEnabled(), timeout=20_000)
    qtbot.mouseClick(page.run_button, LEFT)
    qtbot.waitUntil(lambda: page.confirmation is not None and page.confirmation.decision is not None
                    and not page.run_panel.is_running(), timeout=90_000)
    live = page.verdict.reason.text()
    assert "the recommended configuration (" in live.lower(), live
    path = window.session.study.path
    window.close()

    again = make_window(qtbot, tmp_path / "again")
    again.open_study(path)  # File → Recent studies
    reopened = again.pages[5]
    again.goto(5)
    assert reopened.verdict.reason.text() == live
    assert "chosen in the wizard" not in reopened.verdict.reason.text()
