"""`tfturbo tune WORKLOAD --out STUDY_DIR`: the whole checklist unattended.

The same command on a STUDY_DIR whose study did not finish (killed, a lost
ssh session, Ctrl-C) continues it: one line says so, every finished run is
re-used and only what was incomplete is measured (`--restart` starts over).

Prints one line per rung while it works (stderr), then the table, the
recommendation and the code changes (stdout), or with `--json` the `tune`
document (docs/ARCHITECTURE.md, "Command line"). Ctrl-C stops the current rung cooperatively
and ends the study with what was measured; a second Ctrl-C stops at once.
Exit codes: 0 done (also when the job is input-bound), 1 the baseline or
backend failed, 2 bad input, 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any, Callable

from .. import console, protocol
from ..backend_client import log_path
from ..cli_args import WORKLOAD_HELP
from ..errors import UserError
from ..numbers import counted
from ..runfiles import REPORT_PDF, RUNS_DIR, STUDY_YAML
from ..warm_start import warm_backend
from ..tune.ladder import Ladder, TuneOptions, remove_study, unfinished_study
from ..tune.options import TUNE, add_options, values_from_args
from ..tune.render import render_study
from ..trials.verdict import Tolerance
from ..trials.way_forward import for_rung
from ..tune.study import Study, StudyStatus
from ..workload_kind import is_script


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("workload", metavar="WORKLOAD", help=WORKLOAD_HELP)
    parser.set_defaults(script_args=[])  # what follows `--`: the training script's own options, for every rung
    parser.add_argument("--out", required=True, metavar="STUDY_DIR",
                        help="study directory to create, or an unfinished study's to continue")
    parser.add_argument("--restart", action="store_true",
                        help="start the study in STUDY_DIR over, deleting its runs (asks first in a terminal); "
                             "without it an unfinished study continues and nothing is deleted")
    add_options(parser, TUNE)  # the study options (tfturbo/tune/options.py), the same as `ab`'s where it takes them
    parser.add_argument("--report", metavar="FILE.pdf", default=None,
                        help=f"where to write the PDF report (default STUDY_DIR/{REPORT_PDF})")
    parser.add_argument("--no-report", action="store_true", help="do not write the PDF report")
    parser.add_argument("--json", action="store_true", help="print the tune document as JSON")


def options_from_args(args: argparse.Namespace) -> TuneOptions:
    values = values_from_args(args, TUNE)
    return TuneOptions(workload=args.workload, out=Path(args.out), **values, script_args=list(args.script_args),
                       own_length=args.steps is None and is_script(args.workload))


def write_report(study: Study, out_pdf: str | None, say) -> None:
    """The PDF (also for a study that stopped at the input probe); a failure here never loses the study."""
    from ..report import write_report as _write

    try:
        study.report = str(_write(study.path, out_pdf))
    except Exception as e:  # noqa: BLE001 — the ladder's result stands without its PDF
        say(f"report: could not be written ({type(e).__name__}: {e}); run `tfturbo report {study.path}` to retry")
        return
    study.save()


def ways_forward_text(study: Study) -> str:
    """For each rung that was faster but whose accuracy was inconclusive: what would decide it, the recommended
    way first (`trials.way_forward`, the options the wizard's rung page and the report show), and how to take it
    here; "" when there is none."""
    tolerance = Tolerance.from_dict((study.options or {}).get("tolerance"))
    blocks = []
    for rung in study.rungs:
        forward = for_rung(study.path, rung, tolerance, study.baseline)
        if forward is not None and rung.decision is not None:  # a way forward is for a decided rung
            blocks.append("\n".join([f"{rung.name} was faster ({rung.decision.speed.text()}), but its accuracy was "
                                     "inconclusive.", *(f"  {line}" for line in forward.lines())]))
    if not blocks:
        return ""
    return "\n\n" + "\n\n".join(blocks) + (
        "\nTo take one, measure the study again into a new --out with --judge-on loss, --accuracy-tolerance PP or "
        "--val-examples N (the wizard judges the runs already measured again, on the rung's page).")


class _CtrlC:
    """First Ctrl-C: ask the running rung to stop at a step boundary; second: the default (immediate)."""

    def __init__(self, cancel: threading.Event, say):
        self.cancel, self.say = cancel, say
        self.previous: Callable[[int, FrameType | None], Any] | int | None = None

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum, frame):
        self.cancel.set()
        self.say("stopping: finishing the current step and writing the study (Ctrl-C again to stop at once)")
        signal.signal(signal.SIGINT, signal.default_int_handler)

    def __exit__(self, *exc):
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)
        return False


def _live_progress():
    """Inside a rung: a step line every 10 s, findings and errors (the rung's start and end lines frame them)."""
    printer = console.ProgressPrinter(out=sys.stderr, every_s=10.0)
    shown = (protocol.STEPS, protocol.FINDING, protocol.ERROR)
    return lambda event: printer(event) if event.get("type") in shown else None


def restart(out: Path, say, ask=input) -> None:
    """--restart: delete the study in `out` (its runs too), after asking in a terminal."""
    if not ((out / STUDY_YAML).exists() or (out / RUNS_DIR).exists()):
        return
    runs = [p for p in (out / RUNS_DIR).iterdir() if p.is_dir()] if (out / RUNS_DIR).is_dir() else []
    if sys.stdin.isatty():
        answer = ask(f"--restart deletes the study in {out} and its {counted(len(runs), 'measured run')}. Continue? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            raise UserError("not restarted: the study was left as it is",
                            "run the same command without --restart to continue it")
    remove_study(out)
    say(f"restart: deleted the study in {out} ({counted(len(runs), 'run')}); measuring it again from the start")


def main(args: argparse.Namespace) -> int:
    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    options = options_from_args(args)
    if args.restart:
        restart(options.out, say)
    elif (recorded := unfinished_study(options.out)) is not None:
        say(f"resume: continuing the unfinished study in {options.out} ({counted(len(recorded.rungs), 'rung')} recorded, "
            "finished runs re-used; --restart starts over)")
    cancel = threading.Event()
    live = None if args.json else _live_progress()
    ladder = Ladder(options, say=say, live=live, cancel=cancel, resume=not args.restart)
    with _CtrlC(cancel, say), warm_backend(log_path()):
        study = ladder.run()
    if not args.no_report and study.status != StudyStatus.INTERRUPTED:
        write_report(study, args.report, say)
    print(json.dumps(study.document(), indent=2) if args.json else render_study(study) + ways_forward_text(study))
    if study.status == StudyStatus.INTERRUPTED:
        return 130
    return 1 if study.status == StudyStatus.FAILED else 0
