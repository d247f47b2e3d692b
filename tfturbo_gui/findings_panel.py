"""The findings of one wizard step: severity, message, where, and the fix as copyable code.

The fixes the backend can apply by itself in the next run (the RunSettings
switches declared with `fixes=`: `fix_head`, `drop_remainder`) are offered as
checkboxes on their finding, so the user can try the fix before editing their
own script.
"""

from __future__ import annotations

from typing import Any, Iterable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QCheckBox, QFrame, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from tfturbo import findings as F
from tfturbo.findings import FindingDoc
from tfturbo.settings import automatic_fixes, fixes_not_applied

from .code_block import CodeBlock
from .labels import breakable, in_gui_words, muted_label, wrappable

# finding code -> (RunSettings field, checkbox text), as the settings declare them
AUTO_FIXES = automatic_fixes()


APPLIED = "applied"  # the card's state once a completed run applied its automatic fix


def code_text(finding: FindingDoc) -> str:
    """The finding's name as shown: a speed finding says what was measured, never "slower" for a tie."""
    code = str(finding.get("code") or "")
    if code == F.SLOWER_THAN_BASELINE and (finding.get("data") or {}).get("verdict") not in (None, "slower"):
        return "NOT_MEASURABLY_FASTER"
    return code


def fix_in_gui_words(fix: str, has_box: bool) -> str:
    """A finding's fix as the wizard shows it: a line telling a terminal user to let tfturbo do it
    ("# or let tfturbo do it (any model): tfturbo run ... --fix-head (ab/tune settings: fix_head=on)") is left out
    where the card's own box does it, and any other option named is said as the wizard's control
    (`labels.in_gui_words`): the issue-42 walk found these CLI words on the Mixed precision page beside the box."""
    lines = [line for line in fix.splitlines() if not (has_box and "tfturbo run" in line)]
    return in_gui_words("\n".join(lines))


class FindingCard(QFrame):
    def __init__(self, finding: FindingDoc, checked: bool, on_fix: Any, parent: QWidget | None = None):
        super().__init__(parent)
        self.finding = finding
        self.setObjectName("findingCard")
        severity = str(finding.get("severity") or F.DEFAULT_SEVERITY.get(finding.get("code") or "", F.WARNING))
        self.setProperty("severity", severity)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 8, 12, 10)
        layout.setSpacing(4)
        header = QHBoxLayout()
        self.badge = badge = QLabel(severity.upper())
        badge.setObjectName("severityBadge")
        badge.setProperty("severity", severity)
        self.code_label = QLabel(code_text(finding))
        self.code_label.setObjectName("findingCode")
        self.code_label.setToolTip(f"finding code {finding.get('code')}")
        header.addWidget(badge)
        header.addWidget(self.code_label)
        # where it is wraps beside the code, a break allowed after each '/' of a layer path: cut to the card's width
        # it read "sequential/dense_" at 1024 px (issue 22 walk); whole, it widened the card
        self.where = where = QLabel(breakable(str(finding.get("where") or "")))
        where.setTextFormat(Qt.TextFormat.PlainText)
        where.setObjectName("muted")
        where.setWordWrap(True)
        where.setToolTip(str(finding.get("where") or ""))
        header.addWidget(where, 1)
        header.setAlignment(where, Qt.AlignmentFlag.AlignTop)
        layout.addLayout(header)
        self.message = QLabel(wrappable(str(finding.get("message") or "")))
        self.message.setTextFormat(Qt.TextFormat.PlainText)
        self.message.setWordWrap(True)
        layout.addWidget(self.message)
        self.fix_block = None
        if finding.get("fix"):
            # wrapped to the card (a long fix scrolled sideways at 1024 px); Copy keeps its lines whole
            self.fix_block = CodeBlock(fix_in_gui_words(str(finding["fix"]), finding.get("code") in AUTO_FIXES),
                                       max_lines=8, fill=True)
            layout.addWidget(self.fix_block)
        self.checkbox = None
        if finding.get("code") in AUTO_FIXES:
            field, text = AUTO_FIXES[finding["code"]]
            self.checkbox = QCheckBox(text)
            self.checkbox.setToolTip("tfturbo applies this change itself in the next measured run; "
                                     "the fix above is what to change in your own code")
            self.checkbox.setChecked(checked)
            self.checkbox.toggled.connect(lambda on, f=field: on_fix(f, on))
            layout.addWidget(self.checkbox)
        self.applied_note = QLabel()
        self.applied_note.setObjectName("appliedNote")
        self.applied_note.setWordWrap(True)
        self.applied_note.hide()
        layout.addWidget(self.applied_note)

    def mark_applied(self, note: str) -> None:
        """A completed run applied this card's automatic fix: the finding no longer stands against it."""
        for widget, prop in ((self, "severity"), (self.badge, "severity")):
            widget.setProperty(prop, APPLIED)
            widget.style().unpolish(widget)
            widget.style().polish(widget)
        self.badge.setText("FIXED IN RUN")
        self.applied_note.setText(note)
        self.applied_note.show()

    def note_not_applied(self, note: str) -> None:
        """The last run switched this card's fix on but could not apply it: the finding still stands."""
        self.applied_note.setObjectName("notAppliedNote")
        self.applied_note.style().unpolish(self.applied_note)
        self.applied_note.style().polish(self.applied_note)
        self.applied_note.setText(note)
        self.applied_note.show()


