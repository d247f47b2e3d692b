"""The machine a run measures: devices, versions, memory, and the precision policy they call for.

Which 16-bit type pays off depends on the hardware (the tutorial, step 2):
Volta and Turing GPUs (compute capability 7.x) have float16 Tensor Cores;
Ampere and later (8.0+) and TPUs compute bfloat16 natively, which keeps
float32's exponent range and needs no loss scaling; a CPU gains from 16-bit
only with native bfloat16 instructions (AVX512-BF16 or AMX).

The GPU and TPU paths use only documented TensorFlow calls
(`tf.config.list_physical_devices`, `tf.config.experimental.get_device_details`,
`tf.config.experimental.get_memory_info` / `reset_memory_stats`). They have
not been run on a GPU or TPU while writing this: CPU is what they were tested on.
"""

from __future__ import annotations

import os
import platform
import resource
import sys
from pathlib import Path
from typing import Any

LOGICAL_CPUS_ENV = "TFTURBO_LOGICAL_CPUS"
_CPU_BF16_FLAGS = ("avx512_bf16", "amx_bf16")


def configure_logical_cpus() -> int | None:
    """Split the CPU into N logical devices when TFTURBO_LOGICAL_CPUS=N (N >= 2).

    Lets `--strategy mirrored` run with two replicas on a machine without
    GPUs (tests, trying the strategy out). Must run before TensorFlow
    initialises its devices.
    """
    value = os.environ.get(LOGICAL_CPUS_ENV, "").strip()
    if not value:
        return None
    try:
        n = int(value)
    except ValueError:
        print(f"trainer_backend: ignoring {LOGICAL_CPUS_ENV}={value!r} (not a whole number)", file=sys.stderr)
        return None
    if n < 2:
        return None
    import tensorflow as tf

    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration() for _ in range(n)])
    return n


def versions() -> dict[str, str]:
    import keras
    import tensorflow as tf

    from tfturbo import __version__

    return {"tfturbo": __version__, "tensorflow": tf.__version__, "keras": keras.__version__,
            "python": platform.python_version()}


def _cpu_info(cpuinfo: Path = Path("/proc/cpuinfo")) -> tuple[str, set[str]]:
    """(model name, feature flags) from /proc/cpuinfo on Linux; (platform name, {}) elsewhere."""
    name, flags = platform.processor() or platform.machine(), set()
    try:
        text = cpuinfo.read_text(errors="replace")
    except OSError:
        return name, flags
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "model name" and value.strip():
            name = value.strip()
        elif key == "flags" and not flags:
            flags = set(value.split())
    return name, flags


def devices() -> list[dict[str, Any]]:
    """One entry per physical device: type, name and what decides the policy."""
    import tensorflow as tf

    out: list[dict[str, Any]] = []
    cpu_name, flags = _cpu_info()
    logical_cpus = len(tf.config.list_logical_devices("CPU"))
    for _ in tf.config.list_physical_devices("CPU"):
        entry: dict[str, Any] = {"type": "CPU", "name": cpu_name, "cores": os.cpu_count(),
                                 "native_bf16": bool(flags & set(_CPU_BF16_FLAGS)),
                                 "bf16_flags": sorted(flags & set(_CPU_BF16_FLAGS))}
        if logical_cpus > 1:
            entry["logical_devices"] = logical_cpus
        out.append(entry)
    for gpu in tf.config.list_physical_devices("GPU"):  # not verified on a GPU
        details = tf.config.experimental.get_device_details(gpu)
        cc = details.get("compute_capability")
        out.append({"type": "GPU", "name": details.get("device_name") or gpu.name, "device": gpu.name,
                    "compute_capability": f"{cc[0]}.{cc[1]}" if cc else None})
    for tpu in tf.config.list_physical_devices("TPU"):  # not verified on a TPU
        out.append({"type": "TPU", "name": tpu.name})
    return out


def _cc(device: dict[str, Any]) -> tuple[int, int] | None:
    try:
        major, minor = str(device.get("compute_capability")).split(".")
        return int(major), int(minor)
    except ValueError:
        return None


