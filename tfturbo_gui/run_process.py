"""One backend command as a child process, driven without ever blocking the UI.

`python -m trainer_backend CMD ARGS...` is started with QProcess (arguments as
a list, never through a shell). Its stdout is parsed with the shared
`protocol.LineParser` as chunks arrive; each batch of events goes into the
command's `RunData` and out through `events_received`. Its stderr goes to a log
file. Stop is cooperative first (`{"type":"stop"}` on stdin: the backend
finishes the step and writes its summary), then terminate, then kill. Closing
stdin also stops the backend, so a GUI that dies leaves no orphan.

Which program runs is injected (`launcher`), so tests can drive the widgets
with a scripted fake backend that speaks the same protocol. `SessionLauncher`
sends every command to the session's ssh host when it has one: the child is
then `tfturbo.remote_relay`, which runs the CLI's remote path (upload, ssh,
fetch back, clean up) off the UI thread and speaks the same protocol.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Sequence

from PySide6.QtCore import QObject, QProcess, QTimer, Signal

from tfturbo import crash, protocol
from tfturbo.backend_client import backend_command
from tfturbo.backend_client import python_path as backend_python_path
from tfturbo.remote_relay import relay_command

from .run_data import RunData
from .run_gate import GATE, MEASURING_COMMANDS
from .warm_server import WARM, backend_environment, send_stderr

Launcher = Callable[[str, list[str]], list[str]]  # (command, argv) -> [program, *arguments]


class SessionLauncher:
    """Starts each command where the session says, read at start time: here (`local`), or on `session.host`."""

    def __init__(self, session: Any, local: Launcher):
        self.session = session
        self.local = local

    def __call__(self, command: str, argv: list[str]) -> list[str]:
        host = self.session.host
        return self.local(command, argv) if host is None else relay_command(host, command, argv)


READ_CHUNK = 32 * 1024  # bytes parsed per event-loop pass: a fast run's backlog never stalls the UI
STOP_GRACE_MS = 10_000  # the backend finishes its step and writes the summary
TERMINATE_GRACE_MS = 5_000


class BackendProcess(QObject):
    """Runs one backend command at a time; `data` holds what it reported."""

    events_received = Signal(object)  # parsed events, in order
    ended = Signal(object)  # the RunData, once the process exited and its output was read

    def __init__(self, launcher: Launcher = backend_command, parent: QObject | None = None):
        super().__init__(parent)
        self.launcher = launcher
        self.data: RunData | None = None
        self.stop_requested = False
        self.stop_grace_ms = STOP_GRACE_MS
        self.terminate_grace_ms = TERMINATE_GRACE_MS
        self._parser = protocol.LineParser()
        self._process: QProcess | None = None
        self._log: tuple[str | None, int, list[str]] = (None, 0, [])
        self._terminate_timer = self._single_shot(self._terminate)
        self._kill_timer = self._single_shot(self._kill)
        self._read_timer = self._single_shot(self._on_stdout)  # the rest of a backlog, next loop pass
        self._finish_timer = self._single_shot(self._drain_then_finish)
        self._exit_code = 0
        self._closing = False

    def _single_shot(self, slot: Callable[[], None]) -> QTimer:
        timer = QTimer(self)
        timer.setSingleShot(True)
        timer.timeout.connect(slot)
        return timer

    # ------------------------------------------------------------ control

    def is_running(self) -> bool:
        """A command is going: its process runs, or it ended and its last output is still being parsed."""
        return self._process is not None

    def _alive(self) -> bool:
        return self._process is not None and self._process.state() != QProcess.ProcessState.NotRunning

    def start(self, command: str, argv: list[str], name: str = "", stderr_path: str | None = None,
              python_path: Sequence[str] = ()) -> RunData:
        """Start `command` with `argv`; returns the RunData that fills as events arrive. `python_path`: folders
        its PYTHONPATH lists first (the patch check's, `tune.engine.Action.python_path`)."""
        if self.is_running():
            raise RuntimeError("a backend command is already running here; stop it first")
        measuring = command in MEASURING_COMMANDS
        if measuring:
            GATE.check(name or command)  # raises TrainingBusy while another training runs
        self.data = RunData(name or command, command)
        self.stop_requested = False
        self._closing = False
        self._parser = protocol.LineParser()
        self._log = (stderr_path, crash.log_size(stderr_path), list(argv))  # where this command's stderr starts
        program, *arguments = self.launcher(command, argv)
        process = QProcess(self)
        env = backend_environment()
        if self._local_backend():
            for key, value in WARM.child_env().items():  # a local backend child, forked from the warm server
                env.insert(key, value)
        if stderr_path:  # the backend's messages name the file its traceback is in
            env.insert(protocol.LOG_VARIABLE, os.path.abspath(stderr_path))
        if python_path:
            env.insert("PYTHONPATH", backend_python_path(list(python_path), env.value("PYTHONPATH") or None))
        process.setProcessEnvironment(env)
        send_stderr(process, stderr_path)
        process.readyReadStandardOutput.connect(self._on_stdout)
        process.finished.connect(self._on_finished)
        process.errorOccurred.connect(self._on_error)
        self._process = process
        process.start(program, arguments)
        if measuring:
            GATE.acquire(self, name or command) if self._alive() else GATE.abandon()
        return self.data

    def stop(self) -> None:
        """Cooperative stop now; terminate after the grace period; kill after another."""
        if not self._alive() or self.stop_requested:
            return
        self.stop_requested = True
        self._send_stop()
        self._terminate_timer.start(self.stop_grace_ms)

    def shutdown(self, grace_ms: int = 3000) -> None:
        """Blocking stop for application exit: stop line and end of stdin, then terminate, then kill."""
        process = self._process
        if process is None:
            return
        if not self._alive():  # ended; its last output was still being parsed
            self._finish_timer.stop()
            self._finish()
            return
        self.stop_requested = True
        self._closing = True  # `finished` arrives inside waitForFinished: end the command there, synchronously
        self._send_stop()
        process.closeWriteChannel()
        if not process.waitForFinished(grace_ms):
            process.terminate()
            if not process.waitForFinished(1000):
                process.kill()
                process.waitForFinished(1000)

    def _local_backend(self) -> bool:
        """Whether the launcher starts the backend itself on this machine (not a fake, not an ssh relay)."""
        launcher = self.launcher
        if isinstance(launcher, SessionLauncher):
            return launcher.session.host is None and launcher.local is backend_command
        return launcher is backend_command

    def pid(self) -> int | None:
        return int(self._process.processId()) if self._process is not None and self._alive() else None

    # ------------------------------------------------------------ internals

    def _send_stop(self) -> None:
        if self._process is not None:
            self._process.write((protocol.encode(protocol.STOP_COMMAND) + "\n").encode())

    def _terminate(self) -> None:
        if self._process is not None and self._alive():
            self._process.terminate()
            self._kill_timer.start(self.terminate_grace_ms)

    def _kill(self) -> None:
        if self._process is not None and self._alive():
            self._process.kill()

    def _deliver(self, events: list[protocol.Event]) -> None:
        if events and self.data is not None:
            self.data.ingest(events)
            self.events_received.emit(events)

    def _on_stdout(self) -> None:
        """Parse at most READ_CHUNK bytes, and come back for the rest after the UI had its turn."""
        if self._process is None:
            return
        self._deliver(self._parser.feed(self._process.read(READ_CHUNK).data()))
        if self._process.bytesAvailable() > 0 and not self._read_timer.isActive():
            self._read_timer.start(0)

    def _on_finished(self, exit_code: int, _status: QProcess.ExitStatus) -> None:
        self._terminate_timer.stop()
        self._kill_timer.stop()
        self._exit_code = exit_code
        if self._closing or self._process is None:
            self._finish()
        else:
            self._drain_then_finish()

    def _drain_then_finish(self) -> None:
        """A backlog left when the process ended is parsed chunk by chunk too, then the command ends."""
        process = self._process
        if process is not None and process.bytesAvailable() > READ_CHUNK:
            self._deliver(self._parser.feed(process.read(READ_CHUNK).data()))
            self._finish_timer.start(0)
            return
        self._finish()

    def _finish(self) -> None:
        self._read_timer.stop()
        exit_code = self._exit_code
        if self._process is not None:
            self._deliver(self._parser.feed(self._process.readAllStandardOutput().data()) + self._parser.close())
            if self.data is not None and self.data.status is None and self.data.error is None:
                explained = crash.explain(*self._log)  # e.g. TensorFlow crashed after running out of memory
                if explained is not None:
                    self._deliver([explained])
        self._end(exit_code)

    def _on_error(self, error: QProcess.ProcessError) -> None:
        if error != QProcess.ProcessError.FailedToStart or self._process is None:
            return  # crashes and kills also arrive through `finished`
        self._deliver([{"type": protocol.ERROR, "kind": protocol.INTERNAL,
                        "message": f"could not start the training backend ({self._process.errorString()})",
                        "fix": "check the installation: run `python -m trainer_backend env` in a terminal",
                        "traceback": " ".join([self._process.program(), *self._process.arguments()])}])
        self._end(-1)

    def _end(self, exit_code: int) -> None:
        GATE.release(self)
        process, self._process = self._process, None
        if process is not None:
            process.deleteLater()
        if self.data is not None:
            self.data.process_ended(exit_code)
            self.ended.emit(self.data)
