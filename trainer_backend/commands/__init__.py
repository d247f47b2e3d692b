"""Backend commands: `trainer_backend.commands.<name>.main(args, writer)`.

Each command emits its events through `writer`, ends by emitting a `result`
event with its JSON document, and returns its exit code — or a
`(status, exit_code)` pair when the `done` status is not simply completed
(exit 0) or failed (otherwise). `trainer_backend.__main__` adds the `hello`,
`error` and `done` events around it.
"""

from __future__ import annotations

import sys
import traceback
from dataclasses import dataclass

from tfturbo import protocol
from tfturbo.crash import oom_fix
from tfturbo.errors import UserError, plain_line

from ..stdio import log_name


@dataclass
class ErrorReport:
    kind: str
    message: str
    fix: str
    exit_code: int
    log_only: bool = False  # `fix` only points at the log (`protocol.ErrorDoc.log_only`)


def _is_out_of_memory(exc: BaseException) -> bool:
    if isinstance(exc, MemoryError):
        return True
    tf = sys.modules.get("tensorflow")  # not imported yet: the error cannot be one of TensorFlow's
    return tf is not None and isinstance(exc, tf.errors.ResourceExhaustedError)


def describe_error(exc: BaseException, kind: str = protocol.INTERNAL, batch_size: int | None = None) -> ErrorReport:
    """What the `error` event says about `exc`: one line, the fix, and the exit code."""
    if isinstance(exc, UserError):
        return ErrorReport(protocol.BAD_INPUT, exc.what(), exc.fix, exc.exit_code)
    if _is_out_of_memory(exc):
        return ErrorReport(protocol.OUT_OF_MEMORY, f"out of memory: {_first_line(exc)}", oom_fix(batch_size), 1)
    return ErrorReport(kind, f"{type(exc).__name__}: {_first_line(exc)}", f"see the traceback in {log_name()}", 1,
                       log_only=True)


def emit_error(writer: protocol.EventWriter, exc: BaseException, kind: str = protocol.INTERNAL,
               batch_size: int | None = None, fix: str | None = None, also: protocol.ErrorDoc | None = None
               ) -> ErrorReport:
    """The `error` event; `fix` replaces the generic fix when the cause is known (a training-failure diagnosis);
    `also`: what the event says besides (a dead worker's end, `multiworker.WorkerFailed.said`)."""
    report = describe_error(exc, kind, batch_size)
    if fix:
        report.fix, report.log_only = fix, False
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    writer.emit(protocol.ERROR, kind=report.kind, message=report.message, fix=report.fix, traceback=tb,
                **({"log_only": True} if report.log_only else {}), **(also or {}))
    return report


def _first_line(exc: BaseException) -> str:
    """One line saying what went wrong.

    TensorFlow's graph errors start with the Python stack of the op ("Graph
    execution error: Detected at node ... File ...") and end with the cause;
    for them the last line that is not stack or node noise is the one to show.
    """
    text = str(exc)
    if hasattr(exc, "op") and hasattr(exc, "error_code"):  # tf.errors.OpError
        noise = ("[[", "[Op:", "Hint:", "Cf.", "File ", "Detected at node", "Graph execution error")
        causes = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith(noise)]
        text = causes[-1] if causes else text
    return plain_line(text) or "(no message)"
