"""Issue 12, "the wizard a new user trusts": one test (at least) per point the issue lists."""

import sys
from pathlib import Path

import pytest
import yaml
from tests.gui.gui_helpers import fake_launcher, go_next, make_window
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from tfturbo.cli_args import run_argv
from tfturbo.settings import RunSettings
from tfturbo_gui.findings_panel import FindingsPanel
from tfturbo_gui.run_data import RunData
from tfturbo_gui.run_gate import GATE, TrainingBusy
from tfturbo_gui.run_panel import eta_text, outcome_text
from tfturbo_gui.run_process import BackendProcess
from tfturbo_gui.step_status import ATTENTION, PASSED

LEFT = Qt.MouseButton.LeftButton
FAKE = Path(__file__).with_name("fake_backend.py")


def by_policy(slow_policy: str):
    """The fake backend, slow (until stopped) for runs of `slow_policy`, quick for everything else."""
    def launch(command, argv):
        scenario = "slow" if command == "run" and slow_policy in argv else "ok"
        return [sys.executable, str(FAKE), "--scenario", scenario, "--delay", "0.05", command, *argv]
    return launch


def baseline_done(qtbot, window):
    go_next(qtbot, window, 1)
    page = window.pages[1]
    qtbot.mouseClick(page.measure_button, LEFT)
    qtbot.waitUntil(lambda: page.status == PASSED, timeout=20_000)
    return page


# 1. the default study folder ----------------------------------------------------------------------------------

def test_the_default_study_folder_is_in_the_home_never_the_checkout_and_moves_until_the_first_run(qtbot, tmp_path):
    from tfturbo_gui.main_window import MainWindow

    window = MainWindow("builtin:mlp", launcher=fake_launcher(), steps=60)
    qtbot.addWidget(window)
    page = window.pages[0]
    default = Path(page.study_edit.text())
    assert default.parent == Path.home() / "tfturbo-studies" and default.name.startswith("mlp-")
    assert Path.cwd() not in default.parents
    page.study_edit.setText(str(tmp_path / "first"))
    go_next(qtbot, window, 1)
    assert (tmp_path / "first" / "study.yaml").exists()
    window.goto(0)
    assert page.study_edit.isEnabled() and not page.workload_edit.isEnabled()  # changeable until the first run
    page.study_edit.setText(str(tmp_path / "second"))
    page.study_edit.editingFinished.emit()
    assert window.session.study.path == tmp_path / "second" and (tmp_path / "second" / "study.yaml").exists()
    assert not (tmp_path / "first").exists() and "second" in page.check_hint.text()
    baseline_done(qtbot, window)
    window.goto(0)
    assert not page.study_edit.isEnabled()  # a run went into it
    study = yaml.safe_load((tmp_path / "second" / "study.yaml").read_text())
    assert study["ladder"][0]["run"] == "runs/01-baseline" and (tmp_path / "second" / "runs" / "01-baseline").is_dir()


def test_new_study_starts_over_and_recent_studies_lists_the_old_one(qtbot, tmp_path):
    window = make_window(qtbot, tmp_path)
    baseline_done(qtbot, window)
    old = window.session
    window.new_action.trigger()
    assert window.session is not old and window.current() == 0 and window.session.study is None
    assert window.pages[0].workload_edit.isEnabled() and window.pages[0].study_edit.text() != str(tmp_path / "study")
    assert yaml.safe_load((tmp_path / "study" / "study.yaml").read_text())["status"] == "interrupted"
    recent = {a.data(): a.text() for a in window.recent_menu.actions()}
    assert recent[str(tmp_path / "study")] == f"{tmp_path / 'study'} — unfinished (1 measured)"
    page = window.pages[0]
    page._select("/home/me/my_model.py")  # another file opened: no built-in stays highlighted
    assert page.builtins.selectedItems() == [] and page.builtins.currentItem() is None


# 2. one training at a time --------------------------------------------------------------------------------------

