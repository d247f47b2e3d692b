"""The event protocol between the training backend and its readers (docs/ARCHITECTURE.md, "Event protocol").

One UTF-8 JSON object per line: ``{"v": 1, "type", "run", "seq", "t", ...payload}``.
The same lines go to the backend's stdout and to ``events.jsonl``. Readers
ignore unknown types and skip (and count) lines that are not valid JSON, so
a truncated file or a crashed backend never makes the reader fail.

``steps`` events are columnar to keep a run at thousands of steps per second
cheap to write and to parse::

    {"type": "steps", "step": [..], "step_ms": [..], "loss": [..|null],
     "loss_scale": [..] (only under a loss-scale optimizer), "warmup": [bool..]}
"""

from __future__ import annotations

import json
import threading
import time
from typing import IO, TYPE_CHECKING, Any, Callable, Final, Iterable, Iterator, Literal, TypedDict, cast

from .findings import FindingDoc
from .numbers import json_safe

if TYPE_CHECKING:
    from .environment import Device

PROTOCOL_VERSION = 1

# Final: each is its own literal type, so `event["type"] == STEPS` narrows an `Event` to a `StepsEvent`
HELLO: Final = "hello"
PHASE: Final = "phase"
STEPS: Final = "steps"
EPOCH: Final = "epoch"
VALIDATION: Final = "validation"
MEMORY: Final = "memory"
FINDING: Final = "finding"
PROGRESS: Final = "progress"
ERROR: Final = "error"
DONE: Final = "done"
RESULT: Final = "result"  # the command's final JSON document (audit, probe-input, env, run summary)
EVENT_TYPES = (HELLO, PHASE, STEPS, EPOCH, VALIDATION, MEMORY, FINDING, PROGRESS, ERROR, DONE, RESULT)

# phases
BUILDING, COMPILING, WARMUP, TRAINING, VALIDATING, PROFILING, MEASURING, SAVING = (
    "building", "compiling", "warmup", "training", "validating", "profiling", "measuring", "saving",
)


class RunStatus:
    """How a run ended: the `status` of its `done` event and of summary.json.

    CRASHED is never written by a backend: readers assign it to a run whose
    events end without a `done` event (the process was killed).
    """

    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    NAN_STOPPED = "nan_stopped"
    CRASHED = "crashed"


# error kinds carried by `error` events
BAD_INPUT, OUT_OF_MEMORY, TRAINING_ERROR, INTERNAL = "bad_input", "out_of_memory", "training", "internal"


class StopCommand(TypedDict):
    """The parent's one command on a child's stdin: finish the current step, write the summary, exit."""

    type: Literal["stop"]


STOP_COMMAND: StopCommand = {"type": "stop"}
# The file the parent sends the child's stderr to, given in the child's environment so its messages can name it
# ("full traceback in ~/.cache/tfturbo/logs/....log"): each command has its own (`backend_client.log_path`).
LOG_VARIABLE = "TFTURBO_LOG"


def _json_default(obj: Any) -> Any:
    # numpy scalars and arrays arrive here without importing numpy
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if hasattr(obj, "item"):
        return obj.item()
    return str(obj)


class Envelope(TypedDict, total=False):
    """What every event carries besides its payload (absent in an event a supervisor made up itself)."""

    v: int
    run: str  # the run it belongs to ("" for a command without a run)
    seq: int  # grows by one per event of a writer
    t: float  # unix time


class ErrorDoc(Envelope, total=False):
    """What went wrong, as the wire and the files carry it: an `error` event's payload, a failed run's summary
    `error`, a trial verdict's `error`. `message` and `fix` apart, so no front end prints a fix twice."""

    kind: str  # BAD_INPUT | TRAINING_ERROR | INTERNAL | ...
    message: str
    fix: str
    traceback: str
    run: str  # a run-pair process's error: the run it names ("" or absent: both)
    log_only: bool  # `fix` only points at a log ("see the traceback in …"): no fix to try (absent: False)
    worker_ended: str  # a local cluster's worker that ended, in words ("worker 2 of 3 ended (signal 11): …")
    retry: bool  # a retry of the run can help (that worker was ended by a signal)
    type: Literal["error"]  # the event's envelope, when it is the event itself


