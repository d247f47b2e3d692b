"""Step time, loss, validation metric and loss scale of one or more runs, painted on a timer.

Data arrives at the backend's rate; the screen is repainted at most every
`REFRESH_MS` and only when a run's `version` changed (pyqtgraph's
scrollingPlots pattern). Curves use peak downsampling and clip to the view, so
a run of a million steps stays cheap to draw. The primary run (the one the
page is measuring) gets its warm-up and profiler windows shaded and its
steady-state median drawn as a line; other runs (the baseline, or runs picked
in the compare view) are drawn beside it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QGridLayout, QWidget

from tfturbo import summary as summ

from .run_data import RunData

REFRESH_MS = 100
ACCENT = "#2563eb"
BASELINE_GREY = "#8b95a5"
PALETTE = ("#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#be185d", "#4d7c0f")
WARMUP_BRUSH = (245, 158, 11, 45)
PROFILE_BRUSH = (147, 51, 234, 30)

pg.setConfigOptions(antialias=True, background="w", foreground="#374151")


@dataclass
class Series:
    """One run on the plots and how it is drawn."""

    data: RunData
    label: str
    color: str = ACCENT
    dashed: bool = False


def _pen(series: Series) -> object:
    # Width 1: Qt strokes a wider antialiased pen through its general stroker, and a peak-downsampled
    # step-time curve of a long run then costs ~1 s per repaint (benchmarks/gui_ingest.py: 20,000
    # samples/s and 300 ms UI stalls at 1.6 px, 170,000 samples/s at 1 px).
    return pg.mkPen(series.color, width=1, style=Qt.PenStyle.DashLine if series.dashed else Qt.PenStyle.SolidLine)


def _x(data: RunData, by_time: bool) -> np.ndarray:
    """Step number, or training time in seconds (cumulative step time) to align runs by wall time."""
    if not by_time:
        return data.step.view()
    ms = np.nan_to_num(data.step_ms.view(), nan=0.0)
    return np.cumsum(ms) / 1000.0


class RunPlots(QWidget):
    """Four plots in a grid; `set_series` chooses the runs, `refresh` repaints what changed."""

    def __init__(self, parent: QWidget | None = None, columns: int = 2):
        super().__init__(parent)
        self.series: list[Series] = []
        self.primary: RunData | None = None
        self.by_time = False
        self._painted: tuple = ()
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setSpacing(8)
        self.step_plot = self._plot("Step time", "ms")
        self.loss_plot = self._plot("Training loss", "")
        self.val_plot = self._plot("Validation", "")
        self.scale_plot = self._plot("Loss scale", "")
        for i, widget in enumerate((self.step_plot, self.loss_plot, self.val_plot, self.scale_plot)):
            grid.addWidget(widget, i // columns, i % columns)
        self.legend = self.step_plot.getPlotItem().addLegend(offset=(-8, 6), labelTextSize="8pt",
                                                               brush=(255, 255, 255, 210),
                                                               labelTextColor="#374151")
        self._scale_note = pg.TextItem("no dynamic loss scale\n(only mixed_float16 has one)", color="#6b7280",
                                       anchor=(0.5, 0.5))
        self.scale_plot.addItem(self._scale_note, ignoreBounds=True)
        self._scale_note.setPos(0.5, 0.5)
        self.curves: dict[str, list[pg.PlotDataItem]] = {"step_ms": [], "loss": [], "val": [], "loss_scale": []}
        self._decor: list[tuple[pg.PlotWidget, object]] = []
        self.median_line = pg.InfiniteLine(angle=0, pen=pg.mkPen("#1e3a8a", width=1, style=Qt.PenStyle.DotLine),
                                           label="", labelOpts={"position": 0.92, "color": "#1e3a8a",
                                                                "anchors": [(1, 1), (1, 1)],
                                                                "fill": (255, 255, 255, 215)})
        self.val_metric = ""
        self.timer = QTimer(self)
        self.timer.timeout.connect(self.refresh)
        self.timer.start(REFRESH_MS)

    def _plot(self, title: str, unit: str) -> pg.PlotWidget:
        widget = pg.PlotWidget()
        widget.setMinimumSize(200, 140)
        item = widget.getPlotItem()
        item.setTitle(title, size="10pt")
        item.setLabel("bottom", "step")
        if unit:
            item.setLabel("left", unit)
        item.showGrid(x=True, y=True, alpha=0.15)
        item.setDownsampling(auto=True, mode="peak")  # auto: without it pyqtgraph draws every point
        item.setClipToView(True)
        widget.setMenuEnabled(False)
        return widget

    # ------------------------------------------------------------ what to draw

    def set_series(self, series: list[Series], primary: RunData | None = None) -> None:
        """Draw these runs; `primary` gets warm-up shading and the steady median line."""
        for plot_name, curves in self.curves.items():
            widget = self._widget(plot_name)
            for curve in curves:
                widget.removeItem(curve)
            curves.clear()
        self.series = list(series)
        self.primary = primary
        for s in self.series:
            for plot_name in self.curves:  # the legend (step-time plot) names each run once
                curve = pg.PlotDataItem(pen=_pen(s), name=s.label if plot_name == "step_ms" else None,
                                        connect="finite")
                self._widget(plot_name).addItem(curve)
                self.curves[plot_name].append(curve)
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

    def set_align_by_time(self, by_time: bool) -> None:
        self.by_time = by_time
        label = "training time (s)" if by_time else "step"
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
            return
        self._painted = state
        self.val_metric = self._choose_metric()
        self.val_plot.getPlotItem().setTitle(f"Validation {self.val_metric}" if self.val_metric else "Validation",
                                             size="10pt")
        any_scale = False
        for i, s in enumerate(self.series):
            data = s.data
            x = _x(data, self.by_time)

            def at(steps: np.ndarray) -> np.ndarray:
                """x positions of values recorded at `steps` (loss, loss scale, validation)."""
                if not self.by_time or not len(x) or not len(steps):
                    return steps
                return x[np.clip(np.searchsorted(data.step.view(), steps), 0, len(x) - 1)]

            self.curves["step_ms"][i].setData(x, data.step_ms.view())
            self.curves["loss"][i].setData(at(data.loss_step.view()), data.loss.view())
            any_scale |= data.has_loss_scale
            self.curves["loss_scale"][i].setData(at(data.scale_step.view()), data.loss_scale.view())
            vx, vy = data.metric_series(self.val_metric) if self.val_metric else (np.empty(0), np.empty(0))
            self.curves["val"][i].setData(at(vx), vy, symbol="o", symbolSize=5, symbolBrush=s.color,
                                          symbolPen=None)
        self._scale_note.setVisible(not any_scale)
        self._paint_primary()
        self._fit_step_range()

    def _choose_metric(self) -> str:
        names: list[str] = []
        for s in self.series:
            names += [n for n in s.data.metric_names() if n not in names]
        preferred = summ.preferred_metric(names)  # the metric the accuracy gate judges
        return preferred[0] if preferred else (names[0] if names else "")

    def _paint_primary(self) -> None:
        for widget, item in self._decor:
            widget.removeItem(item)
        self._decor.clear()
        data = self.primary
        if data is None or len(data.step.view()) == 0 or self.by_time:
            self.step_plot.removeItem(self.median_line)
            return
        steps = data.step.view()
        first = float(steps[0])
        if data.first_steady_step is not None and data.first_steady_step > first:
            self._shade(first - 0.5, data.first_steady_step - 0.5, WARMUP_BRUSH, "warm-up", "#92400e", 0.2)
        elif data.first_steady_step is None:
            self._shade(first - 0.5, float(steps[-1]) + 0.5, WARMUP_BRUSH, "warm-up", "#92400e", 0.2)
        # labels sit below the steady curve (at a third of the height) and the legend (top right)
        for start, stop in data.profile_windows:
            self._shade(start - 0.5, min(stop, float(steps[-1]) + 1) - 0.5, PROFILE_BRUSH, "profiler", "#6b21a8",
                        0.09)
        median = data.steady_median_ms()
        if median is None:
            self.step_plot.removeItem(self.median_line)
            return
        self.median_line.setValue(median)
        self.median_line.label.setText(f"steady median {median:.2f} ms")
        if self.median_line.scene() is None:
            self.step_plot.addItem(self.median_line, ignoreBounds=True)

    def _fit_step_range(self) -> None:
        """Warm-up steps can be 100x slower than steady ones: scale the step-time axis to the steady state.

        The shaded warm-up marks the steps that go off the top; pyqtgraph's "A" button shows everything.
        """
        medians = [m for m in (s.data.steady_median_ms() for s in self.series) if m is not None]
        if medians:
            self.step_plot.setYRange(0, 3 * max(medians), padding=0)
        else:
            self.step_plot.enableAutoRange(y=True)

    def _shade(self, start: float, stop: float, brush: tuple, text: str, color: str, position: float) -> None:
        region = pg.LinearRegionItem(values=(start, stop), brush=pg.mkBrush(*brush), pen=pg.mkPen(None),
                                     movable=False)
        region.setZValue(-10)
        pg.InfLineLabel(region.lines[0], text, position=position, anchors=[(0, 0), (0, 0)], color=color)
        self.step_plot.addItem(region, ignoreBounds=True)
        self._decor.append((self.step_plot, region))

    # ------------------------------------------------------------ for tests and benchmarks

    def plotted_lengths(self) -> dict[str, list[int]]:
        """Number of points each curve holds (before downsampling), per plot, in series order."""
        return {name: [0 if c.xData is None else len(c.xData) for c in curves]
                for name, curves in self.curves.items()}
