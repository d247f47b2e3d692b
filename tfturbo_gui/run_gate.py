"""One training at a time per app: the gate every measuring backend command passes.

Two trainings on one device corrupt both timings (they share the cores, the
GPU, the memory bandwidth), so a `run` or `probe-input` starts only while no
other one is going. `BackendProcess.start` takes the gate and refuses a
second command outright; the pages listen to `changed` and disable every Run
button meanwhile, saying why. Audits and the `env` report measure nothing and
may run beside a training.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

MEASURING_COMMANDS = frozenset({"run", "probe-input"})


class TrainingBusy(RuntimeError):
    """A second training was asked to start while one is going."""


class TrainingGate(QObject):
    changed = Signal(bool)  # busy

    def __init__(self) -> None:
        super().__init__()
        self.holder: object | None = None
        self.label = ""

    def busy(self) -> bool:
        """A training is going: its process runs (one whose window was destroyed no longer holds the gate)."""
        if self.holder is None:
            return False
        try:
            return bool(self.holder.is_running())
        except RuntimeError:  # the Qt object behind the holder is gone
            self.holder = None
            return False

    def why_busy(self) -> str:
        return f"wait: {self.label} is running (one training at a time)" if self.busy() else ""

    def check(self, label: str) -> None:
        """Raise TrainingBusy if a training is going (called before starting one)."""
        if self.busy():
            raise TrainingBusy(f"cannot start {label}: {self.label} is still running; stop it or wait for it")

    def acquire(self, holder: object, label: str) -> None:
        """`holder` (a started BackendProcess) trains now."""
        if self.busy() and self.holder is not holder:
            raise TrainingBusy(f"cannot start {label}: {self.label} is still running; stop it or wait for it")
        self.holder, self.label = holder, label
        self.changed.emit(True)

    def release(self, holder: object) -> None:
        if self.holder is holder:
            self.holder, self.label = None, ""
            self.changed.emit(False)


GATE = TrainingGate()
