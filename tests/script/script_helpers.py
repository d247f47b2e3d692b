"""Helpers shared by the script-mode tests (a module of its own: test modules cannot import conftest)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.conftest import run_cli

SCRIPTS = Path(__file__).resolve().parent / "scripts"


def script_in_folder(factory, name: str, scripts: Path = SCRIPTS) -> Path:
    """A copy of `scripts`/NAME (tests/script/scripts by default) in a new folder of its own."""
    folder = factory.mktemp(Path(name).stem)
    shutil.copy(scripts / name, folder / name)
    return folder / name


def cli_json(*args: str, cwd: Path) -> dict:
    args = list(args)
    at = args.index("--") if "--" in args else len(args)  # after `--`, a --json would be the script's
    proc = run_cli(*args[:at], "--json", *args[at:], timeout=400, cwd=cwd)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)
