"""Read a run's profiler capture into profile.json (`tfturbo.profile.Profile`), in a child process.

`write_profile` runs after training (the capture is complete and nothing is
being measured any more): it starts `python -m trainer_backend.profile_capture_read`,
hands it the capture's .xplane.pb files and what only the training process
knows (the profiled steps, the window's measured step time, the traced dtype
of each matmul/attention op, and under XLA the operand dtype of each compiled
op holding a dot or convolution, read from the HLO modules the capture
carries), and saves what the child answers. The child converts the
capture with xprof's own tools (`xspace_to_tool_data`, what TensorBoard's
Profile tab shows) and prints one JSON document. A child keeps a crash or a
hang of xprof's C++ code (or its heavy absl logging, which goes to the log)
out of the run: a capture that cannot be read gives "not available: why".

Which xprof tool answers what (xprof 2.24):
- framework_op_stats: one row per TensorFlow op (type, name, occurrences,
  self time in µs, host/device). On a CPU every op is a host op; on a GPU the
  device rows are the step's compute. Its second table leaves out IDLE; its
  rows stop at 500, so `coverage` says how much of the op time they hold.
- trace_viewer: under XLA on a CPU the op stats hold only the input ops; the
  compiled code's HLO ops are trace events with an `hlo_op` argument.
- overview_page: the step-time breakdown (input, host compute, kernel launch,
  device compute, compilation, ...) and `device_compute_16bit_percent` —
  only where the device marks steps (not on a CPU: "No step time measured").
- kernel_stats: per GPU kernel, its op, duration and Tensor Core use (empty
  on a CPU; xprof 2.24's columns, `GenerateKernelStatsDataTable` in
  xprof/convert/xplane_to_kernel_stats_db.cc). Its Tensor Core flag is xprof's
  guess from the kernel's name (`IsKernelUsingTensorCore`); it is shown as
  such and never read as a dtype.

The share of matmul/attention time in 16-bit comes from op dtypes only, never
from kernel names (XLA's `gemm_fusion_dot_N` kernels and Hopper's cuBLAS
kernels carry none): on a device with XLA from the HLO operand types of the
compiled ops (the capture's `Hlo Proto`s, `hlo_dtypes`), else from the traced
step function's dtypes matched to the op rows by name, else "not available"
(unknown). The GPU paths are unverified here (no GPU with TensorFlow on this
project's machines): tests/accelerator/ feeds them tables built with xprof's
column ids, benchmarks/accelerator_check.py checks them on a GPU.
"""

from __future__ import annotations

import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tfturbo import profile as prof
from tfturbo.numbers import finite, json_safe, num

CHILD_TIMEOUT_S = 180
ROW_LIMIT_NOTE = "xprof returns at most 500 op rows"
SIXTEEN_BIT = ("float16", "bfloat16")
# a kernel of a matmul or convolution by its name, when its op is not in the op rows ("conv" but not "convert")
_GPU_MATMUL_KERNEL = re.compile(r"gemm|conv(?!ert)|dot|matmul|xmma|cutlass", re.I)
# HLO opcodes (and cuBLAS/cuDNN custom-call targets) whose time is matmul/convolution time
_HLO_HEAVY_OPCODES = {"dot", "convolution"}
_HLO_HEAVY_TARGET = re.compile(r"gemm|conv(?!ert)|matmul", re.I)
_UNVERIFIED = "unverified: written against xprof's documented output, not yet run on a GPU"


# ------------------------------------------------------------------ in the training process

def op_dtypes() -> dict[str, str]:
    """The dtype of every matmul/conv and attention op TensorFlow traced in this process (the training step's
    graph functions): on a CPU xprof gives no dtypes, so the profile's ops are matched to these by name."""
    import tensorflow as tf
    from tensorflow.python.eager import context

    out: dict[str, str] = {}
    ctx = context.context()
    for fname in ctx.list_function_names():
        try:
            nodes = ctx.get_function_def(fname).node_def
        except Exception:  # noqa: BLE001 - a function that went away meanwhile
            continue
        for node in nodes:
            if prof.categorize(node.op, node.name) not in prof.HEAVY or "T" not in node.attr:
                continue
            try:
                out.setdefault(node.name, tf.dtypes.as_dtype(node.attr["T"].type).name)
            except (TypeError, ValueError):
                continue
    return out