def test_a_second_backend_cannot_start_while_one_trains(qtbot, tmp_path):
    first, second = BackendProcess(fake_launcher("slow", 0.05)), BackendProcess(fake_launcher())
    argv = run_argv(RunSettings("builtin:mlp", steps=100_000), str(tmp_path / "a"))
    data = first.start("run", argv, name="baseline")
    qtbot.waitUntil(lambda: len(data.step.view()) > 5, timeout=20_000)
    assert GATE.busy()
    with pytest.raises(TrainingBusy, match="baseline is still running"):
        second.start("run", run_argv(RunSettings("builtin:mlp"), str(tmp_path / "b")), name="xla")
    with pytest.raises(TrainingBusy):
        second.start("probe-input", ["builtin:mlp"])
    assert not second.is_running() and not (tmp_path / "b").exists()
    with qtbot.waitSignal(second.ended, timeout=20_000):
        second.start("audit", ["builtin:mlp"])  # an audit measures nothing: allowed beside a training
    with qtbot.waitSignal(first.ended, timeout=20_000):
        first.stop()
    assert not GATE.busy()


def test_every_run_button_waits_while_any_run_goes(qtbot, tmp_path):
    window = make_window(qtbot, tmp_path, launcher=by_policy("mixed_float16"))
    baseline = baseline_done(qtbot, window)
    go_next(qtbot, window, 2)
    precision = window.pages[2]
    qtbot.waitUntil(lambda: precision.run_button.isEnabled(), timeout=20_000)
    qtbot.mouseClick(precision.run_button, LEFT)
    qtbot.waitUntil(lambda: GATE.busy(), timeout=20_000)
    assert not baseline.measure_button.isEnabled()  # "Measure baseline again" used to start a second backend
    # the trial's runs take turns (its reference first); whichever is running, the note names it
    assert baseline.busy_note.text().startswith("Wait: ") and "one training at a time" in baseline.busy_note.text()
    for page in window.pages[3:6]:
        page.update_controls()
        assert not page.run_button.isEnabled()
    assert not window.new_action.isEnabled()
    QTest.keyClick(window, Qt.Key.Key_Escape)  # Esc stops the page's run
    qtbot.waitUntil(lambda: not GATE.busy(), timeout=20_000)
    assert baseline.measure_button.isEnabled() and window.new_action.isEnabled()


# 3. states that agree -------------------------------------------------------------------------------------------

def test_the_fix_boxes_are_what_the_run_uses_and_a_fixed_finding_stops_standing(qtbot, tmp_path):
    window = make_window(qtbot, tmp_path, workload="builtin:fp16-softmax-head")
    baseline_done(qtbot, window)
    assert window.pages[1].findings.empty.text() != "No findings yet."  # the work is done: not "yet"
    go_next(qtbot, window, 2)
    precision = window.pages[2]
    qtbot.waitUntil(lambda: precision.findings.codes() == ["HEAD_NOT_FLOAT32"], timeout=20_000)
    qtbot.mouseClick(precision.run_button, LEFT)
    assert not precision.findings.cards[0].checkbox.isEnabled()  # fixed while the run uses it
    qtbot.waitUntil(lambda: precision.rung.decision is not None, timeout=90_000)
    assert precision.decision_card.badge.text() == "KEPT"
    card = precision.findings.cards[0]
    assert card.badge.text() == "FIXED IN RUN" and card.property("severity") == "applied"  # no red ERROR beside KEPT
    assert precision.decision_card.facts.values["Automatic fixes"].text() == "float32 output layer"
    assert not precision.audit_panel.isVisible()  # no "Auditing…" beside finished findings
    go_next(qtbot, window, 3)

    xla = window.pages[3]
    qtbot.waitUntil(lambda: xla.findings.codes() == ["HEAD_NOT_FLOAT32"] and xla.run_button.isEnabled(),
                    timeout=20_000)
    xla.findings.cards[0].checkbox.setChecked(False)  # the box says no: the run must not fix the head
    qtbot.mouseClick(xla.run_button, LEFT)
    qtbot.waitUntil(lambda: xla.rung is not None and xla.rung.decision is not None, timeout=90_000)
    run_yaml = yaml.safe_load((window.session.rung_path(xla.rung) / "run.yaml").read_text())
    assert run_yaml["fix_head"] is False and xla.rung.settings.fix_head is False
    assert xla.decision_card.facts.values["Automatic fixes"].text() == "none"


