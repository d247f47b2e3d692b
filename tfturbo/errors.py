"""User-facing errors: short, specific, and carrying the fix.

A `UserError` is something the user can correct (a broken workload, a bad
argument, an unwritable directory); it maps to exit code 2 and is shown as one
line. Anything else is a bug or a training failure and keeps its traceback for
the log and the "details" view.
"""

from __future__ import annotations

import re
from typing import TypeVar

T = TypeVar("T")
_TERMINAL_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


def plain_line(text: str, limit: int = 300) -> str:
    """`text` as one line a user reads: terminal escapes (Keras bolds its messages) removed, whitespace collapsed,
    cut to `limit` characters (0: not cut)."""
    line = " ".join(_TERMINAL_ESCAPES.sub("", str(text)).split())
    return line if not limit or len(line) <= limit else line[:limit - 3] + "..."


def required(value: T | None, first: str) -> T:
    """`value`, there by the order of the calls (`first` says what comes before): a None is a programming error,
    never the user's."""
    assert value is not None, first
    return value


class UserError(Exception):
    """An error the user can fix; `str(err)` is the one line to show."""

    exit_code = 2

    def __init__(self, problem: str, fix: str = "", where: str = ""):
        self.problem = problem
        self.fix = fix
        self.where = where
        super().__init__(self.line())

    def what(self) -> str:
        """What is wrong, where: the line without its fix (an `error` event carries the fix on its own)."""
        return f"{self.where}: {self.problem}" if self.where else self.problem

    def line(self) -> str:
        return " — ".join([self.what(), self.fix] if self.fix else [self.what()])


class WorkloadError(UserError):
    """The workload file or builtin cannot be loaded or does not keep the contract."""


class OutputDirError(UserError):
    """The output directory cannot be used (exists with a run, unwritable, disk full)."""
