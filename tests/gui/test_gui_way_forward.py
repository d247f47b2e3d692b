"""Issue 22: an inconclusive accuracy verdict offers its ways forward as buttons on the rung's page; a click
judges the trial again from the runs already measured (the loss, a tolerance) and the study records the choice."""

from __future__ import annotations

import yaml
from tests.gui.gui_helpers import fake_launcher, make_window, measure_baseline, start_page_trial
from PySide6.QtCore import Qt

from tfturbo.runfiles import load_run
from tfturbo_gui.step_status import NOT_KEPT, PASSED

LEFT = Qt.MouseButton.LeftButton


def _inconclusive_rung(qtbot, tmp_path):
    """builtin:small-val's mixed precision: faster, its accuracy on 400 noisy examples undecided."""
    window = make_window(qtbot, tmp_path, workload="builtin:small-val", launcher=fake_launcher("ok"))
    measure_baseline(qtbot, window)
    page = start_page_trial(qtbot, window, 2)
    qtbot.waitUntil(lambda: page.rung is not None and page.rung.decision is not None, timeout=60_000)
    decision = page.rung.decision
    assert decision.speed.verdict == "faster" and decision.accuracy.verdict == "inconclusive", decision.reason
    assert page.status == NOT_KEPT and page.way_bar.isVisible()
    # measured against the baseline's configuration: the engine's one rule, which the offer of more examples asks
    assert window.session.engine.compared_with_baseline(page.rung)
    return window, page


def _recorded(window, name: str) -> dict:
    ladder = yaml.safe_load((window.session.study.path / "study.yaml").read_text())["ladder"]
    return next(e for e in ladder if e["name"] == name)


def test_judge_on_the_loss_decides_from_the_runs_measured_and_the_study_records_it(qtbot, tmp_path):
    window, page = _inconclusive_rung(qtbot, tmp_path)
    window.resize(1024, 640)  # side by side the buttons widened the left column: it scrolled sideways, text cut
    qtbot.wait(100)
    assert page.splitter.widget(0).horizontalScrollBar().maximum() == 0
    button = page.way_bar.buttons["loss"]
    assert button.isVisible() and button.text() == "Judge on the validation loss"
    assert button.objectName() == "primaryButton"  # the recommended way
    runs = sorted(p.name for p in (window.session.study.path / "runs").iterdir())
    qtbot.mouseClick(button, LEFT)
    decision = page.rung.decision
    assert decision.kept and decision.accuracy.metric == "val_loss" and decision.accuracy.verdict == "within tolerance"
    assert page.status == PASSED and window.session.best is page.rung
    assert page.decision_card.headline.text().endswith("recommended")
    assert page.decision_card.facts.values["Accuracy rule"].text().startswith("the validation loss")
    # decided: no way forward left, only the undo (issue 39: the choice could not be taken back)
    visible = [w for w, b in page.way_bar.buttons.items() if b.isVisible()]
    assert visible == ["metric"] and page.way_bar.buttons["metric"].text() == "Judge on the validation metric again"
    assert sorted(p.name for p in (window.session.study.path / "runs").iterdir()) == runs  # no new run
    entry = _recorded(window, page.rung.name)
    assert entry["way_forward"] == "loss" and entry["rule"]["judge_on"] == "loss" and entry["kept"]
    qtbot.mouseClick(page.way_bar.buttons["metric"], LEFT)  # undone: the metric again, inconclusive again
    assert page.rung.decision.accuracy.metric == "val_accuracy" and not page.rung.decision.kept
    assert page.way_bar.buttons["loss"].isVisible()
    qtbot.mouseClick(page.way_bar.buttons["loss"], LEFT)
    assert page.rung.decision.kept

    # the confirmation against the baseline meets the same small validation set: the rule the user chose is the
    # study's (issue 39), so it is judged on the loss too, without asking again
    compare = start_page_trial(qtbot, window, 5)
    qtbot.waitUntil(lambda: compare.confirmation is not None and compare.confirmation.decision is not None,
                    timeout=60_000)
    assert compare.confirmation.decision.accuracy.metric == "val_loss", compare.confirmation.decision.reason
    assert compare.confirmation.decision.kept and compare.status == PASSED
    assert "Accuracy rule: the validation loss" in compare.needs.text()

def test_a_tolerance_the_user_sets_is_the_verdicts_rule(qtbot, tmp_path, monkeypatch):
    window, page = _inconclusive_rung(qtbot, tmp_path)
    asked = []
    monkeypatch.setattr(page, "ask_tolerance", lambda suggested, forward=None: asked.append(suggested) or 10.0)
    qtbot.mouseClick(page.way_bar.buttons["tolerance"], LEFT)
    assert asked and asked[0] > 0.5  # it suggests the tolerance this interval passes at
    decision = page.rung.decision
    assert decision.accuracy.verdict == "within tolerance" and decision.kept and decision.rule.accuracy_pp == 10.0
    assert "a tolerance the user set" in decision.reason
    entry = _recorded(window, page.rung.name)
    assert entry["way_forward"] == "tolerance" and entry["rule"]["accuracy_pp"] == 10.0



