"""The checklist, unattended: environment, audit, input probe, baseline, then the trial ladder.

The baseline is one measured run (with the profiler window) in
STUDY_DIR/runs/01-baseline/. Every later rung is an A/B trial of the trial
engine (`tfturbo.trials`): its candidate (B, from `TuningPolicy`) against the
best configuration kept so far (A), replicated and interleaved, its accuracy
judged against the baseline's run. The runs of rung NN are
runs/NN-slug (B's first replicate, the rung's own run) and runs/NN-slug.a1,
.b2, … (the others). The order of stages:

  input pipeline, only when the probe found the job input-bound: the automatic
    tf.data fixes, then the probe again with them on; the study goes on only
    when they were kept and the job is no longer input-bound
  mixed precision (the recommended 16-bit policy; both with both_policies)
  + XLA on the best kept configuration (and 16-bit + XLA when 16-bit lost only on speed)
  + steps_per_execution (a few N) when steps are short
  + a larger batch: doubling while kept, then one binary step, within the memory available
  confirmation: the recommendation against the baseline, side by side

The backend is reached only through `runner` (default `run_backend`), so the
flow can be tested on recorded documents without TensorFlow.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .. import findings as F
from .. import protocol, summary
from ..backend_client import BackendResult, run_backend
from ..cli_args import script_argv
from ..errors import OutputDirError, UserError
from ..runfiles import BACKEND_LOG, RUNS_DIR, STUDY_YAML, XLA_CACHE_DIR
from ..settings import DEFAULT_SEED, DEFAULT_STEPS, RunSettings
from ..trials.execute import backend_executor, fail_on_bad_input
from ..trials.policy import (CONFIRMATION, INPUT_PIPELINE, STAGES, Candidate,
                             TuningPolicy, sixteen_bit_policies)
from ..trials.speed import SpeedRule, samples_per_s
from ..trials.trial import PlannedRun, Trial, run_trial
from ..trials.verdict import NO_CHANGE, AccuracyVerdict, SpeedVerdict, Tolerance, TrialVerdict
from ..verdicts import ProbeVerdict
from .apply_snippet import snippet
from .batch import DEFAULT_MAX_SCALE
from .study import Rung, RungKind, Study, StudyStatus, measurement_only

Runner = Callable[..., BackendResult]


@dataclass
class TuneOptions:
    workload: str
    out: Path
    steps: int = DEFAULT_STEPS
    seed: int = DEFAULT_SEED
    batch_size: int | None = None
    val_every: int | None = None  # None: steps // 5
    val_examples: int = RunSettings.val_examples
    min_replicates: int = SpeedRule.min_pairs
    max_replicates: int = SpeedRule.max_pairs
    steady_s: float = SpeedRule.steady_s  # steady-state seconds each replicate aims at (0: full-length pairs only)
    policy: str | None = None  # the 16-bit policy to measure; None: the recommended one
    both_policies: bool = False
    auto_fix: bool = True  # apply the audit's automatic fixes (float32 head, drop_remainder) to the rungs
    max_batch_scale: float = DEFAULT_MAX_SCALE
    tolerance: Tolerance = field(default_factory=Tolerance)
    stages: tuple[str, ...] = STAGES  # the stages to measure (the confirmation always ends the study)
    script_args: list[str] = field(default_factory=list)  # a training script's own options (after `--`)

    def base_settings(self) -> RunSettings:
        plain = RunSettings(self.workload, steps=self.steps, seed=self.seed, batch_size=self.batch_size,
                            val_every=self.val_every, val_examples=self.val_examples,
                            script_args=list(self.script_args))
        return plain.with_(val_every=plain.effective_val_every())

    def speed_rule(self) -> SpeedRule:
        return SpeedRule(self.min_replicates, self.max_replicates, steady_s=self.steady_s)

    def to_dict(self) -> dict[str, Any]:
        return {"steps": self.steps, "seed": self.seed, "batch_size": self.batch_size,
                "val_every": self.base_settings().val_every, "val_examples": self.val_examples,
                "replicates": {"min": self.min_replicates, "max": self.max_replicates, "steady_s": self.steady_s},
                "policy": self.policy, "both_policies": self.both_policies,
                "auto_fix": self.auto_fix, "max_batch_scale": self.max_batch_scale, "script_args": self.script_args,
                "tolerance": self.tolerance.to_dict(), "stages": list(self.stages)}


def baseline_verdict(base: dict[str, Any]) -> TrialVerdict:
    """The baseline's own row: the reference every trial is measured against."""
    rate = samples_per_s(base)
    speed = SpeedVerdict(1.0, (1.0, 1.0), NO_CHANGE, 0, [], rate, rate)
    return TrialVerdict(speed, AccuracyVerdict(summary.primary_metric(base)[0] if summary.primary_metric(base)
                                               else None, 0.0, (0.0, 0.0), "within tolerance", checked=False),
                        True, f"reference: {RunSettings.from_dict(base.get('settings') or {}).label()}", [])


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


