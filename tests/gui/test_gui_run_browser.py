"""File → Open study on a study of many runs: the window keeps its size, a few runs are ticked, names show.

Seen on a real study of 25 runs: the legend strip (25 labels of at least 40 px) forced the window to
1664 px, every run was ticked (25 tangled step-time curves), and the run column was 60 px wide (checkboxes,
no names; the study's title read "s…d").
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QStyle
from test_gui_layout import clipped

sys.path.append(str(Path(__file__).resolve().parents[1] / "report"))
from report_fixtures import make_run, make_study  # recorded runs, no training

LADDER = ["01-baseline", "02-mixed_bfloat16", "03-xla", "04-larger_batch", "05-confirmation"]


def many_series(n: int):
    from tfturbo_gui.live_plots import PALETTE, Series
    from tfturbo_gui.run_data import RunData

    names = [f"{i + 1:02d}-larger_batch.b{i + 2}" for i in range(n)]
    return [Series(RunData(name), name, PALETTE[i % len(PALETTE)], dashed=i == 0) for i, name in enumerate(names)]


def colour_of(label) -> str:
    return re.search(r"color:(#[0-9A-Fa-f]{6})", label.text()).group(1).lower()


def test_a_legend_of_25_runs_never_widens_the_plots_and_names_the_runs_that_do_not_fit(qtbot):
    from tfturbo_gui.live_plots import RunPlots

    plots = RunPlots()
    qtbot.addWidget(plots)
    series = many_series(25)
    plots.set_series(series)
    assert plots.minimumSizeHint().width() < 500  # was 25 × 40 px + spacing: 1340 px
    plots.resize(700, 480)
    plots.show()
    qtbot.waitExposed(plots)
    qtbot.wait(20)
    shown = plots.legend_shown()
    entries = shown[:-1]
    assert 2 <= len(entries) < 25 and shown[-1] == f"+{25 - len(entries)} more"
    assert entries == [s.label for s in series[:len(entries)]]  # the first runs (the baseline first), whole
    strip = plots.legend_strip
    for label, s in zip(plots.legend_labels, series):
        assert label.toolTip() == s.label
        assert colour_of(label) == s.color.lower()  # the entry's colour is its curve's
        assert plots.curves["step_ms"][series.index(s)].opts["pen"].color().name() == s.color.lower()
        if label.isVisible():
            assert label.width() >= label.sizeHint().width(), f"{s.label} cut to {label.width()} px"
            assert label.geometry().right() < plots.more_label.geometry().left() <= strip.width()
    tip = plots.more_label.toolTip()
    hidden = series[len(entries):]
    assert [line.split("</span> ")[1] for line in tip.split("<br>")] == [s.label for s in hidden]
    assert all(f"color:{s.color}" in line for s, line in zip(hidden, tip.split("<br>")))

    plots.resize(1600, 480)  # wider: more of the names
    qtbot.wait(20)
    assert len(plots.legend_shown()) - 1 > len(entries)
    plots.set_series(series[:3])  # few runs: all of them, no "+N more"
    qtbot.wait(20)
    assert plots.legend_shown() == [s.label for s in series[:3]]


def test_the_spike_note_is_whole_in_its_plot_and_the_legend_keeps_its_rows(qtbot):
    from tfturbo_gui.live_plots import Series
    from test_gui_layout import _spiky_run, shown_plots

    plots = shown_plots(qtbot)
    spiky = _spiky_run()
    series = many_series(6)
    plots.set_series([Series(spiky, "this run")] + series, primary=spiky)
    qtbot.wait(20)
    # the note is in the step-time plot, whole and inside it (in the legend row it was cut to "▲ 1")
    note = plots.spike_note
    assert note.isVisible() and note.textItem.toPlainText() == "▲ 1 step above range"
    inside = plots.step_plot.getPlotItem().getViewBox().sceneBoundingRect()
    assert inside.contains(note.mapRectToScene(note.boundingRect()))
    assert plots.legend_strip.rows_used == 2
    plots.resize(420, 480)  # narrower: what the two rows cannot hold goes under "+N more"
    qtbot.wait(20)
    assert plots.legend_shown()[-1].endswith("more")


@pytest.fixture
def study(tmp_path) -> Path:
    """28 runs: five ladder rungs, their trials' 20 replicate runs (NN-slug.a1, .b2, ...), three runs the
    ladder does not name (failed, cancelled, crashed)."""
    return make_study(tmp_path / "study", broken=True)


def open_browser(qtbot, study: Path, size: tuple[int, int]):
    from tfturbo_gui.run_browser import RunBrowser

    browser = RunBrowser()
    qtbot.addWidget(browser)
    browser.resize(*size)
    browser.show()
    qtbot.waitExposed(browser)
    browser.open_study(study)
    qtbot.wait(30)
    return browser


def runs(browser) -> list:
    top = browser.tree.topLevelItem(0)
    return [top.child(i) for i in range(top.childCount())]


def test_a_study_opens_with_each_rungs_own_run_ticked_and_the_replicates_listed(qtbot, study):
    browser = open_browser(qtbot, study, (1280, 800))
    items = runs(browser)
    assert len(items) == 34  # with the first trial's two seed replicates of the baseline (issue 39)
    ticked = [i.text(0) for i in items if i.checkState(0) == Qt.CheckState.Checked]
    assert ticked == LADDER  # what the wizard's Compare page shows, not 32 tangled curves
    # each curve named by what it is, its run folder beside it (`RunSettings.name_against`)
    assert [name.rpartition(" (")[2].rstrip(")") for name in browser.compare.plots.legend_shown()] == LADDER
    assert [row.name for row in browser.compare.rows] == LADDER
    replicate = next(i for i in items if i.text(0) == "03-xla.b2")
    assert replicate.checkState(0) == Qt.CheckState.Unchecked and "03-xla's trial" in replicate.toolTip(0)
    assert next(i for i in items if i.text(0) == "06-failed").checkState(0) == Qt.CheckState.Unchecked
    # the unticked replicates still give the rungs' speed-ups their intervals: the same as with them ticked
    speedups = [browser.compare.cell(r, "speed-up [95% CI]") for r in range(len(LADDER))]
    assert "[" in speedups[LADDER.index("03-xla")]
    for item in items[:25]:  # (06-failed, 07-cancelled, 08-crashed are no trial's replicates)
        item.setCheckState(0, Qt.CheckState.Checked)
    every = {row.name: browser.compare.cell(r, "speed-up [95% CI]") for r, row in enumerate(browser.compare.rows)}
    assert speedups == [every[name] for name in LADDER]
    for item in items[25:]:
        item.setCheckState(0, Qt.CheckState.Checked)
    assert browser.width() == 1280  # 28 legend entries do not widen the window
    assert browser.compare.plots.legend_shown()[-1].startswith("+")


@pytest.mark.parametrize("size", [(1280, 800), (1024, 640)])
def test_the_browser_shows_whole_run_names_and_fits_the_smallest_window(qtbot, study, size):
    browser = open_browser(qtbot, study, size)
    assert browser.minimumSizeHint().width() <= 1024 and browser.minimumSizeHint().height() <= 640
    assert (browser.width(), browser.height()) == size
    tree = browser.tree
    top = tree.topLevelItem(0)
    assert top.isFirstColumnSpanned() and top.text(0) == "study — builtin:transformer"
    assert tree.visualItemRect(top).width() > tree.fontMetrics().horizontalAdvance(top.text(0)) + 40  # not "s…d"
    check = tree.style().pixelMetric(QStyle.PixelMetric.PM_IndicatorWidth)
    widest = max(tree.fontMetrics().horizontalAdvance(i.text(0)) for i in runs(browser))
    assert tree.columnWidth(0) >= 2 * tree.indentation() + check + widest  # "02-mixed_bfloat16.b2", whole
    header = tree.header()
    for c in range(tree.columnCount()):  # "status", "settings", "steps/s": not "configuratior"
        assert header.sectionSize(c) >= header.sectionSizeHint(c), tree.headerItem().text(c)
    assert sum(tree.columnWidth(c) for c in range(tree.columnCount())) <= tree.viewport().width()
    assert clipped(browser) == []
    # the issue 22 walk: a study whose rows fitted the tree at 1280x800 but not at 1024x640 got its vertical scroll
    # bar after the columns were fitted, and they ran 10 px past it; fitted, they leave it room
    tree.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
    qtbot.wait(30)
    assert sum(tree.columnWidth(c) for c in range(tree.columnCount())) <= tree.viewport().width()
    plots = browser.compare.plots
    for plot in (plots.step_plot, plots.loss_plot, plots.val_plot, plots.scale_plot):
        left = plot.mapTo(browser, plot.rect().topLeft()).x()
        assert 0 <= left and left + plot.width() <= browser.width() - 12  # inside the window's margin
    # the issue 42 walk: at 1024x640 the table scrolled sideways and showed one row in about 50 px
    table = browser.compare.table
    qtbot.waitUntil(lambda: table.viewport().width() == browser.compare._fitted_width, timeout=5_000)
    qtbot.wait(30)
    assert table.horizontalScrollBar().maximum() == 0, f"scrolls sideways by {table.horizontalScrollBar().maximum()}"
    whole = [r for r in range(table.rowCount())
             if 0 <= table.rowViewportPosition(r) and table.rowViewportPosition(r) + table.rowHeight(r)
             <= table.viewport().height()]
    assert len(whole) >= 3, f"{len(whole)} rows shown whole at {size}"


def test_a_folder_without_a_ladder_opens_with_its_first_and_latest_runs_ticked(qtbot, tmp_path, study):
    from tfturbo.runfiles import load_run

    for i in range(7):
        make_run(tmp_path / "loose" / "runs", f"{i + 1:02d}-run", steps=30, seed=i)
    browser = open_browser(qtbot, tmp_path / "loose", (1024, 640))  # no study.yaml: no ladder to choose from
    assert [i.text(0) for i in runs(browser) if i.checkState(0) == Qt.CheckState.Checked] == \
        ["01-run", "05-run", "06-run", "07-run"]
    browser.add_runs("one run", [load_run(study / "runs" / "06-failed")], [])  # "Add run folder…"
    assert browser.tree.topLevelItem(1).child(0).checkState(0) == Qt.CheckState.Checked
    assert [row.name for row in browser.compare.rows] == ["01-run", "05-run", "06-run", "07-run", "06-failed"]


def test_a_study_a_newer_tfturbo_wrote_is_not_opened_and_the_browser_says_why(qtbot, study):
    """Issue 19: study.yaml in a newer major format is refused, not half-read; the app stays up and says to
    upgrade. The study opens again once its format is one this tfturbo reads."""
    import yaml

    from tfturbo.runfiles import STUDY_YAML

    path = study / STUDY_YAML
    data = yaml.safe_load(path.read_text())
    path.write_text(yaml.safe_dump({**data, "format": 9}))
    browser = open_browser(qtbot, study, (1024, 640))
    assert browser.tree.topLevelItemCount() == 0 and browser.records == []
    text = browser.warnings.text()
    assert browser.warnings.isVisible() and text.startswith(f"Not opened: {path} is format version 9")
    assert "upgrade tfturbo" in text
    path.write_text(yaml.safe_dump(data))
    browser.open_study(study)
    assert browser.tree.topLevelItemCount() == 1


def test_the_runs_window_opens_within_the_screen(qtbot):
    """The issue 42 walk: View → Runs and comparison opened at 1240x760 on a 1024x640 screen."""
    from tfturbo_gui.run_browser import RunBrowser

    browser = RunBrowser()
    qtbot.addWidget(browser)
    room = browser.screen().availableGeometry()
    assert browser.width() <= room.width() and browser.height() <= room.height()
    assert browser.width() == min(1240, room.width()) and browser.height() == min(760, room.height())
