"""Read a run's profiler capture into profile.json (`tfturbo.profile.Profile`), in a child process.

`write_profile` runs after training (the capture is complete and nothing is
being measured any more): it starts `python -m trainer_backend.profile_capture_read`,
hands it the capture's .xplane.pb files and what only the training process
knows (the profiled steps, the window's measured step time, the traced dtype
of each matmul/attention op), and saves what the child answers. The child converts the
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
  on a CPU). The GPU paths follow xprof's documented column ids and are
  unverified here (no GPU with TensorFlow on this project's machines).
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
_SIXTEEN = re.compile(r"f16|bf16|fp16|half|hgemm|h884|h1688|h16816|s16816gemm_bf16|s1688gemm_fp16", re.I)
_GPU_MATMUL_KERNEL = re.compile(r"gemm|conv|dot|matmul|xmma|cutlass", re.I)
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

    return write_profile(run_dir, find_xplanes(instrument.profile_dir), tuple(instrument.profile), record,
                         op_dtypes())


def write_profile(run_dir: Path, xplanes: list[Path], window: tuple[int, int] | None, record: Any,
                  dtypes: dict[str, str]) -> prof.Profile:
    """Read the capture in a child and write profile.json; never raises (an unreadable capture is reported)."""
    started = time.perf_counter()
    if not xplanes or not window:
        document = prof.Profile.unavailable("no profile captured (the profiler window was off or never reached)")
    else:
        request = {"xplanes": [str(p) for p in xplanes], "window": list(window), "steps": window[1] - window[0],
                   "wall_ms_per_step": window_ms(record, window), "op_dtypes": dtypes}
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

def _tool(xplanes: list[str], tool: str, tools: dict[str, str]) -> Any:
    """One xprof tool's JSON, or None with the reason in `tools`."""
    try:
        from xprof.convert.raw_to_tool_data import xspace_to_tool_data

        raw, _content_type = xspace_to_tool_data(xplanes, tool, {})
        data = json.loads(raw) if raw else None
    except Exception as exc:  # noqa: BLE001 - a tool that cannot answer is reported, never fatal
        tools[tool] = f"not available: {type(exc).__name__}: {str(exc)[:200]}"
        return None
    tools[tool] = "ok" if data else "not available: the tool returned nothing"
    return data


def table_rows(table: Any) -> list[dict[str, Any]]:
    """A Google-charts DataTable ({cols, rows: [{c: [{v}]}]}) as dicts keyed by column id."""
    if not isinstance(table, dict):
        return []
    ids = [c.get("id") for c in table.get("cols", []) if isinstance(c, dict)]
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


def hlo_rows(trace: Any) -> list[tuple]:
    """The XLA-compiled ops of a trace (events with an `hlo_op` argument) as op rows (16-bit not known)."""
    events = trace.get("traceEvents", []) if isinstance(trace, dict) else []
    total: dict[str, list[float]] = {}
    for e in events:
        args = e.get("args") if isinstance(e, dict) else None
        if e.get("ph") == "X" and isinstance(args, dict) and args.get("hlo_op") and finite(e.get("dur")):
            slot = total.setdefault(str(args["hlo_op"]), [0.0, 0])
            slot[0] += float(e["dur"])
            slot[1] += 1
    return [(name, name, us, n, None) for name, (us, n) in total.items()]


def step_breakdown(overview: Any) -> tuple[dict[str, Any], dict[str, Any], str]:
    """(step breakdown, compile time, hardware type) from the overview page's input-analysis table."""
    tables = overview if isinstance(overview, list) else []
    props = (tables[1].get("p") or {}) if len(tables) > 1 and isinstance(tables[1], dict) else {}
    hardware = str(props.get("hardware_type") or "")
    step_ms = num(_float(props.get("steptime_ms_average")))
    if hardware == "CPU_ONLY" or not step_ms:
        why = ("the CPU marks no device steps: xprof reports \"No step time measured\"" if hardware == "CPU_ONLY"
               else str(props.get("input_conclusion") or "the profiler measured no step time"))
        compile_part = prof.not_available("the profiler window starts after warm-up, so compilation is not in the "
                                          "capture; the run's warm-up time includes it")
        return prof.not_available(why), compile_part, hardware
    keys = {"input": "infeed_time_ms_avg", "host_compute": "host_compute_time_ms_avg",
            "kernel_launch": "kernel_launch_time_ms_avg", "device_compute": "device_compute_time_ms_avg",
            "device_to_device": "device_to_device_time_ms_avg",
            "collectives": "device_collectives_time_ms_avg", "output": "outfeed_time_ms_avg",
            "compile": "compile_time_ms_avg", "other": "other_time_ms_avg"}
    ms = {k: _float(props.get(v)) for k, v in keys.items()}
    recommendation = (tables[3].get("p") or {}) if len(tables) > 3 and isinstance(tables[3], dict) else {}
    breakdown = {"available": True, "step_ms": step_ms, "ms": ms, "note": _UNVERIFIED,
                 "statements": {k: str(recommendation.get(k) or "") for k in
                                ("kernel_launch_statement", "all_other_statement", "statement")}}
    compile_part = {"available": True, "ms_per_step": ms["compile"], "note": "compilation inside the window"}
    return breakdown, compile_part, hardware


