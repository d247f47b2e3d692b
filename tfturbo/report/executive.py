"""Page 1 of the report: the executive summary a client reads in a minute.

The headline speed-up with its interval, the accuracy verdict in words, one
chart of every configuration's speed-up and accuracy change with their
intervals, and the (at most three) changes to make. Jargon (replicate pairs,
MFU, paired gates) waits for the later pages, each with its one line of
explanation. Every number here is the configuration's headline
(`tfturbo.headline`), the same as in the tables after it.
"""

from __future__ import annotations

import math

from reportlab.graphics.shapes import Drawing, Line, Polygon, Rect, String
from reportlab.lib import colors
from reportlab.pdfbase import pdfmetrics

from ..headline import Headline
from ..verdicts import Decision
from ..numbers import finite
from ..trials.verdict import WORSE, AccuracyVerdict, Tolerance
from ..verdicts import Verdict
from . import style
from .model import LadderRow, ReportData

SPEED_CAP = 4.0  # x: an interval beyond is drawn to the edge with an arrow, so one wild run cannot squash the rest
ACC_CAP = 5.0  # tolerances: the same for the accuracy panel


def headline_sentence(data: ReportData) -> tuple[str, str]:
    """(the big line, the line under it): '1.67x faster' and what it is, in plain words."""
    tuned, base = data.tuned, data.baseline
    if tuned is None or tuned.headline is None or tuned.row is None or base is None or base.row is None:
        return ("Keep the current settings",
                "No change was shown to be both faster and within the accuracy tolerance on this hardware "
                "(every configuration is in the chart below)."
                if data.rungs else "No configuration was measured (see the verdict on the next page).")
    shown = tuned.headline
    lo, hi = shown.ci95
    against = "the baseline" if shown.vs_baseline else shown.against_words
    big = f"{shown.ratio:.2f}x as fast" if shown.verdict != Verdict.FASTER else f"{shown.ratio:.2f}x faster"
    interval = f"between {lo:.2f}x and {hi:.2f}x (95% interval)" if shown.has_interval else "without an interval"
    return big, (f"Training with {tuned.row.label} instead of {base.row.label}: {interval}, measured side by "
                 f"side with {against} on this hardware, run-to-run variation included.")


def accuracy_sentence(data: ReportData, tolerance: Tolerance) -> str:
    """The accuracy verdict in words (of the trial behind the headline, against the baseline)."""
    tuned = data.tuned
    acc = None
    if tuned is not None and tuned.headline is not None:
        trial = next((r for r in data.rungs if r.name == tuned.headline.trial), tuned)
        acc = trial.accuracy
        rung = getattr(trial, "rung", None)
        decision = getattr(rung, "decision", None)
        # the rule that judged it (a tolerance the user set is its own, issue 39), not the study's default
        tolerance = decision.rule if decision is not None and decision.rule is not None else tolerance
    if acc is None or acc.metric is None:
        return "Accuracy: no validation metric was recorded to check it." if tuned is not None else ""
    if acc.delta is None or not finite(acc.delta):
        return f"Accuracy: {acc.text()}."
    limit = f"{tolerance.accuracy_pp:g} percentage points" if not acc.is_loss else f"{tolerance.loss_rel:.0%}"
    change = acc.shown(acc.delta, " percentage points")
    lo, hi = acc.ci95 if acc.ci95 else (math.nan, math.nan)
    better = (hi < 0) if acc.is_loss else (lo > 0)  # the whole interval on the better side of the baseline
    # "unchanged" read wrong beside "+4.67 percentage points" [+3.18, +6.15] (issue 22 walk, a larger batch)
    within = ("better than the baseline, the whole 95% interval on the better side" if better else
              f"unchanged within the tolerance of {limit}")
    words = {"within tolerance": within,
             WORSE: f"worse by more than the tolerance of {limit}",
             "inconclusive": "not decided: the validation set is too small to tell"}.get(acc.verdict, acc.verdict)
    if not acc.paired:  # a model without labels and validation data: its training loss, as a point estimate
        return f"Accuracy: {acc.text()}."
    chosen = "" if tolerance.is_default else " (the tolerance the user set)" if not acc.is_loss else ""
    worse = (" Worse beyond its noise: " + "; ".join(acc.also_worse) + ".") if acc.also_worse else ""
    interval = f" [{acc.shown(lo, '')}, {acc.shown(hi, ' pp')}]" if acc.ci95 else ""
    return (f"Accuracy: {words}{chosen} ({acc.metric} {change}{interval} on {acc.paired_on()}, at equal samples "
            "seen)." + acc.outputs_sentence() + worse)


