"""`run`: one measured training run of a workload, into a run directory (docs/ARCHITECTURE.md).

Order matters:
1. Validate everything that can be the user's mistake — load the workload,
   set the dtype policy (before `build_model()`, or it has no effect), seed,
   build, re-compile with the jit_compile under test and the scaled learning
   rate, make the datasets — *before* the run directory exists, so a broken
   workload leaves no half-written directory.
2. Write run.yaml, then stream events.jsonl and backend.log, train with
   `model.fit` (validation every `val_every` steps), then the checkpoint and
   its settings, and summary.json last, atomically.
"""

from __future__ import annotations

import argparse
import math
import shlex
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tfturbo import protocol, runfiles
from tfturbo.cli_args import run_argv, settings_from_args
from tfturbo.errors import UserError
from tfturbo.settings import RunSettings

from .. import hardware, measure, stdio
from . import emit_error


@dataclass
class PreparedRun:
    """A workload that passed every check, built and compiled, with its datasets."""

    settings: RunSettings  # batch size resolved
    workload: Any
    model: Any
    train_ds: Any
    val_ds: Any
    learning_rate: float | None


def main(args: argparse.Namespace, writer: protocol.EventWriter) -> tuple[str, int]:
    settings = settings_from_args(args)
    out = Path(args.out)
    if out.exists():
        runfiles.prepare_run_dir(out)  # refuse an existing run before the expensive part; creates nothing
    job = prepare(settings, writer)
    run_dir = runfiles.prepare_run_dir(out)
    return train(job, run_dir, writer)


# ------------------------------------------------------------------------------ preparing

def prepare(settings: RunSettings, writer: protocol.EventWriter) -> PreparedRun:
    import keras
    import tensorflow as tf

    from ..workload import load_workload

    writer.emit(protocol.PHASE, phase=protocol.BUILDING, step=None, detail=f"loading {settings.workload}")
    workload = load_workload(settings.workload)
    settings = settings.with_(batch_size=settings.batch_size or workload.default_batch_size)
    keras.mixed_precision.set_global_policy(settings.policy)
    keras.utils.set_random_seed(settings.seed)
    if settings.strategy == "mirrored" and settings.jit_compile and not tf.config.list_physical_devices("GPU"):
        # TensorFlow's XLA cannot reach the variables each logical CPU replica keeps on its own device
        raise UserError("--jit with --strategy mirrored needs GPUs: XLA cannot run replicas on logical CPU devices",
                        "use --no-jit, or --strategy default")
    strategy = tf.distribute.MirroredStrategy() if settings.strategy == "mirrored" else tf.distribute.get_strategy()
    with strategy.scope():
        model = workload.build_model()
        compile_config = model.get_compile_config()
        if settings.fix_head:
            from ..fixes import float32_head

            model = float32_head(model)
        writer.emit(protocol.PHASE, phase=protocol.COMPILING, step=None,
                    detail=f"{settings.policy}, jit_compile={settings.jit_compile}")
        learning_rate = recompile(model, compile_config, settings)
    keras.utils.set_random_seed(settings.seed)  # the data order must not depend on how the model was built
    train_ds, val_ds = workload.make_datasets(settings.batch_size)
    if settings.drop_remainder:
        from ..fixes import drop_partial_batches

        train_ds = drop_partial_batches(train_ds, settings.batch_size)
    return PreparedRun(settings, workload, model, train_ds, val_ds, learning_rate)


def recompile(model, compile_config: dict, settings: RunSettings) -> float | None:
    """Compile again with the same optimizer, loss and metrics, and the jit_compile under test.

    Returns the learning rate after scaling by `settings.lr_scale`.
    """
    import keras

    if compile_config and type(model).compile is keras.Model.compile:
        model.compile_from_config({**compile_config, "jit_compile": settings.jit_compile})
    else:  # a model with its own compile(): Keras cannot re-compile it from its config
        model.jit_compile = settings.jit_compile
        model.train_function = model.test_function = None
    return scale_learning_rate(model.optimizer, settings.lr_scale)


