"""The warm backend server of a study: one process that imported TensorFlow, forking every backend command.

A study starts it (`warm_backend()`, around `tfturbo tune` and `tfturbo ab`)
and every `python -m trainer_backend CMD` child it launches finds it through
SOCKET_ENV and runs as a fork of it, skipping the 3–4 s TensorFlow import
(trainer_backend/warm.py, docs/MEASUREMENT.md "Start-up: the warm start"). Nothing else
changes for a front end: the same command line, events, stop command and exit
status. Without the server (it failed to start, `TFTURBO_WARM=0`, a remote
--host, a platform without fork) every command starts cold, as before.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shutil
import subprocess
import tempfile
import time
from typing import IO, Iterator

from .backend_host import backend_command, runs_here

SOCKET_ENV = "TFTURBO_WARM_SOCKET"
SWITCH_ENV = "TFTURBO_WARM"  # "0": every backend command starts its own TensorFlow
SERVER_COMMAND = "warm-server"
READY = "ready"
READY_TIMEOUT_S = 120.0  # its imports on a loaded 2-core machine; past this the study starts cold
STOP_TIMEOUT_S = 5.0


class Server:
    """The warm server of a `warm_backend()` block: started by the block's first backend command (so an error
    found before any command never waits for TensorFlow), serving every later one. The test suite starts one
    per test process (tests/conftest.py)."""

    def __init__(self, log_path: str | None) -> None:
        self.log_path = log_path
        self.process: subprocess.Popen[bytes] | None = None
        self.folder: str | None = None
        self.path = ""
        self.ready: bool | None = None  # None: not started yet

    def start(self) -> bool:
        """Start the server and wait for its imports (what the first command's own import would take)."""
        self.ready = False
        self.folder = tempfile.mkdtemp(prefix="tfturbo-warm-")
        self.path = os.path.join(self.folder, "socket")
        log = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL
        try:
            self.process = subprocess.Popen(backend_command(SERVER_COMMAND, [self.path]), stdin=subprocess.PIPE,
                                            stdout=subprocess.PIPE, stderr=log, start_new_session=True,
                                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
        except OSError:
            return False
        finally:
            if not isinstance(log, int):  # a file, not subprocess.DEVNULL
                log.close()
        self.ready = wait_ready(self.process.stdout, READY_TIMEOUT_S) and self.process.poll() is None
        return self.ready

    def stop(self) -> None:
        if self.process is not None:
            try:
                if self.process.stdin:
                    self.process.stdin.close()
                self.process.wait(timeout=STOP_TIMEOUT_S)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()
        if self.folder:
            shutil.rmtree(self.folder, ignore_errors=True)


_server: Server | None = None


@contextlib.contextmanager
def warm_backend(log_path: str | None = None) -> Iterator[None]:
    """Fork this block's local backend children from one warm server (`child_env`); it ends with the block,
    or with this process however it ends (its stdin reaches end of file). `log_path`: its stderr."""
    global _server
    if _server is not None or os.environ.get(SOCKET_ENV) or os.environ.get(SWITCH_ENV) == "0" \
            or not hasattr(os, "fork"):
        yield
        return
    if not runs_here():  # the runs train on another host: nothing here to warm
        yield
        return
    _server = Server(log_path)
    try:
        yield
    finally:
        server, _server = _server, None
        server.stop()


def child_env() -> dict[str, str]:
    """What a local backend child's environment needs to be forked from the warm server ({} outside a
    `warm_backend()` block, or when the server could not start: the child then imports TensorFlow itself)."""
    server = _server
    if server is None:
        return {}
    if server.ready is None:
        server.start()
    return {SOCKET_ENV: server.path} if server.ready else {}


def wait_ready(stream: IO[bytes] | None, timeout_s: float) -> bool:
    """Whether the server said READY on `stream` (its stdout) within `timeout_s`."""
    if stream is None:
        return False
    deadline = time.monotonic() + timeout_s
    with selectors.DefaultSelector() as selector:
        selector.register(stream, selectors.EVENT_READ)
        if not selector.select(timeout=max(0.0, deadline - time.monotonic())):
            return False
    return stream.readline().strip() == READY.encode()