def _measured(data: ReportData) -> list[LadderRow]:
    """Every configuration the study measured (a run of its own), baseline first, one row per configuration (a
    confirmation repeats its rung's configuration and number, so it is not drawn twice). A configuration without a
    speed-up (its change did not take effect, its run failed) is a row too, saying why: the chart's title says it
    holds every configuration (issue 42: the XLA row was missing)."""
    out, seen = [], set()
    for r in data.rungs:
        if r.row is None:
            continue
        key = r.row.label
        if key in seen:
            continue
        seen.add(key)
        out.append(r)
    return out


LABEL_LINES = 3  # a row's label wraps to at most this many lines
LABEL_LEADING = 8.5  # points between its lines (7.5 pt text)


def _no_speed(r: LadderRow) -> str:
    """Why a configuration has no speed-up to draw, in a few words."""
    decision = r.rung.decision if r.rung else None
    if r.row is not None and r.row.status != "completed":
        return f"not measured (the run {r.row.status})"
    if decision is not None and decision.speed.verdict:
        return f"no speed-up: {decision.speed.verdict}"
    return "not measured"


def _acc_value(acc: AccuracyVerdict | None) -> tuple[float, float, float] | None:
    """(delta, lo, hi) in the unit drawn: percentage points of an accuracy, percent of a loss."""
    if acc is None or acc.delta is None or not finite(acc.delta) or not acc.ci95:
        return None
    scale = 100.0
    return acc.delta * scale, acc.ci95[0] * scale, acc.ci95[1] * scale


def _headline(r: LadderRow) -> Headline:
    assert r.headline is not None, "a measured configuration (_measured)"
    return r.headline


