"""Automatic tf.data fixes for the training dataset (run setting `input_fixes`, `--input-fixes`).

They change the dataset a workload returned (a workload file's or builtin's
`make_datasets`, a training script's `fit()` data), never the user's file, and
each is chosen from the pipeline's own ops (`dataset_audit.pipeline_ops`):

- `tf.data.Options`: autotune on, `map_parallelization` and `parallel_batch`
  on. These are TensorFlow's defaults, so they change something only where
  the pipeline turned them off; and tf.data parallelizes only *stateless*
  maps, so a `tf.numpy_function` map stays sequential (only the code can fix
  that: `map(..., num_parallel_calls=tf.data.AUTOTUNE)`).
- `prefetch(tf.data.AUTOTUNE)` appended when the pipeline does not end in one,
  so the input overlaps the training step.
- `cache()` only when one pass is finite, of a known size within
  CACHE_MEMORY_SHARE of the available host memory, and nothing upstream is
  random (shuffle, random ops, Python code): a cache replays the first pass,
  so it would freeze a shuffle or an augmentation.
- `deterministic=False` is never set: it lets a parallel map hand elements
  over out of order, so the data order would change from run to run (the two
  arms of a trial would no longer see the same order, and a run could not be
  reproduced). The finding says so; it is the user's choice to make in code.

NumPy-array inputs need no fix: tfturbo already turns them into an in-memory
dataset that is shuffled, batched and prefetched (`workload._arrays_to_dataset`),
so the finding says so and nothing is changed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tfturbo.findings import INPUT_FIXES_APPLIED, Finding

from .diagnostics.dataset_audit import PipelineOps, pipeline_ops
from .hardware import available_memory

# The cache may take at most this share of the host memory available when the run starts.
CACHE_MEMORY_SHARE = 0.25
OPTIONS = ("autotune.enabled", "experimental_optimization.map_parallelization",
           "experimental_optimization.parallel_batch")
NOT_DETERMINISTIC = ("not set: deterministic=False (a parallel map may then hand elements over out of order, so "
                     "the data order changes between runs and a run cannot be reproduced; set it in your code "
                     "if the order does not matter to you)")
_WRAPPERS = ("OptionsDataset", "ModelDataset")  # added around a pipeline, not steps of it
_ARRAY_SOURCES = ("TensorSliceDataset",)


@dataclass
class InputFixPlan:
    """Which fixes to apply to one pipeline, and, for the record, what was left alone and why."""

    options_off: list[str] = field(default_factory=list)  # options the pipeline had turned off (set on again)
    prefetch: bool = False
    cache: bool = False
    applied: list[str] = field(default_factory=list)  # each change as the user reads it
    left: list[str] = field(default_factory=list)  # each fix not made, with why

    def code(self) -> str:
        """The same changes as code the user can put at the end of make_datasets()."""
        lines = ["options = tf.data.Options()", "options.autotune.enabled = True",
                 "options.experimental_optimization.map_parallelization = True",
                 "options.experimental_optimization.parallel_batch = True",
                 "train_ds = train_ds.with_options(options)"]
        if self.cache:
            lines.append("train_ds = train_ds.cache()   # fits in memory, nothing random upstream")
        if self.prefetch:
            lines.append("train_ds = train_ds.prefetch(tf.data.AUTOTUNE)")
        return "\n".join(lines)


def last_step(ops: PipelineOps) -> str | None:
    """The pipeline's last transformation (wrappers such as with_options skipped)."""
    steps = [op for op in ops.ops if op not in _WRAPPERS]
    return steps[-1] if steps else None


def in_memory_arrays(ops: PipelineOps) -> bool:
    """Slices of in-memory arrays, no map, prefetched (what tfturbo makes of NumPy inputs): nothing to speed up."""
    return (ops.ops[:1] == list(_ARRAY_SOURCES) and not any("Map" in op for op in ops.ops)
            and last_step(ops) == "PrefetchDataset")


