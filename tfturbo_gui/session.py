"""The wizard's state: the workload, the study folder, and the ladder of measured rungs.

The wizard makes the same study as `tfturbo tune`: the same `runs/NN-name/`
folders, the same run settings (`TuneOptions`), the same trials and verdicts
(`tfturbo.trials`: a rung is an A/B trial against the best configuration kept
so far, judged by `TuningPolicy.conclude`) and the same `study.yaml`
(`tune.study.Study`), so File → Open, `tfturbo compare` and `tfturbo report`
read either. Unlike the unattended ladder, the user chooses when each rung
runs, with which fixes, and may repeat one. No Qt here.
"""

from __future__ import annotations

import re
import shlex
from datetime import datetime
from pathlib import Path
from typing import Any

from tfturbo import protocol, remote
from tfturbo import summary as summ
from tfturbo.backend_client import log_path as user_log_path
from tfturbo.cli_args import run_argv, script_argv
from tfturbo.errors import UserError
from tfturbo.run_summary import RunSummary
from tfturbo.runfiles import BACKEND_LOG, RUNS_DIR, STUDY_YAML
from tfturbo.scaling import SCALING_DIR, ScalingMeasurement, ScalingResult
from tfturbo.settings import DEFAULT_SEED, DEFAULT_STEPS, NO_PROFILE, RunSettings
from tfturbo.trials.policy import STEPS_PER_EXECUTION, Candidate, TuningPolicy, sixteen_bit_policies
from tfturbo.trials.speed import SpeedRule
from tfturbo.trials.trial import PlannedRun, Trial
from tfturbo.trials.verdict import TrialVerdict
from tfturbo.tune.apply_snippet import snippet
from tfturbo.tune.ladder import TuneOptions, baseline_verdict, finish_rung, make_trial, prepare_study_dir
from tfturbo.tune.study import Rung, RungKind, Study, StudyStatus, measurement_only

from .run_data import RunData

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


def audit_argv(workload: str, policy: str = "float32", jit: bool = False, batch_size: int | None = None,
               script_args: list[str] = ()) -> list[str]:
    """`audit` arguments (the shared backend parser's); a script's options follow `--`."""
    argv = [workload, "--policy", policy, "--jit" if jit else "--no-jit"]
    return argv + (["--batch-size", str(batch_size)] if batch_size else []) + script_argv(list(script_args))


def probe_argv(workload: str, seed: int = DEFAULT_SEED, batch_size: int | None = None,
               script_args: list[str] = ()) -> list[str]:
    """`probe-input` arguments (the shared backend parser's); a script's options follow `--`."""
    argv = [workload, "--seed", str(seed)]
    return argv + (["--batch-size", str(batch_size)] if batch_size else []) + script_argv(list(script_args))


def scaling_offer(environment: dict[str, Any] | None) -> tuple[list[int], str]:
    """(replica counts, '') to measure scaling over this machine's GPUs (MirroredStrategy), or ([], why not).

    Only where there are devices to scale over: logical CPU devices share the
    same cores, so on a CPU the measurement shows contention, not scaling.
    """
    devices = [d for d in (environment or {}).get("devices") or [] if isinstance(d, dict)]
    gpus = sum(1 for d in devices if d.get("type") == "GPU")
    if gpus >= 2:
        counts = [1]
        while counts[-1] * 2 <= gpus:
            counts.append(counts[-1] * 2)
        return counts + ([gpus] if counts[-1] != gpus else []), ""
    if environment is None:
        return [], "the hardware report has not arrived yet"
    what = "one GPU" if gpus == 1 else "only the CPU (replicas would share its cores)"
    return [], (f"this machine has {what}: scaling needs two or more GPUs. On a machine with several, measure "
                "it here or in a terminal with: tfturbo scaling WORKLOAD --replicas 1,2 --out STUDY_DIR")


