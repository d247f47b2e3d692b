"""The look: resources/style.qss, in light or dark to follow the system palette, and the window icon.

The style sheet is written once, for light backgrounds. A dark desktop gets
the same sheet with each colour swapped for its dark counterpart (`DARK`),
so there is one sheet to maintain and no colour lives in two places. The
plots follow: pyqtgraph's background and foreground come from `plot_colors`.
"""

from __future__ import annotations

import re

from functools import cache

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontDatabase, QGuiApplication, QIcon, QPalette

import resources

# light colour in style.qss -> the dark theme's colour (backgrounds darken, text lightens, accents stay legible)
DARK = {
    "#ffffff": "#1f2430", "#f8fafc": "#171b24", "#f9fafb": "#1c212b", "#f6f8fa": "#1c212b", "#f1f5f9": "#262c38",
    "#eef2f7": "#141820", "#e2e8f0": "#2b3240", "#e5e7eb": "#333a48", "#dde3ea": "#2b3240", "#cbd5e1": "#485164",
    "#111827": "#f3f4f6", "#1f2937": "#e5e7eb", "#334155": "#cbd5e1", "#4b5563": "#aeb6c2", "#6b7280": "#9aa3b0",
    "#9ca3af": "#6b7280", "#2563eb": "#3b82f6", "#1d4ed8": "#60a5fa", "#1e40af": "#93c5fd", "#1e3a8a": "#bfdbfe",
    "#93c5fd": "#1e3a8a", "#bfdbfe": "#1e40af", "#eff6ff": "#1a2740", "#fffbeb": "#2d2410", "#fff7ed": "#2e1f12",
    "#fef2f2": "#2e1616", "#f0fdf4": "#12261a", "#fcd34d": "#8a6d1a", "#fca5a5": "#7f2a2a", "#92400e": "#fcd34d",
    "#9a3412": "#fdba74", "#991b1b": "#fca5a5", "#b91c1c": "#f87171", "#166534": "#86efac", "#dc2626": "#ef4444",
    "#d97706": "#f59e0b", "#16a34a": "#22c55e",
}
_HEX = re.compile(r"#[0-9a-fA-F]{6}\b")


def system_is_dark(app: QGuiApplication | None = None) -> bool:
    """The desktop's colour scheme (Qt 6.5+), else whether the default window background is dark."""
    gui = app or QGuiApplication.instance()
    assert isinstance(gui, QGuiApplication), "a GUI application runs"
    scheme = gui.styleHints().colorScheme()
    if scheme != Qt.ColorScheme.Unknown:
        return scheme == Qt.ColorScheme.Dark
    return gui.palette().color(QPalette.ColorRole.Window).lightness() < 128


def style_sheet(dark: bool) -> str:
    text = resources.read_text(resources.STYLE_SHEET)
    return _HEX.sub(lambda m: DARK.get(m.group(0).lower(), m.group(0)), text) if dark else text


def plot_colors(dark: bool) -> tuple[str, str]:
    """(background, foreground) of the plots."""
    return ("#1f2430", "#cbd5e1") if dark else ("#ffffff", "#374151")


def app_icon() -> QIcon:
    icon = QIcon(str(resources.path(resources.ICON_SVG)))
    for size in resources.ICON_SIZES:
        icon.addFile(str(resources.icon_png(size)))
    return icon


@cache
def _mono_family() -> str:
    """Registers the shipped DejaVu Sans Mono once; its family name (the system's fixed font if it fails to load)."""
    font_id = QFontDatabase.addApplicationFont(str(resources.path(resources.MONO_FONT)))
    families = QFontDatabase.applicationFontFamilies(font_id) if font_id >= 0 else []
    return families[0] if families else QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont).family()


def register_fonts() -> None:
    """Called at start: code blocks use the shipped monospace face, whatever fonts the machine has (the
    offscreen platform and desktops without a monospace alias resolved the system's fixed font to a
    proportional face)."""
    _mono_family()


def mono_font() -> QFont:
    """The monospace font for code and commands, at the application's point size."""
    font = QFont(_mono_family())
    font.setStyleHint(QFont.StyleHint.Monospace)
    font.setFixedPitch(True)
    return font


def mono_css() -> str:
    """The same face for rich text (`font-family:` value)."""
    return f"'{_mono_family()}', monospace"
