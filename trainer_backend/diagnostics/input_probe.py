"""Is the job input-bound? Three timed probes on the user's own workload (checklist step 1).

The profiler's overview page answers this only where it has device step
markers (on the CPU it says "No step time measured"), so the verdict is made
from measurements that work on any device:

  (a) input alone   — batches/s drawn from the training dataset, no model;
  (b) step alone    — training steps/s on one cached batch repeated (the data
                      is already in memory, so this is the compute ceiling);
  (c) real training — steps/s of `model.fit` on the real dataset.

Each probe skips its warm-up steps (tracing, shuffle-buffer fill) and reports
the median step time, so a stray slow step on a shared machine does not move
it. `input_fraction` is the share of a real step not explained by compute:
(t_real - t_compute) / t_real. The share is put in XProf's bands (its
overview page): "high" at HIGH_INPUT_SHARE (20%) or more, "moderate" from
MODERATE_INPUT_SHARE (5%), else "low" — and "low" too when the input alone is
not slow enough to account for the gap (then it is host noise, not the
pipeline). A share above "low" is measured again (both probes, in the other
order) and the smaller share of the two rounds stands (`confirmed`), so a
burst of other work on a shared machine is not reported as a wait on input.
"high" is the input-bound verdict (INPUT_BOUND, the study stops
unless the automatic tf.data fixes cure it); "moderate" is a warning
(INPUT_MODERATELY_BOUND) and tuning goes on.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable

from tfturbo.findings import INPUT_BOUND, INPUT_MODERATELY_BOUND, Finding
from tfturbo.verdicts import ProbeBand, ProbeVerdict, input_explains_gap

from .advice import NUMPY, SCRIPT, WorkloadShape, array_input_fix
from .dataset_audit import PipelineOps, pipeline_ops

# XProf's overview-page bands of the share of step time waiting on input.
HIGH_INPUT_SHARE = 0.20
MODERATE_INPUT_SHARE = 0.05
# The input alone must take at least this share of the unexplained gap to be blamed for it.
EXPLAINS_GAP = 0.5


def warmup_steps(steps: int) -> int:
    """A few steps excluded from each probe: at least 3, at most 10."""
    return min(10, max(3, steps // 5))


def time_input(ds: Any, steps: int, warmup: int) -> list[float]:
    """Milliseconds per batch drawn from `ds` (repeated, so a short epoch does not end the probe)."""
    it = iter(ds.repeat())
    times = []
    for _ in range(warmup + steps):
        start = time.perf_counter()
        next(it)
        times.append((time.perf_counter() - start) * 1000)
    return times[warmup:]


def _step_clock():
    import keras

    class StepClock(keras.callbacks.Callback):
        """Host timestamps at each batch start and at the end of training (after Keras' final sync).

        Only `on_train_batch_begin` is overridden: it receives no logs, so the
        clock forces no device sync per step.
        """

        def __init__(self):
            super().__init__()
            self.stamps: list[float] = []

        def on_train_batch_begin(self, batch, logs=None):
            self.stamps.append(time.perf_counter())

        def on_train_end(self, logs=None):
            self.stamps.append(time.perf_counter())

    return StepClock()


def time_steps(model: Any, ds: Any, steps: int, warmup: int) -> list[float]:
    """Milliseconds per `model.fit` step on `ds` (repeated), warm-up steps dropped."""
    clock = _step_clock()
    model.fit(ds.repeat(), epochs=1, steps_per_epoch=warmup + steps, verbose=0, callbacks=[clock])
    stamps = clock.stamps
    return [(b - a) * 1000 for a, b in zip(stamps, stamps[1:])][warmup:]


def cached_batch(ds: Any) -> Any:
    """A dataset repeating the first batch of `ds`: the training step with the data already in memory."""
    import tensorflow as tf

    return tf.data.Dataset.from_tensors(next(iter(ds))).repeat()


def band(fraction: float, explained: bool) -> str:
    """XProf's band for the share of a step waiting on input; LOW when the input alone cannot explain the gap."""
    if not explained or fraction < MODERATE_INPUT_SHARE:
        return ProbeBand.LOW
    return ProbeBand.HIGH if fraction >= HIGH_INPUT_SHARE else ProbeBand.MODERATE


@dataclass
class ProbeResult:
    verdict: str
    band: str
    input_fraction: float
    data_ms: float
    compute_ms: float
    train_ms: float
    explains_gap: bool  # the input alone takes EXPLAINS_GAP of the gap or more (else the gap is host noise)

    def rates(self) -> dict[str, float]:
        return {"data_steps_per_s": 1000 / self.data_ms, "compute_steps_per_s": 1000 / self.compute_ms,
                "train_steps_per_s": 1000 / self.train_ms}


def decide(data_ms: list[float], compute_ms: list[float], train_ms: list[float]) -> ProbeResult:
    """The verdict from the three probes' step times (medians)."""
    t_data, t_compute, t_train = (statistics.median(x) for x in (data_ms, compute_ms, train_ms))
    gap = max(0.0, t_train - t_compute)
    fraction = min(1.0, gap / t_train) if t_train > 0 else 0.0
    explained = input_explains_gap(t_data, t_compute, t_train, EXPLAINS_GAP)
    share = band(fraction, explained)
    verdict = ProbeVerdict.INPUT_BOUND if share == ProbeBand.HIGH else ProbeVerdict.COMPUTE_BOUND
    return ProbeResult(verdict, share, fraction, t_data, t_compute, t_train, explained)


def confirmed(first: ProbeResult, second: ProbeResult) -> ProbeResult:
    """Of two rounds, the one that shows less waiting on input.

    Each probe lasts a fraction of a second for a small model, so a burst of
    other work on a shared machine during the real-training probe looks like
    a wait on input. A job that really waits for its data waits in both rounds;
    the smaller share is the one the evidence supports.
    """
    return second if second.input_fraction < first.input_fraction else first


def input_bound_finding(v: ProbeResult, ops: PipelineOps | None, shape: WorkloadShape | None = None,
                        batch_size: int | None = None) -> Finding:
    """INPUT_BOUND (high band) or INPUT_MODERATELY_BOUND (moderate band) with the changes as code in the
    workload's own terms (`advice.WorkloadShape`): NumPy arrays given to fit() become a tf.data pipeline shown
    as the change from that fit() call; a tf.data pipeline gets the tf.data changes, each marked where the
    pipeline's own ops show it applies."""
    shape = shape or WorkloadShape()
    def mark(applies: bool | None, why: str) -> str:
        return f"  # <- {why}" if applies else ""

    sequential_map = ops is not None and ops.has("MapDataset")
    no_prefetch = ops is not None and not ops.has("PrefetchDataset")
    no_cache = ops is not None and not ops.has("CacheDataset", "CacheDatasetV2")
    sequential_reads = ops is not None and ops.has("InterleaveDataset", "FlatMapDataset")
    lines = [
        f"# your pipeline: {' -> '.join(ops.ops)}" if ops is not None else "# (the pipeline's ops could not be read)",
        "train_ds = (files",
        "    .interleave(tf.data.TFRecordDataset, num_parallel_calls=tf.data.AUTOTUNE, deterministic=False)"
        + mark(sequential_reads, "reads one file at a time now"),
        "    .map(parse, num_parallel_calls=tf.data.AUTOTUNE)"
        + mark(sequential_map, "your map runs one element at a time"),
        "    .cache()   # after the expensive deterministic steps, before shuffle/augmentation"
        + mark(no_cache, "nothing is cached now"),
        "    .shuffle(10_000)",
        "    .batch(BATCH_SIZE, drop_remainder=True)",
        "    .prefetch(tf.data.AUTOTUNE))   # overlap input with the training step"
        + mark(no_prefetch, "no prefetch at the end now"),
    ]
    if ops is not None and ops.py_function:
        lines.append("# a tf.py_function/numpy_function holds the Python GIL: parallel map helps little;"
                     " rewrite it in tf ops or cache its output")
    if shape.data == NUMPY:  # the template above is for files read by tf.data: the arrays' own change instead
        lines = [array_input_fix(batch_size or "BATCH_SIZE", shape)]
    elif shape.source == SCRIPT:  # the script's own pipeline, by its own name: what to add to it, before its fit()
        ds = shape.dataset
        lines = [lines[0], f"# {shape.data_place}:"]
        if sequential_map:
            lines.append(".map(fn, num_parallel_calls=tf.data.AUTOTUNE)  # <- your map runs one element at a time")
        if no_cache:
            lines.append(".cache()  # in the pipeline, after the expensive deterministic steps, before shuffle")
        lines.append(f"{ds} = {ds}.prefetch(tf.data.AUTOTUNE)  # overlap input with the training step"
                     + mark(no_prefetch, "no prefetch at the end now"))
    lines.append("# or let tfturbo apply the measured tf.data fixes: tfturbo run ... --input-fixes")
    rates = v.rates()
    measured = (f"{v.input_fraction:.0%} of each training step waits for data — the input pipeline "
                f"alone delivers {rates['data_steps_per_s']:.1f} batches/s, the training step alone runs "
                f"{rates['compute_steps_per_s']:.1f} steps/s, real training {rates['train_steps_per_s']:.1f} steps/s")
    if v.band == ProbeBand.MODERATE:
        code, message = INPUT_MODERATELY_BOUND, (
            f"moderately input-bound ({MODERATE_INPUT_SHARE:.0%}–{HIGH_INPUT_SHARE:.0%} waiting, XProf's band): "
            f"{measured}. Tuning goes on; the pipeline changes below would win that share back")
    else:
        code, message = INPUT_BOUND, (
            f"input-bound (at least {HIGH_INPUT_SHARE:.0%} waiting, XProf's \"highly input-bound\"): {measured}. "
            "Fix the pipeline first: mixed precision and XLA cannot speed up a job that waits for data")
    where = "train_ds (make_datasets)" if shape.source != SCRIPT else \
        f"the training data given to fit(){f' at {shape.fit_where}' if shape.fit_where else ''}"
    return Finding(code, message, fix="\n".join(lines), where=where,
                   data={"input_fraction": v.input_fraction, "band": v.band,
                         "pipeline_ops": ops.ops if ops is not None else None})


def probe(model: Any, train_ds: Any, steps: int, on_phase: Callable[[str, int], None] = lambda d, i: None,
          profile_dir: str | None = None, warmup: int | None = None, shape: WorkloadShape | None = None,
          batch_size: int | None = None) -> dict[str, Any]:
    """Run the three probes and return the `probe-input` document (`warmup`: batches skipped by each probe,
    default `warmup_steps(steps)`; `shape` and `batch_size`: the workload's, for the finding's fix)."""
    from . import profile_reader

    warmup = warmup_steps(steps) if warmup is None else warmup
    on_phase("input pipeline alone (no model)", 0)
    data_ms = time_input(train_ds, steps, warmup)
    on_phase("training step alone (one cached batch)", 1)
    compute_ms = time_steps(model, cached_batch(train_ds), steps, warmup)
    on_phase("real training steps", 2)
    train_ms = time_steps(model, train_ds, steps, warmup)
    v = decide(data_ms, compute_ms, train_ms)
    rounds = 1
    if v.band != ProbeBand.LOW:
        on_phase("confirming the wait on input (both probes again, in the other order)", 2)
        train_again = time_steps(model, train_ds, steps, warmup)  # the other order: a drift favours neither
        compute_again = time_steps(model, cached_batch(train_ds), steps, warmup)
        v = confirmed(v, decide(data_ms, compute_again, train_again))
        rounds = 2
    findings = [input_bound_finding(v, pipeline_ops(train_ds), shape, batch_size)] if v.band != ProbeBand.LOW else []
    on_phase("profiler input analysis", 3)
    profiler = profile_reader.profile_steps(model, train_ds, profile_dir)
    return {
        "verdict": v.verdict,
        "band": v.band,
        "input_fraction": round(v.input_fraction, 4),
        "input_explains_gap": v.explains_gap,  # the decision front ends show (`verdicts.input_share_fact`)
        **{k: round(r, 3) for k, r in v.rates().items()},
        "findings": [f.to_dict() for f in findings],
        "step_ms": {"data": round(v.data_ms, 3), "compute": round(v.compute_ms, 3), "train": round(v.train_ms, 3)},
        "steps_per_probe": steps,
        "rounds": rounds,  # 2: a wait on input was measured again before it was reported
        "warmup_steps": warmup,
        "thresholds": {"high": HIGH_INPUT_SHARE, "moderate": MODERATE_INPUT_SHARE, "data_explains_gap": EXPLAINS_GAP},
        "profiler": profiler,
    }
