"""The fixed validation set: the examples every run of a study validates on, read once and kept.

Why it exists (docs/MEASUREMENT.md, "The accuracy gate"):

- The gate pairs each example's result in B with the same example's in A. A
  validation pipeline that shuffles after `.cache()` without a seed (keras-io's
  translation Transformer), augments, or is batched at the run's batch size
  with `drop_remainder` gives each run other examples, or the same in another
  order. So the first run that validates reads its first `max_examples`
  examples once and writes them into the study's folder (`--val-set DIR`, a
  folder shared like the XLA cache); every later run of the study (every arm,
  every replicate) reads that file instead of its own pipeline. Each example
  also gets a content digest, written with the per-example results, so the
  gate pairs by content and refuses, saying so, where two runs validated on
  different examples (a run without the shared folder, a remote host).
- Keras needs a known number of batches: the set used to be rebuilt as
  `unbatch().take(N).batch(256).cache()`, whose cardinality is unknown, and
  Keras then averaged an extra empty step into each per-output loss
  (`val_label_loss` + `val_value_loss` read 1.364 where `val_loss` was 2.046).
  The set held in memory is batched into equal batches (`balanced_batch`; Keras
  averages each output's loss per batch, not per example, so a short last
  batch would count as much as a full one), and its cardinality is known.

Three shapes of validation data:

- "examples": every example has a fixed shape — kept example by example and
  batched at `balanced_batch`, independent of the run's batch size;
- "batches": a dimension varies between batches (padded text) — the
  workload's own whole batches, until `max_examples` (or `max_batches`);
- "stream": ragged or sparse tensors, which cannot be written to a file — the
  workload's own batches, counted, with no digests (the gate pairs by position).
"""

from __future__ import annotations

import hashlib
import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import numpy as np

EVAL_BATCH = 256  # at most this many examples per validation batch (examples mode)
MAX_FILE_BYTES = 1 << 30  # a larger set is kept in memory only (paired by content digest), not written
EXAMPLES, BATCHES, STREAM = "examples", "batches", "stream"


@dataclass
class FixedSet:
    """The examples a run validates on and how they were obtained."""

    dataset: Any  # tf.data.Dataset of batches with a known cardinality: Keras' validation_data and the gate's
    mode: str  # EXAMPLES | BATCHES | STREAM
    examples: int
    capped: bool  # the workload has more validation examples than were kept (the `max_examples` cap)
    digests: np.ndarray | None  # one uint64 per example, in order (None: STREAM)
    batch: int | None  # the evaluation batch size (EXAMPLES), else None (the workload's own batches)
    shared: str | None = None  # "written" or "read": the study's file this run wrote or read; None: its own
    note: str | None = None  # why the study's file was not used, when it was asked for

    def digest(self) -> str | None:
        """One digest of the whole set, independent of the examples' order."""
        if self.digests is None:
            return None
        return hashlib.blake2b(np.sort(self.digests).tobytes(), digest_size=8).hexdigest()

    def describe(self) -> dict[str, Any]:
        return {"examples": self.examples, "mode": self.mode, "capped": self.capped, "digest": self.digest(),
                "shared": self.shared, "note": self.note}


def fixed_set(val_ds: Any, max_examples: int, max_batches: int | None = None, folder: str | None = None) -> FixedSet:
    """The run's fixed validation set: the study's file in `folder` when it exists and fits this data, else the
    first `max_examples` examples of `val_ds`, written there for the runs after this one."""
    mode = _mode(val_ds)
    if mode == STREAM:
        return _stream(val_ds, max_examples, max_batches)
    path = Path(folder) / file_name(mode, max_examples, max_batches) if folder else None
    note = None
    if path is not None and path.exists():
        try:
            read = _read(path, val_ds, mode)
            read.shared = "read"
            return read
        except (OSError, ValueError, KeyError) as exc:
            note = f"the study's validation set {path.name} was not used ({exc}); this run validated on its own"
            print(f"trainer_backend: {note}", file=sys.stderr)
    leaves, batch_sizes, capped = (_collect_examples if mode == EXAMPLES else _collect_batches)(
        val_ds, max_examples, max_batches)
    digests = _digests(leaves, batch_sizes)
    made = _build(val_ds.element_spec, mode, leaves, batch_sizes, capped, digests)
    made.note = note
    if path is not None and note is None:
        made.shared, made.note = _write(path, mode, leaves, batch_sizes, capped, digests)
        if made.shared == "read":  # another run of the study wrote it first: validate on that one
            return fixed_set(val_ds, max_examples, max_batches, folder)
    return made


def file_name(mode: str, max_examples: int, max_batches: int | None) -> str:
    """The study's file for a set of this shape and size: runs that ask for more examples get a file of their own."""
    if mode == EXAMPLES:
        return f"first-{max_examples}.npz"
    return f"first-{max_examples}-batches{f'-{max_batches}' if max_batches else ''}.npz"


