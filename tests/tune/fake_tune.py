"""`tfturbo ARGS...` in a fresh process with the GUI tests' scripted backend (tests/gui/fake_backend.py) in place
of trainer_backend: the study engine, the CLI and the backend child processes for real, the training simulated.

    python tests/tune/fake_tune.py DELAY_S tune builtin:mlp --out DIR ...

DELAY_S is each simulated step's duration, so a test can catch a run while it trains.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FAKE_BACKEND = ROOT / "tests" / "gui" / "fake_backend.py"


def main(argv: list[str]) -> int:
    delay, args = argv[0], argv[1:]
    sys.path.insert(0, str(ROOT))
    from tfturbo import backend_client
    from tfturbo.cli import main as cli

    backend_client.backend_command = lambda command, backend_argv: [
        sys.executable, str(FAKE_BACKEND), "--delay", delay, command, *backend_argv]
    return cli(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