class HelloEvent(Envelope, total=False):
    type: Literal["hello"]
    command: str  # the backend command (run, run-pair, audit, probe-input, env)
    versions: dict[str, str]  # python, tensorflow, keras, ...
    devices: list[Device]
    pid: int
    workers: list[int]  # a multi-worker run's worker processes
    warm: bool  # forked from the warm-start server


class PhaseEvent(Envelope, total=False):
    type: Literal["phase"]
    phase: str  # BUILDING, COMPILING, WARMUP, TRAINING, ...
    step: int | None  # the step it starts at (None before training)
    detail: str
    excluded: list[int]  # [start, stop] of a profiler window the statistics leave out
    settled: bool  # a training phase whose step is the run's final first steady step


class StepsEvent(Envelope, total=False):
    """One flushed window of steps, columnar (module docstring)."""

    type: Literal["steps"]
    step: list[int]
    step_ms: list[float]
    loss: list[float | None]  # read once per window: None but the last
    loss_scale: list[float | None]  # under a loss-scale optimizer only
    window: list[float]  # [first step, last step, seconds] of a window timed as a whole


class EpochEvent(Envelope, total=False):
    """`epoch` (the training metrics) or `validation` (the validation metrics) at a step."""

    type: Literal["epoch", "validation"]
    step: int
    metrics: dict[str, float]


class MemoryEvent(Envelope, total=False):
    type: Literal["memory"]
    peak_bytes: int
    current_bytes: int
    kind: str  # "device" | "host"


class FindingEvent(Envelope, total=False):
    type: Literal["finding"]
    finding: FindingDoc


class ProgressEvent(Envelope, total=False):
    type: Literal["progress"]
    step: int
    total: int | None
    eta_s: float | None
    detail: str


class DoneEvent(Envelope, total=False):
    type: Literal["done"]
    status: str  # RunStatus
    exit_code: int


class ResultEvent(Envelope, total=False):
    type: Literal["result"]
    command: str
    document: dict[str, Any]  # the command's JSON document, read by its own class (RunSummary, Environment, ...)


# One event as written and read; `event["type"] == STEPS` narrows it to its type's payload. Every event has its
# `type` (`parse_line` drops a line without one); the rest is read with .get (a newer backend may omit a key).
Event = (HelloEvent | PhaseEvent | StepsEvent | EpochEvent | MemoryEvent | FindingEvent | ProgressEvent | ErrorDoc
         | DoneEvent | ResultEvent)


# how an older backend's fix began when it only pointed at a log, before its error said so (`ErrorDoc.log_only`)
_OLDER_LOG_FIX = ("see the traceback in", "see backend.log")


def error_of(value: object) -> ErrorDoc | None:
    """An `error` event or a document's `error` mapping as read from the wire or a file (None when not one).

    The one reader of an error an older tfturbo wrote: its words are all it has, so only here are they read —
    a fix that points at a log is marked `log_only`, and a message that ended with its own fix (the doubled
    "… — fix …" line of a backend before the fix travelled apart) loses that ending."""
    if not isinstance(value, dict):
        return None
    error = cast(ErrorDoc, dict(value))
    fix = str(error.get("fix") or "")
    if "log_only" not in error and " ".join(fix.split()).lower().startswith(_OLDER_LOG_FIX):
        error["log_only"] = True
    message = str(error.get("message") or "")
    if fix and message.endswith(f" — {fix}"):
        error["message"] = message[:-len(f" — {fix}")]
    return error


def encode(event: Event | StopCommand) -> str:
    """One line, no trailing newline; NaN/Infinity become null (strict JSON for any reader).

    Events are encoded as they are first; only one that holds a non-finite number is walked and
    cleaned (a `steps` window of ~1000 samples encodes 3x faster without the walk).
    """
    try:
        return json.dumps(event, separators=(",", ":"), default=_json_default, allow_nan=False)
    except ValueError:
        return json.dumps(json_safe(event), separators=(",", ":"), default=_json_default, allow_nan=False)


