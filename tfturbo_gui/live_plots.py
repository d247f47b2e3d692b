"""Step time, loss, validation metric and loss scale of one or more runs, painted on a timer.

Data arrives at the backend's rate; the screen is repainted at most every
`REFRESH_MS` and only when a run's `version` changed (pyqtgraph's
scrollingPlots pattern). The step-time curve is min/max-decimated as it grows
(`decimate.PeakDecimator`: spikes stay visible) and curves clip to the view, so
a run of a million steps stays cheap to draw. The primary run (the one the
page is measuring) gets its warm-up and profiler windows shaded and its
steady-state median drawn as a line; other runs (the baseline, or runs picked
in the compare view) are drawn beside it.

Ranges are set explicitly, and only when they change: pyqtgraph's auto-range
re-fits after every `setData` and repaints the window several times per
refresh (benchmarks/gui_ingest.py: 100+ ms UI stalls). The x range grows in
steps (`_grow`), so a long run re-ranges a few dozen times, not every tick.
A plot the user zoomed or panned keeps the user's view until its "A" button.
The legend is a row of labels above the plots, never over the data; step
times above the step-time plot's range are marked at its top edge.
"""

from __future__ import annotations

from dataclasses import dataclass

import math
import re

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, QSize, Qt, QTimer
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import QApplication, QGridLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

from tfturbo import summary as summ
from tfturbo.palette import PALETTE

from . import theme
from .decimate import PeakDecimator
from .run_data import RunData

REFRESH_MS = 100
ACCENT = PALETTE[0]
BASELINE_GREY = "#8b95a5"
SPIKE_COLOR = "#D55E00"
MAX_SPIKE_MARKS = 2000
WARMUP_BRUSH = (245, 158, 11, 45)
PROFILE_BRUSH = (147, 51, 234, 30)

pg.setConfigOptions(antialias=True, background="w", foreground="#374151")


def _grow(value: float) -> float:
    """The next 'nice' bound at or above `value` (1, 1.25, 1.6, 2, 2.5, 3.2, 4, 5, 6.4, 8 × 10^k), so a
    growing run changes its axis range rarely."""
    if not math.isfinite(value) or value <= 0:
        return 1.0
    exp = math.floor(math.log10(value))
    for m in (1, 1.25, 1.6, 2, 2.5, 3.2, 4, 5, 6.4, 8, 10):
        if m * 10 ** exp >= value:
            return m * 10 ** exp
    return 10 ** (exp + 1)


@dataclass
class Series:
    """One run on the plots and how it is drawn."""

    data: RunData
    label: str
    color: str = ACCENT
    dashed: bool = False
    samples_per_step: int = 1  # the batch size: runs of different batch sizes are aligned by samples seen


def _pen(series: Series) -> object:
    # Width 1: Qt strokes a wider antialiased pen through its general stroker, and a peak-downsampled
    # step-time curve of a long run then costs ~1 s per repaint (benchmarks/gui_ingest.py: 20,000
    # samples/s and 300 ms UI stalls at 1.6 px, 170,000 samples/s at 1 px).
    return pg.mkPen(series.color, width=1, style=Qt.PenStyle.DashLine if series.dashed else Qt.PenStyle.SolidLine)


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _x(data: RunData, by_time: bool, scale: float = 1.0) -> np.ndarray:
    """Step number (times `scale`, the samples per step, when runs of different batch sizes are aligned by
    samples seen), or training time in seconds (cumulative step time) to align runs by wall time."""
    if not by_time:
        return data.step.view() * scale if scale != 1.0 else data.step.view()
    ms = np.nan_to_num(data.step_ms.view(), nan=0.0)
    return np.cumsum(ms) / 1000.0


def _plain(html: str) -> str:
    """A label's rich text as the characters it shows (for measuring its width)."""
    return re.sub(r"<[^>]+>", "", html)


def _legend_line(series: Series) -> str:
    line = "╌╌" if series.dashed else "━━"
    return f'<span style="color:{series.color}; font-weight:700">{line}</span>'


def _entry_html(line: str, name: str) -> str:
    """A legend entry: its coloured line (`_legend_line`) and its run's name."""
    return f"{line} {_html(name)}"


