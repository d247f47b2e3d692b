"""What of a batch the model takes: its features, and its labels when it has any.

Keras' fit() takes batches of `(x, y)`, `(x, y, sample_weight)`, or `x` alone: a model trained without
labels (an autoencoder, a VAE, a GAN, a self-supervised model) reads the batch in its own `train_step`, and
`fit(x)` hands it the features only. Keras unpacks a batch with `keras.utils.unpack_x_y_sample_weight` (a tuple
of one to three is x, y, sample_weight; anything else is x) and packs arrays with `pack_x_y_sample_weight`
(x alone when there is no y), so every reader of a batch's parts asks here and sees it as Keras does: a model
without labels is measured like any other, and nothing takes the second row of a features-only batch for its
labels.
"""

from __future__ import annotations

from typing import Any


def has_labels(element: Any) -> bool:
    """True when a batch (or a dataset's element_spec) carries labels: `(x, y)` or `(x, y, sample_weight)`."""
    import keras

    return keras.utils.unpack_x_y_sample_weight(element)[1] is not None


def features(element: Any) -> Any:
    """The model's input of a batch (or of an element_spec): x of `(x, y[, w])`, the batch itself without labels."""
    import keras

    return keras.utils.unpack_x_y_sample_weight(element)[0]


def labels(element: Any) -> Any:
    """The labels of a batch (or of an element_spec), None when it has none."""
    import keras

    return keras.utils.unpack_x_y_sample_weight(element)[1]


def pack(x: Any, y: Any = None, sample_weight: Any = None) -> Any:
    """A batch as fit() hands it to the model: x alone when there is no y (`pack_x_y_sample_weight`)."""
    import keras

    return keras.utils.pack_x_y_sample_weight(x, y, sample_weight)


def why_labels_needed(model: Any) -> str | None:
    """Why `model` cannot train without labels, or None when it can: Keras' own train_step computes the compiled
    loss from y, so a model with a compiled loss and neither its own train_step nor compute_loss needs them. A
    model that computes its loss itself (its own train_step or compute_loss, or add_loss without a compiled
    loss) trains on features only."""
    import keras

    cls = type(model)
    own_step = cls.train_step is not keras.Model.train_step
    own_loss = getattr(cls, "compute_loss", None) is not getattr(keras.Model, "compute_loss", None)
    if own_step or own_loss or getattr(model, "loss", None) is None:
        return None
    return "the model uses Keras' own train_step with a compiled loss, which needs labels"


def label_problem(spec: Any, model: Any) -> tuple[str, str] | None:
    """What keeps a dataset with element_spec `spec` from training `model`, as (kind, why), or None when nothing
    does: ("no_labels", why) for features only where the model needs labels (`why_labels_needed`; a model not
    built yet cannot tell), ("unbatched", "") when every label is a scalar. The script and the workload file word
    it each for their own user."""
    import tensorflow as tf

    if not has_labels(spec):  # features only: a model whose own train_step reads the batch trains on them
        why = why_labels_needed(model) if model is not None else "the model is not built yet"
        return ("no_labels", why) if why is not None else None
    shapes = [s.shape for s in tf.nest.flatten(labels(spec)) if hasattr(s, "shape")]
    return ("unbatched", "") if shapes and all(s.rank == 0 for s in shapes) else None