class EventWriter:
    """Numbers and timestamps events and writes each as one flushed line to every sink.

    Sinks may be attached later (the run directory exists only after the
    workload validated); events emitted before are replayed into a new sink so
    ``events.jsonl`` is complete. Thread-safe: the stdin listener and the
    training thread may both emit.
    """

    def __init__(self, run: str = "", sinks: Iterable[IO[str]] = (), clock: Callable[[], float] = time.time):
        self.run = run
        self._sinks: list[IO[str]] = list(sinks)
        self._lines: list[str] = []
        self._seq = 0
        self._clock = clock
        self._lock = threading.Lock()

    def emit(self, type_: str, **payload: Any) -> Event:
        with self._lock:
            self._seq += 1
            # the payload of type_'s own TypedDict, given by the caller
            event = cast(Event, {"v": PROTOCOL_VERSION, "type": type_, "run": self.run, "seq": self._seq,
                                 "t": round(self._clock(), 6), **payload})
            line = encode(event)
            self._lines.append(line)
            for sink in list(self._sinks):
                self._write(sink, line)
            return event

    def for_run(self, run: str) -> EventWriter:
        """A writer of `run`'s events into this one's sinks (a run-pair process's two runs on one stdout): its
        own history to replay into the run's files (a copy of this one's, `hello` included), the same lock."""
        with self._lock:
            child = EventWriter(run, self._sinks, self._clock)
            child._lines = list(self._lines)
            child._seq = self._seq
            child._lock = self._lock
            return child

    def attach(self, sink: IO[str], replay: bool = True) -> None:
        with self._lock:
            if replay:
                for line in self._lines:
                    self._write(sink, line, flush=False)
                sink.flush()
            self._sinks.append(sink)

    def detach(self, sink: IO[str]) -> None:
        with self._lock:
            if sink in self._sinks:
                self._sinks.remove(sink)

    def _write(self, sink: IO[str], line: str, flush: bool = True) -> None:
        try:
            sink.write(line + "\n")
            if flush:
                sink.flush()
        except (BrokenPipeError, ValueError, OSError):
            # A reader that went away must not stop training; the file sink keeps the record.
            self._sinks.remove(sink)

    def forget_history(self) -> None:
        """Stop keeping lines for replay (once every sink that needs them is attached)."""
        with self._lock:
            self._lines.clear()


def parse_line(line: str | bytes) -> Event | None:
    """One event, or None for a line that is not a JSON object with a string ``type``."""
    if isinstance(line, bytes):
        line = line.decode("utf-8", errors="replace")
    line = line.strip()
    if not line:
        return None
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
        return None
    return cast(Event, obj)


def is_stop(line: str | bytes) -> bool:
    """Whether a line the parent wrote to a child's stdin is the stop command."""
    if isinstance(line, bytes):
        line = line.decode("utf-8", errors="replace")
    try:
        command = json.loads(line)
    except (ValueError, RecursionError):
        return False
    return isinstance(command, dict) and command.get("type") == STOP_COMMAND["type"]


class LineParser:
    """Incremental parser for a byte stream of event lines (a pipe, a growing file).

    ``feed`` accepts arbitrary chunks; a line split across chunks is joined.
    It never raises on bad input: bad lines are counted in ``skipped``.
    """

    def __init__(self) -> None:
        self._buffer = b""
        self.skipped = 0
        self.parsed = 0

    def feed(self, chunk: bytes | bytearray | memoryview) -> list[Event]:
        self._buffer += chunk
        *lines, self._buffer = self._buffer.split(b"\n")
        return self._parse(lines)

    def close(self) -> list[Event]:
        """Parse what is left without a final newline (a truncated last line is skipped)."""
        rest, self._buffer = self._buffer, b""
        return self._parse([rest]) if rest.strip() else []

    def _parse(self, lines: list[bytes]) -> list[Event]:
        events: list[Event] = []
        for raw in lines:
            if not raw.strip():
                continue
            event = parse_line(raw)
            if event is None:
                self.skipped += 1
            else:
                self.parsed += 1
                events.append(event)
        return events


def iter_steps(event: StepsEvent) -> Iterator[tuple[int, float, float | None, float | None]]:
    """(step, step_ms, loss, loss_scale) tuples of a `steps` event, tolerant of ragged columns."""
    steps = event.get("step") or []
    ms = event.get("step_ms") or []
    loss = event.get("loss") or []
    scale = event.get("loss_scale") or []
    for i in range(min(len(steps), len(ms))):
        yield (
            steps[i],
            ms[i],
            loss[i] if i < len(loss) else None,
            scale[i] if i < len(scale) else None,
        )
