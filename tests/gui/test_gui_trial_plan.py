"""Issue 22: a rung page shows while its trial runs where it stands ("Pair 2 of 2–3 · about 3 s left"), its plan,
and the study's stages still to come with the engine's estimate; Stop still ends it cleanly."""

from __future__ import annotations

import re

from tests.gui.gui_helpers import children, fake_launcher, make_window, measure_baseline, start_page_trial

from tfturbo.tune.estimate import remaining


def trainings() -> list:
    """The trial's backend processes still alive (an audit the next page starts may run beside; it measures
    nothing, `run_gate`)."""
    return [p for p in children() if {"run", "run-pair"} & set(p.cmdline())]


def test_a_running_trial_shows_its_pair_time_left_plan_and_the_rest_of_the_study(qtbot, tmp_path):
    window = make_window(qtbot, tmp_path, launcher=fake_launcher("ok", 0.03))
    measure_baseline(qtbot, window)
    page = start_page_trial(qtbot, window, 2)
    note = page.plan_note
    # first B's full-length run, the accuracy gate's; its time left from the baseline's measured run (the trial
    # has none yet); the study's first trial also trains the baseline from two other seeds (issue 39), counted
    assert note.isVisible() and note.text().startswith(
        "Full-length run for the accuracy gate (then 2 trainings from other seeds and 2–3 speed pairs; paired on "
        "val_accuracy)"), note.text()
    assert re.search(r"^Full-length run .* · about \d+ (s|min \d\d s) left", note.text()), note.text()
    assert "Plan: 7–9 runs: first B trains" in note.text() and "then 2–3 pairs measure speed only" in note.text()
    assert re.search(r"then 2 trainings of the baseline from seeds \d+, \d+ for the accuracy gate's training "
                     r"noise, then 2–3 pairs", note.text()), note.text()
    # the first speed pair: the trial has measured B's run, so it estimates the rest; the study's stages too
    qtbot.waitUntil(lambda: note.text().startswith("Pair 1 of 2–3"), timeout=60_000)
    assert re.search(r"^Pair 1 of 2–3.* · about \d+ (s|min \d\d s) left", note.text()), note.text()
    # a speed-only pair validates nothing: its empty validation plot says so
    assert page.plots.val_plot._title_text == "No validation in a speed-only pair"
    # the legend counts the pair as the progress line does (it said "b2", the run directory's name, during pair 1)
    assert [name[name.rindex("("):] for name in page.plots.legend_shown()] == ["(pair 1)", "(pair 1)"], \
        page.plots.legend_shown()
    rest = remaining(window.session.engine)
    assert [s.title for s in rest][:1] == ["XLA compilation"] and rest[-1].title == "Re-measure & compare"
    assert "Still to come: XLA compilation about" in note.text() and "Mixed precision" not in note.text()
    page.stop_action()  # Esc: the trial is judged on its complete pairs, and nothing keeps running
    qtbot.waitUntil(lambda: page.rung.decision is not None and not page.run_panel.is_running(), timeout=30_000)
    qtbot.waitUntil(lambda: not trainings(), timeout=20_000)
    assert not note.text().startswith("Pair") and note.text().startswith("Still to come:")
    # issue 22: stopped during a speed-only pair, the page shows the trial's first pair — the full-length runs
    # with validation the accuracy verdict compared — not the stopped pair, whose validation plot was empty
    own, reference = page.plots.legend_shown()
    assert own.endswith("(full length)") and reference.startswith("reference ") and reference.endswith("(the baseline run)")
    assert all(n > 0 for n in page.plots.plotted_lengths()["val"]), page.plots.plotted_lengths()
