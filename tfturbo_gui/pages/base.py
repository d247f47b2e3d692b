"""What every wizard page has: a title, an intro, a status, and a say in the Next button.

`RungPage` adds the shape shared by the pages that measure one rung of the
ladder (mixed precision, XLA, batch size): controls and findings on the left,
the live plots (this run beside the baseline) on the right, and the verdict
once the run ends.
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import (QFrame, QInputDialog, QLabel, QPushButton, QScrollArea, QSplitter, QVBoxLayout,
                               QWidget)

from tfturbo.findings import FindingDoc, findings_in
from tfturbo import protocol
from tfturbo.profile_findings import compare_findings
from tfturbo.settings import RunSettings, fixes_not_applied, fixes_on
from tfturbo.errors import UserError
from tfturbo.headline import config_words, headline
from tfturbo.numbers import counted
from tfturbo.tune import levers
from tfturbo.trials.runs import PlannedPair, PlannedRun
from tfturbo.tune.study import Rung

from ..cards import DecisionCard, WayForwardBar
from ..failures import explain
from ..findings_panel import AUTO_FIXES, FindingsPanel
from ..labels import add_section as add_section  # the pages import it from here
from ..labels import muted_label
from ..live_plots import RunPlots
from ..profile_view import ProfileView, reference_profile, rung_profile, under_plots
from ..run_data import RunData
from ..run_gate import GATE
from ..run_panel import RunPanel
from ..run_process import Launcher
from ..session import WizardSession
from ..step_status import ATTENTION, NOT_KEPT, NOT_RUN, NOT_STARTED, PASSED, RUNNING, stopped

LEFT_WIDTH = 430
# a finished study reopened (`WizardSession.finished`): every step is decided, so no page offers to measure again
FINISHED_NOTE = ("This study is finished: its decisions are shown as recorded. File → New study measures the "
                 "workload again.")


def start_trial_run(session: WizardSession, rung, panel: RunPanel, what: str, arms: tuple[str, str]):
    """Start `rung`'s next planned run on `panel`: (planned run, its RunData), or None once the trial is
    decided. `arms` name B and A in the busy text ("Trial pair 2, the candidate run: …")."""
    nxt = session.next_run(rung)
    if nxt is None:
        return None
    planned, argv = nxt
    trial = session.trial_of(rung)  # its speed pairs are counted as the plan counts them (the gate's runs are none)
    number = trial.speed_pair_number(planned.replicate) if trial is not None else planned.replicate
    if isinstance(planned, PlannedPair):  # both arms in one process (`run-pair`)
        first, second = (arms[0] if run.arm == "b" else arms[1] for run in planned.runs)
        context = f"{what} pair {number}: the {first} and {second} runs in one process"
        name = " and ".join(run.settings.label() for run in planned.runs)
    else:
        arm = arms[0] if planned.arm == "b" else arms[1]
        again = f"the {arm}" if planned.arm == "b" else \
            trial.reference_words() if trial is not None else "the reference"  # B's: "train more seeds"
        context = (f"{what} pair {number}, the {arm} run" if number else
                   f"{what}, {again} again from seed "
                   f"{planned.settings.seed}: full length with validation, for the accuracy gate's training noise"
                   if planned.replicate < 1 else
                   f"{what}, the {arm} run: full length with validation, for the accuracy gate")
        name = planned.settings.label()
    data = panel.start(session.command_of(planned), argv, name=name,
                       busy_text=f"{context}: starting the backend (loading TensorFlow)…", log_path=session.log_path(),
                       context=context)
    return planned, data


class TrialPlots:
    """What a trial's page plots (a rung page's or the confirmation's): the trial's latest candidate run in colour
    beside its latest reference run, grey and dashed, each named by its configuration and where it stands in the
    trial's plan ("mixed_float16, batch 64 (pair 2)", "reference float32, batch 64 (full length)"), as the
    progress line counts ("Pair 2 of 3–6"; the run directory's name, "b3", said otherwise); the page's own
    configuration first in the legend whichever arm is running (the confirmation named its reference run as its
    own while it ran), the run going shaded. Once decided, or for a continued study: the trial's first pair, the
    full-length runs with validation the accuracy verdict compared (`WizardSession.first_pair`; a later,
    speed-only pair left the validation plot empty)."""

    BASELINE_RUN = "the baseline run"

    def __init__(self, plots: RunPlots):
        self.plots = plots
        self.arms: dict[str, tuple[RunData, RunSettings, str]] = {}  # arm -> (latest run, its settings, its place)

    def reset(self) -> None:
        self.arms = {}

    @staticmethod
    def _place(trial, replicate: int) -> str:
        """Where a replicate stands in the plan: "pair k" (the k-th speed pair, `Trial.speed_pair_number`) or
        "full length" (the accuracy gate's run of a trial whose speed pairs are separate)."""
        number = trial.speed_pair_number(replicate) if trial is not None else replicate
        return f"pair {number}" if number else "full length"

    def started(self, planned, data: RunData, trial=None) -> None:
        """A run (or a paired process) of the trial started: plot it, the run going shaded (when paired, the
        arm that trains first). `trial`: the trial it belongs to (it numbers the speed pairs)."""
        if data.arms is not None:  # a paired replicate: each arm's plot follows its own run's events
            for run in planned.runs:
                self.arms[run.arm] = (data.arm(run.name), run.settings, self._place(trial, run.replicate))
            running = data.arm(planned.first.name)
        else:
            self.arms[planned.arm] = (data, planned.settings, self._place(trial, planned.replicate))
            running = data
        self.show(running)

    def show_first_pair(self, session: WizardSession, rung) -> None:
        baseline = session.data_of(session.baseline)
        # the first pair trains the full length whatever else it counts for; A may be the baseline run itself,
        # what the gate judged a trial that trained no A that long against
        self.arms = {arm: (data, settings, self.BASELINE_RUN if arm == "a" and data is baseline else "full length")
                     for arm, (data, settings) in session.first_pair(rung).items()}
        self.show()

    def show(self, running: RunData | None = None) -> None:
        b, a = self.arms.get("b"), self.arms.get("a")

        def label(run) -> str:  # 'mixed_float16, batch 64 (pair 2)': the configuration and its place in the plan
            return f"{run[1].label()} ({run[2]})" if run else ""

        batches = ((b[1].batch_size or 1) if b else 1, (a[1].batch_size or 1) if a else 1)
        speed_only = all(run[1].speed_only for run in (b, a) if run)  # a later pair: nothing to validate
        self.plots.no_validation = "No validation in a speed-only pair" \
            if speed_only and (a or b) else "Validation"
        self.plots.show_pair(b[0] if b else None, a[0] if a else None, label(b), f"reference {label(a)}",
                             running=running, batches=batches)


class WizardPage(QWidget):
    """A checklist step. Subclasses fill `self.left` / `self.right` and override the hooks."""

    # a page with a trial (a rung's, the confirmation's) makes these; the trial helpers below use them
    plan_note: QLabel
    continue_button: QPushButton
    way_bar: WayForwardBar
    busy_note: QLabel
    run_panel: RunPanel
    trial_plots: TrialPlots
    _planned: PlannedRun | PlannedPair
    start_run: Callable[..., None]

    title = ""
    intro = ""
    page_key = ""  # the `Lever.page` of the levers this page shows ("": none)
    status_changed = Signal(str)
    navigation_changed = Signal()  # can_go_next() or next_hint() may have changed
    advance = Signal()  # the page finished its asynchronous Next

    def __init__(self, session: WizardSession, launcher: Launcher, parent: QWidget | None = None):
        super().__init__(parent)
        self.session = session
        self.launcher = launcher
        self.status = NOT_STARTED
        outer = QVBoxLayout(self)
        outer.setContentsMargins(24, 18, 24, 8)
        outer.setSpacing(10)
        heading = QLabel(self.title)
        heading.setObjectName("pageTitle")
        outer.addWidget(heading)
        intro = QLabel(self.intro)
        intro.setObjectName("pageIntro")
        intro.setWordWrap(True)
        outer.addWidget(intro)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setChildrenCollapsible(False)
        outer.addWidget(self.splitter, 1)
        left_scroll = QScrollArea()
        left_scroll.setWidgetResizable(True)
        left_scroll.setFrameShape(QFrame.Shape.NoFrame)
        left_scroll.setMinimumWidth(360)
        left_body = QWidget()
        left_body.setObjectName("pageColumn")
        self.left = QVBoxLayout(left_body)
        self.left.setContentsMargins(0, 0, 12, 0)
        self.left.setSpacing(10)
        left_scroll.setWidget(left_body)
        left_body.installEventFilter(self)  # its cards change its width's need: fit the columns again
        right_body = QWidget()
        self.right = QVBoxLayout(right_body)
        self.right.setContentsMargins(6, 0, 0, 0)
        self.right.setSpacing(10)
        self.splitter.addWidget(left_scroll)
        self.splitter.addWidget(right_body)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        self._user_split = False  # the user dragged the divider: leave it where they put it
        self.splitter.splitterMoved.connect(lambda *_a: setattr(self, "_user_split", True))
        self.splitter.setSizes([LEFT_WIDTH, 800])
        GATE.changed.connect(self._on_gate)  # a bound slot: disconnected when the page is destroyed

    def start_shown_run(self, rung: Rung | None, what: str, arms: tuple[str, str]) -> bool:
        """`rung`'s next planned run started on the run panel (`start_trial_run`), its plots and the trial's
        progress shown; False once the trial is decided."""
        started = start_trial_run(self.session, rung, self.run_panel, what, arms)
        if started is None:
            return False
        self._planned, data = started
        self.trial_plots.started(self._planned, data, self.session.trial_of(rung))
        self.show_trial_progress(rung)
        return True

    def add_run_panel(self, launcher: Launcher, ended: Callable[[RunData], None]) -> None:
        """The note under the run button (`busy_note`: why it is disabled) and the run panel, whose events the
        page reads (`_on_events`) and whose end calls `ended`."""
        self.busy_note = muted_label(hidden=True)
        self.left.addWidget(self.busy_note)
        self.run_panel = RunPanel(launcher)
        self.run_panel.ended.connect(ended)
        self.run_panel.events_received.connect(self._on_events)
        self.left.addWidget(self.run_panel)

    def _on_events(self, events: list) -> None:
        """A page's live reading of its run's events (none here)."""

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt API)
        """The left column gives up width first in a small window, so the plots keep room (down to 1024 px)."""
        super().resizeEvent(event)
        QTimer.singleShot(0, self, self._fit_columns)  # once the splitter has its new width (not after the page)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt API)
        """The left column asked for a new layout (a card shown or filled, e.g. the audit's findings arriving after
        the page was fitted): fit the columns again, as a resize does (the h42w walk: left as it was, the column
        scrolled sideways at 1024 px)."""
        if event.type() == QEvent.Type.LayoutRequest and watched is self._left_body():
            QTimer.singleShot(0, self, self._fit_columns)
        return super().eventFilter(watched, event)

    def _left_body(self) -> QWidget | None:
        scroll = self.splitter.widget(0) if hasattr(self, "splitter") else None
        return scroll.widget() if isinstance(scroll, QScrollArea) else None

    def _fit_columns(self) -> None:
        scroll = self.splitter.widget(0)  # the left column's scroll area
        column = scroll.widget() if isinstance(scroll, QScrollArea) else None
        if not self._user_split and isinstance(scroll, QScrollArea) and column is not None and scroll.isVisibleTo(self):
            total = sum(self.splitter.sizes())
            need = column.minimumSizeHint().width() + scroll.verticalScrollBar().sizeHint().width() + 2
            left = max(360, need, min(LEFT_WIDTH, int(total * 0.42)))
            if total > left and self.splitter.sizes()[0] != left:
                self.splitter.blockSignals(True)
                self.splitter.setSizes([left, total - left])
                self.splitter.blockSignals(False)

    def set_status(self, status: str) -> None:
        if status != self.status:
            self.status = status
            self.status_changed.emit(status)
        panel = getattr(self, "run_panel", None)
        if isinstance(panel, RunPanel):  # its chip and the step list say the same
            panel.show_step_status(status)
        self.navigation_changed.emit()

    # ------------------------------------------------------------ hooks

    def available(self) -> str:
        """'' when the page can be opened, else why not (shown in the step list)."""
        return ""

    def on_enter(self) -> None:
        """Called each time the page is shown; refresh from the session."""

    def stages(self) -> list[str]:
        """The engine's stages this page shows (its levers' names)."""
        return [lv.name for lv in levers.LEVERS if self.page_key and lv.page == self.page_key]

    def decided_rungs(self) -> list[Rung]:
        """The rungs this page's stages recorded with a verdict, in the study's order."""
        kinds = {lv.rung_kind for lv in levers.LEVERS if lv.name in self.stages()}
        return [r for r in (self.session.study.rungs if self.session.study else [])
                if r.kind in kinds and r.decision is not None]

    def not_run_rungs(self) -> list[Rung]:
        """The rungs this page's stages recorded as not run (skipped, with why), in the study's order."""
        kinds = {lv.rung_kind for lv in levers.LEVERS if lv.name in self.stages()}
        return [r for r in (self.session.study.rungs if self.session.study else [])
                if r.kind in kinds and r.skipped_reason is not None]

    def show_recorded(self) -> None:
        """A continued study: the step's status from the rungs its stages recorded (kept, measured, not run — the
        study decided it cannot differ — or none)."""
        decided = self.decided_rungs()
        if decided:
            self.set_status(PASSED if any(r.kept for r in decided) else NOT_KEPT)
        elif self.not_run_rungs():
            self.set_status(NOT_RUN)

    def can_go_next(self) -> bool:
        return True

    def next_hint(self) -> str:
        return ""

    def show_trial_progress(self, rung) -> None:
        """The `plan_note` of a page with a trial: where `rung`'s trial stands ("Pair 2 of 3–6 · about 1 min 40 s
        left"), its plan, and the study's stages still to come with their estimate (the engine's); once decided,
        only the rest; hidden when there is nothing to say."""
        trial = self.session.trial_of(rung)
        lines = []
        if trial is not None and trial.next_run() is not None:
            progress = self.session.trial_progress(rung)  # the engine's time left, its first pair included
            lines += [progress[0].upper() + progress[1:], f"Plan: {trial.plan().text()}."]
        rest = self.session.remaining_text()
        text = "\n".join(lines + ([rest] if rest else []))
        self.plan_note.setText(text)
        self.plan_note.setVisible(bool(text))

    def show_ways_forward(self, rung):
        """The `way_bar` of a page with a trial: the ways forward of `rung`'s inconclusive accuracy as buttons,
        enabled while it may be judged again; returns them (None: its verdict needs none)."""
        way = self.session.way_forward(rung)
        decision = getattr(rung, "decision", None)
        self.way_bar.set_options(way, way is not None and self.session.more_examples_here(rung, way),
                                 enabled=self.session.can_rejudge(rung),
                                 undo_loss=decision is not None and decision.way_forward == "loss")
        return way

    def ask_tolerance(self, suggested: float, forward=None) -> float | None:
        """The accuracy tolerance the user accepts, in pp (None: cancelled); `suggested`: where this interval
        passes. It says what it would accept (issue 39): the interval's worse end and every loss worse beyond
        its noise (`forward`: the `WayForward`)."""
        worst = getattr(forward, "worst_pp", None)
        worse = list(getattr(forward, "also_worse", ()) or ())
        accepts = (f"It accepts a model whose accuracy may be up to {worst:.2f} pp below the baseline's (the "
                   "interval's worse end)" if worst is not None else "It accepts the measured interval")
        accepts += (". Also worse beyond its noise: " + "; ".join(worse) + "." if worse else ".")
        value, ok = QInputDialog.getDouble(
            self, "Accuracy tolerance", "Accept an accuracy change of up to (percentage points):\n"
            f"this trial's interval passes at {suggested:g} pp. {accepts}\nThe tolerance becomes the study's: the "
            "confirmation, the record and the report use and state it.",
            suggested, 0.0, 100.0, 1)
        return value if ok else None

    def way_forward_taken(self, rung, way: str):
        """The button of a way forward on a page with a trial (`run_panel`, `busy_note`, `start_run(settings)`):
        judge `rung` again from its runs (the loss, a tolerance the user sets) and return its new verdict, or
        measure its trial again on more validation examples (None: nothing judged now). Nothing is kept
        without the verdict saying which rule judged it."""
        forward = self.session.way_forward(rung)
        if way == "metric" and not self.run_panel.is_running():  # undo "judge on the loss": no way forward needed
            try:
                return self.session.take_way_forward(rung, way)
            except UserError as e:
                self.busy_note.setText(str(e))
                self.busy_note.show()
                return None
        if forward is None or self.run_panel.is_running():
            return None
        if way == "examples":
            self.start_run(rung.settings.with_(val_examples=forward.examples_needed))
            return None
        if way == "seeds":  # both configurations trained again from more seeds, then judged again
            if not self.training_blocked():
                self.go_on(self.session.train_more_seeds)
            return None
        pp = None
        if way == "tolerance":  # offered with the tolerance this interval passes at (WayForwardBar)
            pp = self.ask_tolerance(forward.tolerance_pp, forward) if forward.tolerance_pp is not None else None
            if pp is None:
                return None
        try:
            return self.session.take_way_forward(rung, way, pp)
        except UserError as e:
            self.busy_note.setText(str(e))
            self.busy_note.show()
            return None

    def show_continue(self, rung) -> None:
        """The `continue_button` of a page with a trial: shown when the user stopped `rung`'s trial (Esc, Stop, or
        a study closed then), saying how many pairs its verdict still needs; it goes on with the same trial."""
        can = self.session.can_continue(rung) and not self.run_panel.is_running()
        if can and rung is self.session.resumed:  # cut off by Quit: it goes on to its verdict, as `tune` resumes it
            measured = counted(self.session.resumed_pairs(), "pair")
            self.continue_button.setText(f"Continue this trial ({measured} measured)")
        elif can:
            n = self.session.pairs_wanted(rung)
            self.continue_button.setText(f"Run {n} more pair{'s' if n != 1 else ''} (continue this trial)")
        self.continue_button.setVisible(can)
        self.continue_button.setEnabled(can and not GATE.why_busy())

    def request_next(self) -> None:
        self.advance.emit()

    def _on_gate(self, _busy: bool) -> None:
        self.update_controls()

    def update_controls(self) -> None:
        """Enable what may be used now; every Run button waits while any training goes (run_gate)."""

    def go_on(self, plan: Callable[[Rung], None]) -> None:
        """Measure more of the page's judged trial, as `plan` (the session's `continue_trial` or
        `train_more_seeds`) sets it for the trial's rung, and show its new verdict once measured."""

    def run_action(self) -> None:
        """Ctrl+Enter: the page's main Run button, when it is enabled."""

    def training_blocked(self) -> str:
        """Why no training may start now ('' if one may): one here, or in another tfturbo on this machine.
        Said on the page's busy note."""
        why = GATE.why_busy() or GATE.device_busy()
        note = getattr(self, "busy_note", None)
        if why and note is not None:
            note.setText(why[0].upper() + why[1:])
            note.show()
        return why

    def stop_action(self) -> None:
        """Esc: stop the page's run."""
        for panel in self.findChildren(RunPanel):
            if panel.is_running() and panel.stoppable:
                panel.stop()


def needs_baseline(session: WizardSession) -> str:
    return "" if session.baseline is not None else "measure the baseline first (Profile & baseline)"


class RungPage(WizardPage):
    """A page that measures one configuration against the baseline and decides whether to keep it."""

    stage = ""  # the engine's stage (a lever's name) this page's Run button measures
    run_button_text = "Run"

    def __init__(self, session: WizardSession, launcher: Launcher, parent: QWidget | None = None):
        super().__init__(session, launcher, parent)
        self.rung: Rung | None = None
        self.controls = QVBoxLayout()
        self.controls.setSpacing(8)
        self.left.addLayout(self.controls)
        self.audit_panel = RunPanel(launcher, stoppable=False)
        self.audit_panel.ended.connect(self._on_audit_ended)
        self.audit_panel.hide()
        self.left.addWidget(self.audit_panel)
        self._audited: str | None = None
        self._audit_findings: list[FindingDoc] = []
        self.run_button = QPushButton(self.run_button_text)
        self.run_button.setObjectName("primaryButton")
        self.run_button.clicked.connect(lambda: self.start_run())
        self.left.addWidget(self.run_button)
        self.add_run_panel(launcher, self._on_run_ended)
        self.plan_note = muted_label(hidden=True)  # the trial's progress, its plan and the study's rest
        self.left.addWidget(self.plan_note)
        # the verdicts of the page's other decided rungs, in the study's order (`show_earlier_decisions`): a second
        # trial on the page (steps per call after XLA) replaced the first one's card
        self.earlier = QVBoxLayout()
        self.earlier.setSpacing(10)
        self.earlier_cards: list[DecisionCard] = []
        self.left.addLayout(self.earlier)
        self.decision_card = DecisionCard()
        self.left.addWidget(self.decision_card)
        self.continue_button = QPushButton()  # a stopped trial: its next pairs, not a new trial from pair 1
        self.continue_button.clicked.connect(self.continue_run)
        self.continue_button.hide()
        self.left.addWidget(self.continue_button)
        self.run_panel.stopping.connect(lambda: self.session.stop_trial(self.rung) if self.rung is not None else None)
        self.way_bar = WayForwardBar()  # an inconclusive accuracy: the ways forward as buttons
        self.way_bar.chosen.connect(self.take_way_forward)
        self.left.addWidget(self.way_bar)
        self.findings = FindingsPanel()
        self.left.addWidget(self.findings, 1)
        self.plots = RunPlots()
        self.profile_view = ProfileView()  # this rung's op categories beside the baseline's
        self.profile_view.hide()
        self.right.addWidget(under_plots(self.plots, self.profile_view), 1)
        self.trial_plots = TrialPlots(self.plots)

    def available(self) -> str:
        return needs_baseline(self.session)

    def show_recorded(self) -> None:
        """A continued study: the page as its last trial left it — its verdict, its first pair's runs replayed
        from their run directories (the plots showed the baseline alone), its profile and findings."""
        super().show_recorded()
        self.update_controls()  # a finished study's: nothing to run
        resumed = self.session.resumed
        if resumed is not None and resumed.kind in {lv.rung_kind for lv in levers.LEVERS if lv.name in self.stages()}:
            self.show_resumed(resumed)
            return
        decided = [r for r in self.decided_rungs() if r.run]
        if not decided:
            return
        self.rung = decided[-1]
        self.show_earlier_decisions()
        own = self.session.data_of(self.rung)
        self.trial_plots.show_first_pair(self.session, self.rung)
        if own is not None:
            self.run_panel.show_finished(own)
        self.show_decision(self.rung.decision)
        self.show_rung_findings()
        self.findings.set_empty_text(self.after_trial_text)
        self.show_profile()

    def show_resumed(self, rung: Rung) -> None:
        """The trial a reopened study took up (`WizardSession.resumed`): what it measured, from its files — its
        pairs in the step list and the plan note, its first pair plotted, the earlier verdicts of the page — and
        the button that continues it."""
        self.rung = rung
        self.show_earlier_decisions()
        self.trial_plots.show_first_pair(self.session, rung)
        own = self.session.data_of(rung)
        if own is not None:
            self.run_panel.show_finished(own)
        self.show_trial_progress(rung)
        self.set_status(stopped(self.session.resumed_pairs()))
        self.update_controls()

    def on_enter(self) -> None:
        if self.rung is None:
            self.plots.show_run(None, self.session.data_of(self.session.baseline))
        elif self.rung.decision is not None and not self.run_panel.is_running():
            self.show_decision(self.rung.decision)  # its headline may be a later trial's now (the confirmation's)
            # the study's rest as it stands now: the walk read "Still to come: Batch size … Re-measure & compare"
            # here after both were done
            self.show_trial_progress(self.rung)
        self.audit()
        self.update_controls()

    @property
    def measured_rung(self) -> Rung:
        """The page's rung, once its trial started (or a continued study's last one)."""
        assert self.rung is not None, "the page's trial has started"
        return self.rung

    def configure(self) -> RunSettings:
        """The configuration this page measures, before the automatic fixes the user ticked."""
        raise NotImplementedError

    def rung_settings(self) -> RunSettings:
        """What the next run uses: the page's configuration with exactly the fix boxes shown on this page."""
        return self.configure().with_(**self.findings.offered_fixes())

    def can_run(self) -> bool:
        """Page-specific conditions for the Run button (besides no run or audit going)."""
        return True

    def update_controls(self) -> None:
        why = GATE.why_busy() if not self.run_panel.is_running() else ""
        self.run_button.setEnabled(not why and not self.run_panel.is_running() and not self.audit_panel.is_running()
                                   and self.session.baseline is not None and self.can_run()
                                   and not self.session.finished)
        self.run_button.setVisible(not self.session.finished)
        why = FINISHED_NOTE if self.session.finished else why
        self.busy_note.setText(why[0].upper() + why[1:] if why else "")
        self.busy_note.setVisible(bool(why))
        self.navigation_changed.emit()  # Next follows the run: set_status(RUNNING) came before it started
        self.findings.set_busy("The audit is running…" if self.audit_panel.is_running() else
                               "No findings so far in this trial." if self.run_panel.is_running() else None)
        if self.rung is not None and (self.rung.decision is not None or self.rung is self.session.resumed) \
                and not self.session.finished:
            self.show_continue(self.rung)
        else:
            self.continue_button.hide()

    def run_action(self) -> None:
        if self.run_button.isEnabled():
            self.start_run()

    # ------------------------------------------------------------ the audit before the run (optional)

    def audit_request(self) -> tuple[str, list[str], str] | None:
        """(key, audit argv, busy text) of the audit this page needs now; None for no audit."""
        return None

    def audit(self) -> None:
        """Run the page's audit unless the same one already ran (or is running)."""
        request = self.audit_request() if self.session.baseline is not None else None
        if request is None or self.audit_panel.is_running() or request[0] == self._audited:
            return
        key, argv, busy = request
        self._audited = key
        self.audit_panel.show()
        self.audit_panel.start("audit", argv, busy_text=busy, log_path=self.session.log_path())
        self.update_controls()

    def _on_audit_ended(self, data: RunData) -> None:
        self.audit_panel.setVisible(data.document is None)  # its error stays; a clean audit shows as findings
        if data.document is not None:
            found = findings_in(data.document.get("findings"))
            self._audit_findings = found
            self.session.record_audit(found)
            # this audit's findings replace the last audit's; the decided trial's stay (a reopened study's page
            # showed the audit's alone once it had run again)
            self.findings.set_findings(found)
            self._preselect_fixes(found)
            if self.rung is not None and self.rung.decision is not None and not self.run_panel.is_running():
                self.show_rung_findings()
        self.update_controls()
        self.audit()  # the request changed while the audit ran

    def _preselect_fixes(self, found: list[FindingDoc]) -> None:
        """Tick the automatic fixes the audit calls for (the recommended answer; the user may untick them)."""
        for f in found:
            field = AUTO_FIXES.get(f.get("code") or "", ("", ""))[0]
            if field:
                self.findings.set_fix(field, True)

    # ------------------------------------------------------------ the run

    def start_run(self, settings: RunSettings | None = None) -> None:
        """Start the page's trial (`settings`: instead of the page's, e.g. its rung on more validation
        examples): its runs follow one another (A and B, alternating) until it is decided."""
        if self.run_panel.is_running() or self.session.baseline is None or self.training_blocked():
            return
        self.rung = self.session.start_trial(self.stage, settings or self.rung_settings())
        self.trial_plots.reset()
        self.show_earlier_decisions()  # the last trial's verdict stays, beside the new one's
        if self.rung is None:  # the engine had nothing to measure: it recorded why (the stage's skip)
            self.update_controls()
            return
        self.decision_card.hide()
        self.way_bar.hide()
        self.profile_view.hide()  # the last trial's profile is not this one's: shown again once this one is judged
        self.findings.set_findings(self._audit_findings)  # the last run's verdict findings are superseded
        self.findings.set_fixes_locked(True)
        self.set_status(RUNNING)
        self._start_next_run()
        self.update_controls()

    def continue_run(self) -> None:
        """Go on with the page's stopped trial: its next pair, numbered after its complete ones."""
        if self.run_panel.is_running() or not self.session.can_continue(self.rung) or self.training_blocked():
            return
        if self.rung is not None and self.rung is self.session.resumed:  # its next run is planned: start it
            self.session.resumed = None
            self.go_on(lambda _rung: None)
            return
        self.go_on(self.session.continue_trial)

    def go_on(self, plan: Callable[[Rung], None]) -> None:
        plan(self.measured_rung)
        self.decision_card.hide()
        self.way_bar.hide()
        self.continue_button.hide()
        self.findings.set_fixes_locked(True)
        self.set_status(RUNNING)
        if not self._start_next_run():  # nothing left to measure: judged again as it stands
            self.show_decision(self.session.finish_trial(self.measured_rung))
        self.update_controls()

    def _start_next_run(self) -> bool:
        """The trial's next run (reference or candidate), or False when the trial is decided."""
        return self.start_shown_run(self.rung, "Trial", ("candidate", "reference"))

    def _on_events(self, events: list) -> None:
        if any(e.get("type") in (protocol.FINDING, protocol.RESULT) for e in events) and self.run_panel.data:
            self.findings.add_findings(self.run_panel.data.findings)

    def _on_run_ended(self, data: RunData) -> None:
        self.plots.refresh()  # paint the last samples now, not at the next timer tick
        assert self.rung is not None
        self.session.record_run(self.rung, self._planned, data)
        self.findings.add_findings(data.findings)
        if data.status == protocol.RunStatus.COMPLETED and self._start_next_run():
            return
        self.findings.set_fixes_locked(False)
        if data.status == protocol.RunStatus.COMPLETED:
            self.findings.mark_applied(self.rung.settings)
        self._explain_failure(data)
        decision = self.session.finish_trial(self.rung)
        own = self.session.data_of(self.rung)  # the candidate's first run: the rung's own
        # decided, however it ended (the last pair, a stop, a failure): the first pair, the full-length runs with
        # validation the accuracy verdict compared — the rung's own run beside its reference
        self.trial_plots.show_first_pair(self.session, self.rung)
        if data.status == protocol.RunStatus.COMPLETED and own is not None and own is not data:
            self.run_panel.show_finished(own)  # the configuration it measured, not the reference run that ended last
        self.show_decision(decision)
        stopped = self.session.stopped_so_far(self.rung)
        if stopped and data.status == protocol.RunStatus.CANCELLED:
            self.run_panel.show_stopped_trial(stopped)
        self.show_trial_progress(self.rung)
        self.findings.add_findings(self.rung_findings())
        self.findings.set_empty_text(self.after_trial_text)
        self.show_profile()
        self.set_status(PASSED if self.passed(decision) else
                        NOT_KEPT if data.status == protocol.RunStatus.COMPLETED else ATTENTION)
        self.update_controls()

    after_trial_text = "The audit and the trial's runs found nothing to fix."  # an empty panel, once decided

    def show_decision(self, decision) -> None:
        """The verdict card, and for an inconclusive accuracy the ways forward, as words and as buttons."""
        rung = self.measured_rung
        way = self.show_ways_forward(rung)
        self.decision_card.set_decision(decision, rung.settings.label(),
                                        config_words(rung.compared_with, self.session.ensure_study().rungs),
                                        fixes=fixes_on(rung.settings, fixes_not_applied(self.findings.findings)),
                                        way_forward=way.lines(self.way_bar.offered()) if way else (),
                                        shown=headline(rung.name, self.session.ensure_study().rungs), rung=rung.name,
                                        stopped=self.session.stopped_so_far(rung))
        self.show_earlier_decisions()
        self.show_continue(rung)

    def show_earlier_decisions(self) -> None:
        """A verdict card for each rung of this page the study decided, other than the page's own (`rung`, on
        `decision_card`): from the study's rungs, so a trial started after another on the same page (steps per
        call after XLA), or a reopened study, shows every decision the page made."""
        study = self.session.ensure_study()
        others = [r for r in self.decided_rungs() if r is not self.rung and r.decision is not None]
        while len(self.earlier_cards) < len(others):
            card = DecisionCard()
            self.earlier.addWidget(card)
            self.earlier_cards.append(card)
        for card, rung in zip(self.earlier_cards, others):
            decision = rung.decision
            assert decision is not None
            card.set_decision(decision, rung.settings.label(), config_words(rung.compared_with, study.rungs),
                              fixes=fixes_on(rung.settings, fixes_not_applied(decision.findings)),
                              shown=headline(rung.name, study.rungs), rung=rung.name)
        for card in self.earlier_cards[len(others):]:
            card.hide()

    def take_way_forward(self, way: str) -> None:
        """A way forward's button (`WizardPage.way_forward_taken`): the verdict card shows the new verdict."""
        decision = self.way_forward_taken(self.rung, way)
        if decision is None:
            return
        self.show_decision(decision)
        self.findings.add_findings(decision.findings)
        self.set_status(PASSED if self.passed(decision) else NOT_KEPT)
        self.update_controls()

    def show_profile(self) -> None:
        """Where this rung's time went against its reference's."""
        run, _ = rung_profile(self.session, self.rung)
        base, against = reference_profile(self.session, self.rung)
        self.profile_view.set_profile(run, base, against)
        self.profile_view.reveal()

    def show_rung_findings(self) -> None:
        """The decided trial's findings (`rung_findings`) added to the panel, the automatic fixes its own run
        applied marked so (a reopened page said "Fix it in the next run" for the fix the run had made)."""
        self.findings.add_findings(self.rung_findings())
        own = self.session.data_of(self.measured_rung)
        if own is not None and own.status == protocol.RunStatus.COMPLETED:
            self.findings.mark_applied(self.measured_rung.settings)

    def rung_findings(self) -> list[FindingDoc]:
        """What the page's decided trial found, from the study's files: its own run's findings, its verdict's,
        and the op categories that got slower than its reference's profile (OP_SLOWER). The same list live, on a
        reopened study and after the page's audit ran again (the reopened page dropped the profile's)."""
        rung = self.measured_rung
        own = self.session.data_of(rung)
        run, _ = rung_profile(self.session, rung)
        base, _against = reference_profile(self.session, rung)
        trial = self.session.trial_of(rung)
        against = next((r for r in self.session.ensure_study().rungs if r.name == rung.compared_with),
                       self.session.measured_baseline)  # a reopened study's trial: the rung it was measured against
        slower = compare_findings(base, run, trial.a if trial is not None else against.settings, rung.settings)
        return [*(own.findings if own is not None else []), *(rung.decision.findings if rung.decision else []),
                *(f.to_dict() for f in slower)]

    def passed(self, decision) -> bool:
        """The step passes when its rung was kept (a page measuring several levers overrides this)."""
        return decision.kept

    def _explain_failure(self, data: RunData) -> None:
        """A run that did not complete says what to do in the app's words; an automatic fix that failed
        gets a button to run again without it."""
        assert self.rung is not None
        why = explain(data.status, data.error, self.rung.settings)
        if why is None:
            return
        box = self.run_panel.error_box
        box.show_error(why.message, why.fix, why.details)
        if why.untick is not None:
            field = why.untick

            def run_without() -> None:
                self.findings.set_fix(field, False)
                self.start_run()

            box.set_action("Run again without the automatic fix", run_without)

    def can_go_next(self) -> bool:
        return not self.run_panel.is_running()

    def next_hint(self) -> str:
        if self.run_panel.is_running():
            return "Measuring…"
        return "You may skip this step: nothing is kept unless measured" if self.rung is None else ""
