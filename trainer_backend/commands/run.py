"""`run`: one measured training run of a workload, into a run directory (docs/ARCHITECTURE.md).

Order matters:
1. Validate everything that can be the user's mistake — load the workload,
   set the dtype policy (before `build_model()` or a training script runs, or
   it has no effect), seed, build (a script runs up to its first fit()), make
   the datasets, read what the script's own compile() and policy resolved
   (`as_written`: the settings not given take it), apply the fixes,
   re-compile with the jit_compile under test and the scaled learning rate — *before* the run directory exists, so a
   broken workload leaves no half-written directory. A fix that cannot be
   applied becomes a FIX_NOT_APPLIED finding; the run goes on without it.
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
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tfturbo.learning_rate import Schedule
from tfturbo.as_written import AsWritten
from tfturbo import findings as fcodes
from tfturbo import protocol, runfiles
from tfturbo.cli_args import run_argv, settings_from_args
from tfturbo.errors import UserError, plain_line
from tfturbo.run_summary import RunSummary
from tfturbo.findings import Finding
from tfturbo.settings import RunSettings
from tfturbo.workload_kind import WorkloadDoc

import trainer_backend

from .. import as_written, ceiling, distribute, hardware, hparams_record, measure, stdio
from ..batch_parts import features, has_labels
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
    findings: list[Finding] = field(default_factory=list)  # found while preparing (a fix not applied)
    strategy: Any = None  # the tf.distribute strategy the model was built under
    output_dtypes: list[str] | None = None  # what the model's head computes in (for the verdict's causes)
    clusters: Any = None  # with auto-clustering: the ClusterProbe that counts what XLA compiled (xla_clusters.py)
    optimizers: Any = None  # optimizer_code.FoundOptimizers: the optimizers found on the model, as written
    # the learning-rate schedule as this run trains it (after --lr-scale): {"class", "config"}; None for a constant
    learning_rate_schedule: Schedule | None = None
    # the fixed examples it validates on (None: none): paired_validation.PairedValidation, or for a model trained
    # without labels batch_validation.BatchValidation
    validation: Any = None
    # the script's own configuration, read before anything changed it (trainer_backend/as_written.py)
    as_written: AsWritten | None = None

    @property
    def labels(self) -> bool:
        """The training data carries labels; False for a model trained on features only (`batch_parts`)."""
        return has_labels(self.train_ds.element_spec)

    @property
    def replicas(self) -> int:
        return int(getattr(self.strategy, "num_replicas_in_sync", 1) or 1)

    def probes(self) -> list:
        """Callbacks besides the instrument that check what the run did (the auto-clustering cluster count)."""
        return [self.clusters] if self.clusters is not None else []

    def xla_active(self) -> bool | None:
        """The run trained under XLA: jit_compile=True that Keras kept, or auto-clustering that compiled a
        cluster (None: it could not tell)."""
        if self.settings.strategy == "tpu":
            return True  # a TPU compiles every step with XLA, whatever jit_compile says
        if self.settings.jit_compile:
            return bool(self.model.jit_compile)
        if self.clusters is not None:
            return None if self.clusters.clusters is None else self.clusters.clusters > 0
        return False


def main(args: argparse.Namespace, writer: protocol.EventWriter) -> tuple[str, int]:
    from ..diagnostics.sixteen_bit_hazard import SixteenBitFailure

    settings = settings_from_args(args)
    out = Path(args.out)
    if out.exists():
        runfiles.prepare_run_dir(out)  # refuse an existing run before the expensive part; creates nothing
    try:
        job = prepare(settings, writer)
    except SixteenBitFailure as failure:  # this configuration fails before training: a failed run, not bad input
        return failed_before_training(settings, failure, runfiles.prepare_run_dir(out), writer)
    run_dir = runfiles.prepare_run_dir(out)
    return train(job, run_dir, writer)


def failed_before_training(settings: RunSettings, failure, run_dir: Path, writer: protocol.EventWriter
                           ) -> tuple[str, int]:
    """A run whose configuration failed before fit() (the script or its model, under the 16-bit policy under
    test): its directory written as a failed run's (run.yaml, events, backend.log, summary.json with the error
    and the finding that names the cause), so a trial judges it as failed with its fix and a study keeps it."""
    import traceback

    from ..workload import load_workload

    workload = load_workload(settings.workload, settings.script_args)  # its names only: nothing runs again
    described: WorkloadDoc = {"spec": workload.spec, "name": workload.name, "path": workload.path}
    env: dict[str, Any] = {"versions": hardware.versions(), "device": hardware.device_label(hardware.devices())}
    runfiles.write_yaml(run_dir / runfiles.RUN_YAML, {
        "settings": settings.to_dict(), "workload": described, **env,
        "command_line": shlex.join(["tfturbo", "run", *run_argv(settings, str(run_dir))]),
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds")})
    writer.attach(open(run_dir / runfiles.EVENTS, "a", encoding="utf-8"))
    stdio.attach_log(run_dir / runfiles.BACKEND_LOG)
    cause = failure.__cause__ or failure
    traceback.print_exception(cause, file=sys.stderr)
    finding = failure.finding.to_dict()
    writer.emit(protocol.FINDING, finding=finding)
    error = protocol.ErrorDoc(kind=protocol.TRAINING_ERROR, message=plain_line(failure.finding.message),
                              fix=failure.fix)
    writer.emit(protocol.ERROR, **error, traceback="".join(traceback.format_exception(cause)))
    summary = RunSummary(status=protocol.RunStatus.FAILED, settings=settings, findings=[finding],
                         error=error, workload=described, **env)
    document = summary.to_dict()
    runfiles.write_json_atomic(run_dir / runfiles.SUMMARY, document)
    writer.emit(protocol.RESULT, command="run", document=document)
    return protocol.RunStatus.FAILED, 1


# ------------------------------------------------------------------------------ preparing

def prepare(settings: RunSettings, writer: protocol.EventWriter) -> PreparedRun:
    import keras
    import tensorflow as tf

    from ..workload import load_workload

    if settings.xla_autoclustering:  # before the step functions are traced
        tf.config.optimizer.set_jit("autoclustering")
    writer.emit(protocol.PHASE, phase=protocol.BUILDING, step=None, detail=f"loading {settings.workload}")
    workload = load_workload(settings.workload, settings.script_args, settings.fit_call)
    # before build_model() (or the script) runs; left as written, the script's own policy (else Keras' floatx)
    keras.mixed_precision.set_global_policy(settings.policy or keras.config.floatx())
    if settings.policy is None and hasattr(workload, "keep_policy"):
        workload.keep_policy = True
    keras.utils.set_random_seed(settings.seed)
    strategy = distribute.strategy_for(settings)
    replicas = int(getattr(strategy, "num_replicas_in_sync", 1) or 1)
    distribute.refuse_jit_across_devices(settings, replicas)
    findings: list[Finding] = []
    from ..optimizer_code import find_optimizers, recording_compile

    with strategy.scope(), recording_compile():
        model = workload.build_model()  # a script runs here, up to its first fit()
    written = as_written.read(model, workload, find_optimizers(model), hardware.tf32_enabled(hardware.devices()),
                              settings.policy)
    settings = whole_calls(as_written.resolve(settings, written, replicas))  # None: as the script wrote it
    dropped = as_written.callbacks_finding(written["callbacks"])
    if dropped is not None:
        findings.append(dropped)
    batch_size = settings.batch_size or workload.default_batch_size
    settings = settings.with_(batch_size=batch_size)
    keras.utils.set_random_seed(settings.seed)  # the data order must not depend on how the model was built
    train_ds, val_ds = workload.make_datasets(batch_size)
    with strategy.scope():
        build_on_zeros(model, train_ds)
        if settings.fix_head:
            findings += apply_fix_head(model, train_ds)
        if settings.fix_int_inputs:
            findings += apply_fix_int_inputs(model, train_ds)
        writer.emit(protocol.PHASE, phase=protocol.COMPILING, step=None,
                    detail=f"{settings.policy}, jit_compile={settings.jit_compile}")
        optimizers = find_optimizers(model)  # the user's compile() arguments and rates, before tfturbo's
        learning_rate, schedule = recompile(model, settings)
    if settings.drop_remainder:
        from ..fixes import drop_partial_batches

        try:
            train_ds = drop_partial_batches(train_ds, batch_size)
        except Exception as exc:  # noqa: BLE001 - tfturbo's own fix never fails the run
            findings.append(fix_not_applied("--drop-remainder", f"{type(exc).__name__}: {exc}",
                                            "batch the training data with ds.batch(batch_size, drop_remainder=True)"))
    if settings.input_fixes:
        train_ds, finding = input_fixes(train_ds, batch_size)
        findings.append(finding)
    validation = fixed_validation(val_ds, settings, has_labels(train_ds.element_spec))
    if settings.sixteen_bit and not settings.fix_int_inputs and val_ds is not None:
        findings += integer_input_hazards(workload, model, validation.dataset if validation is not None else val_ds)
    clusters = None
    if settings.xla_autoclustering:  # did auto-clustering compile anything? (the first call's graphs)
        from ..xla_clusters import ClusterProbe

        clusters = ClusterProbe()
    return PreparedRun(settings, workload, model, train_ds, val_ds, learning_rate, findings, strategy,
                       output_dtypes(model, train_ds), clusters, optimizers, schedule, validation, written)


def fixed_validation(val_ds, settings: RunSettings, labels: bool = True):
    """The run's fixed validation examples (`paired_validation.PairedValidation`: the study's set, or the first
    examples of `val_ds`), read once before anything else reads the validation data — a script's finite
    generator gives one pass, and a batch read before it was lost (448 of 480 examples paired under a 16-bit
    policy, whose integer-input check read one); for a model trained without labels, whose examples have none
    to be judged by, its own loss on each fixed batch (`batch_validation.BatchValidation`); None for a speed-only
    run, which does not validate."""
    if val_ds is None or settings.speed_only:
        return None
    if not labels:
        from ..batch_validation import BatchValidation

        return BatchValidation(val_ds, settings.val_examples, settings.val_steps or -1)
    from ..paired_validation import PairedValidation

    return PairedValidation.of_run(val_ds, settings)


def integer_input_hazards(workload, model, val_ds) -> list[Finding]:
    """INTEGER_INPUT_16BIT from the first validation batch (never the training data: reading it would change
    the data order of this run), so an accuracy verdict can name the cause. Never fails the run."""
    from ..diagnostics.integer_inputs import workload_findings

    try:
        return workload_findings(workload, model, [features(next(iter(val_ds)))], features(val_ds.element_spec))
    except Exception as exc:  # noqa: BLE001 - a check, not the measurement
        print(f"trainer_backend: integer-input check skipped ({type(exc).__name__}: {exc})", file=sys.stderr)
        return []


def output_dtypes(model, train_ds) -> list[str] | None:
    """The compute dtypes of the model's outputs: from its graph, or one call on zeros (subclassed)."""
    import keras

    from ..fixes import zero_batch

    try:
        outputs = getattr(model, "outputs", None) or model(zero_batch(features(train_ds.element_spec)), training=False)
        return sorted({str(keras.backend.standardize_dtype(t.dtype)) for t in keras.tree.flatten(outputs)})
    except Exception:  # noqa: BLE001 - unknown: the verdict then does not use it
        return None


