"""The report's building blocks: the page's text width, escaped text, Paragraphs, code blocks and tables.

Below every page of the report (`pdf` lays the document out from them, `profile_page` its "Where the time went"
page), so a page never imports the document that holds it. Every string from a file goes through `esc` before it
reaches a Paragraph: Paragraph text is reportlab mini-markup.
"""

from __future__ import annotations

import re
from typing import Any, Sequence
from xml.sax.saxutils import escape

from reportlab.lib.pagesizes import A4
from reportlab.lib.units import cm
from reportlab.platypus import Paragraph, Table, TableStyle

from . import style

PAGE_W, PAGE_H = A4
MARGIN = 1.8 * cm
WIDTH = PAGE_W - 2 * MARGIN
# A table takes the whole text width, 6 pt more on each side than the page's frame leaves inside its padding, so
# it is centred on the page: a table split over pages has its pieces made without its alignment (reportlab's
# default, centred), and a left-aligned first piece sat 6 pt right of its continuation (issue-42 walk, page 2).
TABLE_ALIGN = "CENTER"


CELL_LIMIT = 400  # characters of file-supplied text in one table cell (a table row cannot span pages)


# Symbols our own messages use that the embedded font may lack a glyph for (they would print as boxes).
_NO_GLYPH = str.maketrans({"→": "->", "←": "<-", "✓": "yes", "✗": "no"})


def esc(value: Any) -> str:
    """A value as literal Paragraph text (markup characters escaped, glyph-less symbols spelled out, CJK in
    the fallback font)."""
    return style.with_fallback(escape(str(value).translate(_NO_GLYPH)))


def short(value: Any, limit: int = CELL_LIMIT) -> str:
    """Text for a table cell: long values are cut, and say so (the full text stays in the study files)."""
    text = str(value)
    return text if len(text) <= limit else text[:limit].rstrip() + " ... (shortened)"


def code_markup(text: str) -> str:
    """Escaped code keeping its line breaks and indentation in a Paragraph."""
    lines = []
    for line in str(text).expandtabs(4).splitlines() or [""]:
        stripped = line.lstrip(" ")
        lines.append("&nbsp;" * (len(line) - len(stripped)) + esc(stripped))
    return "<br/>".join(lines)


def name_markup(name: str, width: float, st: Any = style.CELL) -> str:
    """A long name without spaces (an op's "gradient_tape/sequential/dense_1/MatMul") as Paragraph markup that
    breaks only after its '/', '_' and '.', on lines of `width` points: reportlab cut such a name anywhere
    ("…multi_he" / "ad_attention", issue 42 walk). A single piece wider than a line is elided in its middle, its
    start and end kept."""
    from reportlab.pdfbase import pdfmetrics

    def fits(text: str) -> bool:
        return bool(pdfmetrics.stringWidth(text, st.fontName, st.fontSize) <= width)

    lines: list[str] = []
    for piece in re.findall(r"[^/_.]*[/_.]|[^/_.]+$", name):
        if not fits(piece):
            while len(piece) > 3 and not fits(piece + "…"):
                piece = piece[:len(piece) // 2 - 1] + piece[len(piece) // 2 + 1:]
            piece = piece[:len(piece) // 2] + "…" + piece[len(piece) // 2:]
        if lines and fits(lines[-1] + piece):
            lines[-1] += piece
        else:
            lines.append(piece)
    return "<br/>".join(esc(line) for line in lines)


def P(text: str, st: Any = style.CELL) -> Paragraph:  # noqa: N802 - reads like reportlab's own flowables
    return Paragraph(text, st)


def code_block(text: str) -> Paragraph:
    st = style.CODE.clone("codeBlock", backColor=style.TINT, borderPadding=(5, 6, 5, 6), spaceBefore=4,
                          spaceAfter=10, leftIndent=6, rightIndent=6)
    return Paragraph(code_markup(text), st)


def table(header: list[str], rows: list[list[Any]], widths: Sequence[float], zebra: bool = True,
          split_rows: bool = False) -> Table:
    """A wrapped table: header in the accent colour, repeated on each page; cells are Paragraphs.

    `widths` are relative (scaled to the text width), so they may be given in points. `split_rows`: a row taller
    than what is left of the page continues on the next (cells given whole, never cut: the decisions), split where
    the page ends. Split first at the last whole row, the rest went into the space left on the same page and was
    split again there, under a second header in mid-page (issue-42 walk, the configurations table on page 2).
    """
    data = [[P(esc(h), style.HEAD_CELL) for h in header]]
    for row in rows:
        data.append([c if not isinstance(c, str) else P(esc(short(c))) for c in row])
    scale = WIDTH / sum(widths)
    t = Table(data, colWidths=[w * scale for w in widths], repeatRows=1, hAlign=TABLE_ALIGN, splitInRow=int(split_rows),
              splitByRow=int(not split_rows))
    cmds = [("BACKGROUND", (0, 0), (-1, 0), style.ACCENT),
            ("VALIGN", (0, 0), (-1, -1), "TOP"),
            ("LINEBELOW", (0, 0), (-1, -1), 0.4, style.RULE),
            ("TOPPADDING", (0, 0), (-1, -1), 3), ("BOTTOMPADDING", (0, 0), (-1, -1), 3),
            ("LEFTPADDING", (0, 0), (-1, -1), 4), ("RIGHTPADDING", (0, 0), (-1, -1), 4)]
    if zebra:
        cmds += [("BACKGROUND", (0, i), (-1, i), style.ZEBRA) for i in range(2, len(data), 2)]
    t.setStyle(TableStyle(cmds))
    return t


def kv_table(rows: list[tuple[str, str]], key_width: float = 0.3, limit: int = CELL_LIMIT) -> Table:
    data = [[P(esc(short(k)), style.CELL_BOLD), P(esc(short(v, limit)))] for k, v in rows]
    t = Table(data, colWidths=[WIDTH * key_width, WIDTH * (1 - key_width)], hAlign=TABLE_ALIGN)
    t.setStyle(TableStyle([("VALIGN", (0, 0), (-1, -1), "TOP"), ("LINEBELOW", (0, 0), (-1, -1), 0.4, style.RULE),
                           ("TOPPADDING", (0, 0), (-1, -1), 3), ("BOTTOMPADDING", (0, 0), (-1, -1), 3)]))
    return t
