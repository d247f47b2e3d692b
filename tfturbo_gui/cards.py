"""Small result cards: the measured numbers of one run, and the keep/reject verdict of a rung.

Every number shown comes from the run's summary (via `tfturbo.summary`) or
the rung's trial verdict (`TrialVerdict`), with its 95% interval where it has one.
"""

from __future__ import annotations

from typing import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QGridLayout, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from tfturbo.run_summary import RunSummary
from tfturbo.settings import steps_trained
from tfturbo.compare import steps_per_s_ci95
from tfturbo.console import fmt_bytes
from tfturbo.headline import SPEED_UP, Headline
from tfturbo.numbers import digits_for, finite
from tfturbo.trials.verdict import Says, TrialVerdict
from tfturbo.trials.way_forward import WAYS, WayForward
from tfturbo.verdicts import Verdict
from tfturbo.trials.verdict import speed_verdict_of as change_verdict

from .labels import seeds_button, card_column, card_header, card_reason, in_gui_words, sentence, set_badge


MEDIAN_STEP = "Median step (detail)"


RUN_PEAK = "Run's peak (detail)"  # no wider than the other labels: the column keeps its width


def run_facts(summary: RunSummary, peak: tuple[float, int] | None = None) -> list[tuple[str, str]]:
    """(label, value) pairs a user reads off one measured run: one speed (`RunSummary.step_rate`, as the compare
    table and every speed-up), the median step labelled as a detail of it. `peak`: its configuration's peak
    memory and over how many runs (`WizardSession.configuration_peak`, the compare table's figure); over more
    than one run it is the peak shown, this run's own a labelled detail beside it (the baseline page showed
    357.9 MiB, its run's, where the Batch page, the table and the PDF showed 334.6 MiB)."""
    facts = []
    median, (lo, hi) = summary.step_time()
    if finite(median) and median > 0:
        rate, rate_ci = steps_per_s_ci95(summary, (lo, hi) if finite(lo) and finite(hi) and lo > 0 else None)
        rate = rate or 1000 / median
        d = digits_for(rate)  # as the compare table prints it ("5.0 [5.0, 5.0]" for 5.00 [4.96, 5.02])
        ci = f" [{rate_ci[0]:.{d}f}, {rate_ci[1]:.{d}f}]" if rate_ci else ""
        facts.append(("Steady speed", f"{rate:.{d}f} steps/s{ci}"))
        # the run's one speed is the line above, the figure its speed-ups compare; the median step is a detail of
        # it, said as one (beside it unlabelled, 1.72 ms read as a second speed, 581/s against 473.8 steps/s)
        step = f"{median:.2f} ms [{lo:.2f}, {hi:.2f}]" if finite(lo) else f"{median:.2f} ms"
        facts.append((MEDIAN_STEP, f"{step}: the typical step alone; the speed above counts every steady step"))
    if summary.warmup_s is not None:
        facts.append(("Warm-up / compile", f"{summary.warmup_s:.1f} s (excluded)"))
    kind = summary.memory_kind or "host"
    if peak is not None and peak[1] > 1:
        facts.append(("Peak memory", f"{fmt_bytes(peak[0])} ({kind}; median of this configuration's {peak[1]} "
                                     "runs so far)"))
        if summary.peak_memory_bytes is not None:
            facts.append((RUN_PEAK, fmt_bytes(summary.peak_memory_bytes)))
    elif summary.peak_memory_bytes is not None:
        facts.append(("Peak memory", f"{fmt_bytes(summary.peak_memory_bytes)} ({kind})"))
    primary = summary.primary_metric()
    if primary is not None:
        facts.append(("Validation", f"{primary[0]} {primary[1]:.4f}"))
    done = summary.steps_completed
    planned = steps_trained(summary.settings.steps, summary.steps_per_sample) if summary.settings else None
    if done is not None:
        facts.append(("Steps", f"{done}" + (f" of {planned}" if planned is not None and planned != done else "")))
    return facts


