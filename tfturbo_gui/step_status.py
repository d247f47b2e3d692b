"""The four states a checklist step shows in the step list."""

NOT_STARTED = "not started"
RUNNING = "running"
PASSED = "passed"
ATTENTION = "needs attention"
STATUSES = (NOT_STARTED, RUNNING, PASSED, ATTENTION)

COLORS = {NOT_STARTED: "#9ca3af", RUNNING: "#2563eb", PASSED: "#16a34a", ATTENTION: "#d97706"}
