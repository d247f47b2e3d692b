"""Drive one `python -m trainer_backend` command from plain Python (the CLI and `tune`).

The GUI does the same through QProcess; both parse the stream with
`protocol.LineParser`. The child's stdin stays open for as long as we want it
to run: closing it (or this process dying) makes the backend stop.

With a `RemoteHost` (`--host`; `use_host()` sets it for every command of this
process) the child is ssh running the backend on that host (`tfturbo.remote`);
the events, the stop command and the run directory travel the same way.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, TextIO

from pathlib import Path

from . import crash, protocol, remote, runfiles, warm_start
# where commands run and the local command line live below this module (warm_start uses them too); a front end
# reaches them here, with the rest of starting a backend
from .backend_host import backend_command as backend_command
from .backend_host import current_host
from .backend_host import runs_here as runs_here
from .backend_host import use_host as use_host

STOP_GRACE_S = 10.0
TERMINATE_GRACE_S = 5.0


LOGS_KEPT = 50  # the user's cache keeps the logs of this many commands (the newest)
_log: str | None = None


def log_path() -> str:
    """Where the children's stderr goes when they have no run directory (env, audit, probe, early errors): a log
    of this command's own in the user's cache folder (`tfturbo/logs/`), one per `tfturbo` command or wizard
    session, so an error names the file its traceback is in and the next command never writes over it; the
    oldest logs beyond LOGS_KEPT go."""
    global _log
    if _log is None:
        folder = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "tfturbo" / "logs"
        folder.mkdir(parents=True, exist_ok=True)
        for old in sorted(folder.glob("*.log"), key=lambda p: p.stat().st_mtime)[:-LOGS_KEPT + 1]:
            old.unlink(missing_ok=True)
        _log = str(folder / f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log")
    return _log


@dataclass
class BackendResult:
    exit_code: int
    events: list[protocol.Event] = field(default_factory=list)
    skipped_lines: int = 0

    def last(self, type_: str) -> protocol.Event | None:
        for e in reversed(self.events):
            if e.get("type") == type_:
                return e
        return None

    @property
    def document(self) -> dict[str, Any] | None:
        """The command's final JSON document (the `result` event's `document`), read by its own class."""
        for e in reversed(self.events):
            if e.get("type") == protocol.RESULT:
                return e.get("document")
        return None

    @property
    def error(self) -> protocol.ErrorDoc | None:
        return protocol.error_of(self.last(protocol.ERROR))

    @property
    def status(self) -> str:
        e = self.last(protocol.DONE)
        return str(e.get("status")) if e else protocol.RunStatus.CRASHED


def python_path(first: list[str], current: str | None) -> str:
    """PYTHONPATH with the folders `first` before the `current` value (the patch check finds the modules beside
    the user's script: its copy runs from the study)."""
    return os.pathsep.join([*first, *([current] if current else [])])


def env_with_path(first: list[str]) -> dict[str, str]:
    """This process's environment for a backend child, with `first` ahead on its PYTHONPATH."""
    return {**os.environ, "PYTHONPATH": python_path(first, os.environ.get("PYTHONPATH"))}


def _workload_and_out(command: str, argv: list[str]) -> tuple[str | None, str | None]:
    from .cli_args import build_backend_parser, parse_args

    try:
        args = parse_args(build_backend_parser("trainer_backend"), [command, *argv])
    except SystemExit:  # the backend reports bad arguments in its own words
        return None, None
    return getattr(args, "workload", None), getattr(args, "out", None)


class _LocalEvents:
    """A remote run's events, appended to the local events.jsonl once the remote run directory exists."""

    def __init__(self, out: str | None) -> None:
        self.path = Path(out) / runfiles.EVENTS if out else None
        self.file: TextIO | None = None

    def write(self, event: protocol.Event) -> None:
        if self.path is None:
            return
        if self.file is None:
            before_run_dir = event.get("type") in (protocol.HELLO, protocol.ERROR, protocol.DONE, protocol.RESULT) \
                or (event.get("type") == protocol.PHASE and event.get("phase") in (protocol.BUILDING,
                                                                                   protocol.COMPILING))
            if before_run_dir:
                return
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.file = open(self.path, "a", encoding="utf-8")
        self.file.write(protocol.encode(event) + "\n")
        self.file.flush()

    def close(self) -> None:
        if self.file is not None:
            self.file.close()


def run_backend(command: str, argv: list[str], on_event: Callable[[protocol.Event], None] | None = None,
                stderr_path: str | None = None, env: dict[str, str] | None = None,
                cancel: threading.Event | None = None, host: remote.RemoteHost | None = None) -> BackendResult:
    """Run a backend command to completion, passing each event to `on_event` as it arrives.

    Ctrl-C (or `cancel` being set) sends the cooperative stop, then terminates
    and finally kills the child if it does not finish in time. No shell is
    involved: arguments go to the child as a list. `host` (default: `use_host()`'s)
    runs it there over ssh.
    """
    host = host or current_host()
    log_start = crash.log_size(stderr_path)
    stderr = open(stderr_path, "ab") if stderr_path else subprocess.DEVNULL
    child_env = dict(os.environ if env is None else env)
    child_env.setdefault("PYTHONUNBUFFERED", "1")
    if stderr_path:
        child_env[protocol.LOG_VARIABLE] = str(Path(stderr_path).resolve())
    workload = out = folder = None
    local_events = _LocalEvents(None)
    try:
        if host is None:
            child = backend_command(command, argv)
            for key, value in warm_start.child_env().items():  # a caller's own choice of server stays
                child_env.setdefault(key, value)
        else:
            workload, out = _workload_and_out(command, argv)
            if out is not None and Path(out).exists():
                runfiles.prepare_run_dir(out)  # refuse an existing run here, as the backend would there
            folder = remote.make_folder(host, workload, stderr)
            child = remote.backend_argv(host, folder, command, remote.remote_argv(argv, workload, out, folder))
            local_events = _LocalEvents(out)
        proc = subprocess.Popen(child, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, env=child_env)
    finally:
        if not isinstance(stderr, int):  # a file, not subprocess.DEVNULL
            stderr.close()
    result = BackendResult(exit_code=-1)
    parser = protocol.LineParser()
    stopper = None
    if cancel is not None:
        stopper = threading.Thread(target=_stop_when_set, args=(proc, cancel), daemon=True)
        stopper.start()
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            for event in parser.feed(line):
                result.events.append(event)
                local_events.write(event)
                if on_event:
                    on_event(event)
        result.events.extend(parser.close())
        result.exit_code = proc.wait()
    except KeyboardInterrupt:
        request_stop(proc)
        result.exit_code = _wait_or_kill(proc)
        for event in parser.feed(proc.stdout.read() if proc.stdout else b""):
            result.events.append(event)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stdin:
            try:
                proc.stdin.close()
            except OSError:
                pass
    local_events.close()
    if host is not None and folder is not None:
        _fetch(host, folder, out, stderr_path)
    result.skipped_lines = parser.skipped
    if result.last(protocol.DONE) is None and result.error is None:
        explained = crash.explain(stderr_path, log_start, argv)  # e.g. TensorFlow crashed after an OOM
        if explained is not None:
            result.events.append(explained)
            if on_event:
                on_event(explained)
    return result


def _fetch(host: remote.RemoteHost, folder: str, out: str | None, stderr_path: str | None) -> None:
    """The remote run directory into the local --out (the same layout), run.yaml naming the host."""
    with open(stderr_path, "ab") if stderr_path else open(os.devnull, "wb") as log:
        fetched = remote.fetch_and_clean(host, folder, out, Path(out) if out else None, log)
    run_yaml = Path(out) / runfiles.RUN_YAML if out else None
    if fetched and run_yaml is not None and run_yaml.exists():
        record = runfiles.read_yaml(run_yaml, [])
        record["host"] = host.describe()
        runfiles.write_yaml(run_yaml, record)


def request_stop(proc: subprocess.Popen) -> None:
    """Send the cooperative stop command; ignore a child that already closed its stdin."""
    try:
        assert proc.stdin is not None
        proc.stdin.write((protocol.encode(protocol.STOP_COMMAND) + "\n").encode())
        proc.stdin.flush()
    except (BrokenPipeError, OSError, ValueError, AssertionError):
        pass


def _wait_or_kill(proc: subprocess.Popen) -> int:
    try:
        return proc.wait(timeout=STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout=TERMINATE_GRACE_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()


def _stop_when_set(proc: subprocess.Popen, cancel: threading.Event) -> None:
    while proc.poll() is None:
        if cancel.wait(0.2):
            request_stop(proc)
            _wait_or_kill(proc)
            return