class FactsCard(QFrame):
    """A two-column grid of labelled numbers."""

    def __init__(self, title: str = "", parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("card")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 10, 12, 10)
        layout.setSpacing(6)
        self.title = QLabel(title)
        self.title.setObjectName("cardTitle")
        self.title.setVisible(bool(title))
        layout.addWidget(self.title)
        self.grid = QGridLayout()
        self.grid.setHorizontalSpacing(14)
        self.grid.setVerticalSpacing(3)
        layout.addLayout(self.grid)
        self.values: dict[str, QLabel] = {}
        self.hide()

    def set_facts(self, facts: list[tuple[str, str]], title: str | None = None, emphasize: tuple[str, ...] = ()) -> None:
        while self.grid.count():
            item = self.grid.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.hide()  # until deleteLater runs it would still paint under the new facts
                widget.deleteLater()
        self.values = {}
        for row, (label, value) in enumerate(facts):
            name = QLabel(label)
            name.setObjectName("muted")
            shown = QLabel(value)
            shown.setWordWrap(True)
            shown.setTextFormat(Qt.TextFormat.PlainText)
            shown.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            if label in emphasize:
                shown.setObjectName("emphasis")
            self.grid.addWidget(name, row, 0)
            self.grid.addWidget(shown, row, 1)
            self.values[label] = shown
        self.grid.setColumnStretch(1, 1)
        if title is not None:
            self.title.setText(title)
            self.title.setVisible(bool(title))
        self.setVisible(bool(facts))

    def text(self) -> str:
        return "\n".join(f"{k}: {v.text()}" for k, v in self.values.items())


def speed_text(ratio: float, ci: tuple[float, float]) -> str:
    if not finite(ratio):
        return "not measured (no steady-state steps)"
    return f"{ratio:.2f}× [{ci[0]:.2f}, {ci[1]:.2f}] — {change_verdict(ci)}"


def accuracy_words(accuracy) -> str:
    """An accuracy verdict with its verdict word once: "val_accuracy +0.40 pp [..] — within tolerance", and an
    explanation that opens with it as it is ("inconclusive: 300 examples, …" read "… — inconclusive" too)."""
    text = accuracy.text()
    return text if accuracy.says_verdict else f"{text} — {accuracy.verdict}"