class WizardSession:
    """What the pages share. A rung is added when its run starts and decided when it ends."""

    def __init__(self, workload: str = "", steps: int = DEFAULT_STEPS, seed: int = DEFAULT_SEED):
        self.workload = workload
        self.script_args: list[str] = []  # a training script's own options, given to every command (after `--`)
        self.steps = steps
        self.seed = seed
        # replicate pairs per trial (the wizard's "Measurement" setting; defaults as `tfturbo tune`)
        self.min_replicates, self.max_replicates = SpeedRule.min_pairs, SpeedRule.max_pairs
        self.steady_s = SpeedRule.steady_s  # steady seconds each speed-only replicate aims at (0: none)
        self.study_path: Path | None = None
        self.study: Study | None = None
        self.environment: dict[str, Any] | None = None
        self.baseline: Rung | None = None
        self.policy: TuningPolicy | None = None  # made when the baseline is measured
        self.trials: dict[int, Trial] = {}  # id(rung) -> its trial
        self.run_data: dict[int, RunData] = {}  # id(rung) -> live data of its own run (B's first replicate)
        self.scaling: ScalingMeasurement | None = None  # the Batch size page's scaling measurement
        self.host: remote.RemoteHost | None = None  # "Run on": None is this machine; else every command runs there

    # ------------------------------------------------------------ study

    def options(self) -> TuneOptions:
        if self.study_path is None:  # never the current directory (that is often the code checkout)
            self.study_path = default_study_dir(self.workload)
        return TuneOptions(workload=self.workload, out=self.study_path, steps=self.steps, seed=self.seed,
                           min_replicates=self.min_replicates, max_replicates=self.max_replicates,
                           steady_s=self.steady_s, script_args=list(self.script_args))

    def ensure_study(self) -> Study:
        """Create the study folder on the first run (the user may change it until then)."""
        if self.study is None:
            if self.study_path is None:
                self.study_path = default_study_dir(self.workload)
            prepare_study_dir(self.study_path)
            self.study = Study(self.study_path, self.workload, {**self.options().to_dict(), "tool": "tfturbo gui"})
            self.study.environment = self.environment
            self.study.save()
        return self.study

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
        self.study.save()
        for leftover in (old / STUDY_YAML, old / RUNS_DIR, old):
            try:
                leftover.unlink() if leftover.is_file() else leftover.rmdir()
            except OSError:
                pass  # something of the user's is there: leave it
        self.study_path = path

    def interrupt(self) -> None:
        """The window closes before the study finished: study.yaml must not keep saying `running`."""
        if self.study is not None and self.study.status == StudyStatus.RUNNING:
            self.study.status = StudyStatus.INTERRUPTED
            self.study.message = "the wizard was closed before the study finished"
            self.study.save()

    def log_path(self) -> str:
        """Where backend stderr goes: the study's backend.log (as `tfturbo tune`), else the user's log."""
        return str(self.study.path / BACKEND_LOG) if self.study is not None else user_log_path()

    def record_audit(self, findings: list[dict[str, Any]]) -> None:
        study = self.ensure_study()
        seen = {(f.get("code"), f.get("where"), f.get("message")) for f in study.audit}
        study.audit += [f for f in findings if (f.get("code"), f.get("where"), f.get("message")) not in seen]
        study.save()

    def record_probe(self, document: dict[str, Any] | None) -> None:
        study = self.ensure_study()
        study.probe = document
        study.save()

    # ------------------------------------------------------------ rungs

    @property
    def best(self) -> Rung | None:
        """The best configuration kept so far (the baseline until a rung is kept)."""
        return self.policy.best if self.policy is not None else self.baseline

    def recommended_policies(self) -> tuple[list[str], str]:
        recommended = (self.environment or {}).get("recommended_policy")
        return sixteen_bit_policies(recommended, both=True)

    def baseline_settings(self) -> RunSettings:
        return self.options().base_settings()

    def common_settings(self) -> RunSettings:
        """The baseline's settings for later rungs: its measured batch size, no profiler window."""
        base = self.baseline
        assert base is not None and base.summary is not None, "the baseline has not been measured"
        batch = summ.batch_size(base.summary) if (base.summary.get("settings") or {}).get("batch_size") else None
        return base.settings.with_(batch_size=batch or base.settings.batch_size, profile=NO_PROFILE)

    def start_rung(self, kind: str, slug: str, settings: RunSettings) -> tuple[Rung, list[str]]:
        """A new single-run rung (the baseline) and the `run` arguments that measure it into runs/NN-slug."""
        study = self.ensure_study()
        name = study.next_name(slug)
        rung = Rung(name, kind, settings, f"{RUNS_DIR}/{name}", replicates=[name])
        study.rungs.append(rung)
        study.save()
        return rung, run_argv(settings, str(study.path / rung.run))

    def finish_rung(self, rung: Rung, data: RunData) -> None:
        """A single-run rung ended: a completed baseline becomes the reference of every later trial."""
        self.run_data[id(rung)] = data
        rung.summary = self._summary(data, rung.settings)
        if rung.kind == RungKind.BASELINE:
            completed = rung.summary.get("status") == protocol.RunStatus.COMPLETED
            rung.decision = baseline_verdict(rung.summary) if completed else None
            if completed:
                if (rung.summary.get("settings") or {}).get("batch_size"):
                    rung.settings = rung.settings.with_(batch_size=summ.batch_size(rung.summary))
                self.baseline = rung
                policies, why = self.recommended_policies()
                self.policy = TuningPolicy(self.ensure_study().audit, policies, why)
                self.policy.set_baseline(rung)
        self.ensure_study().save()

    # ------------------------------------------------------------ trials

    def start_trial(self, kind: str, slug: str, settings: RunSettings, note: str = "") -> Rung:
        """A new rung measured as a trial: `settings` against the best configuration kept so far
        (the baseline for a confirmation), its accuracy against the baseline run."""
        assert self.policy is not None and self.baseline is not None, "the baseline has not been measured"
        study = self.ensure_study()
        candidate = Candidate(kind, slug, settings, note, None)
        candidate.reference = reference = self.policy.reference_for(candidate)
        name = study.next_name(slug)
        rung = Rung(name, kind, settings, f"{RUNS_DIR}/{name}", compared_with=reference.name)
        self.trials[id(rung)] = make_trial(candidate, name, self.baseline, study.path, self.options())
        study.rungs.append(rung)
        study.save()
        return rung

    def next_run(self, rung: Rung) -> tuple[PlannedRun, list[str]] | None:
        """The trial's next run and its `run` arguments, or None when the trial is decided."""
        planned = self.trials[id(rung)].next_run()
        if planned is None:
            return None
        return planned, run_argv(planned.settings, str(self.ensure_study().path / RUNS_DIR / planned.name))

    def record_run(self, rung: Rung, planned: PlannedRun, data: RunData) -> None:
        trial = self.trials[id(rung)]
        trial.record(planned, self._summary(data, planned.settings), self.ensure_study().path / RUNS_DIR / planned.name)
        if planned.arm == "b" and planned.replicate == 1:
            self.run_data[id(rung)] = data
        rung.replicates = [r.planned.name for r in trial.runs]
        self.ensure_study().save()

    def stop_trial(self, rung: Rung) -> None:
        """The user stopped: judge what the complete pairs measured."""
        self.trials[id(rung)].stop()

    def finish_trial(self, rung: Rung) -> TrialVerdict:
        """Judge the trial (the same `TuningPolicy.conclude` as `tfturbo tune`) and save study.yaml."""
        trial = self.trials[id(rung)]
        verdict = trial.verdict()
        finish_rung(rung, trial, verdict, "")
        self.policy.conclude(rung, verdict)
        self.ensure_study().save()
        return verdict

    def trial_of(self, rung: Rung | None) -> Trial | None:
        return self.trials.get(id(rung)) if rung is not None else None

    @staticmethod
    def _summary(data: RunData, settings: RunSettings) -> dict[str, Any]:
        """The run's summary, or what its events measured, with its error."""
        doc = data.summary or RunSummary(status=data.status or protocol.RunStatus.CRASHED,
                                         settings=settings.to_dict()).to_dict()
        if data.error and not doc.get("error"):
            doc = {**doc, "error": {k: data.error.get(k) for k in ("kind", "message", "fix")}}
        return doc

    # ------------------------------------------------------------ scaling (STUDY/scaling/, as `tfturbo scaling`)

    def start_scaling(self, counts: list[int]) -> None:
        """Measure the best configuration so far on 1…N GPUs, each N an A/B trial against one replica."""
        assert self.best is not None, "the baseline has not been measured"
        self.scaling = ScalingMeasurement(self.best.settings.with_(profile=NO_PROFILE), "mirrored", counts,
                                          SpeedRule(self.min_replicates, self.max_replicates))

    def next_scaling_run(self) -> tuple[PlannedRun, list[str]] | None:
        """The measurement's next run and its `run` arguments (into STUDY/scaling/runs/), or None when done."""
        planned = self.scaling.next_run()
        if planned is None:
            return None
        return planned, run_argv(planned.settings, str(self.scaling_path() / RUNS_DIR / planned.name))

    def record_scaling_run(self, planned: PlannedRun, data: RunData) -> None:
        self.scaling.record(planned, self._summary(data, planned.settings), self.scaling_path() / RUNS_DIR / planned.name)

    def finish_scaling(self) -> ScalingResult:
        """Judge what was measured and write scaling.json, where the report finds it."""
        result = self.scaling.result()
        result.save(self.scaling_path())
        return result

    def scaling_path(self) -> Path:
        return self.ensure_study().path / SCALING_DIR

    def data_of(self, rung: Rung | None) -> RunData | None:
        return self.run_data.get(id(rung)) if rung is not None else None

    def rung_path(self, rung: Rung) -> Path:
        return self.ensure_study().path / str(rung.run)

    def _record_levers_not_offered(self) -> None:
        """steps_per_execution, when the policy never offered it, goes into the ladder as skipped with the
        policy's reason, as `tfturbo tune` records it (the XLA page shows the same reason)."""
        study = self.study
        if self.policy is None or study is None or any(r.kind == STEPS_PER_EXECUTION for r in study.rungs):
            return
        candidate = self.policy.candidates(STEPS_PER_EXECUTION)[0]
        if candidate.skipped_reason is not None:
            study.add_skipped(candidate.kind, candidate.slug, candidate.settings, candidate.skipped_reason,
                              candidate.reference.name)

    def finish_study(self) -> Study:
        """The recommendation: the best kept rung, as the user would train with it."""
        study = self.ensure_study()
        self._record_levers_not_offered()
        best = self.best
        if self.baseline is not None and best is not None:
            study.recommended = measurement_only(best.settings)
            study.recommended_rung = best.name
            study.snippet = snippet(study.recommended, measurement_only(self.baseline.settings), study.findings())
        study.status = StudyStatus.COMPLETED
        study.save()
        return study
