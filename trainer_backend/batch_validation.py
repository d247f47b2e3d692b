"""The accuracy gate's validation for a model trained without labels: its own loss on each fixed batch.

The paired gate (`paired_validation.py`) compares the two arms example by
example, from each example's label; a model that takes no labels (an
autoencoder, a VAE, a GAN validated on features only, `batch_parts`) has none
to judge an example by, and its loss is whatever its own `test_step` computes.
So this validation keeps the same fixed examples (the first `max_examples`,
unbatched, re-batched at `EVAL_BATCH`, so they do not depend on the trial's
batch size) and records, at each validation point, the loss the model's own
`test_step` reports on each of those batches: one number per batch, the same
batches in the same order in every run, so the gate can pair the two arms
batch by batch (`tfturbo.trials.label_free`). Written to `batch_validation.npz`
beside the run's other files, atomically after each point; the summary's
`batch_validation` entry says what it holds or why it could not be measured.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

FILE = "batch_validation.npz"
# The fixed batches' size: Keras' default batch size, so the gate has batches to pair (the default 2,048
# validation examples give 64; the paired gate's 256 would give 8, and a small validation set one).
EVAL_BATCH = 32
LOSS = "loss"  # the key of the loss in the logs a test_step returns


class BatchValidation:
    """The fixed validation batches of one run and the model's own loss on each, at every validation point."""

    def __init__(self, val_ds, max_examples: int, fallback_batches: int) -> None:
        import tensorflow as tf

        examples = val_ds.unbatch().take(max_examples)
        static = all(s.shape.is_fully_defined() for s in tf.nest.flatten(examples.element_spec))
        self.dataset = (examples.batch(EVAL_BATCH) if static else val_ds.take(fallback_batches)).cache()
        self.steps: list[int] = []
        self.samples: list[int] = []
        self.loss: list[np.ndarray] = []
        self.problem: str | None = None

    def evaluate(self, model, step: int, samples_seen: int, val_logs: dict[str, Any]) -> None:
        """The model's own loss on each fixed batch now, its metrics reset before each (as evaluate() does)."""
        if self.problem is not None:
            return
        if f"val_{LOSS}" not in val_logs:
            reported = ", ".join(sorted(k[len("val_"):] for k in val_logs)) or "nothing"
            self.problem = f"the model's test_step reports no {LOSS!r} (it reports {reported})"
            print(f"trainer_backend: per-batch validation not possible: {self.problem}", file=sys.stderr)
            return
        losses = []
        try:
            model.make_test_function()
            for batch in self.dataset:  # each batch exactly as fit() hands it to the model's test_step
                model.reset_metrics()
                logs = model.test_function([batch])
                losses.append(float(logs[LOSS]))
            model.reset_metrics()
        except Exception as exc:  # noqa: BLE001 - the gate then says why it has no pairs; training goes on
            self.problem = f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
            print(f"trainer_backend: per-batch validation failed: {self.problem}", file=sys.stderr)
            return
        self.steps.append(step)
        self.samples.append(samples_seen)
        self.loss.append(np.where(np.isfinite(losses), losses, np.inf).astype(np.float32))

    def save(self, run_dir: Path) -> None:
        if not self.steps:
            return
        tmp = run_dir / (FILE + ".tmp")
        with open(tmp, "wb") as f:
            np.savez_compressed(f, step=np.asarray(self.steps), samples=np.asarray(self.samples),
                                loss=np.stack(self.loss))
        os.replace(tmp, run_dir / FILE)

    def describe(self) -> dict[str, Any]:
        """The summary's `batch_validation` entry."""
        return {"file": FILE if self.steps else None, "batches": len(self.loss[-1]) if self.loss else 0,
                "eval_batch": EVAL_BATCH, "metric": f"val_{LOSS}",
                "points": [[s, n] for s, n in zip(self.steps, self.samples)], "problem": self.problem}
