"""The Batch size page's compact "Scaling across GPUs" section: measure, then show the table and the finding.

The measurement is `tfturbo scaling`'s (`tfturbo.scaling.ScalingMeasurement`
through the session): its runs go one after another through this section's
own run panel, so they pass the one-training-at-a-time gate like every other
run, and the result is written to STUDY/scaling/scaling.json, where the report
shows it. It is offered only where it means something (two or more GPUs,
`session.scaling_offer`); elsewhere the section says why.
"""

from __future__ import annotations

import shlex

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QPushButton, QVBoxLayout, QWidget

from tfturbo import protocol
from tfturbo.scaling import ScalingPoint, ScalingResult, without_jit

from .cards import FactsCard
from .code_block import CodeBlock
from .findings_panel import FindingsPanel
from .run_data import RunData
from .run_gate import GATE
from .run_panel import RunPanel
from .run_process import Launcher
from .session import WizardSession, scaling_offer
from .labels import muted_label


ABOUT = ("Throughput on 1, 2, … GPUs with the same per-replica batch, each count an A/B trial against one GPU; "
         "efficiency 1.00 is linear.")


def point_text(p: ScalingPoint) -> str:
    """'1,320 samples/s [1,200, 1,410] · efficiency 0.66 [0.60, 0.71]' — one row of the table in words."""
    if p.samples_per_s is None:
        return f"not measured ({p.status})"
    text = f"{p.samples_per_s:,.0f} samples/s"
    if p.ci95[0] is not None:
        text += f" [{p.ci95[0]:,.0f}, {p.ci95[1]:,.0f}]"
    if p.replicas > 1 and p.efficiency is not None:
        text += f" · efficiency {p.efficiency:.2f}"
        if p.efficiency_ci95[0] is not None:
            text += f" [{p.efficiency_ci95[0]:.2f}, {p.efficiency_ci95[1]:.2f}]"
    return text


class ScalingSection(QWidget):
    """Measure scaling button (or why not), its run panel, the result card and its findings."""

    running_changed = Signal()  # a measurement started or ended: the page's Next may change

    def __init__(self, session: WizardSession, launcher: Launcher, parent: QWidget | None = None):
        super().__init__(parent)
        self.session = session
        self.result: ScalingResult | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 6, 0, 0)
        layout.setSpacing(8)
        title = QLabel("Scaling across GPUs")
        title.setObjectName("sectionTitle")
        layout.addWidget(title)
        self.about = QLabel(ABOUT)
        self.about.setObjectName("muted")
        self.about.setWordWrap(True)
        layout.addWidget(self.about)
        self.button = QPushButton("Measure scaling")
        self.button.clicked.connect(self.start)
        layout.addWidget(self.button)
        self.why_not = muted_label("")
        self.why_not.setTextFormat(Qt.TextFormat.PlainText)
        layout.addWidget(self.why_not)
        # the same measurement from a terminal: a secondary detail to copy, under the words that say what to do
        self.command_title = muted_label("Command line equivalent, for a terminal on that machine:")
        self.command = CodeBlock(fill=True)  # as tall as its wrapped lines (a 3-line box cut it at 1024 px)
        self.command_title.hide()
        self.command.hide()
        layout.addWidget(self.command_title)
        layout.addWidget(self.command)
        self.panel = RunPanel(launcher)
        self.panel.ended.connect(self._on_run_ended)
        self.panel.hide()
        layout.addWidget(self.panel)
        self.card = FactsCard("Scaling (mirrored)")
        self.card.hide()
        layout.addWidget(self.card)
        self.interpretation = QLabel("")
        self.interpretation.setWordWrap(True)
        self.interpretation.hide()
        layout.addWidget(self.interpretation)
        self.findings = FindingsPanel("Scaling findings")
        self.findings.hide()
        layout.addWidget(self.findings)

    def is_running(self) -> bool:
        return self.panel.is_running()

    def update_controls(self) -> None:
        """Enabled when there are GPUs to scale over, a baseline, no result yet and no training going."""
        counts, why = scaling_offer(self.session.environment)
        best = self.session.best
        note = without_jit(best.settings)[1] if best is not None else ""
        self.about.setText(ABOUT + (f" It is {note}." if note else ""))  # said before it runs, not only after
        if not why and self.session.baseline is None:
            why = "measure the baseline first"
        if not why and self.result is not None:
            why = f"measured; saved in {self.session.scaling_path()}"
        busy = GATE.why_busy() if not self.is_running() else ""
        self.button.setText(f"Measure scaling on {', '.join(map(str, counts))} GPUs" if counts else "Measure scaling")
        self.button.setEnabled(not why and not busy and not self.is_running())
        note = why or busy
        self.why_not.setText(note[:1].upper() + note[1:] + ("" if not note or note.endswith(".") else "."))
        self.why_not.setVisible(bool(note))
        elsewhere = not counts and self.session.environment is not None  # this machine cannot: another can
        if elsewhere:
            self.command.set_text(self.command_line())
        self.command_title.setVisible(elsewhere)
        self.command.setVisible(elsewhere)

    def command_line(self) -> str:
        """`tfturbo scaling` for this workload into this study's folder, as the button would measure it."""
        where = str(self.session.study_path) if self.session.study_path is not None else "STUDY_DIR"
        return shlex.join(["tfturbo", "scaling", self.session.workload or "WORKLOAD", "--replicas", "1,2",
                           "--out", where])

    def start(self) -> None:
        counts, why = scaling_offer(self.session.environment)
        if why or self.is_running() or GATE.why_busy() or GATE.device_busy():
            return
        self.session.start_scaling(counts)
        self._next()
        self.running_changed.emit()

    def _next(self) -> bool:
        nxt = self.session.next_scaling_run()
        if nxt is None:
            return False
        self._planned, argv = nxt
        n = self.session.scaling_measurement.replicas_of(self._planned)
        self.panel.show()
        self.panel.start("run", argv, name=f"scaling, {n} GPU{'s' if n > 1 else ''}",
                         busy_text=f"Scaling: {self._planned.name}, {n} GPU{'s' if n > 1 else ''} — starting the "
                                   "backend (loading TensorFlow)…", log_path=self.session.log_path())
        self.update_controls()
        return True

    def _on_run_ended(self, data: RunData) -> None:
        self.session.record_scaling_run(self._planned, data)
        if data.status == protocol.RunStatus.COMPLETED and self._next():
            return
        if data.status != protocol.RunStatus.COMPLETED:
            self.session.scaling_measurement.stop()  # stopped or failed: judge the pairs measured so far
        else:
            self.panel.hide()  # the table says what the runs measured; a failure keeps its error shown
        self.show_result(self.session.finish_scaling())

    def show_result(self, result: ScalingResult) -> None:
        self.result = result
        self.card.set_facts([(f"{p.replicas} GPU{'s' if p.replicas > 1 else ''}", point_text(p))
                             for p in result.points])
        self.card.show()
        self.interpretation.setText(result.interpretation())
        self.interpretation.show()
        self.findings.set_findings(result.findings)
        self.findings.setVisible(bool(result.findings))
        self.update_controls()
        self.running_changed.emit()
