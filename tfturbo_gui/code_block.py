"""A read-only monospace block of code or text with a Copy button, and a file path shown whole with one.

Fixes, settings records and tracebacks are meant to be pasted into the
user's own script or a bug report, so they are selectable and copyable
rather than painted as labels.
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QSizePolicy, QVBoxLayout, QWidget

from . import theme

MAX_VISIBLE_LINES = 12


def with_copy_button(owner: QWidget, content: QWidget, tip: str, copy: Callable[[], object]) -> QPushButton:
    """Lay `content` out in `owner` with a Copy button at its top right (connected to `copy`)."""
    button = QPushButton("Copy")
    button.setObjectName("copyButton")
    button.setToolTip(tip)
    button.clicked.connect(copy)
    row = QHBoxLayout(owner)
    row.setContentsMargins(0, 0, 0, 0)
    row.setSpacing(6)
    row.addWidget(content, 1)
    column = QVBoxLayout()
    column.addWidget(button)
    column.addStretch(1)
    row.addLayout(column)
    return button


class CodeBlock(QWidget):
    def __init__(self, text: str = "", parent: QWidget | None = None, max_lines: int = MAX_VISIBLE_LINES,
                 fill: bool = False, wrap: bool = False):
        """`fill`: take the space the layout gives and wrap long lines (copying keeps them whole). `wrap`: wrap
        long lines in a box of at most `max_lines` lines (copying keeps them whole)."""
        super().__init__(parent)
        self.max_lines = max_lines
        self.fill = fill
        self.editor = QPlainTextEdit()
        self.editor.setObjectName("codeBlock")
        self.editor.setReadOnly(True)
        self.editor.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth if fill or wrap
                                    else QPlainTextEdit.LineWrapMode.NoWrap)
        self.editor.setFont(theme.mono_font())
        self.copy_button = with_copy_button(self, self.editor, "Copy to the clipboard", self.copy)
        if fill:  # the wrapped lines are counted once the editor re-wrapped to its new width, not before: on a
            # window made narrower the block kept the wide window's height and scrolled (issue 22 walk)
            self.editor.document().documentLayout().documentSizeChanged.connect(self._fit_wrapped)
        self.set_text(text)

    def text(self) -> str:
        return self.editor.toPlainText()

    def set_text(self, text: str) -> None:
        self.editor.setPlainText(text)
        if self.fill:
            self._fit_wrapped()
            return
        lines = min(max(1, text.count("\n") + 1), self.max_lines)
        metrics = self.editor.fontMetrics()
        # room for a horizontal scroll bar when a long line does not fit
        self.editor.setFixedHeight(lines * metrics.lineSpacing() + 2 * self.editor.frameWidth() + 14 + 12)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        if self.fill:
            self._fit_wrapped()

    def _fit_wrapped(self, *_: object) -> None:
        """A filling block is never taller than its wrapped lines: four lines of advice in a 580 px box
        looked like a page left empty."""
        lines = self.editor.document().documentLayout().documentSize().height()  # lines, wrapping included
        metrics = self.editor.fontMetrics()
        self.editor.setMaximumHeight(int(max(1, lines) * metrics.lineSpacing()) + 2 * self.editor.frameWidth() + 14)
        self.setMaximumHeight(self.editor.maximumHeight())  # given more, the editor sat centred below its Copy

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.text())


ZWSP, WJ = "\u200b", "\u2060"  # a line may break here; it may not


def breakable_path(path: str) -> str:
    """`path` as a label shows it: it may wrap after each '/' (and '\\'), never inside a name (Qt breaks after a
    '-' on its own: "tfturbo-" / "settings.yaml" looked like two names)."""
    out = []
    for ch in path:
        out.append(ch)
        if ch in "/\\":
            out.append(ZWSP)
        elif ch == "-":
            out.append(WJ)
    return "".join(out)


class PathBlock(QWidget):
    """A file path shown whole, wrapped at its separators (never scrolled sideways: the Record page's checkpoint
    path hid its file name off to the right), selectable, with a Copy button that copies it exactly and its
    whole text in the tooltip."""

    def __init__(self, path: str = "", parent: QWidget | None = None):
        super().__init__(parent)
        self.label = QLabel()
        self.label.setObjectName("pathText")
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.label.setFont(theme.mono_font())
        self.label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)  # it wraps, never widens
        self.copy_button = with_copy_button(self, self.label, "Copy the path to the clipboard", self.copy)
        self._path = ""
        self.set_text(path)

    def text(self) -> str:
        return self._path

    def set_text(self, path: str) -> None:
        self._path = path
        self.label.setText(breakable_path(path))
        self.label.setToolTip(path)

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self._path)