class LegendStrip(QWidget):
    """The rows above the plots: legend entries, each whole, flowing onto a second row when one is not enough,
    then "+N more" (its tooltip names the rest, each with its colour). (The spike note is in the step-time plot:
    here it gave way to the names as "▲ 76", cut from "▲ 76 steps above range" — the issue 42 walk.)

    The first `KEEP` entries — the page's own configuration and its reference — are always named whole: at
    1024 px they were shortened in the middle ("mixed_bflo…ch 50 (b2)", issue 22) and before that the
    reference went under "+1 more". Only a strip too narrow for one of them alone on its row (no supported
    window size) shortens it. The rows follow the entries and the width alone. It asks for no
    width of its own, so a study of 25 runs cannot widen the window (it did: 25 × 40 px minimum). No layout
    manager: `fit` places every label itself."""

    SPACING = 14
    KEEP = 2
    ROWS = 2  # rows at most; what does not fit them goes under "+N more"
    MIN_NAME = 40  # px of a name shortened in a strip too narrow for it, at least

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.more = QLabel("", self)
        self.more.setObjectName("muted")
        self.more.hide()
        self.entries: list[QLabel] = []
        self.htmls: list[str] = []
        self.lines: list[str] = []  # each entry's coloured line (html)
        self.names: list[str] = []  # each entry's whole name
        self.shown_names: list[str] = []  # the names as shown (whole, unless the strip is too narrow for one)
        self.rows_used = 1
        self._full: list[int] = []  # each entry's width with its whole name
        self.setFixedHeight(self.row_height())

    def row_height(self) -> int:
        return self.fontMetrics().height() + 4

    def set_entries(self, entries: list[QLabel], lines: list[str], names: list[str]) -> None:
        self.entries, self.lines, self.names = list(entries), list(lines), list(names)
        self.htmls = [_entry_html(line, name) for line, name in zip(lines, names)]
        for label, html in zip(self.entries, self.htmls):
            label.setParent(self)
            label.setText(html)
        self._full = [label.sizeHint().width() for label in self.entries]
        self.shown_names = list(names)
        self.fit()

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt API)
        return QSize(0, self.height())

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt API)
        return QSize(0, self.height())

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt API)
        super().resizeEvent(event)
        self.fit()

    def _advance(self, label: QLabel, html: str) -> int:
        return label.fontMetrics().horizontalAdvance(_plain(html)) + 4

    def _rows(self, available: int) -> list[list[int]]:
        """Entries per row: whole, in order; the rest left out."""
        rows: list[list[int]] = [[]]
        used = 0
        for i, w in enumerate(self._full):
            room = available
            if rows[-1] and used + self.SPACING + w > room:
                if len(rows) == self.ROWS:
                    break
                rows.append([])
                used = 0
            used += (self.SPACING if rows[-1] else 0) + w
            rows[-1].append(i)
        kept = [i for row in rows for i in row]
        rest = len(self._full) - len(kept)
        if rest:  # "+N more" after the last row's entries: entries beyond the kept ones make room for it
            more_w = self.more.fontMetrics().horizontalAdvance(f"+{len(self._full)} more") + 4
            last = rows[-1]
            room = available
            while len(last) > 1 and last[-1] >= self.KEEP and \
                    sum(self._full[i] for i in last) + self.SPACING * len(last) + more_w > room:
                last.pop()
        return rows

    def fit(self) -> None:
        """Place the entries (whole) on their rows, "+N more" after them."""
        available = self.width()
        rows = self._rows(available)
        height = self.row_height()
        shown = {i for row in rows for i in row}
        self.shown_names = list(self.names)
        ends = []
        for r, row in enumerate(rows):
            x = 0
            for i in row:
                label, width = self.entries[i], self._full[i]
                text = self.htmls[i]
                if width > available:  # a strip narrower than this one name: shortened, whole in the tooltip
                    metrics = label.fontMetrics()
                    name_room = max(self.MIN_NAME, available - (width - metrics.horizontalAdvance(self.names[i])))
                    self.shown_names[i] = metrics.elidedText(self.names[i], Qt.TextElideMode.ElideMiddle, name_room)
                    text = _entry_html(self.lines[i], self.shown_names[i])
                    width = min(available, self._advance(label, text))
                if label.text() != text:
                    label.setText(text)
                label.setGeometry(x, r * height, width, height)
                x += width + self.SPACING
            ends.append(x)
        for i, label in enumerate(self.entries):
            if label.isHidden() != (i not in shown):
                label.setHidden(i not in shown)
        rest = len(self.entries) - len(shown)
        if rest:
            self.more.setText(f"+{rest} more")
            self.more.setToolTip("<br>".join(self.htmls[i] for i in range(len(self.entries)) if i not in shown))
            self.more.setGeometry(ends[-1], (len(rows) - 1) * height, self._advance(self.more, self.more.text()), height)
        if self.more.isHidden() != (rest == 0):
            self.more.setHidden(rest == 0)
        self.rows_used = len(rows) if any(rows) else 1
        if self.height() != self.rows_used * height:
            self.setFixedHeight(self.rows_used * height)


