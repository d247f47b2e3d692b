"""What one backend command has reported so far, as arrays the plots can draw.

Events are ingested as they are parsed (possibly thousands of steps a
second); the plots read the arrays on their own timer. Arrays grow by
doubling (pyqtgraph's scrollingPlots pattern), so ingesting a step is a copy
into a preallocated slot, never a reallocation of the whole curve. No Qt here:
the same model is filled from a live process or from a stored events.jsonl.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

import numpy as np

from tfturbo.findings import FindingDoc, findings_in
from tfturbo.run_summary import RunSummary
from tfturbo import protocol
from tfturbo.compare import steady_windows
from tfturbo.numbers import finite
from tfturbo.runfiles import RunRecord


LIVE_MEDIAN_WINDOW = 50_000  # steps the live (pre-summary) median looks back over
MAX_RESERVED_STEPS = 20_000_000  # 160 MB per column at most is set aside from a run's planned length


class Column:
    """A float64 array that grows by doubling; `view()` is the filled part (no copy)."""

    def __init__(self, capacity: int = 256):
        self._data = np.empty(capacity, dtype=np.float64)
        self.size = 0

    def extend(self, values: np.ndarray) -> None:
        need = self.size + len(values)
        if need > len(self._data):
            self.reserve(max(need, 2 * len(self._data)))
        self._data[self.size:need] = values
        self.size = need

    def reserve(self, capacity: int) -> None:
        """Room for `capacity` values. Growing a long column copies it into fresh pages (18 ms for 4 MB
        here, a UI stall); reserving the planned length early copies next to nothing."""
        if capacity > len(self._data):
            grown = np.empty(capacity, dtype=np.float64)
            grown[:self.size] = self._data[:self.size]
            self._data = grown

    def view(self) -> np.ndarray:
        return self._data[:self.size]


def _items(value: Any) -> list[Any]:
    """A column of a `steps` event; anything but a list (a malformed event) reads as empty."""
    return value if isinstance(value, list) else []


def _floats(values: list[Any], n: int) -> np.ndarray:
    """The first `n` entries as float64, NaN where one is missing (None, past the end) or not a number."""
    out = np.full(n, np.nan)
    head = values[:n]
    try:
        out[:len(head)] = np.asarray(head, dtype=np.float64)  # None becomes NaN
    except (TypeError, ValueError):  # a malformed value: read one by one, keeping the good ones
        out[:len(head)] = [float(v) if finite(v) else np.nan for v in head]
    return out


class RunData:
    """The state of one backend command (a run, an audit, a probe), built from its events.

    `version` increases whenever something visible changed, so a painter can
    skip a repaint when nothing arrived.
    """

    def __init__(self, name: str = "", command: str = "run"):
        self.name = name
        self.command = command
        self.step = Column()
        self.step_ms = Column()
        # loss and loss scale are read once per window of steps (docs/MEASUREMENT.md, "Steady state"): kept sparse
        self.loss_step = Column()
        self.loss = Column()
        self.scale_step = Column()
        self.loss_scale = Column()
        self.has_loss_scale = False
        # whether any window carried a training loss: a run whose windows carry none (steps per execution > 1,
        # where a call's steps are timed as a whole) plots its epochs' losses instead (`_on_epoch`)
        self._window_losses = False
        self._timed = False  # a step timed alone arrived: the step columns hold timed steps only from then on
        self.validation: list[tuple[int, dict[str, float]]] = []
        self.phase: str | None = None
        self.phase_detail = ""
        self.first_steady_step: int | None = None
        self.profile_windows: list[list[float]] = []  # [start, stop); stop is inf while open
        self._phases: list[protocol.Event] = []
        self.progress: tuple[int, int | None, float | None] | None = None  # step, total, eta_s
        self.peak_memory: tuple[int, str] | None = None  # bytes, "device" | "host"
        self.findings: list[FindingDoc] = []
        self.error: protocol.ErrorDoc | None = None
        self.status: str | None = None  # a `done` status; None while running
        self.exit_code: int | None = None
        self.document: dict[str, Any] | None = None  # the `result` event's document
        self._summary: tuple[dict[str, Any], RunSummary] | None = None  # `summary`, read once per document
        self.hello: protocol.HelloEvent | None = None
        self.events_seen = 0
        self.version = 0
        self._median: tuple[int, float | None] = (-1, None)  # (version, live median) cache
        # a run-pair process: each run's own data, by run name (its events carry it); the phase and progress
        # here follow the run whose events arrive
        self.arms: dict[str, RunData] | None = {} if command == "run-pair" else None

    # ------------------------------------------------------------ ingest

    def arm(self, run: str) -> RunData:
        """A run-pair process's data of its run `run` (made on first use, so a page can show it before its
        first event)."""
        assert self.arms is not None, "only a run-pair process has runs of its own"
        return self.arms.setdefault(run, RunData(run, "run"))

    _PER_RUN = (protocol.STEPS, protocol.EPOCH, protocol.PHASE, protocol.VALIDATION, protocol.PROGRESS,
                protocol.MEMORY, protocol.RESULT)

    def ingest(self, events: Iterable[protocol.Event]) -> None:
        for e in events:
            self.events_seen += 1
            if self.arms is not None and e.get("run") and e["type"] in self._PER_RUN:
                self.arm(str(e["run"])).ingest([e])
                if e["type"] not in (protocol.PHASE, protocol.PROGRESS):
                    continue
            self._on(e)
        self.version += 1

    def _on(self, e: protocol.Event) -> None:
        """Hand one event to its type's reader (`_READERS`, each taking its type's payload); other types are
        ignored."""
        reader = _READERS.get(e["type"])
        if reader is not None:
            reader(self, e)

    def _on_finding(self, e: protocol.FindingEvent) -> None:
        if isinstance(e.get("finding"), dict):
            self.add_findings([e["finding"]])

    def _on_result(self, e: protocol.ResultEvent) -> None:
        if isinstance(e.get("document"), dict):
            self.document = e["document"]
            self.add_findings(findings_in(self.document.get("findings")))

    def _on_hello(self, e: protocol.HelloEvent) -> None:
        self.hello = e

    def _on_steps(self, e: protocol.StepsEvent) -> None:
        # column-wise, as numpy arrays: a fast run sends ~700 steps per event, and a Python loop over them
        # was most of the UI thread's ingest time (benchmarks/gui_ingest.py)
        steps, ms = _items(e.get("step")), _items(e.get("step_ms"))
        n = min(len(steps), len(ms))  # ragged columns: the steps both have (as protocol.iter_steps reads them)
        if not n:
            self._on_bare_window(_items(e.get("window")))
            return
        if not self._timed:  # the first step timed alone: the windows' means drawn so far give way to timed steps
            self._timed = True
            if self.step.size:
                self.step, self.step_ms = Column(), Column()
        self.step.extend(_floats(steps, n))
        self.step_ms.extend(_floats(ms, n))
        step = self.step.view()[-n:]
        for values, at, column in ((e.get("loss"), self.loss_step, self.loss),
                                   (e.get("loss_scale"), self.scale_step, self.loss_scale)):
            read = _floats(_items(values), n)
            kept = np.isfinite(read)
            if kept.any():
                if column is self.loss:
                    self._window_losses = True
                at.extend(step[kept])
                column.extend(read[kept])
                if column is self.loss_scale:
                    self.has_loss_scale = True

    def _on_bare_window(self, window: list[Any]) -> None:
        """A window timed as a whole with none of its steps timed alone (steps per execution > 1: a call's steps
        run as one; the walk's batch-64 run at 30 steps per call sent only such windows, and its step-time plot
        stayed empty beside its reference): its mean step time, at its first step, as the backend gives a
        call's steps — only for a run none of whose steps was timed alone (the step columns are the steps timed,
        which the plots and tests count)."""
        if self._timed or len(window) < 3 or not all(finite(v) for v in window[:3]):
            return
        first, last, seconds = (float(v) for v in window[:3])
        if last < first or seconds <= 0 or (self.step.size and first <= self.step.view()[-1]):
            return
        self.step.extend(np.array([first]))
        self.step_ms.extend(np.array([seconds * 1000.0 / (last - first + 1)]))

    def _on_epoch(self, e: protocol.EpochEvent) -> None:
        """An epoch's training loss, for a run whose windows carry none (`_window_losses`): its training-loss
        plot was empty beside its reference's."""
        loss, step = (e.get("metrics") or {}).get("loss"), e.get("step")
        if self._window_losses or not finite(loss) or not isinstance(step, int):
            return
        if not self.loss_step.size or step > self.loss_step.view()[-1]:
            self.loss_step.extend(np.array([float(step)]))
            self.loss.extend(np.array([float(loss)]))

    def _on_phase(self, e: protocol.PhaseEvent) -> None:
        self.phase = str(e.get("phase") or "")
        self.phase_detail = str(e.get("detail") or "")
        # warm-up and profiler windows are read exactly as `tfturbo compare` reads them (phase events are few)
        self._phases.append(e)
        self.first_steady_step, windows = steady_windows(self._phases)
        self.profile_windows = [[start, stop + 1] for start, stop in windows]  # half-open [start, stop)

    def _on_validation(self, e: protocol.EpochEvent) -> None:
        metrics = {k: float(v) for k, v in (e.get("metrics") or {}).items() if finite(v)}
        if isinstance(e.get("step"), int):
            self.validation.append((e["step"], metrics))

    def _on_progress(self, e: protocol.ProgressEvent) -> None:
        step = e.get("step")
        if isinstance(step, int):
            total = e.get("total") if isinstance(e.get("total"), int) else None
            eta_s = e.get("eta_s")
            eta = float(eta_s) if finite(eta_s) else None
            if total is not None and (self.progress is None or self.progress[1] != total):
                for column in (self.step, self.step_ms):  # the planned steps, once (a run can stop early)
                    column.reserve(min(total, MAX_RESERVED_STEPS))
            self.progress = (step, total, eta)

    def _on_memory(self, e: protocol.MemoryEvent) -> None:
        peak = e.get("peak_bytes")
        if finite(peak) and (self.peak_memory is None or peak >= self.peak_memory[0]):
            self.peak_memory = (int(peak), str(e.get("kind") or "host"))

    def _on_error(self, event: protocol.ErrorDoc) -> None:
        e = protocol.error_of(event) or event  # an older run's events.jsonl: read as its words say (`error_of`)
        self.error = {"kind": e.get("kind") or protocol.INTERNAL, "message": str(e.get("message") or "error"),
                      "fix": str(e.get("fix") or ""), "traceback": str(e.get("traceback") or ""),
                      **({"log_only": True} if e.get("log_only") else {})}

    def _on_done(self, e: protocol.DoneEvent) -> None:
        self.status = str(e.get("status") or protocol.RunStatus.FAILED)
        if isinstance(e.get("exit_code"), int):
            self.exit_code = e["exit_code"]


    def add_findings(self, found: Iterable[FindingDoc]) -> None:
        """Add findings not seen yet (a live finding reappears in the final document)."""
        seen = {(f.get("code"), f.get("where"), f.get("message")) for f in self.findings}
        for f in found:
            key = (f.get("code"), f.get("where"), f.get("message"))
            if key not in seen:
                seen.add(key)
                self.findings.append(f)

    def process_ended(self, exit_code: int) -> None:
        """The child exited: a run without a `done` event crashed."""
        if self.exit_code is None:
            self.exit_code = exit_code
        if self.status is None:
            self.status = protocol.RunStatus.CRASHED
        self.version += 1

    # ------------------------------------------------------------ reading

    @property
    def finished(self) -> bool:
        return self.status is not None

    @property
    def summary(self) -> RunSummary | None:
        """The run document (summary.json) once a `run` command finished, read once (the panel and the plots
        ask on every repaint)."""
        if self.command != "run" or self.document is None:
            return None
        if self._summary is None or self._summary[0] is not self.document:
            self._summary = (self.document, RunSummary.from_dict(self.document))
        return self._summary[1]

    def steady_mask(self, steps: np.ndarray | None = None) -> np.ndarray:
        """True for steady-state steps (of `steps`, default all): after warm-up, outside profiler windows."""
        steps = self.step.view() if steps is None else steps
        if self.first_steady_step is None:
            return np.zeros(len(steps), dtype=bool)
        mask = steps >= self.first_steady_step
        for start, stop in self.profile_windows:
            mask &= ~((steps >= start) & (steps < stop))
        return mask

    def steady_median_ms(self) -> float | None:
        """The summary's median once there is one, else the median of the latest steady steps.

        Computed at most once per change (the panel and the plots all ask on every repaint), over at
        most LIVE_MEDIAN_WINDOW steps so a long run stays cheap; the summary's exact figure replaces it.
        """
        median = self.summary.median_step_ms if self.summary else None
        if median is not None:
            return median
        if self._median[0] != self.version:
            recent = slice(-LIVE_MEDIAN_WINDOW, None)
            steady = self.step_ms.view()[recent][self.steady_mask(self.step.view()[recent])]
            steady = steady[np.isfinite(steady)]
            self._median = (self.version, float(np.median(steady)) if len(steady) else None)
        return self._median[1]

    def metric_names(self) -> list[str]:
        names: list[str] = []
        for _, metrics in self.validation:
            names += [k for k in metrics if k not in names]
        return names

    def metric_series(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        points = [(s, m[name]) for s, m in self.validation if name in m]
        if not points:
            return np.empty(0), np.empty(0)
        x, y = zip(*points)
        return np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)

    @classmethod
    def from_record(cls, record: RunRecord) -> RunData:
        """A stored run (events.jsonl + summary.json), for the browser and for overlays."""
        data = cls(record.name, "run")
        data.ingest(record.events)
        if record.summary is not None:
            data.document = record.summary.to_dict()
            data.add_findings(findings_in(record.summary.findings))
        data.status = record.status
        data.version += 1
        return data


# each event type's reader in `RunData` (the type the event's `type` names: its payload's TypedDict)
_READERS: dict[str, Callable[[RunData, Any], None]] = {
    protocol.STEPS: RunData._on_steps, protocol.PHASE: RunData._on_phase, protocol.VALIDATION: RunData._on_validation,
    protocol.PROGRESS: RunData._on_progress, protocol.MEMORY: RunData._on_memory, protocol.FINDING: RunData._on_finding,
    protocol.ERROR: RunData._on_error, protocol.DONE: RunData._on_done, protocol.RESULT: RunData._on_result,
    protocol.HELLO: RunData._on_hello, protocol.EPOCH: RunData._on_epoch,
}