def scale_learning_rate(optimizer, factor: float) -> float | None:
    import keras

    inner = getattr(optimizer, "inner_optimizer", optimizer)
    schedule = getattr(inner, "_learning_rate", None)
    if isinstance(schedule, keras.optimizers.schedules.LearningRateSchedule):
        config = schedule.get_config()
        if factor != 1.0:
            if "initial_learning_rate" not in config:
                raise UserError(f"--lr-scale cannot scale a {type(schedule).__name__} learning-rate schedule",
                                "use a constant learning rate or a schedule with initial_learning_rate")
            config["initial_learning_rate"] *= factor
            inner.learning_rate = type(schedule).from_config(config)
        return measure.finite_or_none(config.get("initial_learning_rate"))
    try:
        lr = float(inner.learning_rate)
    except (TypeError, ValueError):
        return None
    if factor != 1.0:
        inner.learning_rate = lr * factor
        lr *= factor
    return lr


# ------------------------------------------------------------------------------ training

def train(job: PreparedRun, run_dir: Path, writer: protocol.EventWriter) -> tuple[str, int]:
    import tensorflow as tf

    from ..detectors import default_detectors
    from ..detectors.base import RunContext
    from ..instrument import Instrument, QuietCallbackList
    from ..monitor import RunMonitor, StopReason

    settings = job.settings
    devs = hardware.devices()
    env = {"versions": hardware.versions(), "device": hardware.device_label(devs)}
    workload = {"spec": job.workload.spec, "name": job.workload.name, "path": job.workload.path}
    runfiles.write_yaml(run_dir / runfiles.RUN_YAML, {
        "settings": settings.to_dict(), "workload": workload, **env, "devices": devs,
        "command_line": shlex.join(["tfturbo", "run", *run_argv(settings, str(run_dir))]),
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    })
    writer.attach(open(run_dir / runfiles.EVENTS, "a", encoding="utf-8"))
    writer.forget_history()
    stdio.attach_log(run_dir / runfiles.BACKEND_LOG)

    tb_dir = run_dir / runfiles.TB_DIR
    scalars = tf.summary.create_file_writer(str(tb_dir))
    context = RunContext(settings=settings, model=job.model, train_ds=job.train_ds, backend_log=stdio.stderr_text,
                         extra={"learning_rate": job.learning_rate, "val_ds": job.val_ds, "run_dir": run_dir})
    monitor = RunMonitor(writer, settings, default_detectors(settings), context, hardware.MemoryMeter(), scalars)
    val_every = min(settings.effective_val_every(), settings.steps)
    instrument = Instrument(monitor, settings.steps, val_every, settings.effective_profile(), str(tb_dir),
                            wait_for_steady=settings.profile is None)
    epochs = math.ceil(settings.steps / val_every)
    callbacks = QuietCallbackList([instrument], add_history=True, model=job.model, verbose=0,
                                  epochs=epochs, steps=val_every)
    val = job.val_ds.take(settings.val_steps) if job.val_ds is not None else None  # the same batches every time

    started = time.perf_counter()
    error = None
    try:
        job.model.fit(job.train_ds.repeat(), epochs=epochs, steps_per_epoch=val_every, validation_data=val,
                      callbacks=callbacks, verbose=0)
    except Exception as exc:  # noqa: BLE001 - the run failed: say why and keep what was measured
        print("trainer_backend: training failed", file=sys.stderr)
        import traceback

        traceback.print_exc(file=sys.stderr)
        if instrument.profiling:
            instrument.stop_profiler(instrument.completed)
        error = emit_error(writer, exc, kind=protocol.TRAINING_ERROR, batch_size=settings.batch_size)
    wall_s = time.perf_counter() - started

    if error is not None:
        status, code = protocol.RunStatus.FAILED, error.exit_code
    elif monitor.diverged:
        status, code = protocol.RunStatus.NAN_STOPPED, 1
    elif monitor.stop_reason == StopReason.CANCELLED and instrument.completed < settings.steps:
        status, code = protocol.RunStatus.CANCELLED, 1
    else:
        status, code = protocol.RunStatus.COMPLETED, 0

    checkpoint = None
    if error is None:
        writer.emit(protocol.PHASE, phase=protocol.SAVING, step=instrument.completed, detail="checkpoint")
        checkpoint = save_checkpoint(job, run_dir, env, instrument.completed)
    scalars.close()

    summary = build_summary(job, monitor, instrument, status, wall_s, env, workload, checkpoint)
    if error is not None:
        summary["error"] = {"kind": error.kind, "message": error.message, "fix": error.fix}
    runfiles.write_json_atomic(run_dir / runfiles.SUMMARY, summary)
    writer.emit(protocol.RESULT, command="run", document=summary)
    return status, code


