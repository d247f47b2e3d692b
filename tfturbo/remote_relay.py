"""One backend command on an ssh host, as a local child that looks like `python -m trainer_backend`.

The wizard starts backend commands as a QProcess and reads their events from
stdout; for a host it starts this module instead (`relay_command`). Here the
CLI's own remote path runs unchanged (`backend_client.run_backend` with a
`RemoteHost`: upload, ssh, events into the local events.jsonl, the run
directory fetched back, run.yaml naming the host, the remote folder removed),
so the GUI thread never waits on ssh or on the copies.

    python -m tfturbo.remote_relay HOST REMOTE_PYTHON COMMAND ARGS...

Events are re-printed on stdout as they arrive. A stop line on stdin, the end
of stdin (the GUI is gone) or SIGTERM stop the remote backend as Ctrl-C stops
the CLI's: the stop command, then ssh terminated, then killed.
"""

from __future__ import annotations

import signal
import sys
import threading

from . import protocol, remote
from .backend_client import run_backend
from .errors import UserError

OWN_STDERR = "/dev/stderr"  # ssh's messages go where the GUI keeps this child's (the command's log)


def relay_command(host: remote.RemoteHost, command: str, argv: list[str]) -> list[str]:
    """The local argv the wizard starts for `command` on `host` (a launcher's answer)."""
    return [sys.executable, "-m", "tfturbo.remote_relay", host.host, host.python, command, *argv]


def _print_event(event: protocol.Event) -> None:
    sys.stdout.write(protocol.encode(event) + "\n")
    sys.stdout.flush()


def _cancel_on_stop_or_eof(cancel: threading.Event) -> None:
    """Stop the remote run at the GUI's stop line or at the end of stdin (the GUI closed or died)."""
    for line in sys.stdin.buffer:
        if protocol.is_stop(line):
            break
    cancel.set()


def main(argv: list[str]) -> int:
    """Relay one command; a setup error (no ssh, no folder, a used run dir) is one `error` event and exit 2."""
    host_name, python, command, *args = argv
    cancel = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: cancel.set())
    threading.Thread(target=_cancel_on_stop_or_eof, args=(cancel,), daemon=True).start()
    try:
        result = run_backend(command, args, on_event=_print_event, stderr_path=OWN_STDERR, cancel=cancel,
                             host=remote.RemoteHost(host_name, python))
    except UserError as e:
        _print_event({"type": protocol.ERROR, "kind": protocol.BAD_INPUT, "message": e.what(), "fix": e.fix})
        return e.exit_code
    return result.exit_code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
