"""A training script's own length: what it trains when run on its own (its fit()'s epochs × steps per epoch).

The audit reads it (`own_length` in its document: trainer_backend/commands/audit.py) and every front end makes
it the study's default length, so the accuracy gate compares what the user's script trains, not tfturbo's
default of 300 steps (3 epochs of 32 steps became 300 silently). A builtin workload has none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .trials.sizing import MIN_STEADY_STEPS


@dataclass(frozen=True)
class OwnLength:
    epochs: int
    steps_per_epoch: int

    @property
    def steps(self) -> int:
        return self.epochs * self.steps_per_epoch

    @property
    def run_steps(self) -> int:
        """The steps every run trains: the own length, but at least MIN_STEADY_STEPS (fewer measure nothing)."""
        return max(MIN_STEADY_STEPS, self.steps)

    @classmethod
    def of(cls, audit_document: dict[str, Any] | None) -> OwnLength | None:
        """The length an `audit` document reports, or None (a builtin, or a length the script does not fix)."""
        own = (audit_document or {}).get("own_length")
        if not isinstance(own, dict):
            return None
        epochs, per_epoch = own.get("epochs"), own.get("steps_per_epoch")
        if not (isinstance(epochs, int) and isinstance(per_epoch, int) and epochs > 0 and per_epoch > 0):
            return None
        return cls(epochs, per_epoch)

    def words(self) -> str:
        """ "the script's own length: 3 epochs of 32 steps = 96 steps" (+ " (at least 20 to measure)" below the
        floor, so the steps a run trains are always the ones said) """
        epochs = f"{self.epochs} epoch{'' if self.epochs == 1 else 's'}"
        floor = f" (at least {MIN_STEADY_STEPS} to measure)" if self.steps < MIN_STEADY_STEPS else ""
        return f"the script's own length: {epochs} of {self.steps_per_epoch} steps = {self.steps} steps{floor}"


# a script's audit without one (tune says what runs instead): no fit() call, or a dataset of unknown length
NO_OWN_LENGTH = ("the audit could not read the script's own length (no fit() whose steps per epoch are known: "
                 "steps_per_epoch=, or a dataset of known length)")


def length_line(own: OwnLength | None, steps: int) -> str:
    """The line `tune` and `ab` print about a script's run length when no --steps was given: its own length,
    or why it could not be read and the `steps` that run instead."""
    if own is not None:
        return f"length: every run trains {own.words()}; --steps N for another length"
    return f"length: {NO_OWN_LENGTH}; every run trains {steps} steps; --steps N for another length"