def test_a_tie_is_not_called_slower_and_a_new_run_clears_the_old_verdict(qtbot):
    panel = FindingsPanel()
    qtbot.addWidget(panel)
    tie = {"code": "SLOWER_THAN_BASELINE", "severity": "warning", "message": "not measurably faster",
           "data": {"verdict": "no measurable change", "speedup": 1.15, "speedup_ci95": [0.98, 1.54]}}
    slower = {**tie, "message": "slower", "data": {"verdict": "slower"}}
    panel.set_findings([tie, slower])
    assert [c.code_label.text() for c in panel.cards] == ["NOT_MEASURABLY_FASTER", "SLOWER_THAN_BASELINE"]


def test_steps_eta_and_profiler_texts_agree_with_the_run(qtbot, tmp_path):
    data = RunData("r")
    data.ingest([{"type": "phase", "phase": "warmup", "step": 1},
                 {"type": "steps", "step": [1], "step_ms": [4000.0], "loss": [1.0]},
                 {"type": "progress", "step": 1, "total": 150, "eta_s": 253.0}])
    assert eta_text(data) == ""  # "about 4 min 13 s left" at step 1 of a 13-second run
    data.ingest([{"type": "phase", "phase": "training", "step": 6},
                 {"type": "steps", "step": list(range(2, 146)), "step_ms": [10.0] * 144, "loss": [1.0] * 144},
                 {"type": "progress", "step": 145, "total": 150, "eta_s": 0.05},
                 {"type": "result", "command": "run", "document": {"status": "completed", "steps_completed": 150}},
                 {"type": "done", "status": "completed", "exit_code": 0}])
    assert outcome_text(data)[0] == "Completed — 150 steps recorded"  # as the summary's "Steps 150"

    window = make_window(qtbot, tmp_path, steps=150)
    page = baseline_done(qtbot, window)
    start, stop = page.run_panel.data.profile_windows[0]
    assert f"profiler on steps {int(start)}–{int(stop) - 1}" in page.settings_label.text()
    assert "±0%" not in page.settings_label.text()  # no early stop asked: no interval promised
    regions = [item.getRegion() for _, item in page.plots._decor]
    assert (start - 0.5, stop - 0.5) in regions  # the shaded band is the text's window


# 4. failures explained ------------------------------------------------------------------------------------------

def precision_run_with_the_head_fix(qtbot, tmp_path, workload: str):
    """The wizard on a workload with a 16-bit head, through the baseline to one mixed-precision trial with the
    audit's automatic float32-head fix ticked (the recommended answer); returns the window and the page."""
    window = make_window(qtbot, tmp_path, workload=workload)
    baseline_done(qtbot, window)
    go_next(qtbot, window, 2)
    precision = window.pages[2]
    qtbot.waitUntil(lambda: precision.findings.codes() == ["HEAD_NOT_FLOAT32"] and precision.run_button.isEnabled(),
                    timeout=20_000)
    assert precision.findings.cards[0].checkbox.isChecked()
    qtbot.mouseClick(precision.run_button, LEFT)
    qtbot.waitUntil(lambda: precision.rung.decision is not None and not precision.run_panel.is_running(),
                    timeout=90_000)  # a trial: 4-6 backend processes, slow on a loaded machine
    return window, precision


