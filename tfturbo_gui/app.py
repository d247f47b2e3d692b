"""Start the wizard: the Qt application, its theme and icon, the main window."""

from __future__ import annotations

import gc
import sys

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from tfturbo.backend_client import log_path
from tfturbo.settings import DEFAULT_STEPS

from . import first_paint, theme, wheel_guard
from .warm_server import WARM

WARM_START_DELAY_MS = 1000


def apply_theme(app: QApplication) -> None:
    """The style sheet in the system's light or dark variant (called again when the system switches)."""
    app.setStyleSheet(theme.style_sheet(theme.system_is_dark(app)))


def make_app(argv: list[str] | None = None) -> QApplication:
    app = QApplication.instance() or QApplication(argv if argv is not None else sys.argv[:1])
    assert isinstance(app, QApplication), "the process's application is a QApplication"
    app.setApplicationName("tfturbo")
    app.setOrganizationName("tfturbo")
    app.setDesktopFileName("tfturbo")  # Wayland/X11 match the window to resources/tfturbo.desktop
    app.setWindowIcon(theme.app_icon())
    theme.register_fonts()
    app.setStyle("Fusion")  # the same look on every platform; the stylesheet refines it
    apply_theme(app)
    wheel_guard.install(app)
    app.styleHints().colorSchemeChanged.connect(lambda _scheme: apply_theme(app))
    return app


def freeze_startup_heap() -> None:
    """Exclude the objects alive once the window is built (widgets, pyqtgraph items, modules) from the
    garbage collector's scans: they live as long as the app, and each full collection scanning them paused
    the UI for up to 130 ms while a run streamed in (benchmarks/gui_ingest.py)."""
    gc.collect()
    gc.freeze()


def run(workload: str = "", steps: int = DEFAULT_STEPS, study: str | None = None) -> int:
    """Open the wizard (optionally on `workload`, or with the run browser on `study`) until it closes."""
    app = make_app()
    from .main_window import MainWindow  # pyqtgraph loads after QApplication exists

    window = MainWindow(workload, steps=steps)
    freeze_startup_heap()
    if first_paint.requested():  # benchmarks/startup.py: time to the first painted window
        first_paint.exit_after_first_paint(window)
    window.show()
    # the backend commands' TensorFlow import, once, while the user reads the first page (after it painted)
    QTimer.singleShot(WARM_START_DELAY_MS, lambda: WARM.start(log_path()))
    app.aboutToQuit.connect(WARM.stop)
    if study:
        window.show_browser().open_study(study)
    return app.exec()
