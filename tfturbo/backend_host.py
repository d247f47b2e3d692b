"""Where this process's backend commands run, and the command line that starts one here.

The lowest piece of starting a backend: `backend_client` runs commands through
it, and `warm_start` starts its warm server with it, so neither imports the
other's caller. `use_host()` (the CLI's --host) sends every later command of
this process to a `RemoteHost` instead.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .remote import RemoteHost

_host: RemoteHost | None = None


def backend_command(command: str, argv: list[str]) -> list[str]:
    """`python -m trainer_backend COMMAND ARGV...` with this interpreter."""
    return [sys.executable, "-m", "trainer_backend", command, *argv]


def use_host(host: RemoteHost | None) -> None:
    """Run every later backend command of this process on `host` (None: here). Set once by the CLI's --host."""
    global _host
    _host = host


def current_host() -> RemoteHost | None:
    """The host `use_host()` chose (None: this machine)."""
    return _host


def runs_here() -> bool:
    """True when backend commands run on this machine (no --host): a run-pair process writes two run directories
    that only a local run can hand back."""
    return _host is None
