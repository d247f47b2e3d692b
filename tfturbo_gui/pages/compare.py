"""Re-measure & compare: a confirmation trial of the recommended configuration against the baseline.

Every rung before was measured against the best configuration kept before
it. This step measures the configuration the wizard would recommend side by
side with the baseline itself — a trial of the trial engine (replicated
pairs, alternating), the same `confirmation` rung `tfturbo tune` ends with —
and shows its verdict (speed interval, accuracy interval, kept or not) beside
the curves and the table of every rung. The page is not passed until that
confirmation has run; a confirmation that is not kept withdraws the
recommendation (`StudyDecisions.conclude`).
"""

from __future__ import annotations

from typing import Any, Callable

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QScrollArea, QVBoxLayout, QWidget

from tfturbo.runfiles import RUNS_DIR, load_run
from tfturbo import protocol
from tfturbo.headline import config_words, configuration_key, headline, reason_beside
from tfturbo.numbers import counted
from tfturbo.tune.levers.confirmation import LEVER as CONFIRMATION
from tfturbo.trials.verdict import TrialVerdictDoc
from tfturbo.tune.study import Rung
from tfturbo.verdicts import Decision

from ..cards import WayForwardBar, accuracy_words
from ..compare_view import CompareView
from ..failures import explain
from ..run_data import RunData
from ..run_gate import GATE
from ..run_panel import RunPanel
from ..run_process import Launcher
from ..session import WizardSession
from ..step_status import ATTENTION, NOT_STARTED, PASSED, RUNNING
from ..verdict_view import VerdictView
from .base import FINISHED_NOTE, TrialPlots, WizardPage, add_section, needs_baseline
from ..labels import in_gui_words, muted_label


def confirmation_verdict(rung: Rung) -> TrialVerdictDoc | None:
    """The verdict document (the `ab --json` shape) of a finished confirmation rung."""
    return rung.decision.to_dict() if rung.decision is not None else None


