"""Recorded study directories for the compare and report tests: no training.

`make_run` writes a run directory the way the backend does (docs/ARCHITECTURE.md, "Run and study directories":
run.yaml, events.jsonl through the real EventWriter, summary.json,
paired_validation.npz, checkpoint/tfturbo-settings.yaml); `make_study` runs a
`tfturbo tune` ladder's trials through the real trial engine on such runs and
saves the study.yaml it writes. Step times are drawn from a seeded
generator, so every number in a test is reproducible.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from tfturbo.environment import Environment
from tfturbo.input_probe import InputProbe
from tfturbo import protocol
from tfturbo.runfiles import (EVENTS, RUN_YAML, RUNS_DIR, SUMMARY, write_checkpoint_settings, write_json_atomic,
                              write_yaml)
from tfturbo.settings import UNSAID, RunSettings
from tfturbo.stats import median_ci
from tfturbo.trials import accuracy

VERSIONS = {"tfturbo": "0.1.0", "tensorflow": "2.21.0", "keras": "3.15.0", "python": "3.11.9"}
DEVICE = "CPU (2 cores, host memory)"
WARMUP = 5
PROFILE = (15, 25)  # [start, stop) of the profiler window


def make_run(parent: Path, name: str, *, workload: str = "builtin:transformer", policy: str = "float32",
             jit: bool = False, batch_size: int = 64, steps: int = 60, step_ms: float = 200.0, noise: float = 0.02,
             val_accuracy: float = 0.90, peak_mb: float = 800.0, status: str = protocol.RunStatus.COMPLETED,
             findings: list[dict[str, Any]] | None = None, learning_rate: float = 1e-3, seed: int = 0,
             write_summary: bool = True, write_done: bool = True, truncate: bool = False,
             checkpoint: bool = True, lr_scale: float = 1.0, correct: np.ndarray | None = None,
             settings_seed: int = 1234, **more_settings: Any) -> Path:
    """One recorded run directory, its events shaped like the backend's (warm-up, profiler window, validation).

    Steps 1..WARMUP are warm-up and steps in PROFILE are profiled: neither is in step_ms_samples.
    `correct`: every validation example's correctness (1/0), written to paired_validation.npz at each
    validation point as the backend writes it (the same at every point). `more_settings`: other RunSettings
    fields of the run (e.g. steps_per_execution=4).
    """
    run_dir = parent / name
    run_dir.mkdir(parents=True)
    settings = RunSettings(workload=workload, policy=policy, jit_compile=jit, batch_size=batch_size, steps=steps,
                           seed=settings_seed, lr_scale=lr_scale, **more_settings).to_dict()
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
    paired = None
    if correct is not None:
        points = [(v["step"], v["step"] * batch_size) for v in val]
        np.savez_compressed(run_dir / accuracy.PAIRED_FILE, step=np.array([p[0] for p in points]),
                            samples=np.array([p[1] for p in points]),
                            correct=np.stack([correct] * len(points)).astype(np.float32))
        paired = {"file": accuracy.PAIRED_FILE, "examples": len(correct), "accuracy_metric": "val_accuracy",
                  "loss": False, "fixed_examples": True, "eval_batch": 256, "points": [list(p) for p in points],
                  "problem": None}
    if write_summary:  # what the backend's summary.json holds (COMMON.md contracts): steps_per_s is the throughput's
        # samples/s per step, as run.py writes it (1000 / median step was a second rate beside it)
        final = val[-1]["metrics"]
        write_json_atomic(run_dir / SUMMARY, {
            "status": status, "settings": settings, "step_ms": {"median": median, "ci95": list(ci), "n": len(steady)},
            "step_ms_samples": steady, "steps_per_s": 1000.0 * len(steady) / sum(steady), "warmup_s": sum(ms[:WARMUP]) / 1000,
            "peak_memory_bytes": int(peak_mb * 2**20), "memory_kind": "host",
            "metrics": {"loss": loss[-1], **final}, "findings": findings, "warmup_steps": WARMUP,
            "steps_completed": steps, "wall_s": sum(ms) / 1000, "validation": val, "versions": VERSIONS,
            "device": DEVICE, "workload": {"spec": workload, "name": workload.split(":")[-1], "path": None},
            "learning_rate": lr, "loss_scale": None, "xla_active": jit or None,
            "profile": {"window": [PROFILE[0], PROFILE[1] - 1], "logdir": "tb"},
            "throughput": {"samples_per_s": batch_size * 1000.0 * len(steady) / sum(steady), "steps": len(steady),
                           "seconds": sum(steady) / 1000.0, "windows": 3},
            **({"paired_validation": paired} if paired else {}),
        })
    if checkpoint:
        write_checkpoint_settings(run_dir, RunSettings.from_dict(settings), lr, steps,
                                  {"versions": VERSIONS, "device": DEVICE})
    return run_dir


EXAMPLES = 1000  # validation examples of the per-example results
RUN_NOISE = 0.02  # run-to-run spread of the speed of identical runs (each run is off by a seeded factor)
DIM_FINDING = {"code": "DIM_NOT_MULTIPLE_OF_8", "severity": "warning", "where": "dense_<b>&evil</b>",
               "message": "width 100 is not a multiple of 8", "fix": "keras.layers.Dense(104)  # was Dense(100)"}
# What each configuration measures: (policy, XLA, batch) -> step time, validation examples it gets right beyond
# the baseline's (negative: fewer), peak memory, final val_accuracy, findings.
CONFIGS: dict[tuple[str, bool, int], dict[str, Any]] = {
    ("float32", False, 64): {"step_ms": 200, "flips": 0, "peak_mb": 800, "val_accuracy": 0.900},
    ("mixed_bfloat16", False, 64): {"step_ms": 520, "flips": -3, "peak_mb": 560, "val_accuracy": 0.897},
    ("float32", True, 64): {"step_ms": 150, "flips": 2, "peak_mb": 700, "val_accuracy": 0.902,
                            "findings": [DIM_FINDING]},
    ("float32", True, 128): {"step_ms": 240, "flips": -1, "peak_mb": 1200, "val_accuracy": 0.899},
}


def correctness(flips: int) -> np.ndarray:
    """The baseline gets the first 900 of EXAMPLES right; `flips` > 0 more right, < 0 that many of those wrong."""
    c = np.zeros(EXAMPLES)
    c[:900] = 1
    if flips > 0:
        c[900:900 + flips] = 1
    elif flips < 0:
        c[:-flips] = 0
    return c


def measure(runs: Path, workload: str):
    """execute(planned) -> (summary, run dir): a recorded run for the trial engine, as `tfturbo tune`'s executor."""
    from tfturbo.runfiles import load_run

    def execute(planned):
        s = planned.settings
        cfg = CONFIGS[(s.policy, s.jit_compile, s.batch_size)]
        seed = zlib.crc32(planned.name.encode())
        factor = 1.0 + RUN_NOISE * float(np.random.default_rng(seed).standard_normal())
        path = make_run(runs, planned.name, workload=workload, policy=s.policy, jit=s.jit_compile,
                        batch_size=s.batch_size, steps=s.steps, step_ms=cfg["step_ms"] * factor, seed=seed,
                        peak_mb=cfg["peak_mb"], val_accuracy=cfg["val_accuracy"], findings=cfg.get("findings"),
                        learning_rate=1e-3 * s.lr_scale, lr_scale=s.lr_scale, correct=correctness(cfg["flips"]),
                        settings_seed=s.seed)  # as it trained (a seed replicate of the reference: another seed)
        return load_run(path).summary, path

    return execute


