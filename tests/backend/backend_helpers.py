"""Helpers for driving `python -m trainer_backend` directly, as the GUI does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from tfturbo import protocol

ROOT = Path(__file__).resolve().parents[2]
WORKLOADS = Path(__file__).resolve().parent / "workloads"
TINY = str(WORKLOADS / "tiny.py")


@dataclass
class BackendRun:
    exit_code: int
    lines: list[bytes]  # raw stdout lines
    events: list[dict] = field(default_factory=list)
    stderr: str = ""

    def of_type(self, type_: str) -> list[dict]:
        return [e for e in self.events if e.get("type") == type_]

    @property
    def done(self) -> dict:
        return self.of_type(protocol.DONE)[-1]

    @property
    def document(self) -> dict:
        return self.of_type(protocol.RESULT)[-1]["document"]


def run_backend(*args: str, on_event: Callable[[dict, subprocess.Popen], None] | None = None,
                env: dict | None = None, timeout: float = 120) -> BackendRun:
    """Start the backend with stdin open (closing it means "parent gone"), collect every stdout line."""
    proc = subprocess.Popen([sys.executable, "-m", "trainer_backend", *args], cwd=ROOT, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, **(env or {})})
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    stderr: list[bytes] = []
    reader = threading.Thread(target=lambda: stderr.append(proc.stderr.read()), daemon=True)
    reader.start()
    result = BackendRun(exit_code=-1, lines=[])
    try:
        for line in proc.stdout:
            result.lines.append(line)
            event = protocol.parse_line(line)
            if event is not None:
                result.events.append(event)
                if on_event:
                    on_event(event, proc)
        result.exit_code = proc.wait()
    finally:
        timer.cancel()
        if proc.stdin and not proc.stdin.closed:
            proc.stdin.close()
        reader.join(timeout=10)
    result.stderr = b"".join(stderr).decode(errors="replace")
    return result


def send(proc: subprocess.Popen, command: dict) -> None:
    proc.stdin.write((json.dumps(command) + "\n").encode())
    proc.stdin.flush()
