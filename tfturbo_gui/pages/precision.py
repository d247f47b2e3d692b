"""Page 3 — Mixed precision: audit the model under a 16-bit policy, then measure it.

The audit for the chosen policy runs as soon as the page shows (and again
when the policy changes): a 16-bit head, a custom loop without loss scaling,
sizes that are not multiples of 8. The float32-head fix can be applied by the
run itself. The run is drawn beside the baseline, with the loss scale live
under mixed_float16, and kept only if it is faster and as accurate.
"""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QFormLayout, QWidget

from tfturbo.settings import POLICIES, RunSettings
from tfturbo.tune.levers.mixed_precision import LEVER as MIXED_PRECISION

from ..run_process import Launcher
from ..session import WizardSession, audit_argv
from .base import RungPage
from ..labels import muted_label

SIXTEEN_BIT = tuple(p for p in POLICIES if p != "float32")


class PrecisionPage(RungPage):
    title = MIXED_PRECISION.title
    intro = MIXED_PRECISION.intro
    run_button_text = "Run with this policy"

    def __init__(self, session: WizardSession, launcher: Launcher, parent: QWidget | None = None):
        super().__init__(session, launcher, parent)
        self.policy = QComboBox()
        self.policy.addItems(SIXTEEN_BIT)
        self.policy.currentTextChanged.connect(self._on_policy)
        form = QFormLayout()
        form.addRow("Policy", self.policy)
        self.controls.addLayout(form)
        self.recommendation = muted_label()
        self.controls.addWidget(self.recommendation)
        self.findings.set_empty_text("The audit for the chosen policy found nothing to fix.")
        self._initialised = False

    stage = MIXED_PRECISION.name
    page_key = MIXED_PRECISION.page

    def on_enter(self) -> None:
        if not self._initialised:
            self._initialised = True
            policies = self.session.recommended_policies()
            env = self.session.environment
            recommended, reason = (env.recommended_policy, env.reason or "") if env is not None else (None, "")
            if recommended == policies[0]:
                text = f"Recommended for this machine: {recommended}" + (f" — {reason}" if reason else "") + "."
            else:
                text = (f"This machine's recommended policy is {recommended or 'unknown'}"
                        + (f" ({reason})" if reason else "") + f"; {policies[0]} is measured to check it.")
            self.recommendation.setText(text + " The measurement decides.")
            self.policy.blockSignals(True)
            self.policy.setCurrentText(policies[0])
            self.policy.blockSignals(False)
        super().on_enter()

    def _on_policy(self, _policy: str) -> None:
        self.audit()

    def audit_request(self) -> tuple[str, list[str], str] | None:
        policy = self.policy.currentText()
        batch = self.session.measured_best.settings.batch_size
        return policy, audit_argv(self.session.workload, policy, batch_size=batch,
                                  script_args=self.session.script_args, fit_call=self.session.fit_call), \
            f"Auditing the model under {policy}…"

    def configure(self) -> RunSettings:
        """The engine's candidate for the chosen policy (on the best kept configuration, its fixes applied)."""
        return MIXED_PRECISION.candidates(self.session.decisions, chosen=self.policy.currentText())[0].settings
