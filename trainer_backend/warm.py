"""Warm start: backend processes forked from one that has already imported TensorFlow.

Why (docs/MEASUREMENT.md, "Start-up: the warm start"): every replicate of a trial is its
own process, and importing TensorFlow and Keras takes 3–4 s of each on a
2-core CPU — a quarter of a default `tfturbo tune` of builtin:transformer
went to it. A study therefore starts one server (`python -m trainer_backend
warm-server SOCKET`) that imports them once, without touching the runtime (no
device, no eager context, no thread pool: those are made in each child, as in
a fresh process), and forks a child per backend command.

The front ends do not change: they start `python -m trainer_backend CMD ...`
as always, with TFTURBO_WARM_SOCKET in its environment. That process (the
client) imports nothing heavy: it hands its stdin, stdout and stderr, its
arguments, environment and working directory to the server (`handoff`),
which forks; the child takes them over and runs the command exactly as the
client would have, events and stop command included. The client forwards
SIGINT/SIGTERM/SIGHUP to the child and exits with the child's exit status;
if the client dies (killed), the server kills the child, so a killed run
never trains on in the background. The server refuses — and the client
runs the command itself — when anything read at import time differs
(another checkout of the code, TF_/KERAS_/oneDNN/CUDA/PYTHON* variables), and
any failure to reach it means the command simply runs cold.

Each child reseeds Python's and NumPy's global random generators (a fresh
process draws new seeds; the backend seeds what it trains explicitly), and
its `process_s` counts from the client's start, so the sizing of paired
replicates sees what the process really cost.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import socket
import sys
from typing import Callable, TypedDict, cast

from tfturbo.warm_start import READY, SOCKET_ENV

WARM_COMMANDS = ("run", "run-pair", "audit", "probe-input", "env")  # what a study asks of the backend
# variables TensorFlow, Keras, oneDNN, CUDA or Python read while importing: a child must have the server's
_IMPORT_TIME_PREFIXES = ("TF_", "KERAS_", "ONEDNN", "DNNL_", "MKL", "KMP_", "OMP_", "CUDA", "XLA_", "PYTHON",
                         "VIRTUAL_ENV", "LD_")
_SET_PER_RUN = ("TF_XLA_FLAGS", "PYTHONUNBUFFERED")  # read lazily (TF_XLA_FLAGS at the first compilation) or not by TF
LOG_LEVEL, QUIET = "TF_CPP_MIN_LOG_LEVEL", "1"
_FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_MAX_MESSAGE = 1 << 22


def import_time_env(env: dict[str, str]) -> dict[str, str]:
    """The variables of `env` that take effect when TensorFlow and Keras are imported (TF_CPP_MIN_LOG_LEVEL as
    the backend sets it when it is unset, `__main__._quiet_tensorflow`)."""
    found = {k: v for k, v in env.items() if k.startswith(_IMPORT_TIME_PREFIXES) and k not in _SET_PER_RUN}
    return {**{LOG_LEVEL: QUIET}, **found}


def _package_dir() -> str:
    return os.path.dirname(os.path.abspath(__file__))


class Request(TypedDict):
    """A client's one line to the server (its standard streams travel beside it): what the child runs, and where."""

    argv: list[str]
    env: dict[str, str]
    cwd: str
    path: list[str]  # sys.path
    started: float  # when the client process started (`trainer_backend.STARTED`)
    package: str  # the client's trainer_backend folder: a server of another checkout refuses


class Reply(TypedDict, total=False):
    """The server's lines to a client: the child's pid or why it refused, then the child's exit code."""

    pid: int
    refused: str
    exit: int


# ---------------------------------------------------------------- the client (python -m trainer_backend CMD)

def handoff(argv: list[str]) -> int | None:
    """Run `argv` in a child of the warm server; its exit code, or None when this process must run it itself
    (no server configured or reachable, a command the server does not serve, the server refused)."""
    path = os.environ.get(SOCKET_ENV)
    if not path or not argv or argv[0] not in WARM_COMMANDS:
        return None
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(path)
    except OSError:
        return None
    import trainer_backend

    message: Request = {"argv": list(argv), "env": dict(os.environ), "cwd": os.getcwd(), "path": list(sys.path),
               "started": trainer_backend.STARTED, "package": _package_dir()}
    try:
        socket.send_fds(conn, [json.dumps(message).encode() + b"\n"], [0, 1, 2])
        reader = conn.makefile("rb")
        reply = _read_json(reader)
    except OSError:
        conn.close()
        return None
    if reply is None or "pid" not in reply:
        why = reply.get("refused", "no answer") if reply is not None else "no answer"
        print(f"tfturbo: warm start refused ({why}); this run starts TensorFlow itself", file=sys.stderr, flush=True)
        conn.close()
        return None
    pid = int(reply["pid"])
    for sig in _FORWARDED:
        signal.signal(sig, lambda signum, frame: _forward(pid, signum))
    ended = _read_json(reader)
    if ended is None:  # the server went away: the child with it
        _forward(pid, signal.SIGKILL)
        return 1
    code = int(ended.get("exit", 1))
    if code < 0:  # ended by a signal: end the same way, as the fresh process would have
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


