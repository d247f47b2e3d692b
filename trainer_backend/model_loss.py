"""Whether a model has a loss to train on: the one rule for a contract workload's model and a script's.

Below both `workload` and `script` (each checks the model it was given), so neither imports the other for it.
"""

from __future__ import annotations

from typing import Any


def compiled_without_loss(model: Any) -> bool:
    """Nothing to train on: no compiled loss, and neither a `compute_loss` nor a `train_step` of the model's own
    (a distiller computes its loss in `compute_loss` and compiles none: it is measured as written)."""
    import keras

    cls = type(model)
    return bool(model.loss is None and cls.train_step is keras.Model.train_step and
                cls.compute_loss is keras.Model.compute_loss)
