"""Page 5 — Re-measure & compare: the baseline and the tuned configuration side by side.

Both were measured on the same seed, data order and step budget. The page
shows the verdict of the best configuration kept (speed-up with its interval,
the accuracy gate), the curves of both runs, and the table of every rung of
the study.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QVBoxLayout, QWidget

from tfturbo.runfiles import load_run

from ..cards import DecisionCard
from ..compare_view import CompareView
from ..run_process import Launcher
from ..session import WizardSession
from ..step_status import ATTENTION, PASSED
from .base import WizardPage, add_section, needs_baseline


class ComparePage(WizardPage):
    title = "Re-measure & compare"
    intro = ("Baseline and tuned runs use the same seed, data order and number of steps. A speed-up counts only "
             "when its 95% interval is above 1, and only if the validation metric stays within tolerance.")

    def __init__(self, session: WizardSession, launcher: Launcher, parent: QWidget | None = None):
        super().__init__(session, launcher, parent)
        self.splitter.widget(0).hide()  # one wide column: the table needs the width
        top = QHBoxLayout()
        top.setSpacing(16)
        verdict = QVBoxLayout()
        self.verdict = DecisionCard()
        self.verdict.setMaximumWidth(560)
        verdict.addWidget(self.verdict)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        verdict.addWidget(self.summary)
        verdict.addStretch(1)
        top.addLayout(verdict, 3)
        ladder = QVBoxLayout()
        add_section(ladder, "Every configuration measured")
        self.ladder = QLabel()
        self.ladder.setObjectName("muted")
        self.ladder.setWordWrap(True)
        self.ladder.setTextFormat(Qt.TextFormat.PlainText)
        ladder.addWidget(self.ladder)
        ladder.addStretch(1)
        top.addLayout(ladder, 2)
        self.right.addLayout(top)
        self.view = CompareView()
        self.right.addWidget(self.view, 1)

    def available(self) -> str:
        return needs_baseline(self.session)

    def on_enter(self) -> None:
        session = self.session
        base, best = session.baseline, session.best
        if base is None or best is None:
            return
        rungs = [r for r in session.study.rungs if r.summary is not None and r.run]
        records = [load_run(session.rung_path(r)) for r in rungs]
        live = {str(session.rung_path(r)): session.data_of(r) for r in rungs if session.data_of(r) is not None}
        # baseline beside the tuned run; with nothing kept, beside every candidate measured
        plotted = [rungs.index(base), rungs.index(best)] if best is not base else list(range(len(rungs)))
        self.view.set_records(records, baseline=rungs.index(base), plotted=plotted, live=live)
        if best is base:
            self.verdict.hide()
            self.summary.setText("No change beat the baseline beyond the measurement noise while keeping the "
                                 f"validation metric: keep {base.settings.label()}.")
            self.set_status(ATTENTION if len(rungs) > 1 else self.status)
        else:
            self.verdict.set_decision(best.decision, best.settings.label(), best.compared_with)
            self.summary.setText(f"Tuned: {best.settings.label()} (run {best.run}) against the baseline "
                                 f"{base.settings.label()} (run {base.run}).")
            self.set_status(PASSED)
        lines = []
        for r in rungs[1:]:
            d = r.decision
            verdict = "kept" if d and d.kept else "not kept"
            lines.append(f"• {r.name} ({r.settings.label()}): {verdict}" + (f" — {d.reason}" if d else ""))
        self.ladder.setText("\n".join(lines) or "Only the baseline has been measured.")
