"""A failed run explained in the app's words: what went wrong, what to do, and a one-click way out.

The backend's `error` event says what failed in its own terms (an exception
and a traceback). When the failure comes from an automatic fix tfturbo
applied itself (the float32 head, dropping the partial batch, the tf.data
fixes), the user's way out is not in backend.log: it is to run without that
fix, or to make the change in their own code. `explain` says so, and names
the fix to untick; the words come from the setting's declaration
(`Setting.failure` in tfturbo/settings.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from tfturbo import protocol
from tfturbo.settings import RunSettings, declared, fix_failures


@dataclass
class Explanation:
    message: str
    fix: str
    details: str
    untick: str | None = None  # the RunSettings field of the automatic fix to run without


def _failed_fix(settings: RunSettings, error: protocol.ErrorDoc) -> str | None:
    """The automatic fix this error came from, if any (its code is in the traceback or the message)."""
    text = f"{error.get('message') or ''}\n{error.get('traceback') or ''}"
    flags = {f.name: s.flag for f, s in declared()}
    for field, failure in fix_failures().items():
        if getattr(settings, field, False) and any(mark and mark in text for mark in (failure.code_at, flags[field])):
            return field
    return None


def explain(status: str | None, error: protocol.ErrorDoc | None, settings: RunSettings | None) -> Explanation | None:
    """How to show a run that did not complete; None for a completed (or cancelled-by-the-user) run."""
    if status in (protocol.RunStatus.COMPLETED, protocol.RunStatus.CANCELLED, None) and not error:
        return None
    error = error or {}
    message = str(error.get("message") or "")
    details = str(error.get("traceback") or "")
    field = _failed_fix(settings, error) if settings is not None else None
    if field is not None:
        failure = fix_failures()[field]
        return Explanation(f"tfturbo could not {failure.tried}: {message or 'the automatic fix failed'}",
                           f"run without the automatic fix (untick it and run again), or {failure.by_hand}",
                           details, field)
    fix = str(error.get("fix") or "")
    if error.get("log_only") or not fix:  # only a log to read: say where the details are instead
        fix = "the details below show where it failed" if details else "run it again; if it keeps failing, " \
            "the backend's messages are in backend.log in the study folder"
    if status == protocol.RunStatus.CRASHED and not message:
        message = "the training backend ended unexpectedly, without a summary"
    return Explanation(message or f"the run {status or 'failed'}", fix, details)


def outcome_cell(status: str | None) -> str:
    """The verdict of a run that has no measured result, as the compare table and the run browser say it."""
    return {protocol.RunStatus.CRASHED: "not measured: the run crashed", protocol.RunStatus.FAILED: "not measured: the run failed",
            protocol.RunStatus.NAN_STOPPED: "not measured: the loss became NaN",
            protocol.RunStatus.CANCELLED: "stopped early: partial measurement"}.get(str(status), f"not measured ({status})")
