"""Labels and card frames the pages share, built one way so they look and wrap the same everywhere."""

from __future__ import annotations

import re
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QPainter, QPalette
from PySide6.QtWidgets import (QBoxLayout, QComboBox, QFrame, QHBoxLayout, QLabel, QLineEdit, QSizePolicy, QStyle,
                               QStyleOptionComboBox, QStyleOptionFrame, QStylePainter, QVBoxLayout, QWidget)


class ElidedLabel(QLabel):
    """One line that ends in "…" when it does not fit (the tooltip has it whole), never cut mid-word."""

    def __init__(self, text: str = ""):
        super().__init__()
        self.full_text = ""
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)  # never widens its parent
        self.setMinimumWidth(0)
        self.set_full_text(text)

    def set_full_text(self, text: str) -> None:
        self.full_text = text
        self.setToolTip(text)
        self._elide()

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._elide()

    def minimumSizeHint(self):  # noqa: N802 - Qt's name: any width will do, the text elides
        hint = super().minimumSizeHint()
        hint.setWidth(0)
        return hint

    def _elide(self) -> None:
        shown = self.fontMetrics().elidedText(self.full_text, Qt.TextElideMode.ElideRight, max(0, self.width()))
        if shown != self.text():
            self.setText(shown)


class FittingCombo(QComboBox):
    """A combo box as wide as its longest entry where there is room, narrower down to `minimum_chars` in a small
    window, where its current text ends in "…" (the list shows it whole) instead of being cut: the compare
    page's baseline combo read "mixed_float16, batch 6" at 1024×640 (issue 42 walk); sized on first show, while
    empty, it stayed narrow once filled."""

    def __init__(self, minimum_chars: int = 10, parent: QWidget | None = None):
        super().__init__(parent)
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.setMinimumContentsLength(minimum_chars)

    def minimumSizeHint(self):  # noqa: N802 - Qt's name: `minimum_chars` of text, the rest elides
        hint = self.sizeHint()
        longest = max((self.fontMetrics().horizontalAdvance(self.itemText(i)) for i in range(self.count())),
                      default=0)
        least = self.fontMetrics().horizontalAdvance("x") * self.minimumContentsLength()
        hint.setWidth(hint.width() - max(0, longest - least))
        return hint

    def shown_text(self) -> str:
        """The current text as drawn: whole, or ending in "…" where the field is narrower."""
        option = QStyleOptionComboBox()
        self.initStyleOption(option)
        field = self.style().subControlRect(QStyle.ComplexControl.CC_ComboBox, option,
                                            QStyle.SubControl.SC_ComboBoxEditField, self)
        return self.fontMetrics().elidedText(self.currentText(), Qt.TextElideMode.ElideRight, field.width())

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt's name
        painter = QStylePainter(self)
        option = QStyleOptionComboBox()
        self.initStyleOption(option)
        option.currentText = self.shown_text()
        painter.drawComplexControl(QStyle.ComplexControl.CC_ComboBox, option)
        painter.drawControl(QStyle.ControlElement.CE_ComboBoxLabel, option)


class PathEdit(QLineEdit):
    """A path field that shows a path too long for it elided in the middle ("/home/ann/…/mnist-study"), so the
    end, the folder's own name, is always in view (issue 42 walk: the study folder field showed its start cut,
    "oot/pytest-53/…"); whole while the user edits it, in `text()` and in its tooltip."""

    def __init__(self, text: str = "", tip: str = ""):
        super().__init__(text)
        self._tip = tip
        self.textChanged.connect(self._say_whole)
        self._say_whole(text)

    def _say_whole(self, text: str) -> None:
        self.setToolTip(f"{text}\n{self._tip}" if self._tip else text)

    def _contents(self, option: QStyleOptionFrame):
        return self.style().subElementRect(QStyle.SubElement.SE_LineEditContents, option, self).adjusted(2, 0, -2, 0)

    def shown_text(self) -> str:
        """What the field shows when the user is not editing it."""
        if self.hasFocus():
            return self.text()
        option = QStyleOptionFrame()
        self.initStyleOption(option)
        return self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideMiddle, self._contents(option).width())

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt's name
        shown = self.shown_text()
        if shown == self.text():
            super().paintEvent(event)
            return
        option = QStyleOptionFrame()
        self.initStyleOption(option)
        painter = QPainter(self)
        self.style().drawPrimitive(QStyle.PrimitiveElement.PE_PanelLineEdit, option, painter, self)
        group = QPalette.ColorGroup.Active if self.isEnabled() else QPalette.ColorGroup.Disabled
        painter.setPen(self.palette().color(group, QPalette.ColorRole.Text))
        painter.drawText(self._contents(option), int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft),
                         shown)
        painter.end()


