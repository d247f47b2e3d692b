"""Page 4 — XLA: audit the dataset's shapes, then compile with jit_compile=True and measure.

XLA compiles once per input shape, so the audit looks for a partial last
batch and dynamic dimensions first; dropping the partial batch can be applied
by the run itself. During the run a recompilation storm shows up live as a
finding. The rung extends the best configuration kept so far and must beat
it as well as the baseline.
"""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QWidget

from tfturbo.settings import RunSettings
from tfturbo.tune.study import RungKind

from ..run_process import Launcher
from ..session import WizardSession, audit_argv
from .base import RungPage


class XlaPage(RungPage):
    title = "XLA compilation"
    intro = ("Compile the training step with XLA (jit_compile=True) to fuse element-wise operations. The first "
             "steps compile and are excluded from the timings; a dataset whose batch shape varies makes XLA "
             "recompile, so the shapes are audited first.")
    run_button_text = "Run with XLA"
    rung_kind = rung_slug = RungKind.XLA

    def __init__(self, session: WizardSession, launcher: Launcher, parent: QWidget | None = None):
        super().__init__(session, launcher, parent)
        self.extends = QLabel()
        self.extends.setObjectName("muted")
        self.extends.setWordWrap(True)
        self.controls.addWidget(self.extends)
        self.findings.set_empty_text("The shape audit found no partial batch and no dynamic dimension.")

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
