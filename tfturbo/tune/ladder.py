"""`tfturbo tune`'s loop: the study engine's actions executed one after another, each a backend subprocess.

The engine (`tune.engine.StudyEngine`) decides everything: the stages, the
candidates, what each is measured against, what is kept, the recommendation.
The ladder executes its actions with `runner` (default `run_backend`, so the
flow can be tested on recorded documents without TensorFlow), stops the
current trial at Ctrl-C, and writes study.yaml however the study ends.

Resume: a study directory whose study.yaml says the study did not finish
(`running` or `interrupted`) is continued with the same options, re-using its
finished runs (`resume=True`; `tfturbo tune` says so in one line).
"""

from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import Callable

from ..backend_client import BackendResult, env_with_path, run_backend
from ..cli_args import TRAINING_COMMANDS
from ..errors import OutputDirError, UserError
from .. import protocol
from ..numbers import counted
from ..patch.check import PATCHED_DIR
from ..patch.document import PATCH_FILE
from ..runfiles import BACKEND_LOG, RUNS_DIR, STUDY_YAML
from ..trials.execute import fail_on_bad_input
from .engine import PATCH, Action, Outcome, StudyEngine, TuneOptions, prepare_study_dir
from .study import Study, StudyStatus

Runner = Callable[..., BackendResult]
WHAT = {"env": "the environment report", "audit": "the audit", "probe-input": "the input probe", "run": "the run",
        "run-pair": "the paired runs"}

__all__ = ["Ladder", "TuneOptions", "unfinished_study", "remove_study"]


def unfinished_study(path: Path) -> Study | None:
    """The study in `path` when it did not finish (a crash, a kill, Ctrl-C), else None."""
    if not (Path(path) / STUDY_YAML).exists():
        return None
    study = Study.load(path)
    return study if study.unfinished else None


def remove_study(path: Path) -> None:
    """Delete a study's own files (study.yaml, runs/, the patched copy and its check, changes.patch,
    backend.log, report.pdf): `tune --restart`."""
    path = Path(path)
    shutil.rmtree(path / RUNS_DIR, ignore_errors=True)
    shutil.rmtree(path / PATCHED_DIR, ignore_errors=True)
    for name in (STUDY_YAML, BACKEND_LOG, "report.pdf", PATCH_FILE):
        (path / name).unlink(missing_ok=True)


class Ladder:
    """Runs one study. `say` gets one line per step (start and end of each rung)."""

    def __init__(self, options: TuneOptions, runner: Runner | None = None,
                 say: Callable[[str], None] = lambda line: None,
                 live: Callable[[protocol.Event], None] | None = None,
                 cancel: threading.Event | None = None, resume: bool = False):
        self.opts = options
        self.runner = runner or run_backend
        self.say = say
        self.live = live
        self.cancel = cancel or threading.Event()
        self.path = Path(options.out)
        self.resume = resume
        self._created_dir = False
        self.engine: StudyEngine | None = None

    @property
    def study(self) -> Study:
        assert self.engine is not None, "the study is opened first (run())"
        return self.engine.study

    def _open(self) -> StudyEngine:
        """A new study, or the unfinished one in the directory continued (resume)."""
        recorded = unfinished_study(self.path) if self.resume else None
        if recorded is None:
            if (self.path / STUDY_YAML).exists():
                status = Study.load(self.path).status or "unreadable"
                raise OutputDirError(f"{self.path} already holds a finished study ({status})",
                                     "choose a new --out directory, or add --restart to measure it again")
            self._created_dir = prepare_study_dir(self.path)
            study = Study(self.path, self.opts.workload, self.opts.to_dict())
            study.save()  # from now on a kill leaves a study that the same command continues
            return StudyEngine(self.opts, study, self.say)
        if self.opts.own_length and recorded.options.get("own_length"):  # the length its audit read
            self.opts.steps = recorded.options.get("steps", self.opts.steps)
            self.say(f"length: every run trains {self.opts.steps} steps, as when the study began; --steps N "
                     "for another length in a new study")
        elif self.opts.own_length:  # begun before tune read a script's own length: it continues with its steps
            self.opts.own_length = False
        if recorded.options != self.opts.to_dict():
            differ = sorted(k for k in set(recorded.options) | set(self.opts.to_dict())
                            if recorded.options.get(k) != self.opts.to_dict().get(k))
            raise OutputDirError(f"{self.path} holds an unfinished study made with other options "
                                 f"({', '.join(differ)})", "run the same command again to continue it, or add "
                                 "--restart to start over")
        study = Study(self.path, self.opts.workload, self.opts.to_dict(), created=recorded.created)
        (self.path / RUNS_DIR).mkdir(parents=True, exist_ok=True)
        return StudyEngine(self.opts, study, self.say, recorded=recorded)

    def run(self) -> Study:
        engine = self.engine = self._open()
        try:
            engine.run_all()
            while (action := engine.next_action()) is not None:
                engine.record(action, self._execute(action))
                if self.cancel.is_set():
                    engine.stop()
        except UserError:  # the workload or arguments are wrong: nothing half-written stays behind
            if engine.recorded is None:
                self._remove_empty_study()
            raise
        except BaseException as e:  # a second Ctrl-C, or a bug: the study file still says what was decided
            engine.study.status = StudyStatus.INTERRUPTED if isinstance(e, KeyboardInterrupt) else StudyStatus.FAILED
            engine.study.message = "interrupted by the user" if isinstance(e, KeyboardInterrupt) else \
                f"internal error: {type(e).__name__}: {e}"
            engine.finish()
            raise
        if engine.reused:
            self.say(f"resume: {counted(len(engine.reused), 'finished run')} re-used, none measured again")
        return engine.finish()

    def _execute(self, action: Action) -> Outcome:
        live = self.live if action.command in TRAINING_COMMANDS else None
        env = env_with_path(action.python_path) if action.python_path else None  # None: this process's own
        result = self.runner(action.command, action.argv, on_event=live,
                             stderr_path=str(self.path / BACKEND_LOG), cancel=self.cancel, env=env)
        # a candidate's rejection is its failed rung, and a patched copy that does not load is what its check
        # reports; anything else ends the study
        if not action.candidate and action.stage != PATCH:
            fail_on_bad_input(result.error, WHAT[action.command])
        return Outcome(result.document, result.status, result.error)

    def _remove_empty_study(self) -> None:
        for name in (BACKEND_LOG, STUDY_YAML):
            (self.path / name).unlink(missing_ok=True)
        try:
            (self.path / RUNS_DIR).rmdir()
            if self._created_dir:
                self.path.rmdir()
        except OSError:
            pass
