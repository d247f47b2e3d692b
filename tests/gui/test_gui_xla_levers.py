"""The XLA page's other levers, from the tuning policy as `tfturbo tune` measures them (issue 14 item 6):
TensorFlow's auto-clustering once jit_compile=True is refused, and steps_per_execution when steps are short.

The fake backend's step time follows both settings (fake_backend.step_time), so every verdict is known.
"""

from __future__ import annotations

import json

import yaml
from tests.gui.gui_helpers import xla_page
from PySide6.QtCore import Qt

from tfturbo_gui.pages.xla import AUTOCLUSTERING_TEXT, NOT_RUN_TITLE
from tfturbo_gui.step_status import NOT_KEPT, NOT_RUN, PASSED

LEFT = Qt.MouseButton.LeftButton


def judge(qtbot, page, button) -> None:
    """Click one of the page's lever buttons and wait for its trial's verdict."""
    before = page.rung
    qtbot.mouseClick(button, LEFT)
    qtbot.waitUntil(lambda: page.rung is not before and page.rung.decision is not None, timeout=30_000)


def ladder(window) -> list[tuple[str, str, bool]]:
    study = window.session.finish_study()
    entries = yaml.safe_load((study.path / "study.yaml").read_text())["ladder"]
    return [(e["name"], e["rung"], e["kept"]) for e in entries]


def test_a_refused_jit_compile_offers_auto_clustering_and_measures_it(qtbot, tmp_path):
    window, xla = xla_page(qtbot, tmp_path, "builtin:no-jit")
    assert xla.run_button.text() == "Run with XLA" and not xla.follow_up_note.isVisible()
    assert xla.spe_note.text().startswith("Not offered — a step takes 10") and not xla.spe_button.isVisible()
    judge(qtbot, xla, xla.run_button)
    assert xla.status == NOT_KEPT and xla.decision_card.badge.text() != "KEPT"  # an answer, not a problem
    assert xla.run_button.text() == AUTOCLUSTERING_TEXT
    assert xla.follow_up_note.text().startswith("Why: jit_compile=True was refused (XLA_NOT_ACTIVE)")
    judge(qtbot, xla, xla.run_button)
    assert xla.rung.name == "03-xla-autoclustering" and xla.rung.settings.xla_autoclustering
    assert xla.status == PASSED and xla.decision_card.badge.text() == "KEPT"
    assert xla.run_button.text() == "Run with XLA" and not xla.follow_up_note.isVisible()  # the policy is done
    assert ladder(window) == [("01-baseline", "baseline", True), ("02-xla", "xla", False),
                              ("03-xla-autoclustering", "xla", True),
                              ("04-steps_per_execution", "steps_per_execution", False)]
    skipped = yaml.safe_load((window.session.study.path / "study.yaml").read_text())["ladder"][3]
    assert skipped["skipped"] and skipped["reason"].startswith("skipped: a step takes")  # as tune records it
    assert window.session.study.recommended.xla_autoclustering
    window.session.finish_study()  # the report is exported again: the skipped lever is recorded once
    assert len(ladder(window)) == 4


def test_xla_the_audit_says_cannot_activate_is_not_run_and_auto_clustering_is_offered(qtbot, tmp_path):
    """Issue 42: the XLA trial ran 1 min 37 s for a model whose audit had just said XLA cannot activate
    (RandomRotation). The page's card says why and what would enable it, offers auto-clustering instead, and no
    run with jit_compile=True is started; study.yaml records the step as not run, with its reason."""
    window, xla = xla_page(qtbot, tmp_path, "builtin:rotation")
    assert xla.not_run.isVisible() and xla.not_run.headline.text() == NOT_RUN_TITLE
    said = xla.not_run.reason.text()
    assert "RandomRotation" in said and "tf.data pipeline" in said and "auto-clustering" in said
    assert "Offered instead: TensorFlow's auto-clustering" in xla.not_run.offered.text()
    assert xla.run_button.text() == AUTOCLUSTERING_TEXT and xla.run_button.isEnabled()  # no "Run with XLA"
    assert not xla.follow_up_note.isVisible()  # the card says it once
    judge(qtbot, xla, xla.run_button)
    assert xla.rung.settings.xla_autoclustering and xla.status == PASSED
    assert "measured instead" in xla.not_run.offered.text() and not xla.run_button.isVisible()
    entries = yaml.safe_load((window.session.study.path / "study.yaml").read_text())["ladder"]
    assert [(e["name"], e["skipped"]) for e in entries[:3]] == [("01-baseline", False), ("02-xla", True),
                                                                 ("03-xla-autoclustering", False)]
    assert "XLA cannot take effect" in entries[1]["reason"] and entries[1]["run"] is None
    runs = window.session.study.path / "runs"
    measured = [json.loads((d / "summary.json").read_text())["settings"] for d in runs.iterdir()
                if (d / "summary.json").is_file()]
    assert measured and not any(s.get("jit_compile") for s in measured)  # no run of jit_compile=True


