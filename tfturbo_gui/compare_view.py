"""Runs side by side: overlaid curves and the compare table, exportable as CSV.

The table is `tfturbo.compare` — the same rows, cells and CSV as `tfturbo
compare` and the report — so the app, the terminal and the PDF never
disagree. Curves align by step, or by training time to compare runs whose
steps take different time.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QFileDialog, QHBoxLayout, QHeaderView, QLabel,
                               QPushButton, QSplitter, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from tfturbo import compare
from tfturbo.runfiles import RunRecord

from tfturbo import protocol

from .failures import outcome_cell
from .live_plots import PALETTE, RunPlots, Series
from .run_data import RunData

ALIGN_STEP, ALIGN_TIME = "step", "training time"


def _two_lines(text: str) -> str:
    """'800.60 [785.2, 815.9]' -> value over interval; 'peak memory' -> two words over each other."""
    if " [" in text:
        return text.replace(" [", "\n[", 1)
    if " " in text and len(text) > 10 and "," not in text:
        head, _, tail = text.rpartition(" ")
        return f"{head}\n{tail}"
    return text


class CompareView(QWidget):
    baseline_changed = Signal(int)

    def __init__(self, parent: QWidget | None = None, plot_columns: int = 4):
        super().__init__(parent)
        self.records: list[RunRecord] = []
        self.replicates: list[RunRecord] = []  # trial runs behind the rows: they give the rows their intervals
        self.rows: list[compare.CompareRow] = []
        self.baseline = 0
        self.plotted: list[int] = []
        self._datas: dict[str, RunData] = {}
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        bar = QHBoxLayout()
        self.baseline_combo = QComboBox()
        self.baseline_combo.setMinimumContentsLength(14)
        self.baseline_combo.currentIndexChanged.connect(self._on_baseline)
        self.align_combo = QComboBox()
        self.align_combo.addItems([ALIGN_STEP, ALIGN_TIME])
        self.align_combo.currentTextChanged.connect(lambda t: self.plots.set_align_by_time(t == ALIGN_TIME))
        self.export_button = QPushButton("Export table as CSV…")
        self.export_button.clicked.connect(self._choose_csv)
        bar.addWidget(QLabel("Baseline"))
        bar.addWidget(self.baseline_combo)
        bar.addSpacing(12)
        bar.addWidget(QLabel("Align curves by"))
        bar.addWidget(self.align_combo)
        bar.addStretch(1)
        bar.addWidget(self.export_button)
        bar.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.setChildrenCollapsible(False)
        self.plots = RunPlots(columns=plot_columns)
        self.table = QTableWidget()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(24)
        self.table.setMinimumHeight(90)
        splitter.addWidget(self.plots)
        splitter.addWidget(self.table)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([300, 110])
        layout.addWidget(splitter, 1)
        self.note = QLabel("Speed-up is throughput per sample against the baseline, with its 95% confidence "
                           "interval; an interval containing 1.00 is no measurable change.")
        self.note.setObjectName("muted")
        self.note.setWordWrap(True)
        layout.addWidget(self.note)

    # ------------------------------------------------------------ data

    def set_records(self, records: list[RunRecord], baseline: int = 0, plotted: list[int] | None = None,
                    live: dict[str, RunData] | None = None, replicates: list[RunRecord] = ()) -> None:
        """Compare `records` against `records[baseline]`; draw `plotted` (default: all).

        `live` maps a run's path to the RunData already in memory (the wizard's runs), so
        curves are not re-read from disk. `replicates` are the trials' other runs: they give the
        rows their intervals (`compare.compare_runs`) without rows of their own.
        """
        self.records = list(records)
        self.replicates = list(replicates)
        self.baseline = baseline if 0 <= baseline < len(records) else 0
        self.plotted = list(range(len(records))) if plotted is None else list(plotted)
        self._datas = dict(live or {})
        self.baseline_combo.blockSignals(True)
        self.baseline_combo.clear()
        self.baseline_combo.addItems([r.name for r in self.records])
        self.baseline_combo.setCurrentIndex(self.baseline)
        self.baseline_combo.blockSignals(False)
        self.export_button.setEnabled(bool(records))
        self._refresh()

    def _data(self, record: RunRecord) -> RunData:
        key = str(record.path)
        if key not in self._datas:
            self._datas[key] = RunData.from_record(record)
        return self._datas[key]

    def _on_baseline(self, index: int) -> None:
        if index >= 0 and index != self.baseline:
            self.baseline = index
            self._refresh()
            self.baseline_changed.emit(index)

    def _refresh(self) -> None:
        self.rows = compare.compare_runs(self.records, self.baseline, self.replicates) if self.records else []
        series = []
        for n, i in enumerate(self.plotted):
            record = self.records[i]
            series.append(Series(self._data(record), record.name, PALETTE[n % len(PALETTE)],
                                 dashed=(i == self.baseline)))
        self.plots.set_series(series)
        self._fill_table()

    def _fill_table(self) -> None:
        metrics = compare.metric_names(self.rows)
        header = list(compare.TEXT_HEADER) + metrics + ["findings"]
        self.header = header
        self.table.clear()
        self.table.setColumnCount(len(header))
        self.table.setRowCount(len(self.rows))
        # intervals and long headers on a second line: narrow columns, no sideways scrolling
        self.table.setHorizontalHeaderLabels([_two_lines(h) for h in header])
        self.table.setWordWrap(True)
        verdict_column = header.index("verdict") if "verdict" in header else -1
        for r, row in enumerate(self.rows):
            for c, text in enumerate(compare.text_cells(row, metrics)):
                if c == verdict_column and row.status != protocol.RunStatus.COMPLETED and r != self.baseline:
                    text = outcome_cell(row.status)  # a crash is not "no measurable change"
                item = QTableWidgetItem(_two_lines(text))
                item.setToolTip("\n".join([text] + list(row.warnings)))
                self.table.setItem(r, c, item)
        self._fit_columns()

    def _fit_columns(self) -> None:
        """Columns sized to their contents, the widest ones narrowed (their text elided, whole in the
        tooltip) until the table fits its width: no sideways scrolling."""
        header = self.table.horizontalHeader()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.table.resizeColumnsToContents()
        available = self.table.viewport().width() - 2
        widths = [self.table.columnWidth(c) for c in range(self.table.columnCount())]
        while widths and sum(widths) > available and max(widths) > 56:
            widest = widths.index(max(widths))
            widths[widest] = max(56, widths[widest] - (sum(widths) - available))
        for c, w in enumerate(widths):
            self.table.setColumnWidth(c, w)
        self.table.resizeRowsToContents()

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt API)
        super().resizeEvent(event)
        if self.rows:
            self._fit_columns()

    def cell(self, row: int, column: str) -> str:
        """The text shown in `column` (a header label) of `row`, on one line."""
        return self.table.item(row, self.header.index(column)).text().replace("\n", " ")

    # ------------------------------------------------------------ CSV

    def csv_text(self) -> str:
        return compare.to_csv(self.rows)

    def export_csv(self, path: str | Path) -> Path:
        path = Path(path)
        path.write_text(self.csv_text(), encoding="utf-8")
        return path

    def _choose_csv(self) -> None:
        start = str(self.records[self.baseline].path.parent.parent / "compare.csv") if self.records else "compare.csv"
        path, _ = QFileDialog.getSaveFileName(self, "Export the table as CSV", start, "CSV files (*.csv)")
        if path:
            self.export_csv(path)
