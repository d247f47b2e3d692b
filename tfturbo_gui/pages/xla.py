"""Page 4 — XLA: audit the dataset's shapes, then compile with jit_compile=True and measure.

XLA compiles once per input shape, so the audit looks for a partial last
batch and dynamic dimensions first; dropping the partial batch can be applied
by the run itself. During the run a recompilation storm shows up live as a
finding. The rung extends the best configuration kept so far and must beat
it as well as the baseline.

The page holds the other compilation and host-overhead levers of the ladder,
as `tfturbo tune` measures them, from the same `StudyDecisions`: once the XLA
trial is judged, the policy's follow-up (TensorFlow's auto-clustering when
jit_compile=True was refused or not kept) becomes the main button's action;
when the engine's XLA lever refuses jit_compile=True before any training (the
audit found XLA cannot take effect: XLA_NOT_ACTIVE), the page says so on a
card of its own with what would enable it, and offers only auto-clustering;
steps_per_execution is offered in its own section when the policy has
candidates for it (short steps), else the policy's reason why not is shown.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QLabel, QPushButton, QVBoxLayout, QWidget

from tfturbo.settings import RunSettings
from tfturbo.tune.levers import Candidate
from tfturbo.tune.levers.autoclustering import LEVER as AUTOCLUSTERING
from tfturbo.tune.levers.steps_per_execution import LEVER as STEPS_PER_EXECUTION
from tfturbo.tune.levers.xla import LEVER as XLA
from tfturbo.tune.skip import NOT_RUN as CANNOT_TAKE_EFFECT, SKIPPED, Skip

from ..labels import card_column, card_reason, muted_label, sentence
from ..run_process import Launcher
from ..session import WizardSession, audit_argv
from ..step_status import NOT_RUN, NOT_STARTED
from .base import RungPage, add_section

AUTOCLUSTERING_TEXT = "Try TensorFlow's auto-clustering instead"
NOT_RUN_TITLE = "XLA is not run: it cannot take effect for this model"


class NotRunCard(QFrame):
    """The XLA lever's refusal before any training: what the study already knows, what would enable XLA, and
    the alternative the page offers (or that none is left)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        layout = card_column(self, "card")
        self.headline = QLabel(NOT_RUN_TITLE)
        self.headline.setObjectName("cardTitle")
        self.headline.setWordWrap(True)
        layout.addWidget(self.headline)
        self.reason = card_reason(layout)
        self.offered = muted_label()
        self.offered.setTextFormat(Qt.TextFormat.PlainText)
        layout.addWidget(self.offered)
        self.hide()

    def show_refusal(self, reason: Skip, alternative: Candidate | None, measured: bool) -> None:
        """`alternative`: the engine's next candidate instead (auto-clustering); `measured`: it was measured."""
        self.reason.setText(sentence(reason.why if reason.word == CANNOT_TAKE_EFFECT else str(reason)))
        self.offered.setText("Offered instead: TensorFlow's auto-clustering, measured as a trial with the button "
                             "below." if alternative is not None else
                             "TensorFlow's auto-clustering was measured instead (its verdict is below)." if measured
                             else "Nothing else to measure for XLA here; the study goes on without it.")
        self.show()


