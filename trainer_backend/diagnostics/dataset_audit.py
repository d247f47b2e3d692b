"""Checks of the training data: batch size, shapes under XLA, and what the pipeline is made of.

XLA compiles one program per distinct input shape, so a dataset whose last
batch is smaller, or whose sequences are padded per batch, makes it compile
again and again (checklist step 7). The element_spec says which dimensions
*may* vary (`None`); a few sampled batches say which ones *do*, with the
values seen — that is what a user needs to pick a fixed size.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from tfturbo.findings import BATCH_NOT_MULTIPLE_OF_8, DYNAMIC_SHAPE, PARTIAL_LAST_BATCH, Finding

from .model_audit import ALIGN, round_up

SAMPLE_BATCHES = 256
SAMPLE_BUDGET_S = 5.0  # reading stops after this long (a slow pipeline's audit stays quick)
_TOP_NAMES = {2: ("x", "y"), 3: ("x", "y", "sample_weight")}


def batch_findings(batch_size: int, policy: str, shape: Any = None) -> list[Finding]:
    """BATCH_NOT_MULTIPLE_OF_8 under a 16-bit policy, its fix where this workload sets its batch size."""
    from .advice import batch_size_fix

    if policy == "float32" or batch_size % ALIGN == 0:
        return []
    better = round_up(batch_size)
    return [Finding(
        BATCH_NOT_MULTIPLE_OF_8,
        f"batch size {batch_size} is not a multiple of {ALIGN}: 16-bit matmuls over the batch "
        f"dimension fall back to slower kernels; use {better} (or {better - ALIGN})" if better > ALIGN else
        f"batch size {batch_size} is not a multiple of {ALIGN}: use {better}",
        fix=batch_size_fix(better, shape),
        where="batch size", data={"batch_size": batch_size, "proposed": better})]


def components(element_spec: Any) -> list[tuple[str, Any]]:
    """(name, TensorSpec) of every tensor in a dataset element: x, x['tokens'], y, ..."""
    import keras

    top = _TOP_NAMES.get(len(element_spec)) if isinstance(element_spec, tuple) else None
    named = []
    for path, spec in keras.tree.flatten_with_path(element_spec):
        if top and path:
            head, rest = top[path[0]], path[1:]
        else:  # features only (a model trained without labels, `batch_parts`): the whole element is x
            head, rest = "x", path
        name = head + "".join(f"[{p!r}]" for p in rest)
        named.append((name, spec))
    return named


@dataclass
class ShapeSample:
    """Concrete shapes of sampled batches: shapes[i][j] is the shape of component j in batch i."""

    names: list[str]
    spec_shapes: list[tuple]
    shapes: list[list[tuple]] = field(default_factory=list)
    complete: bool = False  # every batch of one pass was seen (finite dataset)
    last: list[tuple] | None = None  # the last batch of a finite dataset

    def batch_sizes(self) -> list[int]:
        rows = self.shapes + ([self.last] if self.last else [])
        return [r[0][0] for r in rows if r and r[0]]


def sample_shapes(ds: Any, max_batches: int = SAMPLE_BATCHES, budget_s: float = SAMPLE_BUDGET_S) -> ShapeSample:
    """Shapes of the batches of one pass (up to `max_batches` or `budget_s` seconds of reading).

    A finite dataset that is not read to its end within the limits still has
    its last batch read (`skip`), since that is where a partial batch is.
    """
    import tensorflow as tf

    named = components(ds.element_spec)
    sample = ShapeSample(names=[n for n, _ in named], spec_shapes=[tuple(s.shape) for _, s in named])
    deadline = time.monotonic() + budget_s
    ended = True
    for element in ds.take(max_batches):
        sample.shapes.append([tuple(t.shape) for t in tf.nest.flatten(element)])
        if time.monotonic() > deadline:
            ended = False
            break
    else:
        ended = len(sample.shapes) < max_batches
    cardinality = int(ds.cardinality())
    if ended:
        sample.complete = True
    elif cardinality > len(sample.shapes):
        for element in ds.skip(cardinality - 1).take(1):
            sample.last = [tuple(t.shape) for t in tf.nest.flatten(element)]
        sample.complete = sample.last is not None
    return sample


@dataclass
class VaryingDim:
    component: str
    dim: int
    seen: list[int]
    spec_shape: tuple

    def describe(self) -> str:
        shape = ", ".join("batch" if i == 0 else ("None" if d is None else str(d))
                          for i, d in enumerate(self.spec_shape))
        values = self.seen if len(self.seen) <= 6 else [*self.seen[:3], "…", *self.seen[-2:]]
        what = "the batch dimension" if self.dim == 0 else f"dimension {self.dim}"
        return (f"{what} of {self.component} (shape [{shape}]) varies: {len(self.seen)} distinct "
                f"values seen ({', '.join(map(str, values))})")


def describe_varying(varying: list[VaryingDim]) -> list[str]:
    """One phrase per varying dimension, the batch dimension (shared by x and y) said once."""
    phrases = [v.describe() for v in varying if v.dim > 0]
    batch = [v for v in varying if v.dim == 0]
    if batch:
        sizes = sorted({s for v in batch for s in v.seen})
        phrases.append(f"the batch size varies ({', '.join(map(str, sizes))}): a partial last batch")
    return phrases


def varying_dims(sample: ShapeSample) -> list[VaryingDim]:
    """Dimensions whose size differs between sampled batches (the batch dimension included)."""
    rows = sample.shapes + ([sample.last] if sample.last else [])
    found = []
    for j, name in enumerate(sample.names):
        shapes = [row[j] for row in rows if j < len(row)]
        rank = max((len(s) for s in shapes), default=0)
        for d in range(rank):
            seen = sorted({s[d] for s in shapes if d < len(s)})
            if len(seen) > 1:
                found.append(VaryingDim(name, d, seen, sample.spec_shapes[j]))
    return found


def partial_batch_finding(sample: ShapeSample, batch_size: int, shape: Any = None) -> Finding | None:
    """PARTIAL_LAST_BATCH when a batch smaller than `batch_size` was seen."""
    sizes = sample.batch_sizes()
    small = sorted({s for s in sizes if s is not None and s < batch_size})
    if not small:
        return None
    return Finding(
        PARTIAL_LAST_BATCH,
        f"the training data yields batches of {', '.join(map(str, small))} besides {batch_size}: "
        "the partial last batch of each pass has a new shape, and XLA compiles a second program for it",
        fix=static_shape_fix(sample, batch_size, shape), where="train_ds batch dimension",
        data={"batch_size": batch_size, "partial_sizes": small})


def fixed_shape(sample: ShapeSample, component: int) -> list[int | None]:
    """Per-element shape (batch dim removed) that fits every sampled element, rounded up to multiples of 8."""
    rows = sample.shapes + ([sample.last] if sample.last else [])
    shapes = [row[component] for row in rows if component < len(row)]
    spec = sample.spec_shapes[component]
    target: list[int | None] = []
    for d in range(1, len(spec)):
        if spec[d] is not None:
            target.append(int(spec[d]))
        else:
            seen = [s[d] for s in shapes if d < len(s)]
            target.append(round_up(max(seen)) if seen else None)
    return target


def _padded_shapes_code(sample: ShapeSample) -> str:
    shapes = [fixed_shape(sample, j) for j in range(len(sample.names))]
    if sample.names and sample.names[0] == "x" and len(shapes) in (2, 3):
        return "(" + ", ".join(str(s) for s in shapes) + ")"
    return str(shapes)


def static_shape_fix(sample: ShapeSample, batch_size: int, shape: Any = None) -> str:
    """Code giving every batch one shape: fixed batch size, varying dimensions padded to one size; `shape`
    (`advice.WorkloadShape`) says where the training data is made and whether it is NumPy arrays."""
    from .advice import WorkloadShape, partial_batch_fix

    shape = shape or WorkloadShape()
    varying = [v for v in varying_dims(sample) if v.dim > 0]
    if not varying:
        return partial_batch_fix(batch_size, shape)
    longest = max(max(v.seen) for v in varying)
    length = max(t for j in range(len(sample.names)) for t in fixed_shape(sample, j) if t)
    ds = shape.dataset  # the script's own dataset variable (unbatched again: never batches of batches)
    return (f"# pad to one fixed size (the longest seen, {longest}, rounded up to a multiple of {ALIGN}), "
            f"{shape.data_place}:\n"
            f"{ds} = {ds}.unbatch().padded_batch({batch_size}, padded_shapes={_padded_shapes_code(sample)}, "
            "drop_remainder=True)\n"
            "# or pad to a few fixed buckets (one compilation each), on the unbatched examples:\n"
            f"# {ds} = examples.bucket_by_sequence_length(lambda x, y: tf.shape(x)[0], "
            f"bucket_boundaries=[{length // 4 + 1}, {length // 2 + 1}, {length + 1}], "
            f"bucket_batch_sizes=[{batch_size}] * 4, pad_to_bucket_boundary=True, drop_remainder=True)\n"
            "# or let tfturbo pad and drop the partial batch: tfturbo run ... --drop-remainder")


def dynamic_shape_findings(sample: ShapeSample, batch_size: int, shape: Any = None) -> list[Finding]:
    """DYNAMIC_SHAPE for each non-batch dimension that varies between batches."""
    findings = []
    for v in (v for v in varying_dims(sample) if v.dim > 0):
        findings.append(Finding(
            DYNAMIC_SHAPE,
            f"{v.describe()}: XLA compiles a new program for every new size",
            fix=static_shape_fix(sample, batch_size, shape), where=f"{v.component} dimension {v.dim}",
            data={"component": v.component, "dim": v.dim, "seen": v.seen,
                  "proposed": fixed_shape(sample, sample.names.index(v.component))[v.dim - 1]}))
    return findings


def xla_findings(ds: Any, batch_size: int, sample: ShapeSample | None = None, shape: Any = None) -> list[Finding]:
    """PARTIAL_LAST_BATCH and DYNAMIC_SHAPE for a training dataset that will run under XLA."""
    if sample is None and all(spec.shape.is_fully_defined() for _, spec in components(ds.element_spec)):
        return []  # every batch has the static shape of the spec: nothing to sample
    sample = sample or sample_shapes(ds)
    findings = []
    partial = partial_batch_finding(sample, batch_size, shape)
    if partial:
        findings.append(partial)
    findings.extend(dynamic_shape_findings(sample, batch_size, shape))
    return findings


def describe_spec(ds: Any) -> list[dict[str, Any]]:
    """The element_spec as rows {name, shape, dtype} for the audit document (None = may vary)."""
    return [{"name": name, "shape": list(spec.shape) if spec.shape.rank is not None else None,
             "dtype": spec.dtype.name} for name, spec in components(ds.element_spec)]


@dataclass
class PipelineOps:
    """The tf.data transformations a dataset is built from, read from its serialised graph."""

    ops: list[str]
    py_function: bool  # a map runs Python (tf.py_function / numpy_function): holds the GIL
    random_ops: list[str] = field(default_factory=list)  # random ops inside its functions (augmentation)

    def has(self, *names: str) -> bool:
        return any(op in names for op in self.ops)

    def randomness(self) -> str | None:
        """Why one pass may differ from the next (shuffle, random ops, Python code tfturbo cannot read), or None.

        A cache() after such a step would replay the first pass forever, so it decides whether caching is safe.
        """
        shuffles = [op for op in self.ops if "Shuffle" in op or "Random" in op]
        if shuffles:
            return f"the pipeline shuffles ({shuffles[0]})"
        if self.random_ops:
            return f"a map draws random numbers ({self.random_ops[0]})"
        if self.py_function:
            return "a map runs Python code (tf.py_function / numpy_function) that may be random"
        return None


def pipeline_ops(ds: Any) -> PipelineOps | None:
    """Dataset op names of `ds` (e.g. MapDataset, ParallelMapDatasetV2, PrefetchDataset), or None."""
    import tensorflow as tf

    try:
        serialized = tf.raw_ops.DatasetToGraphV2(input_dataset=ds._variant_tensor, external_state_policy=1)
        graph = tf.compat.v1.GraphDef()
        graph.ParseFromString(serialized.numpy())
    except Exception:  # noqa: BLE001 - a dataset that cannot be serialised: give the generic advice
        return None
    ops = [node.op for node in graph.node if "Dataset" in node.op]
    inner = {node.op for fn in graph.library.function for node in fn.node_def}
    return PipelineOps(ops=ops, py_function=bool(inner & {"PyFunc", "EagerPyFunc", "PyFuncStateless"}),
                       random_ops=sorted(op for op in inner if "Random" in op))