def configurations_chart(data: ReportData, width: float, tolerance: Tolerance) -> Drawing | None:
    """Every configuration's speed-up (left) and accuracy change (right), each with its 95% interval; kept
    configurations in the accent colour, the others grey; values beyond the axis end in an arrow."""
    rows = _measured(data)
    if len(rows) < 2:
        return None
    top, bottom = 22, 26
    label_w = width * 0.34
    # each row's label whole on up to LABEL_LINES lines (never cut inside a word); the rows as tall as the longest
    labels = [_label(data, r, label_w - 6) for r in rows]
    row_h = max(17.0, max(len(lines) for lines in labels) * LABEL_LEADING + 4)
    gap = 14
    panel_w = (width - label_w - gap) / 2
    height = top + bottom + row_h * len(rows)
    d = Drawing(width, height)
    speeds = [(r.headline.ratio, *r.headline.ci95) if r.headline is not None else None for r in rows]
    finite_speeds = [v for s in speeds if s for v in s if finite(v)]
    s_lo = min([0.8] + [v for v in finite_speeds if v > 0])
    s_hi = min(SPEED_CAP, max([1.2] + finite_speeds))
    s_lo, s_hi = max(0.0, s_lo - 0.1), s_hi + 0.1
    # one metric on the axis: the study's (the baseline's validation metric) when a trial judged on it; a row judged
    # on another (the way forward "judge on the loss") says its change in words, never as a bar on this axis
    judged = [r.accuracy.metric for r in rows if r.accuracy is not None and r.accuracy.metric]
    metric = data.metric if data.metric in judged else (judged[0] if judged else None)
    other = {i: r.accuracy for i, r in enumerate(rows) if r is not data.baseline and r.accuracy is not None
             and r.accuracy.metric and r.accuracy.metric != metric}
    accs = [(0.0, 0.0, 0.0) if r is data.baseline else None if i in other else _acc_value(r.accuracy)
            for i, r in enumerate(rows)]
    is_loss = bool(metric and metric.endswith("loss"))
    if is_loss:  # a loss's tolerance is relative to the baseline's loss: no band in absolute units
        accs = [(a[0] / 100, a[1] / 100, a[2] / 100) if a else None for a in accs]
    tol = None if is_loss else tolerance.accuracy_pp
    spread = [abs(v) for a in accs if a for v in a]
    a_span = min(ACC_CAP * tol, max([tol * 1.5] + spread)) if tol else (max(spread, default=0.0) or 1)
    unit = "" if is_loss else " (pp)"
    accuracy_title = f"{metric or 'Accuracy'} change vs the baseline{unit}"  # shorter where it is wider than its panel
    if pdfmetrics.stringWidth(accuracy_title, style.FONT_BOLD, 8) > panel_w:
        accuracy_title = f"{metric or 'Accuracy'} change{unit}"
    panels = [("Speed-up vs the baseline (x)", label_w, s_lo, s_hi, 1.0),
              (accuracy_title,
               label_w + panel_w + gap, -a_span * 1.1, a_span * 1.1, 0.0)]
    plot_bottom = bottom
    plot_top = height - top
    tick_spans: list[tuple[float, float]] = []  # the tick labels drawn so far: the two panels' ends meet at `gap`
    for title, x0, lo, hi, ref in panels:
        d.add(String(x0, height - 11, _fit(title, panel_w, 8, style.FONT_BOLD), fontName=style.FONT_BOLD, fontSize=8,
                     fillColor=style.INK))

        def px(v: float, x0=x0, lo=lo, hi=hi) -> float:
            return x0 + (min(max(v, lo), hi) - lo) / (hi - lo) * panel_w

        if ref == 0.0 and tol:  # the tolerance band: inside it is "unchanged"
            d.add(Rect(px(-tol), plot_bottom, px(tol) - px(-tol), plot_top - plot_bottom, fillColor=style.TINT,
                       strokeColor=None))
        d.add(Line(px(ref), plot_bottom, px(ref), plot_top, strokeColor=style.RULE, strokeWidth=0.8,
                   strokeDashArray=[2, 2]))
        d.add(Line(x0, plot_bottom, x0 + panel_w, plot_bottom, strokeColor=style.RULE, strokeWidth=0.5))
        for tick in _ticks(lo, hi):
            d.add(Line(px(tick), plot_bottom, px(tick), plot_bottom - 3, strokeColor=style.RULE, strokeWidth=0.5))
            half = pdfmetrics.stringWidth(f"{tick:g}", style.FONT, 6.5) / 2 + 1
            if any(px(tick) - half < b and a < px(tick) + half for a, b in tick_spans):
                continue  # a label that would run into its neighbour's (the other panel's end) is left out
            tick_spans.append((px(tick) - half, px(tick) + half))
            d.add(String(px(tick), plot_bottom - 11, f"{tick:g}", fontName=style.FONT, fontSize=6.5,
                         fillColor=style.MUTED, textAnchor="middle"))
        for i, r in enumerate(rows):
            y = plot_top - row_h * (i + 0.5)
            value = speeds[i] if ref == 1.0 else accs[i]
            colour = style.ACCENT if (r.kept or r is data.baseline) else colors.HexColor("#8A94A0")
            if value is None or not all(finite(v) for v in value):
                acc = other.get(i) if ref == 0.0 else None
                words = _no_speed(r) if ref == 1.0 else \
                    f"judged on {acc.metric}: {acc.shown(acc.delta)} (not on this axis)" if acc is not None and \
                    acc.delta is not None and finite(acc.delta) else "not measured"
                d.add(String(x0 + 2, y - 3, _fit(words, panel_w - 4, 6.5), fontName=style.FONT, fontSize=6.5,
                             fillColor=style.MUTED))
                continue
            mid, a, b = value
            d.add(Line(px(a), y, px(b), y, strokeColor=colour, strokeWidth=1.6))
            for end, v, direction in ((a, a, -1), (b, b, 1)):
                if v < lo or v > hi:  # beyond the axis: an arrow at the edge, not a rescaled chart
                    edge = px(v)
                    d.add(Polygon([edge, y, edge - 5 * direction, y + 3, edge - 5 * direction, y - 3],
                                  fillColor=colour, strokeColor=None))
                else:
                    d.add(Line(px(end), y - 3, px(end), y + 3, strokeColor=colour, strokeWidth=1))
            d.add(Rect(px(mid) - 2.5, y - 2.5, 5, 5, fillColor=colour, strokeColor=colors.white, strokeWidth=0.5))
            if ref == 1.0:  # the value, and what it is against when that is not the baseline (its own trial's)
                shown = f"{mid:.2f}x" + ("" if _headline(r).vs_baseline else f" vs {_headline(r).against_words}")
                shown = _fit(shown, panel_w - 2, 6.5)
                x, anchor, at = value_place(pdfmetrics.stringWidth(shown, style.FONT, 6.5), px(a), px(b), px(mid),
                                            (x0, x0 + panel_w), px(ref))
                d.add(String(x, y + at, shown, fontName=style.FONT, fontSize=6.5, fillColor=style.INK,
                             textAnchor=anchor))
    for i, (r, lines) in enumerate(zip(rows, labels)):
        y = plot_top - row_h * (i + 0.5) + (len(lines) - 1) * LABEL_LEADING / 2  # the lines centred on the row
        style_font = style.FONT_BOLD if r is data.tuned else style.FONT
        for n, line in enumerate(lines):
            for font, chars, x in _runs_at(line, 0, style_font, 7.5):
                d.add(String(x, y - 2.5 - n * LABEL_LEADING, chars, fontName=font, fontSize=7.5, fillColor=style.INK))
    return d


