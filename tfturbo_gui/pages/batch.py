"""Batch size: a larger batch, measured rather than guessed.

The proposal is the engine's next candidate of the batch lever
(`tune.levers.batch_size`, the search `tfturbo tune` runs): double the batch,
within the memory available with a safety margin, then one binary step, the
learning rate scaled by the rule of the optimizer (linear for SGD, square root
for Adam and the adaptive family). The user may change the size (the
lever scales the learning rate for it); the run is kept only if throughput per
sample rises beyond the noise and accuracy holds. Below, on a machine with
several GPUs, the same configuration's scaling across them (`ScalingSection`).
"""

from __future__ import annotations


from PySide6.QtWidgets import QFormLayout, QLabel, QSpinBox, QWidget

from tfturbo import summary as summ
from tfturbo.compare import own_process_peaks
from tfturbo.console import fmt_bytes
from tfturbo.headline import config_words
from tfturbo.settings import RunSettings
from tfturbo.tune.levers.batch_size import LEVER as BATCH
from tfturbo.tune.study import Rung

from ..cards import FactsCard
from ..run_process import Launcher
from ..scaling_section import ScalingSection
from ..session import WizardSession
from .base import RungPage
from ..labels import muted_label


class BatchPage(RungPage):
    title = BATCH.title
    intro = BATCH.intro
    run_button_text = "Run with this batch size"
    stage = BATCH.name
    page_key = BATCH.page

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
        # the size the user typed, kept until a run measures something: going back and forth between pages set the
        # box to the proposal again (issue 42 walk: "the batch box resets to 100 under the batch-200 result")
        self._chosen: int | None = None
        self._proposing = False
        self.batch.valueChanged.connect(self._on_user_batch)
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

    def _best(self) -> Rung | None:
        return self.session.best or self.session.baseline

    def current_batch(self) -> int:
        best = self._best()
        return (best.settings.batch_size or (best.summary.batch_size if best.summary else 1)) if best else 1

    def on_enter(self) -> None:
        super().on_enter()
        base, best = self.session.baseline, self._best()
        if base is None or best is None:
            return
        self._show_memory()
        self._propose()

    def _on_user_batch(self, value: int) -> None:
        if not self._proposing:
            self._chosen = value

    def _show_memory(self) -> None:
        """The baseline's peak and the tuned run's, the best kept so far (after a kept size, that size: it said
        "Tuned peak … — float32, batch 40" beside a proposal that went on from batch 80), and what was freed,
        claimed only beyond the runs' own spread as the report claims it (`summary.memory_change` over
        `compare.own_process_peaks`): the page said "Freed 4.5 MiB" where the PDF said "about the same"."""
        base, best = self.session.measured_baseline, self._best()
        assert best is not None, "the baseline is measured"
        runs = self.session.measured_runs()
        change = summ.memory_change(own_process_peaks(base.settings, runs),
                                    own_process_peaks(best.settings, runs))
        base_peak = change.before_bytes if change else base.summary.peak_memory_bytes if base.summary else None
        best_peak = change.after_bytes if change else best.summary.peak_memory_bytes if best.summary else None
        if change is None or best is base:
            freed = "nothing measurable"
        elif not change.beyond_spread:
            freed = "nothing measurable (" + ("one run of each" if change.spread is None else
                                              f"within the runs' spread of {fmt_bytes(change.spread)}") + ")"
        else:
            freed = fmt_bytes(change.before_bytes - change.after_bytes) if change.after_bytes < change.before_bytes \
                else "nothing: the tuned run peaks higher"
        kind = (base.summary.memory_kind if base.summary else None) or "host"
        self.memory.set_facts([  # a median over several runs says so, as the baseline page does
            ("Baseline peak", f"{fmt_bytes(base_peak)} ({kind}{_over(change.before if change else [])})"),
            ("Tuned peak", f"{fmt_bytes(best_peak)}{_over(change.after if change else [], ' (', ')')} — "
                           f"{best.settings.label()}"),
            ("Freed", freed),
        ])

    def _propose(self) -> None:
        """The engine's next size (the search goes on from each verdict: doubling, then one binary step)."""
        plan = next(iter(self.session.pending(BATCH.name)), None)
        if plan is not None:
            # "doubling: batch 64 → 128; …" reads "Proposed (doubling): batch 64 → 128; …" (`Candidate.heading`)
            self.plan_text.setText(f"Proposed ({plan.heading}): {plan.after_heading()}" if plan.skipped_reason is None
                                   and plan.heading else plan.note[0].upper() + plan.note[1:])
        proposed = plan.settings.batch_size if plan is not None and plan.skipped_reason is None else None
        # the user's size while nothing was measured since; the search's next size; when the search is done, the
        # size of the result shown on the page, not the best kept so far beside it
        shown = self.rung.settings.batch_size if self.rung is not None and self.rung.decision is not None else None
        self._proposing = True
        try:
            self.batch.setValue(self._chosen or proposed or shown or self.current_batch())
        finally:
            self._proposing = False
        self._on_batch(self.batch.value())

    def lr_scale(self) -> float:
        """The learning-rate scale of the chosen size relative to the search's start, as the lever scales it and
        its proposal says ("learning rate scaled 4.00×"): relative to the best kept so far, the page said
        "× 2.00 of the tuned run's" beside that 4.00× once batch 80 was kept."""
        return self.configure().lr_scale / self._search_start().settings.lr_scale

    def _search_start(self):
        return BATCH.start(self.session.decisions) or self._best()

    def _on_batch(self, value: int) -> None:
        start = self._search_start()
        rule, why = BATCH.rule(self.session.decisions)
        words = config_words(start.name, self.session.ensure_study().rungs)  # what it is, not its run folder
        self.lr.setText(f"× {self.lr_scale():.2f} of the rate at batch {start.settings.batch_size} ({words}), by the "
                        f"{rule.name} rule ({why})" if value != self.current_batch() else "unchanged")
        self.update_controls()

    def _on_run_ended(self, data) -> None:
        super()._on_run_ended(data)
        if self.rung is not None and self.rung.decision is not None:
            self._chosen = None  # measured: the search's next size from here
            self._show_memory()
            self._propose()

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
        """The lever's candidate at the chosen size (the proposal itself when unchanged)."""
        return BATCH.at_size(self.session.decisions, self.batch.value()).settings


def _over(peaks: list[float], before: str = "; ", after: str = "") -> str:
    """Words for a peak that is the median of several runs' (`summary.MemoryChange`), "" for one run's own."""
    return f"{before}median of {len(peaks)} runs{after}" if len(peaks) > 1 else ""
