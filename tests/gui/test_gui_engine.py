"""The wizard and `tfturbo tune` drive one study engine: the same recorded runs give the same study.yaml."""

from __future__ import annotations

import re

from tests.gui.gui_helpers import fake_launcher, go_next, make_window
from PySide6.QtCore import Qt

from tfturbo import backend_client
from tfturbo.tune.ladder import Ladder, TuneOptions
from tfturbo.tune.study import Study

LEFT = Qt.MouseButton.LeftButton
TIMES = re.compile(r"^(\s*)(created|run_seconds|wall_s): .*$", re.MULTILINE)


def without_times(text: str) -> str:
    return TIMES.sub(r"\1\2: <time>", text)


def wizard_study(qtbot, tmp_path, workload: str) -> str:
    """Every page's main action in the checklist's order, as a user accepting each proposal would click."""
    window = make_window(qtbot, tmp_path, workload=workload)
    go_next(qtbot, window, 1)
    baseline = window.pages[1]
    qtbot.mouseClick(baseline.measure_button, LEFT)
    qtbot.waitUntil(lambda: window.session.baseline is not None and not baseline.run_panel.is_running(),
                    timeout=60_000)
    for index in range(2, 6):  # mixed precision, XLA (and its follow-ups), batch size (the search), confirmation
        window.goto(index)
        page = window.pages[index]
        while True:
            qtbot.waitUntil(lambda: not page.run_panel.is_running() and (
                not hasattr(page, "audit_panel") or not page.audit_panel.is_running()), timeout=60_000)
            more = {3: lambda: page.rung is None or page.follow_up() is not None or page.spe_button.isVisible(),
                    4: lambda: page.rung is None or bool([c for c in window.session.pending("larger_batch")
                                                          if c.skipped_reason is None]),
                    5: lambda: page.confirmation is None and page.candidate() is not None}.get(
                index, lambda: page.rung is None)
            if not more():
                break
            button = page.spe_button if index == 3 and page.rung is not None and page.follow_up() is None \
                else page.run_button
            if not button.isEnabled():
                break
            before = len(window.session.study.rungs)
            qtbot.mouseClick(button, LEFT)
            qtbot.waitUntil(lambda: len(window.session.study.rungs) > before and not page.run_panel.is_running(),
                            timeout=60_000)
    window.goto(6)  # Record & report: the recommendation, and the check of its patch (as tune's last step)
    qtbot.waitUntil(lambda: not window.pages[6].check.is_running(), timeout=60_000)
    return (tmp_path / "study" / "study.yaml").read_text()


def test_the_wizard_and_tune_write_the_same_study_from_the_same_runs(qtbot, tmp_path, monkeypatch):
    workload = "builtin:fp16-softmax-head"  # a 16-bit head (an automatic fix), XLA faster, a larger batch kept
    wizard = wizard_study(qtbot, tmp_path / "wizard", workload)
    monkeypatch.setattr(backend_client, "backend_command", fake_launcher())  # the same scripted backend
    options = Study.load(tmp_path / "wizard" / "study").options  # the wizard's own (steps, replicates, ...)
    tune = Ladder(TuneOptions.from_dict(workload, tmp_path / "tune", options)).run()
    text = (tune.path / "study.yaml").read_text()
    # apart from times and each study's own folder (the runs' XLA cache is under it)
    assert without_times(wizard).replace(str(tmp_path / "wizard" / "study"), "STUDY") == \
        without_times(text).replace(str(tune.path), "STUDY")
    # the larger batch is part of the recommendation, and the confirmation measured it against the baseline
    ladder = tune.document()["ladder"]
    assert tune.recommended.batch_size == 128
    assert ladder[-1]["rung"] == "confirmation" and ladder[-1]["compared_with"] == "01-baseline"
    assert ladder[-1]["settings"]["batch_size"] == 128 and ladder[-1]["kept"]


def test_open_study_continues_an_unfinished_study_at_its_next_stage(qtbot, tmp_path):
    from tfturbo.runfiles import SUMMARY
    from tfturbo_gui.step_status import PASSED

    window = make_window(qtbot, tmp_path, workload="builtin:fp16-softmax-head")
    go_next(qtbot, window, 1)
    qtbot.mouseClick(window.pages[1].measure_button, LEFT)
    qtbot.waitUntil(lambda: window.session.baseline is not None and not window.pages[1].run_panel.is_running(),
                    timeout=60_000)
    window.goto(2)
    precision = window.pages[2]
    qtbot.waitUntil(lambda: precision.run_button.isEnabled(), timeout=60_000)
    qtbot.mouseClick(precision.run_button, LEFT)
    qtbot.waitUntil(lambda: precision.rung is not None and precision.rung.decision is not None, timeout=60_000)
    path = window.session.study.path
    runs = {p.name: (p / SUMMARY).stat().st_mtime_ns for p in (path / "runs").iterdir()}
    window.close()  # the study says "interrupted"

    again = make_window(qtbot, tmp_path / "again", workload="builtin:mlp")
    again.open_study(path)  # File → Open study / Recent studies
    session = again.session
    assert session.study.path == path and again.current() == 3  # XLA: the stage after mixed precision
    assert [again.steps.status_text(i) for i in range(3)] == [PASSED] * 3
    assert session.best.name == "02-mixed_float16" and session.best.kept
    xla = again.pages[3]
    qtbot.waitUntil(lambda: xla.run_button.isEnabled(), timeout=60_000)
    qtbot.mouseClick(xla.run_button, LEFT)
    qtbot.waitUntil(lambda: xla.rung is not None and xla.rung.decision is not None, timeout=60_000)
    assert xla.rung.name == "03-xla" and xla.rung.compared_with == "02-mixed_float16"
    assert {name: (path / "runs" / name / SUMMARY).stat().st_mtime_ns for name in runs} == runs  # none re-measured
