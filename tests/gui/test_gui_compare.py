"""The compare page's table on a recorded study with realistic numbers: readable, and honest about each number.

A real study (`report_fixtures.make_study`: a baseline and four trials of three
interleaved replicate pairs each, with run-to-run noise, one rung measured
against the rung kept before it) is put on page 5 as the wizard would hold it.
The table was unreadable at 1024×640 (headers cut to "speed-u", rows cut
mid-cell, 60 px plots with one tick) and its "speed-up" column contradicted its
steps/s column (0.84x beside 648 vs 730 steps/s, "against the baseline").
"""

from __future__ import annotations

import csv
import io
import re

import pytest
from conftest import make_window
from PySide6.QtCore import QPoint, QPointF, QRect, Qt
from PySide6.QtGui import QFont, QFontMetrics, QImage, QPainter, QWheelEvent
from PySide6.QtWidgets import QApplication, QStyle

from tests.report.report_fixtures import make_study
from tfturbo.runfiles import RUNS_DIR, load_run
from tfturbo_gui import theme
from tfturbo_gui.compare_view import CompareView, plain

SIZES = [(1024, 640), (1280, 800)]


@pytest.fixture
def themed():
    """The app's own style sheet (semi-bold, padded headers: where "peak memory" lost its descenders)."""
    app = QApplication.instance()
    before = app.styleSheet()
    app.setStyleSheet(theme.style_sheet(False))
    yield
    app.setStyleSheet(before)


def compare_page(qtbot, tmp_path, size):
    """The wizard at `size` on the Re-measure & compare page, continuing the recorded study."""
    root = make_study(tmp_path / "recorded")
    window = make_window(qtbot, tmp_path)
    window.resize(*size)
    window.continue_study(root)  # its rungs replayed from their runs; the next stage is the record
    page = window.pages[5]
    assert page.confirmation is window.session.study.rungs[-1]  # 05-confirmation, measured
    window.goto(5)
    qtbot.waitUntil(lambda: len(page.view.rows) == 5 and page.view.table.viewport().width()
                    == page.view._fitted_width, timeout=5_000)
    qtbot.wait(50)
    return window, page


def unreadable(view: CompareView) -> list[str]:
    """What a user could not read in the table: a cell or header whose text is cut (elided or clipped), a row
    outside the table, the table scrolling sideways."""
    table = view.table
    bad = []
    fm = table.fontMetrics()
    text_margin = 2 * (table.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, table) + 1)
    for r in range(table.rowCount()):
        if table.rowViewportPosition(r) + table.rowHeight(r) > table.viewport().height():
            bad.append(f"row {r} ({view.rows[r].name}) is not shown whole")
        for c in range(table.columnCount()):
            text = table.item(r, c).text()
            width = table.columnWidth(c) - text_margin - 1
            laid = fm.boundingRect(QRect(0, 0, width, 10_000), int(Qt.TextFlag.TextWordWrap), text)
            if laid.width() > width or laid.height() > table.rowHeight(r) - 1:
                bad.append(f"row {r} {view.header[c]!r}: {plain(text)!r} needs {laid.width()}x{laid.height()} px, "
                           f"has {width}x{table.rowHeight(r) - 1}")
    header = table.horizontalHeader()
    bold = QFont(header.font())
    bold.setBold(True)
    hfm = QFontMetrics(bold)
    for c in range(table.columnCount()):
        label = table.horizontalHeaderItem(c).text()
        lines = label.split("\n")
        if max(hfm.horizontalAdvance(line) for line in lines) > header.sectionSize(c) - 12:  # 6 px padding
            bad.append(f"header {plain(label)!r} is wider than its column ({header.sectionSize(c)} px)")
        if len(lines) * hfm.lineSpacing() > header.height() - 8:
            bad.append(f"header {plain(label)!r} is taller than the header ({header.height()} px)")
    if table.horizontalScrollBar().maximum() > 0:
        bad.append(f"the table scrolls sideways by {table.horizontalScrollBar().maximum()} px")
    return bad


