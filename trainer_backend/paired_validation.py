"""The fixed validation examples every candidate is judged on, and each example's result.

The accuracy gate compares two configurations example by example: the same
validation examples, at equal samples seen, so the difference has an interval
as tight as their disagreement allows. For that the examples must not depend on
the run's batch size: the validation dataset is unbatched, its first
`max_examples` examples are kept (in their order: drop_remainder at another
batch size only shortens the list, and readers pair the common prefix), cached,
and batched at a fixed evaluation batch size. Keras' own validation runs on the
same examples, so the validation curve and the gate agree.

At each validation point the model's output on every example gives its
correctness (for a classifier: argmax, or a 0.5 threshold for one output, as
Keras' accuracy metrics compute it) and its loss (the compiled loss, unreduced).
They are written to `paired_validation.npz` in the run directory, rewritten
atomically after each point so a run that stops early keeps what it measured.
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

FILE = "paired_validation.npz"
EVAL_BATCH = 256


class PairedValidation:
    """Owns the fixed validation set of one run and the per-example results measured on it."""

    def __init__(self, val_ds, max_examples: int, fallback_batches: int) -> None:
        import tensorflow as tf

        examples = val_ds.unbatch().take(max_examples)
        static = all(s.shape.is_fully_defined() for s in tf.nest.flatten(examples.element_spec))
        # A dimension that varies between batches cannot be re-batched: keep the workload's own batches.
        self.rebatched = static
        self.dataset = (examples.batch(EVAL_BATCH) if static else val_ds.take(fallback_batches)).cache()
        self.steps: list[int] = []
        self.samples: list[int] = []
        self.correct: list[np.ndarray] = []
        self.loss: list[np.ndarray] = []
        self.accuracy_metric: str | None = None
        self.problem: str | None = None  # why per-example results could not be computed, if so
        self.n_examples = 0

    # -- measuring ------------------------------------------------------------------------------

    def evaluate(self, model, step: int, samples_seen: int, val_logs: dict[str, Any]) -> None:
        """Every example's correctness and loss now; `val_logs` names the accuracy metric Keras reported."""
        if self.problem is not None:
            return
        if self.accuracy_metric is None:
            self.accuracy_metric = _accuracy_name(val_logs)
        correct: list[np.ndarray] = []
        losses: list[np.ndarray] = []
        loss_fn = _per_example_loss(model)
        try:
            for batch in self.dataset:
                x, y = batch[0], batch[1]
                pred = model(x, training=False)
                if isinstance(pred, (list, tuple, dict)):
                    self.problem = "the model has several outputs; examples are compared on one output only"
                    return
                p = np.asarray(pred, dtype=np.float32)
                truth = np.asarray(y)
                if self.accuracy_metric is not None:
                    c = _correctness(truth, p)
                    if c is None:
                        self.accuracy_metric = None
                    else:
                        correct.append(c)
                if loss_fn is not None:
                    losses.append(_reduce(np.asarray(loss_fn(y, p.astype(np.float32)), dtype=np.float64)))
        except Exception as exc:  # noqa: BLE001 - the gate then says why it has no pairs; training goes on
            self.problem = f"{type(exc).__name__}: {exc}"
            print(f"trainer_backend: per-example validation failed: {self.problem}", file=sys.stderr)
            return
        self.steps.append(step)
        self.samples.append(samples_seen)
        if self.accuracy_metric is not None and correct:
            self.correct.append(np.concatenate(correct))
        if losses:
            self.loss.append(np.concatenate(losses).astype(np.float32))
        self.n_examples = max(len(a) for a in (self.correct[-1:] + self.loss[-1:])) if (self.correct or self.loss) \
            else 0

    # -- writing --------------------------------------------------------------------------------

    def save(self, run_dir: Path) -> None:
        if not self.steps:
            return
        arrays: dict[str, np.ndarray] = {"step": np.asarray(self.steps), "samples": np.asarray(self.samples)}
        if self.correct and len(self.correct) == len(self.steps):
            arrays["correct"] = np.stack(self.correct).astype(np.float32)
        if self.loss and len(self.loss) == len(self.steps):
            arrays["loss"] = np.stack(self.loss)
        tmp = run_dir / (FILE + ".tmp")
        with open(tmp, "wb") as f:
            np.savez_compressed(f, **arrays)
        os.replace(tmp, run_dir / FILE)

    def describe(self) -> dict[str, Any]:
        """The summary's `paired_validation` entry."""
        return {"file": FILE if self.steps else None, "examples": self.n_examples,
                "accuracy_metric": self.accuracy_metric if self.correct else None,
                "loss": bool(self.loss), "fixed_examples": self.rebatched, "eval_batch": EVAL_BATCH,
                "points": [[s, n] for s, n in zip(self.steps, self.samples)], "problem": self.problem}


def _accuracy_name(val_logs: dict[str, Any]) -> str | None:
    """The validation accuracy metric Keras reported, preferring plain `val_accuracy`."""
    names = [k for k in val_logs if k.startswith("val_") and "acc" in k]
    return "val_accuracy" if "val_accuracy" in names else (sorted(names)[0] if names else None)


def _correctness(truth: np.ndarray, p: np.ndarray) -> np.ndarray | None:
    """Per-example share of correct predictions (1.0/0.0 for one label per example), or None if not a classifier."""
    n = len(p)
    if p.ndim >= 2 and p.shape[-1] > 1:
        predicted = np.argmax(p, axis=-1)
        if truth.shape == p.shape:
            truth = np.argmax(truth, axis=-1)  # one-hot labels
        elif truth.ndim == p.ndim and truth.shape[-1] == 1:
            truth = truth[..., 0]
        if truth.shape != predicted.shape:
            return None
        hit = predicted == truth.astype(predicted.dtype)
    else:
        flat_p, flat_t = p.reshape(n, -1), truth.reshape(n, -1)
        if flat_p.shape != flat_t.shape:
            return None
        hit = (flat_p > 0.5) == (flat_t > 0.5)
    return hit.reshape(n, -1).mean(axis=1).astype(np.float32)


def _per_example_loss(model):
    """A callable (y, y_pred) -> per-example loss from the compiled loss, or None (custom or several losses)."""
    import keras

    loss = getattr(model, "loss", None)
    if isinstance(loss, str):
        try:
            loss = keras.losses.get(loss)
        except (ValueError, TypeError):
            return None
    if isinstance(loss, keras.losses.Loss):
        return loss.call  # the unreduced loss of a Loss object
    if callable(loss) and not isinstance(loss, (dict, list, tuple)):
        return loss
    return None


def _reduce(per: np.ndarray) -> np.ndarray:
    """Mean over every axis but the first: one number per example."""
    if per.ndim == 0:
        raise ValueError("the loss returned one number for the whole batch, not one per example")
    values = per.reshape(len(per), -1).mean(axis=1)
    return np.where(np.isfinite(values), values, math.inf)
