"""The proof of a patch: the patched copy of the script, run as written, runs the recommended settings.

The copy lives in the study (`STUDY_DIR/patched/NAME`, never beside the
user's script) and is measured by a short `run` (`check_argv`): speed only,
no profiler, no model saved, and none of the options that would set what the
patch changed (--policy, --jit, --batch-size, --steps-per-execution,
--lr-scale, the fixes), so what the run measures is what the script says.
`compare` then holds the run's summary against the recommendation: its
policy, XLA, batch size and steps per call must be the recommended ones (and
its learning rate the baseline's times the factor, when both runs recorded
it). The run is one step of the study (the engine's `patch` stage), so both
front ends run it and a resumed study re-uses it (`reusable`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from ..cli_args import script_argv
from ..run_summary import RunSummary
from ..runfiles import SUMMARY, load_run
from ..settings import RunSettings

PATCHED_DIR = "patched"  # STUDY_DIR/patched/: the patched copy and its check run
CHECK_RUN = "check"  # STUDY_DIR/patched/check: the run that measured the copy
MIN_CHECK_STEPS = 16  # enough steps for Keras to have traced and run the step as compiled

CHECKED, CHECK_FAILED, NOT_CHECKED = "checked", "check failed", "not checked"


class CheckDoc(TypedDict):
    """`Check` as study.yaml's `patch.check` holds it."""

    status: str
    reason: str
    run: str | None


@dataclass(frozen=True)
class Check:
    """What the check found: `status` (CHECKED, CHECK_FAILED, NOT_CHECKED) and why, in one line."""

    status: str
    reason: str
    run: str | None = None  # the check run, relative to the study (patched/check)

    @property
    def passed(self) -> bool:
        return self.status == CHECKED

    def line(self) -> str:
        return f"{self.status}: {self.reason}"

    def to_dict(self) -> CheckDoc:
        return {"status": self.status, "reason": self.reason, "run": self.run}

    @classmethod
    def from_dict(cls, d: CheckDoc | None) -> Check | None:
        """A recorded check; None when `d` is not one (a study from before checks, or a damaged file)."""
        if not isinstance(d, dict) or d.get("status") not in (CHECKED, CHECK_FAILED, NOT_CHECKED):
            return None
        return cls(str(d["status"]), str(d.get("reason") or ""), d.get("run"))


def check_steps(recommended: RunSettings) -> int:
    """A few calls of the compiled step: whole calls of the recommended steps per call."""
    n = recommended.calls
    return max(MIN_CHECK_STEPS, 4 * n) // n * n


def check_argv(copy: Path, run_dir: Path, recommended: RunSettings) -> list[str]:
    """The `run` arguments that measure the patched copy as written: nothing it changed is passed."""
    steps = check_steps(recommended)
    return [str(copy), "--out", str(run_dir), "--steps", str(steps), "--val-every", str(steps),
            "--seed", str(recommended.seed), "--speed-only", "--no-model", "--profile", "0:0",
            *script_argv(list(recommended.script_args))]


def copy_path(study_dir: Path, name: str) -> Path:
    return Path(study_dir) / PATCHED_DIR / name


def run_dir(study_dir: Path) -> Path:
    return Path(study_dir) / PATCHED_DIR / CHECK_RUN


def reusable(study_dir: Path, name: str, patched: str) -> RunSummary | None:
    """The check run's summary when it measured exactly this patched text (a resumed study, the wizard's record
    page shown again), else None."""
    copy, folder = copy_path(study_dir, name), run_dir(study_dir)
    try:
        same = copy.read_text(encoding="utf-8") == patched
    except OSError:
        return None
    if not same or not (folder / SUMMARY).is_file():
        return None
    return load_run(folder).summary


def _setting_text(key: str, value: Any) -> str:
    if key == "jit_compile":
        return "XLA on" if value else "XLA off"
    if key == "batch_size":
        return f"batch {value}"
    if key == "steps_per_execution":
        return f"{value} step{'s' if value != 1 else ''} per call"
    return str(value)


CHECKED_SETTINGS = ("policy", "jit_compile", "batch_size", "steps_per_execution")


def compare(summary: RunSummary | None, recommended: RunSettings, factor: float = 1.0,
            baseline_summary: RunSummary | None = None, run: str | None = None) -> Check:
    """The check run's summary against the recommendation (`factor`: the learning rate's, against the
    baseline's own rate)."""
    if not summary:
        return Check(NOT_CHECKED, "the patched script's run left no summary (see its backend.log)", run)
    status = summary.status
    if status != "completed":
        said = (summary.error or {}).get("message")
        return Check(NOT_CHECKED, f"the patched script's run ended {status}" + (f": {said}" if said else "")
                     + " (see its backend.log)", run)
    measured = summary.settings.to_dict() if summary.settings else {}
    wrong = []
    for key in CHECKED_SETTINGS:
        want = getattr(recommended, key)
        if want is None:  # left as written (the batch: the script's own), nothing recommended to check
            continue
        got = measured.get(key)
        if got != want:
            wrong.append(f"{_setting_text(key, got)} where {_setting_text(key, want)} was recommended")
    base_rate = ((baseline_summary.optimizer if baseline_summary else None) or {}).get("learning_rate")
    rate = (summary.optimizer or {}).get("learning_rate")
    if factor != 1.0 and isinstance(base_rate, (int, float)) and isinstance(rate, (int, float)) \
            and not math.isclose(rate, base_rate * factor, rel_tol=1e-3):
        wrong.append(f"learning rate {rate:.6g} where {base_rate * factor:.6g} (× {factor:g}) was recommended")
    said = ", ".join(_setting_text(k, getattr(recommended, k)) for k in CHECKED_SETTINGS
                     if getattr(recommended, k) is not None)
    if wrong:
        return Check(CHECK_FAILED, "the patched script ran " + "; ".join(wrong), run)
    return Check(CHECKED, f"the patched script runs the recommended settings ({said}), measured by a "
                          f"{summary.steps_completed or check_steps(recommended)}-step run", run)  # its folder: `run`
