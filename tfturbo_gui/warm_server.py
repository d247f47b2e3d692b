"""The wizard's warm backend server: its backend commands fork from one TensorFlow import, as tune's do.

`tfturbo gui` starts it with the window (`WARM.start()`, a QProcess: the UI
never waits for it); once it says READY every local backend command the
wizard starts carries its socket (`child_env`) and runs as a fork of it
(trainer_backend/warm.py, docs/MEASUREMENT.md "Start-up: the warm start"). Until then —
its first seconds — and if it fails, commands start cold, as before. It ends
with the app (end of its stdin; a GUI that dies closes it too).
"""

from __future__ import annotations

import os
import shutil
import tempfile

from PySide6.QtCore import QIODevice, QObject, QProcess, QProcessEnvironment

from tfturbo.backend_client import backend_command
from tfturbo.warm_start import READY, SERVER_COMMAND, SOCKET_ENV, SWITCH_ENV

STOP_GRACE_MS = 3000


def backend_environment() -> QProcessEnvironment:
    """The environment of every backend child the wizard starts, and of its warm server (they must agree on
    what TensorFlow reads at import time)."""
    env = QProcessEnvironment.systemEnvironment()
    env.insert("PYTHONUNBUFFERED", "1")
    env.insert("TF_CPP_MIN_LOG_LEVEL", os.environ.get("TF_CPP_MIN_LOG_LEVEL", "2"))
    return env


def send_stderr(process: QProcess, path: str | None) -> None:
    """A backend child's stderr appended to the log at `path` (its folder made), or dropped without one."""
    if path:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        process.setStandardErrorFile(path, QIODevice.OpenModeFlag.Append)
    else:
        process.setStandardErrorFile(QProcess.nullDevice())


class WarmServer(QObject):
    """One warm server for the app's local backend commands."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._process: QProcess | None = None
        self._folder: str | None = None
        self._path = ""
        self._ready = False
        self._output = b""

    def start(self, log_path: str | None = None) -> None:
        """Start importing (returns at once); does nothing when one runs, or with TFTURBO_WARM=0."""
        if self._process is not None or os.environ.get(SWITCH_ENV) == "0" or not hasattr(os, "fork"):
            return
        self._folder = tempfile.mkdtemp(prefix="tfturbo-warm-")
        self._path = os.path.join(self._folder, "socket")
        program, *arguments = backend_command(SERVER_COMMAND, [self._path])
        process = QProcess(self)
        process.setProcessEnvironment(backend_environment())
        send_stderr(process, log_path)
        process.readyReadStandardOutput.connect(self._on_output)
        process.finished.connect(self._on_finished)
        self._process = process
        process.start(program, arguments)

    def is_ready(self) -> bool:
        return self._ready

    def child_env(self) -> dict[str, str]:
        """The socket a local backend child needs to be forked from the server ({} until it is ready)."""
        return {SOCKET_ENV: self._path} if self._ready else {}

    def stop(self) -> None:
        """End the server (the app quits): end of its stdin, then kill."""
        process, self._process = self._process, None
        self._ready = False
        if process is not None:
            process.finished.disconnect(self._on_finished)
            process.closeWriteChannel()
            if not process.waitForFinished(STOP_GRACE_MS):
                process.kill()
                process.waitForFinished(1000)
        if self._folder:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None

    def _on_output(self) -> None:
        if self._process is None:
            return
        self._output += self._process.readAllStandardOutput().data()
        if not self._ready and self._output.split(b"\n", 1)[0].strip() == READY.encode():
            self._ready = True

    def _on_finished(self, *_args) -> None:  # it failed: commands start cold
        self._ready = False


WARM = WarmServer()
