"""File → Open study: every run of one or more studies, any of them overlaid in the compare view.

Studies from `tfturbo tune`, from the wizard or from another machine open the
same way (docs/ARCHITECTURE.md, "Run and study directories"). A run that crashed, was cancelled or has a
truncated events file still shows what it measured, with the warning.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QFileDialog, QHBoxLayout, QLabel, QMainWindow, QPushButton, QSplitter, QTreeWidget,
                               QTreeWidgetItem, QVBoxLayout, QWidget)

from tfturbo import compare
from tfturbo.runfiles import RUNS_DIR, RunRecord, load_run, load_study_runs
from tfturbo.tune.study import Rung, Study

from .compare_view import CompareView
from .failures import outcome_cell

MAX_NAME_WIDTH = 220  # px; longer run names are elided in the middle (the tooltip has them whole)

RUN_ROLE = Qt.ItemDataRole.UserRole
MAX_WARNING_LINES = 6  # of the study opened last


class RunBrowser(QMainWindow):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("tfturbo — runs")
        self.resize(1240, 760)
        self.records: list[RunRecord] = []
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(12, 12, 12, 12)
        bar = QHBoxLayout()
        open_study = QPushButton("Open study…")
        open_study.clicked.connect(self.choose_study)
        open_run = QPushButton("Add run folder…")
        open_run.clicked.connect(self.choose_run)
        bar.addWidget(open_study)
        bar.addWidget(open_run)
        bar.addStretch(1)
        hint = QLabel("Tick runs to overlay and compare them.")
        hint.setObjectName("muted")
        bar.addWidget(hint)
        layout.addLayout(bar)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setChildrenCollapsible(False)
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["run", "status", "configuration", "steps/s"])
        self.tree.setMinimumWidth(300)
        self.tree.setAlternatingRowColors(True)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.tree.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # names elide instead
        self.tree.itemChanged.connect(self._on_item_changed)
        self.compare = CompareView(plot_columns=2)
        splitter.addWidget(self.tree)
        splitter.addWidget(self.compare)
        splitter.setSizes([420, 820])
        layout.addWidget(splitter, 1)
        self.warnings = QLabel("")
        self.warnings.setObjectName("warningText")
        self.warnings.setWordWrap(True)
        self.warnings.hide()
        layout.addWidget(self.warnings)
        self.setCentralWidget(body)

    # ------------------------------------------------------------ opening

    def choose_study(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open a study folder", str(Path.home() / "tfturbo-studies"))
        if path:
            self.open_study(path)

    def choose_run(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Add a run folder", str(Path.home()))
        if path:
            self.add_runs(Path(path).name, [load_run(path)], [])

    def open_study(self, path: str | Path) -> None:
        runs = load_study_runs(path)
        study = Study.load(path)
        title = f"{Path(path).name}" + (f" — {study.workload}" if study.workload else "")
        found = {r.path.resolve() for r in runs.runs}
        runs_dir = (Path(path) / RUNS_DIR).resolve()

        def lost_run(rung: Rung) -> bool:
            """A rung whose run ended before its folder under runs/ was written (e.g. the model failed to
            build): still listed. A path leading anywhere else is not a run of this study."""
            where = (Path(path) / str(rung.run)).resolve()
            return where.parent == runs_dir and where not in found and not where.exists()

        lost = [r for r in study.rungs if r.run and r.skipped_reason is None and lost_run(r)]
        self.add_runs(title, runs.runs, study.problems + runs.warnings, lost)

    def add_runs(self, title: str, records: list[RunRecord], warnings: list[str],
                 lost: list[Rung] | None = None) -> None:
        self.tree.blockSignals(True)
        top = QTreeWidgetItem([title])
        top.setFirstColumnSpanned(True)
        self.tree.addTopLevelItem(top)
        for record in records:
            row = compare.compare_runs([record])[0]
            item = QTreeWidgetItem([record.name, record.status, row.label, compare.fmt_num(row.steps_per_s, 1)])
            item.setToolTip(0, record.name)
            item.setToolTip(2, row.label)
            item.setData(0, RUN_ROLE, len(self.records))
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(0, Qt.CheckState.Checked)
            if record.warnings:
                item.setToolTip(0, "\n".join(record.warnings))
                item.setToolTip(1, "\n".join(record.warnings))
            if record.status != "completed":  # the status as the table and the report say it, explained
                item.setToolTip(1, "\n".join([outcome_cell(record.status)] + list(record.warnings)))
            top.addChild(item)
            self.records.append(record)
        for rung in lost or []:
            status = str((rung.summary or {}).get("status") or "crashed")
            reason = rung.decision.reason if rung.decision else ""
            item = QTreeWidgetItem([rung.name, status, rung.settings.label(), "n/a"])
            item.setToolTip(1, f"{outcome_cell(status)} — {reason or 'the run left no folder'}")
            item.setDisabled(True)  # nothing to plot
            top.addChild(item)
        top.setExpanded(True)
        self._fit_tree()
        self.tree.blockSignals(False)
        notes = [f"{title}: {w}" for w in warnings] + \
                [f"{r.name}: {w}" for r in records for w in r.warnings]
        if notes:  # the study's own warnings first: a corrupt study.yaml must not scroll out of sight
            more = len(notes) - MAX_WARNING_LINES
            shown = notes[:MAX_WARNING_LINES] if more <= 0 else \
                notes[:MAX_WARNING_LINES - 1] + [f"… and {more + 1} more: hover a run to see its warnings"]
            self.warnings.setText("\n".join(shown))
            self.warnings.show()
        self._update_compare()

    def _fit_tree(self) -> None:
        """Columns to their contents, capped, then the widest narrowed until the tree fits its width."""
        widths = []
        for c in range(self.tree.columnCount()):
            self.tree.resizeColumnToContents(c)
            widths.append(min(self.tree.columnWidth(c), MAX_NAME_WIDTH))
        available = self.tree.viewport().width() - 4
        while sum(widths) > available and max(widths) > 60:
            widest = widths.index(max(widths))
            widths[widest] = max(60, widths[widest] - (sum(widths) - available))
        for c, w in enumerate(widths):
            self.tree.setColumnWidth(c, w)

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt API)
        super().resizeEvent(event)
        if self.records:
            self._fit_tree()

    # ------------------------------------------------------------ comparing

    def checked(self) -> list[int]:
        out = []
        for t in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(t)
            for c in range(top.childCount()):
                item = top.child(c)
                if item.checkState(0) == Qt.CheckState.Checked:
                    out.append(item.data(0, RUN_ROLE))
        return out

    def _on_item_changed(self, _item: QTreeWidgetItem, column: int) -> None:
        if column == 0:
            self._update_compare()

    def _update_compare(self) -> None:
        chosen = [self.records[i] for i in self.checked()]
        self.compare.set_records(chosen, baseline=0)
