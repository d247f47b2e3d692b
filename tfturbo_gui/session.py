"""The wizard's state: the workload, the study folder, and the study engine the pages drive.

The wizard makes the same study as `tfturbo tune` because it drives the same
object: a `tune.engine.StudyEngine`, whose stages the pages show. The user
chooses when a stage runs and may change its settings (`start_trial` with the
page's configuration); the engine decides what it is measured against, what
is kept and what is recommended, and writes the same `runs/NN-name/` folders
and the same study.yaml, so File → Open, `tfturbo compare` and `tfturbo
report` read either. This module turns the pages' RunData into the engine's
outcomes and back. No Qt here.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

from tfturbo.findings import FindingDoc
from tfturbo import remote
from tfturbo.backend_client import log_path as user_log_path
from tfturbo.cli_args import run_argv
from tfturbo.compare import own_process_peaks, run_settings
from tfturbo.environment import Environment
from tfturbo.input_probe import InputProbe
from tfturbo.errors import UserError, required
from tfturbo.runfiles import BACKEND_LOG, RUNS_DIR, STUDY_YAML, load_run
from tfturbo.scaling import SCALING_DIR, ScalingMeasurement, ScalingResult
from tfturbo.settings import NO_PROFILE, RunSettings
from tfturbo.trials.run_length import too_short
from tfturbo.trials.speed import SpeedRule
from tfturbo.trials.runs import PlannedPair, PlannedRun
from tfturbo.trials.trial import Trial
from tfturbo.trials.verdict import TrialVerdict
from tfturbo.numbers import finite
from tfturbo.run_summary import RunSummary
from tfturbo.summary import middle
from tfturbo.verdicts import Verdict
from tfturbo.trials.way_forward import WayForward, can_use_more_examples, for_rung, rule_for
from tfturbo.trials.execute import summary_of
from tfturbo.tune.engine import (BASELINE, PATCH, Action, Outcome, StudyEngine, TuneOptions, audit_action,
                                 audit_argv, prepare_study_dir, probe_argv)
from tfturbo.tune.estimate import progress_text, remaining_text
from tfturbo.tune.levers import Candidate
from tfturbo.tune.study import Rung, Study, StudyStatus, rung_run_names

from .run_data import RunData

__all__ = ["WizardSession", "audit_argv", "probe_argv", "default_study_dir", "workload_name", "script_options",
           "run_on", "scaling_offer"]

STUDIES_FOLDER = "tfturbo-studies"  # under the user's home


def workload_name(spec: str) -> str:
    """'builtin:mlp' -> 'mlp'; '/x/my_model.py' -> 'my_model' (safe for a folder name)."""
    name = spec.split(":", 1)[1] if spec.startswith("builtin:") else Path(spec).stem
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "workload"


def default_study_dir(spec: str, now: datetime | None = None) -> Path:
    """~/tfturbo-studies/<workload>-<YYYYmmdd-HHMMSS>: a new folder per study, named for what it tuned."""
    stamp = (now or datetime.now()).strftime("%Y%m%d-%H%M%S")
    return Path.home() / STUDIES_FOLDER / f"{workload_name(spec)}-{stamp}"


def script_options(text: str) -> list[str]:
    """The wizard's "Script options" line as the script's argv, split as a shell would (no shell runs it)."""
    try:
        return shlex.split(text)
    except ValueError as e:  # "No closing quotation", "No escaped character"
        raise UserError(f"script options: {str(e).lower()}",
                        "close the quote, or put a backslash before a lone quote or a trailing backslash") from e


def run_on(host: str, python: str) -> remote.RemoteHost:
    """The "Run on: ssh host" fields as a host, checked by `RemoteHost` as the CLI's --host is,
    but said in the wizard's words (its fields, not --host)."""
    host, python = host.strip(), python.strip() or remote.DEFAULT_PYTHON
    if not host:
        raise UserError("ssh host: empty", "type [user@]host as you would after `ssh`, or choose this machine")
    try:
        return remote.RemoteHost(host, python)
    except UserError as e:
        raise UserError(f"ssh host {host!r} is not an ssh destination",
                        "type [user@]host as you would after `ssh`: no spaces, no leading '-'") from e


