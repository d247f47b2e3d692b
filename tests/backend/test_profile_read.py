"""Reading xprof's answers into profile.json, on JSON recorded from real CPU captures of builtin:transformer
(tests/backend/data/xprof/, trimmed to their first 80 op rows) — no TensorFlow needed.

The GPU parts (kernel stats, the overview's step breakdown) are fed tables built with the column ids and
property names xprof 2.24 documents (the CPU capture's kernel_stats has the same columns, empty): unverified on
a real GPU.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tfturbo import profile as prof
from trainer_backend import profile_capture_read as reader

DATA = Path(__file__).parent / "data" / "xprof"


def recorded(name: str):
    return json.loads((DATA / name).read_text())


def test_float32_transformer_categories_add_up_and_matmul_and_attention_lead():
    rows, coverage, on_device = reader.op_rows(recorded("transformer_f32_framework_op_stats.json"), {})
    doc = prof.build(rows, 11, prof.SOURCE_OP_STATS, coverage=coverage)
    assert not on_device
    assert doc.available
    assert sum(doc.categories.values()) == pytest.approx(doc.op_ms_per_step)
    # the 80 recorded rows hold most of the op time xprof measured (its own percentages say how much)
    assert 0.9 < doc.coverage <= 1.0
    top = [c for c, _ in doc.ranked_categories()[:2]]
    assert set(top) == {prof.MATMUL, prof.ATTENTION}
    assert sum(r.share for r in doc.top_ops) <= 1.0
    assert doc.top_types[0].ms_per_step >= doc.top_types[-1].ms_per_step


def test_sixteen_bit_share_comes_from_the_traced_dtypes_and_names_the_float32_ops():
    table = recorded("transformer_bf16_framework_op_stats.json")
    names = [r["operation"] for r in reader.table_rows(table[1])]
    heavy = [n for n, r in zip(names, reader.table_rows(table[1]))
             if prof.categorize(r["type"], n) in prof.HEAVY]
    graph = {n.removeprefix("StatefulPartitionedCall/"): "bfloat16" for n in heavy}
    graph[heavy[0].removeprefix("StatefulPartitionedCall/")] = "float32"  # one planted float32 op
    rows, _cov, _dev = reader.op_rows(table, graph)
    sixteen = prof.sixteen_bit_from_ops(rows, prof.SOURCE_OP_STATS, "traced graph")
    assert sixteen["available"]
    assert 0.5 < sixteen["share"] < 1.0
    assert sixteen["float32_ops"] == [heavy[0]]
    none16, *_ = reader.op_rows(table, {n: "float32" for n in graph})
    assert prof.sixteen_bit_from_ops(none16, prof.SOURCE_OP_STATS, "x")["share"] == 0.0
    unknown, *_ = reader.op_rows(table, {})
    assert not prof.sixteen_bit_from_ops(unknown, prof.SOURCE_OP_STATS, "x")["available"]


def test_dtype_of_strips_the_callers_the_profile_puts_in_front():
    graph = {"gradient_tape/functional_1/dense_1/Tensordot/MatMul/MatMul": "bfloat16"}
    assert reader.dtype_of("StatefulPartitionedCall/gradient_tape/functional_1/dense_1/Tensordot/MatMul/MatMul",
                           graph) == "bfloat16"
    assert reader.dtype_of("StatefulPartitionedCall/functional_1/dense_9/MatMul", graph) is None


def test_xla_capture_reads_the_compiled_ops_from_the_trace():
    op_rows, *_ = reader.op_rows(recorded("transformer_xla_framework_op_stats.json"), {})
    assert all(prof.categorize(t, n) == prof.INPUT for t, n, *_ in op_rows)  # XLA code is not in the op stats
    rows = reader.hlo_rows(recorded("transformer_xla_trace_hlo_events.json"))
    doc = prof.build(rows, 11, prof.SOURCE_XLA_TRACE)
    assert doc.ranked_categories()[0][0] == prof.MATMUL
    assert doc.categories[prof.DATA_MOVEMENT] > 0


def _with_rows(table: list, extra: list[tuple[str, str, float]]) -> list:
    """A recorded op-stats table with rows added (type, name, self µs), in xprof's columns."""
    ids = [c["id"] for c in table[1]["cols"]]
    for t, n, us in extra:
        row = {"type": t, "operation": n, "total_self_time": us, "occurrences": 11, "host_or_device": "Host",
               "host_total_self_time_percent": 0.01}
        table[1]["rows"].append({"c": [{"v": row.get(i)} for i in ids]})
    return table


