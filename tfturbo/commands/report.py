"""`tfturbo report STUDY_DIR [-o FILE.pdf]`: the before/after PDF of a study, written headless."""

from __future__ import annotations

import argparse
import json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("study", metavar="STUDY_DIR", help="a study directory written by `tfturbo tune`")
    parser.add_argument("-o", "--output", metavar="FILE.pdf", default=None,
                        help="where to write the PDF (default: STUDY_DIR/report.pdf)")
    parser.add_argument("--json", action="store_true", help='print {"report": PATH, "warnings": [...]}')


def main(args: argparse.Namespace) -> int:
    from ..report import gather, write_report

    path = write_report(args.study, args.output)
    if args.json:
        print(json.dumps({"report": str(path), "warnings": gather(args.study).warnings}, indent=2))
    else:
        print(f"report written to {path}")
    return 0
