"""tfturbo's non-code files: the style sheet, the application icon, the desktop entry and the fonts.

Installed as package data and found through `importlib.resources`, so the
wizard and the report find them the same way from a checkout, an editable
install or a wheel. Nothing here imports Qt, TensorFlow or reportlab.
"""

from __future__ import annotations

from importlib.resources import as_file, files
from pathlib import Path

STYLE_SHEET = "style.qss"
ICON_SVG = "icons/tfturbo.svg"
ICON_SIZES = (16, 24, 32, 48, 64, 128, 256)
DESKTOP_ENTRY = "tfturbo.desktop"
# DejaVu Sans (Bitstream Vera license, fonts/LICENSE-DejaVu.txt): Latin, Greek, Cyrillic, Armenian,
# Georgian, Hebrew, Arabic and many symbols; no CJK (see FALLBACK_FONTS).
PDF_FONTS = {"regular": "fonts/DejaVuSans.ttf", "bold": "fonts/DejaVuSans-Bold.ttf",
             "italic": "fonts/DejaVuSans-Oblique.ttf", "bold_italic": "fonts/DejaVuSans-BoldOblique.ttf"}
# DejaVu Sans Mono (same licence): code in the wizard (registered at start, so code is monospace on a machine
# without a monospace font configured) and in the PDF.
MONO_FONT = "fonts/DejaVuSansMono.ttf"
MONO_FAMILY = "DejaVu Sans Mono"
# The PDF's fallbacks for what DejaVu Sans has no glyph for, in the order tried, loaded only when a text
# needs them (4.7 MB): Droid Sans Fallback (Apache 2.0, fonts/LICENSE-DroidSansFallback.txt) for Chinese
# and Japanese, NanumSquare (SIL OFL 1.1, fonts/LICENSE-Nanum.txt) for Korean Hangul.
FALLBACK_FONTS = {"DroidSansFallback": "fonts/DroidSansFallbackFull.ttf", "NanumSquare": "fonts/NanumSquareR.ttf"}


def path(name: str) -> Path:
    """The file `name` (relative to this package) on disk."""
    with as_file(files(__name__).joinpath(name)) as p:  # a real file for installed and editable packages
        return Path(p)


def icon_png(size: int) -> Path:
    return path(f"icons/tfturbo-{size}.png")


def read_text(name: str) -> str:
    return files(__name__).joinpath(name).read_text(encoding="utf-8")
