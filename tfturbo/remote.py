"""The backend on another machine, over ssh (`--host [user@]HOST [--remote-python PATH]`).

Users reach a GPU box with ssh, so tfturbo uses theirs: the command comes from
TFTURBO_SSH (default `ssh`, split like a shell would: `ssh -F cfg -p 2222`),
so ~/.ssh/config, keys, agents, jump hosts and ports work as they already do.
Nothing is installed remotely; the host needs `tar` and a Python with tfturbo
installed (`--remote-python`, default `python3`).

One remote run, in four ssh sessions:
1. a private temporary folder is made and the workload's folder is copied into
   it (a tar stream on ssh's stdin, written by Python's tarfile);
2. `python -m trainer_backend CMD ARGS` runs there, its events streaming back on
   ssh's stdout — into the caller and, once the remote run directory exists,
   into the local run directory's events.jsonl as they arrive — and ssh's
   stdin kept open: closing it (Stop, a killed client, a dropped connection)
   is the end of the backend's stdin, which stops the backend;
3. the remote run directory comes back as a tar stream into the local one, so
   the local study is complete and laid out as if it had run here;
4. the temporary folder is removed.

Every remote argument is quoted with `shlex.quote` into the one command line
ssh hands to the remote shell; nothing passes through a local shell.
"""

from __future__ import annotations

import io
import os
import shlex
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Iterator

from .errors import UserError

SSH_ENV = "TFTURBO_SSH"
DEFAULT_PYTHON = "python3"
COPY_LIMIT_ENV = "TFTURBO_REMOTE_COPY_MB"
DEFAULT_COPY_LIMIT_MB = 500
SKIPPED = {"__pycache__", ".git", ".venv", "venv", "node_modules", ".mypy_cache", ".pytest_cache"}
KEEPALIVE = ["-o", "ServerAliveInterval=10", "-o", "ServerAliveCountMax=3"]  # a dead link ends ssh in ~30 s
FORWARDED_ENV = ("TFTURBO_LOGICAL_CPUS", "TF_CPP_MIN_LOG_LEVEL")  # settings the backend reads from its environment
WORK, OUT = "work", "out"
_MAKE_FOLDER = ('d=$(mktemp -d "${TMPDIR:-/tmp}/tfturbo-XXXXXX") && mkdir "$d/work" "$d/out" && '
                'tar -x -C "$d/work" && printf "%s" "$d"')


@dataclass(frozen=True)
class RemoteHost:
    """Where the backend runs: an ssh destination and the Python there."""

    host: str
    python: str = DEFAULT_PYTHON

    def __post_init__(self) -> None:
        if not self.host or self.host.startswith("-") or any(c.isspace() for c in self.host):
            raise UserError(f"--host {self.host!r} is not an ssh destination", "pass --host [user@]HOST")
        if not self.python:
            raise UserError("--remote-python is empty", "pass the remote interpreter, e.g. --remote-python python3")

    def ssh(self, remote_command: str, *options: str) -> list[str]:
        """The local argv that runs `remote_command` (already quoted) on the host."""
        return [*ssh_command(), *KEEPALIVE, *options, "--", self.host, remote_command]

    def describe(self) -> dict[str, str]:
        return {"host": self.host, "python": self.python}


def ssh_command() -> list[str]:
    text = os.environ.get(SSH_ENV, "").strip() or "ssh"
    try:
        argv = shlex.split(text)
    except ValueError as e:
        raise UserError(f"{SSH_ENV}={text!r} cannot be split into a command ({e})",
                        f'set {SSH_ENV} like a command line, e.g. {SSH_ENV}="ssh -F ~/.ssh/other_config"') from e
    return argv


def from_args(host: str | None, python: str | None) -> RemoteHost | None:
    if not host:
        if python:
            raise UserError("--remote-python needs --host", "add --host [user@]HOST")
        return None
    return RemoteHost(host, python or DEFAULT_PYTHON)


# ------------------------------------------------------------------------------ what travels

def upload_root(workload: str | None) -> Path | None:
    """The folder copied to the host: the workload file's own (its helpers and data); None for builtins."""
    if not workload or workload.startswith("builtin:"):
        return None
    path = Path(workload)
    if not path.is_file():
        return None  # the backend reports the missing file in its own words
    return path.resolve().parent


def _files(root: Path) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED and not d.startswith("."))
        for name in sorted(filenames):
            p = Path(dirpath) / name
            if p.is_file() and not p.is_symlink():
                yield p


