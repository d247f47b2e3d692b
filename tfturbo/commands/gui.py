"""`tfturbo gui [WORKLOAD]` (and plain `tfturbo`): open the wizard.

Qt and the GUI package are imported only here, inside `main`, so every other
command starts without them; the GUI itself never imports TensorFlow.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..errors import UserError
from ..settings import DEFAULT_STEPS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("workload", metavar="WORKLOAD", nargs="?", default="",
                        help="workload to preselect: a .py file or builtin:NAME (default builtin:transformer)")
    parser.add_argument("--steps", type=int, default=DEFAULT_STEPS, help=f"steps per run (default {DEFAULT_STEPS})")
    parser.add_argument("--open", metavar="STUDY_DIR", default=None, help="open an earlier study in the run browser")


def check_display() -> None:
    """Say so in one line when there is no screen, instead of Qt's abort about platform plugins."""
    if sys.platform.startswith("linux") and not any(
            os.environ.get(v) for v in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")):
        raise UserError("no display to open the window on (DISPLAY is not set)",
                        "run it in a desktop session (or over `ssh -X`), or tune without a window: "
                        "tfturbo tune WORKLOAD --out STUDY_DIR")


def main(args: argparse.Namespace) -> int:
    check_display()
    from tfturbo_gui.app import run

    workload = getattr(args, "workload", "") or ""
    if workload and not workload.startswith("builtin:"):
        workload = str(Path(workload).expanduser().resolve())
    return run(workload, steps=getattr(args, "steps", DEFAULT_STEPS), study=getattr(args, "open", None))
