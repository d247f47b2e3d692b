"""The states a checklist step shows in the step list.

A trial measured and judged "not kept" is an answer, not a problem: it is NOT_KEPT (neutral), and
ATTENTION is kept for what needs the user (a failed run, an input-bound job, a fix to make). A step the study
decided not to run, because what it would measure cannot differ (the XLA lever's refusal before training,
XLA_NOT_ACTIVE), is NOT_RUN: decided, like NOT_KEPT, never "not started".
"""

from tfturbo.verdicts import Decision
from tfturbo.numbers import counted

NOT_STARTED = "not started"
RUNNING = "running"
PASSED = "passed"
ATTENTION = "needs attention"
NOT_KEPT = f"measured — {Decision.NOT_KEPT}"
NOT_RUN = "decided — not run"
STATUSES = (NOT_STARTED, RUNNING, PASSED, ATTENTION, NOT_KEPT, NOT_RUN)
STOPPED = "measured, stopped"  # a trial cut off before its verdict (`stopped`): it waits for the user to continue

COLORS = {NOT_STARTED: "#9ca3af", RUNNING: "#2563eb", PASSED: "#16a34a", ATTENTION: "#d97706", NOT_KEPT: "#64748b",
          NOT_RUN: "#64748b"}


def stopped(pairs: int) -> str:
    """A trial the window closed on, taken up again from its files: "2 pairs measured, stopped"."""
    return f"{counted(pairs, 'pair')} {STOPPED}"


def color_of(status: str) -> str:
    """The step list's colour of `status` (a stopped trial's needs the user, as ATTENTION)."""
    return COLORS[ATTENTION] if status.endswith(STOPPED) else COLORS.get(status, COLORS[NOT_STARTED])