def balanced_batch(n: int) -> int:
    """The evaluation batch: at most EVAL_BATCH examples, the batches as equal as they can be (300 examples:
    two of 150, not 256 and 44), since Keras weighs each batch of a per-output loss equally."""
    return max(1, math.ceil(n / max(1, math.ceil(n / EVAL_BATCH))))


# ------------------------------------------------------------------------------ reading the workload's data

def _mode(val_ds: Any) -> str:
    import tensorflow as tf

    specs = tf.nest.flatten(val_ds.element_spec)
    if not all(isinstance(s, tf.TensorSpec) for s in specs):
        return STREAM
    per_example = tf.nest.flatten(val_ds.unbatch().element_spec)
    return EXAMPLES if all(s.shape.is_fully_defined() for s in per_example) else BATCHES


def _numpy(tensor: Any) -> np.ndarray:
    """A tensor as NumPy; strings as fixed-width bytes (an .npz holds no Python objects)."""
    value = tensor.numpy() if hasattr(tensor, "numpy") else np.asarray(tensor)
    value = np.asarray(value)
    if value.dtype.kind == "O":
        value = np.array(value.tolist(), dtype=bytes)
    return value


def _collect_examples(val_ds: Any, max_examples: int, _max_batches: int | None) -> tuple[list[np.ndarray], None, bool]:
    """The first `max_examples` examples, leaf by leaf; capped when there was one more."""
    import tensorflow as tf

    parts: list[list[np.ndarray]] | None = None
    for batch in val_ds.unbatch().take(max_examples + 1).batch(1024):
        leaves = [_numpy(t) for t in tf.nest.flatten(batch)]
        parts = [[] for _ in leaves] if parts is None else parts
        for part, leaf in zip(parts, leaves):
            part.append(leaf)
    if parts is None:
        raise ValueError("the validation data is empty")
    leaves = [_concatenate(p) for p in parts]
    capped = len(leaves[0]) > max_examples
    return [leaf[:max_examples] for leaf in leaves], None, capped


def _concatenate(arrays: list[np.ndarray]) -> np.ndarray:
    if arrays[0].dtype.kind == "S":  # byte strings of different widths: the widest
        width = max(a.dtype.itemsize for a in arrays)
        arrays = [a.astype(f"S{max(width, 1)}") for a in arrays]
    return np.concatenate(arrays)


def _collect_batches(val_ds: Any, max_examples: int, max_batches: int | None) -> tuple[list[np.ndarray], list[int], bool]:
    """The workload's own whole batches until `max_examples` examples (or `max_batches` batches)."""
    import tensorflow as tf

    leaves: list[np.ndarray] = []  # batch after batch, leaf after leaf
    sizes: list[int] = []
    capped = False
    for batch in val_ds:
        if sum(sizes) >= max_examples or (max_batches and len(sizes) >= max_batches):
            capped = True
            break
        flat = [_numpy(t) for t in tf.nest.flatten(batch)]
        leaves += flat
        sizes.append(len(flat[0]))
    if not sizes:
        raise ValueError("the validation data is empty")
    return leaves, sizes, capped


# ------------------------------------------------------------------------------ digests

def _row_bytes(leaf: np.ndarray, i: int) -> bytes:
    row = leaf[i]
    if leaf.dtype.kind == "S":  # each string by its own bytes, not the array's padded width
        return b"".join(len(s).to_bytes(4, "little") + s for s in np.atleast_1d(row).ravel().tolist())
    return np.ascontiguousarray(row).tobytes() + str(leaf.dtype).encode() + str(np.shape(row)).encode()


def _digests(leaves: list[np.ndarray], batch_sizes: list[int] | None) -> np.ndarray:
    """One 64-bit content digest per example, over every leaf (inputs, labels, weights)."""
    out = []
    for rows in _example_rows(leaves, batch_sizes):
        h = hashlib.blake2b(digest_size=8)
        for leaf, i in rows:
            h.update(_row_bytes(leaf, i))
        out.append(int.from_bytes(h.digest(), "little"))
    return np.asarray(out, dtype=np.uint64)


def _example_rows(leaves: list[np.ndarray],
                  batch_sizes: list[int] | None) -> Iterator[list[tuple[np.ndarray, int]]]:
    """For each example, its (leaf array, row) of every leaf."""
    if batch_sizes is None:
        for i in range(len(leaves[0])):
            yield [(leaf, i) for leaf in leaves]
        return
    per = len(leaves) // len(batch_sizes)
    for b, size in enumerate(batch_sizes):
        batch = leaves[b * per:(b + 1) * per]
        for i in range(size):
            yield [(leaf, i) for leaf in batch]


# ------------------------------------------------------------------------------ the dataset Keras validates on

