"""Issue 42 walk: a trial stopped with Esc before its verdict had its pairs is undecided, and says so — its card,
its run line and the quit question name what was measured and what is running, not a decision."""

from __future__ import annotations

from PySide6.QtCore import Qt

from tests.gui.gui_helpers import fake_launcher, make_window, measure_baseline, start_page_trial

LEFT = Qt.MouseButton.LeftButton


def test_a_stopped_undecided_trial_says_stopped_with_its_pairs_so_far_and_the_run_line_agrees(qtbot, tmp_path):
    window = make_window(qtbot, tmp_path, launcher=fake_launcher(delay=0.15))
    measure_baseline(qtbot, window)
    page = start_page_trial(qtbot, window, 2)
    trial = window.session.trial_of(page.rung)
    qtbot.waitUntil(lambda: len(trial.runs) == 1 and page.run_panel.is_running(), timeout=60_000)
    page.stop_action()  # Esc
    qtbot.waitUntil(lambda: page.rung.decision is not None and not page.run_panel.is_running(), timeout=60_000)
    card = page.decision_card
    # the walk read "NOT KEPT mixed_bfloat16, batch 32: not recommended" for a trial nobody finished measuring
    assert card.badge.text() == "STOPPED", card.badge.text()
    assert card.headline.text().endswith(": stopped by you — undecided"), card.headline.text()
    assert "not recommended" not in card.headline.text()
    so_far = card.facts.values["Measured so far"].text()
    assert so_far.startswith("0 of the 2 replicate pairs the verdict needs") or \
        so_far.startswith("1 of the 2 replicate pairs the verdict needs"), so_far
    # the run line: the stopped run was discarded, so it does not say its steps were kept
    state = page.run_panel.state.text()
    assert state == f"Stopped by you — {so_far}", state
    assert "recorded" not in state and not page.run_panel.detail.isVisible()
    assert page.continue_button.isVisible()
    # continued to its verdict, the card decides
    qtbot.mouseClick(page.continue_button, LEFT)
    qtbot.waitUntil(lambda: not page.run_panel.is_running() and page.rung.decision is not None
                    and page.rung.decision.speed.replicates >= 2, timeout=60_000)
    assert card.badge.text() in ("KEPT", "NOT KEPT") and "Measured so far" not in card.facts.values


def test_the_quit_question_names_the_step_and_the_run_going(qtbot, tmp_path):
    window = make_window(qtbot, tmp_path, launcher=fake_launcher(delay=0.15))
    measure_baseline(qtbot, window)
    page = start_page_trial(qtbot, window, 2)
    qtbot.waitUntil(lambda: page.run_panel.is_running() and page._planned.arm == "a", timeout=60_000)
    question = window.quit_question()
    # the walk read "float32, batch 32 is still running" during the XLA trial's reference run: the baseline?
    assert question.startswith(f"{page.title} — trial"), question
    assert "the reference run" in question or "again from seed" in question, question
    page.stop_action()
    qtbot.waitUntil(lambda: not page.run_panel.is_running(), timeout=60_000)
