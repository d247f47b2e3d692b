"""Issue 22: what a continued study's pages show, from the runs recorded in its folder (no backend runs).

A recorded study (`report_fixtures.make_study`: a baseline, three trials of
three interleaved pairs, the larger batch measured against XLA, then the
confirmation of batch 128 against the baseline) opened with File → Open study
showed a baseline page and rung pages with empty plots (only the baseline's
curves, or nothing), and each configuration's speed was a different number on
its page than in the compare table. The pages now replay the trials' first
pairs from their run directories, and every page says the configuration's one
headline.
"""

from __future__ import annotations

import pytest
from tests.gui.gui_helpers import make_window

from tests.report.report_fixtures import make_study
from tfturbo.headline import SPEED_UP, headline
from tfturbo_gui.step_status import NOT_KEPT, PASSED


@pytest.fixture
def continued(qtbot, tmp_path):
    window = make_window(qtbot, tmp_path)
    window.resize(1280, 800)
    window.continue_study(make_study(tmp_path / "recorded"))
    return window


def test_a_continued_study_replays_its_runs_on_every_page(qtbot, continued):
    window = continued
    rungs = window.session.study.rungs
    window.goto(1)
    baseline = window.pages[1]
    assert baseline.plots.plotted_lengths()["step_ms"] == [60]  # its own curve, not an empty plot
    assert baseline.results.values["Steps"].text() == "60"
    assert baseline.run_panel.state.text() == "Completed — 60 steps recorded"

    for index, name, status in ((2, "02-mixed_bfloat16", NOT_KEPT), (3, "03-xla", PASSED),
                                (4, "04-larger_batch", PASSED)):
        window.goto(index)
        page = window.pages[index]
        rung = next(r for r in rungs if r.name == name)
        assert page.rung is rung and page.status == status
        # the runs the accuracy gate compared, each named: the page's own full-length run first, then the
        # baseline run it was judged against (a paired trial trains no A the full length)
        own, reference = page.plots.legend_shown()
        assert own == f"{rung.settings.label()} (full length)" and \
            reference == f"reference {window.session.baseline.settings.label()} (the baseline run)", (own, reference)
        lengths = page.plots.plotted_lengths()
        assert all(n > 0 for n in lengths["step_ms"]) and len(lengths["step_ms"]) == 2
        assert all(n > 0 for n in lengths["val"]), lengths  # the validation points the runs recorded
        assert page.decision_card.isVisibleTo(page) and page.profile_view.isVisibleTo(page)
        # one speed number for the configuration: its headline, as the compare table says it
        shown = headline(name, rungs)
        speed = next(v.text() for k, v in page.decision_card.facts.values.items() if k == SPEED_UP)
        assert speed == f"{shown.text()} {shown.source(name)} — {shown.verdict}"

    # the larger batch was confirmed against the baseline: its page shows the confirmation's number, as the table
    batch = window.pages[4]
    shown = headline("04-larger_batch", rungs)
    assert shown.trial == "05-confirmation" and "(the confirmation's trial)" in \
        batch.decision_card.facts.values[SPEED_UP].text()
    # batch 128 beside batch 64: aligned by samples seen, not by step
    assert batch.plots._scales and batch.plots.step_plot.getPlotItem().getAxis("bottom").labelText == "samples seen"
    window.goto(5)
    table = window.pages[5].view
    row = [r.name for r in table.rows].index("04-larger_batch")
    assert table.cell(row, "speed-up [95% CI]").startswith(shown.text("x"))


def test_the_compare_page_aligns_runs_of_different_batch_sizes_by_samples_with_warm_ups_shaded(qtbot, continued):
    window = continued
    window.goto(5)
    page = window.pages[5]
    plots = page.view.plots
    base, confirmed = (s.data for s in plots.series)  # the baseline (batch 64) and the confirmation (batch 128)
    assert [s.samples_per_step for s in plots.series] == [64, 128]
    assert plots.step_plot.getPlotItem().getAxis("bottom").labelText == "samples seen"
    assert page.view.align_combo.itemText(0) == "samples"
    # the curves end at the same number of samples seen (the confirmation trained half the steps at twice the batch)
    ends = [float(curve.xData[-1]) for curve in plots.curves["step_ms"]]
    assert ends[0] == pytest.approx(ends[1], rel=0.05), ends
    # both runs' warm-ups are shaded, in samples (the confirmation's labelled, the baseline's in its colour)
    regions = [item.getRegion() for _, item in plots._decor]
    for data, batch in ((base, 64), (confirmed, 128)):
        first = float(data.step.view()[0])
        assert ((first - 0.5) * batch, (data.first_steady_step - 0.5) * batch) in regions, (regions, batch)
    assert plots.primary is confirmed
