"""The backend's standard streams: events out, commands in, everything else to the log.

Only events may reach the backend's stdout. TensorFlow
prints from C++ straight to file descriptors 1 and 2, and user workloads may
`print()`, so guarding `sys.stdout` is not enough. `take_streams()` keeps a
private duplicate of the real stdout for events, then points descriptors 1 and 2
at a pipe. A pump thread copies that pipe to the original stderr and, once the
run directory exists, to `backend.log` (replaying what came before), and keeps
the text so live detectors can read what TensorFlow and Keras said.

On stdin the parent sends `{"type": "stop"}`; the end of stdin means the parent
is gone. Both set the stop flag, which a run checks at every step boundary.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import IO

from tfturbo import protocol

LOG_KEEP_CHARS = 4 * 1024 * 1024  # text kept in memory for detectors (the log file keeps everything)

_stop = threading.Event()
_stop_reason = ""
_capture: StderrCapture | None = None


def stop_requested() -> bool:
    return _stop.is_set()


def stop_reason() -> str:
    return _stop_reason


def request_stop(reason: str) -> None:
    global _stop_reason
    if not _stop.is_set():
        _stop_reason = reason
        _stop.set()


def stderr_text() -> str:
    """What the process wrote to stderr (and stray stdout) so far; '' before `take_streams`."""
    return _capture.text() if _capture else ""


def log_name() -> str:
    """Where this process's stderr is kept, for a message to name: the file the parent gave it
    (`protocol.LOG_VARIABLE`), else the run directory's backend.log."""
    return os.environ.get(protocol.LOG_VARIABLE) or "backend.log"


def attach_log(path: Path) -> None:
    """Append the process's stderr to `path` from now on, starting with what was written before."""
    if _capture:
        _capture.attach(path)


class StderrCapture:
    """Descriptors 1 and 2 → a pipe → the original stderr, attached log files and an in-memory tail."""

    def __init__(self) -> None:
        self._original = os.dup(2)
        read_end, write_end = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(write_end, 1)
        os.dup2(write_end, 2)
        os.close(write_end)
        self._read_end = read_end
        self._lock = threading.Lock()
        self._text: list[str] = []
        self._size = 0
        self._history = bytearray()  # everything before the first log file is attached
        self._files: list[IO[bytes]] = []
        self._thread = threading.Thread(target=self._pump, name="stderr-pump", daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        while True:
            try:
                data = os.read(self._read_end, 65536)
            except OSError:
                return
            if not data:
                return
            with self._lock:
                self._keep(data)
                for f in list(self._files):
                    try:
                        f.write(data)
                        f.flush()
                    except OSError:
                        self._files.remove(f)
            try:
                os.write(self._original, data)
            except OSError:
                pass  # nobody reads our stderr: the log file still has it

    def _keep(self, data: bytes) -> None:
        if not self._files:
            self._history += data
        text = data.decode("utf-8", errors="replace")
        self._text.append(text)
        self._size += len(text)
        while self._size > LOG_KEEP_CHARS and len(self._text) > 1:
            self._size -= len(self._text.pop(0))

    def text(self) -> str:
        with self._lock:
            return "".join(self._text)

    def attach(self, path: Path) -> None:
        f = open(path, "ab")
        with self._lock:
            f.write(bytes(self._history))
            f.flush()
            self._history.clear()
            self._files.append(f)

    def close(self) -> None:
        """Restore descriptors 1 and 2 to the original stderr and drain the pipe into the logs."""
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        os.dup2(self._original, 1)
        os.dup2(self._original, 2)  # the pipe's last write end closes: the pump reads to EOF
        self._thread.join(timeout=5)
        with self._lock:
            for f in self._files:
                f.close()
            self._files.clear()


def take_streams() -> IO[str]:
    """Reserve the real stdout for events and send every other output to stderr/the log.

    Call first thing, before TensorFlow is imported. Returns the event stream.
    """
    global _capture
    sys.stdout.flush()
    events = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    _capture = StderrCapture()
    return events


def release_streams() -> None:
    global _capture
    if _capture:
        _capture.close()
        _capture = None


def listen_for_stop(fd: int = 0) -> threading.Thread:
    """Watch stdin on a daemon thread: a stop command, or its end, requests a stop.

    Reads the raw descriptor: a daemon thread blocked inside `sys.stdin`'s
    buffered reader holds its lock and makes interpreter shutdown abort.
    """
    thread = threading.Thread(target=_listen, args=(fd,), name="stdin-listener", daemon=True)
    thread.start()
    return thread


def _listen(fd: int) -> None:
    pending = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        *lines, pending = (pending + chunk).split(b"\n")
        for line in lines:
            if line.strip():
                _command(line)
    if pending.strip():
        _command(pending)
    request_stop("parent gone (stdin closed)")


def _command(line: bytes) -> None:
    if protocol.is_stop(line):
        request_stop("stop requested")
    else:
        print(f"trainer_backend: ignored stdin line {line[:200]!r}", file=sys.stderr)
