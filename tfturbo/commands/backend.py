"""`tfturbo env | audit | probe-input | run`: the backend's commands, run from a terminal.

The work happens in a `python -m trainer_backend` child (the same one the GUI
starts); this side shows progress and prints the final document.
"""

from __future__ import annotations

import argparse
import json
import sys

from .. import console, protocol
from ..backend_client import log_path, run_backend
from ..cli_args import script_argv, split_script_args, without_host


def add_arguments(parser: argparse.ArgumentParser) -> None:  # arguments come from cli_args
    pass


def backend_argv(argv: list[str]) -> list[str]:
    """The user's own arguments after the sub-command, minus the CLI-only --json, --host and --remote-python
    (a script's own `--json` after `--` stays)."""
    own, script_args = split_script_args(without_host(argv))
    return [a for a in own if a != "--json"] + script_argv(script_args)


def main(args: argparse.Namespace) -> int:
    argv = args.raw_argv
    command = args.command
    rest = backend_argv(argv[argv.index(command) + 1:])
    printer = None if args.json else console.ProgressPrinter()
    log = log_path()
    result = run_backend(command, rest, on_event=printer, stderr_path=log)
    doc = result.document
    if doc is not None:
        if args.json:
            print(json.dumps(doc, indent=2))
        else:
            print(console.RENDERERS[command](doc))
    error = result.error
    if error and args.json:  # in text mode the printer already showed it
        fix = str(error.get("fix") or "")
        fix = f" — {fix}" if fix else ""  # once: `protocol.error_of` took it off an older backend's message
        print(f"tfturbo {command}: {error.get('message')}{fix}", file=sys.stderr)
    if result.status == protocol.RunStatus.CRASHED:
        if not error:
            print(f"tfturbo {command}: the backend ended without a result (exit {result.exit_code}); see {log}",
                  file=sys.stderr)
        return 1  # the run failed; a signal's negative exit code would reach the shell as 2xx
    return result.exit_code
