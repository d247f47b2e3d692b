"""Labels and card frames the pages share, built one way so they look and wrap the same everywhere."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QBoxLayout, QFrame, QHBoxLayout, QLabel, QVBoxLayout


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


def set_badge(badge: QLabel, kept: bool) -> None:
    """KEPT / NOT KEPT, coloured by the style sheet's `kept` property (re-polished to apply it)."""
    badge.setText("KEPT" if kept else "NOT KEPT")
    badge.setProperty("kept", "yes" if kept else "no")
    badge.style().unpolish(badge)
    badge.style().polish(badge)


def sentence(text: str) -> str:
    """A policy note or reason (lower case, no full stop: it is also used inside lines) as a sentence."""
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")
