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
from tests.gui.gui_helpers import make_window
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
    assert page.page_scroll.widget().height() >= page.page_scroll.widget().minimumSizeHint().height()  # nothing squeezed
    for plot in (view.plots.step_plot, view.plots.loss_plot, view.plots.val_plot):
        assert plot.height() >= 180 and tick_labels(plot) >= 3, f"{plot.getPlotItem().titleLabel.text} at {size}"
    # what the page shows is reachable: the table lies inside the page's scrolling column
    page.page_scroll.ensureWidgetVisible(view.table, 0, 0)
    qtbot.wait(20)
    top = view.table.mapTo(page.page_scroll.viewport(), view.table.rect().topLeft()).y()
    assert 0 <= top and top + view.table.height() <= page.page_scroll.viewport().height()

    # the wheel over a plot scrolls the page (the plot would otherwise take it and zoom)
    bar = page.page_scroll.verticalScrollBar()
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
    """One speed number per configuration: its headline (`tfturbo.headline`), in the table, the ladder beside
    it and the CSV; a run's own rate is a labelled detail.

    Issue 22: "float32 + XLA" showed 52.23 steps/s, 1.92x "samples/s ÷ baseline" and a 1.55x speed-up, and
    its confirmation row 1.63x.
    """
    from tfturbo.headline import config_words, configuration_key, headline

    window, page = compare_page(qtbot, tmp_path, (1280, 800))
    view, study = page.view, window.session.study
    rungs = {r.name: r for r in study.rungs}
    assert "samples/s ÷ baseline" not in view.header and "this run: steps/s" in view.header
    for i, row in enumerate(view.rows):
        speedup = view.cell(i, "speed-up [95% CI]")
        if i == 0:
            assert speedup == "1.00x (baseline)" and view.cell(0, "verdict") == "baseline"
            continue
        shown = headline(row.name, study.rungs)
        lo, hi = shown.ci95
        assert speedup == f"{shown.ratio:.2f}x [{lo:.2f}, {hi:.2f}] {shown.pairs} pairs vs {shown.against_words}"
        assert "01-baseline" not in speedup and "-confirmation" not in speedup  # configurations, not run folders
        # one line per configuration, named by the rung that measured it first (a confirmation joins it)
        first = next(r for r in study.rungs[1:] if configuration_key(r) == configuration_key(rungs[row.name]))
        ladder = next(line for line in page.ladder.text().splitlines()
                      if line.startswith(f"• {config_words(first.name, study.rungs)}"))
        assert row.name not in ladder
        assert f"{shown.ratio:.2f}× [{lo:.2f}, {hi:.2f}] vs {shown.against_words}" in ladder
        assert view.cell(i, "verdict") == f"{shown.verdict}, {'kept' if rungs[row.name].kept else 'not kept'}"
        # no other speed ratio in the row: only peak memory against the baseline
        others = re.findall(r"(\d+\.\d+)x", " ".join(view.cell(i, h) for h in view.header
                                                     if h not in ("speed-up [95% CI]",)))
        assert others == [f"{row.memory_ratio:.2f}"], row.name
        # the one run's own ratio is a detail in the tooltip, labelled as one
        tip = view.table.item(i, view.header.index("this run: steps/s")).toolTip()
        assert "one run against one run" in tip and "not the speed-up" in tip
    by_label: dict[str, set[str]] = {}  # a configuration measured twice (its rung, its confirmation): one number
    for i, row in enumerate(view.rows):
        by_label.setdefault(row.label, set()).add(view.cell(i, "speed-up [95% CI]"))
    assert all(len(texts) == 1 for texts in by_label.values()), by_label
    note = view.note.text()
    assert "named in the cell" in note and "a detail" in note
    # the exported CSV carries the table's number as its speed-up
    exported = list(csv.DictReader(io.StringIO(view.csv_text())))
    for i, line in enumerate(exported[1:], start=1):
        shown = headline(line["name"], study.rungs)
        assert float(line["speedup"]) == pytest.approx(shown.ratio) == float(line["headline_speedup"])
        assert float(line["speedup_ci95_lo"]) == pytest.approx(shown.ci95[0])
        assert line["headline_against"] == shown.against and int(line["headline_pairs"]) == shown.pairs
        assert f"{float(line['speedup']):.2f}x" == view.cell(i, "speed-up [95% CI]").split()[0]

    # runs no trial measured (the replicates behind a rung) show no speed-up
    runs = study.path / RUNS_DIR
    other = CompareView(fit_rows=True)
    qtbot.addWidget(other)
    other.set_records([load_run(runs / n) for n in ("01-baseline", "02-mixed_bfloat16", "02-mixed_bfloat16.a2")])
    assert other.cell(1, "speed-up [95% CI]").endswith("vs the baseline")  # found in the study's study.yaml
    assert other.cell(2, "speed-up [95% CI]") == "—"
    assert other.cell(2, "verdict") == "same settings as the baseline"


