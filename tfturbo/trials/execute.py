"""Executing planned runs with a blocking backend subprocess (`tfturbo tune`, `tfturbo ab`).

The wizard executes the same `PlannedRun`s with a QProcess; both turn what the
backend left behind into the summary the trial judges, the same way: the
`result` document, else the run directory's summary.json, else a minimal one
with the run's status and error.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Callable

from .. import protocol
from ..backend_client import BackendResult, run_backend
from ..cli_args import run_argv
from ..errors import WorkloadError
from ..run_summary import RunSummary
from ..runfiles import load_run
from .trial import PlannedRun

Runner = Callable[..., BackendResult]


def summary_of(result_document: dict[str, Any] | None, status: str, error: dict[str, Any] | None,
               run_dir: Path, planned: PlannedRun) -> dict[str, Any]:
    """The summary to judge: the backend's document, else the run's own file, else its status and error."""
    doc = result_document
    if doc is None and run_dir.is_dir():
        doc = load_run(run_dir).summary
    if doc is None:
        doc = RunSummary(status=status, settings=planned.settings.to_dict()).to_dict()
    if error and not doc.get("error"):
        doc = {**doc, "error": {k: error.get(k) for k in ("kind", "message", "fix")}}
    return doc


def fail_on_bad_input(error: dict[str, Any] | None, what: str) -> None:
    """A broken workload ends everything before anything is judged (exit 2, one line)."""
    if error and error.get("kind") == protocol.BAD_INPUT:
        raise WorkloadError(str(error.get("message") or f"{what} rejected the workload"), str(error.get("fix") or ""))


def backend_executor(runs_dir: Path, runner: Runner | None = None, log_path: str | None = None,
                     live: Callable[[dict[str, Any]], None] | None = None,
                     cancel: threading.Event | None = None,
                     on_start: Callable[[PlannedRun, Path], None] = lambda planned, path: None,
                     ) -> Callable[[PlannedRun], tuple[dict[str, Any], Path]]:
    """execute(planned) -> (summary, run_dir) running `python -m trainer_backend run` into runs_dir/NAME."""
    runner = runner or run_backend

    def execute(planned: PlannedRun) -> tuple[dict[str, Any], Path]:
        run_dir = Path(runs_dir) / planned.name
        on_start(planned, run_dir)
        result = runner("run", run_argv(planned.settings, str(run_dir)), on_event=live, stderr_path=log_path,
                        cancel=cancel)
        fail_on_bad_input(result.error, "the run")
        return summary_of(result.document, result.status, result.error, run_dir, planned), run_dir

    return execute
