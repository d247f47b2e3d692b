"""A simulated accelerator: TensorFlow, Keras and tfturbo see a GPU (or a TPU) on this CPU (the `accelerator`
fixture, and xprof's answers for a GPU capture).

No GPU or TPU exists on this project's machines, so every rule that depends on the device is tested here
against one fixture, `accelerator`, which replaces the documented calls through which TensorFlow, Keras
and tfturbo learn what the device is — and nothing else:

- the device lists: `tf.config.list_physical_devices` / `list_logical_devices` (Keras asks them too:
  `jit_compile="auto"`, cuDNN RNNs' `supports_jit`), plus `tf.test.is_built_with_cuda`;
- the device's details: `tf.config.experimental.get_device_details` (name, compute capability);
- its memory: `tf.config.experimental.get_memory_info` / `reset_memory_stats` (current and peak), and its
  total through a fake `pynvml` module with nvidia-ml-py's API (`nvmlDeviceGetMemoryInfo(handle).total`);
- the TF32 state: `tf.config.experimental.tensor_float_32_execution_enabled`;
- xprof's answers for a GPU capture: `kernel_stats` tables with xprof 2.24's own columns (taken from a real
  answer, tests/backend/data/xprof/cpu_kernel_stats.json; `GenerateKernelStatsDataTable` in
  xprof/convert/xplane_to_kernel_stats_db.cc writes the same 15), its Tensor Core flag by xprof's own kernel
  name patterns (`IsKernelUsingTensorCore`, xprof/utils/kernel_stats_utils.cc), framework_op_stats with device
  rows, the overview page of a device that marks steps, and HLO modules as XLA's HloProto.

Placement is untouched: nothing runs on the simulated device, so tests call the functions that decide, fed
with it, and train (if at all) on the CPU. What this cannot tell — real kernels, real XLA GPU HLO, a real
allocator — is benchmarks/accelerator_check.py's, on a GPU machine.
"""

from __future__ import annotations

import copy
import json
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path

import pytest

XPROF = Path(__file__).resolve().parents[1] / "backend" / "data" / "xprof"
GIB = 1024 ** 3
# xprof 2.24, utils/kernel_stats_utils.cc kTensorCoreKernelNamePatterns: its guess that a kernel uses Tensor Cores
TENSOR_CORE_PATTERNS = ("16816", "c1688", "conv1x1", "conv2d_c1_k1", "dgrad_1x1_stride_2x2", "direct_group",
                        "first_layer_wgrad_kernel", "h1688", "h884", "hmma", "i16832", "i8816", "s884", "s1688",
                        "xmma_gemm", "xmma_implicit_gemm", "xmma_sparse_conv", "xmma_sparse_gemm",
                        "xmma_warp_specialized_implicit_gemm")


@dataclass
class Simulated:
    """What the simulated machine has: `kind` "GPU" or "TPU", `count` devices, each `name` with compute capability
    `cc` (a GPU), `memory_total` bytes (NVML's answer; None: NVML missing), the allocator's `current`/`peak` bytes,
    and TensorFlow's TF32 switch."""

    kind: str = "GPU"
    count: int = 1
    name: str = "NVIDIA A100-SXM4-80GB"
    cc: tuple[int, int] | None = (8, 0)
    memory_total: int | None = 80 * GIB
    current: int = 1 * GIB
    peak: int = 6 * GIB
    tf32: bool = True
    reset: list[str] = field(default_factory=list)  # the devices whose memory stats were reset

    def physical(self, tf):
        return [tf.config.PhysicalDevice(name=f"/physical_device:{self.kind}:{i}", device_type=self.kind)
                for i in range(self.count)]

    def logical(self, tf):
        return [tf.config.LogicalDevice(name=f"/device:{self.kind}:{i}", device_type=self.kind)
                for i in range(self.count)]