def save_checkpoint(job: PreparedRun, run_dir: Path, env: dict, steps_done: int) -> str | None:
    """checkpoint/model.keras and, beside it, the settings that produced it (tutorial step 5)."""
    folder = run_dir / runfiles.CHECKPOINT_DIR
    folder.mkdir(exist_ok=True)
    s = job.settings
    runfiles.write_yaml(folder / runfiles.CHECKPOINT_SETTINGS, {
        "policy": s.policy, "jit_compile": s.jit_compile, "batch_size": s.batch_size,
        "learning_rate": job.learning_rate, "lr_scale": s.lr_scale, "seed": s.seed, "steps": steps_done,
        "strategy": s.strategy, "fix_head": s.fix_head, "drop_remainder": s.drop_remainder,
        "workload": job.workload.spec, **env,
    })
    try:
        job.model.save(folder / runfiles.CHECKPOINT_MODEL)
    except Exception as exc:  # noqa: BLE001 - an unsaveable model does not void the measurements
        print(f"trainer_backend: could not save the model: {type(exc).__name__}: {exc}", file=sys.stderr)
        return None
    return f"{runfiles.CHECKPOINT_DIR}/{runfiles.CHECKPOINT_MODEL}"


def build_summary(job: PreparedRun, monitor, instrument, status: str, wall_s: float, env: dict,
                  workload: dict, checkpoint: str | None) -> dict[str, Any]:
    settings = job.settings
    record = monitor.record
    steady = record.steady_ms()
    step_ms = measure.step_time(steady)
    memory = monitor.memory.read()
    profile = None
    if instrument.profile_done and instrument.profile:
        tb_dir = Path(instrument.profile_dir)
        xplanes = sorted(tb_dir.glob("plugins/profile/*/*.xplane.pb"))
        profile = {"window": list(instrument.profile), "logdir": runfiles.TB_DIR,
                   "xplane": xplanes[-1].relative_to(tb_dir.parent).as_posix() if xplanes else None}
    return {
        "status": status,
        "settings": settings.to_dict(),
        "step_ms": step_ms,
        "steps_per_s": 1000.0 / step_ms["median"] if step_ms["median"] else None,
        "step_ms_samples": [round(ms, 4) for ms in measure.thin(steady)],
        "warmup_s": monitor.warmup_s,
        "warmup_steps": record.first_steady - 1 if record.first_steady else None,
        "steps_completed": instrument.completed,
        "stopped_early": monitor.stopped_early,
        "steps_saved": settings.steps - instrument.completed if monitor.stopped_early else 0,
        "wall_s": wall_s,
        "peak_memory_bytes": memory["peak_bytes"],
        "memory_kind": memory["kind"],
        "metrics": dict(monitor.last_logs),
        "validation": monitor.validation,
        "learning_rate": job.learning_rate,
        "loss_scale": monitor.loss_scale_summary(),
        "xla_active": bool(job.model.jit_compile) if settings.jit_compile else False,
        "profile": profile,
        "checkpoint": checkpoint,
        "findings": monitor.findings,
        "versions": env["versions"],
        "device": env["device"],
        "workload": workload,
    }
