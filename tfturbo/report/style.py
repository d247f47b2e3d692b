"""The report's look in one place: one accent colour, one sans family, monospace for code.

The sans family is DejaVu Sans, shipped in resources/fonts, and is embedded
(subset) in the PDF: every viewer then draws exactly the layout reportlab
measured, so no table cell that fits here overflows there, and a study name or
workload path in Greek, Cyrillic, Hebrew or Arabic script prints. Code is
DejaVu Sans Mono, embedded the same way. Text DejaVu has no glyph for (Chinese,
Japanese, Korean names) is set in a fallback font (`with_fallback`, the fonts
in `resources.FALLBACK_FONTS`), registered only when a text needs it: the
fallbacks are 4.7 MB to parse and most reports never need them.
"""

from __future__ import annotations

from functools import cache

from reportlab.lib import colors
from reportlab.lib.enums import TA_LEFT
from reportlab.lib.fonts import addMapping
from reportlab.lib.styles import ParagraphStyle
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont

import resources

FONT, FONT_BOLD, FONT_ITALIC, FONT_BOLD_ITALIC, MONO = "DejaVuSans", "DejaVuSans-Bold", "DejaVuSans-Oblique", \
    "DejaVuSans-BoldOblique", "DejaVuSansMono"


def _register_fonts() -> None:
    files = resources.PDF_FONTS
    for name, key in ((FONT, "regular"), (FONT_BOLD, "bold"), (FONT_ITALIC, "italic"),
                      (FONT_BOLD_ITALIC, "bold_italic")):
        if name not in pdfmetrics.getRegisteredFontNames():
            pdfmetrics.registerFont(TTFont(name, str(resources.path(files[key]))))
    for bold, italic, name in ((0, 0, FONT), (1, 0, FONT_BOLD), (0, 1, FONT_ITALIC), (1, 1, FONT_BOLD_ITALIC)):
        addMapping(FONT, bold, italic, name)
    _register_single(MONO, resources.MONO_FONT)


def _register_single(name: str, file: str) -> set[int]:
    """A face without bold or italic variants (<b> inside it keeps the face); the code points it has."""
    if name not in pdfmetrics.getRegisteredFontNames():
        pdfmetrics.registerFont(TTFont(name, str(resources.path(file))))
        for bold in (0, 1):
            for italic in (0, 1):
                addMapping(name, bold, italic, name)
    return set(pdfmetrics.getFont(name).face.charToGlyph)


_register_fonts()
_PRIMARY = set(pdfmetrics.getFont(FONT).face.charToGlyph)


@cache
def _fallback_glyphs(name: str) -> set[int]:
    return _register_single(name, resources.FALLBACK_FONTS[name])


def fallback_for(char: str) -> str | None:
    """The fallback font that has a glyph for `char` when DejaVu Sans has none; None when DejaVu has it
    (or no font does: it prints as the box it would have been)."""
    code = ord(char)
    if code in _PRIMARY or code < 128:
        return None
    return next((name for name in resources.FALLBACK_FONTS if code in _fallback_glyphs(name)), None)


def runs(text: str) -> list[tuple[str | None, str]]:
    """`text` cut into (fallback font or None, characters) runs."""
    out: list[tuple[str | None, str]] = []
    for char in text:
        font = fallback_for(char)
        if out and out[-1][0] == font:
            out[-1] = (font, out[-1][1] + char)
        else:
            out.append((font, char))
    return out


def with_fallback(markup: str) -> str:
    """Paragraph markup with each run DejaVu cannot draw set in a fallback font that can (tags and entities
    are ASCII, so they are never split)."""
    if markup.isascii():
        return markup
    return "".join(f'<font name="{font}">{chars}</font>' if font else chars for font, chars in runs(markup))


def draw_string(canvas, x: float, y: float, text: str, font: str, size: float, right: bool = False) -> None:
    """`canvas.drawString` (or drawRightString) with the fallback fonts, for text drawn outside a Paragraph."""
    pieces = [(f or font, chars) for f, chars in runs(text)]
    if right:
        x -= sum(pdfmetrics.stringWidth(chars, f, size) for f, chars in pieces)
    for f, chars in pieces:
        canvas.setFont(f, size)
        canvas.drawString(x, y, chars)
        x += pdfmetrics.stringWidth(chars, f, size)

ACCENT = colors.HexColor("#1F5A96")  # headings, table headers, the tuned curve's partner
CONTRAST = colors.HexColor("#D9822B")  # the second curve in charts only
INK = colors.HexColor("#1C232B")
MUTED = colors.HexColor("#5B6673")
RULE = colors.HexColor("#9AA5B1")
ZEBRA = colors.HexColor("#F2F5F8")
TINT = colors.HexColor("#E8F0F8")  # verdict box, code blocks
BAD = colors.HexColor("#B42318")  # failed/cancelled/crashed status text
GOOD = colors.HexColor("#1E7B34")


def _p(name: str, **kw) -> ParagraphStyle:
    base = dict(fontName=FONT, fontSize=9, leading=12.5, textColor=INK, alignment=TA_LEFT)
    base.update(kw)
    return ParagraphStyle(name, **base)


BODY = _p("body", spaceAfter=6)
SMALL = _p("small", fontSize=7.5, leading=10, textColor=MUTED)
CELL = _p("cell", fontSize=7.5, leading=9.5)
CELL_BOLD = _p("cellBold", fontName=FONT_BOLD, fontSize=7.5, leading=9.5)
HEAD_CELL = _p("headCell", fontName=FONT_BOLD, fontSize=7.5, leading=9.5, textColor=colors.white)
CODE = _p("code", fontName=MONO, fontSize=7.8, leading=9.8)
CODE_CELL = _p("codeCell", fontName=MONO, fontSize=7.5, leading=9.3)
TITLE = _p("title", fontName=FONT_BOLD, fontSize=24, leading=30, textColor=ACCENT, spaceAfter=4)
SUBTITLE = _p("subtitle", fontSize=12, leading=16, textColor=MUTED, spaceAfter=18)
# headings stay on the page of what follows them (keepWithNext)
H1 = _p("h1", fontName=FONT_BOLD, fontSize=14, leading=18, textColor=ACCENT, spaceBefore=14, spaceAfter=6,
        keepWithNext=1)
H2 = _p("h2", fontName=FONT_BOLD, fontSize=10.5, leading=14, textColor=INK, spaceBefore=8, spaceAfter=4,
        keepWithNext=1)
VERDICT = _p("verdict", fontSize=10, leading=14.5)
HEADLINE = _p("headline", fontName=FONT_BOLD, fontSize=22, leading=27, textColor=ACCENT, spaceAfter=2)
BULLET = _p("bullet", fontSize=9.5, leading=13.5, leftIndent=12, bulletIndent=0, spaceAfter=3, bulletFontName=FONT)