class RunPlots(QWidget):
    """Four plots in a grid; `set_series` chooses the runs, `refresh` repaints what changed."""

    def __init__(self, parent: QWidget | None = None, columns: int = 2):
        super().__init__(parent)
        self.series: list[Series] = []
        self.primary: RunData | None = None
        self.own: RunData | None = None  # the page's own configuration's run (the legend's first entry)
        self.no_validation = "Validation"  # the validation plot's title while no run shown has validated
        self.by_time = False
        self._scales: dict[int, float] = {}  # id(RunData) -> samples per step, when the batch sizes differ
        self._painted: tuple = ()
        self._ranges: dict[str, tuple] = {}  # plot name -> the range last set
        self._wanted: dict[str, tuple] = {}  # plot name -> its fitted range, set one plot per tick
        self.user_zoomed: set[str] = set()  # plots whose view the user chose
        self.spikes_above = 0
        dark = theme.system_is_dark() if QApplication.instance() is not None else False
        self.background, self.foreground = theme.plot_colors(dark)
        pg.setConfigOptions(background=self.background, foreground=self.foreground)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(4)
        # The legend strip has its height from the start and holds the spike note at its right: a strip
        # that appeared with the first data re-laid and repainted all four plots at once (50-70 ms, the
        # longest UI stall of a run's start in benchmarks/gui_ingest.py). It never asks for width: the
        # names that fit are shown whole, the rest are named in the tooltip of "+N more" (`LegendStrip`).
        self.legend_strip = strip = LegendStrip()
        self.more_label = strip.more
        outer.addWidget(strip)
        self.legend_labels: list[QLabel] = []  # one per series, the page's run first; those that do not fit are hidden
        self._legend_series: list[Series] = []  # the series of `legend_labels`, in their order
        self.grid = grid = QGridLayout()
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setSpacing(8)
        outer.addLayout(grid, 1)
        self.columns = columns
        self.step_plot = self._plot("Step time", "ms")
        self.loss_plot = self._plot("Training loss", "")
        self.val_plot = self._plot("Validation", "")
        self.scale_plot = self._plot("Loss scale", "")
        self._lay_out(with_scale=False)  # shown once a run on the page has a loss scale (only mixed_float16)
        self.spikes = pg.ScatterPlotItem(symbol="t1", size=7, pen=None, brush=pg.mkBrush(SPIKE_COLOR))
        self.step_plot.addItem(self.spikes, ignoreBounds=True)
        # steady steps above the step-time range, counted at the plot's top right, inside it, whole
        self._spike_html = ""  # its text ("" when no steady step is above the range)
        self.spike_note = pg.TextItem(anchor=(1, 0), color=self.foreground, fill=self._label_fill())
        self.spike_note.textItem.document().setDocumentMargin(1)
        self.spike_note.setZValue(6)
        self.spike_note.hide()
        self.step_plot.addItem(self.spike_note, ignoreBounds=True)
        self._band_px = 0.0  # the labels' rows at the plot's top: the step-time range leaves them this room
        self._band_key: tuple[int, int] = (0, 0)  # (band, view height) the range was last fitted for
        # whether a run has a loss scale, said in the plot's title (a TextItem in the view re-painted the plot
        # every tick); None until the first refresh sets the title
        self.has_scale: bool | None = None
        self.scale_plot.setToolTip("The dynamic loss scale: only mixed_float16 has one")
        self.curves: dict[str, list[pg.PlotDataItem]] = {"step_ms": [], "loss": [], "val": [], "loss_scale": []}
        self._decor: list[tuple[pg.PlotWidget, object]] = []
        self._decor_key: tuple | None = None  # what the shaded windows were drawn for
        # each shaded window's label, the invisible line above the curves it hangs from, and its row
        self._shade_labels: list[tuple[pg.InfiniteLine, pg.InfLineLabel, int]] = []
        view = self.step_plot.getPlotItem().getViewBox()
        view.sigResized.connect(self._place_labels)  # rows are pixels from the top: a short plot re-places them
        view.sigXRangeChanged.connect(self._place_labels)
        view.sigYRangeChanged.connect(self._place_labels)
        # its value is in the plot's title, not a label over the data
        self.median_line = pg.InfiniteLine(angle=0, pen=pg.mkPen(self.foreground, width=1,
                                                                 style=Qt.PenStyle.DotLine))
        self.val_metric = ""
        self.timer = QTimer(self)
        self.timer.timeout.connect(self.refresh)
        self.timer.start(REFRESH_MS)

    def _lay_out(self, with_scale: bool) -> None:
        """The plots in the grid, row by row; without the loss-scale plot the last row's plot takes its room."""
        every = (self.step_plot, self.loss_plot, self.val_plot, self.scale_plot)
        shown = list(every if with_scale else every[:3])
        for widget in every:
            self.grid.removeWidget(widget)
        self.scale_plot.setVisible(with_scale)
        columns = self.columns
        for i, widget in enumerate(shown):
            last = i == len(shown) - 1
            span = columns - i % columns if last else 1  # the last plot fills the rest of its row
            self.grid.addWidget(widget, i // columns, i % columns, 1, span)
        # rows and columns share the room equally: by size hints alone, with the loss-scale plot shown, the
        # step-time row got its 110 px minimum and the training-loss column its 160 px, at 1400x900
        rows = math.ceil(len(shown) / columns)
        for row in range(math.ceil(len(every) / columns)):
            self.grid.setRowStretch(row, 1 if row < rows else 0)
        for column in range(columns):
            self.grid.setColumnStretch(column, 1)

    def _plot(self, title: str, unit: str) -> pg.PlotWidget:
        widget = pg.PlotWidget()
        widget.setMinimumSize(160, 110)
        item = widget.getPlotItem()
        item.disableAutoRange()  # ranges are set by `_apply_one_range`, only when they change
        name = {"Step time": "step_ms", "Training loss": "loss", "Validation": "val", "Loss scale": "loss_scale"}[title]
        item.getViewBox().sigRangeChangedManually.connect(lambda *_a, n=name: self._user_zoomed(n))
        item.autoBtn.clicked.connect(lambda *_a, n=name: self._reset_zoom(n))
        item.setTitle(title, size="9pt")
        item.setLabel("bottom", "step")
        if unit:
            item.setLabel("left", unit)
        item.showGrid(x=True, y=True, alpha=0.15)
        for side in ("left", "bottom"):  # major and minor grid lines; a third level of faint ones cost 3/4 of
            item.getAxis(side).setStyle(maxTickLevel=1)  # a repaint (benchmarks/gui_ingest.py), barely visible
            item.getAxis(side).enableAutoSIPrefix(False)  # the labels name their units: never "(x0.001)"
        item.setDownsampling(auto=True, mode="peak")  # auto: without it pyqtgraph draws every point
        item.setClipToView(True)
        widget.setMenuEnabled(False)
        return widget

    # ------------------------------------------------------------ what to draw

    def set_series(self, series: list[Series], primary: RunData | None = None, own: RunData | None = None) -> None:
        """Draw these runs; `primary` (the run going, or the one looked at) gets the warm-up shading and the
        steady median line; `own` (default `primary`): the page's own configuration, named first in the legend
        whichever run is going (the confirmation's reference run took the first, solid entry while it ran)."""
        for plot_name, curves in self.curves.items():
            widget = self._widget(plot_name)
            for curve in curves:
                widget.removeItem(curve)
            curves.clear()
        self.series = list(series)
        self.primary = primary
        self.own = own if own is not None else primary
        batches = {s.samples_per_step for s in self.series}
        self._scales = {id(s.data): float(s.samples_per_step) for s in self.series} if len(batches) > 1 else {}
        for widget in (self.step_plot, self.loss_plot, self.val_plot, self.scale_plot):
            widget.getPlotItem().setLabel("bottom", "training time (s)" if self.by_time else
                                          "samples seen" if self._scales else "step")
        for s in self.series:
            for plot_name in self.curves:
                # a noisy step-time curve drawn antialiased costs most of a repaint; at 1 px it looks the same
                curve = pg.PlotDataItem(pen=_pen(s), connect="finite", antialias=plot_name != "step_ms")
                curve._decimator = PeakDecimator()
                self._widget(plot_name).addItem(curve)
                self.curves[plot_name].append(curve)
        self._fill_legend()
        self._decor_key = None
        self._ranges.clear()
        self.user_zoomed.clear()
        self._painted = ()
        self.refresh()

    def _fill_legend(self) -> None:
        """One label per run above the plots: a line in its colour (dashed for the reference) and its whole
        name; the strip shows as many as fit and "+N more" for the rest (`LegendStrip.fit`)."""
        for label in self.legend_labels:
            label.hide()  # until deleteLater runs it would still paint under the new one
            label.deleteLater()
        self.legend_labels = []
        # the page's own configuration first, whichever run is going: the name to keep in a narrow strip
        self._legend_series = [s for s in self.series if s.data is self.own] + \
            [s for s in self.series if s.data is not self.own]
        for s in self._legend_series:
            label = QLabel()  # its text: `set_entries` below
            label.setObjectName("legendEntry")
            label.setToolTip(s.label)
            label.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Preferred)  # whole or hidden, never cut
            label.hide()  # until `fit` places and shows it
            self.legend_labels.append(label)
        self.legend_strip.set_entries(self.legend_labels, [_legend_line(s) for s in self._legend_series],
                                      [s.label for s in self._legend_series])

    def legend_texts(self) -> list[str]:
        """Every run's legend name, in series order (shown or named under "+N more")."""
        return [s.label for s in self.series]

    def legend_shown(self) -> list[str]:
        """What the strip shows: the names that fit, then "+N more" when some did not."""
        shown = [name for name, label in zip(self.legend_strip.shown_names, self.legend_labels)
                 if not label.isHidden()]
        return shown + ([self.more_label.text()] if not self.more_label.isHidden() else [])

    def _user_zoomed(self, plot_name: str) -> None:
        """The user's view from now on; the next tick draws every step time, for the detail they zoomed into."""
        self.user_zoomed.add(plot_name)
        self._painted = ()

    def _reset_zoom(self, plot_name: str) -> None:
        """The plot's "A" button: back to the fitted view (pyqtgraph's own auto-range stays off)."""
        self.user_zoomed.discard(plot_name)
        self._widget(plot_name).getPlotItem().disableAutoRange()
        self._ranges.pop(plot_name, None)
        self._painted = ()
        self.refresh()

    def show_run(self, current: RunData | None, baseline: RunData | None = None) -> None:
        """The wizard's view: the page's run in colour, the baseline grey and dashed beside it."""
        series = []
        if baseline is not None and baseline is not current:
            series.append(Series(baseline, "baseline", BASELINE_GREY, dashed=True))
        if current is not None:
            series.append(Series(current, current.name or "this run", ACCENT))
        self.set_series(series, primary=current)

    def show_pair(self, candidate: RunData | None, reference: RunData | None, candidate_label: str,
                  reference_label: str, running: RunData | None = None, batches: tuple[int, int] = (1, 1)) -> None:
        """A trial's view: its candidate run in colour beside its reference run, grey and dashed (what the
        verdict compares, run against interleaved run); the run going (`running`, default the candidate)
        gets the warm-up shading and the median line, whichever arm it is. `batches` (candidate's, reference's):
        different sizes align the runs by samples seen."""
        series = []
        if reference is not None:
            series.append(Series(reference, reference_label, BASELINE_GREY, dashed=True, samples_per_step=batches[1]))
        if candidate is not None:
            series.append(Series(candidate, candidate_label, ACCENT, samples_per_step=batches[0]))
        self.set_series(series, primary=running or candidate or reference, own=candidate)

    def set_align_by_time(self, by_time: bool) -> None:
        self.by_time = by_time
        for curve in self.curves["step_ms"]:
            curve._decimator.reset()  # other x values for the same steps
        label = "training time (s)" if by_time else "samples seen" if self._scales else "step"
        for widget in (self.step_plot, self.loss_plot, self.val_plot, self.scale_plot):
            widget.getPlotItem().setLabel("bottom", label)
        self._painted = ()
        self.refresh()

    def _widget(self, plot_name: str) -> pg.PlotWidget:
        return {"step_ms": self.step_plot, "loss": self.loss_plot, "val": self.val_plot,
                "loss_scale": self.scale_plot}[plot_name]

    # ------------------------------------------------------------ painting

    def refresh(self) -> None:
        """Repaint if any run changed since the last paint (cheap no-op otherwise)."""
        state = (self.by_time,) + tuple((id(s.data), s.data.version) for s in self.series)
        if state == self._painted:
            self._apply_one_range()  # a range still waiting for its turn
            return
        self._painted = state
        self.val_metric = self._choose_metric()
        self._title(self.val_plot, self.val_metric or self.no_validation)
        any_scale = False
        for i, s in enumerate(self.series):
            data = s.data
            scale = self._scales.get(id(data), 1.0)
            x = _x(data, self.by_time, scale)

            def at(steps: np.ndarray) -> np.ndarray:
                """x positions of values recorded at `steps` (loss, loss scale, validation)."""
                if not self.by_time or not len(x) or not len(steps):  # noqa: B023 - called in this iteration only
                    return steps * scale if scale != 1.0 and not self.by_time else steps  # noqa: B023
                return x[np.clip(np.searchsorted(data.step.view(), steps), 0, len(x) - 1)]  # noqa: B023

            self._set(i, "step_ms", x, data.step_ms.view())
            self._set(i, "loss", at(data.loss_step.view()), data.loss.view())
            any_scale |= data.has_loss_scale
            self._set(i, "loss_scale", at(data.scale_step.view()), data.loss_scale.view())
            vx, vy = data.metric_series(self.val_metric) if self.val_metric else (np.empty(0), np.empty(0))
            self._set(i, "val", at(vx), vy, symbol="o", symbolSize=5, symbolBrush=s.color, symbolPen=None)
        if any_scale != self.has_scale:  # only mixed_float16 has one (the tooltip says so)
            self.has_scale = any_scale
            # without one the plot is hidden: an empty "Loss scale: none" plot showed beside every float32 run
            self._lay_out(with_scale=any_scale)
        self._paint_primary()
        self._wanted = self._fitted_ranges()
        self._apply_one_range()
        self._mark_spikes()

    def _show_median(self) -> None:
        """The page's run's steady median is the dotted line, its value in the plot's tooltip, said as what it
        is: this one run's median step, not the verdict. On the axis ("ms, median 1.12") it was a third speed
        number beside the verdict's speed-up and the run's own, and cut at 1024 × 640 ("ıs, median 1.12")."""
        data = self.primary
        median = data.steady_median_ms() if data is not None and not self.by_time else None
        tip = (f"Dotted line: this run's median step, {median:.3g} ms ({data.name or 'this run'}): a detail of one "
               "run, not the verdict (the verdict compares the trial's replicate pairs)") \
            if median is not None and data is not None else ""
        if self.step_plot.toolTip() != tip:
            self.step_plot.setToolTip(tip)
        self._title(self.step_plot, "Step time")

    @staticmethod
    def _title(widget: pg.PlotWidget, text: str) -> None:
        """Set a plot's title only when it changes (each set repaints the plot)."""
        if getattr(widget, "_title_text", None) != text:
            widget._title_text = text
            widget.getPlotItem().setTitle(text, size="9pt")

    def _set(self, i: int, plot_name: str, x: np.ndarray, y: np.ndarray, **opts) -> None:
        """setData only when the curve's points changed: each call repaints its plot.

        Step times (one per step, a million in a long run) are drawn min/max-decimated, updated with the new
        steps only; a plot the user zoomed gets every point (pyqtgraph then downsamples what is in view).
        """
        curve = self.curves[plot_name][i]
        whole = plot_name == "step_ms" and plot_name in self.user_zoomed
        key = (len(x), float(x[-1]) if len(x) else None, self.by_time, self.val_metric if plot_name == "val" else "",
               whole)
        if getattr(curve, "_shown", None) == key:
            return
        curve._shown = key
        curve._samples = min(len(x), len(y))
        if plot_name == "step_ms" and not whole:
            x, y = curve._decimator.update(x, y)
        curve.setData(x, y, **opts)

    def _choose_metric(self) -> str:
        names: list[str] = []
        for s in self.series:
            names += [n for n in s.data.metric_names() if n not in names]
        preferred = summ.preferred_metric(names)  # the metric the accuracy gate judges
        return preferred[0] if preferred else (names[0] if names else "")

    def _paint_primary(self) -> None:
        data = self.primary
        steps = data.step.view() if data is not None else np.empty(0)
        open_ended = data is not None and (data.first_steady_step is None or
                                           any(stop == float("inf") for _, stop in data.profile_windows))
        others = tuple((id(s.data), s.data.first_steady_step, float(s.data.step.view()[0]))
                       for s in self.series if s.data is not data and len(s.data.step.view()))
        key = None if data is None or not len(steps) or self.by_time else (
            id(data), float(steps[0]), data.first_steady_step, tuple(map(tuple, data.profile_windows)),
            float(steps[-1]) if open_ended else None, others)
        if data is not None and key is not None and key == self._decor_key:  # the shaded windows did not move
            self._update_median(data)
            return
        self._decor_key = key
        for widget, item in self._decor:
            widget.removeItem(item)
        self._decor.clear()
        for edge, label, _row in self._shade_labels:
            self.step_plot.removeItem(edge)
            label.setParentItem(None)  # freed apart from its line: freed with it, Python freed it twice (a crash)
        self._shade_labels.clear()
        if key is None or data is None:  # (a key is made of the data)
            self.step_plot.removeItem(self.median_line)
            return
        first = float(steps[0])
        self._shade_scale = self._scales.get(id(data), 1.0)  # shaded in samples when the runs align by samples
        if data.first_steady_step is not None and data.first_steady_step > first:
            self._shade(first - 0.5, data.first_steady_step - 0.5, WARMUP_BRUSH, "warm-up", "#92400e", 0)
        elif data.first_steady_step is None:
            self._shade(first - 0.5, float(steps[-1]) + 0.5, WARMUP_BRUSH, "warm-up", "#92400e", 0)
        # labels hang from the top in rows, "warm-up" first and "profiler" one line below it (`_place_labels`),
        # inside the plot and above the steady curve (the axis tops at 3x the slowest median, so the curve stays
        # in the lower third): from a third of the height or lower, they sank below the axis on a short plot (the
        # baseline page at 1280x800) or sat on the median line; at fixed fractions of the height (0.9, 0.72) the
        # two overlapped on a plot 50 px high (the baseline page at 1024x640)
        for start, stop in data.profile_windows:  # a window still open reaches the last step received; a closed
            # one is its own steps, even when its phase event came before them (the steps of a fast run arrive
            # once a second): clamped to the steps received, it stayed a sliver (docs/screenshots, 2-baseline)
            end = float(steps[-1]) + 1 if stop == float("inf") else stop
            self._shade(start - 0.5, end - 0.5, PROFILE_BRUSH, "profiler", "#6b21a8", 1)
        for s in self.series:  # the other runs' warm-ups too, faintly in their colours: shaded, never hidden
            other = s.data.step.view()
            if s.data is not data and len(other) and s.data.first_steady_step is not None \
                    and s.data.first_steady_step > other[0]:
                self._shade_scale = self._scales.get(id(s.data), 1.0)
                colour = pg.mkColor(s.color)
                self._shade(float(other[0]) - 0.5, s.data.first_steady_step - 0.5,
                            (colour.red(), colour.green(), colour.blue(), 40), "", "", 0)
        self._place_labels()
        self._update_median(data)

    def _update_median(self, data: RunData) -> None:
        median = data.steady_median_ms()
        if median is None:
            self.step_plot.removeItem(self.median_line)
            return
        self.median_line.setValue(median)
        if self.median_line.scene() is None:
            self.step_plot.addItem(self.median_line, ignoreBounds=True)

    def _step_top(self) -> float | None:
        """Top of the step-time axis: 3x the slowest steady median (warm-up steps can be 100x slower)."""
        medians = [m for m in (s.data.steady_median_ms() for s in self.series) if m is not None]
        return 3 * max(medians) if medians else None

    def _fitted_ranges(self) -> dict[str, tuple[tuple[float, float], tuple[float, float]]]:
        """Each plot's fitted (x, y) range.

        By step, the x axis spans the run's planned steps from its first progress event, so it is set
        once per run; by time (or before the total is known) it grows in 'nice' steps.
        """
        x_max = 0.0
        for s in self.series:
            scale = self._scales.get(id(s.data), 1.0)
            x = _x(s.data, self.by_time, scale)
            if len(x):
                x_max = max(x_max, float(x[-1]))
            if not self.by_time and s.data.progress is not None and s.data.progress[1]:
                x_max = max(x_max, float(s.data.progress[1]) * scale)
        x_range = (0.0, _grow(x_max) if self.by_time or not x_max else x_max)
        top = self._step_top()
        if top is None:
            peaks = [float(np.nanmax(s.data.step_ms.view())) for s in self.series if len(s.data.step_ms.view())]
            top = max(peaks) if peaks else 1.0
        wanted = {"step_ms": (x_range, (0.0, self._step_range_top(_grow(top))))}
        for name, values in (("loss", [s.data.loss.view() for s in self.series]),
                             ("val", [self.curves["val"][i].yData for i in range(len(self.series))]),
                             ("loss_scale", [s.data.loss_scale.view() for s in self.series])):
            finite = [v[np.isfinite(v)] for v in values if v is not None and len(v)]
            finite = [v for v in finite if len(v)]
            if not finite:
                y = (0.0, 1.0)
            else:
                lo, hi = min(float(v.min()) for v in finite), max(float(v.max()) for v in finite)
                if name == "val":  # a few points: fit them tightly, the differences are what matters
                    pad = (hi - lo) * 0.08 or abs(hi) * 0.05 or 1.0
                    y = (lo - pad, hi + pad)
                else:  # a falling loss must not re-range (and repaint) the plot at every tick
                    y = (0.0 if lo >= 0 else -_grow(-lo), _grow(hi) if hi > 0 else 1.0)
            wanted[name] = (x_range, y)
        return wanted

    def _apply_one_range(self) -> None:
        """Set the first plot whose fitted range changed (never one the user zoomed), the rest on later ticks.

        A new range re-lays the plot's axes and repaints it (~5 ms each here): the four plots changed at
        once while a run streams in (its first progress event, a time axis growing) stalled the UI for
        their sum. Finished runs (a stored run, a comparison) get all their ranges at once.
        """
        live = any(not s.data.finished for s in self.series)
        for name, (x, y) in self._wanted.items():
            if name not in self.user_zoomed and self._ranges.get(name) != (x, y):
                self._ranges[name] = (x, y)
                self._widget(name).getPlotItem().getViewBox().setRange(xRange=x, yRange=y, padding=0)
                if live:
                    return

    def _mark_spikes(self) -> None:
        """Steady steps of the page's run slower than the axis top: a mark at the top edge, and a count."""
        data, top = self.primary, self._step_top()
        self.spikes_above = 0
        if data is None or top is None or self.by_time or not len(data.step.view()):
            self.spikes.setData([], [])
        else:
            steps, ms = data.step.view(), data.step_ms.view()
            over = np.flatnonzero(ms > _grow(top))
            over = over[data.steady_mask(steps[over])]
            self.spikes_above = len(over)
            if len(over) > MAX_SPIKE_MARKS:  # a mark per pixel column is all the eye can see
                over = over[np.linspace(0, len(over) - 1, MAX_SPIKE_MARKS).astype(int)]
            self.spikes.setData(steps[over] * self._scales.get(id(data), 1.0), np.full(len(over), _grow(top) * 0.985))
        self._show_median()
        n = self.spikes_above
        # short, so the runs' names keep their room in the legend strip at 1024 px (the tooltip says the rest)
        note = f'<span style="color:{SPIKE_COLOR}">▲</span> {n} step{"s" if n != 1 else ""} above range' if n else ""
        if self._spike_html != note:
            self._spike_html = note
            self.spike_note.setHtml(note)
            self.spike_note.setVisible(bool(n))
            self._place_labels()
            self.spike_note.setToolTip(f"{n} steady step{'s' if n != 1 else ''} slower than the top of the step-time "
                                       "plot, marked at its top edge" if n else "")

    def _shade(self, start: float, stop: float, brush: tuple, text: str, color: str, row: int) -> None:
        """Shade steps start..stop, labelled `text` in `row` (0: the top line of the plot; see `_place_labels`)."""
        k = getattr(self, "_shade_scale", 1.0)
        region = pg.LinearRegionItem(values=(start * k, stop * k), brush=pg.mkBrush(*brush), pen=pg.mkPen(None),
                                     movable=False)
        region.setZValue(-10)
        self.step_plot.addItem(region, ignoreBounds=True)
        self._decor.append((self.step_plot, region))
        if text:  # on a line of its own above the curves: a child of the region, it was drawn behind a dense curve
            edge = pg.InfiniteLine(pos=start * k, angle=90, pen=pg.mkPen(None), movable=False)
            edge.setZValue(5)
            label = pg.InfLineLabel(edge, text, anchors=[(0, 0), (0, 0)], color=color,
                                    fill=self._label_fill())
            label.textItem.document().setDocumentMargin(1)  # Qt's 4 px around the text: two rows in a 40 px plot
            self._shade_labels.append((edge, label, row))
            self.step_plot.addItem(edge, ignoreBounds=True)

    LABEL_PAD = 2  # px between the plot's top and the first row of labels
    BAND_MAX = 0.5  # the labels' rows take at most this share of the plot's height (a row beyond it is hidden)

    def _label_fill(self) -> QBrush:
        """The labels' background: the plot's own, nearly opaque, so a warm-up step drawn behind never crosses
        the words."""
        colour = pg.mkColor(self.background)
        colour.setAlpha(235)
        return pg.mkBrush(colour)

    def _place_labels(self, *_: object) -> None:
        """The shaded windows' labels in their rows from the plot's top ("warm-up" in the first, "profiler" one
        line below it, so they never overlap whatever the plot's height; one starting too near the plot's right
        edge for its text ends at its line), and the spike note ("▲ 76 steps above range") at the right, whole,
        on the first row where it overlaps no label. Inside the plot: a row beyond BAND_MAX of the height is
        hidden (the shading and the marks stay). The rows used are the band the step-time range leaves above the
        steady steps (`_step_range_top`), so no label sits on the curve: hung over a 110 px plot, "warm-up" and
        "profiler" were drawn across it, and the note, in the legend row, was cut to "▲ 76" (the issue 42
        walk)."""
        view = self.step_plot.getPlotItem().getViewBox()
        height, box = view.height(), view.sceneBoundingRect()
        note = self.spike_note
        # one row height for every label, the note's too: rows of their own heights overlapped by a pixel or two
        line = max([label.textItem.boundingRect().height() for _e, label, _r in self._shade_labels]
                   + ([note.textItem.boundingRect().height()] if self._spike_html else []), default=0.0) + 1
        rows = 0
        taken: list[QRectF] = []  # the scene rect of every label shown

        def first_free(row: int, rect: QRectF) -> tuple[int, QRectF]:
            """The first row from `row` where `rect` (placed on row 0) overlaps no label shown."""
            while any(rect.translated(0, row * line).adjusted(-4, 0, 4, 0).intersects(t) for t in taken):
                row += 1
            return row, rect.translated(0, row * line)

        # "warm-up" first, then the spike note (a count of the data: before a label of the shading), then the rest
        order = [(label, row) for _e, label, row in self._shade_labels if row == 0] + \
            ([(note, 0)] if self._spike_html else []) + \
            [(label, row) for _e, label, row in self._shade_labels if row > 0]
        for item, wanted in order:
            text = item.textItem.boundingRect()
            if item is note:
                row, spot = first_free(wanted, QRectF(box.right() - text.width(), box.top() + self.LABEL_PAD,
                                                      text.width(), text.height()))
            else:
                x = view.mapViewToScene(pg.Point(item.line.value(), 0)).x()
                anchor = (1, 0) if x + text.width() > box.right() and x - text.width() >= box.left() else (0, 0)
                item.anchors = [anchor, anchor]
                left = x - text.width() if anchor == (1, 0) else x
                row, spot = first_free(wanted, QRectF(left, box.top() + self.LABEL_PAD, text.width(), text.height()))
            top = self.LABEL_PAD + row * line
            fits = height > 0 and top + text.height() <= height * self.BAND_MAX
            if fits and item is note:
                at = view.mapSceneToView(pg.Point(box.right() - 1, box.top() + top))
                note.setPos(at.x(), at.y())
            elif fits:
                item.setPosition(1 - top / height)
            item.setVisible(fits)
            if fits:
                taken.append(item.mapRectToScene(item.boundingRect()) if item is not note else spot)
                rows = max(rows, row + 1)
        band = self.LABEL_PAD + rows * line + 1 if rows else 0.0
        key = (round(band), round(height))
        if key != self._band_key:  # the range leaves the band (its share of a new height): fitted at the next tick
            self._band_key = key
            self._band_px = band
            self._painted = ()

    def _step_range_top(self, top: float) -> float:
        """The step-time axis' top for steady steps up to `top`: room above it for the labels' band."""
        height = self.step_plot.getPlotItem().getViewBox().height()
        if self._band_px <= 0 or height <= self._band_px:
            return top
        return top * height / (height - self._band_px)

    # ------------------------------------------------------------ for tests and benchmarks

    def plotted_lengths(self) -> dict[str, list[int]]:
        """Number of samples each curve draws (before decimation and downsampling), per plot, in series order."""
        return {name: [getattr(c, "_samples", 0) for c in curves] for name, curves in self.curves.items()}
