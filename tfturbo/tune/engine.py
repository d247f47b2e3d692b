"""The study engine: one study from the hardware report to the recommendation, as a plan of backend actions.

Like `trials.Trial`, the engine never runs anything. `next_action()` says
what the backend should do next — `env`, `audit`, `probe-input` or one `run`
of a trial, with its arguments and run directory — and the front end
executes it its own way and hands back what came of it with `record()`:

- `tfturbo tune` (`tune.ladder.Ladder`) is a blocking loop over the whole
  study (`run_all()`), one subprocess per action;
- the wizard (`tfturbo_gui.session.WizardSession`) drives the same object
  through QProcess, stage by stage: the user chooses when a stage runs
  (`begin(stage)`) and may change its settings; the engine decides what is
  measured against what, and what is kept.

So the same results in give the same study.yaml from either front end.

The life of a study: environment (the `env` document; the 16-bit policies
and the memory a larger batch may use), audit (static findings under the
16-bit policy and XLA the study will try, so their fixes apply), input probe
(an input-bound job stops here unless a lever handles it), baseline (one run
with the profiler window), then each lever's stage in order
(`tune.levers.LEVERS`), each candidate an A/B trial against the best kept
configuration, and last the recommendation and its code changes: the patch
of the user's file, proven by measuring the patched copy as written (the
`patch` stage: one short run of STUDY_DIR/patched/NAME, `tfturbo.patch.check`).

Resume: an engine given the `recorded` study of an unfinished run of the same
command replays it. Every document the study already holds (environment,
audit, probes) and every finished run in runs/ (its summary.json written) is
handed back without asking the backend again; a run that left no summary is
deleted and measured again. The policy is deterministic, so the same recorded
runs lead to the same decisions as an uninterrupted study.
"""

from __future__ import annotations

import functools
import shutil
from dataclasses import dataclass, field, replace
from dataclasses import fields as dataclass_fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Generator, Sequence

from ..findings import FindingDoc, findings_in
from ..as_written import as_written_text
from .. import findings as F
from .. import backend_client, protocol
from ..cli_args import run_argv, script_argv
from ..compare import replicate_key
from ..environment import Environment
from ..errors import OutputDirError, UserError, required
from ..input_probe import InputProbe
from ..numbers import counted
from ..run_summary import RunSummary
from ..runfiles import RUNS_DIR, STUDY_YAML, VALIDATION_DIR, XLA_CACHE_DIR, load_run
from ..own_length import OwnLength, length_line
from ..patch import check as patch_check
from ..patch.document import ChangesPatch
from ..workload_kind import measured_fit_text
from ..settings import DEFAULT_SEED, NO_PROFILE, RunSettings, configuration_key, training_key
from ..trials import label_free
from ..trials.execute import pair_command, pair_summaries, summary_of
from ..trials.run_length import too_short
from ..trials.runs import A, B, FinishedRun, PlannedPair, PlannedRun, RunRole
from ..trials.sizing import speed_in_paired_processes
from ..trials.trial import SEED_REPLICATES, Trial
from ..trials.verdict import NO_CHANGE, AccuracyVerdict, ReasonPart, Says, SpeedVerdict, Tolerance, TrialVerdict
from ..verdicts import Verdict
from . import levers
from .code_changes import recommended_patch, target_file
from .levers import Candidate, Lever
from .levers.input_pipeline import INPUT_BOUND_ADVICE
from .options import TuneOptions as TuneOptions  # (re-exported: the front ends and tests name it here)
from .policy import StudyDecisions, sixteen_bit_policies
from .study import Rung, RungKind, Study, StudyStatus, measurement_only, role_in_name, rung_run_names

if TYPE_CHECKING:  # made by tfturbo.patch.build (libcst), loaded when the study makes its patch
    from ..patch.build import Patch

ENVIRONMENT, AUDIT, PROBE, BASELINE = "environment", "audit", "probe", RungKind.BASELINE
PATCH = "patch"  # the last stage: the patched copy of the user's file measured as written
# a run that wrote its summary.json with one of these ended for a reason of its own: re-used on resume
FINISHED_RUN = (protocol.RunStatus.COMPLETED, protocol.RunStatus.FAILED, protocol.RunStatus.NAN_STOPPED)


@dataclass
class Action:
    """What the backend should do next: `command` with `argv` (a `run` into `run_dir`)."""

    command: str  # env | audit | probe-input | run | run-pair
    argv: list[str]
    stage: str  # environment | audit | probe | baseline | a lever's name
    planned: PlannedRun | PlannedPair | None = None  # a run of a trial (or the baseline's one run), or a pair
    rung: Rung | None = None
    run_dir: Path | None = None  # a run-pair's first run's
    # folders the backend child finds modules in first (PYTHONPATH): the patch check runs a copy of the user's
    # script from the study, and the script's own folder keeps its imports of the modules beside it
    python_path: list[str] = field(default_factory=list)

    @property
    def candidate(self) -> bool:
        """A run of a lever's candidate: the baseline ran the same workload before it, so the workload rejecting
        this run is this configuration's failure (a failed rung), not a broken workload (which ends the study)."""
        return self.command in ("run", "run-pair") and self.stage not in (ENVIRONMENT, AUDIT, PROBE, BASELINE)


@dataclass
class Outcome:
    """What came of an action: the backend's result document (None: none), how the process ended, its error."""

    document: dict[str, Any] | None
    status: str = protocol.RunStatus.COMPLETED
    error: protocol.ErrorDoc | None = None


def prepare_study_dir(path: Path) -> bool:
    """Create the study directory (True if this call created it), or say in one line why it cannot be used."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise OutputDirError(f"{path} exists and is not a directory", "choose another --out path")
    if (path / STUDY_YAML).exists() or (path / RUNS_DIR).exists():
        raise OutputDirError(f"{path} already holds a study", "choose a new --out directory or delete the old study")
    created = not path.exists()
    try:
        (path / RUNS_DIR).mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputDirError(f"cannot write to {path} ({e.strerror or e})", "choose a writable --out directory") from e
    return created


def baseline_verdict(base: RunSummary) -> TrialVerdict:
    """The baseline's own row: the reference every trial is measured against."""
    rate = base.samples_per_s
    speed = SpeedVerdict(1.0, (1.0, 1.0), NO_CHANGE, 0, [], rate, rate)
    metric = base.primary_metric()
    return TrialVerdict(speed, AccuracyVerdict(metric[0] if metric else None, 0.0, (0.0, 0.0), "within tolerance",
                                               checked=False),
                        True, [ReasonPart(Says.OTHER, f"reference: {(base.settings or RunSettings()).label()}")], [])


