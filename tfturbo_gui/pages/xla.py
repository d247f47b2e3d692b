"""Page 4 — XLA: audit the dataset's shapes, then compile with jit_compile=True and measure.

XLA compiles once per input shape, so the audit looks for a partial last
batch and dynamic dimensions first; dropping the partial batch can be applied
by the run itself. During the run a recompilation storm shows up live as a
finding. The rung extends the best configuration kept so far and must beat
it as well as the baseline.

The page holds the other compilation and host-overhead levers of the ladder,
as `tfturbo tune` measures them, from the same `TuningPolicy`: once the XLA
trial is judged, the policy's follow-up (TensorFlow's auto-clustering when
jit_compile=True was refused or not kept) becomes the main button's action;
steps_per_execution is offered in its own section when the policy has
candidates for it (short steps), else the policy's reason why not is shown.
"""

from __future__ import annotations

from PySide6.QtWidgets import QPushButton, QVBoxLayout, QWidget

from tfturbo.settings import RunSettings
from tfturbo.trials.policy import STEPS_PER_EXECUTION, XLA, Candidate

from ..labels import muted_label, sentence
from ..run_process import Launcher
from ..session import WizardSession, audit_argv
from .base import RungPage, add_section

AUTOCLUSTERING_TEXT = "Try TensorFlow's auto-clustering instead"


class XlaPage(RungPage):
    title = "XLA compilation"
    intro = ("Compile the training step with XLA (jit_compile=True) to fuse element-wise operations. The first "
             "steps compile and are excluded from the timings; a dataset whose batch shape varies makes XLA "
             "recompile, so the shapes are audited first.")
    run_button_text = "Run with XLA"

    def __init__(self, session: WizardSession, launcher: Launcher, parent: QWidget | None = None):
        super().__init__(session, launcher, parent)
        self.extends = muted_label()
        self.controls.addWidget(self.extends)
        self.follow_up_note = muted_label(hidden=True)  # why the policy's follow-up is the next action
        self.controls.addWidget(self.follow_up_note)
        spe = QVBoxLayout()  # a lever of its own, below the XLA run and its verdict (between them it read as theirs)
        add_section(spe, "Steps per execution")
        self.spe_note = muted_label()  # the candidate's note, or the policy's reason it is not offered
        spe.addWidget(self.spe_note)
        self.spe_button = QPushButton()
        self.spe_button.clicked.connect(self.start_steps_per_execution)
        spe.addWidget(self.spe_button)
        self.left.insertLayout(self.left.indexOf(self.decision_card) + 1, spe)
        self.findings.set_empty_text("The shape audit found no partial batch and no dynamic dimension.")
        self.measuring: Candidate | None = None  # the policy's candidate of the trial started last (None: XLA)

    @property
    def rung_kind(self) -> str:
        return self.measuring.kind if self.measuring is not None else XLA

    @property
    def rung_slug(self) -> str:  # runs/NN-xla-autoclustering, NN-spe4, … as `tfturbo tune` names the rungs
        return self.measuring.slug if self.measuring is not None else XLA

    def base_settings(self) -> RunSettings:
        best = self.session.best
        return best.settings if best is not None else self.session.common_settings()

    def on_enter(self) -> None:
        if self.session.baseline is not None:
            self.extends.setText(f"Builds on the best configuration kept so far: {self.base_settings().label()}.")
        super().on_enter()

    def audit_request(self) -> tuple[str, list[str], str] | None:
        s = self.base_settings()
        argv = audit_argv(self.session.workload, s.policy, jit=True, batch_size=s.batch_size,
                          script_args=self.session.script_args)
        return " ".join(argv), argv, "Auditing the dataset's shapes for XLA…"

    def configure(self) -> RunSettings:
        return self.base_settings().with_(jit_compile=True)

    def rung_settings(self) -> RunSettings:
        """jit_compile=True with the fix boxes shown; a policy candidate (auto-clustering, steps_per_execution)
        exactly as `tfturbo tune` measures it: the boxes answer the shape audit of jit_compile=True, and
        unticked they took a fix out of the kept configuration the candidate builds on."""
        if self.measuring is not None:
            return self.measuring.settings
        return super().rung_settings()

    def follow_up(self) -> Candidate | None:
        """The policy's next XLA candidate once the XLA trial is judged (auto-clustering), or None."""
        policy = self.session.policy
        return next(iter(policy.follow_up(XLA)), None) if policy is not None else None

    def steps_per_execution(self) -> tuple[Candidate | None, str]:
        """(the policy's next steps_per_execution candidate not yet measured, its note) or (None, why not)."""
        policy = self.session.policy
        if policy is None:
            return None, "Offered once the baseline's step time is measured."
        offered = policy.candidates(STEPS_PER_EXECUTION)
        if offered[0].skipped_reason is not None:
            return None, sentence(f"not offered — {offered[0].skipped_reason.removeprefix('skipped: ')}")
        measured = [r.settings.steps_per_execution for r in policy.rungs if r.kind == STEPS_PER_EXECUTION]
        left = [c for c in offered if c.settings.steps_per_execution not in measured]
        if not left:
            return None, sentence(f"measured {', '.join(map(str, measured))} steps per call: none was kept")
        return left[0], sentence(left[0].note)

    def start_run(self) -> None:
        """The main button measures the policy's follow-up when there is one, else jit_compile=True."""
        self.measuring = self.follow_up()
        super().start_run()

    def start_steps_per_execution(self) -> None:
        """Measure the policy's next steps_per_execution candidate as this page's trial."""
        self.measuring = self.steps_per_execution()[0]
        if self.measuring is not None:
            super().start_run()

    def update_controls(self) -> None:
        """Each lever's button says what the policy would measure next (it changes as verdicts come in)."""
        super().update_controls()
        nxt = self.follow_up()
        self.run_button.setText(AUTOCLUSTERING_TEXT if nxt is not None else self.run_button_text)
        self.follow_up_note.setText(f"Why: {nxt.note}." if nxt is not None else "")
        self.follow_up_note.setVisible(nxt is not None)
        spe, note = self.steps_per_execution()
        self.spe_note.setText(note)
        self.spe_button.setVisible(spe is not None)
        if spe is not None:
            self.spe_button.setText(f"Measure steps_per_execution={spe.settings.steps_per_execution}")
        self.spe_button.setEnabled(spe is not None and self.run_button.isEnabled())

    def passed(self, decision) -> bool:
        """The step passes when any of its levers was kept (XLA, auto-clustering or steps_per_execution)."""
        kinds = (XLA, STEPS_PER_EXECUTION)
        return decision.kept or any(r.kept for r in self.session.policy.rungs if r.kind in kinds)