def _read_recorded(monkeypatch, tmp_path: Path, answers: dict, steps: int):
    """`read_capture` of a capture whose xprof tools answer with the recorded documents `answers`."""
    xplane = tmp_path / "cpu.xplane.pb"
    xplane.write_bytes(b"recorded")

    def tool(_xplanes, name, tools, why):
        tools[name] = "ok" if answers.get(name) else f"not available: {why.setdefault(name, 'nothing recorded')}"
        return answers.get(name)

    monkeypatch.setattr(reader, "_tool", tool)
    return reader.read_capture({"xplanes": [str(xplane)], "steps": steps})


def test_op_stats_without_the_steps_math_read_the_split_from_the_trace(monkeypatch, tmp_path):
    """Issue 42: under XLA a profile read "input 97%". The op stats of a jit_compile=True step hold the input ops,
    the launch of the compiled code and the runtime's variable reads, none of the step's math: the split comes
    from the trace's HLO ops, the launch not counted beside them, and the input share is the tf.data ops' alone."""
    table = _with_rows(recorded("transformer_xla_framework_op_stats.json"),
                       [("XlaLaunchV2", "StatefulPartitionedCall/XlaLaunchV2", 900.0),
                        ("ReadVariableOp", "adam/ReadVariableOp", 30.0)])
    answers = {"framework_op_stats": table, "trace_viewer": recorded("transformer_xla_trace_hlo_events.json"),
               "overview_page": recorded("cpu_overview_page.json")}
    doc = _read_recorded(monkeypatch, tmp_path, answers, steps=11)
    assert doc.source == prof.SOURCE_XLA_TRACE and doc.xla_compiled
    assert doc.ranked_categories()[0][0] == prof.MATMUL
    assert doc.share(prof.INPUT) < 0.1  # 5.9 ms of tf.data ops beside 108 ms of compiled ops
    assert not any("XlaLaunch" in r.type for r in doc.top_types)  # its time is the HLO ops'
    hlo_only = prof.build(reader.hlo_rows(answers["trace_viewer"]), 11, prof.SOURCE_XLA_TRACE)
    assert doc.op_ms_per_step == pytest.approx(hlo_only.op_ms_per_step + 5.905867 / 11, rel=1e-3)


def test_op_stats_without_a_single_op_say_so_not_ok(monkeypatch, tmp_path):
    """Op stats that answered with no op row read "not available: ok" (the reason was cut out of the tool's
    status words, which said "ok"): the reason is kept apart from those words."""
    table = recorded("transformer_xla_framework_op_stats.json")
    table[1]["rows"] = []
    doc = _read_recorded(monkeypatch, tmp_path, {"framework_op_stats": table}, steps=11)
    assert not doc.available and doc.reason == "no op in the capture", doc.reason
    assert doc.tools["framework_op_stats"] == "ok" and doc.tools["trace_viewer"].startswith("not available: ")