def _fake_pynvml(sim: Simulated) -> types.ModuleType:
    """nvidia-ml-py's `pynvml` as far as tfturbo calls it."""
    module = types.ModuleType("pynvml")

    class NVMLError(Exception):
        pass

    def handle(index):
        if not 0 <= int(index) < sim.count:
            raise NVMLError("Invalid Argument")
        return ("gpu", int(index))

    module.NVMLError = NVMLError
    module.nvmlInit = lambda: None
    module.nvmlShutdown = lambda: None
    module.nvmlDeviceGetCount = lambda: sim.count
    module.nvmlDeviceGetHandleByIndex = handle
    module.nvmlDeviceGetHandleByUUID = lambda uuid: handle(int(str(uuid).rsplit("-", 1)[-1]))

    def memory_info(h):
        if sim.memory_total is None:
            raise NVMLError("Not Supported")
        return types.SimpleNamespace(total=sim.memory_total, used=sim.current, free=sim.memory_total - sim.current)

    module.nvmlDeviceGetMemoryInfo = memory_info
    return module


@pytest.fixture
def accelerator(monkeypatch):
    """`accelerator(kind="GPU", **Simulated fields)` makes TensorFlow, Keras and tfturbo see that device until the
    test ends; returns the `Simulated` it installed."""
    import tensorflow as tf

    real_physical, real_logical = tf.config.list_physical_devices, tf.config.list_logical_devices
    real_details = tf.config.experimental.get_device_details

    def install(kind: str = "GPU", **fields) -> Simulated:
        sim = Simulated(kind=kind, **fields)
        if kind == "TPU":
            sim.cc = None
            sim.name = "TPU v4"
        ours = {d.name for d in sim.physical(tf)}

        def physical(device_type=None):
            devices = real_physical(device_type) if device_type != sim.kind else []
            return devices + (sim.physical(tf) if device_type in (None, sim.kind) else [])

        def logical(device_type=None):
            devices = real_logical(device_type) if device_type != sim.kind else []
            return devices + (sim.logical(tf) if device_type in (None, sim.kind) else [])

        def details(device):
            if device.name not in ours:
                return real_details(device)
            return {"device_name": sim.name, **({"compute_capability": sim.cc} if sim.cc else {})}

        def memory_info(device):
            return {"current": sim.current, "peak": sim.peak}

        monkeypatch.setattr(tf.config, "list_physical_devices", physical)
        monkeypatch.setattr(tf.config, "list_logical_devices", logical)
        monkeypatch.setattr(tf.config.experimental, "get_device_details", details)
        monkeypatch.setattr(tf.config.experimental, "get_memory_info", memory_info)
        monkeypatch.setattr(tf.config.experimental, "reset_memory_stats", sim.reset.append)
        monkeypatch.setattr(tf.config.experimental, "tensor_float_32_execution_enabled", lambda: sim.tf32)
        monkeypatch.setattr(tf.test, "is_built_with_cuda", lambda: True)
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
        if kind == "GPU":
            monkeypatch.setitem(sys.modules, "pynvml", _fake_pynvml(sim))
        return sim

    return install


@pytest.fixture
def no_matmuls(monkeypatch, tmp_path):
    """The ceiling's matmuls recorded, not run (an 8192² matmul on this CPU would take minutes): an A100's FLOP/s
    by dtype, in a cache of the test's own."""
    from trainer_backend import ceiling

    monkeypatch.setenv(ceiling.CACHE_ENV, str(tmp_path))
    calls = []

    def measure(dtype, n, strategy=None):
        calls.append((dtype, n, strategy))
        return {"float32": 150e12, "float16": 300e12, "bfloat16": 310e12}[dtype]

    monkeypatch.setattr(ceiling, "measure_matmul", measure)
    return calls


# ------------------------------------------------------------------------------ xprof's answers on a GPU

def kernel_stats(rows: list[tuple[str, str, float]]) -> dict:
    """A kernel_stats answer as xprof writes it: its 15 columns (from a real answer), one row per
    (kernel name, op name, total µs), ranked by duration, Tensor Core use by xprof's own name patterns."""
    table = json.loads((XPROF / "cpu_kernel_stats.json").read_text())
    ranked = sorted(rows, key=lambda r: -r[2])
    table["rows"] = [{"c": [{"v": v} for v in (
        rank, kernel, 64, 0, "128,1,1", "108,1,1", 50.0, True, any(p in kernel for p in TENSOR_CORE_PATTERNS), op,
        10, us, us / 10, us / 10, us / 10)]} for rank, (kernel, op, us) in enumerate(ranked, start=1)]
    return table