def against_baseline(reference: RunSettings, baseline: RunSettings) -> bool:
    """True when a trial's reference is the baseline's configuration (`compare.replicate_key`: the same
    configuration, however it was measured). Its A runs then measure the baseline again, so a trial on more
    validation examples can pair its accuracy on its own A runs; against a later configuration the baseline's
    one run stays the accuracy reference. The one rule of `make_trial` and of the wizard's offer of that way
    forward (`StudyEngine.compared_with_baseline`)."""
    return replicate_key(reference.to_dict()) == replicate_key(baseline.to_dict())


def seed_references(study_path: Path, baseline: Rung, own: str = "",
                    recorded: dict[str, tuple[str, RunRole]] | None = None) -> list[tuple[RunSummary | None, Path | None]]:
    """The baseline's configuration trained from other seeds by the study's earlier trials (their reference's
    seed replicates, replicates 0, -1 of A), at the baseline run's length and validation points: the trainings'
    noise of the accuracy gate is measured once per study, and every later rung is judged against them too
    (`Trial.seed_runs`: a reference of two seeds trains none again). Not the rung `own`'s: a resumed trial
    takes its own seed run back as its own run. Each run's rung and role as study.yaml recorded them
    (`recorded`: `Study.run_roles`), else, for a study written before they were recorded or a run no rung
    holds, as its folder's name says (`role_in_name`)."""
    base = baseline.summary.settings if baseline.summary else None
    runs = study_path / RUNS_DIR
    if base is None or not runs.is_dir():
        return []
    key, length = replicate_key({**base.to_dict(), "seed": None}), (base.steps, base.val_every)
    found: list[tuple[RunSummary | None, Path | None]] = []
    for run_dir in sorted(p for p in runs.iterdir() if p.is_dir()):
        rung, role = (recorded or {}).get(run_dir.name) or role_in_name(run_dir.name)
        if role.arm != A or not role.seed or rung == own:
            continue
        s = load_run(run_dir).summary
        ran = s.settings if s else None
        if s is not None and ran is not None and s.status == protocol.RunStatus.COMPLETED \
                and label_free.gate_file(s) and replicate_key({**ran.to_dict(), "seed": None}) == key \
                and (ran.steps, ran.val_every) == length:
            found.append((s, run_dir))
    return found


def make_trial(settings: RunSettings, reference: Rung, name: str, baseline: Rung, study_path: Path,
               options: TuneOptions, share_process: bool = True, profiled: dict[tuple[str, ...], str] | None = None,
               accelerator: bool = False, finished: dict[tuple[tuple[str, str], ...], FinishedRun] | None = None,
               keeps: bool = True, recorded: dict[str, tuple[str, RunRole]] | None = None) -> Trial:
    """The trial of one rung: `settings` against its reference (speed), accuracy against the baseline run.

    `share_process` False: never a paired replicate (the runs go to a remote host). `profiled`: the study's
    runs holding a configuration's profile (`StudyEngine.profiled`): an arm whose configuration has one trains
    without the profiler window (a configuration is profiled once per study). A candidate that validates on more examples than the baseline did (the
    way forward "more validation examples") is paired on them: its reference runs validate on as many, and
    when the reference is the baseline's configuration its accuracy is judged against those runs (the
    baseline run has fewer). `finished`: the study's completed full-length runs (`StudyEngine.finished`), one of
    which the trial's reference run re-uses where it trained the same way. `keeps` False: the rung can never
    become the recommendation (a confirmation), so its run saves no model (`Trial.save_model`). `recorded`: the
    study's runs with the rung and role study.yaml recorded for each (`Study.run_roles`, `seed_references`)."""
    a, way = reference.settings, ""
    reference_runs: list[tuple[RunSummary | None, Path | None]] | None = [
        (baseline.summary, study_path / str(baseline.run)),
        *seed_references(study_path, baseline, name, recorded)[:SEED_REPLICATES]]
    if settings.val_examples > baseline.settings.val_examples:
        a, way = a.with_(val_examples=settings.val_examples), "examples"
        if against_baseline(reference.settings, baseline.settings):
            reference_runs = None  # the trial's own A runs: the baseline's configuration on the new examples
    return Trial(a, settings, options.speed_rule(), options.tolerance, names=rung_run_names(name),
                 accuracy_reference=reference_runs,
                 label_a=reference.settings.label() if reference is not baseline else "the baseline",
                 label_reference="the baseline",  # what its accuracy is judged against, and trained from other seeds
                 label_b=settings.label(), xla_cache=str(study_path / XLA_CACHE_DIR),
                 val_set=str(study_path / VALIDATION_DIR), share_process=share_process, accelerator=accelerator,
                 not_in_effect=levers.effect_check(reference.settings, settings), profiled=dict(profiled or {}),
                 way_forward=way, a_history=[reference.summary] if reference.summary else [],
                 seed_replicates=SEED_REPLICATES, finished=dict(finished or {}), save_model=keeps)


def finish_rung(rung: Rung, trial: Trial, verdict: TrialVerdict, note: str) -> None:
    """What a rung keeps of its trial: B's first run as its own, every run's name, the verdict's reason after
    why the rung was measured and the rule that judged it (`name_rule`)."""
    first_b = next((r for r in trial.runs if r.planned.arm == "b"), None)
    rung.summary = first_b.summary if first_b is not None else None
    rung.settings = first_b.planned.settings if first_b is not None else rung.settings
    record_runs(rung, trial)
    rung.run_seconds = trial.measured_seconds()
    name_rule(verdict)
    if note:
        verdict.say_first(Says.NOTE, note)


def record_runs(rung: Rung, trial: Trial) -> None:
    """The runs of a rung's trial as study.yaml records them: their names, and each one's arm and replicate
    (`Rung.roles`: what every reader takes a run's role from, never its folder's name)."""
    rung.replicates = [r.planned.name for r in trial.own_runs()]
    rung.roles = {r.planned.name: r.planned.role for r in trial.own_runs()}


def cancelled(result: Any) -> bool:
    """Whether a run's summary (a pair's: either) says the user stopped it."""
    summaries = result if isinstance(result, (list, tuple)) else [result]
    return any(isinstance(one, RunSummary) and one.status == protocol.RunStatus.CANCELLED for one in summaries)


def name_rule(verdict: TrialVerdict) -> None:
    """A verdict judged by a rule the user chose says so first in its reason (nothing kept silently): a rung's
    verdict as measured (`finish_rung`) and as judged again (`StudyEngine.rejudge`)."""
    if verdict.rule_text():
        verdict.say_first(Says.RULE, verdict.rule_text())


def audit_argv(workload: str, policy: str = "float32", jit: bool = False, batch_size: int | None = None,
               script_args: Sequence[str] = (), fit_call: int | None = None) -> list[str]:
    """`audit` arguments (the shared backend parser's); a script's options follow `--`."""
    argv = [workload, "--policy", policy, "--jit" if jit else "--no-jit"]
    return argv + (["--batch-size", str(batch_size)] if batch_size else []) + _fit_call_argv(fit_call) + \
        script_argv(list(script_args))