def test_an_automatic_fix_that_fails_says_to_untick_it_and_one_click_gets_a_result(qtbot, tmp_path):
    window, precision = precision_run_with_the_head_fix(qtbot, tmp_path, "builtin:custom-head")
    box = precision.run_panel.error_box
    assert box.message.text().startswith("tfturbo could not apply the float32 head to this model: TypeError")
    assert "run without the automatic fix" in box.fix.text() and 'dtype="float32"' in box.fix.text()
    assert "backend.log" not in box.fix.text() and not box.details.isVisible() and box.details_button.isVisible()
    assert precision.status == ATTENTION and box.action_button.isVisible()
    failed = precision.rung
    qtbot.mouseClick(box.action_button, LEFT)  # "Run again without the automatic fix"
    qtbot.waitUntil(lambda: precision.rung is not failed and precision.rung.decision is not None, timeout=90_000)
    assert precision.rung.settings.fix_head is False and precision.rung.summary.status == "completed"
    assert not precision.findings.cards[0].checkbox.isChecked() and not box.isVisible()

    browser = window.show_browser()
    browser.open_study(tmp_path / "study")
    top = browser.tree.topLevelItem(0)
    rows = {top.child(i).text(0): top.child(i).text(1) for i in range(top.childCount())}
    assert rows[failed.name] == "failed"  # listed, though it left no run folder, with why
    item = next(top.child(i) for i in range(top.childCount()) if top.child(i).text(0) == failed.name)
    assert item.toolTip(1).startswith("not measured: the run failed — ") and "TypeError: MyHead" in item.toolTip(1)


def test_a_fix_the_backend_could_not_apply_is_never_shown_as_fixed(qtbot, tmp_path):
    """The backend trains without a fix it cannot apply (FIX_NOT_APPLIED); the page said "FIXED IN RUN" and
    "Automatic fixes used: float32 output layer" for a run that had its 16-bit head all along."""
    _window, precision = precision_run_with_the_head_fix(qtbot, tmp_path, "builtin:head-in-call")
    head, skipped = precision.findings.cards[:2]
    assert skipped.finding["code"] == "FIX_NOT_APPLIED" and precision.findings.codes().count("FIX_NOT_APPLIED") == 1
    assert head.badge.text() == "ERROR" and head.property("severity") != "applied"  # the finding still stands
    assert head.applied_note.isVisible() and head.applied_note.text().startswith(
        "tfturbo could not apply this fix, so the last run trained without it: FIX_NOT_APPLIED below says why")
    assert skipped.message.text().startswith("fix not applied: --fix-head: the model still returns float16")
    assert precision.decision_card.facts.values["Automatic fixes"].text() == "float32 output layer: not applied"
    assert not precision.run_panel.error_box.isVisible()  # a completed, usable result: nothing failed


def test_a_crashed_run_is_not_no_measurable_change_in_the_compare_table(qtbot, tmp_path):
    from tfturbo.runfiles import load_run
    from tfturbo_gui.compare_view import CompareView
    from tfturbo_gui.run_panel import RunPanel

    folders = []
    for name, scenario in (("01-baseline", "ok"), ("02-crash", "crash")):
        panel = RunPanel(fake_launcher(scenario))
        qtbot.addWidget(panel)
        with qtbot.waitSignal(panel.ended, timeout=20_000):
            panel.start("run", run_argv(RunSettings("builtin:mlp", steps=60), str(tmp_path / name)))
        folders.append(tmp_path / name)
    view = CompareView()
    qtbot.addWidget(view)
    view.set_records([load_run(f) for f in folders])
    assert view.cell(1, "verdict") == "not measured: the run crashed"


# 8. report and TensorBoard when nothing opens them -------------------------------------------------------------

def test_the_report_path_and_tensorboard_address_are_shown_to_copy_when_nothing_opens(qtbot, tmp_path):
    from tfturbo_gui.tensorboard_launcher import TensorBoardLauncher

    window = make_window(qtbot, tmp_path)
    record = window.pages[6]
    record.report_path = str(tmp_path / "report.pdf")
    record.open_url = lambda url: False  # no PDF viewer registered
    record.open_report()
    assert record.report_where.isVisibleTo(record) and record.report_where.text() == record.report_path
    script = "import sys, time; print('TensorBoard at http://localhost:%s/' % sys.argv[1], flush=True); time.sleep(30)"
    launcher = TensorBoardLauncher(command=lambda logdir, port: [sys.executable, "-c", script, str(port)],
                                   open_url=lambda url: False)
    with qtbot.waitSignal(launcher.not_opened, timeout=10_000) as signal:
        launcher.open(str(tmp_path))
    assert signal.args[0].startswith("http://localhost:")
    launcher.stop()


