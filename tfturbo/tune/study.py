"""A tuning study: its rungs, their decisions, and the two documents made from them.

`study.yaml` and the `tune --json` document
come from the same ladder entries, so what a script reads and what the
report and wizard read never disagree. study.yaml is rewritten after every
rung: a study stopped by Ctrl-C or a crash still says what it decided.

study.yaml keys: format, tool, workload, created, status (running |
completed | input_bound | failed | interrupted), message, environment (the
`env` document), options, audit (findings), probe (the `probe-input`
document), probe_input_fixes (the probe again with --input-fixes, when the
input_pipeline rung was kept), ladder (entries as in `tune --json`), recommended (settings or
null), findings, measurement (runs and pairs per rung), snippet, report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .. import __version__, summary
from ..numbers import json_safe, num
from ..runfiles import STUDY_YAML, write_yaml
from ..settings import RunSettings
from ..trials.verdict import TrialVerdict

STUDY_FORMAT = 1


class RungKind:
    """What a rung of the ladder changes (a rung's `kind` in study.yaml)."""

    BASELINE = "baseline"
    INPUT_PIPELINE = "input_pipeline"  # the automatic tf.data fixes, first when the probe found the job input-bound
    MIXED_PRECISION = "mixed_precision"
    XLA = "xla"
    STEPS_PER_EXECUTION = "steps_per_execution"  # compile(steps_per_execution=N): fewer host round trips
    LARGER_BATCH = "larger_batch"
    CONFIRMATION = "confirmation"  # the recommendation measured against the baseline, side by side


class StudyStatus:
    """How a study ended (`status` in study.yaml); STOPPED_INPUT_BOUND: the probe found the job input-bound."""

    RUNNING = "running"
    COMPLETED = "completed"
    STOPPED_INPUT_BOUND = "input_bound"
    FAILED = "failed"
    INTERRUPTED = "interrupted"


@dataclass
class Rung:
    """One configuration of the ladder: a measured run with its decision, or a skipped step."""

    name: str  # the run directory's name, "NN-slug": 01-baseline, 02-mixed_float16, 03-xla, 04-larger_batch
    kind: str  # baseline | mixed_precision | xla | larger_batch
    settings: RunSettings
    run: str | None = None  # run directory relative to the study ("runs/01-baseline"); None when skipped
    summary: dict[str, Any] | None = None
    decision: TrialVerdict | None = None
    skipped_reason: str | None = None
    compared_with: str | None = None  # the rung it was measured against (its trial's A)
    replicates: list[str] = field(default_factory=list)  # every run of its trial, A's and B's ("NN-slug.a1", …)
    run_seconds: float | None = None  # the wall time of all its runs together

    @property
    def kept(self) -> bool:
        return bool(self.decision and self.decision.kept)

    @property
    def steps_completed(self) -> int | None:
        n = (self.summary or {}).get("steps_completed")
        return int(n) if isinstance(n, (int, float)) else None

    def entry(self, baseline: dict[str, Any] | None) -> dict[str, Any]:
        """The ladder entry of `tune --json` and study.yaml."""
        s = self.summary or {}
        d = self.decision
        step = s.get("step_ms") or {}
        return {
            "name": self.name,
            "rung": self.kind,
            "label": self.settings.label() if self.skipped_reason is None else f"{self.kind.replace('_', ' ')} (not run)",
            "run": self.run,
            "settings": self.settings.to_dict(),
            "status": s.get("status") if self.summary else ("skipped" if self.skipped_reason else None),
            "skipped": self.skipped_reason is not None,
            "steps_per_s": num(s.get("steps_per_s")),
            "samples_per_s": num(summary.samples_per_s(s)) if self.summary else None,
            "step_ms": {"median": num(step.get("median")), "ci95": step.get("ci95")} if step else None,
            "steps_completed": self.steps_completed,
            "speedup": num(d.speedup) if d else None,
            "speedup_ci95": [num(d.speedup_ci95[0]), num(d.speedup_ci95[1])] if d else None,
            "val_delta": num(d.val_delta) if d else None,
            "metric": d.metric if d else None,
            "speed": d.speed.to_dict() if d else None,
            "accuracy": d.accuracy.to_dict() if d else None,
            "design": d.design if d else None,
            "peak_memory_bytes": s.get("peak_memory_bytes"),
            "memory_kind": s.get("memory_kind"),
            "memory_ratio": num(summary.memory_ratio(baseline, s)) if baseline and self.summary else None,
            "compared_with": self.compared_with,
            "replicates": list(self.replicates),
            "kept": self.kept,
            "reason": self.skipped_reason if self.skipped_reason is not None else (d.reason if d else ""),
            "findings": list(d.findings) if d else [],
        }


def measurement_only(settings: RunSettings) -> RunSettings:
    """The settings a user trains with: without the profiler window and the adaptive stop of a measured run."""
    return settings.with_(profile=None, until_ci=None, min_steps=0)


@dataclass
class Study:
    path: Path
    workload: str
    options: dict[str, Any]
    created: str = field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds"))
    status: str = StudyStatus.RUNNING
    message: str = ""
    environment: dict[str, Any] | None = None
    audit: list[dict[str, Any]] = field(default_factory=list)
    probe: dict[str, Any] | None = None
    probe_input_fixes: dict[str, Any] | None = None  # the probe again with --input-fixes (input_pipeline rung kept)
    rungs: list[Rung] = field(default_factory=list)
    recommended: RunSettings | None = None
    recommended_rung: str | None = None  # the name of the ladder entry the recommendation comes from
    snippet: str | None = None
    report: str | None = None

    @property
    def baseline(self) -> Rung | None:
        return self.rungs[0] if self.rungs and self.rungs[0].kind == RungKind.BASELINE else None

    def findings(self) -> list[dict[str, Any]]:
        """Audit, probe, run and decision findings, each once."""
        out, seen = [], set()
        groups = [self.audit, (self.probe or {}).get("findings") or [],
                  (self.probe_input_fixes or {}).get("findings") or []]
        for r in self.rungs:
            groups.append((r.summary or {}).get("findings") or [])
            groups.append(r.decision.findings if r.decision else [])
        for group in groups:
            for f in group:
                if not isinstance(f, dict):
                    continue
                key = (f.get("code"), f.get("where"), f.get("message"))
                if key not in seen:
                    seen.add(key)
                    out.append(f)
        return out

    def measurement(self) -> dict[str, Any]:
        """How much was measured: the runs of every trial and their wall time."""
        runs = sum(max(1, len(r.replicates)) for r in self.rungs if r.summary is not None)
        seconds = sum(r.run_seconds if r.run_seconds is not None else num((r.summary or {}).get("wall_s")) or 0.0
                      for r in self.rungs)
        return {"runs": runs, "run_seconds": round(seconds, 1),
                "pairs": {r.name: r.decision.speed.replicates for r in self.rungs
                          if r.decision is not None and r.kind != RungKind.BASELINE}}

    def ladder(self) -> list[dict[str, Any]]:
        base = self.baseline.summary if self.baseline else None
        return [r.entry(base) for r in self.rungs]

    def document(self) -> dict[str, Any]:
        """The `tune --json` document plus context keys."""
        return {
            "workload": self.workload,
            "study_dir": str(self.path),
            "status": self.status,
            "message": self.message,
            "ladder": self.ladder(),
            "recommended": self.recommended.to_dict() if self.recommended else None,
            "recommended_rung": self.recommended_rung,
            "findings": self.findings(),
            "report": self.report,
            "environment": self.environment,
            "probe": self.probe,
            "probe_input_fixes": self.probe_input_fixes,
            "measurement": self.measurement(),
            "snippet": self.snippet,
        }

    def save(self) -> Path:
        doc = self.document()
        data = {
            "format": STUDY_FORMAT,
            "tool": f"tfturbo {__version__}",
            "workload": self.workload,
            "created": self.created,
            "status": self.status,
            "message": self.message,
            "environment": self.environment,
            "options": self.options,
            "audit": {"findings": self.audit},
            "probe": self.probe,
            "probe_input_fixes": self.probe_input_fixes,
            "ladder": doc["ladder"],
            "recommended": doc["recommended"],
            "recommended_rung": self.recommended_rung,
            "findings": doc["findings"],
            "measurement": doc["measurement"],
            "snippet": self.snippet,
            "report": self.report,
        }
        path = self.path / STUDY_YAML
        write_yaml(path, json_safe(data))
        return path