def test_the_confirmation_button_says_again_only_after_a_confirmation_was_measured(qtbot, tmp_path):
    """Issue 22: during the first confirmation the button already said "Run the confirmation again"."""
    import dataclasses

    window, page = compare_page(qtbot, tmp_path, (1280, 800))
    page.update_controls()
    assert page.run_button.text() == "Run the confirmation again"  # 05-confirmation was measured
    page.confirmation = dataclasses.replace(page.confirmation, decision=None)  # started, not decided yet
    page.update_controls()
    assert page.run_button.text() == "Run the confirmation"


def test_a_kept_rung_waiting_for_its_confirmation_says_how_it_was_measured(qtbot, tmp_path):
    """Issue 22: "… was kept after one run" after a 6-pair trial."""
    window, page = compare_page(qtbot, tmp_path, (1280, 800))
    study = window.session.study
    study.rungs = [r for r in study.rungs if r.kind != "confirmation"]
    page.confirmation = None
    page.candidate = lambda: study.rungs[-1]  # the kept rung waiting for its confirmation
    page.on_enter()
    text = page.needs.text()
    kept = study.rungs[-1]
    assert "after one run" not in text
    # in words: what it changes from the baseline (RunSettings.name_against), not its run folder
    against = next(r for r in study.rungs if r.name == kept.compared_with).settings.name_against(
        study.rungs[0].settings)
    assert against == "XLA"
    assert f"kept after its trial against {against} ({kept.decision.speed.replicates} pairs)" in text


def test_the_table_and_the_pdf_show_the_same_speed_up_for_each_configuration(qtbot, tmp_path):
    """One number per configuration across front ends: the compare table's cell is the PDF's."""
    from tests.report.report_fixtures import pdf_text
    from tfturbo.report import write_report

    window, page = compare_page(qtbot, tmp_path, (1280, 800))
    view = page.view
    text = " ".join(pdf_text(write_report(window.session.study.path)).split())
    for i, row in enumerate(view.rows[1:], start=1):
        value, interval = view.cell(i, "speed-up [95% CI]").split(" pairs vs ")[0].rsplit(" ", 1)[0].split(" ", 1)
        assert f"{value} {interval} vs" in text, (row.name, value, interval)


def test_the_note_explains_unpaired_runs_only_when_a_row_shows_their_ratio(qtbot, tmp_path):
    """Runs no trial measured, several of each configuration (copied out of their study): the row's speed-up is
    `tfturbo compare`'s unpaired ratio, and the note under the table says what that is; beside a study's rows,
    every speed-up a trial's, it says nothing of it. Which rows those are is the view's own rule
    (`CompareView._unpaired`), not a word looked for in the table's cells."""
    import shutil

    runs = make_study(tmp_path / "recorded") / RUNS_DIR
    loose = tmp_path / "loose"
    names = ["01-baseline", "02-mixed_bfloat16.a2", "02-mixed_bfloat16.a3", "02-mixed_bfloat16.a4",
             "02-mixed_bfloat16", "02-mixed_bfloat16.b2", "02-mixed_bfloat16.b3"]
    for name in names:
        shutil.copytree(runs / name, loose / name)
    view = CompareView(fit_rows=True)
    qtbot.addWidget(view)
    view.set_records([load_run(loose / n) for n in names])
    unpaired = [i for i in range(len(view.rows)) if "unpaired runs vs" in view.cell(i, "speed-up [95% CI]")]
    assert unpaired and "unpaired runs: no trial measured the run" in view.note.text()
    view.set_records([load_run(runs / n) for n in ("01-baseline", "02-mixed_bfloat16")])
    assert "unpaired runs" not in view.note.text()


