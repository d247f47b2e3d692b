"""What a run does with each measured window: events, TensorBoard scalars, detectors, decisions.

The instrument (`instrument.Instrument`) knows Keras; this class knows the
protocol and the measurement rules. It runs on the training thread, once per
window and once per epoch, never per step.
"""

from __future__ import annotations

import math
import sys
from typing import TYPE_CHECKING, Any

from tfturbo.findings import FindingDoc
from tfturbo import findings as fcodes
from tfturbo import protocol
from tfturbo.findings import Finding
from tfturbo.protocol import EventWriter
from tfturbo.settings import RunSettings, steps_trained

from . import measure
from .detectors.base import Detector, RunContext, Window
from .measure import StepRecord

if TYPE_CHECKING:
    from .batch_validation import BatchValidation
    from .paired_validation import PairedValidation


class StopReason:
    """Why a run stopped before its last step (`RunMonitor.stop_reason`); not a `protocol.RunStatus`."""

    CANCELLED = "cancelled"  # the parent asked it to stop
    NAN = "nan"  # the loss became NaN or infinite
    PRECISE = "precise"  # the adaptive stop: the step-time interval is narrow enough


class RunMonitor:
    """Holds the run's step record, findings, validation curve and stop decision.

    `stop_reason` is set by the stop command (via the instrument), a NAN_LOSS
    finding, or the adaptive stop; the instrument ends training when it is set.
    """

    def __init__(self, writer: EventWriter, settings: RunSettings, detectors: list[Detector], context: RunContext,
                 memory, scalars=None) -> None:
        self.writer = writer
        self.settings = settings
        self.detectors = list(detectors)
        self.context = context
        self.memory = memory
        self.scalars = scalars  # tf.summary writer, or None
        self.record = StepRecord()
        context.all_step_ms = self.record.ms
        self.findings: list[FindingDoc] = []
        self.validation: list[dict[str, Any]] = []
        self.training: list[dict[str, Any]] = []  # the training metrics at each interval's end (summary `training`)
        self.last_logs: dict[str, float] = {}
        self.stop_reason: str | None = None
        self.fit_start = 0.0
        self.warmup_s: float | None = None
        self.profiling = False
        self.profile_started_in_warmup = False
        self.loss_scales: list[float] = []
        self.skipped_steps = 0
        self.stopped_early = False
        # the accuracy gate's validation, when the run has validation data (batch_validation's for a model
        # trained without labels)
        self.paired: PairedValidation | BatchValidation | None = None
        # The first summary op costs tens of ms to create: pay it here, not inside a measured step.
        self._scalars(0, None, {"batch_size": float(settings.batch_size or 0)})

    @property
    def warmed_up(self) -> bool:
        return self.record.first_steady is not None

    # -- called by the instrument ---------------------------------------------------------------

    def on_train_begin(self, fit_start: float) -> None:
        self.fit_start = fit_start
        self._phase(protocol.WARMUP, 1, "tracing and compiling; the first steps are not measured")
        self._run_detectors("on_start", self.context)

    def on_window(self, window: Window, completed: int) -> None:
        event: protocol.StepsEvent = {"step": window.steps, "step_ms": [round(ms, 4) for ms in window.step_ms]}
        if window.span is not None:
            event["window"] = [window.span[0], window.span[1], round(window.span[2], 6)]
        if window.steps or window.span is not None:
            if window.steps:
                event["loss"] = [*[None] * (len(window.steps) - 1), window.loss]
                if window.loss_scale is not None:
                    event["loss_scale"] = [None] * (len(window.steps) - 1) + [window.loss_scale]
            self.writer.emit(protocol.STEPS, **event)
        if window.loss_scale is not None:
            self.loss_scales.append(window.loss_scale)
            self.skipped_steps += window.skipped_steps or 0
        self._scalars(completed, window)
        if not self.warmed_up:
            self._look_for_steady_state(final=len(self.record) >= measure.WARMUP_SEARCH)
        self._run_detectors("on_window", self.context, window)
        self._progress(completed, window)

    def on_block(self, step: int, number: int, blocks: int, paused_s: float) -> None:
        """This run is back after the other arm's block (run-pair): its clocks restarted, nothing of the
        pause is in a window."""
        self._phase(protocol.TRAINING, step, f"block {number} of {blocks}, after {paused_s:.2f} s of the other "
                                             f"run's block", block=[number, blocks], paused_s=round(paused_s, 6))

    def on_validation_begin(self, step: int) -> None:
        self._phase(protocol.VALIDATING, step, "")

    def on_resume(self, step: int) -> None:
        if self.profiling:
            self._phase(protocol.PROFILING, step, "profiler still capturing")
        else:
            self._phase(protocol.TRAINING if self.warmed_up else protocol.WARMUP, step, "")

    def on_epoch_end(self, step: int, logs: dict[str, Any], validated: bool) -> bool:
        """Emit the epoch's metrics; True when the adaptive stop says the measurement is precise enough."""
        logs = {k: measure.finite_or_none(v) for k, v in logs.items()}
        train = {k: v for k, v in logs.items() if not k.startswith("val_")}
        val = {k: v for k, v in logs.items() if k.startswith("val_")} if validated else {}
        self.last_logs.update(train)
        self.training.append({"step": step, "metrics": train})
        self.writer.emit(protocol.EPOCH, step=step, metrics=train)
        if val:
            self.last_logs.update(val)
            self.validation.append({"step": step, "metrics": val})
            self.writer.emit(protocol.VALIDATION, step=step, metrics=val)
            self._scalars(step, None, val)
            if self.paired is not None and step >= (self.settings.paired_from or 0):  # the gate's points only
                self.paired.evaluate(self.context.model, step, step * (self.settings.batch_size or 0), val)
                self.paired.save(self.context.extra["run_dir"])
        self.writer.emit(protocol.MEMORY, **self.memory.read())
        until = self.settings.until_ci
        if until and not self.stop_reason and step >= self.settings.min_steps and step < self.settings.steps:
            if measure.precise_enough(self.record.steady_ms(), until):
                self.stop_reason = StopReason.PRECISE
                self.stopped_early = True
                return True
        return False

    def on_profile_start(self, step: int) -> None:
        self.profiling = True
        self.profile_started_in_warmup = not self.warmed_up
        self._phase(protocol.PROFILING, step, "TensorBoard profiler capturing these steps")

    def on_profile_stop(self, start: int, stop: int) -> None:
        self.profiling = False
        self.record.excluded = (start, stop)
        self.context.extra["profile_steps"] = (start, stop)  # detectors leave the profiler's own cost out
        if self.warmed_up:
            self._phase(protocol.TRAINING, stop + 1, "profile captured; these steps are not in the statistics",
                        excluded=[start, stop])
        else:
            self._phase(protocol.WARMUP, stop + 1, "profile captured", excluded=[start, stop])

    def on_train_end(self, completed: int) -> None:
        if not self.warmed_up:  # too short for a steady stretch: judge on everything seen
            self._look_for_steady_state(final=True)
        live = self.record.first_steady
        self.record.settle()  # the whole record revisits the live warm-up decision
        if self.record.first_steady != live and live is not None and self.record.first_steady is not None:
            start = self.record.start_of(self.record.first_steady)
            self.warmup_s = (start - self.fit_start) if start is not None else self.warmup_s
            self.context.warmup_end = self.record.step.index(self.record.first_steady)
            self._phase(protocol.TRAINING, self.record.first_steady,
                        f"steady state revised on the whole run: from step {self.record.first_steady} "
                        f"(steps {live}–{self.record.first_steady - 1} were still settling)", settled=True)
        self._run_detectors("on_end", self.context)
        self.writer.emit(protocol.MEMORY, **self.memory.read())

    # -- helpers --------------------------------------------------------------------------------

    def _look_for_steady_state(self, final: bool = False) -> None:
        first = self.record.find_steady_start()
        if first is None:
            if not final or len(self.record) < 2:
                return
            first = self.record.step[1]  # step 1 is always warm-up; nothing steadier was seen
        if self.profile_started_in_warmup and self.record.excluded and first <= self.record.excluded[1]:
            after = self.record.excluded[1] + 1  # the profiler's steps are no steady state
            if not (final and after > self.record.step[-1]):
                first = after
            # else: the run ended inside the profiler window; its steps stay excluded (`is_steady`), the
            # steps before it are all the steady state there is

        elif self.profile_started_in_warmup and not self.record.excluded:
            return  # the profiler is still running: decide once it has stopped
        self.record.first_steady = first
        start = self.record.start_of(first)
        self.warmup_s = (start - self.fit_start) if start is not None else None
        self.context.warmup_end = self.record.step.index(first) if first in self.record.step else None
        self._phase(protocol.TRAINING, first, f"steady state from step {first}"
                    + (f" after {self.warmup_s:.2f} s of warm-up" if self.warmup_s is not None else ""))

    def _phase(self, phase: str, step: int | None, detail: str, **extra: Any) -> None:
        self.writer.emit(protocol.PHASE, phase=phase, step=step, detail=detail, **extra)

    def _progress(self, completed: int, window: Window) -> None:
        total = steps_trained(self.settings.steps, self.record.steps_per_sample)  # whole calls: never above it
        recent = sum(window.step_ms) / len(window.step_ms) if window.step_ms else None
        eta = (total - completed) * recent / 1000.0 if recent is not None else None
        self.writer.emit(protocol.PROGRESS, step=completed, total=total, eta_s=eta)

    def _run_detectors(self, hook: str, *args: Any) -> None:
        for detector in list(self.detectors):
            try:
                new = getattr(detector, hook)(*args) or []
            except Exception as exc:  # noqa: BLE001 - a detector never stops training
                print(f"trainer_backend: detector {type(detector).__name__} failed and was dropped: "
                      f"{type(exc).__name__}: {exc}", file=sys.stderr)
                self.detectors.remove(detector)
                continue
            for finding in new:
                self.add_finding(finding)

    def add_finding(self, finding: Finding) -> None:
        d = finding.to_dict()
        self.findings.append(d)
        self.writer.emit(protocol.FINDING, finding=d)
        if finding.code == fcodes.NAN_LOSS and self.stop_reason in (None, StopReason.PRECISE):
            self.stop_reason = StopReason.NAN

    def _scalars(self, step: int, window: Window | None, metrics: dict[str, Any] | None = None) -> None:
        if self.scalars is None:
            return
        values: dict[str, float | None] = dict(metrics or {})
        if window is not None:
            if window.step_ms:
                values["step_ms"] = sum(window.step_ms) / len(window.step_ms)
            values["loss"] = window.loss
            values["loss_scale"] = window.loss_scale
        import tensorflow as tf

        with self.scalars.as_default():
            for name, value in values.items():
                if value is not None and math.isfinite(value):
                    tf.summary.scalar(name, value, step=step)

    # -- summary pieces -------------------------------------------------------------------------

    def loss_scale_summary(self) -> dict[str, Any] | None:
        if not self.loss_scales:
            return None
        return {"final": self.loss_scales[-1], "min": min(self.loss_scales), "skipped_steps": self.skipped_steps}

    @property
    def diverged(self) -> bool:
        return self.stop_reason == StopReason.NAN