def input_fixes(train_ds, batch_size: int) -> tuple[Any, Finding]:
    """--input-fixes: the fixed dataset and the INPUT_FIXES_APPLIED finding (events, summary and log say what
    changed), or the dataset unchanged and FIX_NOT_APPLIED when the pipeline cannot be changed."""
    from ..input_fixes import fix_training_data

    try:
        fixed, finding = fix_training_data(train_ds, batch_size)
    except Exception as exc:  # noqa: BLE001 - tfturbo's own fix never fails the run
        return train_ds, fix_not_applied("--input-fixes", f"{type(exc).__name__}: {exc}",
                                         "add .prefetch(tf.data.AUTOTUNE) at the end of the training pipeline")
    print(f"tfturbo: --input-fixes: {finding.message}", file=sys.stderr)
    return fixed, finding


def whole_calls(settings: RunSettings) -> RunSettings:
    """Validation points on call boundaries: Keras runs whole calls of steps_per_execution steps, so a call that
    spans a validation point would train past it. The default interval moves to a multiple of N; with an
    interval given (a trial scales it for a larger batch), N becomes its largest divisor up to N (the summary's
    settings say which N ran)."""
    n = settings.calls  # resolved: the script's own when none was given
    val_every = min(settings.effective_val_every(), settings.steps)
    if n == 1 or val_every % n == 0:
        return settings
    if settings.val_every is None:
        return settings.with_(val_every=max(n, val_every // n * n))
    fitted = max(d for d in range(1, n + 1) if val_every % d == 0)
    print(f"tfturbo: --steps-per-execution {n} → {fitted}: calls must not span the validation interval "
          f"({val_every} steps)", file=sys.stderr)
    return settings.with_(steps_per_execution=fitted)


def build_on_zeros(model, train_ds) -> None:
    """Build a model that has no weights yet (subclassed, never called) with one forward pass on zeros.

    Every run of a workload then creates its weights at the same point, with or
    without the fixes (which call the model), and reading no data keeps the data
    order the same. A model that cannot be called on zeros is left to fit().
    """
    if model.built and model.weights:
        return
    from ..fixes import zero_batch

    try:
        model(zero_batch(features(train_ds.element_spec)), training=False)
    except Exception as exc:  # noqa: BLE001 - fit() builds it instead
        print(f"trainer_backend: the model is built by fit(), not ahead ({type(exc).__name__}: {exc})",
              file=sys.stderr)


def apply_fix_head(model, train_ds) -> list[Finding]:
    """--fix-head in place; [] when applied (or nothing to do), else the FIX_NOT_APPLIED finding."""
    from ..diagnostics.model_audit import head_findings
    from ..fixes import FixNotApplied, float32_head, zero_batch

    input_spec = features(train_ds.element_spec)
    try:
        changed = float32_head(model, input_spec)
    except FixNotApplied as exc:
        try:
            code = "\n".join(f.fix for f in head_findings(model, zero_batch(input_spec)) if f.fix)
        except Exception:  # noqa: BLE001 - the finding still says why
            code = ""
        return [fix_not_applied("--fix-head", str(exc), code or 'create the output layer with dtype="float32"')]
    if changed:
        verb = "computes" if len(changed) == 1 else "compute"
        print(f"tfturbo: --fix-head: {', '.join(changed)} now {verb} in float32", file=sys.stderr)
    return []


def apply_fix_int_inputs(model, train_ds) -> list[Finding]:
    """--fix-int-inputs in place; [] when applied (or nothing to do), else the FIX_NOT_APPLIED finding."""
    from ..diagnostics.integer_inputs import float32_id_layers

    try:
        changed = float32_id_layers(model, features(train_ds.element_spec))
    except Exception as exc:  # noqa: BLE001 - tfturbo's own fix never fails the run
        return [fix_not_applied("--fix-int-inputs", f"{type(exc).__name__}: {exc}",
                                'declare the ids as integers: keras.Input(shape=..., dtype="int32")')]
    if changed:
        verb = "computes" if len(changed) == 1 else "compute"
        print(f"tfturbo: --fix-int-inputs: {', '.join(changed)} now {verb} in float32, so integer ids reach "
              "their lookup exact", file=sys.stderr)
    return []


def fix_not_applied(fix: str, why: str, code: str) -> Finding:
    """The run goes on without `fix`; the finding (and the log) say why and carry the code change."""
    print(f"tfturbo: fix not applied: {fix}: {why}", file=sys.stderr)
    return Finding(fcodes.FIX_NOT_APPLIED, f"fix not applied: {fix}: {why}", fix=code, where=fix,
                   data={"fix": fix, "reason": why})


def recompile(model, settings: RunSettings) -> tuple[float | None, Schedule | None]:
    """Compile again with the jit_compile and steps per call under test (the script's own when the run gave
    none: `settings` are resolved, `as_written`), keeping the user's own objects.

    The model's optimizer (already built for its variables — a custom
    train_step may call `self.optimizer.apply`), loss and metric objects are
    passed back to `compile()` as they are; nothing is rebuilt from config,
    which would make a fresh optimizer the model's variables do not match.
    A model with its own compile() keeps everything and only changes its
    jit_compile. Returns the learning rate and its schedule after scaling by `settings.lr_scale`, applied to
    every optimizer found on the model (`optimizer_code.find_optimizers`: a GAN's two), the first one's returned.
    """
    import keras

    compiled_with = getattr(model, "_compile_config", None)  # the compile() arguments, the user's objects
    if model.compiled and compiled_with is not None and type(model).compile is keras.Model.compile:
        model.compile(**{**compiled_with.config, "optimizer": model.optimizer,
                         "jit_compile": settings.jit_compile,
                         "steps_per_execution": settings.steps_per_execution,
                         "auto_scale_loss": False})  # model.optimizer is already loss-scaled if it should be
    else:  # a model with its own compile(): set what it compiled with, traced again on the next fit()
        model.jit_compile = settings.jit_compile
        model.steps_per_execution = settings.steps_per_execution
        model.train_function = model.test_function = model.predict_function = None
    from ..optimizer_code import find_optimizers

    scaled = [scale_learning_rate(optimizer, settings.lr_scale) for optimizer in find_optimizers(model).objects]
    return scaled[0] if scaled else (None, None)


def scale_learning_rate(optimizer, factor: float) -> tuple[float | None, Schedule | None]:
    """Multiply the optimizer's learning rate by `factor` (`--lr-scale`): a constant, or a schedule's rates
    (`tfturbo.learning_rate.scaled_config`: initial rate, warm-up target, end rate, piecewise values; its step
    counts as written). Returns (the rate it starts at, the schedule as it will run: {"class", "config"} or
    None for a constant)."""
    from tfturbo.learning_rate import scaled_config, scales

    from ..optimizer_code import schedule_config, schedule_of

    inner = getattr(optimizer, "inner_optimizer", optimizer)
    schedule = schedule_of(inner)
    if schedule is not None:
        config = schedule_config(schedule)
        if factor != 1.0:
            if not scales(config):
                raise UserError(f"--lr-scale cannot scale a {type(schedule).__name__} learning-rate schedule: it "
                                "has no rate tfturbo knows (initial_learning_rate, values, ...)",
                                "use a Keras schedule, or a constant learning rate")
            config = scaled_config(config, factor)
            inner.learning_rate = type(schedule).from_config(config)
        rate = config.get("initial_learning_rate", (config.get("values") or [None])[0])
        return measure.finite_or_none(rate), {"class": type(schedule).__name__, "config": config}
    try:
        lr = float(inner.learning_rate)
    except (TypeError, ValueError):
        return None, None
    if factor != 1.0:
        inner.learning_rate = lr * factor
        lr *= factor
    return lr, None


# ------------------------------------------------------------------------------ training

def train(job: PreparedRun, run_dir: Path, writer: protocol.EventWriter) -> tuple[str, int]:
    """One run, in its own process: start it, fit, finish it (run-pair runs two of them interleaved)."""
    active = start_run(job, run_dir, writer)
    fit(active)
    return finish_run(active)


@dataclass
class ActiveRun:
    """A run between `start_run` and `finish_run`: its directory, monitor, instrument and what fit() left."""

    job: PreparedRun
    run_dir: Path
    writer: protocol.EventWriter
    env: dict
    devs: list
    workload: WorkloadDoc
    monitor: Any
    instrument: Any
    callbacks: Any
    scalars: Any
    epochs: int
    val_every: int
    val: Any
    error: Any = None
    wall_s: float = 0.0
    document: dict | None = None  # summary.json, once finished
    position: int = 0  # its place among the runs its process trains (`run-pair`'s second arm: 1)
    fit_start_s: float | None = None  # the process's clock when its fit() began (`RunSummary.fit_start_s`)
    hand_overs: list | None = None  # `run-pair`: [own, other arm's samples/s] at each hand-over (`blocks.hand_overs`)
    memory_note: str | None = None  # what its memory peak is when not its own (`run-pair`: the process's, both arms)


def code_facts(workload) -> WorkloadDoc:
    """What running the workload showed of its code, for the patch of its file (tfturbo/tune/code_changes.py):
    whether fit() got NumPy arrays or a dataset, and a script's fit() line (it picks the fit() the run
    measured when the script has several)."""
    facts: WorkloadDoc = {"data": "numpy" if getattr(workload, "array_data", False) else "tf.data"}
    call = getattr(workload, "call", None)
    if call is not None and getattr(call, "line", None):
        facts["fit_line"] = int(call.line)
    return facts


def start_run(job: PreparedRun, run_dir: Path, writer: protocol.EventWriter, log: bool = True) -> ActiveRun:
    """run.yaml, events.jsonl and backend.log attached (`log` False: the caller attaches the log), the monitor
    and the instrument: everything before fit()."""
    import tensorflow as tf

    from ..detectors import default_detectors
    from ..detectors.base import RunContext
    from ..instrument import Instrument, QuietCallbackList
    from ..monitor import RunMonitor

    settings = job.settings
    devs = hardware.devices()
    # where it trains: versions, the device and, on a GPU with TF32, whether float32 matmuls ran as TF32
    env = {"versions": hardware.versions(), "device": hardware.device_label(devs), "tf32": hardware.tf32_enabled(devs)}
    workload: WorkloadDoc = {**job.workload.describe(), **code_facts(job.workload)}  # a script: the fit() measured
    runfiles.write_yaml(run_dir / runfiles.RUN_YAML, {
        "settings": settings.to_dict(), "workload": workload, **env, "devices": devs,
        **({"as_written": job.as_written} if job.as_written else {}),  # the script's own configuration
        "command_line": shlex.join(["tfturbo", "run", *run_argv(settings, str(run_dir))]),
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    })
    distribute.attach(run_dir)
    writer.attach(open(run_dir / runfiles.EVENTS, "a", encoding="utf-8"))
    writer.forget_history()
    if log:
        stdio.attach_log(run_dir / runfiles.BACKEND_LOG)

    tb_dir = run_dir / runfiles.TB_DIR
    scalars = tf.summary.create_file_writer(str(tb_dir))
    from ..diagnostics.advice import shape_of

    context = RunContext(settings=settings, model=job.model, train_ds=job.train_ds, backend_log=stdio.stderr_text,
                         extra={"learning_rate": job.learning_rate, "val_ds": job.val_ds, "run_dir": run_dir,
                                "workload_shape": shape_of(job.workload, job.model),
                                "accelerator": hardware.accelerator(devs)})
    monitor = RunMonitor(writer, settings, default_detectors(settings), context, hardware.MemoryMeter(), scalars)
    monitor.record.drained = hardware.accelerator(devs) is not None  # step times from the drained windows
    for finding in job.findings:
        monitor.add_finding(finding)
    val_every = min(settings.effective_val_every(), settings.steps)
    instrument = Instrument(monitor, settings.steps, val_every, settings.effective_profile(), str(tb_dir),
                            wait_for_steady=settings.profile is None)
    epochs = math.ceil(settings.steps / val_every)
    callbacks = QuietCallbackList([instrument, *job.probes()], add_history=True, model=job.model, verbose=0,
                                  epochs=epochs, steps=val_every)
    monitor.paired = job.validation  # the same examples for every batch size, so candidates are compared pairwise
    val = monitor.paired.dataset if monitor.paired is not None else None
    return ActiveRun(job, run_dir, writer, env, devs, workload, monitor, instrument, callbacks, scalars, epochs,
                     val_every, val)


def fit(active: ActiveRun) -> None:
    """model.fit of the whole run; a failure becomes its `error` event (kept in `active.error`)."""
    job, writer, instrument, monitor, settings = active.job, active.writer, active.instrument, active.monitor, \
        active.job.settings
    if settings.xla_cache and (settings.jit_compile or settings.xla_autoclustering):
        active.callbacks.trace_position = active.position  # the cache finds the program other replicates compiled
    active.fit_start_s = time.monotonic() - trainer_backend.STARTED
    started = time.perf_counter()
    error = None
    try:
        with distribute.fit_scope(job.model, job.strategy):
            job.model.fit(job.train_ds.repeat(), epochs=active.epochs, steps_per_epoch=active.val_every,
                          validation_data=active.val, callbacks=active.callbacks, verbose=0)
    except Exception as exc:  # noqa: BLE001 - the run failed: say why and keep what was measured
        print("trainer_backend: training failed", file=sys.stderr)
        import traceback

        traceback.print_exc(file=sys.stderr)
        if instrument.profiling:
            instrument.stop_profiler(instrument.completed)
        from ..diagnostics.training_failure import diagnose

        cause = diagnose(exc, job.model, settings)
        # once: the run's integer-input check before training already named the layer that rounds the ids
        if cause is not None and cause[0].code not in {f.get("code") for f in monitor.findings}:
            monitor.add_finding(cause[0])
        explained, said = distribute.explain_failure(exc)
        error = emit_error(writer, explained, kind=protocol.TRAINING_ERROR, batch_size=settings.batch_size,
                           fix=cause[1] if cause else None, also=said)
    active.error, active.wall_s = error, time.perf_counter() - started


def finish_run(active: ActiveRun) -> tuple[str, int]:
    """Status, checkpoint settings (and model unless speed-only), profile, summary.json and the `result`."""
    from ..monitor import StopReason

    job, run_dir, writer, env, devs, workload = active.job, active.run_dir, active.writer, active.env, active.devs, \
        active.workload
    monitor, instrument, settings, error, wall_s = active.monitor, active.instrument, job.settings, active.error, \
        active.wall_s
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
        checkpoint = save_checkpoint(job, run_dir, env, instrument.completed,
                                     model=not (settings.speed_only or settings.no_model))
    active.scalars.close()
    profile = read_profile(job, instrument, monitor, run_dir, env.get("tf32"))

    summary = build_summary(job, monitor, instrument, status, wall_s, env, workload, checkpoint, active.fit_start_s)
    summary.hand_overs = active.hand_overs
    summary.memory_note = active.memory_note
    # a stopped run ends now: no FLOP count, no ceiling benchmark; so does a speed-only replicate, whose
    # configuration's full-length run counts the same step (a trace costs 0.3-1.3 s a run at load 7)
    if status == protocol.RunStatus.COMPLETED and not settings.speed_only:
        for key, value in step_facts(job, summary, devs, env).items():
            setattr(summary, key, value)
    if error is not None:
        summary.error = {"kind": error.kind, "message": error.message, "fix": error.fix}
    document = summary.to_dict()
    hparams_record.write(run_dir, summary, profile)  # tensorboard --logdir STUDY/runs: the HParams tab
    runfiles.write_json_atomic(run_dir / runfiles.SUMMARY, document)
    active.document = document
    writer.emit(protocol.RESULT, command="run", document=document)
    return status, code


def read_profile(job: PreparedRun, instrument, monitor, run_dir: Path, tf32: bool | None = None):
    """profile.json from the capture, after training (never in the measurement), and the findings it raises
    (`tf32`: float32 matmuls ran as TF32); the Profile, or None without a capture."""
    from tfturbo.profile_findings import run_findings

    from ..profile_capture_read import after_training

    document = after_training(run_dir, instrument, monitor.record)
    for finding in run_findings(document, job.settings, tf32) if document is not None else []:
        monitor.add_finding(finding)
    return document


def step_facts(job: PreparedRun, summary: RunSummary, devs: list, env: dict) -> dict[str, Any]:
    """What the training step that ran is made of, from one trace of it after training: flops_per_step, its
    source, MFU — one device's achieved FLOP/s (steady window throughput over the replicas in sync) over one
    device's measured matmul ceiling for the run's compute dtype (on a TPU measured inside the run's
    TPUStrategy) — or why it is not known, and the optimizers the step applies."""
    from ..step_flops import trace_train_step

    batch = job.settings.batch_size or 1
    step = trace_train_step(job.model, job.train_ds.element_spec, batch)
    count = step.flops()
    rate = (summary.throughput or {}).get("samples_per_s")
    steps_per_s = rate / batch if rate else None
    tpu = job.strategy if job.settings.strategy == "tpu" else None
    peaks = ceiling.ceilings(devs, env["device"], env["versions"]["tensorflow"], tf32=summary.tf32,
                             strategy=tpu) if count.flops else {}
    mfu = ceiling.utilization(count.flops, steps_per_s, peaks, job.settings.policy or "float32", job.replicas, summary.tf32,
                              count.unknown)
    if mfu["mfu_note"]:
        print(f"tfturbo: MFU {mfu['mfu_note']}", file=sys.stderr)
    facts = {"flops_per_step": count.flops, "flops_source": count.source, **mfu}
    if step.graph is not None and not step.replicated:
        facts.update(job.optimizers.used_by(step.captured()).summary_fields())
    return facts


def save_checkpoint(job: PreparedRun, run_dir: Path, env: dict, steps_done: int, model: bool = True) -> str | None:
    """checkpoint/model.keras and, beside it, the settings that produced it (tutorial step 5).

    `model` False (a speed-only replicate, a trial's reference replicate: models nobody uses): the settings
    only — saving a model costs seconds per run."""
    folder = run_dir / runfiles.CHECKPOINT_DIR
    folder.mkdir(exist_ok=True)
    runfiles.write_checkpoint_settings(run_dir, job.settings, job.learning_rate, steps_done, env,
                                       job.learning_rate_schedule)
    if not model:
        return None
    try:
        job.model.save(folder / runfiles.CHECKPOINT_MODEL)
    except Exception as exc:  # noqa: BLE001 - an unsaveable model does not void the measurements
        print(f"trainer_backend: could not save the model: {type(exc).__name__}: {exc}", file=sys.stderr)
        return None
    return f"{runfiles.CHECKPOINT_DIR}/{runfiles.CHECKPOINT_MODEL}"


def build_summary(job: PreparedRun, monitor, instrument, status: str, wall_s: float, env: dict,
                  workload: WorkloadDoc, checkpoint: str | None, fit_start_s: float | None = None) -> RunSummary:
    settings = job.settings
    record = monitor.record
    steady = record.steady_ms()
    windows = record.steady_windows()
    step_ms = measure.step_time(steady, record.clock)
    throughput = measure.throughput(windows, settings.batch_size or 1)  # global: every replica's samples
    memory = monitor.memory.read()
    profile = None
    if instrument.profile_done and instrument.profile:
        tb_dir = Path(instrument.profile_dir)
        xplanes = sorted(tb_dir.glob("plugins/profile/*/*.xplane.pb"))
        profile = {"window": list(instrument.profile), "logdir": runfiles.TB_DIR,
                   "xplane": xplanes[-1].relative_to(tb_dir.parent).as_posix() if xplanes else None}
    return RunSummary(
        status=status,
        settings=settings,
        step_ms=step_ms,
        # the run's one throughput (tfturbo.summary.samples_per_s) in steps; the median step only without windows
        steps_per_s=(throughput["samples_per_s"] / (settings.batch_size or 1) if throughput["samples_per_s"]
                     else 1000.0 / step_ms["median"] if step_ms["median"] else None),
        step_ms_samples=[round(ms, 4) for ms in measure.thin(steady)],
        steps_per_sample=record.steps_per_sample,  # steps per call (steps_per_execution): one sample each
        warmup_s=monitor.warmup_s,
        warmup_steps=record.first_steady - 1 if record.first_steady else None,
        first_steady_step=record.first_steady,
        throughput=throughput,
        replicas=job.replicas,
        per_replica_batch_size=(settings.batch_size or 1) // job.replicas,
        windows=[[a, b, round(t, 6)] for a, b, t in record.windows],
        one_off_compiles=[[step, round(s, 3)] for step, s in instrument.one_off_compiles] or None,
        paired_validation=monitor.paired.describe() if monitor.paired is not None and job.labels else None,
        labels=job.labels,
        batch_validation=monitor.paired.describe() if monitor.paired is not None and not job.labels else None,
        steps_completed=instrument.completed,
        stopped_early=monitor.stopped_early,
        steps_saved=settings.steps - instrument.completed if monitor.stopped_early else 0,
        wall_s=wall_s,
        process_s=time.monotonic() - trainer_backend.STARTED,
        fit_start_s=fit_start_s,
        peak_memory_bytes=memory["peak_bytes"],
        memory_kind=memory["kind"],
        metrics=dict(monitor.last_logs),
        validation=monitor.validation,
        training=monitor.training,
        learning_rate=job.learning_rate,
        **job.optimizers.summary_fields(),
        learning_rate_schedule=job.learning_rate_schedule,
        as_written=job.as_written,
        loss_scale=monitor.loss_scale_summary(),
        xla_active=job.xla_active(),
        tf32=env.get("tf32"),
        xla_clusters=job.clusters.clusters if job.clusters is not None else None,
        output_dtypes=job.output_dtypes,
        profile=profile,
        checkpoint=checkpoint,
        findings=monitor.findings,
        versions=env["versions"],
        device=env["device"],
        workload=workload,
    )