def _label(data: ReportData, r: LadderRow, width: float) -> list[str]:
    """A row's label in lines: its configuration ("baseline: float32, batch 64", "20 steps per call"), whether it
    was kept, and what it was measured against when not the baseline; measured in the font it is drawn in (the
    recommendation's row is bold, and wider)."""
    name = r.row.configuration if r.row else r.name
    role = "" if r is data.baseline or r.kept else f" ({Decision.NOT_KEPT})"
    if r.headline is not None and not r.headline.vs_baseline:  # never measured against the baseline itself
        role += f" vs {r.headline.against_words}"
    return wrapped(name + role, width, 7.5, style.FONT_BOLD if r is data.tuned else style.FONT)


def _ticks(lo: float, hi: float) -> list[float]:
    raw = (hi - lo) / 4
    mag = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step) * step
    return [round(first + k * step, 10) for k in range(int((hi - first) / step) + 1)]


def _fit(text: str, width: float, size: float, font: str = style.FONT) -> str:
    """`text`, or as many of its whole words as fit with "…" after them: a cut inside a word read
    "…float32 outp..." (issue 42 walk). Only a first word wider than `width` is cut inside."""
    if pdfmetrics.stringWidth(text, font, size) <= width:
        return text
    words = text.split(" ")
    while len(words) > 1:
        words.pop()
        shown = " ".join(words).rstrip(" +,:;(") + " …"
        if pdfmetrics.stringWidth(shown, font, size) <= width:
            return shown
    text = words[0]
    while text and pdfmetrics.stringWidth(text + "…", font, size) > width:
        text = text[:-1]
    return text + "…"


def wrapped(text: str, width: float, size: float, font: str = style.FONT, most: int = LABEL_LINES) -> list[str]:
    """`text` on up to `most` lines of `width` points, broken between words (a configuration's name breaks after
    its " + "); what still does not fit ends the last line as whole words and "…" (`_fit`)."""
    lines: list[str] = []
    for word in text.split(" "):
        if lines and pdfmetrics.stringWidth(f"{lines[-1]} {word}", font, size) <= width:
            lines[-1] += f" {word}"
        else:
            lines.append(word)
    if len(lines) > most:
        lines = lines[:most - 1] + [_fit(" ".join(lines[most - 1:]), width, size, font)]
    return [_fit(line, width, size, font) for line in lines]


def value_place(width: float, a: float, b: float, mid: float, panel: tuple[float, float],
                ref: float) -> tuple[float, str, float]:
    """(x, anchor, y offset from the bar) of a speed-up's value `width` points wide beside its interval [a, b]
    (x positions; `mid` its square): after the interval, else before it, where it stays inside the panel and
    clear of the dashed 1.00x line `ref`; else above the bar, centred on its square (inside the panel). Never over the row's label (a value drawn before
    an interval that starts near the panel's left edge ran into it: "…batch 128" over "1.21x") nor over the bar."""
    lo, hi = panel
    sides = [(b + 4, "start", b + 4, b + 4 + width), (a - 4, "end", a - 4 - width, a - 4)]
    clear = [side for side in sides if side[2] >= lo and side[3] <= hi and not side[2] - 1 < ref < side[3] + 1]
    for x, anchor, _, _ in clear:
        return x, anchor, -2.5
    return min(max(mid, lo + width / 2), hi - width / 2), "middle", 4.5


def _runs_at(text: str, x: float, font: str, size: float) -> list[tuple[str, str, float]]:
    """(font, characters, x) pieces of `text` with the CJK fallback fonts (charts draw strings, not Paragraphs)."""
    out = []
    for fallback, chars in style.runs(text):
        f = fallback or font
        out.append((f, chars, x))
        x += pdfmetrics.stringWidth(chars, f, size)
    return out
