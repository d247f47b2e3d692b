"""Page 6 — Batch size: a larger batch, measured rather than guessed.

The proposal is the first step of `tune.batch.next_size` (the search
`tfturbo tune` runs): double the batch, within the memory available with a
safety margin, with the learning rate scaled by the linear rule.
The user may change it; the run is kept only if throughput per sample rises
beyond the noise and accuracy holds. Below, on a machine with several GPUs,
the same configuration's scaling across them (`ScalingSection`).
"""

from __future__ import annotations

from PySide6.QtWidgets import QFormLayout, QLabel, QSpinBox, QWidget

from tfturbo import summary as summ
from tfturbo.console import fmt_bytes
from tfturbo.settings import RunSettings
from tfturbo.tune.batch import next_size
from tfturbo.tune.study import RungKind

from ..cards import FactsCard
from ..run_process import Launcher
from ..scaling_section import ScalingSection
from ..session import WizardSession
from .base import RungPage
from ..labels import muted_label


class BatchPage(RungPage):
    title = "Batch size"
    intro = ("Mixed precision and XLA usually lower peak memory. A larger batch uses it: more samples per step, "
             "with the learning rate scaled by the same factor (linear scaling rule). Throughput is compared per "
             "sample, so a slower but larger step can still be a win.")
    run_button_text = "Run with this batch size"
    rung_kind = rung_slug = RungKind.LARGER_BATCH

    def __init__(self, session: WizardSession, launcher: Launcher, parent: QWidget | None = None):
        super().__init__(session, launcher, parent)
        self.memory = FactsCard("Memory")
        self.controls.addWidget(self.memory)
        self.plan_text = muted_label()
        self.controls.addWidget(self.plan_text)
        self.batch = QSpinBox()
        self.batch.setRange(1, 1 << 20)
        self.batch.setSingleStep(8)
        self.batch.valueChanged.connect(self._on_batch)
        self.lr = QLabel()
        self.lr.setWordWrap(True)
        form = QFormLayout()
        form.addRow("Batch size", self.batch)
        form.addRow("Learning rate", self.lr)
        self.controls.addLayout(form)
        self.findings.set_empty_text("No findings yet: the trial's runs report here.")
        self.scaling = ScalingSection(session, launcher)
        self.scaling.running_changed.connect(self.navigation_changed)
        self.left.addWidget(self.scaling)

    after_trial_text = "The trial's runs raised no findings."  # no audit on this page

    def _best(self):
        return self.session.best or self.session.baseline

    def current_batch(self) -> int:
        best = self._best()
        return (best.settings.batch_size or summ.batch_size(best.summary or {})) if best else 1

    def on_enter(self) -> None:
        super().on_enter()
        base, best = self.session.baseline, self._best()
        if base is None or best is None:
            return
        base_peak = base.summary.get("peak_memory_bytes")
        best_peak = (best.summary or {}).get("peak_memory_bytes")
        kind = (best.summary or {}).get("memory_kind")
        self.memory.set_facts([
            ("Baseline peak", f"{fmt_bytes(base_peak)} ({base.summary.get('memory_kind') or 'host'})"),
            ("Tuned peak", f"{fmt_bytes(best_peak)} — {best.settings.label()}"),
            ("Freed", fmt_bytes(base_peak - best_peak) if isinstance(base_peak, (int, float)) and
             isinstance(best_peak, (int, float)) and base_peak > best_peak else "nothing measurable"),
        ])
        available = ((self.session.environment or {}).get("memory") or {}).get("available_bytes")
        plan = next_size(self.current_batch(), [], best_peak, available, kind)
        how, _, what = plan.reason.partition(": ")  # "doubling: batch 64 → 128; …" reads "Proposed (doubling): …"
        self.plan_text.setText(f"Proposed ({how}): {what}" if not plan.done and what else
                               plan.reason[0].upper() + plan.reason[1:])
        self.batch.setValue(plan.batch_size or self.current_batch())
        self._on_batch(self.batch.value())

    def lr_scale(self) -> float:
        return self.batch.value() / self.current_batch()

    def _on_batch(self, value: int) -> None:
        scale = self.lr_scale()
        self.lr.setText(f"× {scale:.2f} of the tuned run's (linear scaling rule)" if value != self.current_batch()
                        else "unchanged")
        self.update_controls()

    def can_run(self) -> bool:
        return self.batch.value() != self.current_batch()

    def update_controls(self) -> None:
        super().update_controls()
        self.scaling.update_controls()

    def can_go_next(self) -> bool:
        return super().can_go_next() and not self.scaling.is_running()

    def next_hint(self) -> str:
        return "Measuring scaling…" if self.scaling.is_running() else super().next_hint()

    def configure(self) -> RunSettings:
        s = self._best().settings
        return s.with_(batch_size=self.batch.value(), lr_scale=s.lr_scale * self.lr_scale())
