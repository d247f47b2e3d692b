"""A lever's own page, for a lever without a page of its own (`Lever.page` empty): the engine's next candidate.

The page shows the lever's words (title, intro), what the engine would
measure next and why (or why nothing), and measures it as a trial against
what the engine measures it against — the same rung `tfturbo tune` measures
at that place in the checklist.
"""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from tfturbo.settings import RunSettings
from tfturbo.tune.levers import Candidate, Lever

from ..labels import muted_label, sentence
from ..run_process import Launcher
from ..session import WizardSession
from .base import RungPage


class LeverPage(RungPage):
    lever: Lever  # set by `page_for`

    def __init__(self, session: WizardSession, launcher: Launcher, parent: QWidget | None = None):
        super().__init__(session, launcher, parent)
        self.plan_text = muted_label()
        self.controls.addWidget(self.plan_text)
        self.findings.set_empty_text("No findings for this lever yet.")

    @property
    def stage(self) -> str:  # type: ignore[override]  # RungPage's class attribute, this page's lever's
        return self.lever.name

    def stages(self) -> list[str]:
        return [self.lever.name]

    def candidate(self) -> Candidate | None:
        """The engine's next candidate of this lever (None: nothing to measure; `plan_text` says why)."""
        pending = self.session.pending(self.lever.name)
        return next((c for c in pending if c.skipped_reason is None), None)

    def on_enter(self) -> None:
        super().on_enter()
        pending = self.session.pending(self.lever.name)
        why = str(pending[0].skipped_reason or pending[0].note) if pending else "nothing to measure for this study now"
        self.plan_text.setText(sentence(why))

    def can_run(self) -> bool:
        return self.candidate() is not None

    def configure(self) -> RunSettings:
        candidate = self.candidate()
        assert candidate is not None, "the Run button is enabled with a candidate (can_run)"
        return candidate.settings


def page_for(lever: Lever) -> type[LeverPage]:
    """The page class of a lever without a page of its own."""
    return type(f"{lever.name.title().replace('_', '')}Page", (LeverPage,),
                {"lever": lever, "title": lever.title, "intro": lever.intro,
                 "run_button_text": f"Measure {lever.title.lower()}"})
