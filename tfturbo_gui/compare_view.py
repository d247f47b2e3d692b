"""Runs side by side: overlaid curves and the compare table, exportable as CSV.

The rows and their numbers are `tfturbo.compare`'s (the exported CSV is its
CSV, with the table's own columns after it). Each configuration has one speed
number, its headline (`tfturbo.headline`): the last trial that measured it
against the baseline, with that trial's interval and pairs (a rung measured only
against an earlier rung says so). A run's own steps/s is a detail of that run,
labelled as one, and its one-run ratio to the baseline run is only in its
tooltip: one run against one run decides nothing. Curves align by step, by
samples seen (batch sizes differ), or by training time.

Numbers are never elided: columns narrow by wrapping their text (run names at
their '-', '_' and '.', intervals between value and interval) down to their
widest unbreakable piece; past that the table scrolls sideways. With
`fit_rows` the table is as tall as its rows (up to ROWS_SHOWN) and the plots
keep PLOTS_MIN_HEIGHT: the page around the view scrolls instead of squeezing
them (the compare page).
"""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from PySide6.QtCore import QEvent, QObject, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QFont, QFontMetrics, QResizeEvent
from PySide6.QtWidgets import (QAbstractItemView, QFileDialog, QHBoxLayout, QHeaderView, QLabel,
                               QPushButton, QSizePolicy, QSplitter, QStyle, QTableWidget, QTableWidgetItem,
                               QVBoxLayout, QWidget)

from tfturbo import compare, protocol
from tfturbo.formats import FormatVersionError
from tfturbo.headline import Headline, headline, step_words
from tfturbo.numbers import digits_for
from tfturbo.palette import PALETTE
from tfturbo.runfiles import RUNS_DIR, STUDY_YAML, RunRecord
from tfturbo.tune.study import Rung, RungKind, Study
from tfturbo.verdicts import Decision, Verdict

from .failures import outcome_cell
from .labels import FittingCombo
from .live_plots import RunPlots, Series
from .run_data import RunData

ALIGN_STEP, ALIGN_TIME = "step", "training time"
ALIGN_SAMPLES = "samples"  # the first choice's name when the runs' batch sizes differ (shorter than the box's
# widest, "training time": "samples seen" was cut to "samples seer" in it)
ROW_PADDING = 6  # px above and below a row's text together
ROWS_SHOWN = 12  # fit_rows: rows shown whole before the table scrolls on its own
PLOTS_MIN_HEIGHT = 250  # fit_rows: the four plots' strip, legend and axes included (~170 px of plot area)
NBSP, ZWSP, WJ = "\u00a0", "\u200b", "\u2060"  # no break here (a space); a break allowed here; no break here
HEADER_PADDING = (4, 6)  # QHeaderView::section padding (vertical, horizontal) in resources/style.qss

# (key: the column's name in cell() and the CSV sense, label as shown, what the column means)
RUN = ("run", "configuration", "What the configuration is, by what it changes from the baseline's (\"20 steps "
                                "per call\", \"mixed_bfloat16 + XLA\"), and under it the run's folder.")
STEPS = ("this run: steps/s", "this run:\nsteps/s",
         "This one run's steady steps per second (1000 ÷ its median step time), a detail of the run: the "
         "interval is its own step-to-step noise, not the spread between runs, so it is no comparison.")
SPEEDUP = ("speed-up [95% CI]", "speed-up\n[95% CI]",
           "The configuration's speed-up: throughput per sample against the baseline, from the last trial that "
           "measured it against the baseline (replicate pairs run alternately), with the 95% interval of their "
           "ratios (run-to-run noise included). An interval containing 1.00 is no measurable change. A rung "
           "measured only against an earlier rung names it. The same number as on the wizard's pages and in "
           "the PDF.")
VERDICT = ("verdict", "verdict", "The trial's speed verdict and whether the configuration was kept.")
WARMUP = ("warm-up s", "warm-\nup (s)", "Seconds before the steady state (compilation, first steps).")
MEMORY = ("peak memory", "peak\nmemory", "The configuration's peak memory — the median of its full-length runs in a "
          "process of their own (a run's own peak when it is the only one) — and its ratio to the baseline's.")
