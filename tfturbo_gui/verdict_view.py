"""The verdict of a confirmation (A/B) trial: the speed interval, the accuracy interval, kept or not, and why.

It renders a verdict document of the `tfturbo ab --json` shape:

    {"speed": {"ratio", "ci95": [lo, hi], "verdict": "faster" | "slower" | "no measurable change",
               "replicates"},
     "accuracy": {"metric", "delta", "ci95": [lo, hi], "verdict": "within tolerance" | "worse" | "inconclusive",
                  "n_examples"},
     "kept", "reason", "findings"}

The document is the trial engine's own verdict (`TrialVerdict.to_dict()`), the
same one `tfturbo ab` prints and study.yaml records. An "inconclusive"
accuracy verdict always says why (how many validation examples, how wide the
interval).
"""

from __future__ import annotations

import math
from typing import Sequence

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QPen
from PySide6.QtWidgets import QFrame, QLabel, QSizePolicy, QVBoxLayout, QWidget

from tfturbo.headline import Headline
from tfturbo.numbers import counted, finite
from tfturbo.trials.verdict import AccuracyVerdict as AccuracyResult
from tfturbo.trials.verdict import NOT_CHECKED, AccuracyDoc, SpeedDoc, TrialVerdictDoc
from tfturbo.trials.verdict import SpeedVerdict as SpeedResult
from tfturbo.verdicts import AccuracyVerdict

from .labels import card_column, card_header, card_reason, in_gui_words, set_badge

WITHIN, WORSE, INCONCLUSIVE = AccuracyVerdict.WITHIN, AccuracyVerdict.WORSE, AccuracyVerdict.INCONCLUSIVE


def _is_loss(metric: str | None) -> bool:
    return bool(metric) and str(metric).endswith("loss")


def _scale(metric: str | None) -> tuple[float, str]:
    """Accuracy deltas in percentage points, losses as they are."""
    return (1.0, "") if _is_loss(metric) else (100.0, " pp")


def speed_text(speed: SpeedDoc) -> str:
    ratio, ci = speed.get("ratio"), speed.get("ci95") or [math.nan, math.nan]
    if not finite(ratio):
        return "not measured (no steady-state steps)"
    reps = speed.get("replicates")
    runs = f" over {counted(reps, 'pair')}" if isinstance(reps, int) else ""  # "pairs" as the table and cards say
    interval = f" [{ci[0]:.2f}, {ci[1]:.2f}]" if all(finite(c) for c in ci) else ""
    direction = SpeedResult.from_dict(speed).direction()  # "slower in 6 of 6 pairs; size uncertain"
    return f"{speed.get('verdict')}: {ratio:.2f}×{interval}{runs}" + (f" ({direction})" if direction else "")


def accuracy_text(accuracy: AccuracyDoc) -> str:
    """The accuracy verdict's line, with where each arm was compared when not at exactly equal samples seen, and
    for a model with several outputs each output's own line below it."""
    result = AccuracyResult.from_dict(accuracy)
    note = result.points_note()
    text = _accuracy_words(accuracy)
    text = f"{text} ({note})" if note else text
    return "\n".join([text, *(f"  {line}" for line in result.output_lines())])


def _accuracy_words(accuracy: AccuracyDoc) -> str:
    result = AccuracyResult.from_dict(accuracy)  # its `shown` prints every delta the way every front end does
    metric, delta, ci, verdict = result.metric, result.delta, result.ci95, result.verdict
    unit = "" if result.is_loss else " pp"
    interval = (f"interval [{result.shown(ci[0], '')}, {result.shown(ci[1], '')}]{unit}"
                if ci and all(finite(c) for c in ci) else "")
    n = accuracy.get("n_examples")
    if result.explanation and (result.unit != "example" or not result.paired):  # a model without labels, or no
        # pairs: the gate's own words say what was compared (`trials.label_free`, `accuracy._unpaired`)
        said = result.explanation
        return said if result.says_verdict or result.opens_with == NOT_CHECKED else f"{verdict}: {said}"
    if verdict == INCONCLUSIVE:
        if metric is None:
            return "inconclusive: the workload reports no validation metric to compare"
        if delta is None:
            return f"inconclusive: {metric} was not measured on both sides"
        parts = [result.paired_on() if isinstance(n, int) else "", interval]
        return f"inconclusive: {', '.join(p for p in parts if p) or 'the interval is too wide to decide'}"
    shown = f"{metric} {result.shown(delta)}" if delta is not None else f"{metric}"
    step = accuracy.get("step")
    where = f" at step {step}" if isinstance(step, int) else ""
    extra = f", {interval}" if interval else ", no interval yet (one run each side)"
    return f"{verdict}: {shown}{where}{extra}"