def rung_run_names(name: str) -> Callable[[str, int], str]:
    """Run directory names of a rung's trial: B's first replicate is the rung's own run."""
    return lambda arm, replicate: name if (arm == "b" and replicate == 1) else f"{name}.{arm}{replicate}"


def make_trial(candidate: Candidate, name: str, baseline: Rung, study_path: Path, options: TuneOptions) -> Trial:
    """The trial of one rung: the candidate against its reference, accuracy against the baseline run."""
    reference = candidate.reference
    return Trial(reference.settings, candidate.settings, options.speed_rule(), options.tolerance,
                 names=rung_run_names(name),
                 accuracy_reference=[(baseline.summary, study_path / str(baseline.run))],
                 label_a=reference.settings.label() if reference is not baseline else "the baseline",
                 label_b=candidate.settings.label(), xla_cache=str(study_path / XLA_CACHE_DIR))


def finish_rung(rung: Rung, trial: Trial, verdict: TrialVerdict, note: str) -> None:
    """What a rung keeps of its trial: B's first run as its own, every run's name, the verdict."""
    first_b = next((r for r in trial.runs if r.planned.arm == "b"), None)
    rung.summary = first_b.summary if first_b is not None else None
    rung.settings = first_b.planned.settings if first_b is not None else rung.settings
    rung.replicates = [r.planned.name for r in trial.runs]
    rung.run_seconds = trial.measured_seconds()
    if note:
        verdict.reason = f"{note}; {verdict.reason}"


