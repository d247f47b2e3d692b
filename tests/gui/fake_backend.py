"""A scripted stand-in for `python -m trainer_backend`, speaking the same event protocol.

The GUI tests inject it as the backend program, so every widget can be driven
in milliseconds and through failures the real backend rarely shows (a crash,
a flood of steps, a run that waits to be stopped). It parses its arguments
with the shared backend parser, so an argv the GUI builds wrongly fails here
exactly as it would in the real backend.

    python fake_backend.py [--scenario NAME] [--delay S] [--gpus N] COMMAND ARGS...

Scenarios: ok (default), slow (steps trickle until stopped), fail (a training
error with a traceback), crash (killed mid-run, no `done`), flood (a run of
`--steps` steps as fast as it can print), stubborn (like slow, but ignores the
stop command and SIGTERM: only a kill ends it). Workload names pick audit findings:
`builtin:fp16-softmax-head` has a 16-bit head, `builtin:custom-head` too, but its custom layer
has no get_config and the automatic float32 head fails in a way the backend did not foresee (the run fails),
`builtin:head-in-call` too, but its head is computed in call(): the fix cannot be applied and the run trains
without it, as the backend does (FIX_NOT_APPLIED), `builtin:ragged-batches` a
partial last batch, `builtin:slow-input` is input-bound, `builtin:broken`
fails to load, `builtin:no-jit` refuses jit_compile=True (XLA_NOT_ACTIVE, no faster) while
auto-clustering pays, `builtin:rotation` likewise, its audit already saying so (a RandomRotation layer), `builtin:short-steps` takes 2 ms a step (steps_per_execution pays),
`builtin:float32-heavy` keeps its matmuls in float32 under a 16-bit policy (MATMUL_NOT_16BIT in its profile),
`builtin:small-val` has 400 validation examples whose correctness varies run to run (accuracy inconclusive; the
per-example loss decides).
A run whose profiler window ran writes a profile.json (`fake_profile`) as the real backend does.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import signal
import sys
import threading
import time
from pathlib import Path

STARTUP_S = 1.0  # a backend process's simulated start-up (TensorFlow's import, the build) in its `process_s`

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.paired_fake import write_paired  # noqa: E402
from tfturbo import protocol, runfiles  # noqa: E402
from tfturbo.cli_args import build_backend_parser, parse_args, settings_from_args  # noqa: E402
from tfturbo.settings import UNSAID  # noqa: E402
from tfturbo import profile as prof  # noqa: E402
from tfturbo.findings import Finding  # noqa: E402
from tfturbo.profile_findings import run_findings  # noqa: E402
from tfturbo.stats import median_ci  # noqa: E402
from tfturbo.workload_kind import fit_calls_in_source  # noqa: E402

VERSIONS = {"tfturbo": "0.1.0", "tensorflow": "2.21.0", "keras": "3.15.0", "python": "3.11"}
WARMUP = 5
stop = threading.Event()


def watch_stdin() -> None:
    """A stop line or the end of stdin (the GUI is gone) both stop the command."""
    for line in sys.stdin:
        if protocol.parse_line(line) == protocol.STOP_COMMAND or '"stop"' in line:
            break
    stop.set()


def bad_workload(writer: protocol.EventWriter, spec: str) -> int:
    writer.emit(protocol.ERROR, kind=protocol.BAD_INPUT,
                message=f"{spec}: build_model() is missing",
                fix="define build_model() returning a compiled keras.Model", traceback="")
    writer.emit(protocol.DONE, status=protocol.RunStatus.FAILED, exit_code=2)
    return 2


def env(writer: protocol.EventWriter, args, gpus: int) -> int:
    writer.emit(protocol.RESULT, command="env", document={
        "devices": [{"name": "/CPU:0", "type": "CPU"}] + [{"name": f"Fake GPU {i}", "type": "GPU",
                                                           "compute_capability": "9.0"} for i in range(gpus)],
        "tensorflow": "2.21.0", "keras": "3.15.0",
        "recommended_policy": "float32",
        "reason": "CPU without native bfloat16: 16-bit policies are emulated and slower"})
    writer.emit(protocol.DONE, status=protocol.RunStatus.COMPLETED, exit_code=0)
    return 0


SIXTEEN_BIT_HEADS = ("builtin:fp16-softmax-head", "builtin:custom-head", "builtin:head-in-call")


def audit(writer: protocol.EventWriter, args) -> int:
    if args.workload == "builtin:broken":
        return bad_workload(writer, args.workload)
    found = []
    if args.workload in SIXTEEN_BIT_HEADS and args.policy != "float32":
        found.append(Finding("HEAD_NOT_FLOAT32", "the output layer 'head' computes its softmax in float16",
                             'keras.layers.Dense(10, activation="softmax", dtype="float32")', "layer head"))
    if args.workload in ("builtin:ragged-batches", "builtin:short-steps") and args.jit:
        found.append(Finding("PARTIAL_LAST_BATCH", "the last training batch has 40 of 64 samples",
                             "train_ds = train_ds.batch(BATCH, drop_remainder=True)", "train_ds"))
    if args.workload == ROTATION and args.jit:  # the audit compiles the model with jit_compile=True, as the real one
        found.append(Finding("XLA_NOT_ACTIVE", "jit_compile=True was requested but the model runs without XLA "
                             f"(model.jit_compile is False after compiling): {ROTATION_CAUSE}",
                             "ds.map(augment)", "model.compile(jit_compile=True)",
                             data={"causes": [ROTATION_CAUSE], "blockers": ["supports_jit"],
                                   "evidence": "model.jit_compile is False"}))
    for f in found:
        writer.emit(protocol.FINDING, finding=f.to_dict())
    document = {"findings": [f.to_dict() for f in found]}
    if args.workload.endswith(".py"):  # a training script: its own 3 epochs of 32 steps, as the backend reports it
        document["own_length"] = {"epochs": 3, "steps_per_epoch": 32, "steps": 96}
        calls = fit_calls_in_source(args.workload)  # and the fit() call it measured, as the backend describes it
        call = args.fit_call or 1
        if calls:
            document["workload"] = {"spec": args.workload, "name": Path(args.workload).stem, "path": args.workload,
                                    "fit": {"call": call, "line": calls[min(call, len(calls)) - 1]["line"],
                                            "model": "Model", "model_name": "model", "calls_in_source": calls}}
    writer.emit(protocol.RESULT, command="audit", document=document)
    writer.emit(protocol.DONE, status=protocol.RunStatus.COMPLETED, exit_code=0)
    return 0


def probe(writer: protocol.EventWriter, args) -> int:
    if args.workload == "builtin:broken":
        return bad_workload(writer, args.workload)
    slow = args.workload == "builtin:slow-input"
    doc = {"verdict": "input_bound" if slow else "compute_bound", "input_fraction": 0.8 if slow else 0.1,
           "data_steps_per_s": 40.0 if slow else 900.0, "compute_steps_per_s": 200.0,
           "train_steps_per_s": 38.0 if slow else 180.0, "findings": []}
    if slow:
        doc["findings"] = [Finding("INPUT_BOUND", "the device waits for data 80% of the time",
                                   "ds = ds.map(f, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)",
                                   "train_ds").to_dict()]
    writer.emit(protocol.RESULT, command="probe-input", document=doc)
    writer.emit(protocol.DONE, status=protocol.RunStatus.COMPLETED, exit_code=0)
    return 0


def xla_refused(settings) -> bool:
    """`builtin:no-jit` trains without XLA although jit_compile=True was asked for (XLA_NOT_ACTIVE)."""
    return settings.jit_compile and settings.workload in ("builtin:no-jit", ROTATION)


ROTATION = "builtin:rotation"
ROTATION_CAUSE = "layer 'random_rotation' (RandomRotation) has supports_jit=False"


def step_time(settings, rng: random.Random) -> float:
    """A deterministic step time per setting, so every lever's verdict is known in advance."""
    ms = {"float32": 10.0, "mixed_bfloat16": 8.0, "mixed_float16": 7.0}[settings.policy]
    ms *= 0.2 if settings.workload == "builtin:short-steps" else 1.0
    ms *= 0.8 if settings.jit_compile and not xla_refused(settings) else 1.0
    ms *= 0.85 if settings.xla_autoclustering else 1.0
    ms *= 0.5 + 0.5 / settings.steps_per_execution  # the host's per-call half of a step, amortized over N
    replicas = (settings.devices or 1) if settings.strategy == "mirrored" else 1
    batch = settings.batch_size // replicas  # each replica computes its share of the global batch
    ms *= batch / 64 * 0.9 if batch > 64 else 1.0
    ms *= 1.6 if replicas > 1 else 1.0  # the all-reduce between replicas: efficiency about 0.6
    return ms * (1 + rng.gauss(0, 0.02))


