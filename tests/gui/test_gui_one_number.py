"""One number per comparison: a configuration measured against the baseline by several trials (the confirmation
run again) has one speed-up — every pair of those trials pooled — on its page's card, the compare table, its CSV,
the Record page and the PDF (`tfturbo.headline`, the one function that computes it)."""

from __future__ import annotations

import csv
import io

from tests.gui.gui_helpers import make_window
from tests.report.report_fixtures import make_study, pdf_text
from tfturbo.headline import SPEED_UP, headline
from tfturbo.report import write_report
from tfturbo.stats import replicate_ratio_ci
from tfturbo.trials.speed import SpeedRule


def test_a_comparison_measured_twice_shows_one_pooled_speed_up_everywhere(qtbot, tmp_path):
    root = make_study(tmp_path / "recorded", confirmations=2)  # 05- and 06-confirmation: the same comparison
    window = make_window(qtbot, tmp_path)
    window.continue_study(root)
    study = window.session.study
    rungs = {r.name: r for r in study.rungs}
    first, again = rungs["05-confirmation"].decision.speed, rungs["06-confirmation"].decision.speed
    ratio, (lo, hi) = replicate_ratio_ci(first.ratios + again.ratios, SpeedRule().confidence)
    shown = headline("04-larger_batch", study.rungs)
    assert shown.trials == ("05-confirmation", "06-confirmation") and shown.pairs == 6
    assert (round(shown.ratio, 6), round(shown.ci95[0], 6)) == (round(ratio, 6), round(lo, 6))
    assert f"{first.ratio:.2f}" != f"{ratio:.2f}" or f"{again.ratio:.2f}" != f"{ratio:.2f}"  # pooling shows
    figure = f"{ratio:.2f}× [{lo:.2f}, {hi:.2f}]"
    assert shown.text() == figure

    # the batch page's card (the rung whose configuration was confirmed)
    batch = window.pages[4]
    window.goto(4)
    assert batch.rung.name == "04-larger_batch"
    card = batch.decision_card.facts.values[SPEED_UP].text()
    assert card == f"{figure} vs the baseline, 6 pairs (the confirmation's and the 2nd confirmation's, pooled) — faster"

    # the compare table: the configuration's rows (its own rung and both confirmations), and the ladder beside it
    compare = window.pages[5]
    window.goto(5)
    qtbot.waitUntil(lambda: len(compare.view.rows) == 6, timeout=5_000)
    table = f"{ratio:.2f}x [{lo:.2f}, {hi:.2f}] 6 pairs vs the baseline"
    names = [row.name for row in compare.view.rows]
    ladder = compare.ladder.text().splitlines()  # the configurations, in the study's order
    for name in ("04-larger_batch", "05-confirmation", "06-confirmation"):
        assert compare.view.cell(names.index(name), "speed-up [95% CI]") == table, name
    # the configuration once (issue 42 walk: its rung and its confirmations were three entries), its one figure
    assert len(ladder) == 3 and not any(line.startswith("• the confirmation") for line in ladder), ladder
    line = ladder[2]
    assert figure in line and f"{first.ratio:.2f}×" not in line.replace(figure, ""), line
    assert "the confirmation's and the 2nd confirmation's, pooled" in line
    verdict = compare.verdict.speed_label.text()  # the confirmation's verdict card: the same figure
    assert verdict == f"faster: {figure} vs the baseline, 6 pairs (its own trial and the confirmation's, pooled)"
    assert f"{again.ratio:.2f}×" not in compare.verdict.reason.text().replace(figure, "")
    exported = {line["name"]: line for line in csv.DictReader(io.StringIO(compare.view.csv_text()))}
    for name in ("04-larger_batch", "05-confirmation", "06-confirmation"):
        assert f"{float(exported[name]['speedup']):.2f}" == f"{ratio:.2f}"
        assert f"{float(exported[name]['speedup_ci95_lo']):.2f}" == f"{lo:.2f}"
        assert int(exported[name]["headline_pairs"]) == 6

    # the Record page
    window.goto(6)
    record = window.pages[6].recommended.values[SPEED_UP].text()
    assert record.startswith(figure) and "6 pairs" in record

    # the PDF
    text = " ".join(pdf_text(write_report(root)).split())
    assert f"{ratio:.2f}x [{lo:.2f}, {hi:.2f}] vs the baseline, 6 pairs" in text
    assert f"{first.ratio:.2f}x [{first.ci95[0]:.2f}, {first.ci95[1]:.2f}]" not in text
