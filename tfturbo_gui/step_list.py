"""The always-visible list of checklist steps, each with its status (docs/ARCHITECTURE.md, "The wizard")."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPixmap
from PySide6.QtWidgets import QHBoxLayout, QLabel, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from .step_status import NOT_STARTED, color_of


def status_dot(status: str, size: int = 12) -> QPixmap:
    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QColor(color_of(status)))
    painter.drawEllipse(1, 1, size - 2, size - 2)
    painter.end()
    return pixmap


class StepRow(QWidget):
    def __init__(self, number: int, title: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("stepRow")
        row = QHBoxLayout(self)
        row.setContentsMargins(8, 6, 4, 6)
        row.setSpacing(7)
        self.dot = QLabel()
        self.dot.setFixedWidth(14)
        row.addWidget(self.dot, 0, Qt.AlignmentFlag.AlignTop)
        text = QVBoxLayout()
        text.setSpacing(0)
        self.title = QLabel(f"{number}. {title}")
        self.title.setObjectName("stepTitle")
        self.status = QLabel()
        self.status.setObjectName("stepStatus")
        text.addWidget(self.title)
        text.addWidget(self.status)
        row.addLayout(text, 1)
        self.set_status(NOT_STARTED)

    def set_status(self, status: str) -> None:
        self.dot.setPixmap(status_dot(status))
        self.status.setText(status)
        self.status.setStyleSheet(f"color: {color_of(status)};")


class StepList(QListWidget):
    step_clicked = Signal(int)

    def __init__(self, titles: list[str], parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("stepList")
        self.rows: list[StepRow] = []
        for i, title in enumerate(titles):
            item = QListWidgetItem()
            row = StepRow(i + 1, title)
            item.setSizeHint(row.sizeHint())
            self.addItem(item)
            self.setItemWidget(item, row)
            self.rows.append(row)
        self.itemClicked.connect(lambda item: self.step_clicked.emit(self.row(item)))

    def set_status(self, index: int, status: str) -> None:
        self.rows[index].set_status(status)

    def status_text(self, index: int) -> str:
        return self.rows[index].status.text()

    def set_current(self, index: int) -> None:
        self.blockSignals(True)
        self.setCurrentRow(index)
        self.blockSignals(False)