class Ladder:
    """Runs one study. `say` gets one line per step (start and end of each rung)."""

    def __init__(self, options: TuneOptions, runner: Runner | None = None,
                 say: Callable[[str], None] = lambda line: None,
                 live: Callable[[dict[str, Any]], None] | None = None,
                 cancel: threading.Event | None = None):
        self.opts = options
        self.runner = runner or run_backend
        self.say = say
        self.live = live
        self.cancel = cancel or threading.Event()
        self.path = Path(options.out)
        self.study = Study(self.path, options.workload, options.to_dict())
        self._created_dir = False
        self.policy: TuningPolicy | None = None  # made once the environment is known
        self.base: Rung | None = None

    # ------------------------------------------------------------ backend calls

    def _call(self, command: str, argv: list[str], live: bool = False) -> BackendResult:
        return self.runner(command, argv, on_event=self.live if live else None,
                           stderr_path=str(self.path / BACKEND_LOG), cancel=self.cancel)

    def _remove_empty_study(self) -> None:
        for name in (BACKEND_LOG, STUDY_YAML):
            (self.path / name).unlink(missing_ok=True)
        try:
            (self.path / RUNS_DIR).rmdir()
            if self._created_dir:
                self.path.rmdir()
        except OSError:
            pass

    def _stopped(self) -> bool:
        if self.cancel.is_set():
            self.study.status = StudyStatus.INTERRUPTED
            self.study.message = "stopped by the user (Ctrl-C); the rungs measured so far are kept"
            return True
        return False

    # ------------------------------------------------------------ steps

    def run(self) -> Study:
        self._created_dir = prepare_study_dir(self.path)
        study = self.study
        try:
            self._steps()
        except UserError:  # the workload or arguments are wrong: nothing half-written stays behind
            self._remove_empty_study()
            raise
        except BaseException as e:  # a second Ctrl-C, or a bug: the study file still says what was decided
            study.status = StudyStatus.INTERRUPTED if isinstance(e, KeyboardInterrupt) else StudyStatus.FAILED
            study.message = "interrupted by the user" if isinstance(e, KeyboardInterrupt) else \
                f"internal error: {type(e).__name__}: {e}"
            self._finish()
            raise
        self._finish()
        return study

    def _steps(self) -> None:
        """The checklist in order; each step returns False when the study ends there."""
        for step in (self._environment, self._audit, self._probe, self._baseline):
            if not step() or self._stopped():
                return
        for kind in [k for k in STAGES if k in self.opts.stages or k == CONFIRMATION]:
            stage = self._input_pipeline if kind == INPUT_PIPELINE else self._stage
            if not stage(kind) or self._stopped():
                return

    def _environment(self) -> bool:
        self.say("environment: asking the backend for devices and the recommended policy")
        env = self._call("env", [])
        self.study.environment = doc = env.document
        if doc is None:
            self._failed("the backend could not report the environment: " + self._error_text(env))
            return False
        recommended = doc.get("recommended_policy")
        policies, reason = sixteen_bit_policies(recommended, self.opts.both_policies, self.opts.policy)
        available = (doc.get("memory") or {}).get("available_bytes")
        self.policy = TuningPolicy([], policies, reason, self.opts.auto_fix, self.opts.max_batch_scale,
                                   available if isinstance(available, (int, float)) else None)
        self.say(f"environment: {', '.join(self._device_names(doc)) or 'no device listed'}; "
                 f"recommended policy {recommended} ({doc.get('reason', '')})")
        return True

    def _audit(self) -> bool:
        """Static findings under the 16-bit policy and XLA the ladder will try (so their fixes apply)."""
        opts = self.opts
        argv = [opts.workload, "--policy", self.policy.policies[0], "--jit"]
        if opts.batch_size:
            argv += ["--batch-size", str(opts.batch_size)]
        audit = self._call("audit", argv + script_argv(opts.script_args))
        fail_on_bad_input(audit.error, "the audit")
        if audit.document is None:
            self._failed("the audit failed: " + self._error_text(audit))
            return False
        found = [f for f in audit.document.get("findings") or [] if isinstance(f, dict)]
        self.study.audit = self.policy.audit = found
        self.say(f"audit ({self.policy.policies[0]} + XLA): {len(found)} finding(s)"
                 + (f": {', '.join(F.codes_of(found))}" if found else ""))
        self.study.save()
        return True

    def _probe(self) -> bool:
        """No tuning of a job that is waiting on data: an input-bound verdict ends the study, unless the
        input_pipeline stage is to measure the automatic tf.data fixes first."""
        document = self.study.probe = self._run_probe([])
        verdict = document.get("verdict")
        self.policy.probed(verdict)
        if verdict == ProbeVerdict.INPUT_BOUND and INPUT_PIPELINE in self.opts.stages:
            self.say("input probe: the automatic tf.data fixes are measured first")
            return True
        return self._go_on_unless_input_bound()

    def _run_probe(self, extra: list[str]) -> dict[str, Any]:
        """The probe-input document (`extra`: more options, e.g. --input-fixes); a failed probe is recorded with
        its error and no verdict."""
        opts = self.opts
        argv = [opts.workload, "--seed", str(opts.seed), *extra]
        if opts.batch_size:
            argv += ["--batch-size", str(opts.batch_size)]
        probe = self._call("probe-input", argv + script_argv(opts.script_args))
        fail_on_bad_input(probe.error, "the input probe")
        label = "input probe" + (" with " + " ".join(extra) if extra else "")
        if probe.document is None:
            self.say(f"{label}: failed ({self._error_text(probe)}); continuing without its verdict")
            return {"verdict": None, "error": self._error_text(probe), "findings": []}
        band = probe.document.get("band")
        self.say(f"{label}: {str(probe.document.get('verdict')).replace('_', '-')}"
                 + (f" ({band} share of step time waiting on input)" if band else ""))
        return probe.document

    def _input_pipeline(self, kind: str) -> bool:
        """The automatic tf.data fixes as a measured rung, then the probe again with them on."""
        if not self._stage(kind) or self._stopped():
            return False
        if self.policy.needs_reprobe():
            self.study.probe_input_fixes = self._run_probe(["--input-fixes"])
        return self._go_on_unless_input_bound()

    def _go_on_unless_input_bound(self) -> bool:
        """Stop the study (STOPPED_INPUT_BOUND) when the policy says the job is still input-bound."""
        reason = self.policy.input_stop_reason(self.study.probe_input_fixes)
        if reason is None:
            return True
        self.study.status = StudyStatus.STOPPED_INPUT_BOUND
        self.study.message = reason
        return False

    def _baseline(self) -> bool:
        base = self.base = self._single_run(RungKind.BASELINE, RungKind.BASELINE, self.opts.base_settings())  # default profiler window
        status = (base.summary or {}).get("status", protocol.RunStatus.CRASHED)
        if status != protocol.RunStatus.COMPLETED:
            err = (base.summary or {}).get("error") or {}
            detail = f": {err['message']}" if isinstance(err, dict) and err.get("message") else ""
            base.decision = baseline_verdict(base.summary or {})
            base.decision.kept = False
            base.decision.reason = f"the baseline run ended as {status}{detail}"
            self._report_end(base)
            if not self._stopped():
                self._failed(f"the baseline run ended as {status}{detail}, so nothing can be compared with it; "
                             f"see {base.run}/{BACKEND_LOG}")
            return False
        base.decision = baseline_verdict(base.summary)
        if (base.summary.get("settings") or {}).get("batch_size"):  # the workload's default, now known
            base.settings = base.settings.with_(batch_size=summary.batch_size(base.summary))
        self.policy.set_baseline(base)
        self._report_end(base)
        return True

    def _stage(self, kind: str) -> bool:
        pending = self.policy.candidates(kind)
        while pending:  # a search (the batch size) asks for its next candidate once the last is judged
            for candidate in pending:
                if candidate.skipped_reason is not None:
                    self._skip(candidate)
                    continue
                self._trial(candidate)
                if self._stopped():
                    return False
            pending = self.policy.follow_up(kind)
        return True

    def _skip(self, candidate: Candidate) -> None:
        rung = self.study.add_skipped(candidate.kind, candidate.slug, candidate.settings, candidate.skipped_reason,
                                      candidate.reference.name)
        self.say(f"[{rung.name[:2]}] {candidate.kind.replace('_', ' ')} — {candidate.skipped_reason}")

    def _trial(self, candidate: Candidate) -> Rung:
        candidate.reference = self.policy.reference_for(candidate)
        name = self.study.next_name(candidate.slug)
        n = len(self.study.rungs) + 1
        rung = Rung(name, candidate.kind, candidate.settings, f"{RUNS_DIR}/{name}",
                    compared_with=candidate.reference.name)
        self.study.rungs.append(rung)
        trial = make_trial(candidate, name, self.base, self.path, self.opts)
        self.say(f"[{n:02d}] {candidate.kind.replace('_', ' ')}: {candidate.settings.label()} against "
                 f"{trial.label_a} — interleaved pairs: {trial.plan().text()}")

        def started(planned: PlannedRun, path: Path) -> None:
            what = f"speed only, {planned.settings.steps} steps" if planned.settings.speed_only else \
                f"{planned.settings.steps} steps"
            self.say(f"     {planned.name}: {planned.settings.label()} ({what}) — {trial.progress_text()}")

        execute = backend_executor(self.path / RUNS_DIR, self.runner, str(self.path / BACKEND_LOG), self.live,
                                   self.cancel, on_start=started)
        verdict = run_trial(trial, execute, cancelled=self.cancel.is_set)
        finish_rung(rung, trial, verdict, candidate.note)
        self.policy.conclude(rung, verdict)
        self._report_end(rung)
        return rung

    # ------------------------------------------------------------ one run

    def _single_run(self, slug: str, kind: str, settings: RunSettings) -> Rung:
        n = len(self.study.rungs) + 1
        name = self.study.next_name(slug)
        rung = Rung(name, kind, settings, f"{RUNS_DIR}/{name}")
        self.study.rungs.append(rung)
        self.say(f"[{n:02d}] {kind.replace('_', ' ')}: {settings.label()} — running {settings.steps} steps in {rung.run}")
        execute = backend_executor(self.path / RUNS_DIR, self.runner, str(self.path / BACKEND_LOG), self.live,
                                   self.cancel)
        rung.summary, _ = execute(PlannedRun("a", 1, settings, name))
        rung.replicates = [name]
        return rung

    def _report_end(self, rung: Rung) -> None:
        d = rung.decision
        s = rung.summary or {}
        rate = samples_per_s(s)
        rate_text = f"{rate:,.0f} samples/s; " if rate else ""
        if rung.kind == RungKind.BASELINE:
            self.say(f"[{rung.name[:2]}] baseline: {s.get('status', 'crashed')}; {rate_text}"
                     + (d.reason if d else ""))
        elif d is not None and d.failed:
            self.say(f"[{rung.name[:2]}] {rung.kind.replace('_', ' ')}: {d.reason}")
        elif d is not None:
            self.say(f"[{rung.name[:2]}] {rung.kind.replace('_', ' ')}: {'KEPT' if d.kept else 'not kept'} — "
                     f"speed {d.speed.text()} ({d.speed.verdict}); accuracy {d.accuracy.text()} "
                     f"({d.accuracy.verdict}) — {d.reason}")
        self.study.save()

    # ------------------------------------------------------------ end

    def _failed(self, message: str) -> None:
        self.study.status = StudyStatus.FAILED
        self.study.message = message
        self.say("study failed: " + message)

    def _finish(self) -> None:
        study = self.study
        if study.status == StudyStatus.RUNNING:
            study.status = StudyStatus.COMPLETED
        base = study.baseline
        best = self.policy.recommendation() if self.policy is not None else None
        if base is not None and base.kept and best is not None:
            study.recommended = measurement_only(best.settings)
            study.recommended_rung = best.name
            study.snippet = snippet(study.recommended, measurement_only(base.settings), study.findings())
        study.save()

    @staticmethod
    def _error_text(result: BackendResult) -> str:
        err = result.error
        if err:
            return str(err.get("message") or err.get("kind") or "error")
        return f"the backend ended without a result (exit {result.exit_code})"

    @staticmethod
    def _device_names(env: dict[str, Any]) -> list[str]:
        return [str(d.get("name") or d.get("type")) if isinstance(d, dict) else str(d)
                for d in env.get("devices") or []]
