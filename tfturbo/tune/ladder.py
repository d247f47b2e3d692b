"""The checklist, unattended: environment, audit, input probe, then the speed-up ladder.

Each rung is one measured backend run in STUDY_DIR/runs/<NN-name>/ with the
baseline's seed, step budget and validation points; `decide()` keeps it only
if it is faster beyond the noise and accurate enough. Later rungs build on the
best kept configuration so far:

  baseline (float32, no XLA, profiler window on)
  mixed precision (the recommended 16-bit policy; both with both_policies)
  + XLA on the best kept configuration
  + a larger batch, sized from the measured peak memory the kept rungs freed

The backend is reached only through `runner` (default `run_backend`), so the
flow can be tested on recorded documents without TensorFlow.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .. import findings as F
from .. import protocol, summary
from ..backend_client import BackendResult, run_backend
from ..cli_args import run_argv
from ..errors import OutputDirError, UserError, WorkloadError
from ..runfiles import BACKEND_LOG, RUNS_DIR, STUDY_YAML, load_run
from ..settings import DEFAULT_SEED, DEFAULT_STEPS, NO_PROFILE, RunSettings
from ..verdicts import ProbeVerdict
from .batch import DEFAULT_MAX_SCALE, plan_larger_batch
from .decision import RungDecision, Tolerance, decide, reference_decision
from .study import Rung, RungKind, Study, StudyStatus, measurement_only
from .apply_snippet import snippet

Runner = Callable[..., BackendResult]
SIXTEEN_BIT = ("mixed_float16", "mixed_bfloat16")


@dataclass
class TuneOptions:
    workload: str
    out: Path
    steps: int = DEFAULT_STEPS
    seed: int = DEFAULT_SEED
    batch_size: int | None = None
    val_every: int | None = None  # None: steps // 5
    until_ci: float | None = 0.02  # adaptive measurement: stop once the step-time CI is ±2%
    min_steps: int | None = None  # None: two validation intervals
    policy: str | None = None  # the 16-bit policy to measure; None: the recommended one
    both_policies: bool = False
    auto_fix: bool = True  # apply the audit's automatic fixes (float32 head, drop_remainder) to the rungs
    max_batch_scale: float = DEFAULT_MAX_SCALE
    tolerance: Tolerance = field(default_factory=Tolerance)

    def base_settings(self) -> RunSettings:
        plain = RunSettings(self.workload, steps=self.steps, seed=self.seed, batch_size=self.batch_size,
                            val_every=self.val_every)
        val_every = plain.effective_val_every()
        min_steps = self.min_steps if self.min_steps is not None else min(self.steps, 2 * val_every)
        return plain.with_(val_every=val_every, until_ci=self.until_ci,
                           min_steps=min_steps if self.until_ci is not None else 0)

    def to_dict(self) -> dict[str, Any]:
        return {"steps": self.steps, "seed": self.seed, "batch_size": self.batch_size,
                "val_every": self.base_settings().val_every, "until_ci": self.until_ci,
                "min_steps": self.base_settings().min_steps, "policy": self.policy, "both_policies": self.both_policies,
                "auto_fix": self.auto_fix, "max_batch_scale": self.max_batch_scale,
                "tolerance": {"accuracy_pp": self.tolerance.accuracy_pp, "loss_rel": self.tolerance.loss_rel}}


def sixteen_bit_policies(recommended: str | None, both: bool, chosen: str | None = None) -> tuple[list[str], str]:
    """The 16-bit policies to measure, and why: the user's choice or the recommended one first."""
    if chosen in SIXTEEN_BIT:
        first, why = chosen, f"{chosen} was chosen with --policy (recommended: {recommended})"
    elif recommended in SIXTEEN_BIT:
        first, why = recommended, f"{recommended} is the recommended policy for this hardware"
    else:
        first = "mixed_float16"
        why = (f"the recommended policy is {recommended or 'unknown'}; mixed_float16 is measured to check "
               "that recommendation")
    policies = [first] + ([p for p in SIXTEEN_BIT if p != first] if both else [])
    return policies, why


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
        self.policies: list[str] = []  # the 16-bit policies to measure, and why (from the environment)
        self.policy_reason = ""
        self.base: Rung | None = None
        self.best: Rung | None = None  # the best kept configuration so far

    # ------------------------------------------------------------ backend calls

    def _call(self, command: str, argv: list[str], live: bool = False) -> BackendResult:
        return self.runner(command, argv, on_event=self.live if live else None,
                           stderr_path=str(self.path / BACKEND_LOG), cancel=self.cancel)

    def _fail_on_bad_input(self, result: BackendResult, what: str) -> None:
        """A broken workload ends the study before anything is written (exit 2, one line)."""
        err = result.error or {}
        if err.get("kind") == protocol.BAD_INPUT:
            raise WorkloadError(str(err.get("message") or f"{what} rejected the workload"), str(err.get("fix") or ""))

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
        for step in (self._environment, self._audit, self._probe, self._baseline, self._mixed_precision,
                     self._xla, self._larger_batch):
            if not step() or self._stopped():
                return

    def _environment(self) -> bool:
        self.say("environment: asking the backend for devices and the recommended policy")
        env = self._call("env", [])
        self.study.environment = doc = env.document
        if doc is None:
            self._failed("the backend could not report the environment: " + self._error_text(env))
            return False
        recommended = doc.get("recommended_policy")
        self.policies, self.policy_reason = sixteen_bit_policies(recommended, self.opts.both_policies,
                                                                 self.opts.policy)
        self.say(f"environment: {', '.join(self._device_names(doc)) or 'no device listed'}; "
                 f"recommended policy {recommended} ({doc.get('reason', '')})")
        return True

    def _audit(self) -> bool:
        """Static findings under the 16-bit policy and XLA the ladder will try (so their fixes apply)."""
        opts = self.opts
        argv = [opts.workload, "--policy", self.policies[0], "--jit"]
        if opts.batch_size:
            argv += ["--batch-size", str(opts.batch_size)]
        audit = self._call("audit", argv)
        self._fail_on_bad_input(audit, "the audit")
        if audit.document is None:
            self._failed("the audit failed: " + self._error_text(audit))
            return False
        found = [f for f in audit.document.get("findings") or [] if isinstance(f, dict)]
        self.study.audit = found
        self.say(f"audit ({self.policies[0]} + XLA): {len(found)} finding(s)"
                 + (f": {', '.join(F.codes_of(found))}" if found else ""))
        self.study.save()
        return True

    def _probe(self) -> bool:
        """No tuning of a job that is waiting on data: an input-bound verdict ends the study."""
        opts, study = self.opts, self.study
        argv = [opts.workload, "--seed", str(opts.seed)]
        if opts.batch_size:
            argv += ["--batch-size", str(opts.batch_size)]
        probe = self._call("probe-input", argv)
        self._fail_on_bad_input(probe, "the input probe")
        if probe.document is None:
            self.say("input probe: failed (" + self._error_text(probe) + "); continuing without its verdict")
            study.probe = {"verdict": None, "error": self._error_text(probe), "findings": []}
            return True
        study.probe = probe.document
        verdict = probe.document.get("verdict")
        self.say(f"input probe: {str(verdict).replace('_', '-')}")
        if verdict == ProbeVerdict.INPUT_BOUND:
            study.status = StudyStatus.STOPPED_INPUT_BOUND
            study.message = ("the job is input-bound: the device waits for data, so precision and XLA "
                             "would not make it faster; fix the input pipeline first (see INPUT_BOUND)")
            return False
        return True

    def _baseline(self) -> bool:
        base = self.base = self._measure(RungKind.BASELINE, RungKind.BASELINE, self.opts.base_settings())  # default profiler window
        status = (base.summary or {}).get("status", protocol.RunStatus.CRASHED)
        if status != protocol.RunStatus.COMPLETED:
            err = (base.summary or {}).get("error") or {}
            detail = f": {err['message']}" if isinstance(err, dict) and err.get("message") else ""
            base.decision = RungDecision(float("nan"), (float("nan"), float("nan")), None, None, False,
                                         f"the baseline run ended as {status}{detail}", [])
            self._report_end(base)
            if not self._stopped():
                self._failed(f"the baseline run ended as {status}{detail}, so nothing can be compared with it; "
                             f"see {base.run}/{BACKEND_LOG}")
            return False
        base.decision = reference_decision(base.summary)
        self._report_end(base)
        if (base.summary.get("settings") or {}).get("batch_size"):  # the workload's default, now known
            base.settings = base.settings.with_(batch_size=summary.batch_size(base.summary))
        self.best = base
        return True

    def _mixed_precision(self) -> bool:
        head_fix = self.opts.auto_fix and F.HEAD_NOT_FLOAT32 in F.codes_of(self.study.audit)
        common = self.base.settings.with_(profile=NO_PROFILE)
        measured = []
        for policy in self.policies:
            rung = self._measure(policy, RungKind.MIXED_PRECISION, common.with_(policy=policy, fix_head=head_fix))
            self._decide(rung, None, note=self.policy_reason if policy == self.policies[0] else "measured on request")
            measured.append(rung)
            if self._stopped():
                return False
        kept = [r for r in measured if r.kept]
        if kept:
            self.best = max(kept, key=lambda r: r.decision.speedup)
        return True

    def _xla(self) -> bool:
        """XLA on the best kept configuration; then, if a 16-bit rung lost only on speed, 16-bit + XLA.

        XLA's fusion is what makes 16-bit pay on some hardware (bfloat16 on a
        CPU with native instructions; the tutorial's fastest row is
        mixed_float16 + XLA), so a 16-bit policy rejected as too slow without
        XLA is measured once more with it. A rung rejected for accuracy or NaN
        is not retried: XLA does not change the numerics that failed.
        """
        drop = self.best.settings.drop_remainder or (
            self.opts.auto_fix and F.PARTIAL_LAST_BATCH in F.codes_of(self.study.audit))
        candidates = [(RungKind.XLA, self.best.settings)]
        if self.best.kind != RungKind.MIXED_PRECISION:
            candidates += [(f"{r.settings.policy}-{RungKind.XLA}", r.settings) for r in self._slow_sixteen_bit_rungs()]
        for slug, settings in candidates:
            rung = self._measure(slug, RungKind.XLA, settings.with_(jit_compile=True, drop_remainder=drop, profile=NO_PROFILE))
            self._decide(rung, self.best)
            if rung.kept:
                self.best = rung
            if self._stopped():
                return False
        return True

    def _slow_sixteen_bit_rungs(self) -> list[Rung]:
        """The 16-bit rungs whose only fault was speed (slower, or no measurable change)."""
        return [r for r in self.study.rungs if r.kind == RungKind.MIXED_PRECISION and r.decision is not None
                and not r.kept and F.codes_of(r.decision.findings) == [F.SLOWER_THAN_BASELINE]]

    def _larger_batch(self) -> bool:
        base, best = self.base, self.best
        plan = plan_larger_batch(best.settings.batch_size, base.summary.get("peak_memory_bytes"),
                                 (best.summary or {}).get("peak_memory_bytes"), (best.summary or {}).get("memory_kind"),
                                 self.opts.max_batch_scale)
        settings = best.settings.with_(batch_size=plan.batch_size or best.settings.batch_size,
                                       lr_scale=best.settings.lr_scale * plan.lr_scale, profile=NO_PROFILE)
        if plan.skipped:
            n = len(self.study.rungs) + 1
            rung = Rung(f"{n:02d}-{RungKind.LARGER_BATCH}", RungKind.LARGER_BATCH, settings, skipped_reason=plan.reason,
                        compared_with=None if best is base else best.name)
            self.study.rungs.append(rung)
            self.say(f"[{n:02d}] larger batch — {plan.reason}")
            self.study.save()
            return True
        rung = self._measure(RungKind.LARGER_BATCH, RungKind.LARGER_BATCH, settings)
        self._decide(rung, best, note=plan.reason)
        if rung.kept:
            self.best = rung
        return True

    # ------------------------------------------------------------ one rung

    def _measure(self, slug: str, kind: str, settings: RunSettings) -> Rung:
        n = len(self.study.rungs) + 1
        name = f"{n:02d}-{slug}"
        run_rel = f"{RUNS_DIR}/{name}"
        rung = Rung(name, kind, settings, run_rel)
        self.study.rungs.append(rung)
        limit = f"{settings.min_steps}–{settings.steps}" if settings.until_ci else f"{settings.steps}"
        self.say(f"[{n:02d}] {kind.replace('_', ' ')}: {settings.label()} — running ({limit} steps) in {run_rel}")
        result = self._call("run", run_argv(settings, str(self.path / run_rel)), live=True)
        doc = result.document
        if doc is None:
            doc = load_run(self.path / run_rel).summary if (self.path / run_rel).is_dir() else None
        if doc is None:
            doc = {"status": result.status, "settings": settings.to_dict()}
        if result.error and not doc.get("error"):
            doc = {**doc, "error": {k: result.error.get(k) for k in ("kind", "message", "fix")}}
        rung.summary = doc
        return rung

    def _decide(self, rung: Rung, reference: Rung | None, note: str = "") -> None:
        """Accuracy against the baseline; speed also against `reference`, the rung this one extends."""
        ref = reference if reference is not None and reference is not self.base else None
        rung.compared_with = ref.name if ref else None
        rung.decision = decide(self.base.summary, rung.summary, self.opts.tolerance,
                               reference=ref.summary if ref else None)
        if note:
            rung.decision.reason = f"{note}; {rung.decision.reason}"
        self._report_end(rung)

    def _report_end(self, rung: Rung) -> None:
        d = rung.decision
        s = rung.summary or {}
        sps = s.get("steps_per_s")
        rate = f"{sps:.2f} steps/s, " if isinstance(sps, (int, float)) else ""
        done = f" after {rung.steps_completed} steps" if rung.steps_completed is not None else ""
        verdict = "kept" if d and d.kept else "not kept"
        speed = f"{d.speedup:.2f}× [{d.speedup_ci95[0]:.2f}, {d.speedup_ci95[1]:.2f}]" \
            if d and math.isfinite(d.speedup) else "n/a"
        self.say(f"[{rung.name[:2]}] {rung.kind.replace('_', ' ')}: {s.get('status', 'crashed')}{done}; "
                 f"{rate}speed-up {speed}; {verdict}" + (f" — {d.reason}" if d and rung.kind != RungKind.BASELINE else ""))
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
        if base is not None and base.kept and self.best is not None:
            study.recommended = measurement_only(self.best.settings)
            study.recommended_rung = self.best.name
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