def plan_fixes(ops: PipelineOps | None, options_off: list[str], dataset_bytes: float | None,
               available_bytes: float | None) -> InputFixPlan:
    """The fixes for a pipeline made of `ops` whose one pass takes `dataset_bytes` (None: unknown)."""
    plan = InputFixPlan(options_off=list(options_off))
    if ops is not None and in_memory_arrays(ops):
        plan.left.append("nothing to fix: the training data are in-memory arrays, already prefetched, with no "
                         "map to parallelize (NumPy inputs: tfturbo batches and prefetches them itself)")
        plan.options_off = []
        return plan
    plan.applied.append("tf.data.Options: autotune, map_parallelization, parallel_batch on"
                        + (f" (the pipeline had {', '.join(options_off)} off)" if options_off else
                           " (TensorFlow's defaults: a change only where a pipeline turned them off)"))
    if ops is not None and ops.has("MapDataset") and ops.py_function:
        plan.left.append("not parallelized: a map calls Python (tf.numpy_function / py_function), which tf.data "
                         "never parallelizes by itself; pass num_parallel_calls=tf.data.AUTOTUNE to that map")
    why_not = _why_not_cache(ops, dataset_bytes, available_bytes)
    plan.cache = why_not is None
    if plan.cache:
        plan.applied.append(f"cache(): one pass ({_mib(dataset_bytes)}) fits in memory and nothing upstream is random")
    else:
        plan.left.append(f"no cache(): {why_not}")
    plan.prefetch = plan.cache or ops is None or last_step(ops) != "PrefetchDataset"
    if plan.prefetch:
        plan.applied.append("prefetch(tf.data.AUTOTUNE) at the end: the input overlaps the training step")
    else:
        plan.left.append("no prefetch added: the pipeline already ends with one")
    plan.left.append(NOT_DETERMINISTIC)
    return plan


def _why_not_cache(ops: PipelineOps | None, dataset_bytes: float | None, available_bytes: float | None) -> str | None:
    if ops is None:
        return "the pipeline's ops could not be read, so it may be random"
    if ops.has("CacheDataset", "CacheDatasetV2"):
        return "the pipeline caches already"
    random = ops.randomness()
    if random:
        return f"{random}; a cache would replay its first pass"
    if dataset_bytes is None:
        return "the size of one pass is not known (infinite, unknown length, or shapes that vary)"
    if available_bytes is None or dataset_bytes > CACHE_MEMORY_SHARE * available_bytes:
        return (f"one pass ({_mib(dataset_bytes)}) is more than {CACHE_MEMORY_SHARE:.0%} of the memory available"
                if available_bytes is not None else "the memory available is not known")
    return None


def _mib(n: float | None) -> str:
    return f"{(n or 0) / 2 ** 20:,.1f} MiB"


def dataset_bytes(ds: Any, batch_size: int) -> float | None:
    """Bytes of one pass over `ds`: batches × the bytes of one batch from its element_spec; None when the
    number of batches is not finite and known, or a dimension other than the batch one varies."""
    import tensorflow as tf

    batches = int(ds.cardinality())
    if batches < 0:
        return None
    total = 0
    for spec in tf.nest.flatten(ds.element_spec):
        dims = list(spec.shape)
        if spec.dtype == tf.string or not dims or any(d is None for d in dims[1:]):
            return None
        count = (dims[0] or batch_size) * int(tf.TensorShape(dims[1:]).num_elements())
        total += count * spec.dtype.size
    return float(total * batches)


def options_turned_off(ds: Any) -> list[str]:
    """The OPTIONS the pipeline set to False (None means TensorFlow's default, which is on)."""
    off = []
    for name in OPTIONS:
        value = ds.options()
        for part in name.split("."):
            value = getattr(value, part)
        if value is False:
            off.append(name.split(".")[-1])
    return off


def apply_fixes(ds: Any, plan: InputFixPlan) -> Any:
    """`ds` with the plan's fixes: options, then cache(), then prefetch at the end."""
    import tensorflow as tf

    if not plan.applied:
        return ds
    options = tf.data.Options()
    options.autotune.enabled = True
    options.experimental_optimization.map_parallelization = True
    options.experimental_optimization.parallel_batch = True
    ds = ds.with_options(options)
    if plan.cache:
        ds = ds.cache()
    if plan.prefetch:
        ds = ds.prefetch(tf.data.AUTOTUNE)
    return ds


def fix_training_data(ds: Any, batch_size: int) -> tuple[Any, Finding]:
    """The training dataset with the automatic fixes, and the INPUT_FIXES_APPLIED finding that records them.

    The cache's budget is host memory whatever the device: that is where a tf.data cache lives.
    """
    ops = pipeline_ops(ds)
    host = available_memory([])["available_bytes"]
    plan = plan_fixes(ops, options_turned_off(ds), dataset_bytes(ds, batch_size), host)
    fixed = apply_fixes(ds, plan)
    message = ("tf.data fixes applied to the training data: " + "; ".join(plan.applied) if plan.applied
               else "tf.data fixes: none applied") + ". Left alone: " + "; ".join(plan.left)
    finding = Finding(INPUT_FIXES_APPLIED, message, fix=plan.code() if plan.applied else "",
                      where="train_ds (--input-fixes)",
                      data={"applied": plan.applied, "left": plan.left, "cache": plan.cache,
                            "prefetch": plan.prefetch, "pipeline_ops": ops.ops if ops else None})
    return fixed, finding
