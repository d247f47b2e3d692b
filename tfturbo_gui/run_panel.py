"""Progress and control of one backend command: state, step/total, time left, Stop, and errors.

Warm-up and XLA compilation are shown as their own state: those steps are
slow by nature and excluded from the timings, and a user watching a 30 s
first step should know that is expected. When a command ends the panel says
how: completed, stopped by the user (with how much was kept), failed (with
the error and its fix; the traceback behind Details) or crashed.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QVBoxLayout, QWidget

from tfturbo import protocol
from tfturbo.cli_args import TRAINING_COMMANDS
from tfturbo.numbers import duration_text

from .error_box import ErrorBox
from .step_status import NOT_STARTED
from .run_data import RunData
from .run_process import BackendProcess, Launcher

PHASE_TEXT = {
    protocol.BUILDING: ("Building the model", "busy"),
    protocol.COMPILING: ("Compiling — warm-up, excluded from the timings", "warmup"),
    protocol.WARMUP: ("Warm-up / compilation — excluded from the timings", "warmup"),
    protocol.TRAINING: ("Training — steady state, measured", "running"),
    protocol.VALIDATING: ("Validating", "running"),
    protocol.PROFILING: ("Profiling — these steps are excluded from the timings", "running"),
    protocol.MEASURING: ("Measuring", "running"),
    protocol.SAVING: ("Saving the checkpoint", "busy"),
}


def fmt_eta(seconds: float | None) -> str:
    return "" if seconds is None else f"about {duration_text(seconds)} left"


ETA_AFTER_STEADY_STEPS = 5  # warm-up steps are slow by nature: a time left from them is wrong by minutes


def steps_done(data: RunData) -> int:
    """Steps the run completed: the summary's count, else the last progress, else the steps received.

    One number for every place that says it (the state line, the facts card, the progress line); a run-pair
    process's: both runs' together.
    """
    if data.arms:
        return sum(steps_done(arm) for arm in data.arms.values())
    done = data.summary.steps_completed if data.summary else None
    if done is not None:
        return done
    received = len(data.step.view())
    return max(received, data.progress[0]) if data.progress is not None else received


def eta_text(data: RunData) -> str:
    """The time left once the steady state has a few steps to extrapolate from; '' before (or after the end)."""
    if data.finished or data.progress is None or data.first_steady_step is None:
        return ""
    step, _total, eta = data.progress
    return fmt_eta(eta) if step >= data.first_steady_step + ETA_AFTER_STEADY_STEPS else ""


def outcome_text(data: RunData, log_path: str = "") -> tuple[str, str]:
    """(text, state) describing how a finished command ended."""
    training = data.command in TRAINING_COMMANDS  # an audit's or probe's progress counts checks, not steps
    kept = steps_done(data) if training else 0
    measured = f"{kept} step{'s' if kept != 1 else ''} recorded" if training else "nothing was trained"
    status = data.status
    if status == protocol.RunStatus.COMPLETED:
        return (f"Completed — {measured}" if kept else "Completed"), "passed"
    if status == protocol.RunStatus.CANCELLED:
        return f"Stopped by you — {measured}; what was measured is kept", "attention"
    if status == protocol.RunStatus.NAN_STOPPED:
        return f"Stopped: the loss became NaN or infinite — {measured}", "attention"
    if status == protocol.RunStatus.FAILED or (status == protocol.RunStatus.CRASHED and data.error):
        message = (data.error or {}).get("message") or "the command failed"
        return f"Failed: {message}", "attention"
    where = f"; the backend's messages are in {log_path}" if log_path else ""
    return (f"The backend ended unexpectedly (exit code {data.exit_code}) — {measured}{where}", "attention")


class RunPanel(QWidget):
    """Starts commands through its own BackendProcess, one at a time."""

    events_received = Signal(object)
    ended = Signal(object)  # RunData
    stopping = Signal()  # the user stopped the run (Stop or Esc), before the backend is asked to stop

    def __init__(self, launcher: Launcher, parent: QWidget | None = None, stoppable: bool = True):
        super().__init__(parent)
        self.process = BackendProcess(launcher, self)
        self.process.events_received.connect(self.events_received)
        self.process.ended.connect(self._on_ended)
        self.data: RunData | None = None
        self.log_path = ""
        self._painted = -1
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        row = QHBoxLayout()
        self.state = QLabel("Not started")
        self.state.setObjectName("stateChip")
        self.state.setProperty("state", "idle")
        self.state.setWordWrap(True)
        self.state.setTextFormat(Qt.TextFormat.PlainText)
        row.addWidget(self.state, 1)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setObjectName("stopButton")
        self.stop_button.setToolTip("Finish the current step, write the summary, and end the run")
        self.stoppable = stoppable
        self.context = ""  # what the current run is within its trial, before each phase text
        self.stop_button.hide()  # shown only while a command runs
        self.stop_button.clicked.connect(self.stop)
        row.addWidget(self.stop_button)
        layout.addLayout(row)
        self.bar = QProgressBar()
        self.bar.setTextVisible(False)
        self.bar.setFixedHeight(8)
        self.bar.hide()
        layout.addWidget(self.bar)
        self.detail = QLabel("")
        self.detail.setObjectName("muted")
        self.detail.hide()
        layout.addWidget(self.detail)
        self.error_box = ErrorBox()
        layout.addWidget(self.error_box)
        self.timer = QTimer(self)
        self.timer.timeout.connect(self.refresh)

    # ------------------------------------------------------------ control

    def is_running(self) -> bool:
        return self.process.is_running()

    def start(self, command: str, argv: list[str], name: str = "", busy_text: str = "Starting…",
              log_path: str = "", context: str = "") -> RunData:
        """`context` ("Trial pair 2, the candidate run") stays before each phase's text while it runs."""
        self.error_box.clear()
        self.log_path = log_path
        self.context = context
        self._set_state(busy_text, "busy")
        self.bar.setRange(0, 0)  # busy until the first progress event
        self.bar.show()
        self.detail.setText("")
        self.stop_button.setEnabled(True)
        self.stop_button.setVisible(self.stoppable)
        self._painted = -1
        data = self.data = self.process.start(command, argv, name, stderr_path=log_path or None)
        if not data.finished:  # a program that cannot start has already ended here
            self.timer.start(100)
        return data

    def stop(self) -> None:
        if self.is_running():
            self.stopping.emit()  # a trial's page stops its trial first: the run going is not one of its pairs
            self.process.stop()
            self.stop_button.setEnabled(False)
            self._set_state("Stopping — finishing the current step and writing the summary", "busy")

    # ------------------------------------------------------------ display

    def _set_state(self, text: str, state: str) -> None:
        self.state.setText(text)
        if self.state.property("state") != state:
            self.state.setProperty("state", state)
            self.state.style().unpolish(self.state)
            self.state.style().polish(self.state)

    def refresh(self) -> None:
        data = self.data
        if data is None or data.version == self._painted:
            return
        self._painted = data.version
        if data.phase and not data.finished and not self.process.stop_requested:
            text, state = PHASE_TEXT.get(data.phase, (data.phase.capitalize(), "running"))
            self._set_state(f"{self.context}: {text[0].lower()}{text[1:]}" if self.context else text, state)
        if data.progress is not None:
            step, total, _eta = data.progress
            step = steps_done(data) if data.finished else step
            if data.arms:  # a run-pair process: both runs' steps; each run ends at its steady seconds, not a total
                step, total = steps_done(data), None
            if total:
                self.bar.setRange(0, total)
                self.bar.setValue(min(step, total))
            unit = "step" if data.command in TRAINING_COMMANDS else "check"  # a workload check trains nothing
            parts = [f"{unit} {step}" + (f" / {total}" if total else ""), eta_text(data)]
            self.detail.setText(" · ".join(p for p in parts if p))
            # one run's own rate is a detail, in the tooltip and said as one: beside the verdict's speed-up it
            # read as a second speed number for the configuration (issue 22)
            median = data.steady_median_ms()
            self.detail.setToolTip(f"This run's median step: {median:.2f} ms — a detail of this one run, not the "
                                   "verdict (the verdict compares the trial's replicate pairs)" if median else "")
        self.detail.setVisible(bool(self.detail.text()))

    def show_step_status(self, status: str) -> None:
        """A panel that ran nothing in this window says where its step stands in the study (`step_status`), not
        "Not started": a reopened study's baseline page read "passed" in the step list and "Not started" on its
        card (issue 42 walk). A panel that ran something keeps what its run said."""
        if self.data is None and not self.is_running():
            self._set_state("Not started" if status == NOT_STARTED else f"In the study: {status}", "idle")

    def show_finished(self, data: RunData) -> None:
        """Describe a finished command other than the last one this panel ran: a trial's own run, when its
        reference run happened to end last (the page then shows the configuration it measured)."""
        if self.is_running():
            return
        self.data = data
        self._painted = -1
        self.refresh()
        self._set_state(*outcome_text(data, self.log_path))

    def show_stopped_trial(self, so_far: str) -> None:
        """The run the user stopped belonged to a trial, which discards it: say what the trial kept (`so_far`,
        `WizardSession.stopped_so_far`), not the stopped run's steps as if they were kept (the walk read "2 steps
        recorded; what was measured is kept" of a run that left no folder)."""
        self._set_state(f"Stopped by you — {so_far}", "attention")
        self.detail.hide()

    def _on_ended(self, data: RunData) -> None:
        self.timer.stop()
        self._painted = -1
        self.refresh()
        self.stop_button.hide()
        self.bar.hide()
        text, state = outcome_text(data, self.log_path)
        self._set_state(text, state)
        if data.error is not None:
            self.error_box.show_event(data.error)
        self.ended.emit(data)