def _forward(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except OSError:
        pass


def _read_json(reader) -> Reply | None:
    line = reader.readline(_MAX_MESSAGE)
    if not line:
        return None
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return cast(Reply, value) if isinstance(value, dict) else None


# ---------------------------------------------------------------- the server

def preload() -> None:
    """Import what every backend command imports, without starting TensorFlow's runtime."""
    os.environ.setdefault(LOG_LEVEL, QUIET)  # as `__main__._quiet_tensorflow`, before the import
    import keras  # noqa: F401
    import tensorflow  # noqa: F401

    from .commands import audit, env, probe_input, run, run_pair  # noqa: F401
    from tensorflow.python.eager import context

    if context.context()._context_handle is not None:  # a child would share the parent's runtime
        raise RuntimeError("TensorFlow's runtime started while importing: a forked child could not start its own")
    import gc

    gc.collect()
    gc.freeze()  # the imported objects stay out of every child's collections: their pages are shared, not copied


def serve(path: str, run: Callable[[list[str]], int]) -> int:
    """Listen on `path` and fork a child per connection until stdin closes (the front end is gone); each child
    runs its command line with `run` (the backend's `main`, handed in by `__main__.entry`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # its children are stopped through their clients
    preload()
    if os.path.exists(path):
        os.unlink(path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(16)
    own_env = import_time_env(dict(os.environ))
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "accept")
    selector.register(sys.stdin.fileno(), selectors.EVENT_READ, "stdin")
    # a child's end wakes the loop at once: its client (and the front end reading its stdout) waits for the status
    woken, waker = socket.socketpair()
    waker.setblocking(False)
    signal.set_wakeup_fd(waker.fileno())
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    selector.register(woken, selectors.EVENT_READ, "child ended")
    children: dict[int, socket.socket] = {}  # pid -> its client's connection
    print(READY, flush=True)
    try:
        while True:
            for key, _ in selector.select(timeout=0.5):
                if key.data == "accept":
                    conn, _ = listener.accept()
                    pid = _start(conn, own_env, (listener, woken, waker), children, run)
                    if pid is not None:
                        children[pid] = conn
                        selector.register(conn, selectors.EVENT_READ, pid)
                    else:
                        conn.close()
                elif key.data == "stdin":
                    if not os.read(sys.stdin.fileno(), 4096):
                        return 0
                elif key.data == "child ended":
                    woken.recv(4096)
                else:  # a client's connection readable: it sends nothing more, so it closed (killed)
                    client = key.fileobj
                    assert isinstance(client, socket.socket), "registered above: a client's connection"
                    if not client.recv(1):
                        selector.unregister(client)
                        _forward(key.data, signal.SIGKILL)
            _reap(children, selector)
    finally:
        for pid in list(children):
            _forward(pid, signal.SIGKILL)
        listener.close()
        try:
            os.unlink(path)
            os.rmdir(os.path.dirname(path))  # the front end's private folder, when nothing else is in it
        except OSError:
            pass


def _start(conn: socket.socket, own_env: dict[str, str], own: tuple[socket.socket, ...],
           children: dict[int, socket.socket], run: Callable[[list[str]], int]) -> int | None:
    """Fork the child for one client; its pid, or None (refused, or the client gave up)."""
    try:
        data, fds, _, _ = socket.recv_fds(conn, _MAX_MESSAGE, 3)
        while not data.endswith(b"\n") and len(data) < _MAX_MESSAGE:
            more = conn.recv(_MAX_MESSAGE)
            if not more:
                break
            data += more
        message = json.loads(data)
    except (OSError, ValueError):
        return None
    why = _refusal(message, fds, own_env)
    if why:
        for fd in fds:
            os.close(fd)
        _send(conn, {"refused": why})
        return None
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for server_socket in own:
            server_socket.close()
        conn.close()
        for other in children.values():
            other.close()
        _child(message, fds, run)
    for fd in fds:
        os.close(fd)
    _send(conn, {"pid": pid})
    return pid


def _refusal(message: Request, fds: list[int], own_env: dict[str, str]) -> str:
    if len(fds) != 3:
        return "the client's standard streams did not arrive"
    if message.get("package") != _package_dir():
        return f"another checkout of tfturbo ({message.get('package')})"
    theirs = import_time_env(dict(message.get("env") or {}))
    differ = sorted(k for k in set(theirs) | set(own_env) if theirs.get(k) != own_env.get(k))
    return f"{', '.join(differ)} differ from the warm server's" if differ else ""


def _child(message: Request, fds: list[int], run: Callable[[list[str]], int]) -> None:
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.environ.clear()
        os.environ.update(message["env"])
        os.chdir(message["cwd"])
        sys.path[:] = message["path"]
        sys.argv = [sys.argv[0], *message["argv"]]
        import random

        import numpy as np

        import trainer_backend

        random.seed()
        np.random.seed()
        trainer_backend.STARTED = float(message["started"])
        trainer_backend.WARM = True
        code = run(list(message["argv"]))
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    except BaseException:  # noqa: BLE001 - the child must end with a code, never back in the server's loop
        import traceback

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _reap(children: dict[int, socket.socket], selector: selectors.BaseSelector) -> None:
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = children.pop(pid, None)
        if conn is None:
            continue
        try:
            selector.unregister(conn)
        except (KeyError, ValueError):
            pass
        _send(conn, {"exit": os.waitstatus_to_exitcode(status)})
        conn.close()


def _send(conn: socket.socket, value: Reply) -> None:
    try:
        conn.sendall(json.dumps(value).encode() + b"\n")
    except OSError:
        pass
