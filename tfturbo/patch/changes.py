"""The changes a recommendation asks of the user's code, each as what to change (not yet where).

Each lever of the study says its part (`Lever.changes`, tfturbo/tune/levers);
`tfturbo.patch.place` finds where the script says each thing and rewrites it
there. A change also carries `by_hand`: the lines a user writes themselves,
shown under the patch when it cannot be placed safely ("not applied
automatically: why"), and `why`, its line in the patch's list.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..learning_rate import OptimizerDoc, learning_rate_lines
from ..settings import XLA_CPU_AUTOCLUSTERING_FLAG


@dataclass(frozen=True, kw_only=True)
class Change:
    why: str  # one line: what changes and why (the patch's list, and the reason beside a snippet)
    # False: the baseline already ran this (a policy or compile() argument the recommendation keeps), so it is
    # placed only where the file says otherwise, and never listed as left to the user
    differs: bool = True

    def by_hand(self) -> str:
        """The change as lines to write by hand (when it cannot be placed)."""
        return ""


@dataclass(frozen=True, kw_only=True)
class Policy(Change):
    """The global dtype policy, set before the model is built (layers take the policy they are created under)."""

    name: str

    def by_hand(self) -> str:
        return (f'keras.mixed_precision.set_global_policy("{self.name}")  # after the imports, before the model '
                "is built")


@dataclass(frozen=True, kw_only=True)
class CompileArgument(Change):
    """One argument of the fitted model's compile() call(s): jit_compile, steps_per_execution.
    `unsaid`: the value the script's runs had when its compile() does not give it (Keras' default as measured):
    the argument is added only when the recommendation differs from it."""

    name: str
    value: Any
    unsaid: Any = None

    def by_hand(self) -> str:
        return f"model.compile(..., {self.name}={self.value!r})  # your compile() call, its other arguments as they are"


@dataclass(frozen=True, kw_only=True)
class BatchSize(Change):
    """The training batch size, where the script sets it."""

    size: int
    was: int | None = None

    def by_hand(self) -> str:
        return (f"batch size {self.size}" + (f" (was {self.was})" if self.was else "")
                + f": model.fit(..., batch_size={self.size}) for arrays, or dataset.batch({self.size}) where the "
                "training data is batched")


@dataclass(frozen=True, kw_only=True)
class LearningRate(Change):
    """The learning rate (or its schedule's rates) times `factor` (the batch rung's rule for its optimizer).
    `optimizer`: how the workload wrote its optimizer (the baseline summary's "optimizer")."""

    factor: float
    optimizer: OptimizerDoc | None = None

    @property
    def factor_text(self) -> str:
        return f"{self.factor:.3f}".rstrip("0").rstrip(".")

    def by_hand(self) -> str:
        if not (self.optimizer or {}).get("class"):  # an older run: how the script wrote it is not known
            return f"the learning rate × {self.factor_text} (where the optimizer or its schedule is made)"
        return "\n".join(line[1:] for line in learning_rate_lines(self.factor, self.optimizer) if line.startswith("+"))


@dataclass(frozen=True, kw_only=True)
class Float32Head(Change):
    """dtype="float32" on the output layer(s): the audit's HEAD_NOT_FLOAT32 findings' layers (`layers`: their
    names and classes as the model reports them)."""

    layers: tuple[tuple[str, str], ...] = ()  # (layer name, class)
    snippet: str = ""  # the audit's fix, written for this model

    def by_hand(self) -> str:
        names = ", ".join(f"{name} ({cls})" if cls else name for name, cls in self.layers) or "the output layer"
        return self.snippet or f'dtype="float32" on {names}: e.g. keras.layers.Dense(units, ..., dtype="float32")'


@dataclass(frozen=True, kw_only=True)
class IntegerInput(Change):
    """The model's Input declared int32, so integer ids reach their lookup exact under a 16-bit policy."""

    snippet: str = ""  # the audit's fix, written for this model

    def by_hand(self) -> str:
        return self.snippet or 'keras.Input(shape=..., dtype="int32")  # the ids input'


@dataclass(frozen=True, kw_only=True)
class DropRemainder(Change):
    """drop_remainder=True on the training data's batch() call."""

    snippet: str = ""  # the audit's fix, written for this workload

    def by_hand(self) -> str:
        return self.snippet or "dataset.batch(batch_size, drop_remainder=True)  # the training data"


@dataclass(frozen=True, kw_only=True)
class AutoClustering(Change):
    """TensorFlow's XLA auto-clustering: set_jit("autoclustering"), and on a CPU (`cpu_flag`) the flag without
    which it clusters nothing there, set before TensorFlow starts."""

    cpu_flag: bool = True

    def flag_lines(self) -> list[str]:
        return [f'os.environ["TF_XLA_FLAGS"] = os.environ.get("TF_XLA_FLAGS", "") + " {XLA_CPU_AUTOCLUSTERING_FLAG}"'
                "  # before TensorFlow is imported"] if self.cpu_flag else []

    def by_hand(self) -> str:
        return "\n".join([*(["import os", *self.flag_lines()] if self.cpu_flag else []), "import tensorflow as tf",
                          'tf.config.optimizer.set_jit("autoclustering")'])


@dataclass(frozen=True, kw_only=True)
class ByHand(Change):
    """A change tfturbo never writes into the script itself (the tf.data fixes, a custom loop's loss scaling,
    layer widths): listed under the patch with its code."""

    snippet: str
    reason: str = "tfturbo does not rewrite this part of a script"

    def by_hand(self) -> str:
        return self.snippet
