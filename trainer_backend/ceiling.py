"""What this device's matmuls reach, and what a run's step costs: the two halves of MFU.

MFU (model FLOPs utilization) is achieved FLOP/s over a ceiling. Data-sheet
peaks are rarely reached and unknown for most CPUs, so the ceiling is
measured: a large square matmul, warmed up, timed until the device drains,
best of a few repeats, per dtype the hardware computes natively (float32
always; bfloat16 on a CPU with native bfloat16 instructions or a GPU of
compute capability 8.0+, float16 on a GPU). The result is cached per machine
(device name + TensorFlow version + TF32 state: on an Ampere or later GPU the
float32 ceiling is TF32 Tensor Core math while TF32 is on, labelled "float32
(TF32)") under $XDG_CACHE_HOME/tfturbo or ~/.cache/tfturbo (TFTURBO_CACHE_DIR
overrides), so only the first `env` or run on a machine pays for it.

The ceiling is one device's; under a distribution strategy the achieved
FLOP/s are every replica's, so MFU divides them by the replicas in sync. On a
TPU the matmul runs inside the TPU strategy (`strategy.run`), never on the
host; without one (`env`, no `--strategy tpu`) it is not measured. An MFU
above 100% is kept as measured, with a note saying why it cannot be right (a
ceiling measured at a slower moment than the run, or a FLOP count that is
off): capping it would hide that.

A step's FLOPs are counted on the training step that really runs
(`trainer_backend/step_flops.py`); where they cannot be trusted MFU is not
known, and says why.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from tfturbo.environment import Device

CACHE_ENV = "TFTURBO_CACHE_DIR"
MATMUL_N = {"CPU": 1024, "GPU": 8192, "TPU": 8192}
REPEATS = 3
MIN_TIMED_S = 0.05  # each repeat runs enough matmuls to last at least this long


def cache_dir() -> Path:
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "tfturbo"


def ceiling_dtypes(devs: list[Device]) -> tuple[str, list[str]]:
    """(device type measured, its dtypes): the accelerator when there is one, else the CPU."""
    for kind in ("TPU", "GPU"):
        found = [d for d in devs if d.get("type") == kind]
        if found:
            if kind == "TPU":
                return kind, ["float32", "bfloat16"]
            cc = str(found[0].get("compute_capability") or "0.0").split(".")[0]
            return kind, ["float32", "float16"] + (["bfloat16"] if cc.isdigit() and int(cc) >= 8 else [])
    cpu = next((d for d in devs if d.get("type") == "CPU"), Device())
    return "CPU", ["float32"] + (["bfloat16"] if cpu.get("native_bf16") else [])


def measure_matmul(dtype: str, n: int, strategy: Any = None) -> float:
    """FLOP/s of one device's n×n matmuls in `dtype`: the best of REPEATS timed blocks, each drained before the
    clock stops. With `strategy` (a TPU's) every replica runs the block inside `strategy.run`, on its own
    core, and the figure is one replica's."""
    import tensorflow as tf

    def matrices() -> tuple[Any, Any]:
        a = tf.random.normal((n, n), dtype=tf.float32)
        return tf.cast(a, dtype), tf.cast(tf.transpose(a), dtype)

    def loop(a, b, k):
        acc = tf.zeros((), dtype)
        for _ in tf.range(k):
            acc += tf.matmul(a, b)[0, 0]
        return acc

    if strategy is None:
        a, b = matrices()

        @tf.function
        def block(k):
            return loop(a, b, k)

        def run(k):
            block(tf.constant(k)).numpy()
    else:
        @tf.function
        def block(k):
            return strategy.run(lambda: loop(*matrices(), k))

        def run(k):
            for value in strategy.experimental_local_results(block(tf.constant(k))):
                value.numpy()

    run(1)  # trace and warm up
    k, t = 1, 0.0
    while True:  # enough matmuls per block to outlast the clock's and the dispatch's noise
        start = time.perf_counter()
        run(k)
        t = time.perf_counter() - start
        if t >= MIN_TIMED_S or k >= 1024:
            break
        k *= 2
    best = t
    for _ in range(REPEATS - 1):
        start = time.perf_counter()
        run(k)
        best = min(best, time.perf_counter() - start)
    return 2.0 * n ** 3 * k / best


def _cache_file(device: str, tf_version: str, tf32: bool | None = None) -> Path:
    """The cache of one machine's ceiling: the device, TensorFlow's version and, where TF32 exists, its state
    (the float32 ceiling with TF32 on is Tensor Core math, with it off is not: two ceilings)."""
    key = hashlib.sha1(f"{device}|{tf_version}".encode() + (b"" if tf32 is None else f"|tf32={tf32}".encode()))
    return cache_dir() / f"ceiling-{key.hexdigest()[:16]}.json"


TPU_NOT_MEASURED = ("not measured on a TPU outside its strategy: a run with --strategy tpu measures it inside "
                    "TPUStrategy")


def ceilings(devs: list[Device], device: str, tf_version: str, measure: bool = True,
             tf32: bool | None = None, strategy: Any = None) -> dict[str, float]:
    """{dtype: FLOP/s} of one device of this machine: from the cache, else measured now (and cached) when
    `measure`. `tf32`: the TF32 state (`hardware.tf32_enabled`), part of the cache key. On a TPU the matmul
    runs inside `strategy` (the run's TPUStrategy); without one nothing is measured (`TPU_NOT_MEASURED`)."""
    path = _cache_file(device, tf_version, tf32)
    try:
        cached = json.loads(path.read_text())
        if cached.get("device") == device and cached.get("tensorflow") == tf_version and cached.get("ceiling"):
            return {k: float(v) for k, v in cached["ceiling"].items()}
    except (OSError, ValueError, AttributeError):
        pass
    kind, dtypes = ceiling_dtypes(devs)
    if not measure or (kind == "TPU" and strategy is None):
        return {}
    out: dict[str, float] = {}
    for dtype in dtypes:
        try:
            out[dtype] = measure_matmul(dtype, MATMUL_N[kind], strategy if kind == "TPU" else None)
        except Exception as exc:  # noqa: BLE001 - a dtype the device refuses has no ceiling
            print(f"trainer_backend: no {dtype} matmul ceiling ({type(exc).__name__}: {exc})", file=sys.stderr)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"device": device, "tensorflow": tf_version, "tf32": tf32, "ceiling": out,
                                   "measured": time.time()}))
        tmp.replace(path)
    except OSError as exc:
        print(f"trainer_backend: ceiling not cached ({exc})", file=sys.stderr)
    return out


