"""`python -m trainer_backend CMD ...`: one backend command, speaking events on stdout.

Takes the arguments of the `tfturbo` command it serves (`tfturbo.cli_args`),
and always answers with events (docs/ARCHITECTURE.md, "Event protocol"): `hello`, the command's
own events, its `result`, and a final `done`. A user error (a broken
workload, a bad argument) becomes an `error` event of kind `bad_input` and
exit 2; anything else an `error` with its traceback and exit 1.

Set TFTURBO_LOGICAL_CPUS=2 to split the CPU into two logical devices, so that
`--strategy mirrored` trains two replicas without a GPU.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import os
import signal
import sys
import traceback
from pathlib import Path

from tfturbo import protocol
from tfturbo.cli_args import build_backend_parser, parse_args
from tfturbo.errors import UserError

import trainer_backend

from . import stdio
from .commands import emit_error

PROG = "python -m trainer_backend"


def _parse(argv: list[str]) -> argparse.Namespace:
    """Parse like argparse, but turn its usage errors into a UserError (one line, exit 2)."""
    parser = build_backend_parser(PROG)
    messages = io.StringIO()
    try:
        with contextlib.redirect_stderr(messages):
            return parse_args(parser, argv)
    except SystemExit as exit_:
        text = messages.getvalue().strip()
        print(text, file=sys.stderr)
        if exit_.code == 0:  # --help
            raise
        problem = text.splitlines()[-1].split("error: ", 1)[-1] if text else "invalid arguments"
        raise UserError(problem, f"see `{PROG} --help`") from None


def _quiet_tensorflow() -> None:
    from .warm import LOG_LEVEL, QUIET

    os.environ.setdefault(LOG_LEVEL, QUIET)  # C++ INFO lines off; warnings stay in backend.log


def _hello(writer: protocol.EventWriter, args: argparse.Namespace) -> None:
    from . import distribute, hardware

    settings = process_flags(args)
    if args.command == "run":  # a multi-worker or TPU strategy must exist before the first device query
        distribute.before_devices(settings, writer)
    hardware.configure_logical_cpus()
    writer.emit(protocol.HELLO, command=args.command, versions=hardware.versions(), devices=hardware.devices(),
                pid=os.getpid(), workers=distribute.worker_pids(), warm=trainer_backend.WARM)


def process_flags(args: argparse.Namespace):
    """Set the XLA flags a `run` (or both arms of a `run-pair`) needs before TensorFlow reads them; returns the
    run's settings (a run-pair's first arm's: both arms share the process's flags,
    `tfturbo.settings.can_share_process`), None for other commands."""
    from tfturbo.cli_args import pair_arms, settings_from_args

    from .xla_flags import use_xla_cache

    if args.command == "run":
        settings = settings_from_args(args)
    elif args.command == "run-pair":
        settings = pair_arms(args)[0][0]
    else:
        return None
    if settings.xla_cache:
        use_xla_cache(settings.xla_cache)
    if settings.xla_autoclustering:  # its flags depend on the device, decided before TensorFlow reads them
        from .hardware import gpus_before_devices
        from .xla_flags import enable_autoclustering

        enable_autoclustering(gpus_before_devices())
    return settings


def run_command(argv: list[str], events: protocol.EventWriter) -> int:
    """Parse, dispatch and report one command; returns the exit code after emitting `done`."""
    status, code = protocol.RunStatus.FAILED, 1
    try:
        args = _parse(argv)
        if getattr(args, "out", None):
            events.run = Path(args.out).name
        _hello(events, args)
        module = importlib.import_module(f"{__package__}.commands.{args.command.replace('-', '_')}")
        result = module.main(args, events)
        if isinstance(result, tuple):
            status, code = result
        else:
            code = int(result or 0)
            status = protocol.RunStatus.COMPLETED if code == 0 else protocol.RunStatus.FAILED
    except SystemExit as exit_:  # --help
        code = int(exit_.code or 0)
        status = protocol.RunStatus.COMPLETED if code == 0 else protocol.RunStatus.FAILED
    except KeyboardInterrupt:
        status, code = protocol.RunStatus.CANCELLED, 130
    except Exception as exc:  # noqa: BLE001 - every failure must end in an error event and `done`
        if not isinstance(exc, UserError):
            traceback.print_exc(file=sys.stderr)
        elif exc.__cause__ is not None:  # the user's code failed: its traceback for the log the message names
            traceback.print_exception(exc.__cause__, file=sys.stderr)
        code = emit_error(events, exc).exit_code
    events.emit(protocol.DONE, status=status, exit_code=code)
    return code


def _interrupt(signum, frame) -> None:
    """Ctrl-C in a terminal reaches the backend too: the first one stops cooperatively, the second at once.

    (The parent's stop command usually arrives at the same moment: only a second Ctrl-C counts.)
    """
    global _interrupts
    _interrupts += 1
    if _interrupts > 1:
        raise KeyboardInterrupt
    stdio.request_stop("interrupted")


_interrupts = 0  # Ctrl-Cs so far (`_interrupt`)


def main(argv: list[str] | None = None) -> int:
    from . import multiworker

    argv = sys.argv[1:] if argv is None else argv
    if multiworker.supervises(argv):  # a local cluster: its chief runs as a child, retried once if a worker dies
        return multiworker.supervise(argv)
    out = stdio.take_streams()
    _quiet_tensorflow()
    stdio.listen_for_stop()
    signal.signal(signal.SIGINT, _interrupt)
    writer = protocol.EventWriter(sinks=[out])
    try:
        return run_command(argv, writer)
    finally:
        from . import distribute

        distribute.shutdown()
        stdio.release_streams()
        out.close()


def entry(argv: list[str]) -> int:
    """The process's command: the warm server itself, a command handed to it (trainer_backend/warm.py), or the
    command run here."""
    from . import warm
    from tfturbo.warm_start import SERVER_COMMAND

    if argv[:1] == [SERVER_COMMAND] and len(argv) == 2:
        return warm.serve(argv[1], main)
    code = warm.handoff(argv)
    return main(argv) if code is None else code


if __name__ == "__main__":
    exit_code = entry(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(exit_code)  # skip TensorFlow's interpreter teardown (seconds); every file is closed by now