MFU = ("MFU", "MFU", "Model FLOP utilisation: the share of this device's measured matmul FLOP/s the run reached.")
FINDINGS = ("findings", "findings", "Codes of the findings in this run (their text is in the run's tooltip).")
NO_TRIAL = "—"
# columns the exported CSV adds to `tfturbo compare`'s: the configuration's headline (the table's speed-up)
CSV_EXTRA = ("headline_speedup", "headline_ci95_lo", "headline_ci95_hi", "headline_pairs", "headline_against",
             "headline_trial", "headline_verdict", "kept")
TEXT_MIN_CAP = 160  # a run name piece wider than this is elided (whole in its tooltip), not scrolled to


@dataclass
class _Trial:
    """A rung's headline (`tfturbo.headline`), its own keep decision, and its own trial when the headline is
    another trial's (the confirmation's)."""

    headline: Headline
    kept: bool
    reason: str
    own: str = ""
    what: str = ""  # which rung of its configuration it is (`headline.step_words`: "the confirmation")


def _trial_of(rung: Rung | None, rungs: list[Rung]) -> _Trial | None:
    """A rung's headline, or None: the baseline rung, a skipped step, a trial without a decision."""
    if rung is None or rung.kind == RungKind.BASELINE or rung.decision is None:
        return None
    shown = headline(rung.name, rungs)
    if shown is None:
        return None
    own = ""
    if shown.trial != rung.name and rung.name not in shown.trials and rung.decision.speed.replicates >= 1:
        speed = rung.decision.speed
        own = f"its own trial: {speed.text()} vs {shown.word(rung.compared_with or '')}, {speed.verdict}"
    return _Trial(shown, rung.decision.kept, rung.decision.reason, own, step_words(rung.name, rungs))


def _study_trials(records: list[RunRecord]) -> dict[str, _Trial]:
    """The trials of records that are a study's rungs (STUDY/runs/NAME), from that study's study.yaml."""
    out: dict[str, _Trial] = {}
    studies: dict[Path, Study | None] = {}
    for record in records:
        parent = record.path.parent
        if parent.name != RUNS_DIR or not (parent.parent / STUDY_YAML).is_file():
            continue
        root = parent.parent
        if root not in studies:
            try:
                studies[root] = Study.load(root)
            except FormatVersionError:  # a newer tfturbo's study.yaml: its runs are compared without its trials
                studies[root] = None
        study = studies[root]
        if study is None:
            continue
        rung = next((r for r in study.rungs if r.name == record.name
                     and r.run == f"{RUNS_DIR}/{record.name}"), None)
        trial = _trial_of(rung, study.rungs)
        if trial is not None:
            out[str(record.path)] = trial
    return out


def choice_names(records: Sequence[RunRecord], baseline: int, trials: dict[str, _Trial]) -> list[str]:
    """Each run as the baseline box offers it: its configuration against `records[baseline]`'s
    (`RunSettings.name_against`: "baseline: float32, batch 64", "20 steps per call"), never its run folder (the box
    read "01-baseline", "04-spe20", "05-confirmation", issue 42). Runs of one configuration say which they are: a
    study's rung in words ("…, the confirmation"), another run by its place among them ("…, run 2")."""
    base = compare.run_settings(records[baseline]) if records else None
    names = []
    for record in records:
        settings = compare.run_settings(record)
        names.append(settings.name_against(base) if settings is not None else f"run {record.name}")
    out = []
    for i, (record, name) in enumerate(zip(records, names)):
        if names.count(name) > 1:
            trial = trials.get(str(record.path))
            what = trial.what if trial is not None and trial.what not in ("", name) else \
                f"run {names[:i + 1].count(name)}"
            name = f"{name}, {what}"
        out.append(name)
    return out


class _PreferredMinimum(RunPlots):
    """The plots asking for no more than their minimum height: in a page that scrolls they take the room
    left over, instead of making the page taller than the window for their own sake."""

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt API)
        return QSize(super().sizeHint().width(), self.minimumHeight())


def _text(item: QTableWidgetItem | None) -> str:
    """A table cell's or header's text ("" for one never set: the table sets every cell)."""
    return item.text() if item is not None else ""


def breakable(name: str, whole: int = 12) -> str:
    """'02-mixed_float16.a1' may wrap after its '-', '_' and '.' (zero-width spaces), never elsewhere; a name
    of up to `whole` characters ('01-baseline') stays in one piece (word joiners: Qt breaks after a '-')."""
    joint = WJ if len(name) <= whole else ZWSP
    return re.sub(r"([-_.])(?=.)", lambda m: m.group(1) + joint, name)


