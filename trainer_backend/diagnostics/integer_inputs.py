"""Integer-valued data (token ids, category indices, counts) that a 16-bit policy rounds before it is used.

A model whose `keras.Input(shape=(maxlen,))` is float32 (the default) and whose
first layer is a custom one (a token-and-position embedding, as keras-io
writes it) or a lookup: the layer autocasts its float input to its 16-bit
compute dtype *before* its Embedding casts to int32. float16 holds every
integer exactly only up to 2,048, bfloat16 up to 256: under mixed_float16 id
19999 becomes 20000 (`indices[..] = 20000 is not in [0, 20000)`, the run dies),
under mixed_bfloat16 12345 becomes 12352 and different tokens silently merge
(validation accuracy fell from 0.975 to 0.81 on a text transformer).
An Embedding fed directly is safe (it does not autocast and casts to int32).

The check reads a few sample batches: an input component that reaches the
model as floats (a float tensor, or integers a float `Input` converts) whose
values are all whole numbers beyond the 16-bit dtype's exact-integer range, then
finds the layers the model calls on that very tensor (recorded on the sample
batch), and flags those that autocast to 16-bit and hold an Embedding or a
lookup (or are the user's own layers). `--fix-int-inputs` (`float32_id_layers`)
makes those layers compute in float32, so the ids reach their
Embedding exact; the fix in code is an integer Input or a cast in the pipeline.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tfturbo.findings import INTEGER_INPUT_16BIT, Finding

from .model_audit import SIXTEEN_BIT, compute_dtype, layer_path

EXACT_INTEGERS = {"float16": 2048, "bfloat16": 256}  # every whole number up to this is exact in the dtype
_LOOKUPS = ("Embedding", "IntegerLookup", "StringLookup", "Hashing", "CategoryEncoding", "Discretization",
            "HashedCrossing")


def integer_components(model: Any, batch_x: Any, dtype: str) -> list[tuple[int, np.ndarray]]:
    """(flat index, values) of each input component holding only whole numbers beyond `dtype`'s exact integer
    range that reaches the model as floats: a float tensor, or integers the model's float `Input` converts."""
    import keras

    limit = EXACT_INTEGERS.get(dtype)
    if limit is None:
        return []
    declared = [str(getattr(t, "dtype", "")) for t in (getattr(model, "inputs", None) or [])]
    out = []
    for i, t in enumerate(keras.tree.flatten(batch_x)):
        data_dtype = str(getattr(t, "dtype", ""))
        as_float = "float" in data_dtype or ("int" in data_dtype and i < len(declared) and "float" in declared[i])
        if not as_float:
            continue
        values = np.asarray(t, dtype=np.float64)
        if values.size and np.all(np.isfinite(values)) and np.all(values == np.round(values)) \
                and np.abs(values).max() > limit:
            out.append((i, values))
    return out


def rounded(values: np.ndarray, dtype: str) -> np.ndarray:
    """The values as the 16-bit dtype holds them."""
    import tensorflow as tf

    return tf.cast(tf.cast(values, getattr(tf, dtype)), tf.float64).numpy()


def consumers(model: Any, batch_x: Any, indices: list[int]) -> dict[int, list[Any]]:
    """{flat input index: [layers called on that input tensor itself]}, recorded by calling the model once.

    The call may fail on the very hazard it looks for: an id rounded past the vocabulary's end under
    bfloat16 (1999 becomes 2000 in a table of 2,000: `InvalidArgumentError: indices[..] = 2000 is not in
    [0, 2000)`). Each layer is recorded before it runs (a Functional model's are read from its graph), so
    the layers found are kept and the audit reports the finding instead of dying on it."""
    import keras
    import tensorflow as tf

    flat = [tf.convert_to_tensor(t) for t in keras.tree.flatten(batch_x)]
    x = keras.tree.pack_sequence_as(batch_x, flat) if keras.tree.is_nested(batch_x) else flat[0]
    wanted = {id(flat[i]): i for i in indices}
    found: dict[int, list[Any]] = {i: [] for i in indices}
    original = keras.layers.Layer.__call__

    def recording(layer, *args, **kwargs):
        for a in keras.tree.flatten((args, kwargs)):
            if id(a) in wanted and layer is not model and layer not in found[wanted[id(a)]]:
                found[wanted[id(a)]].append(layer)
        return original(layer, *args, **kwargs)

    keras.layers.Layer.__call__ = recording
    failure: Exception | None = None
    try:
        model(x, training=False)
    except Exception as exc:  # noqa: BLE001 - the rounded ids failed the lookup: the layers reached are recorded
        failure = exc
    finally:
        keras.layers.Layer.__call__ = original
    if not any(found.values()):  # a Functional/Sequential model re-creates its inputs: read its graph instead
        for i in indices:
            found[i] = _graph_consumers(model, i)
    if failure is not None and not any(found.values()):
        raise failure  # not the lookup of an input's ids: an error this check cannot explain
    return found


def _graph_consumers(model: Any, index: int) -> list[Any]:
    inputs = list(getattr(model, "inputs", None) or [])
    if index >= len(inputs):
        return []
    target = inputs[index]
    out = []
    for layer in getattr(model, "layers", []):
        for node in getattr(layer, "_inbound_nodes", []):
            if any(t is target for t in getattr(node, "input_tensors", [])):
                out.append(layer)
    return out


