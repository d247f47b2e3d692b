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
from typing import TYPE_CHECKING

from ..findings import FindingDoc, findings_in
from ..patch.changes import Change
from ..run_summary import RunSummary
from ..settings import RunSettings
from ..workload_kind import WorkloadDoc, defines_contract, workload_file
from . import levers

if TYPE_CHECKING:  # the patch's reader and writer (libcst) load only when a patch is made
    from ..patch.build import Patch
    from ..patch.place import Target


def _settings(s: RunSettings | None) -> RunSettings:
    return s if s is not None else RunSettings()


def changes_for(recommended: RunSettings | None, baseline: RunSettings | None,
                findings: list[FindingDoc] | None = None,
                baseline_summary: RunSummary | None = None) -> list[Change]:
    """Every lever's changes from `baseline` to `recommended`, in the checklist's order."""
    rec, base = _settings(recommended), _settings(baseline)
    found = findings_in(findings)
    code = levers.WorkloadCode(baseline_summary.optimizer, baseline_summary.device) if baseline_summary else \
        levers.WorkloadCode()
    return [c for lever in levers.LEVERS for c in lever.changes(rec, base, found, code)]


def target_file(workload: str, baseline_summary: RunSummary | None = None) -> Path | None:
    """The file to patch: the one the baseline run loaded (its absolute path), else the workload's spec."""
    described = baseline_summary.workload if baseline_summary else None
    recorded = described.get("path") if described else None
    if recorded and Path(recorded).is_file():
        return Path(recorded)
    return workload_file(workload)


def target_of(path: Path, baseline_summary: RunSummary | None, script_args: list[str]) -> Target:
    from ..patch.place import Target

    workload = (baseline_summary.workload if baseline_summary else None) or WorkloadDoc()
    line, data = workload.get("fit_line"), workload.get("data")
    return Target(contract=defines_contract(path), fit_line=int(line) if isinstance(line, int) else None,
                  data=data if isinstance(data, str) else None,
                  script_args=tuple(str(a) for a in script_args))


def recommended_patch(workload: str, recommended: RunSettings | None,
                      baseline: RunSettings | None, findings: list[FindingDoc] | None = None,
                      baseline_summary: RunSummary | None = None) -> Patch:
    """The patch of the workload's file for the recommendation (every change left to the user, with its code,
    when there is no file: a workload that is not on this machine)."""
    from ..patch.build import make_patch

    rec = _settings(recommended)
    changes = changes_for(rec, baseline, findings, baseline_summary)
    path = target_file(workload, baseline_summary)
    if path is None:
        return make_patch(None, changes, unreadable=f"the workload's file ({workload}) is not on this machine")
    return make_patch(path, changes, target_of(path, baseline_summary, rec.script_args))
