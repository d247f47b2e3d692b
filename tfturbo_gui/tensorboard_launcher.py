"""Open TensorBoard on the study: `tensorboard --logdir STUDY/runs` in the background, then the browser.

TensorBoard shows the captured profile (Overview, TensorFlow Stats, trace)
and every run's scalars side by side. It is started
once per app on a free local port, its address is read from its own output,
and it is stopped when the window closes.
"""

from __future__ import annotations

import re
import shutil
import socket
import sys
from pathlib import Path
from typing import Callable

from PySide6.QtCore import QObject, QProcess, QUrl, Signal
from PySide6.QtGui import QDesktopServices

_URL = re.compile(rb"https?://[^\s]+:\d+/?")


def tensorboard_command(logdir: str, port: int) -> list[str]:
    """The `tensorboard` next to this Python (the venv's), else the one on PATH, else the module."""
    local = Path(sys.executable).with_name("tensorboard")
    program = str(local) if local.exists() else shutil.which("tensorboard")
    head = [program] if program else [sys.executable, "-m", "tensorboard.main"]
    return head + ["--logdir", logdir, "--port", str(port), "--host", "localhost"]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class TensorBoardLauncher(QObject):
    url_ready = Signal(str)
    failed = Signal(str)
    not_opened = Signal(str)  # the URL, when no browser opened it: the page shows it to copy

    def __init__(self, parent: QObject | None = None,
                 command: Callable[[str, int], list[str]] = tensorboard_command,
                 open_url: Callable[[QUrl], object] = QDesktopServices.openUrl):
        super().__init__(parent)
        self.command = command
        self.open_url = open_url
        self.logdir: str | None = None
        self.url: str | None = None
        self._process: QProcess | None = None
        self._output = b""

    def is_running(self) -> bool:
        return self._process is not None and self._process.state() != QProcess.ProcessState.NotRunning

    def open(self, logdir: str) -> None:
        """Show `logdir` in the browser, starting TensorBoard for it if needed."""
        if self.is_running() and self.logdir == logdir:
            if self.url:
                self._open()
            return
        self.stop()
        self.logdir, self.url, self._output = logdir, None, b""
        program, *args = self.command(logdir, free_port())
        process = QProcess(self)
        process.setProcessChannelMode(QProcess.ProcessChannelMode.MergedChannels)
        process.readyReadStandardOutput.connect(self._on_output)
        process.errorOccurred.connect(self._on_error)
        process.finished.connect(self._on_finished)
        self._process = process
        process.start(program, args)

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.state() != QProcess.ProcessState.NotRunning:
            process.terminate()
            if not process.waitForFinished(2000):
                process.kill()
                process.waitForFinished(1000)

    def _on_output(self) -> None:
        if self._process is None:
            return
        self._output = (self._output + self._process.readAllStandardOutput().data())[-8192:]
        match = _URL.search(self._output)
        if match and self.url is None:
            self.url = match.group(0).decode(errors="replace")
            self.url_ready.emit(self.url)
            self._open()

    def _open(self) -> None:
        if self.url is None:
            return
        if not self.open_url(QUrl(self.url)):
            self.not_opened.emit(self.url)

    def _on_error(self, error: QProcess.ProcessError) -> None:
        if error == QProcess.ProcessError.FailedToStart and self._process is not None:
            self.failed.emit(f"TensorBoard could not start ({self._process.errorString()}); "
                             "install it with: pip install tensorboard tensorboard-plugin-profile")

    def _on_finished(self, exit_code: int, _status: object) -> None:
        if self.url is None and self._process is not None:
            tail = self._output.decode(errors="replace").strip().splitlines()[-1:] or [f"exit code {exit_code}"]
            self.failed.emit(f"TensorBoard stopped before it was ready: {tail[0]}")
        self._process = None