def test_tf_datas_own_gather_ops_do_not_hide_the_compiled_step(monkeypatch, tmp_path):
    """Issue 42 walk (h42w): a jit_compile=True MLP fed NumPy arrays profiled "input 95%, matmul 0%" in 0.73 ms of op
    time per 12.35 ms step. Its recorded op stats hold tf.data's ops and the GatherV2 that slices the arrays' batches
    (5% of the op time), none of the step's math: the split still comes from the trace."""
    rows, _coverage, _on_device = reader.op_rows(recorded("mlp_xla_array_input_framework_op_stats.json"), {})
    assert {t for t, *_ in rows} == {"Dataset", "GatherV2", "OptionalFromValue"}
    assert not reader.step_math(rows)
    answers = {"framework_op_stats": recorded("mlp_xla_array_input_framework_op_stats.json"),
               "trace_viewer": recorded("transformer_xla_trace_hlo_events.json"),
               "overview_page": recorded("cpu_overview_page.json")}
    doc = _read_recorded(monkeypatch, tmp_path, answers, steps=20)
    assert doc.source == prof.SOURCE_XLA_TRACE and doc.share(prof.INPUT) < 0.5
    f32 = reader.op_rows(recorded("transformer_f32_framework_op_stats.json"), {})[0]
    assert reader.step_math(f32)  # a step run as TensorFlow ops keeps its op stats


def test_cpu_overview_has_no_step_breakdown_and_says_why():
    breakdown, compile_part, hardware = reader.step_breakdown(recorded("cpu_overview_page.json"))
    assert hardware == "CPU_ONLY"
    assert breakdown == {"available": False, "reason": breakdown["reason"]}
    assert "No step time measured" in breakdown["reason"]
    assert not compile_part["available"] and "warm-up" in compile_part["reason"]
    assert reader.tensor_core_share(recorded("cpu_kernel_stats.json"), []) is None


def _gpu_overview(step_ms: float, host: float, launch: float) -> list:
    tables = recorded("cpu_overview_page.json")
    tables[1]["p"].update({"hardware_type": "GPU", "steptime_ms_average": str(step_ms),
                           "host_compute_time_ms_avg": str(host), "kernel_launch_time_ms_avg": str(launch),
                           "device_compute_time_ms_avg": str(step_ms - host - launch),
                           "compile_time_ms_avg": "0.5"})
    return tables


def test_gpu_step_breakdown_and_tensor_core_share_unverified():
    """The Tensor Core share is xprof's own flag (its guess from the kernel name), never a dtype: the 16-bit share
    on a GPU is tests/accelerator/test_profile_on_gpu.py's."""
    breakdown, compile_part, hardware = reader.step_breakdown(_gpu_overview(10.0, 1.0, 1.0))
    assert hardware == "GPU" and breakdown["available"] and breakdown["step_ms"] == 10.0
    assert breakdown["ms"]["kernel_launch"] == 1.0 and compile_part["ms_per_step"] == 0.5
    assert "unverified" in breakdown["note"]
    kernels = recorded("cpu_kernel_stats.json")
    row = lambda name, op, us, tc: {"c": [{"v": v} for v in (  # noqa: E731 - the documented column order
        1, name, 64, 0, "", "", 50.0, True, tc, op, 10, us, us / 10, 1.0, 1.0)]}
    kernels["rows"] = [row("ampere_bf16_s16816gemm_bf16_128x128", "model/dense/MatMul", 300.0, True),
                       row("ampere_sgemm_128x64_nn", "model/dense_1/MatMul", 100.0, False),
                       row("redzone_checker", "model/add", 50.0, False)]
    share = reader.tensor_core_share(kernels, [("MatMul", "model/dense/MatMul", 1.0, 1, None),
                                               ("MatMul", "model/dense_1/MatMul", 1.0, 1, None),
                                               ("AddV2", "model/add", 1.0, 1, None)])
    assert share == pytest.approx(0.75)


@pytest.mark.parametrize("content", [b"", b"this is not an xplane"])
def test_empty_or_corrupt_capture_is_not_available_never_an_error(tmp_path, content):
    xplane = tmp_path / "vm.xplane.pb"
    xplane.write_bytes(content)

    class Record:
        step, ms = [1, 2], [5.0, 6.0]

    doc = reader.write_profile(tmp_path, [xplane], (1, 3), Record(), {})
    assert not doc.available and doc.reason
    assert doc.read_s is not None
    again = prof.Profile.load(tmp_path)
    assert not again.available and again.reason == doc.reason


