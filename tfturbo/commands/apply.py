"""`tfturbo apply STUDY_DIR [--write PATH]`: the study's code to apply, a patch of the user's own file.

Prints STUDY_DIR/changes.patch: the recommended changes as a unified diff of
the script (or workload file), with what its check found (the patched copy
measured as written) and the changes left to the user, each with why. It
applies in the file's folder with `git apply` or `patch -p1`. `--write PATH`
saves the patched file the study checked; the user's own file is never
written unless PATH names it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..errors import UserError
from ..runfiles import STUDY_YAML


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("study", metavar="STUDY_DIR", help="a study directory written by `tfturbo tune`")
    parser.add_argument("--write", metavar="PATH", default=None,
                        help="write the patched file to PATH (the one its check measured)")
    parser.add_argument("--json", action="store_true",
                        help='print {"patch": TEXT, "target", "placed", "not_applied", "check", "written"}')


def main(args: argparse.Namespace) -> int:
    from ..patch.document import patch_text, save_patched
    from ..tune.study import Study

    study_dir = Path(args.study)
    if not (study_dir / STUDY_YAML).is_file():
        raise UserError(f"{study_dir} holds no study", "give the --out folder of a `tfturbo tune` run")
    study = Study.load(study_dir)
    text = patch_text(study_dir, study.snippet)
    if not text:
        raise UserError(f"the study in {study_dir} has no code to apply yet ({study.status or 'unreadable'})",
                        "finish it first: run the same `tfturbo tune` command again")
    written = save_patched(study_dir, study.patch, args.write) if args.write else None
    if args.json:
        print(json.dumps({"patch": text, **(study.patch or {}), "written": str(written) if written else None},
                         indent=2))
    else:
        print(text, end="")
    if written is not None:
        print(f"patched file written to {written}", file=sys.stderr)
    return 0