def test_short_steps_offer_steps_per_execution_measured_as_a_trial(qtbot, tmp_path):
    window, xla = xla_page(qtbot, tmp_path, "builtin:short-steps")
    assert xla.spe_button.isVisible() and xla.spe_button.text() == "Measure 4 steps per call"
    assert xla.spe_note.text().startswith("A step takes 2.")
    assert xla.findings.offered_fixes() == {"drop_remainder": True}  # the shape audit of jit_compile=True
    judge(qtbot, xla, xla.spe_button)
    assert xla.rung.name == "02-spe4" and xla.rung.settings.steps_per_execution == 4
    assert not xla.rung.settings.drop_remainder  # the policy's candidate, as tune measures it: the box is XLA's
    assert xla.status == PASSED and xla.decision_card.badge.text() == "KEPT"
    # what the page builds on follows the verdict (it read "float32, batch 64" after steps per call was kept)
    assert xla.extends.text() == f"Builds on the best configuration kept so far: {xla.rung.settings.label()}."
    assert xla.spe_note.text() == "Not offered — already 4 steps per call." and not xla.spe_button.isVisible()
    assert ladder(window) == [("01-baseline", "baseline", True), ("02-spe4", "steps_per_execution", True)]
    assert window.session.study.recommended.steps_per_execution == 4


def test_the_step_list_shows_xla_refused_before_training_as_decided_not_run(qtbot, tmp_path):
    """Issue 42 walk (h42w): the step list showed the XLA step the lever refused before training (XLA_NOT_ACTIVE)
    as "not started", on the page and in a reopened study whose study.yaml records it as not run."""
    from tfturbo_gui.main_window import MainWindow

    window, xla = xla_page(qtbot, tmp_path, "builtin:rotation")
    assert xla.not_run.isVisible()
    assert xla.status == NOT_RUN and window.steps.status_text(3) == NOT_RUN
    window.goto(4)  # on to the batch size: the engine records the XLA step as not run
    study = window.session.finish_study()
    entries = yaml.safe_load((study.path / "study.yaml").read_text())["ladder"]
    assert any(e["rung"] == "xla" and e["skipped"] for e in entries)
    reopened = MainWindow(launcher=window.launcher)
    qtbot.addWidget(reopened)
    reopened.open_study(study.path)
    assert reopened.steps.status_text(3) == NOT_RUN


def test_a_study_reopened_during_auto_clustering_after_xla_was_refused_continues_on_the_xla_page(qtbot, tmp_path):
    """Issue 42 walk (h42w): Ctrl+Q during the auto-clustering trial of a model whose XLA the study refused
    (RandomRotation), then File → Recent studies: the wizard opened on Profile & baseline, not at the XLA step."""
    from tfturbo_gui.main_window import MainWindow

    window, xla = xla_page(qtbot, tmp_path, "builtin:rotation")
    qtbot.mouseClick(xla.run_button, LEFT)  # auto-clustering's trial starts: the XLA step is recorded as not run
    qtbot.waitUntil(lambda: xla.rung is not None, timeout=20_000)
    path = window.session.study.path
    window.stop_children()
    window.session.interrupt()
    entries = yaml.safe_load((path / "study.yaml").read_text())["ladder"]
    assert [(e["name"], e["skipped"]) for e in entries[:2]] == [("01-baseline", False), ("02-xla", True)]
    again = MainWindow(launcher=window.launcher)
    qtbot.addWidget(again)
    again.open_study(path)  # File → Recent studies
    assert again.current() == 3 and again.steps.status_text(3) == NOT_RUN


