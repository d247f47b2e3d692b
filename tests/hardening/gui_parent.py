"""Stands in for the GUI process: one backend run started through `BackendProcess` (QProcess), then waits.

    python gui_parent.py RUN_DIR

Prints `backend PID` once the run reports steps, then runs its event loop
until it is killed. The hardening test SIGKILLs this process and checks that
the backend notices (end of its stdin) and exits on its own.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parents[1])]
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from hardening_helpers import mlp_argv  # noqa: E402
from PySide6.QtCore import QCoreApplication  # noqa: E402

from tfturbo import protocol  # noqa: E402
from tfturbo_gui.run_process import BackendProcess  # noqa: E402


def main() -> int:
    out = Path(sys.argv[1])
    app = QCoreApplication([sys.argv[0]])
    process = BackendProcess()

    def on_events(events: list) -> None:
        if any(e.get("type") == protocol.STEPS for e in events) and not on_events.told:
            on_events.told = True
            print(f"backend {process.pid()}", flush=True)

    on_events.told = False
    process.events_received.connect(on_events)
    process.ended.connect(lambda data: app.exit(1))  # the run must not end before the test kills us
    process.start("run", mlp_argv(out), name=out.name, stderr_path=str(out.parent / "backend-stderr.log"))
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