def _float(value: Any) -> float | None:
    try:
        return float(str(value).rstrip("%"))
    except (TypeError, ValueError):
        return None


def kernel_sixteen_bit(kernels: Any, rows: list[tuple]) -> dict[str, Any]:
    """GPU: the share of matmul/conv kernel time in 16-bit kernels (by kernel name) and on Tensor Cores."""
    types = {name: t for t, name, *_rest in rows}
    heavy, sixteen, tensor, float32 = 0.0, 0.0, 0.0, {}
    for k in table_rows(kernels):
        us = k.get("total_duration_us")
        op = str(k.get("op_name") or "")
        kernel = str(k.get("kernel_name") or "")
        if not finite(us):
            continue
        category = prof.categorize(types[op], op) if op in types else \
            prof.MATMUL if _GPU_MATMUL_KERNEL.search(kernel) else prof.OTHER
        if category not in prof.HEAVY:
            continue
        heavy += us
        if _SIXTEEN.search(kernel):
            sixteen += us
        else:
            float32[op or kernel] = float32.get(op or kernel, 0.0) + us
        if k.get("is_kernel_using_tensor_core") is True:
            tensor += us
    if heavy <= 0:
        return prof.not_available("the kernel stats hold no matmul/conv kernels")
    ranked = sorted(float32.items(), key=lambda kv: -kv[1])[:8]
    return {"available": True, "share": sixteen / heavy, "tensor_core_share": tensor / heavy,
            "source": "kernel_stats: 16-bit kernels by name, Tensor Core use as xprof reports it",
            "verified": False, "note": _UNVERIFIED, "float32_ops": [n for n, _ in ranked],
            "float32_share_by_op": [[n, us / heavy] for n, us in ranked]}


def read_capture(request: dict[str, Any]) -> prof.Profile:
    """The whole profile of one capture (called in the child)."""
    xplanes = [p for p in request.get("xplanes", []) if Path(p).is_file() and Path(p).stat().st_size > 0]
    if not xplanes:
        return prof.Profile.unavailable("the capture has no readable .xplane.pb file")
    tools: dict[str, str] = {}
    dtypes = request.get("op_dtypes") or {}
    steps = int(request.get("steps") or 1)
    op_stats = _tool(xplanes, "framework_op_stats", tools)
    rows, coverage, on_device = op_rows(op_stats, dtypes) if op_stats else ([], None, False)
    source = prof.SOURCE_OP_STATS
    if all(prof.categorize(t, n) == prof.INPUT for t, n, *_ in rows):  # XLA-compiled: the ops are in the trace
        trace = _tool(xplanes, "trace_viewer", tools)
        xla = hlo_rows(trace) if trace else []
        if xla:  # the compiled code's ops, and the input ops beside it
            rows, coverage, source = xla + [(n, n, us, o, s) for _t, n, us, o, s in rows], None, prof.SOURCE_XLA_TRACE
    if not rows:
        reason = tools.get("framework_op_stats", "not available: no op in the capture")
        return prof.Profile.unavailable(reason.removeprefix("not available: "), tools=tools)
    overview = _tool(xplanes, "overview_page", tools)
    breakdown, compile_part, hardware = step_breakdown(overview) if overview else (
        prof.not_available("the overview page could not be read"),
        prof.not_available("the overview page could not be read"), "")
    if on_device:
        kernels = _tool(xplanes, "kernel_stats", tools)
        sixteen = kernel_sixteen_bit(kernels, rows) if kernels else prof.not_available("no kernel stats")
    elif source == prof.SOURCE_XLA_TRACE:
        sixteen = prof.not_available("XLA-compiled ops carry no TensorFlow op names or dtypes in a CPU trace")
    else:
        sixteen = prof.sixteen_bit_from_ops(
            rows, source, "CPU: xprof gives no dtypes here; each matmul/attention op's dtype is read from the "
                          "training step's traced graph, matched by name")
    return prof.build(rows, steps, source, coverage=coverage, device=hardware or ("GPU" if on_device else ""),
                      window=request.get("window"), wall_ms_per_step=num(request.get("wall_ms_per_step")),
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
