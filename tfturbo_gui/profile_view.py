"""Where the step's time goes: a run's profile.json as a bar chart of op categories, its top ops in a table,
and — on a rung page — the change of each category against the baseline's profile.

Everything shown comes from `tfturbo.profile` (the document, the categories, `compare`) and
`tfturbo.profile_findings` (OP_SLOWER): the report and `compare`'s CSV show the same numbers.
"""

from __future__ import annotations

from pathlib import Path

import pyqtgraph as pg
from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import (QAbstractItemView, QFrame, QHeaderView, QLabel, QScrollArea, QSplitter, QTableWidget,
                               QTableWidgetItem, QTabWidget, QToolTip, QVBoxLayout, QWidget)

from tfturbo import profile as prof
from tfturbo.compare import replicate_key
from tfturbo.runfiles import RUNS_DIR

from .labels import add_section, muted_label
from .live_plots import ACCENT, BASELINE_GREY

TOP_OPS = 8


def profiled_in(session, rung) -> dict[str, str]:
    """Arm -> the run holding its configuration's profile (a configuration is profiled once per study): the
    rung's trial's (`Trial.profiled_in`), else its design record's; {} for a rung without either (the
    baseline, a study from before the record)."""
    trial = session.trial_of(rung)
    if trial is not None:
        return dict(trial.profiled_in())
    record = getattr(rung.decision, "design_record", None) if rung is not None and rung.decision else None
    return dict(record.profiled_in) if record is not None else {}


def rung_profile(session, rung) -> tuple[prof.Profile, Path | None]:
    """The profile of a rung's configuration: where its trial or design record says it is (`profiled_in`), else
    the baseline's own run, or a trial's candidate run that captured one (the first pair profiles)."""
    if rung is None:
        return prof.Profile.unavailable("not measured yet"), None
    where = profiled_in(session, rung)
    if "b" in where:
        return prof.find([session.ensure_study().path / RUNS_DIR / where["b"]])
    trial = session.trial_of(rung)
    if trial is None:
        return prof.find([session.rung_path(rung)])
    found = prof.find([r.run_dir for r in trial.runs if r.planned.arm == "b"])
    if found[0].available or session.study is None:
        return found
    # a configuration is profiled once (a confirmation measures two that were): its own earlier rung's profile
    key = replicate_key(rung.settings.to_dict())
    same = [session.rung_path(r) for r in session.study.rungs if r is not rung and r.run
            and replicate_key(r.settings.to_dict()) == key]
    return prof.find(same) if same else found


def reference_profile(session, rung) -> tuple[prof.Profile, str]:
    """What a rung's profile is compared with: its reference configuration's profile where its trial or design
    record says it is (`profiled_in`: its trial's pair-1 reference run, profiled in the same minutes — a busier
    machine weighs on both alike —, or the run that profiled that configuration earlier in the study), else
    the profile of the configuration it was measured against (its own rung's: a paired trial trains no A the
    full length), else the baseline's own run; with the words for it."""
    trial = session.trial_of(rung)
    against = next((r for r in session.study.rungs if r.name == rung.compared_with), None) \
        if session.study is not None and rung is not None else None
    where = profiled_in(session, rung) if rung is not None else {}
    if "a" in where:
        ref, path = prof.find([session.ensure_study().path / RUNS_DIR / where["a"]])
        baseline = session.baseline
        if ref.available and path is not None and (baseline is None or path.name != Path(str(baseline.run)).name):
            label = trial.a.label() if trial is not None else against.settings.label() if against else "A"
            how = "measured beside it" if path.name in rung.replicates else "profiled in an earlier step"
            return ref, f"its reference ({label}, {how})"
        if ref.available:
            return ref, "the baseline"
    if trial is not None:
        ref, _ = prof.find([r.run_dir for r in trial.runs if r.planned.arm == "a" and r.planned.replicate == 1])
        if ref.available:
            return ref, f"its reference ({trial.a.label()}, measured beside it)"
    if against is not None and against is not session.baseline:
        ref, _ = rung_profile(session, against)
        if ref.available:
            return ref, f"its reference ({against.settings.label()}, profiled in its own step)"
    return rung_profile(session, session.baseline)[0], "the baseline"


PLOT_MIN_HEIGHT = 150  # px of each live plot above the profile view: the column scrolls down rather than squeeze them


def under_plots(plots: QWidget, view: ProfileView) -> QScrollArea:
    """The live plots above the profile view, halves of the column; the divider is the user's to move. In a
    window too short for both at their smallest, the column scrolls: laid out in less than their minimum, the
    profile chart's axis and the validation plot's bottom were drawn under the next widget, out of reach
    (the baseline and rung pages at 1024x640, issue 22 walk)."""
    split = QSplitter(Qt.Orientation.Vertical)
    split.setChildrenCollapsible(False)
    for plot in (getattr(plots, name, None) for name in ("step_plot", "loss_plot", "val_plot", "scale_plot")):
        if plot is not None:  # readable beside the profile: the splitter gave the plots 30-60 px (issue 42 walk)
            plot.setMinimumHeight(PLOT_MIN_HEIGHT)
    split.addWidget(plots)
    split.addWidget(view)
    split.setStretchFactor(0, 1)
    split.setStretchFactor(1, 1)
    view.splitter = split
    split.setObjectName("pageColumn")  # the page's background (style.qss), as the left column's
    column = QScrollArea()
    column.setObjectName("plotsColumn")
    column.setWidgetResizable(True)
    column.setFrameShape(QFrame.Shape.NoFrame)
    column.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # the plots take the width given
    column.setWidget(split)
    return column


