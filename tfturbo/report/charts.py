"""Vector line charts for the report (reportlab.graphics), one per `model.Plot`.

Drawn as PDF paths with real text, so they print sharply and their labels are
selectable; no Qt or matplotlib needed. Chart strings are drawn literally
(reportlab.graphics does not interpret markup), so names need no escaping here.
"""

from __future__ import annotations

import math

from reportlab.graphics.charts.legends import Legend
from reportlab.graphics.charts.lineplots import LinePlot
from reportlab.graphics.shapes import Drawing, Group, Polygon, Rect, String
from reportlab.graphics.widgets.markers import makeMarker
from reportlab.lib import colors
from reportlab.pdfbase.pdfmetrics import stringWidth

from ..palette import PALETTE
from . import style
from .model import Plot

SERIES_COLORS = tuple(colors.HexColor(c) for c in PALETTE)  # eight, apart for colour-blind readers
BAND_LABEL_SIZE = 6.5
BAND_COLORS = {"warm-up": colors.HexColor("#FDF0D5"), "profiler": colors.HexColor("#EDE4F7")}


def _nice_range(lo: float, hi: float) -> tuple[float, float, float]:
    """Axis bounds and a tick step of 1, 2 or 5 x 10^k giving about five ticks."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return 0.0, 1.0, 0.2
    if hi <= lo:
        pad = abs(lo) * 0.05 or 1.0
        lo, hi = lo - pad, hi + pad
    raw = (hi - lo) / 5
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    return math.floor(lo / step) * step, math.ceil(hi / step) * step, step


def _tick_format(step: float):
    digits = max(0, -int(math.floor(math.log10(step)))) if step < 1 else 0
    return lambda v: f"{v:,.{digits}f}"


def _segments(x: list[float], y: list[float]) -> list[list[tuple[float, float]]]:
    """The curve cut where steps are missing (the profiler window), so no line bridges a gap.

    A gap is a jump in x of more than three times the usual spacing; sparse
    curves (validation points) are never cut.
    """
    points = list(zip(x, y))
    if len(points) < 30:
        return [points]
    spacing = sorted(b - a for a, b in zip(x, x[1:]))[len(x) // 2]
    out, current = [], [points[0]]
    for prev, point in zip(points, points[1:]):
        if point[0] - prev[0] > 3 * spacing:
            out.append(current)
            current = []
        current.append(point)
    out.append(current)
    return out


def line_chart(plot: Plot, width: float, height: float = 150) -> Drawing:
    """A titled chart with axis labels and a legend under the plot area."""
    legend_rows = len(plot.curves)
    legend_h = 12 * legend_rows + 4
    d = Drawing(width, height + legend_h)
    left, bottom, right, top = 48, legend_h + 28, 10, 18
    lp = LinePlot()
    lp.x, lp.y = left, bottom
    lp.width, lp.height = width - left - right, height + legend_h - bottom - top
    lp.data, owner = [], []
    for i, c in enumerate(plot.curves):
        for segment in _segments(c.x, c.y):
            lp.data.append(segment)
            owner.append(i)
    for j, i in enumerate(owner):
        lp.lines[j].strokeColor = SERIES_COLORS[i % len(SERIES_COLORS)]
        lp.lines[j].strokeWidth = 1.1
    xs = [v for c in plot.curves for v in c.x]
    ys = [v for c in plot.curves for v in c.y]
    for axis, values in ((lp.xValueAxis, xs), (lp.yValueAxis, ys)):
        lo, hi, step = _nice_range(min(values), max(values))
        axis.valueMin, axis.valueMax, axis.valueStep = lo, hi, step
        axis.labelTextFormat = _tick_format(step)
        axis.labels.fontName = style.FONT
        axis.labels.fontSize = 7
        axis.labels.fillColor = style.MUTED
        axis.strokeColor = style.RULE
    lp.xValueAxis.tickDown = 3
    lp.yValueAxis.tickLeft = 3
    lp.yValueAxis.visibleGrid = True
    lp.yValueAxis.gridStrokeColor = colors.HexColor("#E3E7EC")
    lp.yValueAxis.gridStrokeWidth = 0.4
    if len(plot.curves[0].x) < 30:  # few points (validation): mark them
        for j, i in enumerate(owner):
            lp.lines[j].symbol = makeMarker("FilledCircle", size=3.5,
                                            fillColor=SERIES_COLORS[i % len(SERIES_COLORS)])
    d.add(lp)
    x_lo, x_hi = lp.xValueAxis.valueMin, lp.xValueAxis.valueMax
    y_lo, y_hi = lp.yValueAxis.valueMin, lp.yValueAxis.valueMax

    def px(v: float) -> float:
        return lp.x + (v - x_lo) / ((x_hi - x_lo) or 1) * lp.width

    def py(v: float) -> float:
        return lp.y + (v - y_lo) / ((y_hi - y_lo) or 1) * lp.height

    labelled: set[str] = set()
    label_rows: list[float] = []  # the right edge of the last label on each row
    for lo, hi, kind in plot.bands:  # warm-up and profiler: shaded behind the curves, labelled once
        x0, x1 = px(max(lo, x_lo)), px(min(hi, x_hi))
        if x1 <= x0:
            continue
        d.contents.insert(0, Rect(x0, lp.y, x1 - x0, lp.height, fillColor=BAND_COLORS.get(kind, style.TINT),
                                  strokeColor=None))
        if kind not in labelled:  # on the lowest row it does not overlap (narrow bands close together stack)
            labelled.add(kind)
            row = next((i for i, edge in enumerate(label_rows) if edge < x0 + 2), len(label_rows))
            label_rows[row:row + 1] = [x0 + 2 + stringWidth(kind, style.FONT, BAND_LABEL_SIZE) + 3]
            d.add(String(x0 + 2, lp.y + 3 + 8 * row, kind, fontName=style.FONT, fontSize=BAND_LABEL_SIZE,
                         fillColor=style.MUTED))
    for i, c in enumerate(plot.curves):  # points clamped at the top edge: a small triangle each
        colour = SERIES_COLORS[i % len(SERIES_COLORS)]
        for x in c.clipped:
            cx, tip = px(x), py(max(c.y))
            d.add(Polygon([cx - 2.5, tip - 4, cx + 2.5, tip - 4, cx, tip], fillColor=colour, strokeColor=None))
    d.add(String(left, height + legend_h - 11, plot.title, fontName=style.FONT_BOLD, fontSize=9.5,
                 fillColor=style.INK))
    d.add(String(left + lp.width / 2, bottom - 22, plot.x_label, fontName=style.FONT, fontSize=7.5,
                 fillColor=style.MUTED, textAnchor="middle"))
    y_label = String(0, 0, plot.y_label, fontName=style.FONT, fontSize=7.5, fillColor=style.MUTED,
                     textAnchor="middle")
    g = Group(y_label)
    g.translate(9, bottom + lp.height / 2)
    g.rotate(90)
    d.add(g)
    legend = Legend()
    legend.x, legend.y = left, legend_h - 2
    legend.boxAnchor = "nw"
    legend.alignment = "right"
    legend.columnMaximum = legend_rows
    legend.deltay = 12
    legend.dx, legend.dy = 14, 2.5
    legend.fontName, legend.fontSize = style.FONT, 7.5
    legend.fillColor = style.INK
    legend.strokeWidth = 0
    legend.strokeColor = None
    legend.colorNamePairs = [(SERIES_COLORS[i % len(SERIES_COLORS)], c.label) for i, c in enumerate(plot.curves)]
    d.add(legend)
    return d