def add_section(layout: QBoxLayout, title: str) -> QLabel:
    """A section's title in the pages' heading style."""
    label = QLabel(title)
    label.setObjectName("sectionTitle")
    layout.addWidget(label)
    return label


def button_row(*buttons: QWidget) -> QHBoxLayout:
    """Buttons side by side from the left, the rest of the row empty."""
    row = QHBoxLayout()
    for button in buttons:
        row.addWidget(button)
    row.addStretch(1)
    return row


def muted_label(text: str = "", hidden: bool = False) -> QLabel:
    """Secondary text in the muted style, wrapped so it never widens its page."""
    label = QLabel(text)
    label.setObjectName("muted")
    label.setWordWrap(True)
    if hidden:
        label.hide()
    return label


def card_column(frame: QFrame, name: str, margins: tuple[int, int, int, int] = (12, 10, 12, 10),
                spacing: int = 6) -> QVBoxLayout:
    """A card: `frame` named for the style sheet (its border and background), its content in one column."""
    frame.setObjectName(name)
    layout = QVBoxLayout(frame)
    layout.setContentsMargins(*margins)
    layout.setSpacing(spacing)
    return layout


def card_header(layout: QBoxLayout) -> tuple[QLabel, QLabel]:
    """A card's first row: the verdict badge, then the headline taking the rest (wrapped)."""
    header = QHBoxLayout()
    badge = QLabel()
    badge.setObjectName("verdictBadge")
    headline = QLabel()
    headline.setObjectName("cardTitle")
    headline.setWordWrap(True)
    header.addWidget(badge)
    header.addWidget(headline, 1)
    layout.addLayout(header)
    return badge, headline


def card_reason(layout: QBoxLayout) -> QLabel:
    """A card's last line: why, as plain text (it quotes error messages, which may hold '<')."""
    reason = muted_label()
    reason.setTextFormat(Qt.TextFormat.PlainText)
    layout.addWidget(reason)
    return reason


def set_badge(badge: QLabel, kept: bool, text: str = "") -> None:
    """KEPT / NOT KEPT (or `text`: STOPPED for an undecided trial), coloured by the style sheet's `kept`
    property (re-polished to apply it)."""
    badge.setText(text or ("KEPT" if kept else "NOT KEPT"))
    badge.setProperty("kept", "yes" if kept else "no")
    badge.style().unpolish(badge)
    badge.style().polish(badge)


def sentence(text: str) -> str:
    """A policy note or reason (lower case, no full stop: it is also used inside lines) as a sentence.

    A first word that is a name from code (`mixed_bfloat16`, `jit_compile=True`, `fit()`) keeps its case: the
    issue 22 walk read "Mixed_bfloat16 is the recommended policy", a policy that does not exist."""
    first = text.split(" ", 1)[0]
    code = any(c in first for c in "_=()[].") or any(c.isdigit() for c in first)
    return (text if code else text[:1].upper() + text[1:]) + ("" if text.endswith(".") else ".")


ZWSP = "\u200b"  # a line may break here, nothing is printed


