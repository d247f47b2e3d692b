"""What this device's matmuls reach, and what a run's step costs: the two halves of MFU.

MFU (model FLOPs utilization) is achieved FLOP/s over a ceiling. Data-sheet
peaks are rarely reached and unknown for most CPUs, so the ceiling is
measured: a large square matmul, warmed up, timed until the device drains,
best of a few repeats, per dtype the hardware computes natively (float32
always; bfloat16 on a CPU with native bfloat16 instructions or a GPU of
compute capability 8.0+, float16 on a GPU). The result is cached per machine
(device name + TensorFlow version) under $XDG_CACHE_HOME/tfturbo or
~/.cache/tfturbo (TFTURBO_CACHE_DIR overrides), so only the first `env` or run on a machine pays for it.

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

CACHE_ENV = "TFTURBO_CACHE_DIR"
MATMUL_N = {"CPU": 1024, "GPU": 8192, "TPU": 8192}
REPEATS = 3
MIN_TIMED_S = 0.05  # each repeat runs enough matmuls to last at least this long


def cache_dir() -> Path:
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "tfturbo"


def ceiling_dtypes(devs: list[dict[str, Any]]) -> tuple[str, list[str]]:
    """(device type measured, its dtypes): the accelerator when there is one, else the CPU."""
    for kind in ("TPU", "GPU"):
        found = [d for d in devs if d.get("type") == kind]
        if found:
            if kind == "TPU":
                return kind, ["float32", "bfloat16"]
            cc = str(found[0].get("compute_capability") or "0.0").split(".")[0]
            return kind, ["float32", "float16"] + (["bfloat16"] if cc.isdigit() and int(cc) >= 8 else [])
    cpu = next((d for d in devs if d.get("type") == "CPU"), {})
    return "CPU", ["float32"] + (["bfloat16"] if cpu.get("native_bf16") else [])


def measure_matmul(dtype: str, n: int) -> float:
    """FLOP/s of an n×n matmul in `dtype`: the best of REPEATS timed blocks, each drained before the clock stops."""
    import tensorflow as tf

    a = tf.random.normal((n, n), dtype=tf.float32)
    a, b = tf.cast(a, dtype), tf.cast(tf.transpose(a), dtype)

    @tf.function
    def block(k):
        acc = tf.zeros((), dtype)
        for _ in tf.range(k):
            acc += tf.matmul(a, b)[0, 0]
        return acc

    block(tf.constant(1)).numpy()  # trace and warm up
    k, t = 1, 0.0
    while True:  # enough matmuls per block to outlast the clock's and the dispatch's noise
        start = time.perf_counter()
        block(tf.constant(k)).numpy()
        t = time.perf_counter() - start
        if t >= MIN_TIMED_S or k >= 1024:
            break
        k *= 2
    best = t
    for _ in range(REPEATS - 1):
        start = time.perf_counter()
        block(tf.constant(k)).numpy()
        best = min(best, time.perf_counter() - start)
    return 2.0 * n ** 3 * k / best


def _cache_file(device: str, tf_version: str) -> Path:
    key = hashlib.sha1(f"{device}|{tf_version}".encode()).hexdigest()[:16]
    return cache_dir() / f"ceiling-{key}.json"


def ceilings(devs: list[dict[str, Any]], device: str, tf_version: str, measure: bool = True) -> dict[str, float]:
    """{dtype: FLOP/s} for this machine: from the cache, else measured now (and cached) when `measure`."""
    path = _cache_file(device, tf_version)
    try:
        cached = json.loads(path.read_text())
        if cached.get("device") == device and cached.get("tensorflow") == tf_version and cached.get("ceiling"):
            return {k: float(v) for k, v in cached["ceiling"].items()}
    except (OSError, ValueError, AttributeError):
        pass
    if not measure:
        return {}
    kind, dtypes = ceiling_dtypes(devs)
    out: dict[str, float] = {}
    for dtype in dtypes:
        try:
            out[dtype] = measure_matmul(dtype, MATMUL_N[kind])
        except Exception as exc:  # noqa: BLE001 - a dtype the device refuses has no ceiling
            print(f"trainer_backend: no {dtype} matmul ceiling ({type(exc).__name__}: {exc})", file=sys.stderr)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"device": device, "tensorflow": tf_version, "ceiling": out,
                                   "measured": time.time()}))
        tmp.replace(path)
    except OSError as exc:
        print(f"trainer_backend: ceiling not cached ({exc})", file=sys.stderr)
    return out


def compute_dtype(policy: str) -> str:
    return {"mixed_bfloat16": "bfloat16", "mixed_float16": "float16"}.get(policy, "float32")


def utilization(flops: float | None, steps_per_s: float | None, ceiling: dict[str, float],
                policy: str, flops_unknown: str | None = None) -> dict[str, Any]:
    """{"mfu", "mfu_unknown", "ceiling_dtype", "ceiling_flops", "achieved_flops"}: achieved FLOP/s over the compute
    dtype's ceiling (float32's when that dtype has none), capped at 1 (a ceiling measured on a busy moment);
    without one, `mfu_unknown` says why (`flops_unknown`: why the step's FLOPs are not known)."""
    dtype = compute_dtype(policy)
    if dtype not in ceiling:
        dtype = "float32"
    peak = ceiling.get(dtype)
    achieved = flops * steps_per_s if flops and steps_per_s else None
    mfu = min(1.0, achieved / peak) if achieved and peak else None
    why = None
    if mfu is None:
        why = (f"the step's FLOPs are not known: {flops_unknown}" if not flops else
               "no steady throughput was measured" if not steps_per_s else
               "no matmul ceiling was measured on this device")
    return {"mfu": mfu, "mfu_unknown": why, "ceiling_dtype": dtype if peak else None, "ceiling_flops": peak,
            "achieved_flops": achieved}
