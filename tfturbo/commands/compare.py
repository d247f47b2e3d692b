"""`tfturbo compare RUN_DIR...`: the side-by-side table of runs in a terminal (or as JSON / CSV).

A study directory may be passed instead of its runs: its runs/ are compared in order.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..cli_args import add_json
from ..errors import UserError
from ..runfiles import (EVENTS, RUN_YAML, RUNS_DIR, SUMMARY, RunRecord, load_run, load_study_runs,
                        write_text_atomic)
from ..verdicts import Verdict


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("runs", nargs="+", metavar="RUN_DIR", help="run directories (or a study directory)")
    parser.add_argument("--baseline", default="0", metavar="RUN",
                        help="the run the others are compared with: its name, path or index (default: the first)")
    parser.add_argument("--csv", metavar="FILE", help="also write the table as CSV to FILE")
    add_json(parser)


def is_run_dir(path: Path) -> bool:
    return any((path / name).exists() for name in (RUN_YAML, EVENTS, SUMMARY))


def load_records(paths: list[str]) -> list[RunRecord]:
    """RunRecords for the given run (or study) directories, in the order given."""
    records = []
    for arg in paths:
        path = Path(arg)
        if not path.is_dir():
            raise UserError(f"{arg} is not a directory", "pass run directories written by `tfturbo run` or `tfturbo tune`")
        if is_run_dir(path):
            records.append(load_run(path))
        elif (path / RUNS_DIR).is_dir():
            records += load_study_runs(path).runs
        else:
            raise UserError(f"{arg} holds no run (no {RUN_YAML}, {EVENTS} or {SUMMARY})",
                            "pass a run directory or a study directory")
    if not records:
        raise UserError("no runs to compare", "pass at least one run directory")
    return records


def main(args: argparse.Namespace) -> int:
    from .. import compare  # numpy-backed statistics: loaded when the command runs, not at start-up

    records = load_records(args.runs)
    baseline = int(args.baseline) if args.baseline.lstrip("-").isdigit() else args.baseline
    rows = compare.compare_runs(records, baseline)
    if args.csv:
        try:
            write_text_atomic(Path(args.csv), compare.to_csv(rows))
        except OSError as e:
            raise UserError(f"cannot write {args.csv} ({e.strerror or e})", "choose a writable --csv path") from e
    if args.json:
        print(json.dumps({"baseline": next(r.name for r in rows if r.verdict == Verdict.BASELINE),
                          "runs": compare.to_json(rows)}, indent=2))
    else:
        print(compare.to_text(rows))
    return 0
