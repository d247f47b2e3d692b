"""One training at a time per app and per machine: the gate every measuring backend command passes.

Two trainings on one device corrupt both timings (they share the cores, the
GPU, the memory bandwidth), so a `run` or `probe-input` starts only while no
other one is going. `BackendProcess.start` takes the gate and refuses a
second command outright; the pages listen to `changed` and disable every Run
button meanwhile, saying why. A lock file (QLockFile, released by the OS when
its process dies) extends the rule to other tfturbo windows of the same user
on this machine. Audits and the `env` report measure nothing and may run
beside a training.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QLockFile, QObject, QStandardPaths, Signal

from tfturbo.cli_args import TRAINING_COMMANDS

MEASURING_COMMANDS = frozenset({*TRAINING_COMMANDS, "probe-input"})


class Running(Protocol):
    """What holds the gate: a started BackendProcess."""

    def is_running(self) -> bool: ...


class TrainingBusy(RuntimeError):
    """A second training was asked to start while one is going."""


class TrainingGate(QObject):
    changed = Signal(bool)  # busy

    def __init__(self) -> None:
        super().__init__()
        self.holder: Running | None = None
        self.label = ""
        self._lock: QLockFile | None = None

    def _lock_file(self) -> QLockFile:
        folder = Path(QStandardPaths.writableLocation(QStandardPaths.StandardLocation.GenericCacheLocation))
        path = folder / "tfturbo" / "training.lock"
        if self._lock is None or self._lock.fileName() != str(path):  # HOME may change (tests)
            path.parent.mkdir(parents=True, exist_ok=True)
            self._lock = QLockFile(str(path))
            self._lock.setStaleLockTime(0)  # stale only when its process is gone
        return self._lock

    def device_busy(self) -> str:
        """Why another tfturbo on this machine blocks a training now ('' when none does)."""
        if self.busy():
            return ""
        lock = self._lock_file()
        if lock.isLocked():
            return ""
        if not lock.tryLock(0):
            return "another tfturbo window on this machine is training (one training per device)"
        lock.unlock()
        return ""

    def busy(self) -> bool:
        """A training is going: its process runs (one whose window was destroyed no longer holds the gate)."""
        if self.holder is None:
            return False
        try:
            return bool(self.holder.is_running())
        except RuntimeError:  # the Qt object behind the holder is gone
            self.holder = None
            if self._lock is not None and self._lock.isLocked():
                self._lock.unlock()
            return False

    def why_busy(self) -> str:
        return f"wait: {self.label} is running (one training at a time)" if self.busy() else ""

    def check(self, label: str) -> None:
        """Raise TrainingBusy if a training is going here or in another tfturbo on this machine; else hold
        the machine's lock (called before starting a training; `acquire` or `abandon` follows)."""
        if self.busy():
            raise TrainingBusy(f"cannot start {label}: {self.label} is still running; stop it or wait for it")
        lock = self._lock_file()
        if not lock.isLocked() and not lock.tryLock(0):
            raise TrainingBusy(f"cannot start {label}: another tfturbo window on this machine is training")

    def abandon(self) -> None:
        """The training checked for did not start: let the machine's lock go."""
        if self.holder is None and self._lock is not None and self._lock.isLocked():
            self._lock.unlock()

    def acquire(self, holder: Running, label: str) -> None:
        """`holder` (a started BackendProcess) trains now."""
        if self.busy() and self.holder is not holder:
            raise TrainingBusy(f"cannot start {label}: {self.label} is still running; stop it or wait for it")
        self.holder, self.label = holder, label
        self.changed.emit(True)

    def release(self, holder: object) -> None:
        if self.holder is holder:
            self.holder, self.label = None, ""
            if self._lock is not None and self._lock.isLocked():
                self._lock.unlock()
            self.changed.emit(False)


GATE = TrainingGate()