def fake_profile(settings, window: tuple[int, int]) -> prof.Profile:
    """What the real backend's profile of a transformer-like model looks like: 16-bit halves the matmuls and adds
    casts, XLA fuses the elementwise ops (each time in µs over the window's steps)."""
    steps = window[1] - window[0]
    heavy16 = settings.sixteen_bit and settings.workload != "builtin:float32-heavy"
    matmul = 4000.0 * (0.55 if heavy16 else 1.0)
    elementwise = 2000.0 * (0.5 if settings.jit_compile else 1.0)
    rows = [("_MklMatMul", "StatefulPartitionedCall/functional_1/dense_1/Tensordot/MatMul", matmul * steps, steps,
             heavy16),
            ("_MklEinsum", "StatefulPartitionedCall/functional_1/multi_head_attention_1/einsum/Einsum",
             2500.0 * (0.7 if heavy16 else 1.0) * steps, steps, heavy16),
            ("Mul", "StatefulPartitionedCall/functional_1/layer_normalization_1/mul", 900.0 * steps, steps, None),
            ("AddV2", "StatefulPartitionedCall/functional_1/add", elementwise * steps, steps, None),
            ("Dataset", "Iterator::Root::Prefetch", 200.0 * steps, steps, None)]
    if settings.sixteen_bit:
        rows.append(("Cast", "StatefulPartitionedCall/functional_1/dense_1/Cast", 700.0 * steps, steps, None))
    doc = prof.build(rows, steps, prof.SOURCE_OP_STATS, device="CPU_ONLY", window=list(window),
                     wall_ms_per_step=step_time(settings, random.Random(0)), coverage=1.0,
                     sixteen_bit=prof.sixteen_bit_from_ops(rows, prof.SOURCE_OP_STATS, "fake backend"),
                     step_breakdown=prof.not_available("the CPU marks no device steps"),
                     compile=prof.not_available("the profiler window starts after warm-up"),
                     tools={"framework_op_stats": "ok", "overview_page": "ok"})
    doc.read_s = 0.01
    return doc


