"""A study's code to apply: the levers' changes for the recommendation, placed in the workload's own file.

The study measured settings (policy, XLA, batch, learning-rate scale, the
automatic fixes); a user applies them as code. Each lever says its part
(`Lever.changes`), in the checklist's order; `tfturbo.patch` places them in
the script (or workload file) where it says each thing and makes the patch
`tfturbo tune`, `tfturbo apply`, the wizard's Record page and the report all
show (`tfturbo.patch.document.ChangesPatch`).

What the backend learned of the file when it ran the baseline (its summary's
`workload`: the line of the fit() it measured, NumPy arrays or a dataset)
tells the reader which fit() and which data; `optimizer` how compile() got
its optimizer.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..patch.changes import Change
from ..settings import RunSettings
from ..workload_kind import defines_contract, workload_file
from . import levers

if TYPE_CHECKING:  # the patch's reader and writer (libcst) load only when a patch is made
    from ..patch.build import Patch
    from ..patch.place import Target


def _settings(s: RunSettings | dict[str, Any] | None) -> RunSettings:
    if isinstance(s, RunSettings):
        return s
    return RunSettings.from_dict(s or {})


def changes_for(recommended: RunSettings | dict[str, Any] | None, baseline: RunSettings | dict[str, Any] | None,
                findings: list[dict[str, Any]] | None = None,
                baseline_summary: dict[str, Any] | None = None) -> list[Change]:
    """Every lever's changes from `baseline` to `recommended`, in the checklist's order."""
    rec, base = _settings(recommended), _settings(baseline)
    found = [f for f in findings or [] if isinstance(f, dict)]
    optimizer, device = ((baseline_summary or {}).get(key) for key in ("optimizer", "device"))
    code = levers.WorkloadCode(optimizer if isinstance(optimizer, dict) else None,
                               device if isinstance(device, str) else None)
    return [c for lever in levers.LEVERS for c in lever.changes(rec, base, found, code)]


def target_file(workload: str, baseline_summary: dict[str, Any] | None = None) -> Path | None:
    """The file to patch: the one the baseline run loaded (its absolute path), else the workload's spec."""
    recorded = ((baseline_summary or {}).get("workload") or {}).get("path")
    if recorded and Path(recorded).is_file():
        return Path(recorded)
    return workload_file(workload)


def target_of(path: Path, baseline_summary: dict[str, Any] | None, script_args: list[str]) -> Target:
    from ..patch.place import Target

    workload = (baseline_summary or {}).get("workload") or {}
    line = workload.get("fit_line")
    return Target(contract=defines_contract(path), fit_line=int(line) if isinstance(line, int) else None,
                  data=workload.get("data") if isinstance(workload.get("data"), str) else None,
                  script_args=tuple(str(a) for a in script_args))


def recommended_patch(workload: str, recommended: RunSettings | dict[str, Any] | None,
                      baseline: RunSettings | dict[str, Any] | None, findings: list[dict[str, Any]] | None = None,
                      baseline_summary: dict[str, Any] | None = None) -> Patch:
    """The patch of the workload's file for the recommendation (every change left to the user, with its code,
    when there is no file: a workload that is not on this machine)."""
    from ..patch.build import make_patch

    rec = _settings(recommended)
    changes = changes_for(rec, baseline, findings, baseline_summary)
    path = target_file(workload, baseline_summary)
    if path is None:
        return make_patch(None, changes, unreadable=f"the workload's file ({workload}) is not on this machine")
    return make_patch(path, changes, target_of(path, baseline_summary, rec.script_args))