def at_risk(layer: Any) -> bool:
    """The layer casts its float input to 16-bit before an Embedding or lookup (or is the user's own layer)."""
    if compute_dtype(layer) not in SIXTEEN_BIT or not getattr(layer, "autocast", True):
        return False
    if type(layer).__name__ in _LOOKUPS:
        return False  # these read their input as integers themselves (no autocast on ids)
    inner = [type(sub).__name__ for sub in layer._flatten_layers(include_self=False)] \
        if hasattr(layer, "_flatten_layers") else []
    own = not type(layer).__module__.startswith("keras")
    return any(name in _LOOKUPS for name in inner) or own


def findings(model: Any, batches: list[Any], input_fix: str) -> list[Finding]:
    """INTEGER_INPUT_16BIT for each layer that rounds integer-valued float inputs to 16-bit. `batches`: a few
    input batches (x only); `input_fix` the exact code change for this workload (`advice.integer_input_fix`)."""
    if not batches:
        return []
    dtypes = {compute_dtype(layer) for layer in getattr(model, "layers", [])} & set(SIXTEEN_BIT)
    dtype = "bfloat16" if "bfloat16" in dtypes else "float16" if "float16" in dtypes else None
    if dtype is None:
        return []
    import keras

    merged: dict[int, np.ndarray] = {}
    for batch in batches:
        for i, values in integer_components(model, batch, dtype):
            merged[i] = values if i not in merged else np.concatenate([merged[i].ravel(), values.ravel()])
    if not merged:
        return []
    users = consumers(model, batches[0], sorted(merged))
    out = []
    n_inputs = len(keras.tree.flatten(batches[0]))
    for i, values in merged.items():
        layers = [layer for layer in users.get(i, []) if at_risk(layer)]
        if not layers:
            continue
        flat = values.ravel()
        changed = rounded(flat, dtype) != flat
        share = float(changed.mean())
        example = ""
        if changed.any():
            v = flat[changed][0]
            example = f", e.g. {int(v)} → {int(rounded(np.array([v]), dtype)[0])}"
        what = "the input" if n_inputs == 1 else f"input {i}"
        data_dtype = str(getattr(__import__("keras").tree.flatten(batches[0])[i], "dtype", ""))
        via = "through the model's float keras.Input" if "int" in data_dtype else "in a float tensor"
        names = ", ".join(f"{type(layer).__name__} {layer_path(layer)!r}" for layer in layers)
        top = int(np.abs(flat).max())
        past = int(rounded(np.array([float(top)]), dtype)[0])  # the largest id as the dtype holds it
        merge = "distinct ids merge" + (f", and the largest rounds up ({top:,} → {past:,}): an id past the "
                                        "vocabulary's end fails the run" if past > top else "")
        out.append(Finding(
            INTEGER_INPUT_16BIT,
            f"{what} holds whole numbers up to {top:,} (token ids, indices or counts) {via}, "
            f"and {names} casts it to {dtype} before its lookup: {dtype} is exact only up to "
            f"{EXACT_INTEGERS[dtype]:,}, so {share:.0%} of the sampled values change{example} "
            f"({'ids off the end of the vocabulary fail the run' if dtype == 'float16' else merge})",
            fix=input_fix, where=layer_path(layers[0]),
            data={"input": i, "dtype": dtype, "max_value": float(np.abs(flat).max()), "changed_share": share,
                  "layers": [layer_path(layer) for layer in layers]}))
    return out


def workload_findings(workload: Any, model: Any, batches: list[Any], features_spec: Any) -> list[Finding]:
    """`findings` with the fix written for this workload (`advice`): an int32 Input of the model's own input
    shape (Sequential/Functional) or a cast where the data is made."""
    from .advice import integer_input_fix, shape_of

    first = features_spec[0] if isinstance(features_spec, (tuple, list)) else features_spec
    dims = tuple(d if d is not None else "None" for d in getattr(first, "shape", (None,))[1:])
    return findings(model, batches, integer_input_fix(dims, shape_of(workload, model)))


def float32_id_layers(model: Any, input_spec: Any) -> list[str]:
    """--fix-int-inputs: the layers that would round a float input to 16-bit before their lookup compute in
    float32 instead (in place, weights kept, as --fix-head does); the layers changed. Found on a zero batch
    shaped like `input_spec` (no data is read, so the data order stays the run's); the setting is on only where
    the audit saw integer-valued inputs. The caller compiles again."""
    import keras

    from ..fixes import zero_batch

    zeros = zero_batch(input_spec)
    declared = [str(getattr(t, "dtype", "")) for t in (getattr(model, "inputs", None) or [])]
    floats = [i for i, t in enumerate(keras.tree.flatten(zeros))
              if "float" in str(t.dtype) or (i < len(declared) and "float" in declared[i])]
    if not floats:
        return []
    changed = []
    for layers in consumers(model, zeros, floats).values():
        for layer in layers:
            if at_risk(layer):
                layer.dtype_policy = keras.DTypePolicy("float32")
                changed.append(layer_path(layer))
    if changed:
        model.train_function = model.test_function = model.predict_function = None
    return changed