def _build(spec: Any, mode: str, leaves: list[np.ndarray], batch_sizes: list[int] | None, capped: bool,
           digests: np.ndarray) -> FixedSet:
    import tensorflow as tf

    flat_spec = tf.nest.flatten(spec)
    if mode == EXAMPLES:
        n = len(leaves[0])
        tensors = [tf.constant(leaf, dtype=s.dtype) for leaf, s in zip(leaves, flat_spec)]
        batch = balanced_batch(n)
        dataset = tf.data.Dataset.from_tensor_slices(tf.nest.pack_sequence_as(spec, tensors)).batch(batch)
        return FixedSet(dataset, mode, n, capped, digests, batch)
    assert batch_sizes is not None, "a set of whole batches keeps each batch's size"
    per = len(flat_spec)
    batches = [leaves[b * per:(b + 1) * per] for b in range(len(batch_sizes))]

    def generate() -> Iterator[Any]:
        for batch in batches:
            yield tf.nest.pack_sequence_as(spec, [tf.constant(a, dtype=s.dtype) for a, s in zip(batch, flat_spec)])

    dataset = tf.data.Dataset.from_generator(generate, output_signature=spec).apply(
        tf.data.experimental.assert_cardinality(len(batches)))
    return FixedSet(dataset, mode, sum(batch_sizes), capped, digests, None)


def _stream(val_ds: Any, max_examples: int, max_batches: int | None) -> FixedSet:
    """Ragged or sparse batches: the workload's own, counted once, so the set's cardinality is known."""
    import tensorflow as tf

    count, examples = 0, 0
    capped = False
    for batch in val_ds:
        if examples >= max_examples or (max_batches and count >= max_batches):
            capped = True
            break
        first = tf.nest.flatten(batch)[0]
        examples += int(first.nrows() if hasattr(first, "nrows") else first.shape[0])
        count += 1
    if not count:
        raise ValueError("the validation data is empty")
    dataset = val_ds.take(count).apply(tf.data.experimental.assert_cardinality(count)).cache()
    return FixedSet(dataset, STREAM, examples, capped, None, None,
                    note="ragged or sparse validation tensors are not written to the study's folder: "
                         "the examples are paired by position")


# ------------------------------------------------------------------------------ the study's file

def _write(path: Path, mode: str, leaves: list[np.ndarray], batch_sizes: list[int] | None, capped: bool,
           digests: np.ndarray) -> tuple[str | None, str | None]:
    """("written", None) when this run wrote the study's file, ("read", None) when another run did first, or
    (None, why) when it cannot be written. The first writer wins: a run that finds the file made while it read
    its data validates on that one, so every run of the study has the same examples."""
    size = sum(leaf.nbytes for leaf in leaves)
    if size > MAX_FILE_BYTES:
        return None, (f"the validation set ({size / 2**20:,.0f} MiB) is larger than the "
                      f"{MAX_FILE_BYTES / 2**20:,.0f} MiB tfturbo writes: each run reads its own, paired by content")
    arrays: dict[str, np.ndarray] = {"mode": np.array(mode), "capped": np.array(capped),
                                     "n_leaves": np.array(len(leaves) if batch_sizes is None
                                                          else len(leaves) // len(batch_sizes)),
                                     "digest": digests}
    if batch_sizes is not None:
        arrays["batch_sizes"] = np.asarray(batch_sizes)
    for j, leaf in enumerate(leaves):
        arrays[f"leaf_{j}"] = leaf
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        with open(tmp, "wb") as f:
            np.savez(f, allow_pickle=False, **arrays)
        try:
            os.link(tmp, path)  # atomic, and refused when another run wrote it first
        except FileExistsError:
            return "read", None
        finally:
            tmp.unlink(missing_ok=True)
    except OSError as exc:
        return None, f"the validation set could not be written to {path.parent} ({exc.strerror or exc})"
    return "written", None


def _read(path: Path, val_ds: Any, mode: str) -> FixedSet:
    """The study's file as this run's set, refused (ValueError) where it does not fit this run's data."""
    import tensorflow as tf

    spec = val_ds.element_spec
    flat_spec = tf.nest.flatten(spec)
    shapes = [s.shape for s in tf.nest.flatten(val_ds.unbatch().element_spec)] if mode == EXAMPLES else None
    with np.load(path) as data:
        if str(data["mode"]) != mode or int(data["n_leaves"]) != len(flat_spec):
            raise ValueError("it holds data of another structure")
        count = sum(1 for k in data.files if k.startswith("leaf_"))
        leaves = [data[f"leaf_{j}"] for j in range(count)]
        batch_sizes = [int(s) for s in data["batch_sizes"]] if "batch_sizes" in data.files else None
        capped, digests = bool(data["capped"]), np.asarray(data["digest"], dtype=np.uint64)
    per = len(flat_spec)
    for j, leaf in enumerate(leaves):
        expected = flat_spec[j % per].dtype
        if (expected == tf.string) != (leaf.dtype.kind == "S") or (
                expected != tf.string and tf.as_dtype(leaf.dtype) != expected):
            raise ValueError(f"it holds {leaf.dtype} where this run's data has {expected.name}")
        if shapes is not None and tuple(leaf.shape[1:]) != tuple(shapes[j]):
            raise ValueError(f"it holds examples of shape {tuple(leaf.shape[1:])} where this run's have "
                             f"{tuple(shapes[j])}")
    return _build(spec, mode, leaves, batch_sizes, capped, digests)