class XlaPage(RungPage):
    title = XLA.title
    intro = XLA.intro
    run_button_text = "Run with XLA"
    page_key = XLA.page

    def __init__(self, session: WizardSession, launcher: Launcher, parent: QWidget | None = None):
        super().__init__(session, launcher, parent)
        self.extends = muted_label()
        self.controls.addWidget(self.extends)
        self.follow_up_note = muted_label(hidden=True)  # why the engine's next XLA candidate is the next action
        self.controls.addWidget(self.follow_up_note)
        self.not_run = NotRunCard()  # jit_compile=True refused before training: why, and what is offered instead
        self.controls.addWidget(self.not_run)
        spe = QVBoxLayout()  # a lever of its own, below the XLA run and its verdict (between them it read as theirs)
        add_section(spe, STEPS_PER_EXECUTION.title)
        self.spe_note = muted_label()  # the candidate's note, or the engine's reason it is not offered
        spe.addWidget(self.spe_note)
        self.spe_button = QPushButton()
        self.spe_button.clicked.connect(self.start_steps_per_execution)
        spe.addWidget(self.spe_button)
        self.left.insertLayout(self.left.indexOf(self.decision_card) + 1, spe)
        self.findings.set_empty_text("The shape audit found no partial batch and no dynamic dimension.")
        self.measuring: Candidate | None = None  # the engine's candidate of the trial started last (None: XLA)

    @property
    def stage(self) -> str:  # type: ignore[override]  # RungPage's class attribute, computed here
        if self.measuring is None:
            return XLA.name
        return STEPS_PER_EXECUTION.name if self.measuring.kind == STEPS_PER_EXECUTION.rung_kind else \
            AUTOCLUSTERING.name if self.measuring.settings.xla_autoclustering else XLA.name

    def base_settings(self) -> RunSettings:
        return self.session.measured_best.settings


    def audit_request(self) -> tuple[str, list[str], str] | None:
        s = self.base_settings()
        argv = audit_argv(self.session.workload, s.policy or "float32", jit=True, batch_size=s.batch_size,
                          script_args=self.session.script_args, fit_call=self.session.fit_call)
        return " ".join(argv), argv, "Auditing the dataset's shapes for XLA…"

    def configure(self) -> RunSettings:
        """The engine's XLA candidate on the best kept configuration (its fixes applied)."""
        return XLA.candidates(self.session.decisions)[0].settings

    def rung_settings(self) -> RunSettings:
        """jit_compile=True with the fix boxes shown; the engine's other candidates (16-bit under XLA,
        auto-clustering, steps_per_execution) exactly as `tfturbo tune` measures them: the boxes answer the
        shape audit of jit_compile=True, and unticked they took a fix out of the configuration built on."""
        if self.measuring is not None and self.measuring.slug != XLA.name:
            return self.measuring.settings
        return super().rung_settings()

    def refused(self) -> Skip | None:
        """Why the engine's XLA lever will not run jit_compile=True (the study already knows it cannot take effect,
        or a TPU), asked of the lever as `tfturbo tune` asks it; None when it measures it (or did)."""
        decisions = self.session.decisions
        if decisions is None or decisions.best is None or any(
                r.kind == XLA.rung_kind and not r.settings.xla_autoclustering for r in decisions.rungs):
            return None
        first = next(iter(XLA.candidates(decisions)), None)
        return first.skipped_reason if first is not None else None

    def can_run(self) -> bool:
        """No "Run with XLA" when the lever refused it: only its alternative (auto-clustering), if any."""
        return self.refused() is None or self.follow_up() is not None

    def follow_up(self) -> Candidate | None:
        """The engine's next XLA candidate once jit_compile=True on the best configuration is judged or refused
        (16-bit under XLA, auto-clustering), or None."""
        if self.session.decisions is None:
            return None
        if not any(r.kind == XLA.rung_kind for r in self.session.decisions.rungs) and self.refused() is None:
            return None
        left = [c for lever in (XLA, AUTOCLUSTERING) for c in self.session.pending(lever.name)
                if c.skipped_reason is None]
        return left[0] if left else None

    def steps_per_execution(self) -> tuple[Candidate | None, str]:
        """(the engine's next steps_per_execution candidate not yet measured, its note) or (None, why not)."""
        if self.session.decisions is None:
            return None, "Offered once the baseline's step time is measured."
        offered = self.session.pending(STEPS_PER_EXECUTION.name)
        if offered and offered[0].skipped_reason is not None:
            skip = offered[0].skipped_reason
            return None, sentence(f"not offered — {skip.why if skip.word == SKIPPED else skip}")
        if not offered:
            measured = [r.settings.steps_per_execution for r in self.session.decisions.rungs
                        if r.kind == STEPS_PER_EXECUTION.rung_kind]
            return None, sentence(f"measured {', '.join(map(str, measured))} steps per call: none was kept")
        return offered[0], sentence(offered[0].note)

    def start_run(self, settings=None) -> None:
        """The main button measures the engine's next XLA candidate when there is one, else jit_compile=True
        (`settings`: the last trial's rung measured again, e.g. on more validation examples)."""
        if settings is None:
            self.measuring = self.follow_up()
        super().start_run(settings)

    def start_steps_per_execution(self) -> None:
        """Measure the engine's next steps_per_execution candidate as this page's trial."""
        self.measuring = self.steps_per_execution()[0]
        if self.measuring is not None:
            super().start_run()

    def update_controls(self) -> None:
        """Each lever's button says what the engine would measure next (it changes as verdicts come in), and what
        it builds on (the walk read "float32, batch 64" after 22 steps per call was kept on this page)."""
        super().update_controls()
        if self.session.baseline is not None:
            self.extends.setText(f"Builds on the best configuration kept so far: {self.base_settings().label()}.")
        nxt = self.follow_up()
        self.run_button.setText(self.run_button_text if nxt is None else AUTOCLUSTERING_TEXT
                                if nxt.settings.xla_autoclustering else f"Run {nxt.settings.label()}")
        refused = self.refused()
        self.follow_up_note.setText(f"Why: {nxt.note}." if nxt is not None else "")
        self.follow_up_note.setVisible(nxt is not None and refused is None)  # the card says it then
        if refused is not None:
            self.not_run.show_refusal(refused, nxt, any(r.settings.xla_autoclustering
                                                        for r in self.session.decisions.rungs))
            if self.rung is None and self.status == NOT_STARTED:  # decided before training: never "not started"
                self.set_status(NOT_RUN)
        else:
            self.not_run.hide()
        finished = self.session.finished  # every step decided: only what was measured is shown
        self.run_button.setVisible((refused is None or nxt is not None) and not finished)
        spe, note = self.steps_per_execution()
        self.spe_note.setText(note)
        self.spe_button.setVisible(spe is not None and not finished)
        if spe is not None:
            self.spe_button.setText(f"Measure {spe.settings.steps_per_execution} steps per call")
        self.spe_button.setEnabled(spe is not None and self.run_button.isEnabled())

    def passed(self, decision) -> bool:
        """The step passes when any of its levers was kept (XLA, auto-clustering or steps_per_execution)."""
        kinds = (XLA.rung_kind, STEPS_PER_EXECUTION.rung_kind)
        return decision.kept or any(r.kept for r in self.session.decisions.rungs if r.kind in kinds)
