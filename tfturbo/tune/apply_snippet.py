"""The code changes a user makes in their own training script for the recommended settings.

The study measured settings (policy, XLA, batch, learning-rate scale, the
automatic fixes); a user applies them as code. This turns the difference
between the baseline and the recommended settings, plus what the audit
found, into a patch-like snippet: `-` lines to change, `+` lines to write,
each with the reason. Each lever writes its own hunks (`Lever.hunks`), in the
checklist's order. The tune command, the wizard and the report all show this
same text.
"""

from __future__ import annotations

from typing import Any

from ..settings import RunSettings
from . import levers


def _settings(s: RunSettings | dict[str, Any] | None) -> RunSettings:
    if isinstance(s, RunSettings):
        return s
    return RunSettings.from_dict(s or {})


def snippet(recommended_settings: RunSettings | dict[str, Any] | None,
            baseline_settings: RunSettings | dict[str, Any] | None,
            findings: list[dict[str, Any]] | None = None, baseline_summary: dict[str, Any] | None = None) -> str:
    """Patch-like text with the changes from `baseline_settings` to `recommended_settings`; `baseline_summary`
    (the baseline run's summary.json) says how the workload's code reads (its optimizer)."""
    rec, base = _settings(recommended_settings), _settings(baseline_settings)
    findings = [f for f in findings or [] if isinstance(f, dict)]
    optimizer = (baseline_summary or {}).get("optimizer")
    device = (baseline_summary or {}).get("device")
    code = levers.WorkloadCode(optimizer if isinstance(optimizer, dict) else None,
                               device if isinstance(device, str) else None)
    hunks = [h for lever in levers.LEVERS for h in lever.hunks(rec, base, findings, code)]
    extras = [line for lever in levers.LEVERS for line in lever.extras(rec, findings)]
    title = f"# tfturbo: changes for the recommended settings — {rec.label()}"
    if not hunks:
        return "\n".join([
            title,
            f"# No code changes: the measured ladder kept your current settings ({base.label()}).",
            "# No change beat them beyond the measurement noise while keeping the validation metric.",
            *extras,
        ]) + "\n"
    lines = [title]
    for i, (why, patch) in enumerate(hunks, 1):
        lines += ["", f"# {i}. {why}", *patch]
    if extras:
        lines += ["", "# also, under the 16-bit policy:", *extras]
    return "\n".join(lines) + "\n"
