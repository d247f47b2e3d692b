"""GUI test helpers: a scripted fake backend, and windows that drive it.

The widgets take the backend program as a `launcher(command, argv)`, so these
tests run the real QProcess machinery against `fake_backend.py` (milliseconds
per command) and one end-to-end test runs the real `python -m trainer_backend`.
A module of its own (not conftest): test modules import it by its package path, which stays unambiguous
when pytest collects several test folders, each with a conftest.py, in one call.
"""

from __future__ import annotations

import sys
from pathlib import Path

import psutil

FAKE_BACKEND = Path(__file__).with_name("fake_backend.py")


def fake_launcher(scenario: str = "ok", delay: float = 0.0, gpus: int = 0):
    """A launcher running the fake backend with a scenario, on a machine with `gpus` GPUs (see fake_backend.py)."""
    def launch(command: str, argv: list[str]) -> list[str]:
        return [sys.executable, str(FAKE_BACKEND), "--scenario", scenario, "--delay", str(delay), "--gpus", str(gpus),
                command, *argv]
    return launch


def children() -> list[psutil.Process]:
    return [p for p in psutil.Process().children(recursive=True) if p.is_running()
            and p.status() != psutil.STATUS_ZOMBIE]


def make_window(qtbot, tmp_path, workload: str = "builtin:mlp", launcher=None, steps: int = 60):
    """The main window on the fake backend, its study in tmp_path, the environment read."""
    from tfturbo_gui.main_window import MainWindow

    window = MainWindow(workload, launcher=launcher or fake_launcher(), steps=steps)
    # the fake backend's throughput is the same in every replicate: two measured pairs decide. A trial's first
    # pair trains the page's short runs (too little steady state for a throughput when steps are fast), so a
    # third, speed-only pair may be needed
    window.session.min_replicates, window.session.max_replicates = 2, 3
    qtbot.addWidget(window)
    window.show()
    window.pages[0].study_edit.setText(str(tmp_path / "study"))
    qtbot.waitUntil(lambda: window.session.environment is not None, timeout=20_000)
    return window


def go_next(qtbot, window, to: int, timeout: int = 20_000) -> None:
    assert window.next_button.isEnabled(), window.hint.text()
    qtbot.mouseClick(window.next_button, left_button())
    qtbot.waitUntil(lambda: window.current() == to, timeout=timeout)


def left_button():
    from PySide6.QtCore import Qt
    return Qt.MouseButton.LeftButton


def measure_baseline(qtbot, window, timeout: int = 30_000) -> None:
    """Go to the baseline page and measure it (the fake backend's one run)."""
    from tfturbo_gui.step_status import PASSED

    go_next(qtbot, window, 1)
    page = window.pages[1]
    qtbot.mouseClick(page.measure_button, left_button())
    qtbot.waitUntil(lambda: page.status == PASSED, timeout=timeout)


def start_page_trial(qtbot, window, index: int, timeout: int = 20_000):
    """Go to rung page `index` and click its Run button once it is enabled; the page."""
    window.goto(index)
    page = window.pages[index]
    qtbot.waitUntil(lambda: page.run_button.isEnabled(), timeout=timeout)
    qtbot.mouseClick(page.run_button, left_button())
    return page


def xla_page(qtbot, tmp_path, workload: str, size: tuple[int, int] | None = None):
    """The XLA page of a window whose baseline of `workload` is measured (`size`: the window's, set before the
    baseline's audit arrives, as a user's screen would); (window, page)."""
    window = make_window(qtbot, tmp_path, workload=workload)
    if size is not None:
        window.resize(*size)
    measure_baseline(qtbot, window)
    window.goto(3)
    xla = window.pages[3]
    qtbot.waitUntil(lambda: xla.run_button.isEnabled(), timeout=20_000)
    return window, xla