class ComparePage(WizardPage):
    title = CONFIRMATION.title
    intro = CONFIRMATION.intro
    page_key = CONFIRMATION.page

    def __init__(self, session: WizardSession, launcher: Launcher, parent: QWidget | None = None):
        super().__init__(session, launcher, parent)
        left_column = self.splitter.widget(0)
        if left_column is not None:
            left_column.hide()  # one wide column: the table needs the width
        self.confirmation: Rung | None = None
        # One column that scrolls vertically, as the other pages' left column does: in a small window the
        # table keeps every row and the plots their height, instead of both being squeezed to a sliver.
        self.page_scroll = QScrollArea()
        self.page_scroll.setWidgetResizable(True)
        self.page_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.page_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        body = QWidget()
        body.setObjectName("pageColumn")
        column = QVBoxLayout(body)
        column.setContentsMargins(0, 0, 4, 0)
        column.setSpacing(10)
        self.page_scroll.setWidget(body)
        self.right.addWidget(self.page_scroll, 1)
        top = QHBoxLayout()
        top.setSpacing(16)
        left = QVBoxLayout()
        self.needs = QLabel()
        self.needs.setWordWrap(True)
        self.needs.setTextFormat(Qt.TextFormat.PlainText)
        left.addWidget(self.needs)
        row = QHBoxLayout()
        self.run_button = QPushButton("Run the confirmation")
        self.run_button.setObjectName("primaryButton")
        self.run_button.clicked.connect(lambda: self.start_run())
        row.addWidget(self.run_button)
        row.addStretch(1)
        left.addLayout(row)
        self.busy_note = muted_label("")
        self.busy_note.hide()
        left.addWidget(self.busy_note)
        self.run_panel = RunPanel(launcher)
        self.run_panel.ended.connect(self._on_run_ended)
        self.run_panel.hide()
        left.addWidget(self.run_panel)
        self.plan_note = muted_label(hidden=True)  # the confirmation's progress and plan
        left.addWidget(self.plan_note)
        self.verdict = VerdictView()
        left.addWidget(self.verdict)
        self.way_text = muted_label(hidden=True)  # an inconclusive accuracy: what would decide it
        left.addWidget(self.way_text)
        self.way_bar = WayForwardBar()
        self.way_bar.chosen.connect(self.take_way_forward)
        left.addWidget(self.way_bar)
        self.continue_button = QPushButton()  # a stopped confirmation: its next pairs, not a new one from pair 1
        self.continue_button.clicked.connect(self.continue_run)
        self.continue_button.hide()
        left.addWidget(self.continue_button)
        self.run_panel.stopping.connect(
            lambda: self.session.stop_trial(self.confirmation) if self.confirmation is not None else None)
        left.addStretch(1)
        top.addLayout(left, 3)
        ladder = QVBoxLayout()
        add_section(ladder, "Every configuration measured")
        self.ladder = muted_label()
        self.ladder.setTextFormat(Qt.TextFormat.PlainText)
        ladder.addWidget(self.ladder)
        ladder.addStretch(1)
        top.addLayout(ladder, 2)
        column.addLayout(top)
        self.view = CompareView(plot_columns=4, fit_rows=True)  # one row of plots, every row of the table below
        column.addWidget(self.view, 1)
        self.trial_plots = TrialPlots(self.view.plots)  # while the confirmation runs: its runs, arm by arm
        for plot in (self.view.plots.step_plot, self.view.plots.loss_plot, self.view.plots.val_plot,
                     self.view.plots.scale_plot):
            plot.viewport().installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt API)
        """The wheel over a plot scrolls the page (a plot under the pointer would otherwise stop the page and
        zoom); Ctrl+wheel zooms the plot."""
        if isinstance(event, QWheelEvent) and not event.modifiers() & Qt.KeyboardModifier.ControlModifier \
                and self.page_scroll.verticalScrollBar().maximum() > 0:
            self.page_scroll.verticalScrollBar().event(event)
            return True
        return super().eventFilter(watched, event)

    def available(self) -> str:
        return needs_baseline(self.session)

    def show_recorded(self) -> None:
        """A continued study: its last confirmation is this page's."""
        super().show_recorded()
        self.confirmation = next((r for r in reversed(self.session.ensure_study().rungs)
                                  if r.kind == CONFIRMATION.rung_kind and r.decision is not None), None)
        if self.confirmation is not None:
            self.show_decision()  # its verdict as it was measured (the page showed its button alone)
        self.update_controls()  # a finished study's: nothing to run

    # ------------------------------------------------------------ what needs confirming

    def candidate(self) -> Rung | None:
        """The configuration to confirm: the best kept rung (None when nothing beat the baseline)."""
        best = self.session.best
        if self.confirmation is not None and best is self.confirmation:
            return self.confirmation  # confirmed: a rerun measures the same configuration again
        return best if best is not None and best is not self.session.baseline else None

    def on_enter(self) -> None:
        base = self.session.baseline
        if base is None:
            return
        candidate = self.candidate()
        if self.confirmation is None:
            if candidate is None:
                self.needs.setText("No change beat the baseline beyond the measurement noise while keeping the "
                                   f"validation metric: nothing to confirm, keep {base.settings.label()}.")
                self.set_status(PASSED if len(self.session.ensure_study().rungs) > 1 else NOT_STARTED)
            else:
                against = config_words(candidate.compared_with, self.session.ensure_study().rungs)
                kept = (f"{candidate.settings.label()} was kept after its trial against {against} "
                        f"({candidate.decision.speed.replicates if candidate.decision else 0} pairs)")
                # a finished study is decided: it says what was done, it asks for nothing
                self.needs.setText(f"The study finished without a confirmation run: {kept}." if self.session.finished
                                   else f"Needs a confirmation run: {kept}. Measure it against the baseline, side by "
                                        "side, before recommending it.")
                if self.status != RUNNING:
                    self.set_status(NOT_STARTED)
        self._show_runs()
        self.update_controls()

    def _show_runs(self) -> None:
        session = self.session
        base = session.baseline
        rungs = [r for r in session.ensure_study().rungs if r.summary is not None and r.run]
        if base not in rungs:
            return
        records = [load_run(session.rung_path(r)) for r in rungs]
        own = {r.name for r in rungs}
        runs_dir = session.ensure_study().path / RUNS_DIR
        replicates = [load_run(runs_dir / name) for r in rungs for name in r.replicates
                      if name not in own and (runs_dir / name).is_dir()]
        live = {str(session.rung_path(r)): data for r in rungs if (data := session.data_of(r)) is not None}
        shown = self.confirmation if self.confirmation in rungs else self.candidate()
        plotted = [rungs.index(base)] + ([rungs.index(shown)] if shown in rungs else
                                         [i for i, r in enumerate(rungs) if r is not base])
        self.view.set_records(records, baseline=rungs.index(base), plotted=plotted, live=live, replicates=replicates,
                              trials=rungs)
        lines = []
        # each configuration once, with its one speed-up (tfturbo.headline pools its trials' pairs) and its latest
        # verdict: a kept rung and its confirmation were two entries of one configuration (issue 42 walk)
        groups: dict[tuple[Any, ...], list[Rung]] = {}
        for r in rungs[1:]:
            groups.setdefault(configuration_key(r), []).append(r)
        for group in groups.values():
            first, r = group[0], group[-1]
            d, said = r.decision, headline(first.name, session.ensure_study().rungs)
            verdict = Decision.word(bool(d and d.kept))
            facts = [f"{said.text()} {said.source(first.name)}, {said.verdict}"] if said else []
            facts += [f"accuracy {accuracy_words(d.accuracy)}"] if d else []
            what = config_words(first.name, session.ensure_study().rungs)  # the configuration, not its run folder
            what = f"{what} ({r.settings.label()})" if what != r.settings.label() else what
            lines.append(f"• {what}: {verdict}" + (f" — {'; '.join(facts)}" if facts else ""))
        self.ladder.setText("\n".join(lines) or "Only the baseline has been measured.")

    # ------------------------------------------------------------ the confirmation run

    def update_controls(self) -> None:
        why = GATE.why_busy() if not self.run_panel.is_running() else ""
        self.run_button.setEnabled(not why and not self.run_panel.is_running() and self.candidate() is not None
                                   and not self.session.finished)
        confirmed = self.confirmation is not None and self.confirmation.decision is not None
        self.run_button.setText("Run the confirmation again" if confirmed and not self.run_panel.is_running()
                                else "Run the confirmation")
        self.run_button.setVisible(not self.session.finished)  # a decided step: only what it measured
        why = FINISHED_NOTE if self.session.finished else why
        self.busy_note.setText(why[0].upper() + why[1:] if why else "")
        self.busy_note.setVisible(bool(why))
        if self.confirmation is not None and self.confirmation.decision is not None and not self.session.finished:
            self.show_continue(self.confirmation)
        else:
            self.continue_button.hide()
        self.navigation_changed.emit()  # Next follows the run (it stayed enabled and did nothing)

    def run_action(self) -> None:
        if self.run_button.isEnabled():
            self.start_run()

    def start_run(self, settings=None) -> None:
        """Measure the confirmation (`settings`: the recommended configuration on more validation examples)."""
        candidate = self.candidate()
        if self.run_panel.is_running() or candidate is None or self.training_blocked():
            return
        # always the recommendation against the baseline, also when its own trial was against the baseline
        # (the engine plans no confirmation then, and the button did nothing)
        self.confirmation = self.session.start_trial(CONFIRMATION.name, settings or candidate.settings)
        self.trial_plots.reset()
        self.verdict.hide()
        self.way_text.hide()
        self.way_bar.hide()
        self.run_panel.show()
        self.set_status(RUNNING)
        self._start_next_run()
        self.update_controls()

    def continue_run(self) -> None:
        """Go on with the stopped confirmation: its next pair, numbered after its complete ones."""
        rung = self.confirmation
        if self.run_panel.is_running() or rung is None or not self.session.can_continue(rung) \
                or self.training_blocked():
            return
        self.go_on(self.session.continue_trial)

    def go_on(self, plan: Callable[[Rung], None]) -> None:
        rung = self.confirmation
        assert rung is not None, "a confirmation measured (its trial is what goes on)"
        plan(rung)
        self.verdict.hide()
        self.way_text.hide()
        self.way_bar.hide()
        self.continue_button.hide()
        self.run_panel.show()
        self.set_status(RUNNING)
        if not self._start_next_run():
            self.session.finish_trial(rung)
            self.show_decision()
        self.update_controls()

    def _start_next_run(self) -> bool:
        # the recommended run first in the legend, whichever runs
        return self.start_shown_run(self.confirmation, "Confirmation", ("recommended", "baseline"))

    def _on_run_ended(self, data: RunData) -> None:
        rung = self.confirmation
        assert rung is not None
        self.session.record_run(rung, self._planned, data)
        if data.status == protocol.RunStatus.COMPLETED and self._start_next_run():
            return
        why = explain(data.status, data.error, rung.settings)
        if why is not None:
            self.run_panel.error_box.show_error(why.message, why.fix, why.details)
        self.session.finish_trial(rung)
        self.show_trial_progress(self.confirmation)
        self.show_decision()

    def show_decision(self) -> None:
        """The confirmation's verdict, and for an inconclusive accuracy its ways forward (words and buttons)."""
        rung = self.confirmation
        assert rung is not None, "the confirmation was measured"
        document = confirmation_verdict(rung)
        if document is not None:
            shown = headline(rung.name, self.session.ensure_study().rungs)  # one number per comparison
            self.verdict.set_verdict(document, rung.settings.label(), shown, rung.name, reason_beside(rung, shown))
            self.needs.setText(f"Confirmation of {rung.settings.label()} against the baseline "
                               f"{self.session.measured_baseline.settings.label()} "
                               f"({counted(len(rung.replicates), 'run')})."
                               + (f" Accuracy rule: {rung.decision.rule_detail()}."
                                  if rung.decision and rung.decision.rule_detail() else ""))
        way = self.show_ways_forward(rung)
        self.way_text.setText(in_gui_words("What would decide the accuracy:\n" + "\n".join(
            way.lines(self.way_bar.offered()))) if way else "")
        self.way_text.setVisible(way is not None)
        self.show_continue(rung)
        kept = document is not None and document.get("kept")
        self.set_status(PASSED if kept else ATTENTION)
        self._show_runs()
        self.update_controls()

    def take_way_forward(self, way: str) -> None:
        """A way forward's button: the confirmation judged again from its runs, or measured on more examples."""
        if self.way_forward_taken(self.confirmation, way) is not None:
            self.show_decision()

    def can_go_next(self) -> bool:
        return not self.run_panel.is_running()

    def next_hint(self) -> str:
        if self.run_panel.is_running():
            return "Measuring…"
        if self.candidate() is not None and self.confirmation is None and not self.session.finished:
            return "Run the confirmation first, or skip it"
        return ""
