"""The 16-bit share of a GPU capture comes from op dtypes, never kernel names (docs/MEASUREMENT.md, "Profiles"):
xprof's answers for a simulated GPU capture, built with its own columns (tests/accelerator/simulated.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.accelerator import simulated as sim
from tfturbo import findings as fc
from tfturbo.profile_findings import run_findings
from trainer_backend import profile_capture_read as reader

MODULE = "a_inference_one_step_on_data_4021__.17"
DATA = Path(__file__).parent / "data"
BF16 = {"policy": "mixed_bfloat16"}


def _read(monkeypatch, tmp_path, answers: dict, op_dtypes: dict | None = None, hlo: dict | None = None):
    """read_capture on a capture whose xprof tools answer `answers` (the tool seam, `_tool`)."""
    xplane = tmp_path / "gpu.xplane.pb"
    xplane.write_bytes(b"simulated")

    def tool(_xplanes, name, tools, _why):
        tools[name] = "ok" if answers.get(name) else "not available: the tool returned nothing"
        return answers.get(name)

    monkeypatch.setattr(reader, "_tool", tool)
    return reader.read_capture({"xplanes": [str(xplane)], "window": [30, 40], "steps": 10,
                                "op_dtypes": op_dtypes or {}, "hlo_dtypes": hlo or {}})


def _fully_bf16_xla_step():
    """A mixed_bfloat16 step under jit_compile=True as XLA's GPU compiler runs it: seven Triton GEMM fusions
    (gemm_fusion_dot.N, kernels gemm_fusion_dot_N: no dtype in their names), one cuBLAS bf16 GEMM, a convert."""
    fusions = {f"gemm_fusion_dot.{i}": "BF16" for i in range(1, 8)}
    module = sim.hlo_module(MODULE, fusions, {"cublas-gemm.3": "BF16"})
    ops = [(name, 100.0) for name in fusions] + [("cublas-gemm.3", 100.0), ("loop_convert_fusion", 40.0)]
    kernels = sim.kernel_stats(
        [(name.replace(".", "_"), f"gradient_tape/functional_1/dense_{i}/MatMul", us)
         for i, (name, us) in enumerate(ops[:7])]
        + [("sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x32_stage3", "functional_1/dense_9/MatMul", 100.0),
           ("loop_convert_fusion", "functional_1/Cast", 40.0)])
    rows = sim.op_stats([("MatMul", f"gradient_tape/functional_1/dense_{i}/MatMul", 100.0) for i in range(7)]
                        + [("MatMul", "functional_1/dense_9/MatMul", 100.0), ("Cast", "functional_1/Cast", 40.0)])
    answers = {"framework_op_stats": rows, "overview_page": sim.gpu_overview(), "kernel_stats": kernels,
               "trace_viewer": sim.hlo_trace(MODULE, ops)}
    return module, answers


def test_a_fully_bf16_xla_step_reads_as_16_bit_and_raises_no_matmul_finding(monkeypatch, tmp_path):
    """Before: the share came from kernel names; gemm_fusion_dot_N and sm80_xmma kernels name no dtype, so this
    step read 12.5% 16-bit and raised MATMUL_NOT_16BIT with advice about layer dtypes."""
    _module, answers = _fully_bf16_xla_step()
    hlo = {f"{MODULE}/gemm_fusion_dot.{i}": "bfloat16" for i in range(1, 8)} | {f"{MODULE}/cublas-gemm.3": "bfloat16"}
    doc = _read(monkeypatch, tmp_path, answers, hlo=hlo)
    assert doc.available and doc.sixteen_bit_share() == pytest.approx(1.0)
    assert "HLO" in doc.sixteen_bit["source"] and doc.sixteen_bit["verified"] is False
    assert fc.MATMUL_NOT_16BIT not in [f.code for f in run_findings(doc, BF16)]


def test_the_hlo_of_a_gpu_step_gives_each_gemm_its_operand_dtype():
    """XLA's GEMM fusions hold their dot in a called computation; cuBLAS GEMMs are custom calls; a convert holds
    no dot (the HloProto classes are XLA's own)."""
    from tensorflow.compiler.xla import xla_data_pb2

    module, _answers = _fully_bf16_xla_step()
    hlo = reader.module_dtypes(module, xla_data_pb2.PrimitiveType.Name)
    assert {k: v for k, v in hlo.items() if "fusion" in k or "gemm" in k} == \
        {f"{MODULE}/gemm_fusion_dot.{i}": "bfloat16" for i in range(1, 8)} | {f"{MODULE}/cublas-gemm.3": "bfloat16"}
    f32 = sim.hlo_module(MODULE, {"gemm_fusion_dot.1": "F32"})
    assert reader.module_dtypes(f32, xla_data_pb2.PrimitiveType.Name)[f"{MODULE}/gemm_fusion_dot.1"] == "float32"


def test_without_xla_the_devices_op_rows_take_the_traced_graphs_dtypes(monkeypatch, tmp_path):
    rows = sim.op_stats([("MatMul", "StatefulPartitionedCall/functional_1/dense/MatMul", 300.0),
                         ("MatMul", "StatefulPartitionedCall/functional_1/wide/MatMul", 700.0),
                         ("AddV2", "StatefulPartitionedCall/functional_1/add", 50.0)])
    kernels = sim.kernel_stats([("ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_nn", "functional_1/dense/MatMul", 300.0),
                                ("ampere_sgemm_128x64_nn", "functional_1/wide/MatMul", 700.0)])
    doc = _read(monkeypatch, tmp_path, {"framework_op_stats": rows, "overview_page": sim.gpu_overview(),
                                        "kernel_stats": kernels},
                op_dtypes={"functional_1/dense/MatMul": "bfloat16", "functional_1/wide/MatMul": "float32"})
    assert doc.sixteen_bit_share() == pytest.approx(0.3) and "traced graph" in doc.sixteen_bit["source"]
    assert doc.sixteen_bit["float32_ops"] == ["StatefulPartitionedCall/functional_1/wide/MatMul"]
    assert doc.sixteen_bit["tensor_core_share"] == pytest.approx(0.3)  # xprof's guess, shown as such
    found = [f for f in run_findings(doc, BF16) if f.code == fc.MATMUL_NOT_16BIT]
    assert len(found) == 1 and "wide" in found[0].message


def test_a_dtype_no_source_names_is_unknown_never_guessed_from_the_kernel(monkeypatch, tmp_path):
    """Before: a kernel whose name held no 16-bit pattern counted as float32."""
    rows = sim.op_stats([("MatMul", "functional_1/dense/MatMul", 500.0)])
    kernels = sim.kernel_stats([("nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_NTN", "functional_1/dense/MatMul", 500.0)])
    doc = _read(monkeypatch, tmp_path, {"framework_op_stats": rows, "overview_page": sim.gpu_overview(),
                                        "kernel_stats": kernels})
    assert doc.sixteen_bit_share() is None and doc.sixteen_bit["reason"].startswith("unknown")
    assert fc.MATMUL_NOT_16BIT not in [f.code for f in run_findings(doc, BF16)]


def test_a_convert_kernel_is_no_convolution():
    """Before: the kernel-name pattern `conv` matched `convert`, so casts counted as matmul/conv time."""
    kernels = sim.kernel_stats([("loop_convert_fusion", "functional_1/Cast", 900.0),
                                ("ampere_bf16_s16816gemm_bf16_128x64", "functional_1/dense/MatMul", 100.0),
                                ("cudnn_conv2d_nhwc_xmma_implicit_gemm", "functional_1/conv/Conv2D", 100.0)])
    assert reader.tensor_core_share(kernels, []) == pytest.approx(1.0)  # the convert's 900 µs are not heavy


def test_hlo_dtypes_are_read_from_a_real_capture():
    """A real CPU capture of a bfloat16 matmul under jit_compile=True (tests/accelerator/data/README.md): the
    profiler stored the module; XLA's CPU compiler made the dot float32, which is what the capture says."""
    got = reader.hlo_dtypes([DATA / "cpu_xla_bf16_matmul.xplane.pb"])
    assert list(got.values()) == ["float32"] and next(iter(got)).endswith("/mm.2")
    assert reader.hlo_dtypes([DATA / "README.md"]) == {}  # not a capture: nothing, never an error


def test_the_finding_says_tf32_float32_ops_still_use_tensor_cores(monkeypatch, tmp_path):
    """The tutorial's "0% Tensor Core" reading is wrong on an Ampere GPU with TF32: float32 matmuls use them too."""
    rows = sim.op_stats([("MatMul", "functional_1/wide/MatMul", 700.0)])
    doc = _read(monkeypatch, tmp_path, {"framework_op_stats": rows, "overview_page": sim.gpu_overview()},
                op_dtypes={"functional_1/wide/MatMul": "float32"})
    with_tf32 = next(f for f in run_findings(doc, BF16, tf32=True) if f.code == fc.MATMUL_NOT_16BIT)
    assert "TF32 is on: these use Tensor Cores" in with_tf32.message
    without = next(f for f in run_findings(doc, BF16) if f.code == fc.MATMUL_NOT_16BIT)
    assert "TF32" not in without.message
