"""Start the wizard: the Qt application, the stylesheet, the main window."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtWidgets import QApplication

from tfturbo.settings import DEFAULT_STEPS

from . import first_paint

STYLE = Path(__file__).with_name("style.qss")


def make_app(argv: list[str] | None = None) -> QApplication:
    app = QApplication.instance() or QApplication(argv if argv is not None else sys.argv[:1])
    app.setApplicationName("tfturbo")
    app.setOrganizationName("tfturbo")
    app.setStyle("Fusion")  # the same look on every platform; the stylesheet refines it
    app.setStyleSheet(STYLE.read_text(encoding="utf-8"))
    return app


def run(workload: str = "", steps: int = DEFAULT_STEPS, study: str | None = None) -> int:
    """Open the wizard (optionally on `workload`, or with the run browser on `study`) until it closes."""
    app = make_app()
    from .main_window import MainWindow  # pyqtgraph loads after QApplication exists

    window = MainWindow(workload, steps=steps)
    if first_paint.requested():  # benchmarks/startup.py: time to the first painted window
        first_paint.exit_after_first_paint(window)
    window.show()
    if study:
        window.show_browser().open_study(study)
    return app.exec()