def wrappable(text: str, longest: int = 24) -> str:
    """`text` with a break allowed after '::', '/', ',' and ';' inside any word longer than `longest` characters,
    so a wrapped label never grows wider than its column: an op path such as
    "Iterator::Root::Prefetch::ForeverRepeat[1]::Prefetch," in a finding widened the XLA page's left column
    past the window at 1280 px (issue 22 walk). Shorter words are left as they are."""
    def split(word: re.Match) -> str:
        return re.sub(r"(::|[/,;])(?=\S)", lambda m: m.group(1) + ZWSP, word.group(0))
    return re.sub(rf"\S{{{longest + 1},}}", split, text)



def breakable(text: str, chunk: int = 16) -> str:
    """`text` that wraps at any width: a break allowed after the punctuation of code as well ('.', '(', '=', and
    `wrappable`'s), and every `chunk` characters of a run that still has none. A finding's "where"
    (`model.compile(jit_compile=True)`, no '/') widened the XLA page's left column past its room at 1024 px, which
    then scrolled sideways and cut the card's text (h42w walk)."""
    marked = re.sub(r"([.(=])(?=\S)", lambda m: m.group(1) + ZWSP, wrappable(text, longest=0))
    return re.sub(rf"[^\s{ZWSP}]{{{chunk + 1},}}",
                  lambda m: ZWSP.join(m.group(0)[i:i + chunk] for i in range(0, len(m.group(0)), chunk)), marked)

# ---------------------------------------------------------------- CLI words said as the wizard's controls

def seeds_button() -> str:
    """The words of the way forward "train more seeds"'s button (`cards.WayForwardBar`)."""
    from tfturbo.trials.trial import SEED_REPLICATES

    return f"Train both from {SEED_REPLICATES} more seeds"


def _control_words() -> list[tuple[re.Pattern[str], Any]]:
    """The command line's options that a verdict, a way forward or a finding may name, each as the wizard's control
    that does it: an automatic fix's box (from its `Setting.offer`), the way-forward buttons (`cards.WayForwardBar`),
    the batch page's learning rate."""
    from tfturbo.settings import declared

    words: list[tuple[str, Any]] = [
             # the value said already ("(1.3 pp, --accuracy-tolerance 1.3)"): the button alone, the value once (it
             # read "(1.3 pp, a tolerance of 1.3 pp (the … button))")
             (r"([0-9.]+) pp, --accuracy-tolerance\s+\1(?![0-9.])", r"\1 pp, the “Set a tolerance…” button"),
             (r"at --accuracy-tolerance\s+([0-9.]+)", r"at \1 pp (the “Set a tolerance…” button)"),
             (r"--accuracy-tolerance\s+([0-9.]+)", r"a tolerance of \1 pp (the “Set a tolerance…” button)"),
             (r"--accuracy-tolerance(?:\s+PP)?", "the “Set a tolerance…” button"),
             (r"--judge-on\s+loss", "the “Judge on the validation loss” button"),
             (r"--val-examples\s+([0-9,]+)",
              lambda m: f"the “Use {int(m.group(1).replace(',', '')):,} validation examples” button"),
             (r"--lr-scale(?:\s+[0-9.]+)?", "the learning rate on the Batch size page"),
             (r"\(tfturbo ab --b seed=N, or a study's reference trained again\)",
              lambda m: f"(the “{seeds_button()}” button)")]
    for _field, s in declared():
        if s.offer and s.flag:  # "--fix-head" -> the box of that name ("Fix it in the next run: float32 …")
            words.append((re.escape(s.flag) + r"(?:\s*\([^)]*\))?", f"the “{s.offer}” box"))
    return [(re.compile(pattern), text) for pattern, text in words]


_CONTROLS: list[tuple[re.Pattern[str], Any]] = []  # (pattern, its words: a text or a function of the match)


def in_gui_words(text: str) -> str:
    """`text` with each command-line option it names replaced by the control that does it in the wizard
    ("--accuracy-tolerance 2.2" -> "the “Set a tolerance…” button (2.2 pp)"): a GUI user has no flag to pass."""
    if not _CONTROLS:
        _CONTROLS.extend(_control_words())
    for pattern, words in _CONTROLS:
        text = pattern.sub(words, text)
    return text