class DecisionCard(QFrame):
    """Kept or not kept, the speed-up with its interval, the accuracy verdict, and why."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        layout = card_column(self, "card")
        self.badge, self.headline = card_header(layout)
        self.facts = FactsCard()
        self.facts.setObjectName("plain")
        layout.addWidget(self.facts)
        self.reason = card_reason(layout)
        self.hide()

    def set_decision(self, decision: TrialVerdict, label: str, compared_with: str | None = None,
                     fixes: list[str] | None = None, way_forward: Sequence[str] = (), shown: Headline | None = None,
                     rung: str = "", stopped: str = "") -> None:
        """`way_forward`: what would decide an inconclusive accuracy, recommended first (`trials.way_forward`).
        `shown`: the configuration's headline (`tfturbo.headline`, of rung `rung`), its one speed number as the
        compare table, its CSV and the PDF show it; without one, the trial's own ratio. `stopped`: the trial was
        stopped by the user before its verdict had the pairs it needs, and may go on — what it measured so far
        ("1 of the 3 replicate pairs …"): an undecided trial, never "NOT KEPT … not recommended"."""
        kept = decision.kept
        set_badge(self.badge, kept)
        if stopped:
            set_badge(self.badge, kept, "STOPPED")
            self._show_unjudged(f"{label}: stopped by you — undecided", [("Measured so far", stopped)])
            return
        if decision.failed:  # a failed arm is a failed trial: its error and the fix, never a verdict
            self._show_unjudged(f"{label}: failed", [("Candidate's run", decision.failure_text())])
            return
        if decision.speed.verdict == Verdict.NOT_APPLIED:  # its run trained as the reference: nothing to judge
            self._show_unjudged(f"{label}: not measured — the change did not take effect",
                                [("Why, and what would enable it", decision.speed.note)])
            return
        self.headline.setText(f"{label}: " + ("recommended" if kept else "not recommended"))
        # what the number was measured against is said once, in the value (`headline.SPEED_UP`)
        speed = decision.speed.text()
        if finite(decision.speed.ratio) and decision.speed.replicates:  # "… over 3 replicate pairs vs the baseline"
            speed += f" vs {compared_with or 'the baseline'}"
        speed = f"{speed} — {decision.speed.verdict}"
        if shown is not None and shown.has_interval:
            speed = f"{shown.text()} {shown.source(rung)} — {shown.verdict}"
        facts = [(SPEED_UP, speed), ("Accuracy vs baseline", accuracy_words(decision.accuracy))]
        if decision.accuracy.output_lines():  # several outputs: each judged on its own, the deciding one above
            facts.append(("Each output", "\n".join(decision.accuracy.output_lines())))
        if decision.rule_text():  # a rule the user chose judged it: said beside the verdict, never silently
            facts.append(("Accuracy rule", decision.rule_detail()))
        if fixes is not None:  # what the run used: its run.yaml, less the fixes it could not apply
            facts.append(("Automatic fixes", ", ".join(fixes) or "none"))
        self.facts.set_facts(facts)
        # the rule's reason, less what the facts above already say (it repeated the speed-up line, and said
        # "inconclusive" three times): why the rung was measured, and what else decided it
        extra = decision.parts(Says.NOTE, Says.OTHER)
        text = sentence("; ".join(extra)) if extra else ""
        if way_forward:
            text += ("\n" if text else "") + "What would decide the accuracy:\n" + "\n".join(way_forward)
        self.reason.setText(in_gui_words(text))  # the page's buttons and boxes, not the command line's flags
        self.reason.setVisible(bool(text))
        self.show()

    def _show_unjudged(self, headline: str, facts: list[tuple[str, str]]) -> None:
        """A trial with no verdict to show (a failed arm, a change that did not take effect): its headline and
        why, no reason line."""
        self.headline.setText(headline)
        self.facts.set_facts(facts)
        self.reason.setVisible(False)
        self.show()


class WayForwardBar(QWidget):
    """The ways forward of an inconclusive accuracy verdict as buttons (`trials.way_forward`), the recommended
    one first: judge on the validation loss, set a tolerance (both from the runs already measured), measure
    again on more validation examples, or train both configurations from more seeds. `chosen` says which
    ("loss", "tolerance", "examples", "seeds"; "metric" undoes "loss"): one button for every way the core
    offers (`way_forward.WAYS`)."""

    chosen = Signal(str)
    WORDS = {"loss": "Judge on the validation loss", "tolerance": "Set a tolerance…",
             "seeds": seeds_button(), "examples": "Use more validation examples",  # set_options says how many
             "metric": "Judge on the validation metric again"}

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        column = QVBoxLayout(self)  # one button a line: side by side they widened the page's left column
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(6)
        self.buttons: dict[str, QPushButton] = {}
        for way in (*WAYS, "metric"):
            button = QPushButton(self.WORDS[way])
            button.clicked.connect(lambda _checked=False, w=way: self.chosen.emit(w))
            line = QHBoxLayout()
            line.addWidget(button)
            line.addStretch(1)
            column.addLayout(line)
            self.buttons[way] = button
        self.hide()

    def set_options(self, forward: WayForward | None, more_examples: bool, enabled: bool = True,
                    undo_loss: bool = False) -> None:
        """Show the ways `forward` offers (`more_examples`: measuring again on more examples can decide it);
        `undo_loss`: the verdict was judged on the loss by the user's choice, which the "metric" button undoes."""
        offered = {"loss": forward is not None and forward.loss is not None,
                   "tolerance": forward is not None and forward.tolerance_pp is not None,
                   "examples": forward is not None and more_examples,
                   "seeds": forward is not None and forward.seeds,
                   "metric": undo_loss}
        if forward is not None and forward.examples_needed:
            self.buttons["examples"].setText(f"Use {forward.examples_needed:,} validation examples")
        for way, button in self.buttons.items():
            button.setVisible(offered[way])
            button.setEnabled(enabled)
            button.setObjectName("primaryButton" if forward is not None and way == forward.recommended else "")
            button.setToolTip("Recommended" if forward is not None and way == forward.recommended else "")
            button.style().unpolish(button)
            button.style().polish(button)
        self.setVisible(any(offered.values()))

    def offered(self) -> set[str]:
        """The ways forward this bar shows now (`set_options`): the only ones the card's words may name."""
        return {way for way, button in self.buttons.items() if not button.isHidden() and way in WAYS}
