"""Recorded run summaries and a fake backend, so the ladder's decisions are tested without training.

`summary(...)` builds a summary.json dict the way the backend writes one: steady-state
`step_ms_samples` (seeded noise around a median), the validation curve, peak memory.
`FakeBackend` answers env/audit/probe-input/run from such dicts, chosen per run settings.
A module of its own (not conftest): test modules import it by its package path, which stays unambiguous
when pytest collects several test folders, each with a conftest.py, in one call.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Callable

import numpy as np

from tfturbo.backend_client import BackendResult
from tfturbo.runfiles import SUMMARY, write_json_atomic
from tfturbo.cli_args import parse_run_settings
from tfturbo.settings import UNSAID
from tfturbo.settings import RunSettings

from tests.paired_fake import write_paired


def summary(step_ms: float = 100.0, val_accuracy: float | None = 0.90, *, status: str = "completed",
            policy: str = "float32", jit: bool = False, batch_size: int = 64, steps: int = 100,
            steps_completed: int | None = None, peak_mb: float = 1000.0, memory_kind: str = "device",
            noise: float = 0.02, n: int = 80, seed: int = 0, val_every: int = 20,
            findings: list[dict] | None = None, lr_scale: float = 1.0, val_loss: float | None = None
            ) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    samples = list(step_ms * (1 + noise * rng.standard_normal(n)))
    done = steps if steps_completed is None else steps_completed
    metrics = {}
    if val_accuracy is not None:
        metrics["val_accuracy"] = val_accuracy
    metrics["val_loss"] = val_loss if val_loss is not None else (1.0 - (val_accuracy or 0.5))
    # a rising curve ending at the final metrics, one point per validation interval
    validation = [{"step": s, "metrics": {k: (v * s / done if k == "val_accuracy" else v * done / s)
                                          for k, v in metrics.items()}}
                  for s in range(val_every, done + 1, val_every)]
    settings = RunSettings("builtin:fake", policy=policy, jit_compile=jit, batch_size=batch_size, steps=steps,
                           lr_scale=lr_scale).to_dict()
    med = float(np.median(samples))
    return {
        "status": status, "settings": settings, "step_ms": {"median": med, "ci95": [med * 0.99, med * 1.01]},
        "step_ms_samples": samples, "steps_per_s": 1000.0 / med, "warmup_s": 1.0,
        "peak_memory_bytes": int(peak_mb * 2 ** 20), "memory_kind": memory_kind, "metrics": dict(metrics),
        "findings": findings or [], "validation": validation, "steps_completed": done, "warmup_steps": 2,
    }


def result(command: str, document: dict | None, status: str = "completed", error: dict | None = None
           ) -> BackendResult:
    events = []
    if error:
        events.append({"type": "error", **error})
    if document is not None:
        events.append({"type": "result", "command": command, "document": document})
    events.append({"type": "done", "status": status, "exit_code": 0 if status == "completed" else 1})
    return BackendResult(exit_code=0 if status == "completed" else 1, events=events)


class FakeBackend:
    """Answers backend commands from recorded documents; `run_summary(settings)` picks each run's summary."""

    def __init__(self, run_summary: Callable[[RunSettings], dict], recommended: str = "float32",
                 audit: list[dict] | None = None, verdict: str = "compute_bound",
                 on_run: Callable[[RunSettings], None] | None = None, run_noise: float = 0.02,
                 available_memory: int | None = None, fixed_verdict: str | None = None,
                 paired: dict | None = None):
        """`run_noise`: each run's speed is off by a seeded factor (1 + run_noise * N(0, 1)), as replicates are.
        `fixed_verdict`: the probe's verdict with --input-fixes (default: `verdict`)."""
        self.fixed_verdict = fixed_verdict or verdict
        self.paired = paired or {}  # write_paired's options (examples, noise): a small, noisy validation set
        self.run_summary = run_summary
        self.recommended = recommended
        self.audit = audit or []
        self.verdict = verdict
        self.on_run = on_run
        self.calls: list[tuple[str, list[str]]] = []
        self.runs: list[RunSettings] = []
        self.run_noise = run_noise
        self.available_memory = available_memory  # the env document's memory (None: not known)
        self._rng = np.random.default_rng(99)

    def __call__(self, command, argv, on_event=None, stderr_path=None, cancel=None, env=None) -> BackendResult:
        self.calls.append((command, list(argv)))
        if command == "env":
            return result(command, {"devices": [{"type": "CPU", "name": "fake CPU"}], "tensorflow": "2.21.0",
                                    "keras": "3.15.0", "recommended_policy": self.recommended,
                                    "reason": "recorded", "ceiling": {"float32": 1e11},
                                    "memory": {"kind": "device", "available_bytes": self.available_memory}})
        if command == "audit":
            return result(command, {"findings": self.audit})
        if command == "probe-input":
            verdict = self.fixed_verdict if "--input-fixes" in argv else self.verdict
            found = [] if verdict == "compute_bound" else [
                {"code": "INPUT_BOUND", "severity": "error", "where": "train_ds", "message": "input-bound",
                 "fix": "ds = ds.cache().prefetch(tf.data.AUTOTUNE)"}]
            return result(command, {"verdict": verdict, "input_fraction": 0.05 if not found else 0.8,
                                    "data_steps_per_s": 100.0, "compute_steps_per_s": 10.0,
                                    "train_steps_per_s": 9.5, "findings": found})
        if command == "run-pair":  # both arms' runs, as the real one writes them, in one document
            arms = [json.loads(argv[i + 1]) for i, a in enumerate(argv) if a == "--arm"]
            answers = [(Path(arm[arm.index("--out") + 1]).name, self("run", arm, on_event)) for arm in arms]
            status = next((r.status for _, r in answers if r.status != "completed"), "completed")
            return result(command, {"runs": {name: r.document for name, r in answers}}, status=status)
        settings = parse_run_settings(argv).resolved(UNSAID)  # as the backend resolves a plain workload as written
        self.runs.append(settings)
        if self.on_run:
            self.on_run(settings)
        doc = self.run_summary(settings)
        doc = {**doc, "settings": {**settings.to_dict(), "batch_size": settings.batch_size or 64}}
        if doc.get("status") == "completed" and "--out" in argv and not settings.speed_only:
            # the per-example file the accuracy gate pairs (a speed-only run does not validate)
            every = settings.effective_val_every()
            paired = write_paired(argv[argv.index("--out") + 1], doc.get("validation") or [],
                                  settings.batch_size or 64, steps=list(range(every, settings.steps + 1, every)),
                                  **self.paired)
            doc["paired_validation"] = paired
        # a seed replicate of the reference (the gate's trainings' noise) counts for no speed: it draws no
        # factor, so the speed pairs' noise is the same with and without it
        seed_replicate = "--out" in argv and re.search(r"\.a(0|-\d+)$", Path(argv[argv.index("--out") + 1]).name)
        factor = 1.0 if seed_replicate else 1.0 + self.run_noise * float(self._rng.standard_normal())
        if doc.get("step_ms_samples"):
            doc["step_ms_samples"] = [ms * factor for ms in doc["step_ms_samples"]]
            doc["steps_per_s"] = doc["steps_per_s"] / factor
        if "--out" in argv:  # its summary.json, as the backend writes it (the way forward and the study read it)
            write_json_atomic(Path(argv[argv.index("--out") + 1]) / SUMMARY, doc)
        return result(command, doc, status=doc["status"] if doc["status"] != "crashed" else "crashed")
