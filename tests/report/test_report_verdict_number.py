"""The report's "Verdict in full" says the recommendation's one speed-up (`tfturbo.headline`), the figure on
page 1: the issue-42 walk (h42w) read 2.75x [2.37, 3.20] over 8 pairs on page 1 and "2.84x as fast ... (95%
interval 1.98x to 4.09x over 4 interleaved replicate pairs)" in the verdict, the confirmation's pairs alone."""

from __future__ import annotations

from tests.report.report_fixtures import make_study, pdf_text
from tfturbo.headline import headline
from tfturbo.report import write_report
from tfturbo.tune.study import Study


def test_the_verdict_in_full_says_the_pooled_speed_up_of_page_one(tmp_path):
    root = make_study(tmp_path / "recorded", confirmations=2)  # 05- and 06-confirmation: the same comparison
    study = Study.load(root)
    shown = headline("04-larger_batch", study.rungs)
    assert shown is not None and shown.pairs == 6
    last = {r.name: r for r in study.rungs}["06-confirmation"].decision.speed
    assert f"{last.ratio:.2f}" != f"{shown.ratio:.2f}"  # the last trial alone says another number
    text = " ".join(pdf_text(write_report(root)).split())
    lo, hi = shown.ci95
    assert (f"is {shown.ratio:.2f}x as fast as the baseline" in text and
            f"(95% interval {lo:.2f}x to {hi:.2f}x over 6 interleaved replicate pairs" in text), text[:3000]
    assert f"{last.ratio:.2f}x as fast" not in text
