"""Executing planned runs with a blocking backend subprocess (`tfturbo tune`, `tfturbo ab`).

The wizard executes the same `PlannedRun`s (and `PlannedPair`s, as one `run-pair`
process) with a QProcess; both turn what the backend left behind into the
summary the trial judges, the same way: the `result` document, else the run
directory's summary.json, else a minimal one with the run's status and error.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Callable

from .. import protocol
from ..backend_client import BackendResult, run_backend
from ..cli_args import pair_argv, run_argv
from ..errors import WorkloadError
from ..run_summary import RunSummary
from ..runfiles import load_run
from .runs import PlannedPair, PlannedRun

Runner = Callable[..., BackendResult]


def summary_of(result_document: dict[str, Any] | None, status: str, error: protocol.ErrorDoc | None,
               run_dir: Path, planned: PlannedRun) -> RunSummary:
    """The summary to judge: the backend's document, else the run's own file, else its status and error."""
    summary = RunSummary.from_dict(result_document) if result_document is not None else None
    if summary is None and run_dir.is_dir():
        summary = load_run(run_dir).summary
    if summary is None:
        summary = RunSummary(status=status, settings=planned.settings)
    if error and not summary.error:
        summary.error = protocol.ErrorDoc(kind=error.get("kind", ""), message=error.get("message", ""),
                                          fix=error.get("fix", ""), **({"log_only": True} if error.get("log_only")
                                                                       else {}))
    return summary


def pair_command(pair: PlannedPair, runs_dir: Path) -> tuple[list[str], list[Path]]:
    """The `run-pair` arguments of a paired replicate into runs_dir/NAME, and its two run directories."""
    run_dirs = [Path(runs_dir) / run.name for run in pair.runs]
    first, second = pair.runs
    return pair_argv((first.settings, str(run_dirs[0])), (second.settings, str(run_dirs[1])), pair.steady_s), run_dirs


def pair_summaries(result_document: dict[str, Any] | None, status: str, error: protocol.ErrorDoc | None,
                   run_dirs: list[Path], pair: PlannedPair) -> list[RunSummary]:
    """Each run's summary to judge from what a `run-pair` process left: its document's run, else the run's own
    summary.json, else its status; an error event counts for the run it names (or both, when it names none)."""
    runs = result_document.get("runs") if isinstance(result_document, dict) else None
    out = []
    for run, run_dir in zip(pair.runs, run_dirs):
        own = runs.get(run.name) if isinstance(runs, dict) else None
        own_error = error if error and error.get("run") in (None, "", run.name) else None
        out.append(summary_of(own, status, own_error, run_dir, run))
    return out


def fail_on_bad_input(error: protocol.ErrorDoc | None, what: str) -> None:
    """A broken workload ends everything before anything is judged (exit 2, one line: what is wrong, then its
    fix, once: `protocol.error_of` read an older backend's message that ended with it)."""
    if error and error.get("kind") == protocol.BAD_INPUT:
        message, fix = str(error.get("message") or f"{what} rejected the workload"), str(error.get("fix") or "")
        raise WorkloadError(message, fix)


def backend_executor(runs_dir: Path, runner: Runner | None = None, log_path: str | None = None,
                     live: Callable[[protocol.Event], None] | None = None,
                     cancel: threading.Event | None = None,
                     on_start: Callable[[PlannedRun, Path], None] = lambda planned, path: None,
                     own_failure: Callable[[PlannedRun], bool] = lambda planned: False,
                     ) -> Callable[[PlannedRun], tuple[RunSummary, Path]]:
    """execute(planned) -> (summary, run_dir) running `python -m trainer_backend run` into runs_dir/NAME. A run
    the workload rejects ends everything (exit 2), unless `own_failure(planned)`: a candidate's run, whose
    rejection is that configuration's failure (a failed run with its error, judged as a failed trial)."""
    runner = runner or run_backend

    def execute(planned: PlannedRun) -> tuple[RunSummary, Path]:
        run_dir = Path(runs_dir) / planned.name
        on_start(planned, run_dir)
        result = runner("run", run_argv(planned.settings, str(run_dir)), on_event=live, stderr_path=log_path,
                        cancel=cancel)
        if not own_failure(planned):
            fail_on_bad_input(result.error, "the run")
        return summary_of(result.document, result.status, result.error, run_dir, planned), run_dir

    return execute


def backend_pair_executor(runs_dir: Path, log_path: str | None = None,
                          on_start: Callable[[PlannedPair, list[Path]], None] = lambda pair, paths: None,
                          ) -> Callable[[PlannedPair], tuple[list[RunSummary], list[Path]]]:
    """execute_pair(pair) -> ([summaries], [run dirs]) running `python -m trainer_backend run-pair` (`tfturbo
    ab`; the study engine plans its pairs as actions, `pair_command` and `pair_summaries`)."""

    def execute_pair(pair: PlannedPair) -> tuple[list[RunSummary], list[Path]]:
        argv, run_dirs = pair_command(pair, runs_dir)
        on_start(pair, run_dirs)
        result = run_backend("run-pair", argv, stderr_path=log_path)
        # no `fail_on_bad_input`: both arms ran in processes of their own before, so a rejection here is the
        # pairing's (a script that refuses a second run in one process), and the trial measures on without it
        # (`Trial._pairing_failed`)
        return pair_summaries(result.document, result.status, result.error, run_dirs, pair), run_dirs

    return execute_pair