def _describe(p: prof.Profile) -> str:
    if not p.available:
        return f"Profile not available: {p.reason}"
    text = f"Op time {p.op_ms_per_step:.2f} ms per profiled step"
    if p.wall_ms_per_step:
        text += f" (summed over threads; those steps took {p.wall_ms_per_step:.2f} ms)"
    share = p.sixteen_bit_share()
    if share is not None:
        text += f"; {100 * share:.0f}% of matmul/attention time in 16-bit"
    notes = [n for n in (p.source_note(), p.input_note()) if n]
    return text + "." + "".join(f" {n[:1].upper()}{n[1:]}." for n in notes)


class ProfileView(QWidget):
    """The categories of one profile, or of a run beside its baseline."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        add_section(layout, "Where the time goes")
        self.summary = muted_label()
        layout.addWidget(self.summary)
        self.change = QLabel("")
        self.change.setWordWrap(True)
        self.change.hide()
        layout.addWidget(self.change)
        self.tabs = QTabWidget()  # the categories and the top ops share the room under the live plots
        layout.addWidget(self.tabs, 1)
        self.chart = pg.PlotWidget()
        self.chart.setMinimumHeight(150)
        self.chart.setMenuEnabled(False)
        self.chart.setMouseEnabled(x=False, y=False)
        self.chart.hideButtons()
        self.chart.getPlotItem().setLabel("bottom", "ms per profiled step (op self time)")
        self.chart.getPlotItem().getAxis("bottom").enableAutoSIPrefix(False)  # in ms already: never "(x0.001)"
        self.chart.getPlotItem().showGrid(x=True, y=False, alpha=0.25)
        self.chart.scene().sigMouseMoved.connect(self._hover)
        # the legend is a line above the chart, never inside it: at the bottom right it covered the longest
        # bars ("input 29%" at 1024×640), and no band in data units is tall enough on a short chart
        self.legend = QLabel(f'<span style="color:{BASELINE_GREY}">&#9632;</span> reference &nbsp; '
                             f'<span style="color:{ACCENT}">&#9632;</span> this run')
        self.legend.setAlignment(Qt.AlignmentFlag.AlignRight)
        by_category = QWidget()
        chart_layout = QVBoxLayout(by_category)
        chart_layout.setContentsMargins(0, 2, 0, 0)
        chart_layout.setSpacing(0)
        chart_layout.addWidget(self.legend)
        chart_layout.addWidget(self.chart, 1)
        self.tabs.addTab(by_category, "By category")
        self.table = QTableWidget(0, 5)
        self.table.setHorizontalHeaderLabels(["Op", "Type", "Category", "ms/step", "Share"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for col in range(1, 5):
            self.table.horizontalHeader().setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideLeft)  # the op's own name is at the end of its path
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 6)
        self.tabs.addTab(self.table, "Top ops")
        self.splitter: QSplitter | None = None  # set by under_plots
        self.profile: prof.Profile | None = None
        self.base: prof.Profile | None = None
        self.shown: list[str] = []  # the categories on the chart, bottom to top
        self.comparable = False  # the chart and tooltips show the reference's categories beside the run's
        self.set_profile(prof.Profile.unavailable("no run measured yet"))

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt API)
        """Room for its wrapped sentences at the width it has, then the chart at its smallest: a wrapped label asks
        for one line, so the splitter gave the view too little and the tab cut the chart's bottom ("Where the time
        goes" at 1024x640 and 1280x800, h42a walk)."""
        hint = super().minimumSizeHint()
        width = self.width() if self.width() > 0 else hint.width()
        extra = sum(max(0, label.heightForWidth(width) - label.minimumSizeHint().height())
                    for label in (self.summary, self.change) if label.isVisibleTo(self))
        return QSize(hint.width(), hint.height() + extra)

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt API)
        """A new width wraps the sentences anew: the splitter asks for the minimum again."""
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.updateGeometry()

    def reveal(self) -> None:
        """Show the view; the first time, it takes half of the column from the plots (it was hidden at layout)."""
        if self.isHidden():
            self.show()
            if self.splitter is not None:
                total = sum(self.splitter.sizes())
                self.splitter.setSizes([total - total // 2, total // 2])

    # ------------------------------------------------------------ content

    def set_profile(self, profile: prof.Profile, base: prof.Profile | None = None,
                    against: str = "the baseline") -> prof.ProfileChange | None:
        """Show `profile`, beside `base` (described by `against`) when given; returns the per-category change
        (None without one)."""
        self.profile, self.base = profile, base
        self.summary.setText(_describe(profile))
        change = prof.compare(base, profile) if base is not None else None
        self.comparable = change is not None and change.comparable  # the reference's categories beside its own
        if change is not None:
            self.change.setText(f"Against {against}: {change.sentence()}."
                                + (f" ({change.note}.)" if change.note else ""))
            self.change.show()
        elif base is not None:
            self.change.setText(f"No comparison with {against}: "
                                + (base.reason if not base.available else profile.reason or "no op times") + ".")
            self.change.show()
        else:
            self.change.hide()
        self._draw(change)
        self._fill_table()
        self.updateGeometry()  # its sentences changed: so did its minimum height
        return change

    def _draw(self, change: prof.ProfileChange | None) -> None:
        plot = self.chart.getPlotItem()
        plot.clear()
        side_by_side = change is not None and change.comparable  # XLA against no XLA: the run's own only
        base_ms_of = change.base.categories if change is not None and change.comparable else {}
        self.legend.setVisible(side_by_side)
        p = self.profile
        if p is None or not p.available:
            self.shown = []
            self.tabs.setVisible(False)
            return
        self.tabs.setVisible(True)
        cats = [c for c in prof.CATEGORIES if p.categories.get(c, 0) > 0
                or (side_by_side and base_ms_of.get(c, 0) > 0)]
        self.shown = list(reversed(cats))  # first category on top
        ys = list(range(len(self.shown)))
        run_ms = [p.categories.get(c, 0.0) for c in self.shown]
        if side_by_side:
            base_ms = [base_ms_of.get(c, 0.0) for c in self.shown]
            plot.addItem(pg.BarGraphItem(x0=[0] * len(ys), y=[y + 0.2 for y in ys], height=0.38, width=base_ms,
                                         brush=BASELINE_GREY, pen=None))
            plot.addItem(pg.BarGraphItem(x0=[0] * len(ys), y=[y - 0.2 for y in ys], height=0.38, width=run_ms,
                                         brush=ACCENT, pen=None))
        else:
            plot.addItem(pg.BarGraphItem(x0=[0] * len(ys), y=ys, height=0.6, width=run_ms, brush=ACCENT, pen=None))
        top = max(run_ms + ([base_ms_of.get(c, 0.0) for c in self.shown] if side_by_side else []) or [1.0])
        for y, c in zip(ys, self.shown):
            # the bar's own value in the axis' unit, its share after it: "42%" alone at a bar's end read as a
            # value of the ms axis (issue 42 walk: "a ms axis labelled in %")
            share = p.share(c)
            text = pg.TextItem(f"{p.categories.get(c, 0.0):.{2 if top < 10 else 1}f} ms ({100 * share:.0f}%)",
                               color="#374151", anchor=(0, 0.5))
            text.setPos(p.categories.get(c, 0.0), y - (0.2 if side_by_side else 0))
            plot.addItem(text)
        plot.getAxis("left").setTicks([[(y, prof.LABELS[c]) for y, c in zip(ys, self.shown)]])
        plot.setYRange(-0.6, len(ys) - 0.4, padding=0)
        plot.setXRange(0, top * 1.45, padding=0)  # room for the longest bar's words

    def _fill_table(self) -> None:
        rows = (self.profile.top_ops if self.profile and self.profile.available else [])[:TOP_OPS]
        self.table.setRowCount(len(rows))
        for i, r in enumerate(rows):
            cells = [prof.short_name(r.name or r.type), prof.base_type(r.type), prof.LABELS[r.category],
                     f"{r.ms_per_step:.3f}", f"{100 * r.share:.1f}%"]
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if col == 0:
                    item.setToolTip(r.name)
                if col >= 3:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(i, col, item)

    # ------------------------------------------------------------ hover: the category's top ops

    def category_tooltip(self, category: str) -> str:
        p = self.profile
        if p is None or not p.available:
            return ""
        lines = [f"{prof.LABELS[category]}: {p.categories.get(category, 0):.3f} ms per step "
                 f"({100 * p.share(category):.0f}% of op time)"]
        if self.comparable and self.base is not None:
            lines.append(f"reference: {self.base.categories.get(category, 0):.3f} ms per step")
        lines += [f"  {prof.short_name(r.name or r.type)}: {r.ms_per_step:.3f} ms"
                  for r in p.top_ops if r.category == category][:5]
        types = [r for r in p.top_types if r.category == category][:3]
        if types:
            lines.append("types: " + ", ".join(f"{prof.base_type(r.type)} {r.ms_per_step:.3f} ms" for r in types))
        return "\n".join(lines)

    def _hover(self, pos) -> None:
        if not self.shown:
            return
        y = self.chart.getPlotItem().vb.mapSceneToView(pos).y()
        index = round(y)
        if 0 <= index < len(self.shown):
            QToolTip.showText(self.chart.mapToGlobal(self.chart.mapFromScene(pos).toPoint()),
                              self.category_tooltip(self.shown[index]), self.chart)