class ScalingOffer(NamedTuple):
    counts: list[int]  # the replica counts to measure ([]: none here)
    why: str  # why not ("" when offered)


def scaling_offer(environment: Environment | None) -> ScalingOffer:
    """(replica counts, '') to measure scaling over this machine's GPUs (MirroredStrategy), or ([], why not).

    Only where there are devices to scale over: logical CPU devices share the
    same cores, so on a CPU the measurement shows contention, not scaling.
    """
    devices = environment.devices if environment is not None else []
    gpus = sum(1 for d in devices if d.get("type") == "GPU")
    if gpus >= 2:
        counts = [1]
        while counts[-1] * 2 <= gpus:
            counts.append(counts[-1] * 2)
        return ScalingOffer(counts + ([gpus] if counts[-1] != gpus else []), "")
    if environment is None:
        return ScalingOffer([], "the hardware report has not arrived yet")
    what = "one GPU" if gpus == 1 else "only the CPU (replicas would share its cores)"
    # in words: the button that measures it is this section's own (the command line is the section's secondary
    # detail, `ScalingSection`), where the page read "in a terminal with: tfturbo scaling WORKLOAD --replicas 1,2"
    return ScalingOffer([], f"this machine has {what}: scaling needs two or more GPUs. On a machine with several, "
                            "open this study there and press “Measure scaling”")


def outcome_of(data: RunData) -> Outcome:
    """What a backend child left behind, as the engine takes it (it makes the fallback summary)."""
    return Outcome(data.document, data.status or "crashed", data.error)


