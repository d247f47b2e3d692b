"""The mouse wheel scrolls the page, never an unfocused choice under the pointer.

Qt hands a wheel event to the widget under the pointer, so scrolling a long page with the wheel changed any
combo box or spin box it passed over ("Align curves by" switched from samples to training time while a user
scrolled to the compare table, and the page stopped scrolling). A box the user clicked into (it has focus)
still takes the wheel; any other passes it to the scroll area around it.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QAbstractScrollArea, QAbstractSpinBox, QApplication, QComboBox, QWidget


class WheelGuard(QObject):
    """An application-wide event filter (`install`)."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt API)
        if event.type() != QEvent.Type.Wheel or not isinstance(watched, (QComboBox, QAbstractSpinBox)):
            return False
        if watched.focusPolicy() == Qt.FocusPolicy.WheelFocus:
            watched.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # the wheel alone never focuses it
        if watched.hasFocus():
            return False
        area = _scroll_area_around(watched)
        if area is not None:
            area.verticalScrollBar().event(event)
        return True


def _scroll_area_around(widget: QWidget) -> QAbstractScrollArea | None:
    parent = widget.parentWidget()
    while parent is not None and not isinstance(parent, QAbstractScrollArea):
        parent = parent.parentWidget()
    return parent


_GUARD = WheelGuard()


def install(app: QApplication) -> None:
    """Guard every combo and spin box of the app (once; again is harmless)."""
    app.removeEventFilter(_GUARD)
    app.installEventFilter(_GUARD)