def run(writer: protocol.EventWriter, args, scenario: str, delay: float) -> int:
    settings = settings_from_args(args).resolved(UNSAID)  # a plain workload as written, as the backend resolves it
    settings = settings.with_(batch_size=settings.batch_size or 64)  # the workload's default, as the backend does
    if args.workload == "builtin:broken":
        return bad_workload(writer, args.workload)
    if args.workload == "builtin:custom-head" and settings.fix_head:  # fails while building, before the run folder
        writer.emit(protocol.ERROR, kind=protocol.INTERNAL, message="TypeError: MyHead.__init__() missing 1 "
                    "required positional argument: 'units'", fix="see the traceback in backend.log",
                    log_only=True,
                    traceback="Traceback (most recent call last):\n  File \"trainer_backend/fixes.py\", line 44, "
                    "in float32_head\n    clone = layer.__class__.from_config(config)\nTypeError: MyHead.__init__()")
        writer.emit(protocol.DONE, status=protocol.RunStatus.FAILED, exit_code=1)
        return 1
    run_dir = runfiles.prepare_run_dir(args.out)
    writer.run = run_dir.name
    runfiles.write_yaml(run_dir / runfiles.RUN_YAML, {**settings.to_dict(), "versions": VERSIONS, "device": "CPU"})
    events = open(run_dir / runfiles.EVENTS, "w", encoding="utf-8")
    writer.attach(events)
    rng = random.Random(settings.seed)
    sixteen = settings.policy == "mixed_float16"
    total = settings.steps
    writer.emit(protocol.PHASE, phase=protocol.BUILDING, step=None, detail="building the model")
    writer.emit(protocol.PHASE, phase=protocol.WARMUP, step=1, detail="tracing and compiling")
    samples, steady, validation, loss = [], [], [], 2.0
    # a speed-only replicate is sized for seconds of steady state: thousands of fake steps, printed in big chunks
    step, chunk = 0, 200 if scenario == "flood" else 500 if settings.speed_only else 10
    val_every = settings.effective_val_every()
    window = settings.effective_profile(WARMUP)
    status, error, findings = protocol.RunStatus.COMPLETED, None, []
    if args.workload == "builtin:head-in-call" and settings.fix_head:  # the backend's words (commands/run.py)
        skipped = Finding("FIX_NOT_APPLIED", "fix not applied: --fix-head: the model still returns float16 outputs "
                          "with its last layer in float32: they are computed in the model's own call()",
                          'return tf.cast(logits, "float32") at the end of call()', "--fix-head",
                          data={"fix": "--fix-head", "reason": "the model still returns float16 outputs with its "
                                "last layer in float32: they are computed in the model's own call()"})
        writer.emit(protocol.FINDING, finding=skipped.to_dict())
        findings.append(skipped.to_dict())
    while step < total:
        if stop.is_set():
            status = protocol.RunStatus.CANCELLED
            break
        n = min(chunk, total - step)
        cols = {"step": [], "step_ms": [], "loss": []}
        if sixteen:
            cols["loss_scale"] = []
        for _ in range(n):
            step += 1
            ms = step_time(settings, rng) * (30 if step <= WARMUP else 1)
            loss *= 0.99
            cols["step"].append(step)
            cols["step_ms"].append(ms)
            cols["loss"].append(loss)
            if sixteen:
                cols["loss_scale"].append(32768.0)
            samples.append(ms)
            if step > WARMUP and not (window and window[0] <= step < window[1]):
                steady.append(ms)
        writer.emit(protocol.STEPS, **cols)
        if step - n < WARMUP + 1 <= step:
            writer.emit(protocol.PHASE, phase=protocol.TRAINING, step=WARMUP + 1, detail="steady state")
        if window and step - n < window[0] <= step:
            writer.emit(protocol.PHASE, phase=protocol.PROFILING, step=window[0], detail="profiler capturing")
        if window and step - n < window[1] <= step:
            writer.emit(protocol.PHASE, phase=protocol.TRAINING, step=window[1], detail="profile captured",
                        excluded=[window[0], window[1] - 1])
        if scenario == "fail" and step >= total // 2:
            error = {"kind": protocol.TRAINING_ERROR, "message": "training failed: shapes (64, 10) and (64, 4) "
                     "are incompatible", "fix": "make the last layer's width match the number of classes",
                     "traceback": "Traceback (most recent call last):\n  File \"fake\", line 1\nValueError: shapes"}
            writer.emit(protocol.ERROR, **error)
            status = protocol.RunStatus.FAILED
            break
        if scenario == "crash" and step >= total // 2:
            events.flush()
            os._exit(9)
        if step % val_every < n or step == total:
            acc = 0.9 - 0.6 * math.exp(-step * settings.batch_size / 64 / 100)  # learns per sample seen, as a model does
            metrics = {"val_loss": loss * 1.1, "val_accuracy": acc}
            validation.append({"step": step, "metrics": metrics})
            writer.emit(protocol.VALIDATION, step=step, metrics=metrics)
        writer.emit(protocol.PROGRESS, step=step, total=total, eta_s=(total - step) * 0.01)
        if delay:
            stop.wait(delay)
    if xla_refused(settings):
        refused = Finding("XLA_NOT_ACTIVE", "jit_compile=True was requested but the model runs without XLA",
                          "use XLA auto-clustering instead", "model")
        writer.emit(protocol.FINDING, finding=refused.to_dict())
        findings.append(refused.to_dict())
    if window and step >= window[1]:
        document = fake_profile(settings, window)
        (run_dir / prof.FILE).write_text(json.dumps(document.to_dict()))  # (no fsync: a test's run stays fast)
        for f in run_findings(document, settings):
            writer.emit(protocol.FINDING, finding=f.to_dict())
            findings.append(f.to_dict())
    peak = int(100e6 * (0.6 if settings.sixteen_bit else 1.0) * (settings.batch_size or 64) / 64)
    writer.emit(protocol.MEMORY, peak_bytes=peak, current_bytes=peak // 2, kind="host")
    median, ci = median_ci(steady[-2000:])  # the bootstrap of a flood's every step would dominate the test
    summary = {"status": status, "settings": settings.to_dict(), "step_ms": {"median": median, "ci95": list(ci),
               "n": len(steady)}, "step_ms_samples": steady[-2000:], "steps_per_s": 1000.0 / median if steady else None,
               "warmup_s": sum(samples[:WARMUP]) / 1000, "warmup_steps": WARMUP, "steps_completed": step,
               # fit()'s time (the simulated steps) and the whole process's (a simulated start-up before it: the
               # clock's would make two studies of the same runs size their paired replicates differently)
               "wall_s": sum(samples) / 1000, "process_s": STARTUP_S + sum(samples) / 1000,
               "first_steady_step": WARMUP + 1 if steady else None,
               "throughput": {"samples_per_s": 1000.0 / median * settings.batch_size if steady else None,
                              "ci95": None, "steps": len(steady), "seconds": sum(steady) / 1000,
                              "windows": math.ceil(len(steady) / 10)},
               "peak_memory_bytes": peak, "memory_kind": "host", "validation": validation,
               "metrics": {"loss": loss, **(validation[-1]["metrics"] if validation else {})},
               "findings": findings, "versions": VERSIONS, "device": "CPU", "learning_rate": 0.003,
               "workload": {"spec": settings.workload, "name": settings.workload.split(":")[-1], "path": ""},
               "loss_scale": {"final": 32768.0, "min": 32768.0, "skipped_steps": 0} if sixteen else None,
               "xla_active": (settings.jit_compile and not xla_refused(settings)) or settings.xla_autoclustering,
               "error": error}
    if status == protocol.RunStatus.COMPLETED:  # the per-example file the accuracy gate pairs
        small = args.workload == "builtin:small-val"  # 400 validation examples: its accuracy cannot decide
        summary["paired_validation"] = write_paired(run_dir, validation, settings.batch_size,
                                                    **({"examples": 400, "noise": 0.05} if small else {}))
    runfiles.write_checkpoint_settings(run_dir, settings, 0.003, step, {"versions": VERSIONS, "device": "CPU"})
    runfiles.write_json_atomic(run_dir / runfiles.SUMMARY, summary)
    writer.emit(protocol.RESULT, command="run", document=summary)
    code = 0 if status in (protocol.RunStatus.COMPLETED, protocol.RunStatus.CANCELLED) else 1
    writer.emit(protocol.DONE, status=status, exit_code=code)
    return code


class _RunOfPair(protocol.EventWriter):
    """One run of a run-pair process: its events carry its run's name; the process says `done` once, at the end."""

    def emit(self, type_, **payload):
        return {} if type_ == protocol.DONE else super().emit(type_, **payload)


def run_pair(writer: protocol.EventWriter, args, scenario: str, delay: float) -> int:
    """Both arms of a paired replicate, one after the other (the real backend interleaves them in blocks)."""
    parser = build_backend_parser("fake_backend")
    codes, documents = [], {}
    for arm in args.arm:
        arm_args = parse_args(parser, ["run", *json.loads(arm)])
        codes.append(run(_RunOfPair(sinks=[sys.stdout]), arm_args, scenario, delay))
        summary_path = Path(arm_args.out) / runfiles.SUMMARY
        documents[Path(arm_args.out).name] = json.loads(summary_path.read_text()) if summary_path.exists() else None
    statuses = [d["status"] for d in documents.values() if d] or [protocol.RunStatus.FAILED]
    status = next((st for st in statuses if st != protocol.RunStatus.COMPLETED), protocol.RunStatus.COMPLETED)
    writer.emit(protocol.RESULT, command="run-pair", document={"runs": documents})
    writer.emit(protocol.DONE, status=status, exit_code=max(codes))
    return max(codes)


def main() -> int:
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--scenario", default="ok")
    pre.add_argument("--delay", type=float, default=0.0)
    pre.add_argument("--gpus", type=int, default=0)  # GPUs the env report lists
    opts, rest = pre.parse_known_args()
    if opts.scenario == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        stop.wait = lambda timeout=None: time.sleep(timeout or 0) or False  # deaf to stop and end of stdin
        stop.is_set = lambda: False
    args = parse_args(build_backend_parser("fake_backend"), rest)  # a script's options after `--`, as the backend
    writer = protocol.EventWriter(sinks=[sys.stdout])
    writer.emit(protocol.HELLO, command=args.command, versions=VERSIONS, devices=["CPU"], pid=os.getpid())
    threading.Thread(target=watch_stdin, daemon=True).start()
    if args.command == "env":
        return env(writer, args, opts.gpus)
    if args.command == "audit":
        return audit(writer, args)
    if args.command == "probe-input":
        return probe(writer, args)
    if args.command == "run-pair":
        return run_pair(writer, args, opts.scenario, opts.delay)
    return run(writer, args, opts.scenario, opts.delay)


if __name__ == "__main__":
    sys.exit(main())
