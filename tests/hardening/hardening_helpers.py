"""Shared pieces of the hardening tests: real backend runs of builtin:mlp, and waiting on processes."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import psutil

from tfturbo.cli_args import run_argv
from tfturbo.settings import RunSettings

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
WORKLOADS = HERE / "workloads"
ENDLESS = 1_000_000  # steps: a run that only ends when it is stopped or killed


def mlp_argv(out: Path, steps: int = ENDLESS, jit: bool = False, batch_size: int | None = None) -> list[str]:
    """`run` arguments for builtin:mlp without a profiler window (as the GUI builds them)."""
    settings = RunSettings(workload="builtin:mlp", steps=steps, jit_compile=jit, batch_size=batch_size,
                           profile=(0, 0))
    return run_argv(settings, str(out))


def exited(proc: psutil.Process) -> bool:
    """Gone, or a zombie nobody reaped yet (its parent was killed): either way it runs no more."""
    try:
        return not proc.is_running() or proc.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def wait_exited(procs: list[psutil.Process], timeout: float) -> list[psutil.Process]:
    """Wait until every process has exited; returns those still running after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    alive = list(procs)
    while alive and time.monotonic() < deadline:
        alive = [p for p in alive if not exited(p)]
        time.sleep(0.1)
    return alive


PYTHON = sys.executable