def test_no_capture_is_not_available(tmp_path):
    doc = reader.write_profile(tmp_path, [], None, None, {})
    assert not doc.available and "no profile captured" in doc.reason


def test_xla_step_with_no_op_row_of_its_own_is_compute_not_input(monkeypatch, tmp_path):
    """Issue-42 walk (h42e): sentiment_train.py under jit_compile read "op time 0.17 ms of a 4.16 ms step, input
    83%, matmul 0%" and, against the baseline, "elementwise −100%". The eager runtime launched the compiled step, so
    no op row held it, and the GatherV2 that slices the NumPy batches (17% of the op rows) passed for the step's
    math. Recorded from that capture: the compiled ops come from the trace and the comparison says the categories
    moved into XLA's clusters instead of claiming they vanished."""
    answers = {"framework_op_stats": recorded("sentiment_xla_walk_framework_op_stats.json"),
               "trace_viewer": recorded("sentiment_xla_walk_trace_hlo_events.json"),
               "overview_page": recorded("cpu_overview_page.json")}
    rows, *_ = reader.op_rows(answers["framework_op_stats"], {})
    assert reader.step_math(rows)  # the GatherV2 alone passes the old test
    xplane = tmp_path / "cpu.xplane.pb"
    xplane.write_bytes(b"recorded")
    monkeypatch.setattr(reader, "_tool", lambda _x, name, tools, _why: tools.setdefault(name, "ok") and answers.get(name))
    doc = reader.read_capture({"xplanes": [str(xplane)], "steps": 20, "wall_ms_per_step": 4.159364})
    assert doc.source == prof.SOURCE_XLA_TRACE and doc.xla_compiled
    assert doc.op_ms_per_step > 1.0  # 1.25 ms of compiled ops, not 0.17 ms of tf.data ops
    assert doc.share(prof.INPUT) < 0.15
    assert doc.share(prof.MATMUL) + doc.share(prof.ELEMENTWISE) + doc.share(prof.DATA_MOVEMENT) > 0.85
    assert "input" not in doc.headline().split(",")[0]
    baseline = prof.Profile.from_dict(recorded("sentiment_walk_baseline_profile.json"))
    change = prof.compare(baseline, doc)
    assert change is not None and not change.comparable
    assert "−100%" not in change.sentence() and "clusters" in change.note
    # without the measured step time (an older request) nothing changes: the op stats stay the profile
    same = reader.read_capture({"xplanes": [str(xplane)], "steps": 20})
    assert same.source == prof.SOURCE_OP_STATS


def test_a_profile_read_before_that_says_its_categories_miss_the_compiled_step():
    """The walk's own profile.json of 03-xla (read before the fix): shown with a note that the rest of the step is
    compiled code, compared with the baseline on the steps' times only, never "elementwise −100%"."""
    old = prof.Profile.from_dict({**recorded("sentiment_walk_baseline_profile.json"), "wall_ms_per_step": 4.159364,
                                  "op_ms_per_step": 0.167767,
                                  "categories": {"data_movement": 0.0292115, "input": 0.1385555}})
    baseline = prof.Profile.from_dict(recorded("sentiment_walk_baseline_profile.json"))
    assert old.misses_compute and not baseline.misses_compute
    slow_host = prof.Profile.from_dict({**recorded("sentiment_walk_baseline_profile.json"), "wall_ms_per_step": 40.0})
    assert not slow_host.misses_compute  # TensorFlow ops doing the step's math, in a slow step: not XLA's
    assert "0.17 ms of the 4.16 ms step" in old.source_note() and "not input" in old.source_note()
    change = prof.compare(baseline, old)
    assert change is not None and not change.comparable
    assert change.sentence() == "the profiled steps took 3.95 → 4.16 ms (+5%)"