def test_a_decided_pages_still_to_come_follows_the_study(qtbot, tmp_path):
    """Issue 42 walk (h42w): back on the XLA page after the batch size was measured, its note still said
    "Still to come: Batch size about 3 s · Re-measure & compare about 3 s"."""
    window, xla = xla_page(qtbot, tmp_path, "builtin:short-steps")
    judge(qtbot, xla, xla.spe_button)
    assert "Batch size" in xla.plan_note.text()
    window.goto(4)
    batch = window.pages[4]
    qtbot.waitUntil(lambda: batch.run_button.isEnabled(), timeout=20_000)
    judge(qtbot, batch, batch.run_button)
    window.goto(3)
    assert "Batch size" not in xla.plan_note.text()


def codes(page) -> set[str]:
    return {str(f.get("code")) for f in page.findings.findings}


def test_each_trials_verdict_stays_on_the_page_and_a_reopened_finished_study_keeps_them_and_its_findings(
        qtbot, tmp_path):
    """h42a walk: measuring steps per call replaced the XLA verdict card on their shared page; a finished study's
    XLA page still offered to run another configuration; a reopened study dropped the page's findings once its
    audit ran again."""
    from tests.gui.gui_helpers import make_window
    from tfturbo_gui.pages.base import FINISHED_NOTE
    from tfturbo_gui.pages.baseline import NOTHING_FOUND

    window, xla = xla_page(qtbot, tmp_path, "builtin:short-steps")
    judge(qtbot, xla, xla.run_button)
    first = xla.rung
    judge(qtbot, xla, xla.spe_button)
    cards = [card for card in xla.earlier_cards if card.isVisibleTo(xla)]
    assert [c.headline.text().split(":")[0] for c in cards] == [first.settings.label()]  # the XLA verdict stays
    assert xla.decision_card.isVisibleTo(xla) and xla.decision_card.headline.text().startswith(
        xla.rung.settings.label())
    live = codes(xla)
    window.goto(len(window.pages) - 1)  # Record: the study is finished
    path = window.session.study.path
    window.close()

    again = make_window(qtbot, tmp_path / "again")
    again.open_study(path)
    page = again.pages[3]
    again.goto(3)
    qtbot.waitUntil(lambda: not page.audit_panel.is_running() and page._audited is not None, timeout=20_000)
    qtbot.wait(50)
    shown = [c.headline.text().split(":")[0] for c in [*page.earlier_cards, page.decision_card] if c.isVisibleTo(page)]
    assert shown == [first.settings.label(), page.rung.settings.label()]  # both decisions, as measured
    # decided: no button measures anything (it offered "Run mixed_float16 + XLA"), the page says why
    assert not page.run_button.isVisibleTo(page) and not page.spe_button.isVisibleTo(page)
    assert not page.continue_button.isVisibleTo(page) and page.busy_note.text() == FINISHED_NOTE
    assert "Still to come" not in page.plan_note.text()  # it listed the stages the study went without, "about 0 s"
    baseline = again.pages[1]
    assert not baseline.measure_button.isVisibleTo(baseline)
    # the probe's card and the page's findings from the study's files, as the live page showed them
    assert baseline.verdict_card.isVisibleTo(baseline) and baseline.tensorboard_button.isEnabled()
    assert baseline.findings.empty.text() == NOTHING_FOUND
    compare = again.pages[5]
    again.goto(5)
    assert not compare.run_button.isVisibleTo(compare) and compare.next_hint() == ""  # it asked for a confirmation
    assert compare.needs.text().startswith("The study finished without a confirmation run")
    # the fix the trial's own run made reads as made, not as a box for the next run
    again.goto(3)
    partial = next(card for card in page.findings.cards if card.finding.get("code") == "PARTIAL_LAST_BATCH")
    assert partial.badge.text() == "FIXED IN RUN"
    assert codes(page) == live, (codes(page), live)  # the audit's and the trial's findings, after the audit ran