def hlo_dtypes(xplanes: list[Path]) -> dict[str, str]:
    """{"MODULE/OP": dtype} for every XLA-compiled op of the capture that is or fuses a dot or a convolution
    (a cuBLAS/cuDNN custom call included): the dtype of that dot's operands, from the HLO modules TensorFlow's
    profiler stores in the capture (the metadata plane's "Hlo Proto" stats). The trace names an op by its
    module and name (`hlo_module`, `hlo_op`), so its time can be matched. {} without XLA or when unreadable.

    Checked on this CPU: a bfloat16 matmul under jit_compile=True is stored as a dot with float32 operands
    (XLA's CPU compiler converts them), so on a CPU this reads float32, truthfully; on a GPU the same dot stays
    bfloat16 (unverified here)."""
    try:
        from tensorflow.compiler.xla import xla_data_pb2
        from tensorflow.compiler.xla.service import hlo_pb2
        from tensorflow.tsl.profiler.protobuf import xplane_pb2
    except ImportError:  # pragma: no cover - TensorFlow without these modules: no HLO dtypes
        return {}
    out: dict[str, str] = {}
    for path in xplanes:
        try:
            space = xplane_pb2.XSpace.FromString(Path(path).read_bytes())
        except Exception:  # noqa: BLE001 - an unreadable capture is reported by the child
            continue
        for plane in space.planes:
            names = {k: m.name for k, m in plane.stat_metadata.items()}
            for meta in plane.event_metadata.values():
                for stat in meta.stats:
                    if names.get(stat.metadata_id) == "Hlo Proto" and stat.bytes_value:
                        try:
                            module = hlo_pb2.HloProto.FromString(stat.bytes_value).hlo_module
                        except Exception:  # noqa: BLE001 - one unreadable module: the others still count
                            continue
                        out.update(module_dtypes(module, xla_data_pb2.PrimitiveType.Name))
    return out


def module_dtypes(module: Any, type_name: Any) -> dict[str, str]:
    """{"MODULE/OP": dtype} of one HloModuleProto: each instruction whose own opcode, or whose called (fused)
    computations, hold a dot or convolution, with that dot's first operand's element type."""
    by_id = {i.id: i for c in module.computations for i in c.instructions}
    computations = {c.id: c for c in module.computations}

    def heavy_dtype(instruction, seen=()) -> str | None:
        target = instruction.custom_call_target if instruction.opcode == "custom-call" else ""
        if instruction.opcode in _HLO_HEAVY_OPCODES or (target and _HLO_HEAVY_TARGET.search(target)):
            operand = by_id.get(instruction.operand_ids[0]) if instruction.operand_ids else None
            return _dtype(type_name(operand.shape.element_type)) if operand is not None else None
        for cid in instruction.called_computation_ids:
            if cid in seen or cid not in computations:
                continue
            for inner in computations[cid].instructions:
                found = heavy_dtype(inner, (*seen, cid))
                if found:
                    return found
        return None

    out = {}
    for computation in module.computations:
        for instruction in computation.instructions:
            dtype = heavy_dtype(instruction)
            if dtype:
                out[f"{module.name}/{instruction.name}"] = dtype
    return out


def _dtype(xla_type: str) -> str:
    """An XLA element type ('BF16', 'F32') as TensorFlow names the dtype ('bfloat16', 'float32')."""
    return {"F16": "float16", "BF16": "bfloat16", "F32": "float32", "F64": "float64"}.get(xla_type, xla_type.lower())


def window_ms(record: Any, window: tuple[int, int] | None) -> float | None:
    """The median measured step time of the profiled steps [start, stop)."""
    if not window:
        return None
    inside = [ms for step, ms in zip(record.step, record.ms) if window[0] <= step < window[1]]
    return statistics.median(inside) if inside else None


def after_training(run_dir: Path, instrument: Any, record: Any) -> prof.Profile | None:
    """profile.json for a run whose profiler window ran (None when it never started)."""
    if not (instrument.profile_done and instrument.profile):
        return None
    from .diagnostics.profile_reader import find_xplanes

    xplanes = find_xplanes(instrument.profile_dir)
    return write_profile(run_dir, xplanes, tuple(instrument.profile), record, op_dtypes(), hlo_dtypes(xplanes))