def op_stats(rows: list[tuple[str, str, float]]) -> list:
    """framework_op_stats of a GPU capture: the recorded CPU answer's two tables with (type, op name, self µs)
    device rows (the second table, which leaves out IDLE, is the one read)."""
    tables = json.loads((XPROF / "transformer_f32_framework_op_stats.json").read_text())
    total = sum(us for *_x, us in rows)
    template = tables[1]["rows"][0]
    out = []
    for rank, (op_type, name, us) in enumerate(rows, start=1):
        row = copy.deepcopy(template)
        ids = [c["id"] for c in tables[1]["cols"]]
        values = dict(zip(ids, (c["v"] for c in row["c"])))
        values.update({"rank": rank, "host_or_device": "Device", "type": op_type, "operation": name,
                       "occurrences": 10, "total_time": us, "avg_time": us / 10, "total_self_time": us,
                       "avg_self_time": us / 10, "device_total_self_time_percent": us / total,
                       "host_total_self_time_percent": 0.0})
        row["c"] = [{"v": values[i]} for i in ids]
        out.append(row)
    tables[1]["rows"] = out
    return tables


def gpu_overview(step_ms: float = 10.0) -> list:
    """The overview page of a device that marks its steps (the CPU answer with a GPU's properties)."""
    tables = json.loads((XPROF / "cpu_overview_page.json").read_text())
    tables[1]["p"].update({"hardware_type": "GPU", "steptime_ms_average": str(step_ms),
                           "host_compute_time_ms_avg": "0.2", "kernel_launch_time_ms_avg": "0.2",
                           "device_compute_time_ms_avg": str(step_ms - 0.4), "compile_time_ms_avg": "0"})
    return tables


def hlo_trace(module: str, ops: list[tuple[str, float]]) -> dict:
    """trace_viewer's XLA events: one complete event per (HLO op, µs), with xprof's `hlo_op`/`hlo_module` args."""
    return {"traceEvents": [{"ph": "X", "name": op, "dur": us, "args": {"hlo_op": op, "hlo_module": module}}
                            for op, us in ops]}


def hlo_module(name: str, fusions: dict[str, str], custom_gemms: dict[str, str] | None = None):
    """An HloModuleProto as XLA's GPU compiler leaves a step: each fusion in `fusions` (name → element type,
    e.g. "BF16") calls a computation whose root is a dot of two parameters of that type, like
    gemm_fusion_dot.N; each of `custom_gemms` is a cuBLAS custom call on operands of its type; one
    loop_convert_fusion (a convert, no dot)."""
    from tensorflow.compiler.xla import xla_data_pb2
    from tensorflow.compiler.xla.service import hlo_pb2

    module = hlo_pb2.HloModuleProto(name=name)
    ids = iter(range(1, 10_000))

    def instruction(computation, opcode, iname, element_type, operands=(), called=(), target=""):
        i = computation.instructions.add(name=iname, opcode=opcode, id=next(ids), custom_call_target=target)
        i.shape.element_type = getattr(xla_data_pb2, element_type)
        i.operand_ids.extend(operands)
        i.called_computation_ids.extend(called)
        return i

    entry = module.computations.add(name="main", id=next(ids))
    for fusion, element in fusions.items():
        called = module.computations.add(name=f"{fusion}_computation", id=next(ids))
        a = instruction(called, "parameter", "p0", element)
        b = instruction(called, "parameter", "p1", element)
        instruction(called, "dot", "dot", element, (a.id, b.id))
        x = instruction(entry, "parameter", f"{fusion}_x", element)
        instruction(entry, "fusion", fusion, element, (x.id,), (called.id,))
    for gemm, element in (custom_gemms or {}).items():
        a = instruction(entry, "parameter", f"{gemm}_a", element)
        b = instruction(entry, "parameter", f"{gemm}_b", element)
        instruction(entry, "custom-call", gemm, element, (a.id, b.id), target="__cublas$gemm")
    convert = module.computations.add(name="convert_computation", id=next(ids))
    p = instruction(convert, "parameter", "p", "F32")
    instruction(convert, "convert", "c", "BF16", (p.id,))
    instruction(entry, "fusion", "loop_convert_fusion", "BF16", (), (convert.id,))
    return module
