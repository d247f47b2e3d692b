"""Per-example validation results for the fake backends (tests/tune/tune_fakes.py, tests/gui/fake_backend.py).

The accuracy gate judges only paired examples (a point estimate is never a verdict), so a recorded run writes
`paired_validation.npz` as the real backend does: at each validation point, the first round(accuracy × N) of N
fixed examples correct. Two runs with the same accuracy agree on every example; a lower accuracy gets fewer right.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np

FILE = "paired_validation.npz"
EXAMPLES = 1000


def write_paired(run_dir: Path | str, validation: list[dict], batch_size: int, examples: int = EXAMPLES,
                 steps: list[int] | None = None, noise: float = 0.0) -> dict | None:
    """Write the file for `validation` (the summary's points) into run_dir; the summary's `paired_validation`.
    `steps`: the run's own validation steps instead (a recorded summary's curve may not follow the settings),
    every one at the curve's final accuracy. `noise`: each example's correctness flips with this probability,
    independently in every run and point (a small validation set whose accuracy cannot decide), and each
    example's loss, the same in every run, moves by 0.5% noise (the loss can)."""
    points = [v for v in validation if isinstance((v.get("metrics") or {}).get("val_accuracy"), (int, float))]
    if not points:
        return None
    accuracies = [float(v["metrics"]["val_accuracy"]) for v in points]
    if steps is not None:
        accuracies = [accuracies[-1]] * len(steps)
    else:
        steps = [int(v["step"]) for v in points]
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    correct = np.stack([(np.arange(examples) < round(a * examples)) for a in accuracies]).astype(np.float32)
    step = np.array(steps)
    arrays = {}
    if noise:
        rng = np.random.default_rng(zlib.crc32(run_dir.name.encode()))
        correct = np.where(rng.random(correct.shape) < noise, 1.0 - correct, correct).astype(np.float32)
        losses = np.random.default_rng(0).lognormal(-1.0, 0.5, examples)  # the examples' own, in every run
        arrays["loss"] = (losses * (1 + 0.005 * rng.standard_normal(correct.shape))).astype(np.float32)
    np.savez_compressed(run_dir / FILE, step=step, samples=step * batch_size, correct=correct, **arrays)
    return {"file": FILE, "examples": examples, "accuracy_metric": "val_accuracy", "loss": bool(arrays),
            "points": [[int(s), int(s) * batch_size] for s in step], "problem": None}