def write_upload(root: Path | None, sink: IO[bytes]) -> None:
    """The workload's folder as a tar stream (an empty archive when nothing travels)."""
    limit = int(os.environ.get(COPY_LIMIT_ENV) or DEFAULT_COPY_LIMIT_MB) * 1024 * 1024
    total = 0
    with tarfile.open(fileobj=sink, mode="w|") as tar:
        if root is None:
            return
        for p in _files(root):
            total += p.stat().st_size
            if total > limit:
                raise UserError(f"the workload's folder {root} holds more than {limit // (1024 * 1024)} MB to copy "
                                "to the host", f"move the workload into a folder of its own, or raise "
                                               f"{COPY_LIMIT_ENV}")
            tar.add(p, arcname=p.relative_to(root).as_posix(), recursive=False)


LOCAL_ONLY = ("--val-set",)  # options naming a folder of this machine's study: a remote run reads its own data


def remote_argv(argv: list[str], workload: str | None, out: str | None, folder: str) -> list[str]:
    """The backend's arguments on the host: the workload and --out moved into the remote folder, the options that
    name a local folder (LOCAL_ONLY) left out — each remote run validates on its own examples, which the gate
    pairs by their content digests (or refuses, saying so, where they differ)."""
    result = list(argv)
    end = result.index("--") if "--" in result else len(result)
    for option in LOCAL_ONLY:
        while option in result[:end]:
            i = result.index(option)
            del result[i:i + 2]
            end -= 2
    if workload is not None and upload_root(workload) is not None:
        remote_workload = f"{folder}/{WORK}/{Path(workload).name}"
        result[result.index(workload, 0, end)] = remote_workload
    if out is not None:
        remote_out = f"{folder}/{OUT}/{Path(out).name or 'run'}"
        for i, arg in enumerate(result[:end]):
            if arg == "--out" and i + 1 < end:
                result[i + 1] = remote_out
            elif arg.startswith("--out="):
                result[i] = f"--out={remote_out}"
    return result


def remote_out(out: str, folder: str) -> str:
    return f"{folder}/{OUT}/{Path(out).name or 'run'}"


# ------------------------------------------------------------------------------ the sessions

class RemoteError(UserError):
    """ssh could not reach the host or the host lacks what the backend needs (exit 2, one line)."""


def make_folder(host: RemoteHost, workload: str | None, log: IO[bytes] | int) -> str:
    """Session 1: the remote temporary folder, with the workload's folder in it; returns its path."""
    proc = subprocess.Popen(host.ssh(_MAKE_FOLDER), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        write_upload(upload_root(workload), proc.stdin)
    except BrokenPipeError:
        pass  # ssh failed; its exit status says so below
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    finally:
        try:
            proc.stdin.close()
        except OSError:
            pass
    folder = proc.stdout.read().decode("utf-8", errors="replace").strip()
    if proc.wait() != 0 or not folder.startswith("/"):
        raise RemoteError(f"cannot prepare a folder on {host.host} over ssh (exit {proc.returncode})",
                          f"check that `{shlex.join(ssh_command())} {host.host} true` works without a password "
                          "prompt and that the host has tar; ssh's message is in the log")
    return folder


def backend_argv(host: RemoteHost, folder: str, command: str, argv: list[str]) -> list[str]:
    """Session 2's local argv: the backend in the remote folder, its environment settings forwarded."""
    env = [f"{k}={os.environ[k]}" for k in FORWARDED_ENV if os.environ.get(k)]
    remote = shlex.join(["env", "PYTHONUNBUFFERED=1", *env, host.python, "-m", "trainer_backend", command, *argv])
    return host.ssh(f"cd {shlex.quote(folder)} && exec {remote}")


def fetch_and_clean(host: RemoteHost, folder: str, out: str | None, local_out: Path | None,
                    log: IO[bytes] | int) -> bool:
    """Sessions 3 and 4: the remote run directory into `local_out` (True when it came), then the folder removed."""
    clean = f"rm -rf {shlex.quote(folder)}"
    if out is None or local_out is None:
        subprocess.run(host.ssh(clean), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
        return False
    src = shlex.quote(remote_out(out, folder))
    proc = subprocess.run(host.ssh(f"if [ -d {src} ]; then tar -c -C {src} .; fi; s=$?; {clean}; exit $s"),
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log)
    if proc.returncode != 0 or not proc.stdout:
        return False
    local_out.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(proc.stdout), mode="r:") as tar:
        tar.extractall(local_out, filter="data")  # no absolute paths, no `..`, no links out of the folder
    return True
