"""MultiWorkerMirroredStrategy: a local cluster of worker processes, or one member of a real cluster.

`--strategy multiworker --workers N` without a cluster description makes this
process the chief (worker 0) of N local workers, the documented way to try the
strategy on one machine: each worker is `python -m trainer_backend run` with
the same settings, its own `TF_CONFIG` (free localhost ports) and a private
output folder; only the chief speaks the event protocol and writes the run
directory. Every worker's stderr ends up in the run directory as
`worker-K.log`. A worker that dies makes the chief end the run as failed with
the worker's last log line; the chief stops every worker when it ends, and a
worker whose chief disappears (even killed) exits by itself. The backend
process the parent started supervises that chief (`supervise`): when a
worker died from a signal or a collective error, the whole run is retried
once as the same replicate, and a second failure fails it with both reasons.

Why workers died on a loaded machine (`benchmarks/multiworker_holds.py`): the
instrumentation read Keras' loss tracker once per time-based window, and under
this strategy that read is a cross-worker all-reduce, issued by each worker at
its own moment — the collectives got out of order and TensorFlow aborted the
step ("Shape mismatch in the collective instance"). `local_value` reads this
worker's replicas only. TensorFlow's 10 s heartbeat and shutdown-barrier
timeouts are raised for local clusters (`patient_coordination`).

On a GPU host each local worker gets its own slice of the GPUs
(`gpu_slices`: CUDA_VISIBLE_DEVICES per worker, the chief's set in its own
environment before TensorFlow initialises its devices) and grows its memory
as it needs it (TF_FORCE_GPU_ALLOW_GROWTH): by default every process sees
every GPU and TensorFlow maps nearly all of each GPU's memory, so the second
worker finds none left. With fewer GPUs than workers, workers share a GPU
round-robin and memory growth is what lets them.

With `--tf-config FILE` or `TF_CONFIG` in the environment this process is one
member of a cluster someone else started (several hosts); nothing is spawned.

TensorFlow requires the strategy before anything initialises the devices, so
`start()` runs before the backend's first device query.

Keras 3's `fit` fails under this strategy (keras-team/keras#20585): while
building, it all-reduces a distributed input batch the collective ops cannot
convert, and it reduces scalar logs across workers with an axis they do not
have. `fit_scope()` avoids both: the model forgets the strategy it was built
under (no symbolic build from a distributed batch) and fit runs inside the
strategy's scope instead, and logs are reduced on each worker's own replicas —
Keras metrics are summed across workers already, so every worker reports the
same values. Checked on TF 2.21 / Keras 3.15: two workers end with identical
weights.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict, cast

from tfturbo import protocol, runfiles
from tfturbo.cli_args import run_argv
from tfturbo.errors import UserError
from tfturbo.settings import RunSettings

PARENT_ENV = "TFTURBO_CLUSTER_PARENT"  # set for local workers: the chief's pid, whose end ends them
WORKER_LOG = "worker-{}.log"
FAILURE_GRACE_S = 10.0  # the chief usually fails by itself (a collective operation reports the lost peer)
STOP_GRACE_S = 5.0
UPSTREAM = "keras-team/keras#20585"


def worker_log_name(index: int) -> str:
    return WORKER_LOG.format(index)


# ------------------------------------------------------------------------------ TF_CONFIG

class Task(TypedDict, total=False):
    type: str  # "worker" | "chief" | ...
    index: int


class TfConfig(TypedDict, total=False):
    """TF_CONFIG: the cluster's members by job, and this process's task in it."""

    cluster: dict[str, list[str]]  # {"worker": ["host1:port", ...], "chief": [...]}
    task: Task


class Retry(TypedDict):
    """A multi-worker run retried once (summary.json's `retries`)."""

    attempt: int
    reason: str
    dir: str  # where the failed attempt's run folder was kept (inside the run's)


def read_tf_config(path: str) -> TfConfig:
    """A cluster description from a TF_CONFIG JSON file, checked enough to fail with one line."""
    try:
        config = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise UserError(f"cannot read --tf-config {path} ({e.strerror or e})", "pass a readable JSON file") from e
    except ValueError as e:
        raise UserError(f"--tf-config {path} is not JSON ({e})",
                        'write {"cluster": {"worker": ["host1:port", ...]}, "task": {"type": "worker", "index": 0}}'
                        ) from e
    check_tf_config(config, f"--tf-config {path}")
    return cast(TfConfig, config)  # checked: a cluster and a task with a type


def check_tf_config(config: Any, where: str) -> None:
    task = config.get("task") if isinstance(config, dict) else None
    cluster = config.get("cluster") if isinstance(config, dict) else None
    if not isinstance(cluster, dict) or not cluster or not isinstance(task, dict) or "type" not in task:
        raise UserError(f"{where} has no cluster and task",
                        'write {"cluster": {"worker": ["host1:port", ...]}, "task": {"type": "worker", "index": 0}}')


def is_chief(config: TfConfig) -> bool:
    """The member that reports: the `chief` task, else worker 0."""
    task = config.get("task") or {}
    if "chief" in (config.get("cluster") or {}):
        return task.get("type") == "chief"
    return task.get("type") == "worker" and int(task.get("index", 0)) == 0


def local_tf_config(ports: list[int], index: int) -> TfConfig:
    return {"cluster": {"worker": [f"localhost:{p}" for p in ports]}, "task": {"type": "worker", "index": index}}


def free_ports(n: int) -> list[int]:
    """n distinct free localhost ports (held open together while chosen, so they differ)."""
    sockets = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


# ------------------------------------------------------------------------------ the local cluster

def gpu_slices(gpus: list[str], workers: int) -> list[str]:
    """CUDA_VISIBLE_DEVICES of each local worker over the GPUs `gpus` (ids as CUDA_VISIBLE_DEVICES names them):
    contiguous disjoint slices when there are at least as many GPUs as workers, else one GPU each,
    round-robin; [] on a host without GPUs."""
    if not gpus:
        return []
    if len(gpus) >= workers:
        return [",".join(gpus[k * len(gpus) // workers:(k + 1) * len(gpus) // workers]) for k in range(workers)]
    return [gpus[k % len(gpus)] for k in range(workers)]


def gpu_environment(slices: list[str], index: int) -> dict[str, str]:
    """The environment worker `index` needs on a GPU host: its slice, and memory grown as needed (several
    TensorFlow processes on one machine); {} on a CPU host."""
    if not slices:
        return {}
    return {"CUDA_VISIBLE_DEVICES": slices[index], "TF_FORCE_GPU_ALLOW_GROWTH": "true"}


def local_gpus() -> list[str]:
    """The GPU ids this host's local workers share, as CUDA_VISIBLE_DEVICES names them (its own list when set),
    counted without initialising TensorFlow's devices (the strategy must come first)."""
    from .hardware import gpus_before_devices

    n = gpus_before_devices()
    visible = [v.strip() for v in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if v.strip()]
    return (visible or [str(i) for i in range(n)])[:n]


class WorkerFailed(RuntimeError):
    """A local worker ended while the chief trained; the message is that worker's end and last log line."""

    def __init__(self, ended: DeadWorker):
        super().__init__(ended.words)
        self.ended = ended

    def said(self) -> protocol.ErrorDoc:
        """What its error event says besides its message (`retry_reason` reads it, never the message's words)."""
        return self.ended.error_fields()


@dataclass(frozen=True)
class DeadWorker:
    """A local worker that ended: in words ("worker 2 of 3 ended (signal 11): its last log line"), and whether a
    signal ended it (TensorFlow's native code under load: a retry can help)."""

    words: str
    by_signal: bool

    def error_fields(self) -> protocol.ErrorDoc:
        return {"worker_ended": self.words, "retry": self.by_signal}


class LocalCluster:
    """Workers 1..N-1 of a local cluster whose worker 0 is this process."""

    def __init__(self, settings: RunSettings, writer: protocol.EventWriter) -> None:
        self.settings = settings
        self.writer = writer
        self.folder = Path(tempfile.mkdtemp(prefix="tfturbo-workers-"))
        self.procs: list[subprocess.Popen] = []
        self.run_dir: Path | None = None
        self._closing = threading.Event()
        self._lock = threading.Lock()

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.procs]

    def log(self, index: int) -> Path:
        return self.folder / worker_log_name(index)

    def start(self) -> None:
        n = self.settings.workers
        ports = free_ports(n)
        slices = gpu_slices(local_gpus(), n)
        if slices:
            print(f"trainer_backend: local workers' GPUs (CUDA_VISIBLE_DEVICES): {', '.join(slices)}", file=sys.stderr)
        for index in range(1, n):
            env = {**os.environ, "TF_CONFIG": json.dumps(local_tf_config(ports, index)),
                   PARENT_ENV: str(os.getpid()), "PYTHONUNBUFFERED": "1", **gpu_environment(slices, index)}
            out = self.folder / f"worker-{index}"
            argv = run_argv(self.settings.with_(tf_config=None), str(out))
            with open(self.log(index), "ab") as log:
                self.procs.append(subprocess.Popen([sys.executable, "-m", "trainer_backend", "run", *argv],
                                                   stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                                   stderr=log, env=env))
        os.environ["TF_CONFIG"] = json.dumps(local_tf_config(ports, 0))
        os.environ.update(gpu_environment(slices, 0))  # the chief: before TensorFlow initialises its devices
        threading.Thread(target=self._watch, name="worker-watch", daemon=True).start()

    def attach(self, run_dir: Path) -> None:
        """The run directory exists: worker logs and a failure's summary go there."""
        self.run_dir = run_dir

    def explain(self, exc: BaseException) -> BaseException:
        """The chief's training error, or — when a worker died — that worker's end, which caused it."""
        time.sleep(0.5)  # the lost peer is often reported before its exit status is collected
        dead = self.dead_worker()
        if dead is None:
            return exc
        return WorkerFailed(dead)

    def _watch(self) -> None:
        while not self._closing.is_set():
            for index, proc in enumerate(self.procs, start=1):
                code = proc.poll()
                if code not in (None, 0):
                    if not self._closing.wait(FAILURE_GRACE_S):
                        self._fail(index, code)
                    return
            self._closing.wait(0.2)

    def dead_worker(self) -> DeadWorker | None:
        """'worker K of N ended (signal 9): its last log line' for the first worker that failed, or None."""
        for index, proc in enumerate(self.procs, start=1):
            code = proc.poll()
            if code not in (None, 0):
                how = f"signal {-code}" if code < 0 else f"exit {code}"
                line = last_line(self.log(index)) or "(its log is empty)"
                return DeadWorker(f"worker {index} of {self.settings.workers} ended ({how}): {line}", code < 0)
        return None

    def _fail(self, index: int, code: int) -> None:
        """A worker died while the chief still runs (it waits for that worker forever): end the run as failed."""
        with self._lock:
            if self._closing.is_set():
                return
            dead = self.dead_worker() or DeadWorker(f"worker {index} ended", code < 0)
            fix = f"see {worker_log_name(index)} in the run directory"
            print(f"trainer_backend: {dead.words}", file=sys.stderr)
            error = {"kind": protocol.TRAINING_ERROR, "message": dead.words, "fix": fix, **dead.error_fields()}
            self.writer.emit(protocol.ERROR, **error)
            if self.run_dir is not None and not (self.run_dir / runfiles.SUMMARY).exists():
                runfiles.write_json_atomic(self.run_dir / runfiles.SUMMARY, {
                    "status": protocol.RunStatus.FAILED, "settings": self.settings.to_dict(),
                    "replicas": None, "error": error})
            self.writer.emit(protocol.DONE, status=protocol.RunStatus.FAILED, exit_code=1)
        self.close()
        sys.stderr.flush()
        os._exit(1)  # the main thread is blocked in a collective operation that will never complete

    def close(self) -> None:
        """Stop every worker (they finish with the chief, or are waiting for it), keep their logs."""
        self._closing.set()
        for proc in self.procs:
            if proc.poll() is None:
                if proc.stdin is not None:
                    with contextlib.suppress(OSError):
                        proc.stdin.close()
                proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S
        for proc in self.procs:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self.run_dir is not None and self.run_dir.is_dir():
            for index in range(1, len(self.procs) + 1):
                if self.log(index).exists():
                    shutil.copyfile(self.log(index), self.run_dir / worker_log_name(index))
        shutil.rmtree(self.folder, ignore_errors=True)


def last_line(path: Path) -> str:
    """The last non-empty line of a log (its end only: logs can be long)."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 8192))
            lines = [ln.strip() for ln in f.read().decode("utf-8", errors="replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    return lines[-1][:300] if lines else ""


def exit_with_parent() -> None:
    """A local worker: exit when the chief that started it is gone (killed, crashed), so none is left behind."""
    parent = os.environ.get(PARENT_ENV)
    if not parent:
        return

    def watch() -> None:
        while os.getppid() == int(parent):
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


# ------------------------------------------------------------------------------ the strategy and fit

def start(settings: RunSettings, writer: protocol.EventWriter) -> tuple[Any, LocalCluster | None]:
    """(the strategy, the local cluster this process is the chief of, or None when it joins one)."""
    cluster = None
    if settings.tf_config:
        os.environ["TF_CONFIG"] = json.dumps(read_tf_config(settings.tf_config))
    elif os.environ.get("TF_CONFIG"):
        try:
            check_tf_config(json.loads(os.environ["TF_CONFIG"]), "TF_CONFIG")
        except ValueError as e:
            raise UserError(f"TF_CONFIG is not JSON ({e})", "unset TF_CONFIG or set it to the cluster's JSON") from e
        exit_with_parent()
    else:
        cluster = LocalCluster(settings, writer)
        cluster.start()
    import tensorflow as tf

    if cluster is not None or os.environ.get(PARENT_ENV):
        patient_coordination(settings.workers)
    try:
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
    except BaseException:
        if cluster is not None:
            cluster.close()
        raise
    return strategy, cluster


def local_value(variable) -> float:
    """A variable's value on this worker alone, with no collective operation.

    Under MultiWorkerMirroredStrategy a Keras metric's state (the loss
    tracker's total and count) is a SyncOnRead variable: its `.numpy()` is an
    all-reduce across the workers. The instrumentation reads it once per
    window, at moments each process times by its own clock, so the workers
    issued those all-reduces at different points of the step sequence and
    TensorFlow aborted the run ("Shape mismatch in the collective instance 179
    ... expected shape [] but another member ... expected shape [21252]",
    seen on a loaded machine in `benchmarks/multiworker_holds.py`). The local
    replicas' own values are read instead (summed for a SUM variable).
    """
    import tensorflow as tf

    raw = getattr(variable, "value", variable)  # a keras.Variable holds the tf.Variable
    if isinstance(raw, tf.distribute.DistributedValues):
        parts = [float(v.numpy()) for v in raw.values]
        if getattr(raw, "aggregation", None) == tf.VariableAggregation.SUM:
            return sum(parts)
        return parts[0]
    return float(raw.numpy())


# TensorFlow's coordination service declares a peer dead after 10 s without a heartbeat and gives the shutdown
# barrier 10 s: on a loaded machine a worker can be descheduled that long, and the chief's work after training
# (checkpoint, FLOP count) outlasts a worker that finished first. Local clusters wait longer for both.
HEARTBEAT_TIMEOUT_MS = 120_000
SHUTDOWN_BARRIER_TIMEOUT_MS = 600_000


def patient_coordination(workers: int) -> None:
    """Configure the coordination service of a local cluster as the strategy would, with longer timeouts."""
    try:
        from tensorflow.compiler.xla.tsl.protobuf import coordination_config_pb2
        from tensorflow.python.eager import context

        if context.context().coordination_service is None:
            context.context().configure_coordination_service(
                service_type="standalone", service_leader="/job:worker/replica:0/task:0",
                coordinated_jobs=[coordination_config_pb2.CoordinatedJob(name="worker", num_tasks=workers)],
                heartbeat_timeout_in_ms=HEARTBEAT_TIMEOUT_MS,
                shutdown_barrier_timeout_in_ms=SHUTDOWN_BARRIER_TIMEOUT_MS)
    except Exception as exc:  # noqa: BLE001 - TensorFlow's defaults then apply
        print(f"trainer_backend: coordination timeouts left at TensorFlow's defaults ({type(exc).__name__}: {exc})",
              file=sys.stderr)


@contextlib.contextmanager
def fit_scope(model, strategy):
    """Keras 3's fit under MultiWorkerMirroredStrategy, around keras-team/keras#20585 (see the module docstring)."""
    try:
        from keras.src.backend.tensorflow import trainer as keras_trainer
    except ImportError:
        keras_trainer = None
    if keras_trainer is None or not hasattr(keras_trainer, "_collective_all_reduce_multi_worker") \
            or not hasattr(model, "_distribute_strategy"):
        import keras

        raise UserError(f"Keras {keras.__version__}'s fit cannot train under MultiWorkerMirroredStrategy "
                        f"({UPSTREAM}) and tfturbo's workaround does not fit this Keras version",
                        "use --strategy mirrored on one host, or Keras 3.15")
    keras_trainer._collective_all_reduce_multi_worker = lambda _strategy: False
    model._distribute_strategy = None
    with strategy.scope():
        yield


# ------------------------------------------------------------------------------ one retry of a local cluster

SUPERVISED_ENV = "TFTURBO_CLUSTER_SUPERVISED"  # set for the chief a supervisor started: it runs the cluster itself
ATTEMPT_DIR = "attempt-1"  # the first attempt's run directory, kept inside the run's when it was retried
# A local cluster's run is retried once when a worker died from a signal (TensorFlow's native code under load:
# SIGSEGV, glibc's "double free or corruption") or a collective operation lost its peer.
# A worker's signal is told by its error (`DeadWorker.by_signal`); a lost peer by TensorFlow's own words.
RETRYABLE = re.compile(r"Collective|collective|Connection reset by peer|"
                       r"Socket closed|UNAVAILABLE|DEADLINE_EXCEEDED|failed to connect|heartbeat|"
                       r"double free or corruption")
HELD = (protocol.ERROR, protocol.RESULT, protocol.DONE)


def supervises(argv: list[str]) -> bool:
    """`run --strategy multiworker` of a local cluster (no TF_CONFIG, no --tf-config), not already supervised."""
    if not argv or argv[0] != "run" or os.environ.get(SUPERVISED_ENV) or os.environ.get("TF_CONFIG"):
        return False
    try:
        from tfturbo.cli_args import build_backend_parser, parse_args, settings_from_args

        with open(os.devnull, "w") as null, contextlib.redirect_stderr(null):
            args = parse_args(build_backend_parser("trainer_backend"), argv)
        settings = settings_from_args(args)
    except (SystemExit, Exception):  # noqa: BLE001 - the backend itself reports a bad command line
        return False
    return settings.strategy == "multiworker" and not settings.tf_config and settings.workers > 1


def supervise(argv: list[str]) -> int:
    """Run the local cluster's chief as a child, relaying its events; retry the whole run once, as the same
    replicate, when a worker died from a signal or a collective error. The first attempt is kept in
    `RUN_DIR/attempt-1/` and recorded in the summary's `retries`; a second failure fails the run with both
    reasons. The supervisor imports no TensorFlow: every attempt is a fresh cluster."""
    out = Path(argv[argv.index("--out") + 1]) if "--out" in argv else None
    writer = protocol.EventWriter(run=out.name if out else "", sinks=[sys.stdout])
    current: list[subprocess.Popen] = []
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the chief (same process group): it stops

    def stop_current(*_: Any) -> None:
        for p in current:
            if p.poll() is None:
                p.terminate()

    signal.signal(signal.SIGTERM, stop_current)
    retries: list[Retry] = []
    aside = out.parent / f".{out.name}.{ATTEMPT_DIR}" if out else None
    for attempt in (1, 2):
        proc = subprocess.Popen([sys.executable, "-m", "trainer_backend", *argv], stdout=subprocess.PIPE,
                                env={**os.environ, SUPERVISED_ENV: "1"})
        current[:] = [proc]
        held: list[protocol.Event] = []
        assert proc.stdout is not None  # stdout=PIPE
        for line in proc.stdout:
            event = protocol.parse_line(line)
            if event is None:
                continue
            if event["type"] in HELD:
                held.append(event)
            else:
                writer.emit(event["type"], **_payload(event))
        code = proc.wait()
        reason = retry_reason(held, code, out)
        if reason is None or attempt == 2:
            break
        retries.append(Retry(attempt=attempt, reason=reason, dir=ATTEMPT_DIR))
        print(f"trainer_backend: the multi-worker run failed ({reason}); retrying it once", file=sys.stderr)
        if out is not None and aside is not None and out.exists():
            shutil.rmtree(aside, ignore_errors=True)
            out.rename(aside)
        writer.emit(protocol.PHASE, phase=protocol.BUILDING, step=None,
                    detail=f"retrying the run once: {reason}")
    return _finish(writer, held, code, out, aside, retries, reason if retries else None)


def retry_reason(held: list[protocol.Event], code: int, out: Path | None) -> str | None:
    """Why an attempt failed, when a retry can help (a worker's signal, a collective error), else None."""
    done = next((e for e in held if e["type"] == protocol.DONE), None)
    error = next((e for e in held if e["type"] == protocol.ERROR), None)
    if done is None:
        if code < 0:
            log = last_line(out / runfiles.BACKEND_LOG) if out else ""
            return f"worker 0 of the cluster ended (signal {-code})" + (f": {log}" if log else "")
        return None
    if done.get("status") != protocol.RunStatus.FAILED or error is None or error.get("kind") == protocol.BAD_INPUT:
        return None
    said = str(error.get("worker_ended") or error.get("message") or "")  # a dead worker's end in its own words
    return said if error.get("retry") or RETRYABLE.search(said) else None


def _payload(event: protocol.Event) -> dict[str, Any]:
    return {k: v for k, v in event.items() if k not in ("v", "type", "run", "seq", "t")}


def _finish(writer: protocol.EventWriter, held: list[protocol.Event], code: int, out: Path | None,
            aside: Path | None, retries: list[Retry], first_reason: str | None) -> int:
    """The last attempt's error, result and done, with the retry recorded (summary.json and the document)."""
    if retries and out is not None and aside is not None and aside.exists():
        out.mkdir(parents=True, exist_ok=True)
        aside.rename(out / ATTEMPT_DIR)
    if not any(e["type"] == protocol.DONE for e in held):  # the chief itself died: say so, as a failed run
        reason = retry_reason(held, code, out) or f"the run's process ended with exit code {code}"
        held = [{"type": protocol.ERROR, "kind": protocol.TRAINING_ERROR, "message": reason,
                 "fix": "see backend.log in the run directory", "log_only": True},
                {"type": protocol.DONE, "status": protocol.RunStatus.FAILED, "exit_code": 1}]
        if out is not None and not (out / runfiles.SUMMARY).exists() and out.exists():
            runfiles.write_json_atomic(out / runfiles.SUMMARY, {"status": protocol.RunStatus.FAILED,
                                                                "error": _payload(held[0])})
    exit_code = 1
    for event in held:
        payload = _payload(event)
        if event["type"] == protocol.ERROR and first_reason:
            payload["message"] = f"{payload.get('message')} (retried once; the first attempt: {first_reason})"
        if event["type"] == protocol.RESULT and retries and isinstance(payload.get("document"), dict):
            payload["document"] = {**payload["document"], "retries": retries}
            if out is not None and (out / runfiles.SUMMARY).exists():
                summary = json.loads((out / runfiles.SUMMARY).read_text(encoding="utf-8"))
                runfiles.write_json_atomic(out / runfiles.SUMMARY, {**summary, "retries": retries})
        if event["type"] == protocol.DONE:
            exit_code = int(payload.get("exit_code", 1))
        writer.emit(event["type"], **payload)
    if retries and out is not None and (out / runfiles.SUMMARY).exists() and not any(
            e["type"] == protocol.RESULT for e in held):
        summary = json.loads((out / runfiles.SUMMARY).read_text(encoding="utf-8"))
        runfiles.write_json_atomic(out / runfiles.SUMMARY, {**summary, "retries": retries})
    return exit_code