def write_profile(run_dir: Path, xplanes: list[Path], window: tuple[int, int] | None, record: Any,
                  dtypes: dict[str, str], hlo: dict[str, str] | None = None) -> prof.Profile:
    """Read the capture in a child and write profile.json; never raises (an unreadable capture is reported)."""
    started = time.perf_counter()
    if not xplanes or not window:
        document = prof.Profile.unavailable("no profile captured (the profiler window was off or never reached)")
    else:
        request = {"xplanes": [str(p) for p in xplanes], "window": list(window), "steps": window[1] - window[0],
                   "wall_ms_per_step": window_ms(record, window), "op_dtypes": dtypes, "hlo_dtypes": hlo or {}}
        document = _ask_child(request)
    document.read_s = round(time.perf_counter() - started, 3)
    try:
        document.save(run_dir)
    except OSError as exc:
        print(f"trainer_backend: profile.json not written: {exc}", file=sys.stderr)
    print(f"trainer_backend: profile read in {document.read_s:.2f} s: {document.headline()}", file=sys.stderr)
    return document


def _ask_child(request: dict[str, Any]) -> prof.Profile:
    try:
        done = subprocess.run([sys.executable, "-m", "trainer_backend.profile_capture_read"],
                              input=json.dumps(request), capture_output=True, text=True, timeout=CHILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return prof.Profile.unavailable(f"reading the capture took longer than {CHILD_TIMEOUT_S} s")
    except OSError as exc:
        return prof.Profile.unavailable(f"the capture reader could not start: {exc}")
    sys.stderr.write(done.stderr[-20000:])  # xprof's own log, into backend.log
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        return prof.Profile.unavailable(f"the capture reader ended with exit code {done.returncode} "
                                        "(see backend.log)")
    try:
        return prof.Profile.from_dict(json.loads(lines[-1]))
    except ValueError:
        return prof.Profile.unavailable("the capture reader's answer was not JSON (see backend.log)")


# ------------------------------------------------------------------ in the child

def _tool(xplanes: list[str], tool: str, tools: dict[str, str], why: dict[str, str]) -> Any:
    """One xprof tool's JSON, or None with the reason in `tools` ("not available: why", as profile.json keeps
    it) and the why alone in `why` (what the profile says when it has no op)."""
    try:
        from xprof.convert.raw_to_tool_data import xspace_to_tool_data

        raw, _content_type = xspace_to_tool_data(xplanes, tool, {})
        data = json.loads(raw) if raw else None
    except Exception as exc:  # noqa: BLE001 - a tool that cannot answer is reported, never fatal
        why[tool] = f"{type(exc).__name__}: {str(exc)[:200]}"
        data = None
    else:
        if not data:
            why[tool] = "the tool returned nothing"
    tools[tool] = "ok" if data else f"not available: {why[tool]}"
    return data


def table_rows(table: Any) -> list[dict[str, Any]]:
    """A Google-charts DataTable ({cols, rows: [{c: [{v}]}]}) as dicts keyed by column id."""
    if not isinstance(table, dict):
        return []
    ids: list[Any] = [c.get("id") for c in table.get("cols", []) if isinstance(c, dict)]
    return [dict(zip(ids, (c.get("v") if isinstance(c, dict) else None for c in r.get("c", []))))
            for r in table.get("rows", []) if isinstance(r, dict)]


def dtype_of(name: str, dtypes: dict[str, str]) -> str | None:
    """The traced dtype of a profiled op: the profile prefixes the graph's name with its callers
    ('StatefulPartitionedCall/gradient_tape/…/MatMul' is the step function's 'gradient_tape/…/MatMul')."""
    parts = name.split("/")
    for i in range(len(parts)):
        dtype = dtypes.get("/".join(parts[i:]))
        if dtype is not None:
            return dtype
    return None


def op_rows(op_stats: Any, dtypes: dict[str, str]) -> tuple[list[tuple], float | None, bool]:
    """framework_op_stats → (type, name, self µs, occurrences, 16-bit) rows, their coverage, and whether the
    rows are device rows (a GPU/TPU: the host rows are the runtime around them)."""
    tables = op_stats if isinstance(op_stats, list) else [op_stats]
    table = tables[1] if len(tables) > 1 else tables[0] if tables else {}  # the second one leaves out IDLE
    rows = [r for r in table_rows(table) if r.get("type") != "IDLE" and finite(r.get("total_self_time"))]
    device = [r for r in rows if r.get("host_or_device") == "Device"]
    input_rows = [r for r in rows if prof.categorize(str(r.get("type")), str(r.get("operation"))) == prof.INPUT]
    chosen = device + [r for r in input_rows if r not in device] if device else rows
    share_key = "device_total_self_time_percent" if device else "host_total_self_time_percent"
    shares = [r.get(share_key) for r in (device or rows)]
    coverage = sum(s for s in shares if finite(s)) if shares and all(finite(s) for s in shares) else None
    out = []
    for r in chosen:
        name = str(r.get("operation") or "")
        dtype = dtype_of(name, dtypes)
        out.append((str(r.get("type") or ""), name, float(r["total_self_time"]),
                    int(r["occurrences"]) if finite(r.get("occurrences")) else None,
                    None if dtype is None else dtype in ("float16", "bfloat16")))
    return out, (min(1.0, coverage) if coverage is not None else None), bool(device)


def hlo_rows(trace: Any, dtypes: dict[str, str] | None = None) -> list[tuple]:
    """The XLA-compiled ops of a trace (events with an `hlo_op` argument) as op rows; 16-bit from `dtypes`
    (`hlo_dtypes`: the ops that hold a dot or convolution, by module and name), else not known."""
    events = trace.get("traceEvents", []) if isinstance(trace, dict) else []
    total: dict[str, list] = {}
    for e in events:
        args = e.get("args") if isinstance(e, dict) else None
        if e.get("ph") == "X" and isinstance(args, dict) and args.get("hlo_op") and finite(e.get("dur")):
            op = str(args["hlo_op"])
            dtype = (dtypes or {}).get(f"{args.get('hlo_module')}/{op}")
            slot = total.setdefault(op, [0.0, 0, None])
            slot[0] += float(e["dur"])
            slot[1] += 1
            slot[2] = slot[2] if dtype is None else dtype
    return [(name, name, us, n, None if dtype is None else dtype in SIXTEEN_BIT)
            for name, (us, n, dtype) in total.items()]


STEP_MATH_FLOOR = 0.10  # below this share of the op stats' time, the step's math is not in them (XLA compiled it)


def step_math(rows: list[tuple]) -> bool:
    """Whether the op stats hold the step's math. Under XLA on a CPU they hold only the input ops, the launches of
    the compiled code (XlaLaunch, _XlaRun, with the cluster's time in them), the runtime's variable reads and the
    few ops tf.data's own functions run (the GatherV2 that slices a NumPy array's batches: 5% of a jit_compile=True
    MLP's op time read "input 95%" in the issue-42 walk): the split of that time is in the trace's HLO ops. A step
    that runs its math as TensorFlow ops has it as most of its op time, and a trace without HLO ops changes
    nothing."""
    total = float(sum(us for _t, _n, us, *_ in rows))
    math = float(sum(us for t, n, us, *_ in rows if prof.categorize(t, n) in prof.STEP_MATH))
    return math > 0 and math >= STEP_MATH_FLOOR * total


def misses_step(rows: list[tuple], steps: int, wall_ms_per_step: float | None) -> bool:
    """Whether the op stats hold too little of the measured step time to be its compute. Under XLA on a CPU a
    compiled step launched by the eager runtime (Keras' jit_compile=True `multi_step_on_iterator`) has no op row
    of its own, so the tf.data ops beside it (and the GatherV2 that slices a NumPy array's batches, 17% of that
    op time in the issue-42 walk, above `STEP_MATH_FLOOR`) were read as the step: "input 83%, matmul 0%". A step
    run as TensorFlow ops has most of its wall time in its op rows; reading the trace of one without XLA finds no
    HLO op and changes nothing."""
    if not wall_ms_per_step or wall_ms_per_step <= 0:
        return False
    op_ms = float(sum(us for _t, _n, us, *_ in rows)) / 1000.0 / max(1, steps)
    return op_ms < prof.OP_TIME_FLOOR * wall_ms_per_step


def with_trace(rows: list[tuple], xla: list[tuple]) -> list[tuple]:
    """The compiled code's HLO ops (`hlo_rows`) and the op stats' input ops beside them, named as the trace's rows
    are. The launches of compiled code and the runtime's variable reads are left out: the launches' time is their
    HLO ops' time, which the trace gives op by op (counting both would count a cluster twice), and the trace's
    categories are read from HLO names, which a TensorFlow op's name is not."""
    return xla + [(n, n, us, o, s) for t, n, us, o, s in rows if prof.categorize(t, n) == prof.INPUT]


def step_breakdown(overview: Any) -> tuple[prof.ProfilePart, prof.ProfilePart, str]:
    """(step breakdown, compile time, hardware type) from the overview page's input-analysis table."""
    tables = overview if isinstance(overview, list) else []
    props = (tables[1].get("p") or {}) if len(tables) > 1 and isinstance(tables[1], dict) else {}
    hardware = str(props.get("hardware_type") or "")
    step_ms = num(_float(props.get("steptime_ms_average")))
    if hardware == "CPU_ONLY" or not step_ms:
        why = ("the CPU marks no device steps: xprof reports \"No step time measured\"" if hardware == "CPU_ONLY"
               else str(props.get("input_conclusion") or "the profiler measured no step time"))
        return prof.not_available(why), prof.not_available(
            "the profiler window starts after warm-up, so compilation is not in the capture; the run's warm-up "
            "time includes it"), hardware
    keys = {"input": "infeed_time_ms_avg", "host_compute": "host_compute_time_ms_avg",
            "kernel_launch": "kernel_launch_time_ms_avg", "device_compute": "device_compute_time_ms_avg",
            "device_to_device": "device_to_device_time_ms_avg",
            "collectives": "device_collectives_time_ms_avg", "output": "outfeed_time_ms_avg",
            "compile": "compile_time_ms_avg", "other": "other_time_ms_avg"}
    ms = {k: _float(props.get(v)) for k, v in keys.items()}
    recommendation = (tables[3].get("p") or {}) if len(tables) > 3 and isinstance(tables[3], dict) else {}
    breakdown: prof.ProfilePart = {"available": True, "step_ms": step_ms, "ms": ms, "note": _UNVERIFIED,
                 "statements": {k: str(recommendation.get(k) or "") for k in
                                ("kernel_launch_statement", "all_other_statement", "statement")}}
    compile_part: prof.ProfilePart = {"available": True, "ms_per_step": ms["compile"],
                                      "note": "compilation inside the window"}
    return breakdown, compile_part, hardware


def _float(value: Any) -> float | None:
    try:
        return float(str(value).rstrip("%"))
    except (TypeError, ValueError):
        return None


def tensor_core_share(kernels: Any, rows: list[tuple]) -> float | None:
    """GPU: the share of matmul/conv kernel time xprof marks as using Tensor Cores (its guess from the kernel's
    name, `IsKernelUsingTensorCore`: with TF32, float32 kernels use them too). A kernel is heavy by its op's
    category when the op rows hold it, else by its name (`conv` never matching `convert`)."""
    types = {name: t for t, name, *_rest in rows}
    heavy = tensor = 0.0
    for k in table_rows(kernels):
        us, op, kernel = k.get("total_duration_us"), str(k.get("op_name") or ""), str(k.get("kernel_name") or "")
        if not finite(us):
            continue
        category = prof.categorize(types[op], op) if op in types else \
            prof.MATMUL if _GPU_MATMUL_KERNEL.search(kernel) else prof.OTHER
        if category in prof.HEAVY:
            heavy += us
            tensor += us if k.get("is_kernel_using_tensor_core") is True else 0.0
    return tensor / heavy if heavy > 0 else None


def device_sixteen_bit(rows: list[tuple], trace_rows: list[tuple], kernels: Any, hlo: dict[str, str]
                       ) -> prof.ProfilePart:
    """On a GPU or TPU: the 16-bit share from op dtypes — the compiled ops' HLO operand types under XLA
    (`trace_rows` from `hlo_rows` with `hlo`), else the traced graph's dtypes of the device's op rows — or
    "not available" when neither knows them; with xprof's Tensor Core share beside it."""
    heavy = {name for name, *_r, sixteen in trace_rows if sixteen is not None}
    if heavy:
        sixteen = prof.sixteen_bit_from_ops(trace_rows, prof.SOURCE_XLA_TRACE,
                                            "XLA: the operand dtype of each compiled dot and convolution, from "
                                            "the capture's HLO modules", heavy=heavy)
    else:
        sixteen = prof.sixteen_bit_from_ops(rows, prof.SOURCE_OP_STATS,
                                            "each matmul/attention op's dtype from the training step's traced "
                                            "graph, matched to the device's op rows by name")
    if not sixteen.get("available"):
        sixteen = prof.not_available("unknown: no matmul/conv op of the capture could be matched to a dtype "
                                     "(neither the HLO modules nor the traced graph name it); kernel names are "
                                     "never read as dtypes")
    share = tensor_core_share(kernels, rows) if kernels else None
    if share is not None:
        sixteen["tensor_core_share"] = share
        sixteen["tensor_core_source"] = ("xprof's kernel_stats: Tensor Core use guessed from kernel names "
                                         "(with TF32, float32 kernels use Tensor Cores too)")
    sixteen.update({"verified": False, "note": _UNVERIFIED})
    return sixteen


def read_capture(request: dict[str, Any]) -> prof.Profile:
    """The whole profile of one capture (called in the child)."""
    xplanes = [p for p in request.get("xplanes", []) if Path(p).is_file() and Path(p).stat().st_size > 0]
    if not xplanes:
        return prof.Profile.unavailable("the capture has no readable .xplane.pb file")
    tools: dict[str, str] = {}
    why: dict[str, str] = {}  # each tool that gave nothing: why
    dtypes = request.get("op_dtypes") or {}
    steps = int(request.get("steps") or 1)
    op_stats = _tool(xplanes, "framework_op_stats", tools, why)
    rows, coverage, on_device = op_rows(op_stats, dtypes) if op_stats else ([], None, False)
    source = prof.SOURCE_OP_STATS
    wall = num(request.get("wall_ms_per_step"))
    if not step_math(rows) or misses_step(rows, steps, wall):  # XLA-compiled: the step's ops are in the trace
        trace = _tool(xplanes, "trace_viewer", tools, why)
        xla = hlo_rows(trace) if trace else []
        if xla:
            rows, coverage, source = with_trace(rows, xla), None, prof.SOURCE_XLA_TRACE
    if not rows:
        return prof.Profile.unavailable(why.get("framework_op_stats", "no op in the capture"), tools=tools)
    overview = _tool(xplanes, "overview_page", tools, why)
    breakdown, compile_part, hardware = step_breakdown(overview) if overview else (
        prof.not_available("the overview page could not be read"),
        prof.not_available("the overview page could not be read"), "")
    if on_device:
        hlo = request.get("hlo_dtypes") or {}
        trace = _tool(xplanes, "trace_viewer", tools, why) if hlo else None
        kernels = _tool(xplanes, "kernel_stats", tools, why)
        sixteen = device_sixteen_bit(rows, hlo_rows(trace, hlo) if trace else [], kernels, hlo)
    elif source == prof.SOURCE_XLA_TRACE:
        sixteen = prof.not_available("not read on a CPU under XLA: XLA's CPU compiler computes 16-bit dots in "
                                     "float32 (its HLO converts their operands), so the share would judge XLA, "
                                     "not the policy")
    else:
        sixteen = prof.sixteen_bit_from_ops(
            rows, source, "CPU: xprof gives no dtypes here; each matmul/attention op's dtype is read from the "
                          "training step's traced graph, matched by name")
    return prof.build(rows, steps, source, coverage=coverage, device=hardware or ("GPU" if on_device else ""),
                      window=request.get("window"), wall_ms_per_step=wall,
                      sixteen_bit=sixteen, step_breakdown=breakdown, compile=compile_part, tools=tools)


def main() -> int:
    request = json.loads(sys.stdin.read() or "{}")
    try:
        document = read_capture(request)
    except Exception as exc:  # noqa: BLE001 - reported as not available, the traceback to the log
        import traceback

        traceback.print_exc(file=sys.stderr)
        document = prof.Profile.unavailable(f"the capture could not be read: {type(exc).__name__}: {exc}")
    sys.stdout.write(json.dumps(json_safe(document.to_dict()), allow_nan=False, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