_BUILT: dict[tuple[str, bool, bool, int, bool], Path] = {}  # one study per arguments and process, copied for each test


def make_study(root: Path, workload: str = "builtin:transformer", *, broken: bool = False,
               confirmation: bool = True, confirmations: int = 1, abandoned: bool = False) -> Path:
    """`_build_study`'s study at `root`, a folder of the test's own. The trial engine on its runs takes seconds
    and some eighty tests read one, so it is built once per process for each arguments and copied, the paths
    study.yaml holds (the validation set, the XLA cache) rewritten to `root`: what `_build_study(root)` writes."""
    key = (workload, broken, confirmation, confirmations, abandoned)
    if key not in _BUILT:
        store = Path(tempfile.mkdtemp(prefix="tfturbo-recorded-"))
        atexit.register(shutil.rmtree, store, ignore_errors=True)
        _BUILT[key] = _build_study(store / "study", workload, broken=broken, confirmation=confirmation,
                                   confirmations=confirmations, abandoned=abandoned)
    built = _BUILT[key]
    shutil.copytree(built, root, dirs_exist_ok=True)
    study_yaml = root / "study.yaml"
    study_yaml.write_text(study_yaml.read_text().replace(str(built), str(root)))
    return root


def _build_study(root: Path, workload: str, *, broken: bool, confirmation: bool, confirmations: int = 1,
                 abandoned: bool = False) -> Path:
    """The study `tfturbo tune` writes, its trials measured by the real trial engine on recorded runs.

    01-baseline; 02-mixed_bfloat16 (slower, rejected; accuracy inconclusive), 03-xla (faster, kept) and
    04-larger_batch (batch 128 on XLA, faster than 03-xla, kept) each a trial of 3 interleaved replicate
    pairs against the best kept rung, with their replicate runs (NN-slug.a1, .b2, ...) in runs/; then
    05-confirmation, the recommendation against the baseline side by side (left out with
    `confirmation=False`, as in a study stopped before it; `confirmations=2`: run again, 06-confirmation, the
    same comparison measured twice). `broken` adds runs the ladder does not name:
    a failed run, a cancelled run without summary and a crashed run with a truncated events.jsonl. `abandoned`
    adds the runs of a trial the ladder does not hold, as a wizard study reopened after Esc leaves them:
    02-mixed_bfloat16's trial measured again as 06-mixed_bfloat16 and stopped after two pairs (its first B run,
    the second pair's A run on the baseline's settings and B run), never decided.
    """
    from tfturbo.trials.runs import PlannedRun
    from tfturbo.trials.trial import run_trial
    from tfturbo.tune.engine import TuneOptions, baseline_verdict, finish_rung, make_trial
    from tfturbo.tune.study import Rung, RungKind, Study, StudyStatus, measurement_only

    runs = root / RUNS_DIR
    runs.mkdir(parents=True)
    options = TuneOptions(workload, root, steps=60, val_every=20, batch_size=64, min_replicates=3, max_replicates=3)
    execute = measure(runs, workload)
    study = Study(root, workload, options.to_dict(), created="2026-01-15T10:30:00")
    study.environment = Environment.from_dict({
        "devices": [{"type": "CPU", "name": DEVICE}], "tensorflow": "2.21.0", "keras": "3.15.0",
        "recommended_policy": "float32", "reason": "CPU without native bfloat16"})
    study.audit = [dict(DIM_FINDING)]
    study.probe = InputProbe(verdict="compute_bound", input_fraction=0.04, data_steps_per_s=950.0,
                             compute_steps_per_s=5.1, train_steps_per_s=4.9)
    settings = options.base_settings().resolved(UNSAID)  # as the engine resolves it from a plain workload's run
    base = Rung("01-baseline", RungKind.BASELINE, settings, f"{RUNS_DIR}/01-baseline",
                replicates=["01-baseline"])
    base.summary, _ = execute(PlannedRun("a", 1, settings, base.name))
    base.decision = baseline_verdict(base.summary)
    study.rungs.append(base)

    def trial(name: str, kind: str, b: RunSettings, reference: Rung, note: str) -> Rung:
        rung = Rung(name, kind, b, f"{RUNS_DIR}/{name}", compared_with=reference.name)
        t = make_trial(b, reference, name, base, root, options)
        verdict = run_trial(t, execute)
        finish_rung(rung, t, verdict, note)
        rung.decision = verdict
        study.rungs.append(rung)
        return rung

    trial("02-mixed_bfloat16", "mixed_precision", settings.with_(policy="mixed_bfloat16"), base,
          "mixed_bfloat16 was the policy asked for")
    xla = trial("03-xla", "xla", settings.with_(jit_compile=True), base, "XLA on the best configuration so far")
    big = trial("04-larger_batch", "larger_batch", xla.settings.with_(batch_size=128, lr_scale=2.0), xla,
                "batch 128: the kept rungs freed memory")
    for n in range(confirmations if confirmation else 0):
        trial(f"{5 + n:02d}-confirmation", "confirmation", big.settings, base,
              "the recommended configuration against the baseline, side by side")
    if abandoned:  # measured by the real trial engine, stopped after two pairs, left out of the ladder
        t = make_trial(settings.with_(policy="mixed_bfloat16"), base, "06-mixed_bfloat16", base, root, options)
        while (planned := t.next_run()) is not None:
            if isinstance(planned, PlannedRun):
                t.record(planned, *execute(planned))
                continue
            if any(run.name.endswith(".a3") for run in planned.runs):  # Esc before the third pair
                break
            measured = [execute(run) for run in planned.runs]
            t.record(planned, [m[0] for m in measured], [m[1] for m in measured])
    study.recommended = measurement_only(big.settings)
    study.recommended_rung = big.name
    study.status = StudyStatus.COMPLETED
    study.save()
    if broken:
        make_run(runs, "06-failed", workload=workload, policy="mixed_float16", status=protocol.RunStatus.FAILED, seed=5,
                 findings=[{"code": "NAN_LOSS", "severity": "error", "where": "step 40",
                            "message": "the loss became NaN", "fix": "keep the head in float32"}])
        make_run(runs, "07-cancelled", workload=workload, status=protocol.RunStatus.CANCELLED, write_summary=False,
                 seed=6, checkpoint=False)
        make_run(runs, "08-crashed", workload=workload, write_summary=False, write_done=False, truncate=True,
                 seed=7, checkpoint=False)
    return root

def pdf_text(path: Path) -> str:
    """The PDF's text as a reader's copy-paste would give it (pypdf, a test dependency)."""
    from pypdf import PdfReader
    return "\n".join(page.extract_text() for page in PdfReader(str(path)).pages)