def test_the_ways_forward_name_the_pages_buttons_and_boxes_never_command_line_flags(qtbot, tmp_path):
    """Issue 42: the card said `--accuracy-tolerance 2.2`, `--fix-head (ab/tune settings: fix_head=on)`,
    `--input-fixes` and `--lr-scale`, with no such control on the page."""
    from tfturbo_gui.labels import in_gui_words

    window, page = _inconclusive_rung(qtbot, tmp_path)
    reason = page.decision_card.reason.text()
    assert "What would decide the accuracy" in reason and " --" not in reason and "“Set a tolerance…” button" in reason
    assert in_gui_words("this interval passes at --accuracy-tolerance 2.2 (recorded)") == \
        "this interval passes at 2.2 pp (the “Set a tolerance…” button) (recorded)"
    assert in_gui_words("rerun with --fix-head (ab/tune settings: fix_head=on)") == \
        "rerun with the “float32 output layer” box"
    assert in_gui_words("try --input-fixes; or lower it (--lr-scale 0.1)") == \
        "try the “automatic tf.data fixes” box; or lower it (the learning rate on the Batch size page)"


def test_every_way_forward_the_core_offers_has_a_button_that_names_no_flag(qtbot):
    """Issue 42 item 6: "Train more seeds" was offered as `tfturbo ab --b seed=N` with no control on the page. Every
    way `WayForward.lines` can list is a button of the way bar; a new way without one fails here."""
    from tfturbo.trials.verdict import AccuracyVerdict
    from tfturbo.trials.way_forward import WAYS, WayForward, can_use_more_examples
    from tfturbo_gui.cards import WayForwardBar
    from tfturbo_gui.labels import in_gui_words

    loss = AccuracyVerdict("val_loss", -0.01, (-0.02, 0.0), "within tolerance", 400)
    for seeds in (False, True):  # "seeds" and "examples" exclude each other (more examples cannot narrow it)
        forward = WayForward(loss, 2.2, 2309, None, "loss", 2.1, (), seeds)
        assert len(forward.lines()) == 3
        bar = WayForwardBar()
        qtbot.addWidget(bar)
        bar.set_options(forward, more_examples=can_use_more_examples(forward, True))
        for line in forward.lines():
            assert " --" not in in_gui_words(line) and "tfturbo " not in in_gui_words(line), in_gui_words(line)
        shown = {w for w, b in bar.buttons.items() if not b.isHidden()}
        assert shown == {"loss", "tolerance", "seeds" if seeds else "examples"}
    assert set(WAYS) <= set(WayForwardBar.WORDS)
    # a way the page cannot take here is not named: "more examples" where the trial was measured against a later
    # configuration (its words named a "Use 2,309 validation examples" button that was not on the page)
    forward = WayForward(loss, 2.2, 2309, None, "examples", 2.1)
    bar.set_options(forward, more_examples=False)
    said = "\n".join(forward.lines(bar.offered()))
    assert "validation examples" not in in_gui_words(said) and bar.offered() == {"loss", "tolerance"}
    bar = WayForwardBar()
    qtbot.addWidget(bar)
    for way in WAYS:
        assert way in bar.buttons and bar.buttons[way].text(), way


def test_train_more_seeds_trains_both_configurations_again_and_judges_the_trial_on_every_training(
        qtbot, tmp_path, monkeypatch):
    """The button does what its line says: B and the baseline's configuration each trained from 2 more seeds
    (NN-slug.b0, .b-1 and the reference's after its own seed runs), the trial judged again on all of them, the
    choice recorded as the rung's way forward."""
    from dataclasses import replace

    window, page = _inconclusive_rung(qtbot, tmp_path)
    session = window.session
    real = session.way_forward
    monkeypatch.setattr(session, "way_forward", lambda rung: (replace(w, seeds=True, recommended="seeds")
                                                              if (w := real(rung)) is not None else None))
    page.show_ways_forward(page.rung)
    button = page.way_bar.buttons["seeds"]
    assert not button.isHidden() and button.text() == "Train both from 2 more seeds"
    name = page.rung.name
    before = set(page.rung.replicates)
    trained_from = {}
    qtbot.mouseClick(button, LEFT)
    qtbot.waitUntil(lambda: not page.run_panel.is_running() and page.rung.decision is not None
                    and page.rung.decision.way_forward == "seeds", timeout=120_000)
    added = [n for n in page.rung.replicates if n not in before]
    assert sorted(n for n in added if ".b" in n) == [f"{name}.b-1", f"{name}.b0"], added
    assert len([n for n in added if ".a" in n]) == 2, added
    for n in added:
        trained_from[n] = load_run(session.study.path / "runs" / n).summary.settings.seed
    assert trained_from[f"{name}.b0"] != trained_from[f"{name}.b-1"]
    entry = _recorded(window, name)
    assert entry["way_forward"] == "seeds" and set(added) <= set(entry["replicates"])
    assert page.rung.decision.design_record.b_seeds == (trained_from[f"{name}.b0"], trained_from[f"{name}.b-1"])

    # reopened (File → Recent studies), the rung comes back with the same verdict, its seeds' trainings replayed
    # from their runs: none trained again
    from tfturbo.tune.study import Study

    path = session.study.path
    runs = {p.name: (p / "summary.json").stat().st_mtime for p in (path / "runs").iterdir()}
    verdict = page.rung.decision.to_dict()
    window.close()
    again = make_window(qtbot, tmp_path / "again")
    again.open_study(path)
    reopened = next(r for r in again.session.study.rungs if r.name == name)
    assert reopened.decision.to_dict() == verdict == next(r for r in Study.load(path).rungs
                                                          if r.name == name).decision.to_dict()
    assert {p.name: (p / "summary.json").stat().st_mtime for p in (path / "runs").iterdir()} == runs
