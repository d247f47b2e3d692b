"""The study as text: the tutorial's table with the user's own numbers, then what to change.

Relative step time is per sample (1 / speed-up), so a larger-batch rung
compares fairly with the others; its interval comes from the speed-up's.
"""

from __future__ import annotations

import math
from typing import Any

from ..console import format_finding


def _rel_time(entry: dict[str, Any]) -> str:
    s, ci = entry.get("speedup"), entry.get("speedup_ci95") or [None, None]
    if not isinstance(s, (int, float)) or not s:
        return "—"
    lo, hi = ci
    if isinstance(lo, (int, float)) and isinstance(hi, (int, float)) and lo > 0 and hi > 0:
        return f"{1 / s:.2f}x [{1 / hi:.2f}, {1 / lo:.2f}]"
    return f"{1 / s:.2f}x"


def _memory(entry: dict[str, Any]) -> str:
    ratio = entry.get("memory_ratio")
    if not isinstance(ratio, (int, float)):
        return "—"
    kind = " (host)" if entry.get("memory_kind") == "host" else ""
    return f"{ratio:.2f}x{kind}"


def _metric(entry: dict[str, Any]) -> str:
    metric, delta = entry.get("metric"), entry.get("val_delta")
    if not metric or not isinstance(delta, (int, float)):
        return "—"
    short = metric.replace("val_", "")
    if metric.endswith("loss"):
        return f"{short} {delta:+.4f}"
    return f"{short} {delta * 100:+.2f} pp"


def _kept(entry: dict[str, Any]) -> str:
    if entry.get("skipped"):
        return "skipped"
    if entry.get("rung") == "baseline":
        return "baseline" if entry.get("kept") else str(entry.get("status") or "failed")
    return "KEPT" if entry.get("kept") else "rejected"


def render_table(ladder: list[dict[str, Any]]) -> str:
    header = ("#", "configuration", "rel. step time [95% CI]", "peak memory", "val vs baseline", "decision")
    rows = [header]
    for i, e in enumerate(ladder, 1):
        rows.append((str(i), e.get("label") or e.get("name", ""), _rel_time(e), _memory(e), _metric(e), _kept(e)))
    widths = [max(len(r[c]) for r in rows) for c in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    lines.append("rel. step time is per sample (1.00x = baseline; lower is faster); the interval is 95%.")
    return "\n".join(lines)


def render_reasons(ladder: list[dict[str, Any]]) -> str:
    return "\n".join(f"{i}. {e.get('name')}: {e.get('reason', '')}" for i, e in enumerate(ladder, 1))


def render_adaptive(adaptive: dict[str, Any], ladder: list[dict[str, Any]]) -> str:
    runs = [e for e in ladder if isinstance(e.get("steps_completed"), int)]
    if not runs:
        return ""
    saved = adaptive.get("steps_saved") or 0
    planned = adaptive.get("steps_planned") or 0
    if saved <= 0:
        return f"Adaptive measurement: every rung ran its full {planned // max(1, len(runs))} steps " \
               "(the step-time interval never got within the target earlier)."
    seconds = adaptive.get("seconds_saved") or 0.0
    counts = ", ".join(f"{e['name']} {e['steps_completed']}" for e in runs)
    return (f"Adaptive measurement stopped each rung once its step-time interval was tight enough "
            f"(steps run: {counts}): {saved} of {planned} planned steps not run, about {_duration(seconds)} saved.")


def _duration(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "n/a"
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def render_study(doc: dict[str, Any]) -> str:
    """The whole text output of `tfturbo tune`."""
    lines = [f"tfturbo tune {doc.get('workload')} — study in {doc.get('study_dir')}"]
    env = doc.get("environment") or {}
    if env:
        lines.append(f"environment: TensorFlow {env.get('tensorflow')}, Keras {env.get('keras')}; "
                     f"recommended policy {env.get('recommended_policy')} ({env.get('reason', '')})")
    probe = doc.get("probe") or {}
    if probe.get("verdict"):
        frac = probe.get("input_fraction")
        extra = f", {frac:.0%} of the step waits for data" if isinstance(frac, (int, float)) else ""
        lines.append(f"input: {str(probe['verdict']).replace('_', '-')}{extra}")
    ladder = doc.get("ladder") or []
    if ladder:
        lines += ["", render_table(ladder), "", render_reasons(ladder)]
        adaptive = render_adaptive(doc.get("adaptive") or {}, ladder)
        if adaptive:
            lines += ["", adaptive]
    if doc.get("message"):
        lines += ["", f"status: {doc.get('status')} — {doc['message']}"]
    rec = doc.get("recommended")
    if rec:
        best = next((e for e in ladder if e.get("name") == doc.get("recommended_rung")), None)
        if best is not None and best.get("rung") != "baseline":
            lines += ["", f"Recommended: {best.get('label')} — {best.get('speedup', 0):.2f}x the baseline's "
                          f"throughput, validation within tolerance."]
        else:
            lines += ["", "Recommended: keep the baseline settings — no change was measurably faster "
                          "while keeping the validation metric."]
    if doc.get("snippet"):
        lines += ["", doc["snippet"].rstrip()]
    serious = [f for f in doc.get("findings") or [] if f.get("severity") in ("warning", "error")]
    if serious:
        lines += ["", "Findings:"] + [format_finding(f) for f in serious]
    if doc.get("report"):
        lines += ["", f"Report: {doc['report']}"]
    lines.append(f"Study: {doc.get('study_dir')}/study.yaml")
    return "\n".join(lines)