def test_every_list_of_configurations_names_them_by_what_they_change(qtbot, tmp_path):
    """Issue 42: configurations were named by run folder ("01-baseline", "04-larger_batch", "(05-confirmation's
    trial)") in the compare view's legend and table and in the CSV. Each is named once, by the core
    (`RunSettings.name_against`), the same in the table, the legend, the CSV and the wizard's ladder; the folder
    stays under it."""
    from tfturbo.tune.study import Study

    window, page = compare_page(qtbot, tmp_path, (1280, 800))
    view = page.view
    study = Study.load(window.session.study.path)
    base = study.rungs[0].settings
    expected = {r.name: r.settings.name_against(base) for r in study.rungs}
    assert expected == {"01-baseline": "baseline: float32, batch 64", "02-mixed_bfloat16": "mixed_bfloat16",
                        "03-xla": "XLA", "04-larger_batch": "XLA + batch 128 + learning rate x2",
                        "05-confirmation": "XLA + batch 128 + learning rate x2"}
    for i, row in enumerate(view.rows):
        assert row.configuration == expected[row.name]
        assert view.cell(i, "run") == f"{row.configuration} {row.name}"  # what it is, then its folder
    assert view.plots.legend_texts() == [f"{view.rows[i].configuration} ({view.rows[i].name})"
                                         for i in view.plotted]
    exported = {line["name"]: line["configuration"] for line in csv.DictReader(io.StringIO(view.csv_text()))}
    assert exported == expected
    ladder = page.ladder.text()
    assert "• XLA (float32 + XLA, batch 64): kept" in ladder and "vs 01-baseline" not in ladder
    # issue 42 walk: the kept rung and its confirmation were listed as two configurations
    assert len(ladder.splitlines()) == 3 and "• the confirmation" not in ladder
    assert "confirmation's trial" not in ladder.replace("the confirmation's trial", "")


def test_the_baseline_box_names_configurations_not_run_folders(qtbot, tmp_path):
    """Issue 42 walk: the compare page's baseline box listed "01-baseline", "04-larger_batch", "05-confirmation".
    It offers each run as the configuration it is (`RunSettings.name_against`), the two runs of one configuration
    told apart by what they are; the run folder only in the item's tooltip."""
    window, page = compare_page(qtbot, tmp_path, (1280, 800))
    box = page.view.baseline_combo
    items = [box.itemText(i) for i in range(box.count())]
    assert items == ["baseline: float32, batch 64", "mixed_bfloat16", "XLA",
                     "XLA + batch 128 + learning rate x2, the batch size step",
                     "XLA + batch 128 + learning rate x2, the confirmation"], items
    assert not any(re.search(r"\d\d-", item) for item in items), items
    assert box.itemData(4, Qt.ItemDataRole.ToolTipRole) == "run folder 05-confirmation"
    box.setCurrentIndex(2)  # choosing by name still picks that run as the baseline
    assert page.view.rows[2].verdict == "baseline" and page.view.rows[2].name == "03-xla"


def test_a_findings_code_is_never_split_in_the_table(qtbot, tmp_path, themed):
    """The issue 42 walk: codes wrapped mid-word ("CALLBACKS_ / NOT_RUN") at both sizes."""
    _window, page = compare_page(qtbot, tmp_path, (1024, 640))
    table = page.view.table
    column = page.view.header.index("findings")
    fm = table.fontMetrics()
    codes = [(r, code) for r in range(table.rowCount()) for code in page.view.rows[r].findings]
    assert ("DIM_NOT_MULTIPLE_OF_8" in [c for _r, c in codes]), codes
    for r, code in codes:
        text = table.item(r, column).text()
        assert code in text.split(", "), text  # whole, with no place to break inside it
        assert table.columnWidth(column) >= fm.horizontalAdvance(code), (code, table.columnWidth(column))
    assert unreadable(page.view) == []
    # the walk: "peak memory: the run's peak" under a row showing its configuration's median
    note = page.view.note.text()
    assert "peak memory: the configuration's, the median of its full-length runs" in note and "the run's peak" \
        not in note


def test_an_mfu_that_rounds_to_zero_shows_a_dash_with_its_reason(qtbot, tmp_path):
    """Issue-42 walk: a small text model on a CPU read "MFU 0%" on every row (0.22% and 0.40% measured), in the
    table and in the PDF's verdict ("is 0%, the baseline's 0%"). A dash, with the figure and why in the tooltip."""
    import json

    from tfturbo.report.model import gather

    root = make_study(tmp_path / "recorded")
    runs = root / RUNS_DIR
    for path in runs.glob("*/summary.json"):
        doc = json.loads(path.read_text())
        doc.update(mfu=0.0040 if path.parent.name.startswith("0") and "baseline" not in path.parent.name
                   else 0.0022, mfu_unknown=None)
        path.write_text(json.dumps(doc))
    view = CompareView(fit_rows=True)
    qtbot.addWidget(view)
    view.set_records([load_run(runs / n) for n in ("01-baseline", "02-mixed_bfloat16")])
    column = view.header.index("MFU")
    assert [view.cell(r, "MFU") for r in range(2)] == ["—", "—"]
    tips = [view.table.item(r, column).toolTip() for r in range(2)]
    assert "MFU 0.22%, under 0.5%" in tips[0] and "MFU 0.40%" in tips[1]
    assert "not known or under 0.5%" in view.note.text()
    verdict = gather(root).verdict
    assert "is 0%" not in verdict and "MFU 0.40%, under 0.5%" in verdict
