"""How a failed command is shown: the one-line message, the fix, and the traceback behind Details.

Backend `error` events carry all three (docs/ARCHITECTURE.md, "Event protocol"); the user reads
the first two, a bug report needs the third.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

from tfturbo import protocol

from .code_block import CodeBlock
from .labels import card_column


class ErrorBox(QFrame):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        layout = card_column(self, "errorBox")
        self.message = QLabel()
        self.message.setObjectName("errorMessage")
        self.message.setWordWrap(True)
        self.message.setTextFormat(Qt.TextFormat.PlainText)
        self.fix = QLabel()
        self.fix.setWordWrap(True)
        self.fix.setTextFormat(Qt.TextFormat.PlainText)
        self.details_button = QPushButton("Details")
        self.details_button.setCheckable(True)
        self.details_button.toggled.connect(self._toggle_details)
        row = QHBoxLayout()
        row.addWidget(self.message, 1)
        row.addWidget(self.details_button)
        layout.addLayout(row)
        layout.addWidget(self.fix)
        self.action_button = QPushButton()  # the one-click way out, when there is one
        self.action_button.setObjectName("primaryButton")
        self.action_button.hide()
        self._action = None
        self.action_button.clicked.connect(lambda: self._action and self._action())
        layout.addWidget(self.action_button, 0, Qt.AlignmentFlag.AlignLeft)
        self.details = CodeBlock(max_lines=14)
        self.details.hide()
        layout.addWidget(self.details)
        self.hide()

    def show_error(self, message: str, fix: str = "", traceback: str = "") -> None:
        self.message.setText(message)
        self.fix.setText(f"Fix: {fix}" if fix else "")
        self.fix.setVisible(bool(fix))
        self.details.set_text(traceback.rstrip())
        self.details_button.setVisible(bool(traceback.strip()))
        self.details_button.setChecked(False)
        self.set_action("", None)
        self.show()

    def set_action(self, text: str, action) -> None:
        """A button under the fix that does it (e.g. run again without the automatic fix); '' hides it."""
        self._action = action
        self.action_button.setText(text)
        self.action_button.setVisible(bool(text) and action is not None)

    def show_event(self, error: protocol.ErrorDoc) -> None:
        """Show a backend `error` event (or RunData.error)."""
        self.show_error(str(error.get("message") or "error"), str(error.get("fix") or ""),
                        str(error.get("traceback") or ""))

    def clear(self) -> None:
        self.set_action("", None)
        self.hide()
        self.details_button.setChecked(False)

    def _toggle_details(self, shown: bool) -> None:
        self.details.setVisible(shown)
        self.details_button.setText("Hide details" if shown else "Details")
