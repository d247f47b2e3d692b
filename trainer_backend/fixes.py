"""Automatic fixes a run can apply (run settings `fix_head` and `drop_remainder`).

Both fixes change what the user's workload built, never the file: the run
records the setting, so the report can say "the head was cast to float32 by
tfturbo" and the user can make the same change in their code (the matching
findings carry that code). Neither depends on serialising the model (no
`get_config()`, no cloning), and a fix that cannot be applied raises
`FixNotApplied`: the run goes on without it and says so.
"""

from __future__ import annotations

import sys
from typing import Any

from .diagnostics.dataset_audit import fixed_shape, sample_shapes
from .diagnostics.model_audit import SIXTEEN_BIT, compute_dtype, layer_path, output_layers

# Batches read to find the fixed size of a varying dimension.
PAD_SAMPLE_BATCHES = 256


class FixNotApplied(Exception):
    """An automatic fix could not be applied to this model; the run goes on without it (`str()` says why)."""


def float32_head(model: Any, input_spec: Any = None) -> list[str]:
    """Make the 16-bit output layer(s) of `model` compute in float32, in place; the layers changed.

    Only each head layer's dtype policy changes (`layer.dtype_policy = "float32"`),
    so it works on any model — Sequential, Functional, subclassed, custom layers
    without `get_config()` — and keeps every weight, the optimizer and the
    metrics (a mixed policy keeps variables in float32 already). The caller
    compiles again so the training function is traced anew. Sequential and
    Functional heads are read from the graph; a subclassed model's head is the
    last layer its `call()` runs on a zero batch shaped like `input_spec` (the
    training data's features spec). A head that is already float32 is left
    alone ([]). Raises `FixNotApplied` (and changes nothing) when no head can
    be found or the model still returns 16-bit outputs with it in float32.
    """
    import keras

    heads = output_layers(model)
    subclassed = not heads
    if subclassed:
        heads = _last_called_layer(model, input_spec)
    sixteen = [layer for layer in heads if compute_dtype(layer) in SIXTEEN_BIT]
    if not sixteen:
        return []
    before = {id(layer): layer.dtype_policy for layer in sixteen}
    for layer in sixteen:
        layer.dtype_policy = keras.DTypePolicy("float32")
    if subclassed:
        still = sorted(d for d in _output_dtypes(model, input_spec) if d in SIXTEEN_BIT)
        if still:
            for layer in sixteen:
                layer.dtype_policy = before[id(layer)]
            raise FixNotApplied(f"the model still returns {', '.join(still)} outputs with its last layer "
                                f"{layer_path(sixteen[-1])!r} in float32: its call() computes after that layer")
    model.train_function = model.test_function = model.predict_function = None
    return [layer_path(layer) for layer in sixteen]


def zero_batch(input_spec: Any, batch: int = 2) -> Any:
    """Zeros shaped like a dataset's features spec (unknown sizes as `batch`): a forward pass that reads
    no data, so the data order of the run does not depend on it."""
    import tensorflow as tf

    def zeros(spec):
        shape = [batch if d is None else d for d in spec.shape]
        if spec.dtype == tf.string:
            return tf.fill(shape, "")
        return tf.zeros(shape, spec.dtype)

    return tf.nest.map_structure(zeros, input_spec)


def _last_called_layer(model: Any, input_spec: Any) -> list[Any]:
    """[the last leaf layer the model's call() runs], found by recording Layer.__call__ on a zero batch."""
    import keras

    if input_spec is None:
        raise FixNotApplied("a subclassed model's head is found by calling it, and no input spec was given")
    called: list[Any] = []
    original = keras.layers.Layer.__call__

    def recording(layer, *args, **kwargs):
        called.append(layer)
        return original(layer, *args, **kwargs)

    keras.layers.Layer.__call__ = recording
    try:
        model(zero_batch(input_spec), training=False)
    except Exception as exc:  # the model cannot be called on zeros: say so, do not fail the run
        raise FixNotApplied(f"calling the model on a zero batch to find its last layer raised "
                            f"{type(exc).__name__}: {exc}") from exc
    finally:
        keras.layers.Layer.__call__ = original
    own = {id(layer) for layer in model._flatten_layers(include_self=False)}
    leaves = [layer for layer in called if id(layer) in own and not layer._flatten_layers(include_self=False)]
    if not leaves:
        raise FixNotApplied(f"model {model.name!r} calls no layer: its output comes from its own call()")
    return [leaves[-1]]


def _output_dtypes(model: Any, input_spec: Any) -> set[str]:
    import keras

    outputs = keras.tree.flatten(model(zero_batch(input_spec), training=False))
    return {str(keras.backend.standardize_dtype(o.dtype)) for o in outputs}


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


def _cut(element: Any, structure: Any, targets: list[list[int | None]]) -> Any:
    import tensorflow as tf

    flat = tf.nest.flatten(element)
    cut = [t[tuple(slice(0, n) for n in target)] if target else t for t, target in zip(flat, targets)]
    return tf.nest.pack_sequence_as(structure, cut)