# 10. desktop integration ----------------------------------------------------------------------------------------

def test_resources_icon_desktop_entry_theme_and_shortcuts(qtbot, tmp_path):
    import resources
    from tfturbo_gui import theme

    for size in resources.ICON_SIZES:
        assert resources.icon_png(size).stat().st_size > 100
    assert not theme.app_icon().isNull()
    entry = resources.read_text(resources.DESKTOP_ENTRY)
    assert "Exec=tfturbo gui %f" in entry and "Icon=tfturbo" in entry and "Type=Application" in entry
    light, dark = theme.style_sheet(False), theme.style_sheet(True)
    assert "#f8fafc" in light and "#f8fafc" not in dark and "#171b24" in dark  # the dark variant swaps colours
    for font in [*resources.PDF_FONTS.values(), resources.MONO_FONT, *resources.FALLBACK_FONTS.values()]:
        assert resources.path(font).stat().st_size > 100_000
    for licence in ("DejaVu", "DroidSansFallback", "Nanum"):  # each shipped font with its licence
        assert resources.path(f"fonts/LICENSE-{licence}.txt").stat().st_size > 1000
    import tomllib
    data = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert {"*.ttf", "*.txt"} <= set(data["package-data"]["resources.fonts"])  # installed with the app

    window = make_window(qtbot, tmp_path)
    go_next(qtbot, window, 1)
    QTest.keyClick(window, Qt.Key.Key_Left, Qt.KeyboardModifier.AltModifier)
    assert window.current() == 0
    QTest.keyClick(window, Qt.Key.Key_Right, Qt.KeyboardModifier.AltModifier)
    assert window.current() == 1
    QTest.keyClick(window, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)  # Ctrl+Enter runs the step
    qtbot.waitUntil(lambda: window.pages[1].status == PASSED, timeout=20_000)


def test_another_tfturbo_training_on_this_machine_blocks_a_run_here(qtbot, tmp_path):
    """The per-device rule: a second app (here: the lock file another process would hold) blocks training."""
    from PySide6.QtCore import QLockFile

    window = make_window(qtbot, tmp_path)
    go_next(qtbot, window, 1)
    page = window.pages[1]
    other = QLockFile(GATE._lock_file().fileName())  # a second lock object: what another window holds
    assert other.tryLock(0)
    try:
        page.start()
        assert page.stage == "" and page.run_panel.data is None  # nothing started
        assert page.busy_note.text().startswith("Another tfturbo window on this machine is training")
        with pytest.raises(TrainingBusy, match="another tfturbo window"):
            BackendProcess(fake_launcher()).start("run", run_argv(RunSettings("builtin:mlp"), str(tmp_path / "r")))
    finally:
        other.unlock()
    qtbot.mouseClick(page.measure_button, LEFT)
    qtbot.waitUntil(lambda: page.status == PASSED, timeout=20_000)


def facts_of(doc: dict) -> list[tuple[str, str]]:
    """The baseline page's probe card for a probe-input document as the backend writes it."""
    from tfturbo.input_probe import InputProbe
    from tfturbo_gui.pages.baseline import probe_facts

    return probe_facts(InputProbe.from_dict(doc))


def test_the_probe_card_agrees_with_its_moderately_input_bound_warning():
    """It said "compute-bound — the device is the limit" beside a WARNING that 13% of each step waits for data,
    and "steps/s" for the input pipeline the finding measures in batches/s."""
    facts = dict(facts_of({"verdict": "compute_bound", "band": "moderate", "input_fraction": 0.13,
                              "data_steps_per_s": 4272.1, "compute_steps_per_s": 691.9, "train_steps_per_s": 604.2}))
    assert facts["Verdict"] == "compute-bound, moderately input-bound (see the warning)"
    assert facts["Input pipeline alone"] == "4272.1 batches/s" and facts["Time waiting for input"] == "13%"
    low = dict(facts_of({"verdict": "compute_bound", "band": "low", "input_fraction": 0.02}))
    assert low["Verdict"] == "compute-bound — the device is the limit"


