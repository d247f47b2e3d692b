"""The machine a run measures: devices, versions, memory, and the precision policy they call for.

Which 16-bit type pays off depends on the hardware (the tutorial, step 2):
Volta and Turing GPUs (compute capability 7.x) have float16 Tensor Cores;
Ampere and later (8.0+) and TPUs compute bfloat16 natively, which keeps
float32's exponent range and needs no loss scaling; a CPU gains from 16-bit
only with native bfloat16 instructions (AVX512-BF16 or AMX).

The GPU and TPU paths use only documented TensorFlow calls
(`tf.config.list_physical_devices`, `tf.config.experimental.get_device_details`,
`tf.config.experimental.get_memory_info` / `reset_memory_stats`,
`tf.config.experimental.tensor_float_32_execution_enabled`) and, for a GPU's
total memory (which TensorFlow does not list), NVML through nvidia-ml-py (the
`cuda` extra) or `nvidia-smi`. Every device fact is read through one of those
calls, so tests/accelerator/ can make this module (and Keras) see a GPU or a
TPU on a CPU (docs/MEASUREMENT.md, "What differs on an accelerator"); they
have not been run on a real GPU or TPU here: benchmarks/accelerator_check.py
checks them on one.
"""

from __future__ import annotations

import os
import platform
import resource
import shutil
import subprocess
import sys
from pathlib import Path

from tfturbo import protocol
from tfturbo.environment import AvailableMemory, Device

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
    name, flags = platform.processor() or platform.machine(), set[str]()
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


def devices() -> list[Device]:
    """One entry per physical device: type, name and what decides the policy."""
    import tensorflow as tf

    out: list[Device] = []
    cpu_name, flags = _cpu_info()
    logical_cpus = len(tf.config.list_logical_devices("CPU"))
    for _ in tf.config.list_physical_devices("CPU"):
        entry: Device = {"type": "CPU", "name": cpu_name, "cores": os.cpu_count(),
                                 "native_bf16": bool(flags & set(_CPU_BF16_FLAGS)),
                                 "bf16_flags": sorted(flags & set(_CPU_BF16_FLAGS))}
        if logical_cpus > 1:
            entry["logical_devices"] = logical_cpus
        out.append(entry)
    for index, gpu in enumerate(tf.config.list_physical_devices("GPU")):  # not verified on a GPU
        details = tf.config.experimental.get_device_details(gpu)
        cc = details.get("compute_capability")
        out.append({"type": "GPU", "name": details.get("device_name") or gpu.name, "device": gpu.name,
                    "compute_capability": f"{cc[0]}.{cc[1]}" if cc else None,
                    "memory_total_bytes": gpu_memory_total(index)})
    for tpu in tf.config.list_physical_devices("TPU"):  # not verified on a TPU
        out.append({"type": "TPU", "name": tpu.name})
    return out


def accelerator(devs: list[Device]) -> str | None:
    """"TPU" or "GPU" when the run trains on one (a TPU first, as `device_label` names it), else None."""
    kinds = {d.get("type") for d in devs}
    return next((kind for kind in ("TPU", "GPU") if kind in kinds), None)


def _visible_nvml_ids() -> list[str] | None:
    """CUDA_VISIBLE_DEVICES as NVML ids (indices or GPU-/MIG- UUIDs), None when unset: NVML numbers every GPU
    of the machine, TensorFlow's GPU:i is the i-th one this variable leaves visible."""
    value = os.environ.get("CUDA_VISIBLE_DEVICES")
    if value is None:
        return None
    return [v.strip() for v in value.split(",") if v.strip() and v.strip() != "-1"]


def gpu_memory_total(index: int) -> int | None:
    """Total memory in bytes of TensorFlow's GPU:`index`, which TensorFlow does not report: NVML (nvidia-ml-py,
    the `cuda` extra, imported only here), else `nvidia-smi --query-gpu=memory.total`; None when neither
    answers. TensorFlow's allocator can use a little less (the CUDA context, its reserve): the batch search
    keeps a margin (`tfturbo.tune.batch.SAFETY`)."""
    visible = _visible_nvml_ids()
    if visible is not None and index >= len(visible):
        return None
    nvml_id = visible[index] if visible is not None else str(index)
    try:
        import pynvml
    except ImportError:
        pynvml = None
    if pynvml is not None:
        try:
            pynvml.nvmlInit()
            try:
                handle = (pynvml.nvmlDeviceGetHandleByIndex(int(nvml_id)) if nvml_id.isdigit()
                          else pynvml.nvmlDeviceGetHandleByUUID(nvml_id))
                return int(pynvml.nvmlDeviceGetMemoryInfo(handle).total)
            finally:
                pynvml.nvmlShutdown()
        except Exception as exc:  # noqa: BLE001 - NVML missing or refusing: nvidia-smi may still answer
            print(f"trainer_backend: NVML gave no memory total ({type(exc).__name__}: {exc})", file=sys.stderr)
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    try:
        done = subprocess.run([smi, f"--id={nvml_id}", "--query-gpu=memory.total", "--format=csv,noheader,nounits"],
                              capture_output=True, text=True, timeout=20)
        return int(float(done.stdout.strip().splitlines()[0]) * 1024 * 1024) if done.returncode == 0 else None
    except (OSError, ValueError, IndexError, subprocess.TimeoutExpired):
        return None


