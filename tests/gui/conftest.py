"""GUI test fixtures (the helpers that drive windows are in gui_helpers.py)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def never_ask_on_close(monkeypatch):
    """Closing a window mid-run asks in a modal box, which nobody answers in a test: a test that fails while a
    run goes would hang at teardown (pytest-qt closes its widgets) instead of failing. Tests of the question
    replace `ask_close` on their window."""
    from tfturbo_gui.main_window import MainWindow

    monkeypatch.setattr(MainWindow, "ask_close", lambda self: True)


@pytest.fixture(autouse=True)
def free_training_gate():
    """Each test starts with no training going (the gate is per app, and the app outlives a test)."""
    from tfturbo_gui.run_gate import GATE

    GATE.holder, GATE.label = None, ""
    yield


@pytest.fixture(autouse=True)
def desktop_screen(monkeypatch):
    """The tests' screen is a 1920×1080 desktop: the offscreen platform's is 800×800, and the window sizes itself
    to its screen's available area (`MainWindow.fit_to_screen`). A test of a small screen sets its own."""
    from PySide6.QtCore import QRect
    from PySide6.QtGui import QScreen

    monkeypatch.setattr(QScreen, "availableGeometry", lambda self: QRect(0, 0, 1920, 1080))