def test_compute_alone_slower_than_training_reads_as_noise_on_the_probe_card():
    """Issue 42: "0% waiting for input" beside "compute alone 523.5 steps/s", slower than training (750.2), with
    no word why. The card says it is the probes' noise, on both rows, and raises nothing."""
    facts = dict(facts_of({"verdict": "compute_bound", "band": "low", "input_fraction": 0.0,
                              "data_steps_per_s": 4100.0, "compute_steps_per_s": 523.5, "train_steps_per_s": 750.2,
                              "findings": []}))
    assert facts["Compute alone"] == "523.5 steps/s (slower than training: noise of a few-second probe, not a finding)"
    assert facts["Time waiting for input"].startswith("0%: none seen — compute alone ran slower than training")
    steady = dict(facts_of({"verdict": "compute_bound", "band": "low", "input_fraction": 0.02,
                               "compute_steps_per_s": 800.0, "train_steps_per_s": 784.0}))
    assert steady["Compute alone"] == "800.0 steps/s" and steady["Time waiting for input"] == "2%"


def test_a_gap_the_input_cannot_explain_is_not_called_waiting_for_input():
    """The baseline card read "compute-bound" beside "Time waiting for input 41%" (screenshots, issue 22): the
    input alone took a fraction of the gap, so the probe called it host noise; the card must say so too."""
    doc = {"verdict": "compute_bound", "band": "low", "input_fraction": 0.41, "data_steps_per_s": 6560.1,
           "step_ms": {"data": 0.152, "compute": 1.121, "train": 1.887},
           "thresholds": {"high": 0.2, "moderate": 0.05, "data_explains_gap": 0.5}}
    facts = dict(facts_of(doc))
    assert "Time waiting for input" not in facts
    assert facts["Slower than compute alone"].startswith("41% of a step (0.77 ms): not the input")
    explained = dict(facts_of({**doc, "verdict": "input_bound", "band": "high",
                                  "step_ms": {"data": 0.9, "compute": 1.121, "train": 1.887}}))
    assert explained["Time waiting for input"] == "41%"


def test_the_probes_training_rate_says_how_it_relates_to_the_baseline_speed():
    """Issue-42 walk: the probe's "Both (training) 471.0 steps/s" sat above the baseline's "Steady speed 420.8
    steps/s [373.4, 445.7]" on page 2 with no word. With the baseline's summary (the walk's own) the card says why
    they differ; a rate inside the baseline's interval is said to be the same speed."""
    import json
    from pathlib import Path

    from tfturbo.input_probe import InputProbe
    from tfturbo.run_summary import RunSummary
    from tfturbo_gui.cards import run_facts
    from tfturbo_gui.pages.baseline import probe_facts

    walk = {"verdict": "compute_bound", "band": "low", "input_fraction": 0.0286, "data_steps_per_s": 6413.093,
            "compute_steps_per_s": 484.808, "train_steps_per_s": 470.954,
            "step_ms": {"data": 0.156, "compute": 2.063, "train": 2.123}, "input_explains_gap": True}
    summary = RunSummary.from_dict(json.loads(
        (Path(__file__).parent / "data" / "sentiment_walk_baseline_summary.json").read_text()))
    assert dict(run_facts(summary))["Steady speed"] == "420.8 steps/s [373.4, 445.7]"
    training = dict(probe_facts(InputProbe.from_dict(walk), summary))["Both (training)"]
    assert training.startswith("471.0 steps/s (12% above the baseline run's steady speed (420.8 steps/s)")
    assert "without the script's callbacks or validation" in training and "median step, 2.14 ms, is 468.2 steps/s" in training
    inside = dict(probe_facts(InputProbe.from_dict({**walk, "train_steps_per_s": 440.0}), summary))
    assert inside["Both (training)"] == ("440.0 steps/s (within the baseline run's interval [373.4, 445.7]: the "
                                         "same speed, the rest is noise)")
    assert dict(probe_facts(InputProbe.from_dict(walk)))["Both (training)"] == "471.0 steps/s"  # before the run
