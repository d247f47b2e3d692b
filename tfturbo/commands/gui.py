"""`tfturbo gui [WORKLOAD]` (and plain `tfturbo`): open the wizard.

Qt and the GUI package are imported only here, inside `main`, so every other
command starts without them; the GUI itself never imports TensorFlow.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..settings import DEFAULT_STEPS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("workload", metavar="WORKLOAD", nargs="?", default="",
                        help="workload to preselect: a .py file or builtin:NAME (default builtin:transformer)")
    parser.add_argument("--steps", type=int, default=DEFAULT_STEPS, help=f"steps per run (default {DEFAULT_STEPS})")
    parser.add_argument("--open", metavar="STUDY_DIR", default=None, help="open an earlier study in the run browser")


def main(args: argparse.Namespace) -> int:
    from tfturbo_gui.app import run

    workload = getattr(args, "workload", "") or ""
    if workload and not workload.startswith("builtin:"):
        workload = str(Path(workload).expanduser().resolve())
    return run(workload, steps=getattr(args, "steps", DEFAULT_STEPS), study=getattr(args, "open", None))
