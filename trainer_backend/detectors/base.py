"""The interface of live detectors: diagnoses made while a run trains.

The instrumentation hands detectors the measurements it already has, once
per flushed window of steps — never per step — so no detector can add a
device sync to the training loop. A detector returns findings; the runner
emits each as a `finding` event once and collects it into summary.json.
Detectors never raise into training: the runner logs a detector's exception
and drops that detector.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tfturbo.findings import Finding
from tfturbo.settings import RunSettings


@dataclass
class Window:
    """One flushed window of consecutive training steps."""

    steps: list[int]
    step_ms: list[float]  # host wall time per step (cheap timestamps, no sync)
    loss: float | None  # mean training loss over the window (read once per window)
    loss_scale: float | None  # dynamic loss scale at the end of the window, if any
    skipped_steps: int | None  # steps skipped by loss scaling in this window, if known
    # (first step, last step, seconds between the device-draining reads that bound the window)
    span: tuple[int, int, float] | None = None


@dataclass
class RunContext:
    """What a detector may look at. `model`, `train_ds` are live Keras/tf.data objects."""

    settings: RunSettings
    model: Any
    train_ds: Any
    all_step_ms: list[float] = field(default_factory=list)  # every step so far, in order
    warmup_end: int | None = None  # index of the first steady step once detected
    backend_log: Any = None  # callable -> str: what TensorFlow/Keras printed so far (stderr)
    extra: dict[str, Any] = field(default_factory=dict)


class Detector:
    """Override what you need; each hook returns new findings (raise each finding once)."""

    def on_start(self, ctx: RunContext) -> list[Finding]:
        return []

    def on_window(self, ctx: RunContext, window: Window) -> list[Finding]:
        return []

    def on_end(self, ctx: RunContext) -> list[Finding]:
        return []
