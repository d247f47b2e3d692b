"""Automatic fixes a run can apply (run settings `fix_head` and `drop_remainder`).

Both fixes change what the user's workload built, never the file: the run
records the setting, so the report can say "the head was cast to float32 by
tfturbo" and the user can make the same change in their code (the matching
findings carry that code).
"""

from __future__ import annotations

import sys
from typing import Any

from tfturbo.errors import UserError

from .diagnostics.dataset_audit import fixed_shape, sample_shapes
from .diagnostics.model_audit import SIXTEEN_BIT, compute_dtype, output_layers

# Batches read to find the fixed size of a varying dimension.
PAD_SAMPLE_BATCHES = 256


def float32_head(model: Any) -> Any:
    """A copy of a Sequential/Functional `model` whose 16-bit output layers compute in float32.

    The copy has the same weights (a mixed policy keeps variables in float32,
    so only the compute dtype changes) and is compiled with the same
    optimizer, loss and metrics. A model whose head is already float32 is
    returned unchanged.
    """
    import keras

    heads = [layer for layer in output_layers(model) if compute_dtype(layer) in SIXTEEN_BIT]
    if not heads:
        if not output_layers(model) and not isinstance(model, keras.Sequential):
            raise UserError("--fix-head works on Sequential and Functional models only",
                            'create the output layer with dtype="float32" in your model')
        return model
    head_ids = set(map(id, heads))

    def clone(layer):
        config = layer.get_config()
        if id(layer) in head_ids:
            config["dtype"] = "float32"
        return layer.__class__.from_config(config)

    fixed = keras.models.clone_model(model, clone_function=clone)
    fixed.set_weights(model.get_weights())
    if model.compiled:
        fixed.compile_from_config(model.get_compile_config())
    return fixed


def drop_partial_batches(ds: Any, batch_size: int) -> Any:
    """`ds` with every batch exactly `batch_size` examples of one fixed shape.

    The partial last batch is dropped (`unbatch().batch(drop_remainder=True)`).
    Dimensions that vary between batches (sequences padded per batch) are
    padded to one fixed size: the longest seen in the first batches, rounded up
    to a multiple of 8; a longer example later on is cut to that size (logged
    to stderr), since a new size would make XLA compile again.
    """
    import tensorflow as tf

    spec = tf.nest.flatten(ds.element_spec)
    if all(s.shape.is_fully_defined() for s in spec):
        return ds  # already one shape (batched with drop_remainder=True)
    if all(s.shape[1:].is_fully_defined() for s in spec):
        return ds.unbatch().batch(batch_size, drop_remainder=True)
    sample = sample_shapes(ds, PAD_SAMPLE_BATCHES)
    targets = [fixed_shape(sample, j) for j in range(len(spec))]
    if not sample.complete:
        print(f"tfturbo --drop-remainder: varying dimensions padded to {targets} (the longest of the first "
              f"{len(sample.shapes)} batches, rounded up); longer examples are cut to that size",
              file=sys.stderr)
    structure = ds.element_spec
    padded = tf.nest.pack_sequence_as(structure, [tf.TensorShape(t) for t in targets])
    examples = ds.unbatch().map(lambda *el: _cut(el if len(el) > 1 else el[0], structure, targets))
    return examples.padded_batch(batch_size, padded_shapes=padded, drop_remainder=True)


def _cut(element: Any, structure: Any, targets: list[list[int]]) -> Any:
    import tensorflow as tf

    flat = tf.nest.flatten(element)
    cut = [t[tuple(slice(0, n) for n in target)] if target else t for t, target in zip(flat, targets)]
    return tf.nest.pack_sequence_as(structure, cut)