def ceiling_label(dtype: str, tf32: bool | None) -> str:
    """A ceiling's dtype as the user reads it: 'float32 (TF32)' where float32 matmuls run as TF32."""
    return f"{dtype} (TF32)" if dtype == "float32" and tf32 else dtype


def compute_dtype(policy: str) -> str:
    return {"mixed_bfloat16": "bfloat16", "mixed_float16": "float16"}.get(policy, "float32")


def utilization(flops: float | None, steps_per_s: float | None, ceiling: dict[str, float],
                policy: str, replicas: int = 1, tf32: bool | None = None,
                flops_unknown: str | None = None) -> dict[str, Any]:
    """{"mfu", "mfu_note", "mfu_unknown", "ceiling_dtype", "ceiling_flops", "achieved_flops"}: one device's
    achieved FLOP/s (the global step's over the `replicas` in sync, which share it) over one device's ceiling for
    the compute dtype (float32's when that dtype has none, labelled "float32 (TF32)" where TF32 is on). Above 1 it
    is kept and `mfu_note` says it cannot be right; without one, `mfu_unknown` says why (`flops_unknown`: why the
    step's FLOPs are not known)."""
    dtype = compute_dtype(policy)
    if dtype not in ceiling:
        dtype = "float32"
    peak = ceiling.get(dtype)
    achieved = flops * steps_per_s / max(1, replicas) if flops and steps_per_s else None
    mfu = achieved / peak if achieved and peak else None
    note = why = None
    if mfu is not None and mfu > 1.0:
        note = (f"above 100%: this run's {achieved:.3g} FLOP/s per device exceed the {peak:.3g} FLOP/s its "
                f"{ceiling_label(dtype, tf32)} matmul ceiling measured; that ceiling was measured at a slower moment "
                "(a busy machine) or the FLOP count is too high, so this MFU is not a utilisation; delete the "
                f"cached ceiling ({cache_dir()}) to measure it again")
    if mfu is None:
        why = (f"the step's FLOPs are not known: {flops_unknown}" if not flops else
               "no steady throughput was measured" if not steps_per_s else
               "no matmul ceiling was measured on this device")
    return {"mfu": mfu, "mfu_note": note, "mfu_unknown": why,
            "ceiling_dtype": ceiling_label(dtype, tf32) if peak else None, "ceiling_flops": peak,
            "achieved_flops": achieved}
