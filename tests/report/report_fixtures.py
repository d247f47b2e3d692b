"""Recorded study directories for the compare and report tests: no training.

`make_run` writes a run directory the way the backend does (docs/ARCHITECTURE.md:
run.yaml, events.jsonl through the real EventWriter, summary.json with the
keys of COMMON.md, checkpoint/tfturbo-settings.yaml); `make_study` adds the
study.yaml a `tfturbo tune` ladder writes. Step times are drawn from a seeded
generator, so every number in a test is reproducible.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from tfturbo import protocol, summary as summ
from tfturbo.runfiles import (CHECKPOINT_DIR, CHECKPOINT_SETTINGS, EVENTS, RUN_YAML, RUNS_DIR, STUDY_YAML,
                              SUMMARY, write_json_atomic, write_yaml)
from tfturbo.settings import RunSettings
from tfturbo.stats import median_ci

VERSIONS = {"tfturbo": "0.1.0", "tensorflow": "2.21.0", "keras": "3.15.0", "python": "3.11.9"}
DEVICE = "CPU (2 cores, host memory)"
WARMUP = 5
PROFILE = (15, 25)  # [start, stop) of the profiler window


def make_run(parent: Path, name: str, *, workload: str = "builtin:transformer", policy: str = "float32",
             jit: bool = False, batch_size: int = 64, steps: int = 60, step_ms: float = 200.0, noise: float = 0.02,
             val_accuracy: float = 0.90, peak_mb: float = 800.0, status: str = protocol.RunStatus.COMPLETED,
             findings: list[dict[str, Any]] | None = None, learning_rate: float = 1e-3, seed: int = 0,
             write_summary: bool = True, write_done: bool = True, truncate: bool = False,
             checkpoint: bool = True) -> Path:
    """One recorded run directory, its events shaped like the backend's (warm-up, profiler window, validation).

    Steps 1..WARMUP are warm-up and steps in PROFILE are profiled: neither is in step_ms_samples.
    """
    run_dir = parent / name
    run_dir.mkdir(parents=True)
    settings = RunSettings(workload=workload, policy=policy, jit_compile=jit, batch_size=batch_size, steps=steps,
                           seed=1234).to_dict()
    write_yaml(run_dir / RUN_YAML, {**settings, "versions": VERSIONS, "device": DEVICE})
    rng = np.random.default_rng(seed)
    # steps are numbered from 1, as the backend does; 1..WARMUP are warm-up, PROFILE steps are profiled
    step_no = list(range(1, steps + 1))
    ms = [step_ms * 30] + [step_ms * 3] * (WARMUP - 1) + \
        list(step_ms * (1 + noise * rng.standard_normal(steps - WARMUP)))
    ms = [m * 1.4 if PROFILE[0] <= n < PROFILE[1] else m for n, m in zip(step_no, ms)]  # the profiler slows them
    loss = [float(2.0 * np.exp(-i / 25) + 0.1) for i in range(steps)]
    findings = findings or []
    val = [{"step": s, "metrics": {"val_loss": round(1.5 - val_accuracy + 0.004 * (steps - s), 4),
                                   "val_accuracy": round(val_accuracy - 0.002 * (steps - s), 4)}}
           for s in range(steps // 3, steps + 1, steps // 3)]
    val_at = {v["step"]: v for v in val}
    with open(run_dir / EVENTS, "w", encoding="utf-8") as f:
        w = protocol.EventWriter(name, [f], clock=iter(range(1_700_000_000, 1_800_000_000)).__next__)
        w.emit(protocol.HELLO, command="run", versions=VERSIONS, devices=[DEVICE], pid=1)
        w.emit(protocol.PHASE, phase=protocol.WARMUP, step=1, detail="")
        pending: list[int] = []

        def flush() -> None:
            if pending:
                w.emit(protocol.STEPS, step=list(pending), step_ms=[ms[n - 1] for n in pending],
                       loss=[loss[n - 1] for n in pending])
                pending.clear()

        for n in step_no:
            if n == WARMUP + 1:
                flush()
                w.emit(protocol.PHASE, phase=protocol.TRAINING, step=n, detail="steady state")
            if n in PROFILE:
                flush()
                w.emit(protocol.PHASE, phase=protocol.PROFILING, step=n, detail="") if n == PROFILE[0] else \
                    w.emit(protocol.PHASE, phase=protocol.TRAINING, step=n, detail="profile captured",
                           excluded=[PROFILE[0], n - 1])
            pending.append(n)
            if len(pending) == 10 or n in val_at:
                flush()
            if n in val_at:
                w.emit(protocol.PHASE, phase=protocol.VALIDATING, step=n, detail="")
                w.emit(protocol.VALIDATION, **val_at[n])
                if n < steps:
                    w.emit(protocol.PHASE, phase=protocol.TRAINING, step=n + 1, detail="")
        flush()
        w.emit(protocol.MEMORY, peak_bytes=int(peak_mb * 2**20), current_bytes=int(peak_mb * 2**19), kind="host")
        for fd in findings:
            w.emit(protocol.FINDING, finding=fd)
        if status == protocol.RunStatus.FAILED:
            w.emit(protocol.ERROR, kind=protocol.TRAINING_ERROR, message="loss exploded", fix="", traceback="")
        if write_done:
            w.emit(protocol.DONE, status=status, exit_code=0 if status == protocol.RunStatus.COMPLETED else 1)
    if truncate:  # the process was killed mid-line
        with open(run_dir / EVENTS, "a", encoding="utf-8") as f:
            f.write('{"v":1,"type":"steps","step":[99')
    steady = [m for n, m in zip(step_no, ms) if n > WARMUP and not PROFILE[0] <= n < PROFILE[1]]
    median, ci = median_ci(steady)
    lr = learning_rate
    if write_summary:  # what the backend's summary.json holds (COMMON.md contracts)
        final = val[-1]["metrics"]
        write_json_atomic(run_dir / SUMMARY, {
            "status": status, "settings": settings, "step_ms": {"median": median, "ci95": list(ci), "n": len(steady)},
            "step_ms_samples": steady, "steps_per_s": 1000.0 / median, "warmup_s": sum(ms[:WARMUP]) / 1000,
            "peak_memory_bytes": int(peak_mb * 2**20), "memory_kind": "host",
            "metrics": {"loss": loss[-1], **final}, "findings": findings, "warmup_steps": WARMUP,
            "steps_completed": steps, "wall_s": sum(ms) / 1000, "validation": val, "versions": VERSIONS,
            "device": DEVICE, "workload": {"spec": workload, "name": workload.split(":")[-1], "path": None},
            "learning_rate": lr, "loss_scale": None, "xla_active": jit or None,
            "profile": {"window": [PROFILE[0], PROFILE[1] - 1], "logdir": "tb"},
        })
    if checkpoint:
        write_yaml(run_dir / CHECKPOINT_DIR / CHECKPOINT_SETTINGS, {
            "policy": policy, "jit_compile": jit, "batch_size": batch_size, "learning_rate": lr,
            "versions": VERSIONS, "device": DEVICE})
    return run_dir


def ladder_entry(base: Path, run: Path, kept: bool, reason: str) -> dict[str, Any]:
    """A ladder rung as `tfturbo tune` records it, its numbers computed from the two summaries."""
    from tfturbo.runfiles import load_run
    b, c = load_run(base).summary, load_run(run).summary
    s, ci = summ.speedup(b, c)
    delta = summ.val_delta(b, c)
    return {"name": run.name, "settings": c["settings"], "steps_per_s": c["steps_per_s"], "speedup": s,
            "speedup_ci95": list(ci), "val_delta": delta[1] if delta else None, "kept": kept, "reason": reason}


def make_study(root: Path, workload: str = "builtin:transformer", *, broken: bool = False) -> Path:
    """A study with baseline, mixed_bfloat16 (slower, rejected), XLA (faster, kept) and a larger batch.

    `broken` adds a failed run, a cancelled run without summary and a crashed run with a truncated
    events.jsonl.
    """
    runs = root / RUNS_DIR
    base = make_run(runs, "01-baseline", workload=workload, step_ms=200, seed=1)
    bf16 = make_run(runs, "02-mixed_bfloat16", workload=workload, policy="mixed_bfloat16", step_ms=520,
                    peak_mb=560, seed=2, val_accuracy=0.897)
    xla = make_run(runs, "03-xla", workload=workload, jit=True, step_ms=150, peak_mb=700, seed=3,
                   val_accuracy=0.902, findings=[{"code": "DIM_NOT_MULTIPLE_OF_8", "severity": "warning",
                                                  "where": "dense_<b>&evil</b>", "message": "width 100 is not a multiple of 8",
                                                  "fix": "keras.layers.Dense(104)  # was Dense(100)"}])
    big = make_run(runs, "04-batch-128", workload=workload, jit=True, batch_size=128, step_ms=280, peak_mb=1200,
                   seed=4, val_accuracy=0.899, learning_rate=2e-3)
    ladder = [{**ladder_entry(base, base, True, "baseline"), "speedup": 1.0, "speedup_ci95": [1.0, 1.0], "val_delta": 0.0},
              ladder_entry(base, bf16, False, "SLOWER_THAN_BASELINE"),
              ladder_entry(base, xla, True, "faster beyond the noise, accuracy kept"),
              ladder_entry(base, big, True, "faster beyond the noise, accuracy kept")]
    if broken:
        make_run(runs, "05-failed", workload=workload, policy="mixed_float16", status=protocol.RunStatus.FAILED, seed=5,
                 findings=[{"code": "NAN_LOSS", "severity": "error", "where": "step 40",
                            "message": "the loss became NaN", "fix": "keep the head in float32"}])
        make_run(runs, "06-cancelled", workload=workload, status=protocol.RunStatus.CANCELLED, write_summary=False, seed=6,
                 checkpoint=False)
        make_run(runs, "07-crashed", workload=workload, write_summary=False, write_done=False, truncate=True,
                 seed=7, checkpoint=False)
    write_yaml(root / STUDY_YAML, {
        "workload": workload,
        "environment": {"devices": [{"type": "CPU", "name": DEVICE}], "tensorflow": "2.21.0", "keras": "3.15.0",
                        "recommended_policy": "float32", "reason": "CPU without native bfloat16"},
        "created": "2026-01-15T10:30:00",
        "ladder": ladder,
        "recommended": {**RunSettings(workload=workload, jit_compile=True, batch_size=128, lr_scale=2.0).to_dict()},
        "findings": [{"code": "DIM_NOT_MULTIPLE_OF_8", "severity": "warning", "where": "dense_<b>&evil</b>",
                      "message": "width 100 is not a multiple of 8", "fix": "keras.layers.Dense(104)  # was Dense(100)"}],
        "probe": {"verdict": "compute_bound", "input_fraction": 0.04, "data_steps_per_s": 950.0,
                  "compute_steps_per_s": 5.1, "train_steps_per_s": 4.9, "findings": []},
    })
    return root


def pdf_text(path: Path) -> str:
    """The PDF's text as a reader's copy-paste would give it (pypdf, a test dependency)."""
    from pypdf import PdfReader
    return "\n".join(page.extract_text() for page in PdfReader(str(path)).pages)