def nice_ticks(lo: float, hi: float, most: int = 5) -> list[float]:
    """Round values between `lo` and `hi` (steps of 1, 2, 2.5 or 5 x 10^k), at most `most` of them."""
    span = hi - lo
    if not (finite(lo) and finite(hi)) or span <= 0:
        return []
    raw = span / max(1, most - 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step) * step
    return [round(first + k * step, 10) for k in range(int((hi - first) / step + 1e-9) + 1)]


class IntervalBar(QWidget):
    """An interval on a small axis with the reference value marked: the estimate, [lo, hi], and `ref`; under it a
    scale in the value's unit ("1.2×", "+0.5 pp"), so a bar is read as a number (issue 42 walk: the confirmation's
    bars had no scale)."""

    BAR_H = 22  # px of the bar; the scale's labels go under it

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.estimate: float | None = None
        self.interval: tuple[float, float] | None = None
        self.ref = 0.0
        self.band: tuple[float, float] | None = None  # e.g. the accuracy tolerance
        self.unit = ""  # "×", " pp" or "" (a loss), after each tick's value
        self.color = QColor("#0072B2")
        self.setMinimumHeight(self._height())
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def _height(self) -> int:
        return self.BAR_H + self.fontMetrics().height() + 2

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt API)
        return QSize(240, self._height())

    def set_values(self, estimate: float | None, interval: Sequence[float | None] | None, ref: float,
                   color: str, band: tuple[float, float] | None = None, unit: str = "") -> None:
        self.estimate = estimate if finite(estimate) else None
        lo, hi = interval if interval is not None and len(interval) == 2 else (None, None)
        self.interval = (float(lo), float(hi)) if finite(lo) and finite(hi) else None
        self.ref, self.band, self.color, self.unit = ref, band, QColor(color), unit
        self.update()

    def _range(self) -> tuple[float, float]:
        values = [self.ref] + ([self.estimate] if self.estimate is not None else []) + list(self.interval or ()) \
            + list(self.band or ())
        lo, hi = min(values), max(values)
        pad = (hi - lo) * 0.15 or 0.05 * (abs(self.ref) or 1)
        return lo - pad, hi + pad

    def ticks(self) -> list[tuple[float, str]]:
        """The scale: each tick's value and its label with the unit, as drawn."""
        lo, hi = self._range()
        # as few as fit: a label about 6 characters wide each
        most = max(2, min(5, (self.width() - 12) // max(1, 7 * self.fontMetrics().averageCharWidth())))
        values = nice_ticks(lo, hi, most)
        step = values[1] - values[0] if len(values) > 1 else 1.0
        digits = max(0, -math.floor(math.log10(step))) if step < 1 else 0
        sign = "+" if self.unit.strip() == "pp" else ""
        return [(v, f"{v:{sign}.{digits}f}{self.unit}") for v in values]

    def paintEvent(self, _event) -> None:  # noqa: N802 (Qt API)
        lo, hi = self._range()
        w, h = self.width() - 12, self.BAR_H
        x = lambda v: 6 + (v - lo) / (hi - lo) * w  # noqa: E731
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        mid = h / 2
        muted = self.palette().color(self.foregroundRole())
        muted.setAlpha(90)
        p.setPen(QPen(muted, 1))
        p.drawLine(QPointF(6, mid), QPointF(6 + w, mid))
        if self.band is not None:
            band = QColor("#009E73")
            band.setAlpha(45)
            p.fillRect(QRectF(x(self.band[0]), 3, x(self.band[1]) - x(self.band[0]), h - 6), band)
        text = self.palette().color(self.foregroundRole())
        text.setAlpha(170)
        metrics = self.fontMetrics()
        for value, label in self.ticks():  # the scale: a tick under the axis and its value in the unit
            p.setPen(QPen(muted, 1))
            p.drawLine(QPointF(x(value), h - 3), QPointF(x(value), h))
            p.setPen(QPen(text, 1))
            width = metrics.horizontalAdvance(label)
            left = min(max(0.0, x(value) - width / 2), self.width() - width)
            p.drawText(QPointF(left, h + metrics.ascent()), label)
        p.setPen(QPen(muted, 1, Qt.PenStyle.DashLine))
        p.drawLine(QPointF(x(self.ref), 2), QPointF(x(self.ref), h - 2))
        if self.interval is not None:
            p.setPen(QPen(self.color, 5, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
            p.drawLine(QPointF(x(self.interval[0]), mid), QPointF(x(self.interval[1]), mid))
        if self.estimate is not None:
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(self.color.darker(140))
            p.drawEllipse(QPointF(x(self.estimate), mid), 5, 5)
        p.end()


class VerdictView(QFrame):
    """Kept or not, the speed interval and the accuracy interval, each in words and drawn, and why."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.document: TrialVerdictDoc | None = None
        layout = card_column(self, "card", margins=(12, 8, 12, 8), spacing=3)
        self.badge, self.headline = card_header(layout)
        self.speed_label = self._line(layout, "Speed vs baseline")
        self.speed_bar = IntervalBar()
        layout.addWidget(self.speed_bar)
        self.accuracy_label = self._line(layout, "Accuracy vs baseline")
        self.accuracy_bar = IntervalBar()
        layout.addWidget(self.accuracy_bar)
        self.reason = card_reason(layout)
        self.hide()

    @staticmethod
    def _line(layout: QVBoxLayout, title: str) -> QLabel:
        name = QLabel(title)
        name.setObjectName("muted")
        font = QFont(name.font())
        font.setPointSizeF(max(7.0, font.pointSizeF() - 0.5))
        name.setFont(font)
        layout.addWidget(name)
        value = QLabel()
        value.setObjectName("verdictLine")
        value.setWordWrap(True)
        value.setTextFormat(Qt.TextFormat.PlainText)
        value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(value)
        return value

    def set_verdict(self, document: TrialVerdictDoc, label: str, shown: Headline | None = None, rung: str = "",
                    reason: str | None = None) -> None:
        """`shown`: the configuration's one speed-up (`tfturbo.headline`, of rung `rung`), said and drawn instead of
        this trial's own ratio when several trials measured the same comparison; `reason`: the reason beside it
        (`headline.reason_beside`), else the document's."""
        self.document = document
        kept = bool(document.get("kept"))
        set_badge(self.badge, kept)
        self.headline.setText(f"{label}: " + ("recommended" if kept else "not recommended"))
        speed = document.get("speed") or {}
        if shown is not None and shown.has_interval:
            speed = {"ratio": shown.ratio, "ci95": list(shown.ci95), "verdict": shown.verdict}
            self.speed_label.setText(f"{shown.verdict}: {shown.text()} {shown.source(rung)}")
        else:
            self.speed_label.setText(speed_text(speed))
        colour = {"faster": "#009E73", "slower": "#D55E00"}.get(str(speed.get("verdict")), "#0072B2")
        ci = speed.get("ci95")
        self.speed_bar.set_values(speed.get("ratio"), tuple(ci) if ci else None, 1.0, colour, unit="×")
        accuracy = document.get("accuracy") or {}
        self.accuracy_label.setText(accuracy_text(accuracy))
        factor, unit = _scale(accuracy.get("metric"))
        delta = accuracy.get("delta")
        aci = accuracy.get("ci95")
        colour = {WITHIN: "#009E73", WORSE: "#D55E00"}.get(str(accuracy.get("verdict")), "#E69F00")
        self.accuracy_bar.set_values(delta * factor if finite(delta) else None,
                                     [c * factor if finite(c) else None for c in aci] if aci else None, 0.0, colour,
                                     unit=unit)
        self.accuracy_bar.setVisible(bool(aci))  # a lone point at 0 says nothing: drawn once there is an interval
        self.reason.setText(in_gui_words(reason if reason is not None else str(document.get("reason") or "")))
        self.show()
