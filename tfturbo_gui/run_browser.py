"""File → Open study: every run of one or more studies, any of them overlaid in the compare view.

Studies from `tfturbo tune`, from the wizard or from another machine open the
same way (docs/ARCHITECTURE.md, "Run and study directories"). A run that crashed, was cancelled or has a
truncated events file still shows what it measured, with the warning.

A study is opened with each rung's own run ticked (what the wizard's Compare
page shows); the trials' replicate runs are listed unticked and still give
the table's rows their intervals. A study of 25 runs all ticked drew 25
tangled step-time curves in 8 repeating colours.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QFileDialog, QHBoxLayout, QLabel, QMainWindow, QPushButton, QSplitter,
                               QStyledItemDelegate, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget)

from tfturbo import compare
from tfturbo.formats import FormatVersionError
from tfturbo.palette import PALETTE
from tfturbo.runfiles import RUNS_DIR, RunRecord, load_run, load_study_runs
from tfturbo.tune.study import Rung, Study

from .compare_view import CompareView
from .failures import outcome_cell

MAX_NAME_WIDTH = 260  # px, a column's most: run names elide in the middle, settings at their end (tooltips whole)
NAME, STATUS, CONFIGURATION, SPEED = range(4)
# when the columns do not fit the tree: the settings are narrowed first (elided, whole in their tooltip),
# then the speed, the status, and the run's name last
SHRINK_ORDER = (CONFIGURATION, SPEED, STATUS, NAME)
MIN_COLUMN = 48  # px: what a column is narrowed to at most
RECENT_RUNS = 3  # ticked at first, with the first run, when a folder has no ladder to choose from

RUN_ROLE = Qt.ItemDataRole.UserRole
MAX_WARNING_LINES = 6  # of the study opened last


class _ElideRight(QStyledItemDelegate):
    """The settings and status columns keep their beginning ("mixed_float16, XLA on…"); the tree elides run
    names in the middle, so a replicate keeps its ".b2"."""

    def initStyleOption(self, option, index) -> None:  # noqa: N802 (Qt API)
        super().initStyleOption(option, index)
        option.textElideMode = Qt.TextElideMode.ElideRight


def default_ticked(names: list[str], own: list[str]) -> set[str]:
    """The runs ticked when a folder opens: each ladder rung's own run (`own`, in ladder order) that is
    there; with none, the first run (the baseline of a study) and the latest few. At most one per palette
    colour, the first ones and the latest kept."""
    chosen = [n for n in own if n in names]
    if not chosen:
        chosen = names[:1] + [n for n in names[-RECENT_RUNS:] if n not in names[:1]]
    if len(chosen) > len(PALETTE):
        chosen = chosen[:1] + chosen[1 - len(PALETTE):]
    return set(chosen)


class RunBrowser(QMainWindow):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("tfturbo — runs")
        # its own size on a large screen, the screen's room on a small one (it opened at 1240x760 on 1024x640)
        room = self.screen().availableGeometry()
        self.resize(min(1240, room.width()), min(760, room.height()))
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
        hint.setToolTip("A study opens with each rung's own run ticked; its trials' replicate runs are listed "
                        "unticked and give the table's speed-ups their intervals.")
        bar.addWidget(hint)
        layout.addLayout(bar)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setChildrenCollapsible(False)
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["run", "status", "settings", "steps/s"])  # short: "configuration" was cut
        self.tree.setMinimumWidth(300)
        self.tree.setAlternatingRowColors(True)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.tree.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # names elide instead
        self._elide_right = _ElideRight(self.tree)
        for column in (STATUS, CONFIGURATION):
            self.tree.setItemDelegateForColumn(column, self._elide_right)
        self.replicate_of: dict[int, str] = {}  # record index -> the rung whose trial the run is a replicate of
        self.tree.itemChanged.connect(self._on_item_changed)
        self.compare = CompareView(plot_columns=2, table_apart=True)
        splitter.addWidget(self.tree)
        splitter.addWidget(self.compare)
        splitter.setStretchFactor(1, 1)  # the plots take what the window gains or loses beyond the tree's share
        splitter.setSizes([440, 800])
        splitter.splitterMoved.connect(lambda *_: self._fit_tree() if self.records else None)
        # the table under the runs and their plots, at the window's whole width: beside the list it scrolled
        # sideways and showed one row at 1024x640 (the issue 42 walk)
        rows = QSplitter(Qt.Orientation.Vertical)
        rows.setChildrenCollapsible(False)
        rows.addWidget(splitter)
        rows.addWidget(self.compare.table_part)
        rows.setStretchFactor(0, 1)
        rows.setStretchFactor(1, 1)
        rows.setSizes([1, 10_000])  # the runs and plots at their least height, the table and its note the rest
        layout.addWidget(rows, 1)
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
            try:
                record = load_run(path)
            except FormatVersionError as e:
                self.refuse(e)
                return
            self.add_runs(Path(path).name, [record], [])

    def refuse(self, error: FormatVersionError) -> None:
        """A folder a newer tfturbo wrote: not opened, and the line says why and what to do."""
        self.warnings.setText(f"Not opened: {error.line()}")
        self.warnings.show()

    def open_study(self, path: str | Path) -> None:
        try:
            study = Study.load(path)
            runs = load_study_runs(path)
        except FormatVersionError as e:
            self.refuse(e)
            return
        title = f"{Path(path).name}" + (f" — {study.workload}" if study.workload else "")
        found = {r.path.resolve() for r in runs.runs}
        runs_dir = (Path(path) / RUNS_DIR).resolve()

        def lost_run(rung: Rung) -> bool:
            """A rung whose run ended before its folder under runs/ was written (e.g. the model failed to
            build): still listed. A path leading anywhere else is not a run of this study."""
            where = (Path(path) / str(rung.run)).resolve()
            return where.parent == runs_dir and where not in found and not where.exists()

        lost = [r for r in study.rungs if r.run and r.skipped_reason is None and lost_run(r)]
        measured = [r for r in study.rungs if r.run and r.skipped_reason is None]
        own = [Path(str(r.run)).name for r in measured]
        replicate_of = {name: r.name for r in measured for name in r.replicates if name not in own}
        self.add_runs(title, runs.runs, study.problems + runs.warnings, lost, own=own, replicate_of=replicate_of,
                      where=str(path))

    def add_runs(self, title: str, records: list[RunRecord], warnings: list[str],
                 lost: list[Rung] | None = None, own: Sequence[str] = (), replicate_of: dict[str, str] | None = None,
                 where: str = "") -> None:
        """List `records` under `title`, the default set ticked (`default_ticked`: `own` are the ladder's
        runs); `replicate_of` names the rung whose trial each replicate run belongs to."""
        replicate_of = replicate_of or {}
        ticked = default_ticked([r.name for r in records], list(own))
        self.tree.blockSignals(True)
        top = QTreeWidgetItem([title])
        top.setToolTip(0, where or title)
        self.tree.addTopLevelItem(top)
        top.setFirstColumnSpanned(True)  # (only once in the tree: before, it did nothing and the title was "s…d")
        for record in records:
            row = compare.compare_runs([record])[0]
            item = QTreeWidgetItem([record.name, record.status, row.label, compare.fmt_num(row.steps_per_s, 1)])
            about = [record.name]
            if record.name in replicate_of:
                self.replicate_of[len(self.records)] = replicate_of[record.name]
                about.append(f"A replicate run of {replicate_of[record.name]}'s trial: unticked, it still gives the "
                             "table's speed-ups their intervals.")
            item.setToolTip(0, "\n".join(about + list(record.warnings)))
            item.setToolTip(2, row.label)
            item.setData(0, RUN_ROLE, len(self.records))
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(0, Qt.CheckState.Checked if record.name in ticked else Qt.CheckState.Unchecked)
            if record.warnings:
                item.setToolTip(1, "\n".join(record.warnings))
            if record.status != "completed":  # the status as the table and the report say it, explained
                item.setToolTip(1, "\n".join([outcome_cell(record.status)] + list(record.warnings)))
            top.addChild(item)
            self.records.append(record)
        for rung in lost or []:
            status = (rung.summary.status if rung.summary else None) or "crashed"
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
        """Columns to their contents (the names capped at MAX_NAME_WIDTH), then, until the tree fits its width,
        narrowed in SHRINK_ORDER: the settings first, the run names last. (Narrowing the widest first
        left every column 60 px wide: no run name showed, only its checkbox.)"""
        header = self.tree.header()
        widths, floors = [], []
        for c in range(self.tree.columnCount()):
            self.tree.resizeColumnToContents(c)  # (the spanned study titles do not count)
            widths.append(min(max(self.tree.columnWidth(c), header.sectionSizeHint(c)), MAX_NAME_WIDTH))
            floors.append(min(widths[c], MIN_COLUMN))
        # room with the vertical scroll bar reserved: fitted before it appeared (a study's rows outgrowing the
        # tree as the window shrank), the columns ran 10 px past it at 1024x640 (issue 22 walk)
        room = self.tree.width() - 2 * self.tree.frameWidth() - self.tree.verticalScrollBar().sizeHint().width()
        excess = sum(widths) - (min(room, self.tree.viewport().width()) - 4)
        for c in SHRINK_ORDER:
            if excess <= 0:
                break
            cut = min(excess, widths[c] - floors[c])
            widths[c] -= cut
            excess -= cut
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
            if top is None:
                continue
            for c in range(top.childCount()):
                item = top.child(c)
                if item is not None and item.checkState(0) == Qt.CheckState.Checked:
                    out.append(item.data(0, RUN_ROLE))
        return out

    def _on_item_changed(self, _item: QTreeWidgetItem, column: int) -> None:
        if column == 0:
            self._update_compare()

    def _update_compare(self) -> None:
        checked = self.checked()
        chosen = [self.records[i] for i in checked]
        # the unticked replicates of a trial still count in their configuration's interval, as on the wizard's
        # Compare page (`CompareView.set_records`)
        replicates = [self.records[i] for i in sorted(self.replicate_of) if i not in checked]
        self.compare.set_records(chosen, baseline=0, replicates=replicates)
