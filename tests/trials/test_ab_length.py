"""`tfturbo ab SCRIPT` without --steps trains the script's own length, as `tune` does: the audit reads it, and a
line says so (or says why not and what runs instead); --steps and builtins never ask the audit."""

from __future__ import annotations

import argparse

import pytest

from tfturbo.backend_client import BackendResult
from tfturbo.commands import ab
from tfturbo.errors import WorkloadError
from tfturbo.settings import DEFAULT_STEPS


def parsed(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    ab.add_arguments(parser)
    return parser.parse_args(list(argv))


def auditing(document: dict | None, error: dict | None = None):
    asked: list[tuple[str, list[str]]] = []

    def runner(command, argv, **_):
        asked.append((command, argv))
        events = [{"type": "result", "command": command, "document": document}] if document is not None else []
        events += [{"type": "error", **error}] if error else []
        return BackendResult(exit_code=0 if error is None else 2, events=events)

    return runner, asked


def test_a_script_without_steps_trains_its_own_length(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("print('hi')\n")
    runner, asked = auditing({"findings": [], "own_length": {"epochs": 3, "steps_per_epoch": 32, "steps": 96}})
    steps, line = ab.run_steps(parsed(str(script), "--b", "policy=mixed_bfloat16"), runner)
    assert steps == 96 and [c for c, _ in asked] == ["audit"]
    assert line == "length: every run trains the script's own length: 3 epochs of 32 steps = 96 steps; " \
                   "--steps N for another length"


def test_a_script_whose_length_the_audit_cannot_read_says_what_runs_instead(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("print('hi')\n")
    runner, _ = auditing({"findings": []})
    steps, line = ab.run_steps(parsed(str(script), "--b", "jit=on"), runner)
    assert steps == DEFAULT_STEPS
    assert line.startswith("length: the audit could not read the script's own length") \
        and f"every run trains {DEFAULT_STEPS} steps" in line


def test_a_script_the_audit_rejects_stops_before_any_run(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("raise SystemExit(3)\n")
    runner, _ = auditing(None, {"kind": "bad_input", "message": "train.py never calls fit()", "fix": "call fit"})
    with pytest.raises(WorkloadError, match="never calls fit"):
        ab.run_steps(parsed(str(script), "--b", "jit=on"), runner)


def test_steps_given_or_a_builtin_never_ask_the_audit(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("print('hi')\n")
    runner, asked = auditing({"own_length": {"epochs": 3, "steps_per_epoch": 32, "steps": 96}})
    assert ab.run_steps(parsed(str(script), "--b", "jit=on", "--steps", "50"), runner) == (50, "")
    assert ab.run_steps(parsed("builtin:mlp", "--b", "jit=on"), runner) == (DEFAULT_STEPS, "")
    assert asked == []