def tick_labels(plot) -> int:
    """How many numbers the plot's left axis draws."""
    axis = plot.getPlotItem().getAxis("left")
    image = QImage(10, 10, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        return len(axis.generateDrawSpecs(painter)[2])
    finally:
        painter.end()


@pytest.mark.parametrize("size", SIZES)
def test_every_row_header_and_plot_of_the_compare_page_is_readable(qtbot, tmp_path, themed, size):
    window, page = compare_page(qtbot, tmp_path, size)
    view = page.view
    assert unreadable(view) == [], f"at {size}"
    assert view.table.verticalScrollBar().maximum() == 0  # every row shown: the page scrolls, not the table
    assert page.scroll.widget().height() >= page.scroll.widget().minimumSizeHint().height()  # nothing squeezed
    for plot in (view.plots.step_plot, view.plots.loss_plot, view.plots.val_plot):
        assert plot.height() >= 180 and tick_labels(plot) >= 3, f"{plot.getPlotItem().titleLabel.text} at {size}"
    # what the page shows is reachable: the table lies inside the page's scrolling column
    page.scroll.ensureWidgetVisible(view.table, 0, 0)
    qtbot.wait(20)
    top = view.table.mapTo(page.scroll.viewport(), view.table.rect().topLeft()).y()
    assert 0 <= top and top + view.table.height() <= page.scroll.viewport().height()

    # the wheel over a plot scrolls the page (the plot would otherwise take it and zoom)
    bar = page.scroll.verticalScrollBar()
    bar.setValue(0)
    plot = view.plots.loss_plot
    before = plot.getPlotItem().getViewBox().viewRange()
    centre = QPointF(plot.viewport().rect().center())
    QApplication.sendEvent(plot.viewport(), QWheelEvent(centre, plot.viewport().mapToGlobal(centre), QPoint(),
                                                        QPoint(0, -120), Qt.MouseButton.NoButton,
                                                        Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase,
                                                        False))
    assert bar.value() > 0 and plot.getPlotItem().getViewBox().viewRange() == before

    # ten rows: the rungs and five of their replicate runs
    runs = window.session.study.path / RUNS_DIR
    names = [r.name for r in window.session.study.rungs] + ["02-mixed_bfloat16.a1", "02-mixed_bfloat16.b2",
                                                            "03-xla.a1", "03-xla.b2", "04-larger_batch.a1"]
    view.set_records([load_run(runs / n) for n in names], trials=window.session.study.rungs)
    qtbot.waitUntil(lambda: view.table.viewport().width() == view._fitted_width, timeout=5_000)
    qtbot.wait(50)
    assert len(view.rows) == 10 and unreadable(view) == [], f"ten rows at {size}"
    assert view.table.verticalScrollBar().maximum() == 0


def _number(text: str) -> float:
    return float(re.match(r"[\d.]+", text).group(0))


def test_no_row_shows_two_speed_ups_that_disagree(qtbot, tmp_path):
    """Each number that compares two runs says what it compares, and is what it says.

    Before: 02's "speed-up" cell said 0.84x "against the baseline" beside 648.36 vs 729.91 steps/s (0.89x),
    the replicate-group ratio of the compare module, neither the trial's 0.78x nor the runs' own ratio.
    """
    window, page = compare_page(qtbot, tmp_path, (1280, 800))
    view, study = page.view, window.session.study
    rungs = {r.name: r for r in study.rungs}
    base = view.rows[0]
    base_steps = _number(view.cell(0, "steps/s [95% CI]"))
    for i, row in enumerate(view.rows):
        steps = _number(view.cell(i, "steps/s [95% CI]"))
        batch = int(re.search(r"batch (\d+)", view.cell(i, "run")).group(1))
        # the one-run ratio is the arithmetic of the numbers beside it, per sample
        ratio = _number(view.cell(i, "samples/s ÷ baseline"))
        expected = steps * batch / (base_steps * base.batch_size)
        assert abs(ratio - expected) <= 0.011, (row.name, ratio, expected)
        # the speed-up is the trial's, against the rung it names, as the ladder beside the table says it
        speedup = view.cell(i, "speed-up [95% CI]")
        if i == 0:
            assert speedup == "1.00x (baseline)" and view.cell(0, "verdict") == "baseline"
            continue
        speed = rungs[row.name].decision.speed
        lo, hi = speed.ci95
        assert speedup == (f"{speed.ratio:.2f}x [{lo:.2f}, {hi:.2f}] {speed.replicates} pairs vs "
                           f"{rungs[row.name].compared_with}")
        ladder = next(line for line in page.ladder.text().splitlines() if line.startswith(f"• {row.name} "))
        assert f"{speed.ratio:.2f}× [{lo:.2f}, {hi:.2f}]" in ladder
        assert view.cell(i, "verdict") == f"{speed.verdict}, {'kept' if rungs[row.name].kept else 'not kept'}"
        # every other "x" in the row is a labelled ratio: the one-run ratio, or peak memory against the baseline
        others = re.findall(r"(\d+\.\d+)x", " ".join(view.cell(i, h) for h in view.header
                                                     if h not in ("speed-up [95% CI]",)))
        assert others == [view.cell(i, "samples/s ÷ baseline")[:-1], f"{row.memory_ratio:.2f}"], row.name
    assert rungs["04-larger_batch"].compared_with == "03-xla"  # a trial against another rung than the baseline
    assert view.rows[3].name == "04-larger_batch" and view.cell(3, "speed-up [95% CI]").endswith("vs 03-xla")
    note = view.note.text()
    assert "one run each" in note and "named in the cell" in note
    # the exported CSV carries what the table shows (its `speedup` column stays `tfturbo compare`'s)
    exported = list(csv.DictReader(io.StringIO(view.csv_text())))
    for i, line in enumerate(exported[1:], start=1):
        speed = rungs[line["name"]].decision.speed
        assert float(line["trial_speedup"]) == pytest.approx(speed.ratio)
        assert line["trial_against"] == rungs[line["name"]].compared_with and int(line["trial_pairs"]) == 3
        assert f"{float(line['samples_per_s_vs_baseline']):.2f}x" == view.cell(i, "samples/s ÷ baseline")

    # runs no trial measured (the replicates behind a rung) show their one-run ratio and no speed-up
    runs = study.path / RUNS_DIR
    other = CompareView(fit_rows=True)
    qtbot.addWidget(other)
    other.set_records([load_run(runs / n) for n in ("01-baseline", "02-mixed_bfloat16", "02-mixed_bfloat16.a1")])
    assert other.cell(1, "speed-up [95% CI]").endswith("vs 01-baseline")  # found in the study's study.yaml
    assert other.cell(2, "speed-up [95% CI]") == "—"
    assert other.cell(2, "verdict") == "same settings as the baseline"
    a1, base = other.rows[2], other.rows[0]
    assert abs(_number(other.cell(2, "samples/s ÷ baseline")) - a1.steps_per_s / base.steps_per_s) <= 0.005
