"""`TFTURBO_EXIT_AFTER_FIRST_PAINT=1`: report the main window's first paint, then quit.

Used by `benchmarks/startup.py` to time `tfturbo` from launch to the first
painted window in a fresh process. When the first paint of the window has
finished, one JSON line goes to stdout: the seconds since this process
started (as the kernel counts it) and whether TensorFlow or Keras got imported
(they must not be). Then the application quits.
"""

from __future__ import annotations

import json
import os
import sys
import time

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QWidget

ENV = "TFTURBO_EXIT_AFTER_FIRST_PAINT"


def requested() -> bool:
    return os.environ.get(ENV, "") not in ("", "0")


def _process_age_s() -> float | None:
    """Seconds since this process started, from /proc (Linux); None elsewhere."""
    try:
        start_ticks = int(open("/proc/self/stat", "rb").read().rsplit(b")", 1)[1].split()[19])
        uptime = float(open("/proc/uptime", "rb").read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return uptime - start_ticks / os.sysconf("SC_CLK_TCK")


class _FirstPaint(QObject):
    def __init__(self, window: QWidget):
        super().__init__(window)
        self.window = window
        self.seen = False

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt API)
        if not self.seen and event.type() == QEvent.Type.Paint and isinstance(obj, QWidget) \
                and obj.window() is self.window:
            self.seen = True
            _app().removeEventFilter(self)
            QTimer.singleShot(0, self._report)  # runs once this paint pass has finished
        return False

    def _report(self) -> None:
        print(json.dumps({"first_paint": True, "process_age_s": _process_age_s(), "wall": time.time(),
                          "tensorflow_imported": "tensorflow" in sys.modules,
                          "keras_imported": "keras" in sys.modules}), flush=True)
        _app().quit()


def _app() -> QCoreApplication:
    app = QApplication.instance()
    assert app is not None, "the window's application runs"
    return app


def exit_after_first_paint(window: QWidget) -> None:
    _app().installEventFilter(_FirstPaint(window))