def recommend_policy(devs: list[dict[str, Any]]) -> tuple[str, str]:
    """(policy, reason) for the fastest device present."""
    tpus = [d for d in devs if d.get("type") == "TPU"]
    if tpus:
        return "mixed_bfloat16", "TPUs compute in bfloat16 natively; it keeps float32's range and needs no loss scaling"
    gpus = [d for d in devs if d.get("type") == "GPU"]
    if gpus:
        gpu = gpus[0]
        cc = _cc(gpu)
        name = f"{gpu.get('name')} (compute capability {gpu.get('compute_capability')})"
        if cc is None:
            return "mixed_float16", f"{name}: compute capability unknown; float16 is the most widely supported 16-bit type"
        if cc >= (8, 0):
            return "mixed_bfloat16", (f"{name} has bfloat16 Tensor Cores: same range as float32, no loss scaling; "
                                      "mixed_float16 is the alternative when you need more mantissa precision")
        if cc >= (7, 0):
            return "mixed_float16", f"{name} has float16 Tensor Cores (Volta/Turing) but no fast bfloat16"
        return "float32", f"{name} has no Tensor Cores (compute capability below 7.0): 16-bit math would not be faster"
    cpu = next((d for d in devs if d.get("type") == "CPU"), {})
    if cpu.get("native_bf16"):
        return "mixed_bfloat16", (f"no GPU or TPU; this CPU has native bfloat16 instructions "
                                  f"({', '.join(cpu.get('bf16_flags') or [])}); measure it with XLA (--jit), "
                                  "without XLA bfloat16 can be slower on a CPU")
    return "float32", "no GPU or TPU, and this CPU has no native bfloat16 instructions: 16-bit math would be emulated and slower"


def device_label(devs: list[dict[str, Any]]) -> str:
    """One line naming the device that trains: 'GPU: NVIDIA A100 (compute capability 8.0)'."""
    for kind in ("TPU", "GPU"):
        found = [d for d in devs if d.get("type") == kind]
        if found:
            d = found[0]
            cc = f" (compute capability {d['compute_capability']})" if d.get("compute_capability") else ""
            count = f" ×{len(found)}" if len(found) > 1 else ""
            return f"{kind}: {d.get('name')}{cc}{count}"
    cpu = next((d for d in devs if d.get("type") == "CPU"), {})
    logical = f", {cpu['logical_devices']} logical devices" if cpu.get("logical_devices") else ""
    return f"CPU: {cpu.get('name', 'unknown')} ({cpu.get('cores')} cores{logical})"


class MemoryMeter:
    """Peak memory of a run: the first GPU's allocator on a GPU, else the process's peak RSS (host)."""

    def __init__(self) -> None:
        import tensorflow as tf

        self._tf = tf
        self.kind = "device" if tf.config.list_physical_devices("GPU") else "host"
        if self.kind == "device":  # not verified on a GPU
            tf.config.experimental.reset_memory_stats("GPU:0")

    def read(self) -> dict[str, Any]:
        """{"peak_bytes", "current_bytes", "kind"} — the payload of a `memory` event."""
        if self.kind == "device":
            info = self._tf.config.experimental.get_memory_info("GPU:0")
            return {"peak_bytes": int(info["peak"]), "current_bytes": int(info["current"]), "kind": "device"}
        return {"peak_bytes": _peak_rss(), "current_bytes": _current_rss(), "kind": "host"}


def available_memory(devs: list[dict[str, Any]]) -> dict[str, Any]:
    """{"kind", "available_bytes"}: what a larger batch may use — the host's available memory on a CPU; on an
    accelerator its memory is not listed by TensorFlow, so None (the batch search then stops at an OOM)."""
    if any(d.get("type") in ("GPU", "TPU") for d in devs):
        return {"kind": "device", "available_bytes": None}
    import psutil

    return {"kind": "host", "available_bytes": int(psutil.virtual_memory().available)}


def _peak_rss() -> int:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)  # bytes on macOS, KiB on Linux


def _current_rss() -> int:
    import psutil

    return int(psutil.Process().memory_info().rss)