class WizardSession:
    """What the pages share: the workload and study folder until the study exists, then its engine."""

    def __init__(self, workload: str = "", steps: int | None = None, seed: int | None = None):
        defaults = TuneOptions(workload, Path())  # the study options' declared defaults, as `tfturbo tune`'s
        self.workload = workload
        self.script_args: list[str] = []  # a training script's own options, given to every command (after `--`)
        self.fit_call: int | None = None  # which of a training script's fit() calls is measured (None: its first)
        self.steps = defaults.steps if steps is None else steps
        self.seed = defaults.seed if seed is None else seed
        # replicate pairs per trial (the wizard's "Measurement" setting)
        self.min_replicates, self.max_replicates = defaults.min_replicates, defaults.max_replicates
        self.steady_s = defaults.steady_s  # steady seconds each speed-only replicate aims at (0: none)
        self.study_path: Path | None = None
        self.engine: StudyEngine | None = None  # made with the study folder
        self._environment: Environment | None = None
        self.run_data: dict[str, RunData] = {}  # rung name -> live data of its own run (B's first replicate)
        # rung name -> its trial's first reference run (A's first replicate) and its settings: with the rung's own
        # run, the pair the accuracy verdict compared (full length, with validation), what its page plots
        self.reference_data: dict[str, tuple[RunData, RunSettings]] = {}
        self.scaling: ScalingMeasurement | None = None  # the Batch size page's scaling measurement
        self.host: remote.RemoteHost | None = None  # "Run on": None is this machine; else every command runs there
        self._action: Action | None = None  # the engine's action a page is executing
        self._reopened_finished = False  # `finished`
        # a reopened study's trial cut off by Quit (no verdict): its runs handed back from their folders, its next run
        # planned, not started (`resume_interrupted`); its page shows what it measured and offers to continue
        self.resumed: Rung | None = None

    # ------------------------------------------------------------ study

    @classmethod
    def open(cls, path: Path) -> WizardSession:
        """The study in `path` continued: its options, every decided rung replayed from its runs on disk (the
        same engine, so the same verdicts and the same best configuration), ready for its next stage."""
        recorded = Study.load(path)
        options = TuneOptions.from_dict(recorded.workload, Path(path), recorded.options)
        session = cls(recorded.workload, steps=options.steps, seed=options.seed)
        session.script_args = list(options.script_args)
        session.fit_call = options.fit_call
        session.min_replicates, session.max_replicates = options.min_replicates, options.max_replicates
        session.steady_s = options.steady_s
        session.study_path = Path(path)
        session._environment = recorded.environment
        study = Study(Path(path), recorded.workload, options.to_dict(), created=recorded.created)
        session.engine = engine = StudyEngine(options, study, recorded=recorded)
        engine.replay()
        if engine.next_action() is not None:  # a run that is not on disk: its stage is measured again
            engine.abandon()
        if not recorded.unfinished:  # a finished study opens as it ended: never "running", then "interrupted"
            session._reopened_finished = True
            for name in ("status", "message", "recommended", "recommended_rung", "snippet", "patch", "report"):
                setattr(study, name, getattr(recorded, name))
        study.save()
        cut_off = next((r for r in recorded.rungs if r.decision is None and r.skipped_reason is None
                        and r.replicates), None)
        if cut_off is not None and recorded.unfinished and session.baseline is not None:
            session.resume_interrupted(cut_off)
        return session

    def resume_interrupted(self, recorded: Rung) -> None:
        """The trial of `recorded` (a rung the study holds runs of but no verdict: the window closed mid-trial)
        taken up as `tfturbo tune` resumes it: the same trial on the same configuration, its finished runs handed
        back from their folders, up to its next run, which waits for the user (`resumed`). The reopened XLA page
        read "Not started" for a trial with 2 pairs measured (issue 42 walk)."""
        lever = self._study_engine.lever_of(recorded)
        if lever is None:
            return
        rung = self.start_trial(lever.name, recorded.settings)
        if rung is not None and rung.name == recorded.name and rung.decision is None and self._action is not None:
            self.resumed = rung
        elif rung is not None and rung.decision is None:  # not the same trial after all: left for the user to start
            self._drop_resumed(rung)

    def _drop_resumed(self, rung: Rung | None = None) -> None:
        """Another measurement starts instead of the resumed trial: its planned run is dropped (its finished runs
        stay in their folders, handed back if the same trial is started again)."""
        if self.resumed is not None or rung is not None:
            self.resumed = None
            self._action = None
            self._study_engine.abandon()

    def resumed_pairs(self) -> int:
        """The complete pairs the resumed trial holds (`resumed`), 0 when none is resumed."""
        trial = self.trial_of(self.resumed)
        return trial.complete_pairs() if trial is not None else 0

    @property
    def finished(self) -> bool:
        """A study that had ended (completed, input-bound, failed) reopened, nothing measured since: it is shown as
        it ended, never written again (the Record page neither finishes nor checks it again)."""
        return self._reopened_finished

    def start_folder(self) -> Path:
        """Where a file dialog starts: beside this study, else the training script's (or workload file's) folder,
        else the folder new studies go to (the home folder until one was made)."""
        if self.study_path is not None and self.study_path.parent.is_dir():
            return self.study_path.parent
        if not self.workload.startswith("builtin:") and Path(self.workload).expanduser().parent.is_dir():
            return Path(self.workload).expanduser().resolve().parent
        studies = Path.home() / STUDIES_FOLDER
        return studies if studies.is_dir() else Path.home()

    def discard_if_empty(self) -> bool:
        """Remove the study folder the workload check made when nothing was measured in it (the user went on to
        another study, or quit): study.yaml and backend.log go, and the folder when nothing else is in it. A study
        with a run is never touched. True when it went."""
        study = self.study
        if study is None or study.rungs or any((study.path / RUNS_DIR).glob("*")):
            return False
        for leftover in (study.path / STUDY_YAML, study.path / BACKEND_LOG, study.path / RUNS_DIR, study.path):
            try:
                leftover.unlink() if leftover.is_file() else leftover.rmdir()
            except OSError:
                pass  # something of the user's is there: leave it
        return not (study.path / STUDY_YAML).exists()

    def next_stage(self) -> str:
        """The stage to continue with: the baseline, or the lever after the last one measured."""
        if self.baseline is None:
            return BASELINE
        if self.resumed is not None:  # a trial cut off by Quit continues where it was
            lever = self._study_engine.lever_of(self.resumed)
            if lever is not None:
                return lever.name
        # a step recorded as not run (skipped, with why) is decided too: counting only measured rungs, a study
        # reopened during the auto-clustering trial after XLA was refused (XLA_NOT_ACTIVE) opened on Profile &
        # baseline, its first lever (issue 42 walk, h42w)
        measured = [r.kind for r in self._study_engine.study.rungs[1:]]
        order = [lv for lv in self._study_engine.opts.selected()]
        last = max((i for i, lv in enumerate(order) if lv.rung_kind in measured), default=-1)
        return order[min(last + 1, len(order) - 1)].name

    @property
    def study(self) -> Study | None:
        return self.engine.study if self.engine is not None else None

    @property
    def _study_engine(self) -> StudyEngine:
        """The study's engine, once `ensure_study()` made it (every measurement comes after)."""
        return required(self.engine, "ensure_study() first")

    @property
    def scaling_measurement(self) -> ScalingMeasurement:
        """The scaling measurement `start_scaling()` began."""
        return required(self.scaling, "start_scaling() first")

    @property
    def environment(self) -> Environment | None:
        return self._environment

    @environment.setter
    def environment(self, env: Environment | None) -> None:
        """The hardware report (the workload page asks for it); the study's once it exists."""
        self._environment = env
        if self.engine is not None and env is not None:
            self.engine.record_environment(env)
            self.engine.study.save()

    @property
    def decisions(self):
        """The study's decisions (which candidate next, the best so far), once the environment is known."""
        return self.engine.decisions if self.engine is not None else None

    def options(self) -> TuneOptions:
        if self.study_path is None:  # never the current directory (that is often the code checkout)
            self.study_path = default_study_dir(self.workload)
        return TuneOptions(workload=self.workload, out=self.study_path, steps=self.steps, seed=self.seed,
                           min_replicates=self.min_replicates, max_replicates=self.max_replicates,
                           steady_s=self.steady_s, script_args=list(self.script_args), fit_call=self.fit_call)

    def ensure_study(self) -> Study:
        """Create the study folder on the first run (the user may change it until then)."""
        if self.engine is None:
            options = self.options()
            prepare_study_dir(options.out)  # the study folder (options() chose the default one if none)
            self.engine = StudyEngine(options, Study(options.out, self.workload, options.to_dict()))
            self.environment = self._environment or Environment()
            self.engine.study.save()
        return self.engine.study

    def folder_locked(self) -> bool:
        """The study folder may change until its first run starts."""
        return self.study is not None and bool(self.study.rungs)

    def move_study(self, path: Path) -> None:
        """Use `path` for the study instead (before its first run): the new folder is checked and created,
        the old one's study.yaml and backend.log move there, and the old folder goes if nothing else is in it."""
        path = Path(path).expanduser()
        if self.folder_locked():
            raise RuntimeError("the study folder cannot change once a run has started")
        if path == self.study_path:
            return
        if self.study is None:
            self.study_path = path
            return
        old = self.study.path
        prepare_study_dir(path)
        if (old / BACKEND_LOG).exists():
            (old / BACKEND_LOG).replace(path / BACKEND_LOG)
        self.study.path = path
        self._study_engine.change_options(out=path)
        self.study.save()
        for leftover in (old / STUDY_YAML, old / RUNS_DIR, old):
            try:
                leftover.unlink() if leftover.is_file() else leftover.rmdir()
            except OSError:
                pass  # something of the user's is there: leave it
        self.study_path = path

    def interrupt(self) -> None:
        """The window closes before the study finished: study.yaml must not keep saying `running` (a study with
        nothing measured goes instead, `discard_if_empty`)."""
        if self.discard_if_empty():
            return
        if self.study is not None and self.study.status == StudyStatus.RUNNING:
            self.study.status = StudyStatus.INTERRUPTED
            self.study.message = "the wizard was closed before the study finished"
            self.study.save()

    def log_path(self) -> str:
        """Where backend stderr goes: the study's backend.log (as `tfturbo tune`), else the user's log."""
        return str(self.study.path / BACKEND_LOG) if self.study is not None else user_log_path()

    def audit_argv(self, workload: str, script_args: list[str], fit_call: int | None = None) -> list[str]:
        """The study's audit, as `tfturbo tune` runs it (under the 16-bit policy and XLA it will try); the
        workload page runs it to check the workload (and the fit() call chosen) before the study exists."""
        recommended = self._environment.recommended_policy if self._environment is not None else None
        options = self.options()
        options.fit_call = fit_call
        return audit_action(options, recommended, workload, script_args).argv

    def record_audit(self, findings: list[FindingDoc]) -> None:
        self.ensure_study()
        self._study_engine.record_audit(findings)

    def record_probe(self, document: InputProbe | None) -> None:
        self.ensure_study()
        self._study_engine.record_probe(document)

    # ------------------------------------------------------------ rungs

    @property
    def baseline(self) -> Rung | None:
        return self.engine.baseline if self.engine is not None else None

    @property
    def best(self) -> Rung | None:
        """The best configuration kept so far (the baseline until a rung is kept)."""
        return self.engine.best if self.engine is not None else None

    @property
    def measured_baseline(self) -> Rung:
        """The baseline, on the pages after its own (they are enabled once it is measured)."""
        return required(self.baseline, "the baseline has not been measured")

    @property
    def measured_best(self) -> Rung:
        """`best`, on the pages after the baseline's."""
        return required(self.best, "the baseline has not been measured")

    def recommended_policies(self) -> list[str]:
        """The 16-bit policies the study measures, the recommended one first."""
        return self.decisions.policies

    def baseline_settings(self) -> RunSettings:
        return self.options().base_settings()

    def run_length(self) -> tuple[str, int | None]:
        """(the run-length note, the steps that are enough where a verdict needs them) from the baseline's measured
        warm-up and step time (`trials.run_length.too_short`); ("", None) when there is nothing to say."""
        base = self.baseline
        if base is None:
            return "", None
        return too_short(base.summary, base.settings.steps, self.options().speed_rule(),
                         base.settings.calls, paired=self._study_engine.trials_pair(base.settings))

    def lengthen_runs(self, steps: int) -> None:
        """Runs of `steps` from the next baseline on (every trial's runs follow the baseline's length); the
        study's options change when that baseline starts, so they always describe the runs it holds."""
        self.steps = steps

    def pending(self, stage: str) -> list[Candidate]:
        """What the engine would measure next on a stage (skips included), for the page to offer."""
        return self.engine.pending(stage) if self.engine is not None else []

    def start_baseline(self) -> tuple[Rung, list[str]]:
        """The baseline's rung and the `run` arguments that measure it into runs/NN-baseline."""
        self.ensure_study()
        self._reopened_finished = False
        self._drop_resumed()
        if self._study_engine.opts.steps != self.steps:  # lengthened after a baseline too short for a verdict
            self._study_engine.change_options(steps=self.steps)
            self._study_engine.study.save()
        self._study_engine.begin(BASELINE)
        action = self._action = self._study_engine.next_action()
        assert action is not None and action.rung is not None, "the baseline's run"
        return action.rung, action.argv

    def finish_baseline(self, rung: Rung, data: RunData) -> None:
        """The baseline run ended: a completed baseline becomes the reference of every later trial."""
        self.run_data[rung.name] = data
        self._record(data)
        while self._study_engine.next_action() is not None:  # nothing more is planned for the baseline
            raise AssertionError("the baseline is one run")

    def _record(self, data: RunData) -> None:
        action, self._action = self._action, None
        assert action is not None, "a run the engine planned"
        self._study_engine.record(action, outcome_of(data))

    # ------------------------------------------------------------ trials

    def start_trial(self, stage: str, settings: RunSettings | None = None) -> Rung | None:
        """A new rung of `stage` measured as a trial: `settings` (None: the engine's next candidate) against
        what the engine measures it against; None when the stage has nothing to measure (recorded as skipped)."""
        assert self.baseline is not None, "the baseline has not been measured"
        self._reopened_finished = False
        self._drop_resumed()
        self._study_engine.share_process = self.host is None  # a paired replicate's two folders must be on this machine
        self._study_engine.begin(stage, settings)
        self._action = self._study_engine.next_action()
        if self._action is None:
            return None
        return self._action.rung

    def next_run(self, rung: Rung) -> tuple[PlannedRun | PlannedPair, list[str]] | None:
        """The trial's next run and its `run` arguments — or a paired replicate and its `run-pair` arguments
        (`command_of`) — or None when the trial is decided."""
        if self._action is None:
            self._action = self._study_engine.next_action()
        if self._action is None or self._action.rung is not rung or self._action.planned is None:
            return None
        return self._action.planned, self._action.argv

    def command_of(self, planned: PlannedRun | PlannedPair) -> str:
        """The backend command that measures `planned` (`next_run`'s): the one the engine's action names."""
        assert self._action is not None and self._action.planned is planned, "not the trial's next run"
        return self._action.command

    def record_run(self, rung: Rung, planned: PlannedRun | PlannedPair, data: RunData) -> None:
        assert self._action is not None and self._action.planned == planned
        if isinstance(planned, PlannedRun) and planned.replicate == 1:
            if planned.arm == "b":
                self.run_data[rung.name] = data
            else:
                self.reference_data[rung.name] = (data, planned.settings)
        self._record(data)

    def stop_trial(self, rung: Rung) -> None:
        """The user stopped (Stop, Esc): judge what the complete pairs measured; the run going is dropped."""
        self._study_engine.stop_trial()

    def can_continue(self, rung: Rung | None) -> bool:
        """Whether `rung`'s stopped trial may go on (`StudyEngine.continue_refused`), after Esc or a reopen — or it
        is the trial a reopen took up (`resumed`)."""
        return rung is not None and self.engine is not None and (
            rung is self.resumed or self.engine.continue_refused(rung.name) is None)

    def pairs_wanted(self, rung: Rung) -> int:
        """How many more complete pairs the stopped trial of `rung` needs for a verdict (at least one)."""
        trial = self.trial_of(rung)
        if trial is None:
            return 1
        return max(1, trial.rule.min_pairs - trial.complete_pairs())

    def measured_runs(self) -> list[tuple[RunSettings, RunSummary | None]]:
        """Every run of the study's rungs this session knows: each rung's own run and its trial's runs."""
        out: list[tuple[RunSettings, RunSummary | None]] = []
        for rung in self.study.rungs if self.study is not None else []:
            trial = self.trial_of(rung)
            if trial is not None:
                out += [(run.planned.settings, run.summary) for run in trial.own_runs()]
            elif rung.summary is not None:
                out.append((rung.settings, rung.summary))
        return out

    def configuration_peak(self, settings: RunSettings) -> tuple[float, int] | None:
        """The peak memory of the configuration `settings` and over how many runs: the median of its full-length
        runs in a process of their own (`compare.own_process_peaks`), the figure the compare table, its CSV, the
        report and the Batch page give; None before one was measured."""
        peaks = [float(p) for p in own_process_peaks(settings, self.measured_runs()) if finite(p) and p > 0]
        return (middle(peaks), len(peaks)) if peaks else None

    def stopped_so_far(self, rung: Rung | None) -> str:
        """What `rung`'s trial measured before the user stopped it, when that left it undecided and it may go on
        ("1 of the 3 replicate pairs the verdict needs"); "" otherwise (decided, or no longer continuable). The
        stopped trial's card and run line say this, not a verdict: "not kept" read as a decision about a
        configuration nobody finished measuring."""
        if rung is None or rung.decision is None or rung.decision.speed.verdict != Verdict.NOT_ENOUGH \
                or not self.can_continue(rung):
            return ""
        trial = self.trial_of(rung)
        if trial is None:
            return ""
        return (f"{trial.complete_pairs()} of the {trial.rule.min_pairs} replicate pairs the verdict needs; the run "
                "going when you stopped was discarded")

    def continue_trial(self, rung: Rung) -> None:
        """Go on with `rung`'s stopped trial from its complete pairs (no pair measured again) for the pairs its
        button offers (`pairs_wanted`), no more; `next_run` gives its next run, and `finish_trial` its new
        verdict."""
        self._reopened_finished = False
        self._study_engine.share_process = self.host is None
        self._study_engine.continue_trial(rung.name, self.pairs_wanted(rung))
        self._action = self._study_engine.next_action()

    def train_more_seeds(self, rung: Rung) -> None:
        """The way forward "train more seeds" (`StudyEngine.train_more_seeds`): `rung`'s trial trains both
        configurations from further seeds; `next_run` gives each training, and `finish_trial` the new verdict."""
        self._reopened_finished = False
        self._study_engine.share_process = self.host is None
        self._study_engine.train_more_seeds(rung.name)
        self._action = self._study_engine.next_action()

    def finish_trial(self, rung: Rung) -> TrialVerdict:
        """The trial's verdict (the engine judges it once its last run is recorded)."""
        while (action := self._study_engine.next_action()) is not None:  # the stage needs nothing more from this page
            raise AssertionError(f"the engine planned more than the page measured: {action.command}")
        assert rung.decision is not None, "the engine judged the trial"
        return rung.decision

    def way_forward(self, rung: Rung | None) -> WayForward | None:
        """What would decide `rung`'s inconclusive accuracy (None: its verdict needs none)."""
        if rung is None or self.study is None:
            return None
        return for_rung(self.study.path, rung, self._study_engine.opts.tolerance, self.study.baseline)

    def can_rejudge(self, rung: Rung | None) -> bool:
        """The rung's verdict may be judged again (`StudyEngine.rejudge_refused`): it is the last one judged and no
        trial is being measured."""
        return rung is not None and self.engine is not None and self.engine.rejudge_refused(rung.name) is None

    def more_examples_here(self, rung: Rung, forward: WayForward) -> bool:
        """Whether "use N validation examples" can measure this rung's trial again (`can_use_more_examples`)."""
        return can_use_more_examples(forward, self.engine is not None and self.engine.compared_with_baseline(rung))

    def take_way_forward(self, rung: Rung, way: str, accuracy_pp: float | None = None) -> TrialVerdict:
        """Judge `rung` again by the way forward `way` ("loss", or "tolerance" with the user's `accuracy_pp`)
        from the runs its trial measured: no new run; the study records the rule and the choice."""
        tolerance = self._study_engine.opts.tolerance
        if way == "metric":  # undoes "judge on the loss" (issue 39): the validation metric again
            return self._study_engine.rejudge(rung.name, replace(tolerance, judge_on="metric"), way)
        forward = self.way_forward(rung)
        if forward is None:
            raise UserError(f"{rung.name}'s accuracy needs no way forward", "nothing to decide")
        return self._study_engine.rejudge(rung.name, rule_for(way, forward, tolerance, accuracy_pp), way)

    def remaining_text(self) -> str:
        """The study's stages still to come with the engine's estimate ("": none, or nothing to estimate from)."""
        return remaining_text(self.engine) if self.engine is not None else ""

    def trial_progress(self, rung: Rung) -> str:
        """Where `rung`'s trial stands with the engine's time left, its first pair included ("": decided)."""
        trial = self.trial_of(rung)
        return progress_text(self.engine, trial) if trial is not None else ""

    def trial_of(self, rung: Rung | None) -> Trial | None:
        return self.engine.trials.get(rung.name) if rung is not None and self.engine is not None else None

    def finish_study(self) -> Study:
        """The recommendation: the best kept rung, as the user would train with it, and its code to apply (a trial a
        reopen took up and the user went past is dropped, as a step not measured: its runs stay in their folders)."""
        self.ensure_study()
        self._drop_resumed()
        return self._study_engine.finish()

    def start_patch_check(self) -> Action | None:
        """The run that measures the patched copy of the user's file as written (the engine's `patch` stage), or
        None when there is nothing to check or its run on disk already checked this patch."""
        self.ensure_study()
        if self._action is not None and self.resumed is None:
            return None  # a run of another stage is going
        self._drop_resumed()
        self._study_engine.begin(PATCH)
        self._action = self._study_engine.next_action()
        return self._action

    def abandon_patch_check(self) -> None:
        """The check could not start (another training holds the device): it is planned again next time."""
        self._action = None
        self._study_engine.abandon()

    def finish_patch_check(self, data: RunData) -> Study:
        """The check run ended: the study's changes.patch says what it found."""
        self._record(data)
        while self._study_engine.next_action() is not None:
            raise AssertionError("the patch check is one run")
        return self._study_engine.finish()

    # ------------------------------------------------------------ scaling (STUDY/scaling/, as `tfturbo scaling`)

    def start_scaling(self, counts: list[int]) -> None:
        """Measure the best configuration so far on 1…N GPUs, each N an A/B trial against one replica."""
        assert self.best is not None, "the baseline has not been measured"
        self.scaling = ScalingMeasurement(self.best.settings.with_(profile=NO_PROFILE), "mirrored", counts,
                                          SpeedRule(self.min_replicates, self.max_replicates))

    def next_scaling_run(self) -> tuple[PlannedRun, list[str]] | None:
        """The measurement's next run and its `run` arguments (into STUDY/scaling/runs/), or None when done."""
        planned = self.scaling_measurement.next_run()
        if planned is None:
            return None
        return planned, run_argv(planned.settings, str(self.scaling_path() / RUNS_DIR / planned.name))

    def record_scaling_run(self, planned: PlannedRun, data: RunData) -> None:
        run_dir = self.scaling_path() / RUNS_DIR / planned.name
        self.scaling_measurement.record(planned, summary_of(data.document, data.status or "crashed", data.error, run_dir, planned),
                            run_dir)

    def finish_scaling(self) -> ScalingResult:
        """Judge what was measured and write scaling.json, where the report finds it."""
        result = self.scaling_measurement.result()
        result.save(self.scaling_path())
        return result

    def scaling_path(self) -> Path:
        return self.ensure_study().path / SCALING_DIR

    def data_of(self, rung: Rung | None) -> RunData | None:
        """`rung`'s own run: the live one of this session, else read back from its run directory. A
        reopened study's rungs, and a trial resumed after a reopen whose own run the engine handed back from disk
        (no page ever saw it run), are plotted from their files as a live trial is (the resumed trial's card
        showed beside the reference's curve alone)."""
        if rung is None:
            return None
        data = self.run_data.get(rung.name)
        if data is None and rung.run and self.study is not None and (self.study.path / rung.run).is_dir():
            data = self.run_data[rung.name] = RunData.from_record(load_run(self.study.path / rung.run))
        return data

    def first_pair(self, rung: Rung) -> dict[str, tuple[RunData, RunSettings]]:
        """The first pair of `rung`'s trial, arm ("b": the rung's own run, "a": its reference) -> (its data, its
        settings): the full-length runs with validation the accuracy verdict compared — for a trial that trained
        no A the full length, the baseline run B was judged against. The live runs of this session, else read
        back from their run directories (a continued study); an arm not on disk is left out."""
        pair: dict[str, tuple[RunData, RunSettings]] = {}
        own = self.data_of(rung)
        if own is not None:
            pair["b"] = (own, rung.settings)
        if rung.name not in self.reference_data and self.study is not None:
            folder = self.study.path / RUNS_DIR / rung_run_names(rung.name)("a", 1)
            if folder.is_dir():
                record = load_run(folder)
                settings = run_settings(record)
                if settings is None:  # an unreadable run.yaml: its reference rung's
                    against = next((r for r in self.study.rungs if r.name == rung.compared_with), self.baseline)
                    settings = against.settings if against is not None else rung.settings
                self.reference_data[rung.name] = (RunData.from_record(record), settings)
        if rung.name in self.reference_data:
            pair["a"] = self.reference_data[rung.name]
        elif self.baseline is not None and rung is not self.baseline \
                and (baseline_data := self.data_of(self.baseline)) is not None:
            # a paired trial trains no A the full length: its gate judged B against the baseline run
            pair["a"] = (baseline_data, self.baseline.settings)
        return pair

    def rung_path(self, rung: Rung) -> Path:
        return self.ensure_study().path / str(rung.run)