def _interval(ci: tuple[float, float] | None, digits: int) -> str:
    if not ci or not all(math.isfinite(c) for c in ci):
        return "[no interval]"
    return f"[{ci[0]:.{digits}f},{NBSP}{ci[1]:.{digits}f}]"


def _rate(row: compare.CompareRow) -> float | None:
    """Samples per second as the table shows it: steps/s × batch (a batch not recorded counts as 1, as the
    trial engine counts it: `summary.batch_size`)."""
    return row.steps_per_s * (row.batch_size or 1) if row.steps_per_s is not None else None


def batch_of(record: RunRecord) -> int:
    """The run's batch size (`compare.run_settings`; 1 when they do not say)."""
    settings = compare.run_settings(record)
    batch = settings.batch_size if settings is not None else None
    return int(batch) if isinstance(batch, int) and batch > 0 else 1


def plain(text: str) -> str:
    """A cell's text on one line, as a user reads it."""
    return text.replace("\n", " ").replace(ZWSP, "").replace(WJ, "").replace(NBSP, " ")


class CompareView(QWidget):
    baseline_changed = Signal(int)

    def __init__(self, parent: QWidget | None = None, plot_columns: int = 4, fit_rows: bool = False,
                 table_apart: bool = False):
        """`fit_rows`: the table as tall as its rows, under the plots (a page that scrolls). `table_apart`: the
        table and its note are `table_part`, for the owner to place (the runs window puts them under its list of
        runs as well, at the window's whole width: beside the list, the table scrolled sideways at 1024 px and
        showed one row)."""
        super().__init__(parent)
        self.records: list[RunRecord] = []
        self.replicates: list[RunRecord] = []  # trial runs behind the rows: they give the rows their intervals
        self.rows: list[compare.CompareRow] = []
        self.baseline = 0
        self.plotted: list[int] = []
        self.header: list[str] = []
        self.fit_rows = fit_rows
        self._trials: dict[str, _Trial] = {}  # run path -> the trial that measured it
        self._datas: dict[str, RunData] = {}
        self._fitted_width = -1
        self._filling = self._fitting = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        bar = QHBoxLayout()
        self.baseline_combo = FittingCombo(14)
        self.baseline_combo.currentIndexChanged.connect(self._on_baseline)
        self.align_combo = FittingCombo()
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
        self.plots: RunPlots = (_PreferredMinimum if fit_rows else RunPlots)(columns=plot_columns)
        self.table = QTableWidget()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(True)
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(24)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.horizontalHeader().setStretchLastSection(False)
        self.table.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        # held apart from the table: the runs window's table part may go before this view (its event then comes
        # from a table already deleted)
        self._viewport = self.table.viewport()
        self._viewport.installEventFilter(self)
        self.note = QLabel("")
        self.note.setObjectName("muted")
        self.note.setWordWrap(True)
        self.note.setTextFormat(Qt.TextFormat.PlainText)
        if fit_rows:
            # the page scrolls: the plots keep a readable height, the table shows every row
            self.plots.setMinimumHeight(PLOTS_MIN_HEIGHT)
            self.table.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
            layout.addWidget(self.plots, 1)
            layout.addWidget(self.table)
        elif table_apart:
            self.table.setMinimumHeight(90)
            layout.addWidget(self.plots, 1)
            self.table_part = QWidget()
            part = QVBoxLayout(self.table_part)
            part.setContentsMargins(0, 0, 0, 0)
            part.addWidget(self.table, 1)
            part.addWidget(self.note)
            return
        else:
            splitter = QSplitter(Qt.Orientation.Vertical)
            splitter.setChildrenCollapsible(False)
            self.table.setMinimumHeight(90)
            splitter.addWidget(self.plots)
            splitter.addWidget(self.table)
            splitter.setStretchFactor(0, 3)
            splitter.setStretchFactor(1, 1)
            splitter.setSizes([300, 110])
            layout.addWidget(splitter, 1)
        layout.addWidget(self.note)

    # ------------------------------------------------------------ data

    def set_records(self, records: list[RunRecord], baseline: int = 0, plotted: list[int] | None = None,
                    live: dict[str, RunData] | None = None, replicates: Sequence[RunRecord] = (),
                    trials: list[Rung] | None = None) -> None:
        """Compare `records` against `records[baseline]`; draw `plotted` (default: all).

        `live` maps a run's path to the RunData already in memory (the wizard's runs), so
        curves are not re-read from disk. `replicates` are the trials' other runs: they give the
        rows their intervals (`compare.compare_runs`) without rows of their own. `trials`: the
        rungs whose trials measured records (matched by run name); None reads them from the
        study.yaml of records that lie in a study's runs/ folder.
        """
        self.records = list(records)
        self.replicates = list(replicates)
        self.baseline = baseline if 0 <= baseline < len(records) else 0
        self.plotted = list(range(len(records))) if plotted is None else list(plotted)
        self._datas = dict(live or {})
        if trials is None:
            self._trials = _study_trials(self.records)
        else:
            by_name = {r.name: _trial_of(r, trials) for r in trials}
            self._trials = {str(rec.path): trial for rec in self.records
                            if (trial := by_name.get(rec.name)) is not None}
        self.baseline_combo.blockSignals(True)
        self.baseline_combo.clear()
        for name, record in zip(choice_names(self.records, self.baseline, self._trials), self.records):
            self.baseline_combo.addItem(name)  # the run folder a secondary detail, in its tooltip
            self.baseline_combo.setItemData(self.baseline_combo.count() - 1, f"run folder {record.path.name}",
                                            Qt.ItemDataRole.ToolTipRole)
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
            series.append(Series(self._data(record), f"{self.rows[i].configuration} ({record.name})",
                                 PALETTE[n % len(PALETTE)],
                                 dashed=(i == self.baseline), samples_per_step=batch_of(record)))
        # runs of different batch sizes align by samples seen (their steps are not comparable); the last run
        # plotted that is not the baseline is the one looked at: its warm-up and profiler window shaded, its
        # median drawn (the others' warm-ups shaded faintly in their colours)
        looked_at = next((s.data for s, i in zip(reversed(series), reversed(self.plotted)) if i != self.baseline),
                         series[-1].data if series else None)
        self.plots.set_series(series, primary=looked_at, own=series[0].data if series else None)  # legend in order
        by_samples = len({s.samples_per_step for s in series}) > 1
        self.align_combo.setItemText(0, ALIGN_SAMPLES if by_samples else ALIGN_STEP)
        self._fill_table()

    # ------------------------------------------------------------ the table

    def trial(self, row: int) -> _Trial | None:
        """The trial that measured row `row`'s run, or None."""
        return self._trials.get(self.rows[row].path) if 0 <= row < len(self.rows) else None

    def _columns(self, metrics: list[str]) -> list[tuple[str, str, str]]:
        columns = [RUN, SPEEDUP, VERDICT, STEPS, WARMUP, MEMORY]
        if any(r.mfu is not None or r.mfu_unknown for r in self.rows):
            columns.append(MFU)
        for m in metrics:  # 'val_accuracy' over two lines: 'val_' / 'accuracy'
            label = m.replace("_", "_\n", 1) if len(m) > 6 and "_" in m else m
            columns.append((m, label, f"The run's final {m} (the last validation)."))
        if any(r.findings for r in self.rows):
            columns.append(FINDINGS)
        return columns

    def _unpaired(self, i: int) -> bool:
        """Row `i`'s speed-up is `tfturbo compare`'s unpaired ratio of replicate groups: a completed run no trial
        measured, with a measured ratio against the baseline's runs (its cell and the footer's note say so)."""
        row = self.rows[i]
        return (i != self.baseline and row.status == protocol.RunStatus.COMPLETED and self.trial(i) is None
                and row.speedup is not None and row.speedup_ci95 is not None
                and row.verdict in (Verdict.FASTER, Verdict.SLOWER, Verdict.NO_CHANGE))

    def _cells(self, i: int, metrics: list[str], has_findings: bool, has_mfu: bool) -> list[tuple[str, str]]:
        """(text, tooltip) of every column of row `i`."""
        row, base = self.rows[i], self.rows[self.baseline]
        is_base = i == self.baseline
        completed = row.status == protocol.RunStatus.COMPLETED
        trial = self.trial(i)
        # what the configuration is first, its run folder under it (issue 42: configurations were named by folder)
        configuration = row.configuration.replace(" + ", f" +{NBSP}").replace("batch ", f"batch{NBSP}")
        cells = [(f"{configuration}\n{breakable(row.name)}",
                  "\n".join([row.configuration, row.label, row.path,
                             f"settings record: {compare.fmt_settings_record(row.recorded_settings)}"]
                            + list(row.warnings)))]
        # speed-up: a trial's, against the run it names
        if not completed and not is_base:
            cells.append(("not measured", f"The run {row.status}: no speed-up was measured."))
        elif trial is not None:
            d, shown = 2, trial.headline
            text = (f"{shown.ratio:.{d}f}x {_interval(shown.ci95, d)}" if math.isfinite(shown.ratio)
                    else "no throughput measured")
            whose = shown.pooled_words(row.name) if len(shown.trials) > 1 else "this rung's trial" \
                if shown.trial == row.name else f"{shown.word(shown.trial)}'s trial"
            cells.append((f"{text}\n{shown.pairs}{NBSP}pairs vs {breakable(shown.against_words)}",
                          f"{plain(text)}: {whose} against {shown.against_words}, over {shown.pairs} replicate "
                          f"pairs run alternately." + (f"\n({trial.own})" if trial.own else "")
                          + f"\n{trial.reason}"))
        elif is_base:
            cells.append(("1.00x (baseline)", f"{row.name} is the baseline."))
        elif self._unpaired(i) and row.speedup is not None and row.speedup_ci95 is not None:
            text = f"{row.speedup:.2f}x {_interval(row.speedup_ci95, 2)}"
            cells.append((f"{text}\nunpaired runs vs the{NBSP}baseline",
                          f"{plain(text)}: no trial measured this run. The runs with its settings against the "
                          f"runs with the baseline's ({base.label}, {base.name}), not run in pairs (ratio of their geometric means, "
                          "Welch interval)."))
        else:
            cells.append((NO_TRIAL, "No trial measured this run: one run cannot tell a speed-up from the "
                                    "machine's noise (its one-run ratio is in the steps/s tooltip)."))
        # verdict
        if not completed:
            text = outcome_cell(row.status)
            cells.append(((f"baseline,\n{text}" if is_base else text), "\n".join(row.warnings) or text))
        elif trial is not None:
            cells.append((f"{trial.headline.verdict},\n{Decision.word(trial.kept)}", trial.reason))
        elif is_base:
            cells.append(("baseline", "The run the others are compared with."))
        elif row.verdict == compare.SAME_SETTINGS:
            cells.append(("same settings as the baseline",
                          "A replicate of the baseline's own settings: any difference is run-to-run noise."))
        else:
            cells.append((row.verdict, row.verdict))
        # steps/s: this run alone
        if row.steps_per_s is None:
            cells.append(("n/a", "No steady step was measured."))
        else:
            d = digits_for(row.steps_per_s)
            steps = f"{row.steps_per_s:.{d}f}"
            tip = f"{steps} steps/s = 1000 ÷ this run's median step, {row.step_ms:.3f} ms" if row.step_ms else steps
            if row.steps_per_s_ci95:
                steps += "\n" + _interval(row.steps_per_s_ci95, d)
                tip += "; its 95% interval covers this run's own step-to-step noise, not the spread between runs"
            rate, base_rate = _rate(row), _rate(base)
            if rate and base_rate and not is_base:
                tip += (f".\nThis one run's samples/s over {base.name}'s: {rate / base_rate:.2f}x, one run against "
                        "one run (run-to-run noise included): a detail, not the speed-up.")
            cells.append((steps, tip))
        cells.append((compare.fmt_num(row.warmup_s, 1), "Seconds before the steady state."))
        memory = compare.fmt_memory(row)
        cells.append((memory.replace(" ", NBSP, 1).replace(" (", "\n(", 1), memory))
        if has_mfu:
            why = compare.mfu_why(row.mfu, row.mfu_unknown)
            cells.append((compare.fmt_mfu(row.mfu, row.mfu_unknown),
                          f"{why}." if why else "Share of this device's measured matmul FLOP/s."))
        cells += [(compare.fmt_metric(row.metrics.get(m)), f"{m} at the run's last validation") for m in metrics]
        if has_findings:
            # codes wrap at the spaces between them only: "CALLBACKS_ / NOT_RUN" read as two codes (the issue 42 walk)
            cells.append((", ".join(row.findings) or "-", "\n".join(row.findings) or "no findings"))
        return cells

    def _fill_table(self) -> None:
        metrics = compare.metric_names(self.rows)
        columns = self._columns(metrics)
        self.header = [c[0] for c in columns]
        self._filling = True  # the table's resizes while it fills must not fit a half-filled table
        self.table.clear()
        self.table.setColumnCount(len(columns))
        self.table.setRowCount(len(self.rows))
        for c, (_key, label, meaning) in enumerate(columns):
            item = QTableWidgetItem(label)
            item.setToolTip(meaning)
            self.table.setHorizontalHeaderItem(c, item)
        for r in range(len(self.rows)):
            for c, (text, tip) in enumerate(self._cells(r, metrics, FINDINGS in columns, MFU in columns)):
                item = QTableWidgetItem(text)
                item.setToolTip(tip)
                self.table.setItem(r, c, item)
        self.note.setText(self._footer(columns))
        self._filling = False
        self._fitted_width = -1
        self._fit_columns()

    def _footer(self, columns: list[tuple[str, str, str]]) -> str:
        shown = {c[0] for c in columns}
        base = self.rows[self.baseline].name if self.rows else "the baseline"
        lines = ["speed-up: the configuration's, against the run named in the cell (the baseline unless it was "
                 "only measured against an earlier rung), from the last trial of replicate pairs run alternately; "
                 "its 95% interval includes run-to-run noise, and one containing 1.00 is no measurable change. "
                 f"Verdict: that trial's, and whether the rung was kept. {NO_TRIAL}: no trial measured the run.",
                 "this run: steps/s: the one run's own rate, a detail (its interval is that run's step-to-step "
                 "noise, not a comparison)."]
        if any(self._unpaired(r) for r in range(len(self.rows))):
            lines.append(f"unpaired runs: no trial measured the run; the runs with its settings against those with "
                         f"{base}'s settings, not run in pairs, so less certain than a trial.")
        lines.append(f"peak memory: the configuration's, the median of its full-length runs in a process of their "
                     f"own (a run's own peak when it is the only one), and its ratio to {base}'s"
                     + ("; MFU: share of the device's measured matmul FLOP/s (— : not known or under 0.5%, "
                        "the cell's tooltip says which)." if MFU[0] in shown else "."))
        return "\n".join(lines)

    # ------------------------------------------------------------ sizing

    def _header_font(self) -> QFont:
        font = QFont(self.table.horizontalHeader().font())
        font.setBold(True)  # the theme's sections are semi-bold; bold is the wider of the two
        return font

    def column_needs(self) -> tuple[list[int], list[int]]:
        """(natural, minimum) width of every column: its widest line, and its widest piece that cannot wrap
        (a number, an interval, a header line), each with the cell's margins."""
        table = self.table
        fm, bold = table.fontMetrics(), QFontMetrics(self._header_font())
        # the text's margins in a cell (the focus frame's, one pixel more each side) and the grid line
        margin = 2 * (table.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, table) + 1) + 2
        head_margin = 2 * HEADER_PADDING[1] + 2
        natural, minimum = [], []
        for c in range(table.columnCount()):
            label = _text(table.horizontalHeaderItem(c))
            head = max(bold.horizontalAdvance(line) for line in label.split("\n")) + head_margin
            nat = low = head
            for r in range(table.rowCount()):
                text = _text(table.item(r, c))
                nat = max(nat, max(fm.horizontalAdvance(line) for line in text.split("\n")) + margin)
                pieces = [p for p in re.split(f"[ \n{ZWSP}]", text) if p]
                low = max(low, max((fm.horizontalAdvance(p) for p in pieces), default=0) + margin)
            if label == RUN[1]:  # a finding's code is never cut: its column is at least as wide as the widest
                low = min(low, max(head, TEXT_MIN_CAP))
            natural.append(nat)
            minimum.append(min(low, nat))
        return natural, minimum

    def _fit_columns(self) -> None:
        """Every column as wide as its widest line; when they do not all fit, the widest wrap first, none
        below its widest unbreakable piece (then the table scrolls sideways rather than cut a number)."""
        table = self.table
        if table.columnCount() == 0 or self._filling or self._fitting:
            return
        self._fitting = True
        try:
            self._fit_to(table.viewport().width())
        finally:
            self._fitting = False

    def _fit_to(self, available: int) -> None:
        table = self.table
        self._fitted_width = available
        natural, minimum = self.column_needs()
        widths = list(natural)
        excess = sum(widths) - available
        while excess > 0:
            open_ = [c for c in range(len(widths)) if widths[c] > minimum[c]]
            if not open_:
                break
            top = max(widths[c] for c in open_)
            at_top = [c for c in open_ if widths[c] == top]
            below = [widths[c] for c in open_ if widths[c] < top]
            floor = max(below + [max(minimum[c] for c in at_top)])
            step = max(1, min(top - floor, -(-excess // len(at_top))))
            for c in at_top:
                new = max(minimum[c], widths[c] - step)
                excess -= widths[c] - new
                widths[c] = new
        if excess < 0:  # room to spare: shared out, rather than one huge last column or a grey void
            share, rest = divmod(-excess, len(widths))
            widths = [w + share + (1 if c < rest else 0) for c, w in enumerate(widths)]
        for c, w in enumerate(widths):
            table.setColumnWidth(c, w)
        table.resizeRowsToContents()
        for r in range(table.rowCount()):  # the lines of neighbouring rows must not touch
            table.setRowHeight(r, table.rowHeight(r) + ROW_PADDING)
        lines = max(_text(table.horizontalHeaderItem(c)).count("\n") + 1 for c in range(table.columnCount()))
        header = table.horizontalHeader()
        header.setMinimumHeight(lines * QFontMetrics(self._header_font()).lineSpacing() + 2 * HEADER_PADDING[0] + 3)
        header_height = max(header.minimumHeight(), header.sizeHint().height())
        if self.fit_rows:
            shown = sum(table.rowHeight(r) for r in range(min(table.rowCount(), ROWS_SHOWN)))
            sideways = table.horizontalScrollBar().sizeHint().height() if sum(widths) > available else 0
            table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded if table.rowCount() > ROWS_SHOWN
                                             else Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
            table.setFixedHeight(2 * table.frameWidth() + header_height + shown + sideways)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt API)
        if watched is self._viewport and event.type() == QEvent.Type.Resize and self.rows \
                and isinstance(event, QResizeEvent) and event.size().width() != self._fitted_width:
            QTimer.singleShot(0, self, self._refit)  # after the layout has settled (never inside its resize)
        return super().eventFilter(watched, event)

    def _refit(self) -> None:
        if self.rows and self.table.viewport().width() != self._fitted_width:
            self._fit_columns()

    def cell(self, row: int, column: str) -> str:
        """The text shown in `column` (a header name, on one line) of `row`, on one line."""
        return plain(_text(self.table.item(row, self.header.index(column))))

    # ------------------------------------------------------------ CSV

    def csv_text(self) -> str:
        """`tfturbo compare`'s CSV, with a measured configuration's `speedup`, interval and `verdict` its
        headline (the table's speed-up: one number per configuration), then where that number comes from
        (CSV_EXTRA). Rows no trial measured keep `tfturbo compare`'s unpaired ratio of replicate groups."""
        lines = list(csv.reader(io.StringIO(compare.to_csv(self.rows))))
        if not lines:
            return ""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        header = lines[0]
        writer.writerow(header + list(CSV_EXTRA))
        columns = [header.index(c) for c in ("speedup", "speedup_ci95_lo", "speedup_ci95_hi", "verdict")]
        for i, line in enumerate(lines[1:]):
            trial = self.trial(i)
            if trial is None:
                writer.writerow(line + [""] * len(CSV_EXTRA))
                continue
            shown = trial.headline
            numbers = [repr(v) if math.isfinite(v) else "" for v in (shown.ratio, *shown.ci95)]
            for column, value in zip(columns, numbers + [shown.verdict]):
                line[column] = value
            writer.writerow(line + numbers + [str(shown.pairs), shown.against, shown.trial, shown.verdict,
                                              str(trial.kept)])
        return out.getvalue()

    def export_csv(self, path: str | Path) -> Path:
        path = Path(path)
        path.write_text(self.csv_text(), encoding="utf-8")
        return path

    def _choose_csv(self) -> None:
        start = str(self.records[self.baseline].path.parent.parent / "compare.csv") if self.records else "compare.csv"
        path, _ = QFileDialog.getSaveFileName(self, "Export the table as CSV", start, "CSV files (*.csv)")
        if path:
            self.export_csv(path)
