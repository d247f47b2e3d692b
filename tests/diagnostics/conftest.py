"""Fixtures for the diagnostics tests.

Audits of the built-in workloads run in this process (TensorFlow is imported
once, each audit then takes a second or two); the probes and runs that the
issue's "done when" names run through the real `tfturbo` CLI, once per
session, and several tests read each of them.
"""

from __future__ import annotations

import json

import pytest
from diag_helpers import backend_events, result_of

from tests.conftest import run_cli


@pytest.fixture(scope="session")
def audit():
    """audit(workload, policy=..., jit=...) -> the audit document, each combination computed once."""
    cache: dict = {}

    def _audit(workload: str, **args) -> dict:
        key = (workload, tuple(sorted(args.items())))
        if key not in cache:
            cache[key] = result_of(backend_events("audit", workload=workload, **args))
        return cache[key]

    return _audit


def _cli_json(*args: str) -> dict:
    proc = run_cli(*args, "--json", timeout=400)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


@pytest.fixture(scope="session")
def probe_slow_input() -> dict:
    return _cli_json("probe-input", "builtin:slow-input", "--steps", "40")


@pytest.fixture(scope="session")
def slow_input_fixed_run(tmp_path_factory) -> tuple[dict, list[dict]]:
    """`tfturbo run builtin:slow-input --input-fixes` (a short run): its summary and its events."""
    out = tmp_path_factory.mktemp("diag") / "slow-input-fixed"
    doc = _cli_json("run", "builtin:slow-input", "--input-fixes", "--steps", "30", "--val-examples", "64",
                    "--profile", "0:0", "--out", str(out))
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    return doc, events


@pytest.fixture(scope="session")
def probe_mlp() -> dict:
    return _cli_json("probe-input", "builtin:mlp", "--steps", "40")


RAGGED_LENGTH = ("--steps", "40", "--profile", "0:0", "--val-examples", "64")  # the unfixed run and the fixed alike


@pytest.fixture(scope="session")
def ragged_jit_run(tmp_path_factory) -> dict:
    """`tfturbo run builtin:ragged-batches --jit` (the issue ran 150 steps). A new padded length compiles at
    steps 13, 16, 17, 23 and more after, and the detector raises the storm live once 20 steady steps hold three
    spikes, so 40 steps show it; no profiler window (its edges are not counted as spikes) and one validation
    batch (each new validation length compiled too, seconds that tell the storm nothing)."""
    out = tmp_path_factory.mktemp("diag") / "ragged-jit"
    return _cli_json("run", "builtin:ragged-batches", "--jit", *RAGGED_LENGTH, "--out", str(out))


@pytest.fixture(scope="session")
def ragged_jit_fixed_run(tmp_path_factory) -> dict:
    """The same run with the automatic fix (--drop-remainder: fixed batch size and padded length)."""
    out = tmp_path_factory.mktemp("diag") / "ragged-jit-fixed"
    return _cli_json("run", "builtin:ragged-batches", "--jit", "--drop-remainder", *RAGGED_LENGTH, "--out", str(out))
