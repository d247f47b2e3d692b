"""The TensorBoard profiler's own input-pipeline analysis, read without TensorBoard.

xprof converts a captured `.xplane.pb` into the same JSON the Profile tab
shows (`xspace_to_tool_data(paths, "input_pipeline_analyzer", {})`). Its
numbers need device step markers: on the CPU it reports `CPU_ONLY` and "No
step time measured", so there it is reported as not available, with that
reason, and tfturbo's own probes carry the verdict alone.

The analyzer's JSON is a list of data tables; table 1's properties hold the
averages and the profiler's conclusion, table 2's rows the input ops.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

PROFILED_STEPS = 10
CPU_REASON = ("no accelerator: the profiler's input analysis needs device step markers "
              "(on the CPU it reports \"No step time measured\")")


def unavailable(reason: str) -> dict[str, Any]:
    return {"available": False, "reason": reason}


def accelerator_present() -> bool:
    import tensorflow as tf

    return bool(tf.config.list_physical_devices("GPU") or tf.config.list_physical_devices("TPU"))


def find_xplanes(logdir: str | Path) -> list[Path]:
    """The .xplane.pb files of the newest capture under `logdir` (…/plugins/profile/<run>/)."""
    runs = sorted({p.parent for p in Path(logdir).glob("**/plugins/profile/*/*.xplane.pb")})
    return sorted(runs[-1].glob("*.xplane.pb")) if runs else []


def _float(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def input_analysis(xplanes: list[Path]) -> dict[str, Any]:
    """Summary of the profiler's input_pipeline_analyzer for a capture."""
    if not xplanes:
        return unavailable("no profile captured (no .xplane.pb file)")
    try:
        from xprof.convert.raw_to_tool_data import xspace_to_tool_data

        raw, _content_type = xspace_to_tool_data([str(p) for p in xplanes], "input_pipeline_analyzer", {})
        tables = json.loads(raw)
    except Exception as exc:  # noqa: BLE001 - a missing plugin or an unreadable capture must not fail the probe
        return unavailable(f"the profiler's analysis could not be read: {type(exc).__name__}: {exc}")
    props = (tables[1].get("p") or {}) if len(tables) > 1 else {}
    step_ms = _float(props.get("steptime_ms_average"))
    input_ms = _float(props.get("infeed_time_ms_avg"))
    hardware = props.get("hardware_type", "")
    result: dict[str, Any] = {
        "available": bool(step_ms) and hardware != "CPU_ONLY",
        "hardware_type": hardware,
        "conclusion": props.get("input_conclusion", ""),
        "next_step": props.get("summary_nextstep", ""),
        "step_ms_average": step_ms,
        "input_ms_average": input_ms,
        "input_percent": round(100 * input_ms / step_ms, 2) if step_ms and input_ms is not None else None,
        "device_compute_ms_average": _float(props.get("device_compute_time_ms_avg")),
        "top_input_ops": _top_ops(tables[2] if len(tables) > 2 else {}),
        "xplanes": [str(p) for p in xplanes],
    }
    if not result["available"]:
        result["reason"] = CPU_REASON if hardware == "CPU_ONLY" else (result["conclusion"] or "no step time")
    return result


def _top_ops(table: dict[str, Any], n: int = 5) -> list[dict[str, Any]]:
    """The input ops that took the most self time: [{op, self_ms, percent}]."""
    ids = [c.get("id") for c in table.get("cols", [])]
    rows = []
    for row in table.get("rows", []):
        cells = dict(zip(ids, (c.get("v") for c in row.get("c", []))))
        rows.append({"op": cells.get("opName"), "self_ms": _float(cells.get("selfTimeInMs")),
                     "percent": _float(cells.get("selfTimeInPercent"))})
    return sorted(rows, key=lambda r: -(r["self_ms"] or 0))[:n]


def profile_steps(model: Any, ds: Any, logdir: str | Path | None = None,
                  steps: int = PROFILED_STEPS) -> dict[str, Any]:
    """Capture `steps` training steps on an accelerator and return the profiler's input analysis.

    The capture is kept (in `logdir`, or a new temporary folder) so the user can
    open it with `tensorboard --logdir`.
    """
    if not accelerator_present():
        return unavailable(CPU_REASON)
    import tempfile

    import tensorflow as tf

    logdir = logdir or tempfile.mkdtemp(prefix="tfturbo-probe-profile-")

    tf.profiler.experimental.start(str(logdir))
    try:
        model.fit(ds.repeat(), epochs=1, steps_per_epoch=steps, verbose=0)
    finally:
        tf.profiler.experimental.stop()
    return input_analysis(find_xplanes(logdir))