def probe_argv(workload: str, seed: int = DEFAULT_SEED, batch_size: int | None = None,
               script_args: Sequence[str] = (), extra: Sequence[str] = (), fit_call: int | None = None) -> list[str]:
    """`probe-input` arguments (the shared backend parser's); a script's options follow `--`."""
    argv = [workload, "--seed", str(seed), *extra]
    return argv + (["--batch-size", str(batch_size)] if batch_size else []) + _fit_call_argv(fit_call) + \
        script_argv(list(script_args))


def _fit_call_argv(fit_call: int | None) -> list[str]:
    """`--fit-call N`: which of a training script's fit() calls the audit and the probe load (as every run)."""
    return ["--fit-call", str(fit_call)] if fit_call else []


def audit_action(options: TuneOptions, recommended: str | None, workload: str | None = None,
                 script_args: list[str] | None = None) -> Action:
    """The audit under the 16-bit policy and XLA the study will try, so the fixes of what it finds apply."""
    policy = sixteen_bit_policies(recommended, options.both_policies, options.sixteen_bit_policy)[0][0]
    return Action("audit", audit_argv(workload or options.workload, policy, jit=True, batch_size=options.batch_size,
                                      script_args=options.script_args if script_args is None else script_args,
                                      fit_call=options.fit_call), AUDIT)


Flow = Generator[Action, Outcome, Any]