class FindingsPanel(QWidget):
    """A titled, scrollable list of finding cards; `chosen_fixes()` says which automatic fixes are on."""

    fixes_changed = Signal(dict)

    def __init__(self, title: str = "Findings", parent: QWidget | None = None):
        super().__init__(parent)
        self.findings: list[FindingDoc] = []
        self._fixes: dict[str, bool] = {}
        self.cards: list[FindingCard] = []
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        self.title = QLabel(title)
        self.title.setObjectName("sectionTitle")
        outer.addWidget(self.title)
        body = QWidget()  # no scroll area of its own: the page's column scrolls, so no card hides in a small one
        body.setObjectName("findingsBody")
        self.list_layout = QVBoxLayout(body)
        self.list_layout.setContentsMargins(0, 0, 4, 0)
        self.list_layout.setSpacing(8)
        self._empty_text, self._busy_text = "No findings yet.", ""
        self.empty = muted_label(self._empty_text)
        self.list_layout.addWidget(self.empty)
        self.list_layout.addStretch(1)
        outer.addWidget(body, 1)

    def set_empty_text(self, text: str) -> None:
        """What an empty panel says once its checks have run ("The audit ... found nothing to fix")."""
        self._empty_text = text
        self.empty.setText(self._busy_text or text)

    def set_busy(self, text: str | None) -> None:
        """While a check or run goes, the empty panel says so instead of its 'found nothing' text."""
        self._busy_text = text or ""
        self.empty.setText(self._busy_text or self._empty_text)

    def set_findings(self, found: Iterable[FindingDoc]) -> None:
        for card in self.cards:
            card.setParent(None)
            card.deleteLater()
        self.cards.clear()
        self.findings = []
        self.add_findings(found)

    def add_findings(self, found: Iterable[FindingDoc]) -> None:
        """Add findings not shown yet (the same finding may come live and again in the summary)."""
        seen = {(f.get("code"), f.get("where"), f.get("message")) for f in self.findings}
        for f in found:
            key = (f.get("code"), f.get("where"), f.get("message"))
            if key in seen:
                continue
            seen.add(key)
            self.findings.append(f)
            field = AUTO_FIXES.get(f.get("code") or "", ("", ""))[0]
            card = FindingCard(f, self._fixes.get(field, False), self.set_fix)
            self.cards.append(card)
            self.list_layout.insertWidget(self.list_layout.count() - 1, card)
        self.empty.setVisible(not self.findings)

    def offered_fixes(self) -> dict[str, bool]:
        """{RunSettings field: ticked} for every automatic fix a shown card offers: what the next run uses."""
        return {AUTO_FIXES[c.finding["code"]][0]: c.checkbox.isChecked() for c in self.cards if c.checkbox is not None}

    def set_fixes_locked(self, locked: bool) -> None:
        """While a run goes its fixes are fixed: the boxes show what it uses and cannot change under it."""
        for card in self.cards:
            if card.checkbox is not None:
                card.checkbox.setEnabled(not locked)

    def mark_applied(self, settings: Any) -> list[str]:
        """Mark the cards whose automatic fix the last run (`settings`) applied; returns their codes.

        A fix the run switched on but went without (its FIX_NOT_APPLIED finding is in this panel) is not
        "fixed": its card stays as it was and says the run trained without it."""
        skipped = fixes_not_applied(self.findings)
        marked: list[str] = []
        for card in self.cards:
            code = str(card.finding.get("code") or "")
            field = AUTO_FIXES[code][0] if code in AUTO_FIXES else ""
            if not field or not getattr(settings, field, False):
                continue
            if field in skipped:
                card.note_not_applied("tfturbo could not apply this fix, so the last run trained without it: "
                                      "FIX_NOT_APPLIED below says why and what to change in your own code.")
            else:
                card.mark_applied("Applied by tfturbo in the last run; make the same change in your own code.")
                marked.append(code)
        return marked

    def codes(self) -> list[str]:
        return F.codes_of(self.findings)

    def chosen_fixes(self) -> dict[str, bool]:
        """RunSettings fields of the automatic fixes the user ticked, e.g. {"fix_head": True}."""
        return {k: v for k, v in self._fixes.items() if v}

    def set_fix(self, field: str, on: bool) -> None:
        """Tick or untick an automatic fix (on every card that offers it)."""
        self._fixes[field] = on
        for card in self.cards:  # the same fix may be offered by two findings
            if card.checkbox is not None and AUTO_FIXES[card.finding["code"]][0] == field:
                card.checkbox.blockSignals(True)
                card.checkbox.setChecked(on)
                card.checkbox.blockSignals(False)
        self.fixes_changed.emit(self.chosen_fixes())