def gpus_before_devices() -> int:
    """How many GPUs TensorFlow will train on, decided without initialising its devices: the XLA flags a run
    needs depend on it (TF_XLA_FLAGS is read when the devices are, `xla_flags`). A CPU-only TensorFlow, or
    CUDA_VISIBLE_DEVICES hiding them all, is 0; else the GPUs NVML (or `nvidia-smi -L`) counts, as many as
    CUDA_VISIBLE_DEVICES leaves."""
    import tensorflow as tf

    if not tf.test.is_built_with_cuda():
        return 0
    visible = _visible_nvml_ids()
    if visible is not None and not visible:
        return 0
    count = None
    try:
        import pynvml

        pynvml.nvmlInit()
        try:
            count = int(pynvml.nvmlDeviceGetCount())
        finally:
            pynvml.nvmlShutdown()
    except Exception:  # noqa: BLE001 - no NVML: nvidia-smi, else none
        smi = shutil.which("nvidia-smi")
        try:
            done = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=20) if smi else None
            count = sum(1 for line in done.stdout.splitlines() if line.startswith("GPU ")) if done else 0
        except (OSError, subprocess.TimeoutExpired):
            count = 0
    return min(count, len(visible)) if visible is not None else count


def tf32_enabled(devs: list[Device]) -> bool | None:
    """Whether float32 matmuls and convolutions run as TF32 on Tensor Cores: TensorFlow's switch
    (`tf.config.experimental.tensor_float_32_execution_enabled`, on by default) on a GPU of compute capability
    8.0 or later (Ampere); None where TF32 does not exist (a CPU, an older GPU, a TPU, whose float32 matmuls
    follow its own precision)."""
    if accelerator(devs) != "GPU" or not any((_cc(d) or (0, 0)) >= (8, 0) for d in devs if d.get("type") == "GPU"):
        return None
    import tensorflow as tf

    return bool(tf.config.experimental.tensor_float_32_execution_enabled())


def _cc(device: Device) -> tuple[int, int] | None:
    try:
        major, minor = str(device.get("compute_capability")).split(".")
        return int(major), int(minor)
    except ValueError:
        return None


def recommend_policy(devs: list[Device]) -> tuple[str, str]:
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
    cpu = next((d for d in devs if d.get("type") == "CPU"), Device())
    if cpu.get("native_bf16"):
        return "mixed_bfloat16", (f"no GPU or TPU; this CPU has native bfloat16 instructions "
                                  f"({', '.join(cpu.get('bf16_flags') or [])}); measure it with XLA, "
                                  "without XLA bfloat16 can be slower on a CPU")
    return "float32", "no GPU or TPU, and this CPU has no native bfloat16 instructions: 16-bit math would be emulated and slower"


def device_label(devs: list[Device]) -> str:
    """One line naming the device that trains: 'GPU: NVIDIA A100 (compute capability 8.0)'."""
    for kind in ("TPU", "GPU"):
        found = [d for d in devs if d.get("type") == kind]
        if found:
            d = found[0]
            cc = f" (compute capability {d['compute_capability']})" if d.get("compute_capability") else ""
            count = f" ×{len(found)}" if len(found) > 1 else ""
            return f"{kind}: {d.get('name')}{cc}{count}"
    cpu = next((d for d in devs if d.get("type") == "CPU"), Device())
    logical = f", {cpu['logical_devices']} logical devices" if cpu.get("logical_devices") else ""
    return f"CPU: {cpu.get('name', 'unknown')} ({cpu.get('cores')} cores{logical})"


class MemoryMeter:
    """Peak memory of a run: the first accelerator's allocator (GPU:0, else TPU:0: a TPU's memory is the
    device's, never the host's RSS), else the process's peak RSS (host). The peak is the process's: two arms of
    a paired process read the same allocator (the summary says so, `memory_note`)."""

    def __init__(self) -> None:
        import tensorflow as tf

        self._tf = tf
        found = next((kind for kind in ("GPU", "TPU") if tf.config.list_physical_devices(kind)), None)
        self.device = f"{found}:0" if found else None
        self.kind = "device" if found else "host"
        if self.device is not None:  # not verified on a GPU or TPU
            tf.config.experimental.reset_memory_stats(self.device)

    def read(self) -> protocol.MemoryEvent:
        """{"peak_bytes", "current_bytes", "kind"} — the payload of a `memory` event."""
        if self.device is not None:
            info = self._tf.config.experimental.get_memory_info(self.device)
            return {"peak_bytes": int(info["peak"]), "current_bytes": int(info["current"]), "kind": "device"}
        return {"peak_bytes": _peak_rss(), "current_bytes": _current_rss(), "kind": "host"}


def available_memory(devs: list[Device]) -> AvailableMemory:
    """{"kind", "available_bytes", "source"}: what a larger batch may use — the host's available memory on a
    CPU, the first GPU's total on a GPU (NVML or nvidia-smi; TensorFlow's allocator grows into it), and on a
    TPU None: TensorFlow reports a TPU's use but not its size, so the batch search has no budget there and
    stops at the first size that does not fit."""
    kind = accelerator(devs)
    if kind == "GPU":
        total = next((d.get("memory_total_bytes") for d in devs if d.get("type") == "GPU"), None)
        return {"kind": "device", "available_bytes": total,
                "source": "the GPU's total memory (NVML)" if total else
                          "not known: neither NVML (pip install nvidia-ml-py) nor nvidia-smi answered"}
    if kind == "TPU":
        return {"kind": "device", "available_bytes": None, "source": "not measured on a TPU: TensorFlow reports "
                                                                    "a TPU's memory use, not its size"}
    import psutil

    return {"kind": "host", "available_bytes": int(psutil.virtual_memory().available),
            "source": "the host's available memory"}


def _peak_rss() -> int:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)  # bytes on macOS, KiB on Linux


def _current_rss() -> int:
    import psutil

    return int(psutil.Process().memory_info().rss)