class StudyEngine:
    """One study as a plan: `next_action()` / `record()`, stage by stage (`begin`) or all of it (`run_all`)."""

    def __init__(self, options: TuneOptions, study: Study, say: Callable[[str], None] = lambda line: None,
                 recorded: Study | None = None):
        self.opts = options
        self.study = study
        self.say = say
        self.recorded = recorded  # the unfinished study this one continues (resume), or None
        self.decisions: StudyDecisions | None = None  # made once the environment is known
        self.trial: Trial | None = None  # the trial being measured
        self.trials: dict[str, Trial] = {}  # rung name -> its trial
        self.reused: list[str] = []  # runs handed back from disk instead of measured (resume)
        # the study's completed full-length runs by `settings.training_key`, the latest of each: a trial takes its
        # reference run from here instead of training it again (`Trial.reused_run`)
        self.finished: dict[tuple[tuple[str, str], ...], FinishedRun] = {}
        # the run that holds each configuration's profile (`settings.configuration_key`), the first profiled: a
        # trial's arm whose configuration is here is not profiled again (`Trial.profiled`)
        self.profiled: dict[tuple[str, ...], str] = {}
        self.stopped: set[str] = set()  # rungs whose trial the user stopped (Esc): `continue_trial` goes on
        self._replayed: set[str] = set()  # runs a replayed decided rung recorded: handed back however they ended
        self._notes: dict[str, str] = {}  # rung name -> why it was measured (its candidate's note)
        self._flow: Flow | None = None
        self._pending: Action | None = None
        self._outcome: Outcome | None = None
        self._started = False
        self._stop = False  # the user stopped: no new trial starts, the study ends interrupted
        self._visited: set[str] = set()  # levers whose stage began (their skips are recorded once)
        self._unattended = False  # planning the whole study (tune): a failed baseline ends it
        self.share_process = backend_client.runs_here()  # paired replicates need the runs on this machine
        self._checked: tuple[str, RunSummary] | None = None  # (patched text, its check run's summary)
        self._patch: tuple[str, Patch] | None = None  # (what it was made from, the recommendation's patch)

    def change_options(self, **changes: Any) -> None:
        """Change the study's options (a front end's, e.g. the wizard lengthening the runs before its baseline):
        the engine's options and study.yaml's `options` stay one."""
        unknown = sorted(set(changes) - {f.name for f in dataclass_fields(self.opts)})  # every declared option
        if unknown:
            raise TypeError(f"not a study option: {', '.join(unknown)}")
        for name, value in changes.items():
            setattr(self.opts, name, value)
        self.study.options = self.opts.to_dict()

    # ------------------------------------------------------------ the plan

    @property
    def on_accelerator(self) -> bool:
        """A GPU or TPU trains this study's runs (its `env` document): arms of different batch sizes then never
        share a paired process (`settings.can_share_process`)."""
        return self.decisions is not None and self.decisions.accelerator is not None

    @property
    def baseline(self) -> Rung | None:
        return self.decisions.baseline if self.decisions is not None else None

    def trials_pair(self, settings: RunSettings | None = None) -> bool:
        """Whether this study's trials on `settings` (default: the best kept so far) measure speed in paired
        processes only (`trials.sizing.speed_in_paired_processes`, the rule of `Trial.paired`), so the
        full-length runs' length decides no verdict."""
        if settings is None:
            assert self.best is not None, "the baseline is measured first"
            settings = self.best.settings
        return speed_in_paired_processes(self.share_process, self.opts.speed_rule(), settings, settings,
                                         self.on_accelerator)

    def compared_with_baseline(self, rung: Rung) -> bool:
        """Whether `rung` was measured against the baseline's configuration (`against_baseline`)."""
        reference = next((r for r in self.study.rungs if r.name == rung.compared_with), None)
        base = self.baseline
        return reference is not None and base is not None and against_baseline(reference.settings, base.settings)

    @property
    def best(self) -> Rung | None:
        return self.decisions.best if self.decisions is not None else None

    @property
    def _decisions(self) -> StudyDecisions:
        """The policy of a stage after the environment's (each of them runs with one)."""
        return required(self.decisions, "the environment is recorded first")

    def run_all(self) -> None:
        """Plan the whole study (tune): every stage in order, then the recommendation and its patch's check."""
        self._unattended = True
        self._start(self._whole_and_check())

    def _whole_and_check(self) -> Flow:
        yield from self._whole()
        if not self._stop:
            yield from self._check_patch()

    def begin(self, stage: str, settings: RunSettings | None = None) -> None:
        """Plan one stage (the wizard): the baseline, a lever's candidate — the user's `settings`, else the
        lever's next candidate — or the patch's check (`PATCH`, the Record page). The stages before a lever's
        that have nothing to measure are recorded as skipped."""
        if stage == BASELINE:
            self._start(self._baseline())
            return
        if stage == PATCH:
            self._close_before(None)
            self._start(self._check_patch())
            return
        lever = levers.lever(stage)
        self._close_before(lever)
        self._start(self._lever(lever, None if settings is None else [lever.candidate_for(self._decisions, settings)],
                                follow=False))

    def stages_left(self) -> list[Lever]:
        """The levers whose stage has not begun, in order (the confirmation last), for the estimate of the rest
        (`tune.estimate`); none once the study has ended (a finished study reopened said "Still to come: Mixed
        precision about 0 s · Batch size about 0 s" for the stages it decided to go without)."""
        if not self.study.unfinished:
            return []
        return [lv for lv in self.opts.selected() if lv.name not in self._visited]

    def next_action(self) -> Action | None:
        """The next backend action of the planned stage(s), or None when they are done."""
        if self._pending is not None or self._flow is None:
            return self._pending
        try:
            if self._started:
                assert self._outcome is not None, "record() the last action's outcome first"
                self._pending = self._flow.send(self._outcome)
            else:
                self._pending = next(self._flow)
            self._started = True
        except StopIteration:
            self._flow = None
        self._outcome = None
        return self._pending

    def record(self, action: Action, outcome: Outcome) -> None:
        """What came of `action` (the one `next_action` returned)."""
        assert action is self._pending, "record the action next_action() returned"
        self._pending, self._outcome = None, outcome

    def replay(self) -> None:
        """Plan the recorded study's decided rungs again from their runs on disk (the wizard's Open study): the
        policy, the best configuration and every verdict come back as they were. A rung whose runs are not all
        on disk asks for a run: the front end then `abandon()`s the replay there."""
        self._start(self._replay())

    def abandon(self) -> None:
        """Drop the stage being planned (a replay that reached a run not on disk): its undecided rung goes."""
        if self._flow is not None:
            self._flow.close()
        self._flow, self._pending, self.trial = None, None, None
        if self.study.rungs and self.study.rungs[-1].decision is None and self.study.rungs[-1].skipped_reason is None:
            self.study.rungs.pop()
        self.study.save()

    def _replay(self) -> Flow:
        recorded = self.recorded
        assert recorded is not None, "a replay plans a recorded study again"
        if recorded.environment is not None:
            self.record_environment(recorded.environment)
        self.record_audit(recorded.audit)
        if recorded.probe is not None:
            self.record_probe(recorded.probe)
        self.study.probe_input_fixes = recorded.probe_input_fixes
        for rung in recorded.rungs:
            if rung.skipped_reason is not None:
                self.study.add_skipped(rung.kind, rung.name[3:], rung.settings, rung.skipped_reason,
                                       rung.compared_with or "")
                self._visited.update(lv.name for lv in levers.of_kind(rung.kind))
            elif rung.decision is None or self.decisions is None:
                return  # the rung never finished: its stage is the next one
            elif rung.kind == BASELINE:
                yield from self._baseline()
            elif self.best is not None:
                lever = self._lever_of(rung)
                if lever is None:  # a lever this tfturbo does not have (a newer version's, a plug-in's)
                    return
                self._visited.add(lever.name)
                slug = rung.name[3:]
                candidate = next((c for c in lever.candidates(self.decisions) + lever.follow_up(self.decisions)
                                  if c.slug == slug and c.skipped_reason is None), None)
                # else the lever's own candidate for the settings, as the wizard made it (`Lever.candidate_for`):
                # its note, the reason's first words, reads as it did before the reopen (the confirmation's "the
                # recommended configuration … against the baseline" came back as "chosen in the wizard: …")
                if candidate is None:
                    made = lever.candidate_for(self.decisions, rung.settings)
                    # the recorded settings are what was measured: a lever that would make other ones today (the
                    # batch lever's learning-rate rule) gives only its words where its settings are the same
                    same = configuration_key(made.settings) == configuration_key(rung.settings)
                    candidate = replace(made, slug=slug, settings=rung.settings) if same else Candidate(
                        rung.kind, slug, rung.settings, f"chosen in the wizard: {rung.settings.label()}", self.best)
                yield from self._trial(candidate, lever)

    def lever_of(self, rung: Rung) -> Lever | None:
        """The lever whose stage measures `rung` (`_lever_of`): the wizard resumes an interrupted rung's trial on it."""
        return self._lever_of(rung)

    def _lever_of(self, rung: Rung) -> Lever | None:
        """The lever a recorded rung measured: of its kind, the last that changes a setting it differs in from
        the rung it was measured against (None: no lever has its kind)."""
        kind = levers.of_kind(rung.kind)
        if not kind:
            return None
        reference_rung = self._decisions.rung(rung.compared_with)  # (or the best so far)
        assert reference_rung is not None, "the baseline is measured first"
        reference = reference_rung.settings
        changed = [lv for lv in kind if any(getattr(rung.settings, f) != getattr(reference, f)
                                            for f in lv.settings_changed)]
        return (changed or kind)[-1]

    def stop(self) -> None:
        """The user stopped: the current trial is judged on its complete pairs, and no new trial starts."""
        self._stop = True
        if self.trial is not None:
            self.trial.stop()

    def stop_trial(self) -> None:
        """Stop only the current trial (the wizard's Stop on a page): judge its complete pairs; the run that was
        going when it stopped is not one of them (`_measure`), and `continue_trial` may go on later."""
        if self.trial is not None:
            self.trial.stop()
            self.stopped.update(name for name, trial in self.trials.items() if trial is self.trial)

    def _start(self, flow: Flow) -> None:
        assert self._flow is None, "a stage is being measured"
        self._flow, self._started, self._stop = flow, False, False

    def _ask(self, action: Action) -> Flow:
        outcome = yield action
        return outcome

    # ------------------------------------------------------------ the whole study

    def _whole(self) -> Flow:
        """Each step returns or records whether the study goes on; `finish()` (the front end's) ends it."""
        steps = [self._environment, self._audit, self._probe_stage, self._baseline]
        steps += [functools.partial(self._stage, lever) for lever in self.opts.selected()]
        for step in steps:
            yield from step()
            if self._stop:
                self.interrupted()
            if self.study.status != StudyStatus.RUNNING:
                return

    def _stage(self, lever: Lever) -> Flow:
        self._visited.add(lever.name)
        yield from self._lever(lever, None, follow=True)

    def interrupted(self) -> None:
        self.study.status = StudyStatus.INTERRUPTED
        self.study.message = "stopped by the user (Ctrl-C); the rungs measured so far are kept"
        self.study.save()

    def _environment(self) -> Flow:
        doc = (self.recorded.environment if self.recorded is not None else None)
        if doc is None:
            self.say("environment: asking the backend for devices and the recommended policy")
            outcome = yield from self._ask(Action("env", [], ENVIRONMENT))
            doc = outcome.document
            if doc is None:
                self.fail("the backend could not report the environment: " + error_text(outcome))
                return
        env = doc if isinstance(doc, Environment) else Environment.from_dict(doc, "the env document")
        self.record_environment(env)
        self.say(f"environment: {', '.join(env.device_names()) or 'no device listed'}; "
                 f"recommended policy {env.policy_text()}")

    def record_environment(self, env: Environment) -> None:
        """The `env` document: the 16-bit policies to measure and the memory a larger batch may use."""
        self.study.environment = env
        policies, reason = sixteen_bit_policies(env.recommended_policy, self.opts.both_policies,
                                                self.opts.sixteen_bit_policy)
        available = env.available_memory
        if self.decisions is None:
            self.decisions = StudyDecisions(self.study.audit, policies, reason, self.opts.auto_fix,
                                       self.opts.max_batch_scale, available, env.accelerator)
        else:  # the report again (the wizard asks when its page shows): what was measured stays
            self.decisions.policies, self.decisions.policy_reason, self.decisions.available_memory = policies, reason, available
            self.decisions.accelerator = env.accelerator

    def _audit(self) -> Flow:
        recorded = self.recorded
        if recorded is not None and (recorded.audit or recorded.probe is not None or recorded.rungs):
            self.record_audit(recorded.audit)
            return
        action = audit_action(self.opts, self.study.environment.recommended_policy if self.study.environment else None)
        outcome = yield from self._ask(action)
        if outcome.document is None:
            self.fail("the audit failed: " + error_text(outcome))
            return
        found = findings_in(outcome.document.get("findings"))
        own = OwnLength.of(outcome.document) if self.opts.own_length else None
        if own is not None:  # saved with the audit: a resumed study trains the same length
            self.opts.steps = own.run_steps
            self.study.options = self.opts.to_dict()
        self.record_audit(found)
        self.say(f"audit ({action.argv[2]} + XLA): {counted(len(found), 'finding')}"
                 + (f": {', '.join(F.codes_of(found))}" if found else ""))
        if self.opts.own_length:  # a script whose length the audit could not read: say what runs instead
            self.say(length_line(own, self.opts.steps))
        fit = measured_fit_text(outcome.document.get("workload"))
        if fit:  # a training script: which of its fit() calls every run measures
            self.say(f"measured: {fit}")

    def record_audit(self, findings: list[FindingDoc]) -> None:
        """Static findings, each once (the wizard's pages audit again under the policy they measure)."""
        study = self.study
        seen = {(f.get("code"), f.get("where"), f.get("message")) for f in study.audit}
        study.audit += [f for f in findings if (f.get("code"), f.get("where"), f.get("message")) not in seen]
        study.save()

    def probe(self, extra: list[str]) -> Flow:
        """The probe-input document (`extra`: e.g. --input-fixes); a failed probe is recorded with its error and
        no verdict."""
        recorded = self.recorded
        reused = None if recorded is None else recorded.probe_input_fixes if extra else recorded.probe
        if reused is not None:
            return reused
        o = self.opts
        outcome = yield from self._ask(Action("probe-input", probe_argv(o.workload, o.seed, o.batch_size,
                                                                        o.script_args, extra, o.fit_call), PROBE))
        label = "input probe" + (" with " + " ".join(extra) if extra else "")
        if outcome.document is None:
            self.say(f"{label}: failed ({error_text(outcome)}); continuing without its verdict")
            return InputProbe(error=error_text(outcome))
        probe = InputProbe.from_dict(outcome.document)
        self.say(f"{label}: {str(probe.verdict).replace('_', '-')}"
                 + (f" ({probe.band} share of step time waiting on input)" if probe.band else ""))
        return probe

    def _probe_stage(self) -> Flow:
        document = yield from self.probe([])
        self.record_probe(document)
        if self._decisions.input_bound:
            if any(lv.handles_input_bound() for lv in self.opts.selected()):
                self.say("input probe: the automatic tf.data fixes are measured first")
            else:
                self.stop_input_bound(f"the job is input-bound: {INPUT_BOUND_ADVICE}")

    def record_probe(self, probe: InputProbe | None) -> None:
        self.study.probe = probe
        if self.decisions is not None:
            self.decisions.probed(probe.verdict if probe is not None else None)
        self.study.save()

    def stop_input_bound(self, reason: str) -> None:
        """The study stops here: the job waits on its input (STOPPED_INPUT_BOUND)."""
        self.study.status = StudyStatus.STOPPED_INPUT_BOUND
        self.study.message = reason
        self.study.save()

    def fail(self, message: str) -> None:
        self.study.status = StudyStatus.FAILED
        self.study.message = message
        self.say("study failed: " + message)
        self.study.save()

    # ------------------------------------------------------------ the baseline

    def _baseline(self) -> Flow:
        settings = self.opts.base_settings()  # the default profiler window
        rung = self._new_rung(RungKind.BASELINE, RungKind.BASELINE, settings)
        rung.replicates = [rung.name]
        self.say(f"[{rung.name[:2]}] baseline: {settings.label()} — running {settings.steps} steps in {rung.run}")
        rung.summary = yield from self._run(PlannedRun("a", 1, settings, rung.name), rung, BASELINE)
        assert rung.summary is not None, "a run's summary: its document, its file or its status"
        status = rung.summary.status or protocol.RunStatus.CRASHED
        rung.decision = baseline_verdict(rung.summary)
        if status != protocol.RunStatus.COMPLETED:
            err = rung.summary.error or {}
            detail = f": {err['message']}" if err.get("message") else ""
            rung.decision.kept = False
            rung.decision.said = [ReasonPart(Says.OTHER, f"the baseline run ended as {status}{detail}")]
            self._report_end(rung)
            if self._unattended and not self._stop:  # the wizard's user may measure it again
                self.fail(f"the baseline run ended as {status}{detail}, so nothing can be compared with it; "
                          f"see {rung.run}/backend.log")
            return
        ran = rung.summary.settings
        if ran is not None and ran.batch_size:  # the workload's default, now known
            rung.settings = rung.settings.with_(batch_size=ran.batch_size)
        # the script as written (its policy, jit_compile, steps per call), now known: every lever measures a
        # change from it (trainer_backend/as_written.py)
        rung.settings = rung.settings.resolved(ran.to_dict() if ran is not None else None)
        self._index(rung.settings, rung.summary, rung.name)
        self._decisions.set_baseline(rung)
        self._report_end(rung)
        written = as_written_text(rung.summary.as_written)
        if written:
            self.say(f"[{rung.name[:2]}] baseline: the script as written: {written}")
        note, needed = too_short(rung.summary, settings.steps, self.opts.speed_rule(), rung.settings.calls,
                                 paired=self.trials_pair(settings))
        if note:  # the trials' first pairs follow the baseline's length
            self.say(f"[{rung.name[:2]}] baseline: {note}" + (f" (--steps {needed})" if needed else ""))

    # ------------------------------------------------------------ a lever's stage

    def _close_before(self, lever: Lever | None) -> None:
        """Record the skips of the stages before `lever` (None: all) that never began (the wizard's user went
        past them), at the place `tfturbo tune` records them."""
        for earlier in self.opts.selected():
            if lever is not None and earlier.order >= lever.order:
                break
            if earlier.name not in self._visited and not earlier.confirms:
                self._visited.add(earlier.name)
                for c in self._decisions.candidates(earlier):
                    if c.skipped_reason is not None:
                        self._skip(c)
        if lever is not None:
            self._visited.add(lever.name)

    def pending(self, lever: Lever | str) -> list[Candidate]:
        """What the lever would measure next (its follow-up once it measured something), skips included."""
        lever = levers.lever(lever) if isinstance(lever, str) else lever
        if self.decisions is None or self.decisions.best is None:
            return []
        measured = {r.name[3:] for r in self.decisions.rungs if r.kind == lever.rung_kind}  # NN-slug
        follow = lever.follow_up(self.decisions) if measured else []
        return follow or [c for c in lever.candidates(self.decisions)
                          if c.skipped_reason is not None or c.slug not in measured]

    def _lever(self, lever: Lever, chosen: list[Candidate] | None, follow: bool) -> Flow:
        pending = chosen if chosen is not None else self._decisions.candidates(lever)
        while pending:  # a search (the batch size) asks for its next candidate once the last is judged
            for candidate in pending:
                if candidate.skipped_reason is not None:
                    self._skip(candidate)
                    continue
                yield from self._trial(candidate, lever)
                if self._stop:
                    return
            pending = self._decisions.follow_up(lever) if follow else []
        if follow or chosen is None:
            yield from lever.after_stage(self)

    def _skip(self, candidate: Candidate) -> None:
        assert candidate.skipped_reason is not None, "a candidate with nothing to measure"
        rung = self.study.add_skipped(candidate.kind, candidate.slug, candidate.settings, candidate.skipped_reason,
                                      candidate.reference.name)
        self.say(f"[{rung.name[:2]}] {candidate.kind.replace('_', ' ')} — {candidate.skipped_reason}")

    def _trial(self, candidate: Candidate, lever: Lever) -> Flow:
        reference = self._decisions.reference_for(candidate, lever)
        baseline = self.baseline
        assert baseline is not None, "the baseline is measured first"
        rung = self._new_rung(candidate.kind, candidate.slug, candidate.settings, compared_with=reference.name)
        o = self.opts
        trial = self.trial = self.trials[rung.name] = make_trial(candidate.settings, reference, rung.name,
                                                                 baseline, self.study.path, o,
                                                                 self.share_process, profiled=self.profiled,
                                                                 accelerator=self.on_accelerator,
                                                                 finished=self.finished, keeps=not lever.confirms,
                                                                 recorded=self.study.run_roles())
        recorded = self._recorded_rung(rung.name)
        if recorded is not None and recorded.decision is not None and recorded.decision.rule is not None:
            trial.tolerance = recorded.decision.rule  # judged again under another rule: replayed as it was
            trial.way_forward = recorded.decision.way_forward or trial.way_forward
        if recorded is not None:  # its trainings of "train more seeds" (NN-slug.b0, .b-1, ...) are replayed too
            trial.more_seeds = sum(1 for n in recorded.replicates if (role := recorded.role(n)).arm == B and role.seed)
        self.say(f"[{rung.name[:2]}] {candidate.kind.replace('_', ' ')}: {candidate.settings.label()} against "
                 f"{trial.label_a} — {trial.plan().text()}")
        yield from self._measure(trial, rung, lever, recorded)
        self._index_runs(trial)
        verdict = trial.verdict()
        self._notes[rung.name] = candidate.note
        finish_rung(rung, trial, verdict, candidate.note)
        self._decisions.conclude(rung, verdict, lever)
        self.trial = None
        self._report_end(rung)
        return rung

    def _measure(self, trial: Trial, rung: Rung, lever: Lever, recorded: Rung | None = None) -> Flow:
        """The trial's runs until it is decided or stopped. A decided `recorded` rung (a continued study) is replayed
        from exactly the runs its trial recorded: a trial the user stopped (Esc) ends where it ended, so its
        verdict comes back as it was and nothing is measured again. A run the user stopped half-way is not one of
        the trial's runs: its folder goes, and the trial is judged on its complete pairs."""
        replayed = set(recorded.replicates) if recorded is not None and recorded.decision is not None else None
        while (planned := trial.next_run()) is not None:
            names = [run.name for run in planned.runs] if isinstance(planned, PlannedPair) else [planned.name]
            if replayed is not None and not replayed.issuperset(names):
                trial.stop()  # the recorded trial ended here (stopped by the user): the same verdict
                self.stopped.add(rung.name)
                break
            self._replayed.update(names if replayed is not None else [])
            if isinstance(planned, PlannedPair):
                self.say(f"     {planned.first.name} + {planned.second.name}: {planned.text()} — "
                         f"{trial.progress_text()}")
                result, run_dir = yield from self._run_pair(planned, rung, lever.name)
            else:
                what = f"speed only, {planned.settings.steps} steps" if planned.settings.speed_only else \
                    f"{planned.settings.steps} steps"
                self.say(f"     {planned.name}: {planned.settings.label()} ({what}) — {trial.progress_text()}")
                result = yield from self._run(planned, rung, lever.name)
                run_dir = self.study.path / RUNS_DIR / planned.name
            if rung.name in self.stopped and cancelled(result):  # Esc: half a pair measures nothing
                for folder in run_dir if isinstance(run_dir, (list, tuple)) else [run_dir]:
                    shutil.rmtree(folder, ignore_errors=True)
                break
            trial.record(planned, result, run_dir, handed_back=set(names) <= set(self.reused))
            record_runs(rung, trial)
            self.study.save()

    def continue_refused(self, name: str) -> UserError | None:
        """Why the trial of rung `name` cannot go on now (None: it can): the user stopped it, it is the last judged
        rung, and no other trial is being measured."""
        if name not in self.stopped:
            return UserError(f"{name}'s trial was not stopped", "nothing to continue")
        return self.rejudge_refused(name)

    def continue_trial(self, name: str, pairs: int | None = None) -> None:
        """Plan the rest of a trial the user stopped (the wizard's "run 1 more pair"): the same trial goes on from
        its complete pairs under its own rule — `pairs` more of them, then it stops again (None: until decided) —
        then is judged again; the best configuration follows the new verdict."""
        refused = self.continue_refused(name)
        if refused is not None:
            raise refused
        self._start(self._continue(name, pairs))

    def train_more_seeds(self, name: str) -> None:
        """The way forward "train more seeds" of the last judged rung (the wizard's button): its trial trains B
        and the accuracy reference from SEED_REPLICATES further seeds each (`Trial.more_seeds`), then is judged
        again on every training, recorded as the rung's `way_forward` "seeds"; the best configuration follows the
        new verdict. For an interval the trainings' noise dominates (`WayForward.seeds`): more validation examples
        would not narrow it, more trainings of each configuration do."""
        refused = self.rejudge_refused(name)
        if refused is not None:
            raise refused
        if name in self.stopped:
            raise UserError(f"{name}'s trial was stopped before its pairs were done", "continue it first")
        trial = self.trials[name]
        trial.more_seeds += SEED_REPLICATES
        trial.way_forward = "seeds"
        self._start(self._continue(name))

    def _continue(self, name: str, pairs: int | None = None) -> Flow:
        trial, rung = self.trials[name], self._decisions.rungs[-1]
        lever = self._lever_of(rung)
        assert lever is not None, "a rung of this session's trials: its lever is this tfturbo's"
        self.stopped.discard(name)
        trial.resume(pairs)
        self.trial = trial
        yield from self._measure(trial, rung, lever)
        if trial.stopped:  # the pairs asked for are measured, the verdict still short: it may go on again
            self.stopped.add(name)
        self._index_runs(trial)
        verdict = trial.verdict()
        finish_rung(rung, trial, verdict, self._notes.get(name, ""))
        self._decisions.reconclude(rung, verdict, lever)
        self.trial = None
        self._report_end(rung)

    def _recorded_rung(self, name: str) -> Rung | None:
        return next((r for r in self.recorded.rungs if r.name == name), None) if self.recorded is not None else None

    def rejudge(self, name: str, rule: Tolerance, way: str) -> TrialVerdict:
        """Judge the last measured rung's trial again under another accuracy `rule`, from the runs it measured
        (no new run): the way forward `way` ("loss", "tolerance"; "metric" undoes "loss") the user took after
        an inconclusive accuracy verdict. The new verdict says which rule judged it and why, is recorded in
        study.yaml (the rung's `rule` and `way_forward`, and the study's options: every later trial, the
        confirmation's included, judges by it), and the best configuration follows it."""
        refused = self.rejudge_refused(name)
        if refused is not None:
            raise refused
        trial, rung = self.trials[name], self._decisions.rungs[-1]
        trial.tolerance, trial.way_forward = rule, way
        # the rule the user chose is the study's from now on (issue 39): the confirmation judges by it, study.yaml
        # records it, the report states it; "metric" undoes "loss"
        self.opts.tolerance = rule
        self.study.options = self.opts.to_dict()
        verdict = trial.verdict()
        name_rule(verdict)
        lever = self._lever_of(rung)
        assert lever is not None, "a rung measured in this session: its lever is this tfturbo's"
        self._decisions.reconclude(rung, verdict, lever)
        self._report_end(rung)
        return verdict

    def rejudge_refused(self, name: str) -> UserError | None:
        """Why rung `name` cannot be judged again now (None: it can): it has a trial and a verdict, no trial is
        being measured, and it is the last judged rung (later rungs were measured against what it chose)."""
        rung = next((r for r in self.study.rungs if r.name == name), None)
        if name not in self.trials or rung is None or rung.decision is None:
            return UserError(f"{name} has no trial to judge again", "measure it first")
        if self.trial is not None:
            return UserError("a trial is being measured", "wait for it to end, then judge again")
        if self.decisions is None or not self.decisions.rungs or self.decisions.rungs[-1] is not rung:
            return UserError(f"{name} is not the last measured rung: later rungs were measured against the "
                             "configuration its verdict chose", "judge it again in a new study (--judge-on, "
                             "--accuracy-tolerance), or measure it again")
        return None

    def _new_rung(self, kind: str, slug: str, settings: RunSettings, compared_with: str | None = None) -> Rung:
        name = self.study.next_name(slug)
        rung = Rung(name, kind, settings, f"{RUNS_DIR}/{name}", compared_with=compared_with)
        self.study.rungs.append(rung)
        self.study.save()
        return rung

    def _run(self, planned: PlannedRun, rung: Rung, stage: str) -> Flow:
        """One run's summary: re-used from runs/ when a resumed study finished it, else measured."""
        run_dir = self.study.path / RUNS_DIR / planned.name
        reused = self._finished_run(run_dir)
        if reused is not None:
            self.reused.append(planned.name)
            return reused
        if run_dir.exists():  # a run that never finished (killed): measured again from the start
            shutil.rmtree(run_dir)
        outcome = yield from self._ask(Action("run", run_argv(planned.settings, str(run_dir)), stage, planned, rung,
                                              run_dir))
        return summary_of(outcome.document, outcome.status, outcome.error, run_dir, planned)

    def _run_pair(self, pair: PlannedPair, rung: Rung, stage: str) -> Flow:
        """A paired replicate's two summaries and run directories: the summaries re-used when a resumed study
        finished both runs, else measured (both folders cleared first: half a pair is measured again as a whole)."""
        argv, run_dirs = pair_command(pair, self.study.path / RUNS_DIR)
        reused = [self._finished_run(d) for d in run_dirs]
        if all(r is not None for r in reused):
            self.reused += [run.name for run in pair.runs]
            return reused, run_dirs
        for run_dir in run_dirs:
            if run_dir.exists():
                shutil.rmtree(run_dir)
        outcome = yield from self._ask(Action("run-pair", argv, stage, pair, rung, run_dirs[0]))
        return pair_summaries(outcome.document, outcome.status, outcome.error, run_dirs, pair), run_dirs

    def _finished_run(self, run_dir: Path) -> RunSummary | None:
        if self.recorded is None or not run_dir.is_dir():
            return None
        found = load_run(run_dir).summary
        if found is not None and run_dir.name in self._replayed:  # a decided rung's run, as its verdict saw it
            return found
        return found if found is not None and found.status in FINISHED_RUN else None

    def _index_runs(self, trial: Trial) -> None:
        """A trial's own completed full-length runs into `finished`, for later trials to re-use."""
        for run in trial.own_runs():
            self._index(run.planned.settings, run.summary, run.planned.name)

    def _index(self, settings: RunSettings, found: RunSummary | None, name: str) -> None:
        """Keep a completed full-length run in `finished` (a speed-only run trains no full length, validates
        nothing): a later trial's reference run that would train the same way takes it — the profiled one of
        two such runs, so the run a trial names as its reference's is where that configuration's profile is.
        A run with the profiler window is its configuration's profile (`profiled`) unless one was taken before."""
        if not found or found.status != protocol.RunStatus.COMPLETED or settings.speed_only:
            return
        batch = found.settings.batch_size if found.settings else None
        with_profile = settings.profile != NO_PROFILE
        if with_profile:
            self.profiled.setdefault(configuration_key(settings, batch), name)
        key = training_key(settings, batch)
        held = self.finished.get(key)
        if held is None or with_profile or held.name not in self.profiled.values():
            self.finished[key] = FinishedRun(name, found, self.study.path / RUNS_DIR / name)

    def _report_end(self, rung: Rung) -> None:
        d, s = rung.decision, rung.summary or RunSummary(status="crashed")
        rate = s.samples_per_s
        rate_text = f"{rate:,.0f} samples/s; " if rate else ""
        if rung.kind == RungKind.BASELINE:
            self.say(f"[{rung.name[:2]}] baseline: {s.status}; {rate_text}" + (d.reason if d else ""))
        elif d is not None and (d.failed or d.speed.verdict == Verdict.NOT_APPLIED):
            self.say(f"[{rung.name[:2]}] {rung.kind.replace('_', ' ')}: {d.reason}")
        elif d is not None:
            self.say(f"[{rung.name[:2]}] {rung.kind.replace('_', ' ')}: {'KEPT' if d.kept else 'not kept'} — "
                     f"speed {d.speed.text()} ({d.speed.verdict}); accuracy {d.accuracy.text()} "
                     f"({d.accuracy.verdict}) — {d.reason}")
            for line in d.accuracy.output_lines():  # a model with several outputs: each one judged
                self.say(f"     output {line}")
        self.study.save()

    # ------------------------------------------------------------ the end

    def _recommend(self) -> bool:
        """The recommendation: the best kept rung, as the user would train with it (False: there is none)."""
        study, base, best = self.study, self.study.baseline, self.best
        if base is None or not base.kept or best is None:
            return False
        study.recommended = measurement_only(best.settings)
        study.recommended_rung = best.name
        return True

    def _recommended(self) -> tuple[Rung, RunSettings]:
        """The baseline and the recommendation, once `_recommend` made one (a patch exists only then)."""
        base, recommended = self.study.baseline, self.study.recommended
        assert base is not None and recommended is not None, "a patch is made for a recommendation (_recommend)"
        return base, recommended

    def patch(self) -> Patch | None:
        """The recommendation's patch of the workload's file (None: no recommendation); made again only when the
        recommendation, the findings or the file changed (reading a script takes a second or two)."""
        if not self._recommend():
            return None
        base, recommended = self._recommended()
        args = (self.study.workload, recommended, measurement_only(base.settings), self.study.findings(),
                base.summary)
        key = repr((args[:4], base.summary.optimizer if base.summary else None,
                    base.summary.workload if base.summary else None,
                    _stamp(target_file(self.study.workload, base.summary))))
        if self._patch is None or self._patch[0] != key:
            self._patch = (key, recommended_patch(*args))
        return self._patch[1]

    def _check_patch(self) -> Flow:
        """Measure the patched copy as written (STUDY_DIR/patched/NAME): one short run, re-used when it measured
        this same patched text (a resumed study). Nothing to run when the patch changes nothing."""
        if self.study.status not in (StudyStatus.RUNNING, StudyStatus.COMPLETED, StudyStatus.STOPPED_INPUT_BOUND):
            return
        patch = self.patch()
        if patch is None or not patch.diff():
            return
        path, recommended = self.study.path, self._recommended()[1]
        if patch_check.reusable(path, patch.name, patch.patched) is not None:
            self.say("patch: the patched copy was measured before; its check is re-used")
            return
        ChangesPatch(recommended.label(), patch).write(path)  # the copy the run measures
        run_dir = patch_check.run_dir(path)
        if run_dir.exists():
            shutil.rmtree(run_dir)
        self.say(f"patch: {counted(len(patch.placed), 'change')} placed in {patch.name}"
                 + (f", {len(patch.unplaced)} left to you" if patch.unplaced else "")
                 + f"; measuring the patched copy as written ({patch_check.check_steps(recommended)} "
                   f"steps, {patch_check.PATCHED_DIR}/{patch.name})")
        outcome = yield from self._ask(Action(
            "run", patch_check.check_argv(patch_check.copy_path(path, patch.name), run_dir, recommended),
            PATCH, run_dir=run_dir, python_path=[str(Path(patch.path).parent)]))
        error = outcome.error or {}
        self._checked = (patch.patched, RunSummary.from_dict(outcome.document) if outcome.document else RunSummary(
            status=outcome.status, error=protocol.ErrorDoc(message=error["message"]) if error.get("message") else None))
        checked = self.changes_patch(patch)
        assert checked is not None and checked.check is not None, "a patch with a diff says what its check found"
        self.say("patch: " + checked.check.line())

    def changes_patch(self, patch: Patch | None = None) -> ChangesPatch | None:
        """The code to apply with what its check found (the check run on disk for this patched text, else why
        it has not run)."""
        patch = patch if patch is not None else self.patch()
        if patch is None:
            return None
        base, rec = self._recommended()
        doc = ChangesPatch(rec.label(), patch, kept=measurement_only(base.settings).label())
        if doc.has_diff():
            summary_ = self._checked[1] if self._checked is not None and self._checked[0] == patch.patched else \
                patch_check.reusable(self.study.path, patch.name, patch.patched)
            run = f"{patch_check.PATCHED_DIR}/{patch_check.CHECK_RUN}"
            if summary_ is None:
                ended = self.study.status in (StudyStatus.INTERRUPTED, StudyStatus.FAILED)
                doc.check = patch_check.Check(patch_check.NOT_CHECKED, "the study ended before the patched script "
                                              "was run" if ended else "the patched script has not been run yet")
            else:
                factor = 1.0
                if base.settings.lr_scale:
                    factor = rec.lr_scale / base.settings.lr_scale
                doc.check = patch_check.compare(summary_, rec, factor, base.summary, run)
        return doc

    def finish(self) -> Study:
        """The recommendation (the best kept rung, as the user would train with it), its code to apply
        (changes.patch, with what its check found); the stages the user went past are recorded as skipped
        first."""
        study = self.study
        if study.status == StudyStatus.RUNNING:
            if self.best is not None:
                self._close_before(None)
            study.status = StudyStatus.COMPLETED
        doc = self.changes_patch()
        if doc is not None:
            study.snippet = doc.text(study.path)
            study.patch = doc.to_dict()
            doc.write(study.path)
        study.save()
        return study


def _stamp(path: Path | None) -> tuple[str, float, int] | None:
    """A file as it is now (its path, modification time and size): the patch is made again when it changed."""
    try:
        stat = path.stat() if path is not None else None
    except OSError:
        return None
    return (str(path), stat.st_mtime, stat.st_size) if stat is not None else None


def error_text(outcome: Outcome) -> str:
    err = outcome.error
    if err:
        return str(err.get("message") or err.get("kind") or "error")
    return f"the backend ended without a result ({outcome.status})"

