"""Helpers shared by the diagnostics tests (a module of its own: test modules cannot import conftest)."""

from __future__ import annotations

import argparse
import io
from pathlib import Path

from tfturbo import protocol


def backend_events(command: str, **args) -> list[dict]:
    """Run a backend command's `main(args, writer)` in this process; return its events."""
    import importlib

    import keras

    module = importlib.import_module(f"trainer_backend.commands.{command.replace('-', '_')}")
    sink = io.StringIO()
    writer = protocol.EventWriter(sinks=[sink])
    defaults = {"batch_size": None, "policy": "float32", "jit": False, "steps": 30, "seed": 1234}
    try:
        assert module.main(argparse.Namespace(**{**defaults, **args}), writer) == 0
    finally:
        keras.mixed_precision.set_global_policy("float32")
    return [protocol.parse_line(line) for line in sink.getvalue().splitlines()]


def result_of(events: list[dict]) -> dict:
    results = [e for e in events if e["type"] == protocol.RESULT]
    assert len(results) == 1, events
    return results[0]["document"]


def codes(document: dict) -> list[str]:
    return [f["code"] for f in document["findings"]]


def findings_of(document: dict, code: str) -> list[dict]:
    return [f for f in document["findings"] if f["code"] == code]


def events_file(run_dir: Path) -> list[dict]:
    return [protocol.parse_line(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
