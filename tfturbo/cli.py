"""The `tfturbo` command line (docs/ARCHITECTURE.md, "Command line").

Only argument parsing happens at start-up; each command imports what it
needs when it runs, so `tfturbo gui` never pays for TensorFlow and `tfturbo
report` never pays for Qt.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import types

from . import __version__
from .cli_args import add_backend_commands, add_host, parse_args
from .errors import UserError

# command -> module in tfturbo.commands with add_arguments(parser) and main(args) -> exit code
EXTRA_COMMANDS = {
    "gui": "opens the wizard",
    "tune": "the whole checklist unattended; writes the study and its report",
    "ab": "one A/B trial, replicated and interleaved: speed and accuracy verdicts",
    "scaling": "throughput per replica count and scaling efficiency",
    "compare": "side-by-side table of runs",
    "report": "the before/after PDF of a study",
    "apply": "the study's code to apply: a patch of your script (--write PATH saves the patched file)",
}

REMOTE_COMMANDS = ("tune", "ab", "scaling")  # besides the backend's own: their runs can happen on --host


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tfturbo",
        description="Make Keras/TensorFlow training faster without losing accuracy — measured, not guessed.",
    )
    parser.add_argument("--version", action="version", version=f"tfturbo {__version__}")
    sub = parser.add_subparsers(dest="command")
    for name in add_backend_commands(sub):
        sub.choices[name].set_defaults(module="backend")
        add_host(sub.choices[name])
    for name, help_ in EXTRA_COMMANDS.items():
        p = sub.add_parser(name, help=help_)
        module = _command_module(name)
        if module is not None:
            module.add_arguments(p)
        if name in REMOTE_COMMANDS:
            add_host(p)
        p.set_defaults(module=name)
    return parser


def _command_module(name: str) -> types.ModuleType | None:
    try:
        return importlib.import_module(f"tfturbo.commands.{name}")
    except ModuleNotFoundError as e:
        if e.name == f"tfturbo.commands.{name}":
            return None
        raise


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser()
    args = parse_args(parser, argv)
    if args.command is None:  # plain `tfturbo` opens the wizard
        args = parser.parse_args(["gui"])
    args.raw_argv = argv
    module = _command_module(args.module)
    if module is None:
        print(f"tfturbo {args.command}: not available in this build yet", file=sys.stderr)
        return 2
    try:
        if getattr(args, "host", None) or getattr(args, "remote_python", None):
            from . import backend_client, remote

            backend_client.use_host(remote.from_args(args.host, args.remote_python))
        return int(module.main(args) or 0)
    except UserError as e:
        print(f"tfturbo {args.command}: {e.line()}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print(f"tfturbo {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
