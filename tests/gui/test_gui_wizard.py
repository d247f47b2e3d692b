"""The wizard page by page on the fake backend: texts, enabled states, statuses, and the study it writes."""

import os
import subprocess
import sys

import yaml
from tests.gui.gui_helpers import FAKE_BACKEND, children, fake_launcher, go_next, make_window
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from tfturbo import compare
from tfturbo.headline import SPEED_UP, config_words
from tfturbo.runfiles import load_run, load_study_runs
from tfturbo_gui import live_plots
from tfturbo_gui.step_status import ATTENTION, NOT_STARTED, PASSED

LEFT = Qt.MouseButton.LeftButton


def test_workload_page_lists_builtins_and_shows_the_hardware_recommendation(qtbot, tmp_path):
    window = make_window(qtbot, tmp_path)
    page = window.pages[0]
    specs = [page.builtins.item(i).data(Qt.ItemDataRole.UserRole) for i in range(page.builtins.count())]
    assert {"builtin:mlp", "builtin:transformer", "builtin:fp16-softmax-head"} <= set(specs)
    assert page.builtins.currentItem().data(Qt.ItemDataRole.UserRole) == "builtin:mlp"
    assert page.policy_card.values["Policy"].text() == "float32"
    assert page.policy_card.values["Why"].text().startswith("CPU without native bfloat16")
    assert page.env_card.values["TensorFlow"].text() == "2.21.0"
    assert window.next_button.isEnabled() and not window.back_button.isEnabled()
    assert [window.steps.status_text(i) for i in range(7)] == [NOT_STARTED] * 7
    assert window.pages[1].available()  # nothing to measure before the workload is checked
    assert window.study_label.text().startswith("No study yet") and not window.statusBar().currentMessage()
    window.goto(3)
    assert window.current() == 0 and "measure the baseline first" in window.statusBar().currentMessage()


def test_a_broken_workload_shows_its_error_and_keeps_the_user_on_the_page(qtbot, tmp_path):
    window = make_window(qtbot, tmp_path)
    page = window.pages[0]
    page.workload_edit.setText("builtin:broken")
    page.study_edit.setText(str(tmp_path / "study"))
    qtbot.mouseClick(window.next_button, LEFT)
    qtbot.waitUntil(lambda: page.status == ATTENTION, timeout=20_000)
    box = page.check_panel.error_box
    assert box.isVisible() and box.message.text() == "builtin:broken: build_model() is missing"
    assert box.fix.text() == "Fix: define build_model() returning a compiled keras.Model"
    assert window.current() == 0 and window.steps.status_text(0) == ATTENTION
    assert not (tmp_path / "study").exists()  # nothing is created for a workload that does not load
    page.workload_edit.setText("builtin:mlp")  # fixing it clears the attention
    assert page.status == NOT_STARTED and window.next_button.isEnabled()


def test_an_input_bound_job_is_stopped_on_the_baseline_page_with_the_fix(qtbot, tmp_path):
    window = make_window(qtbot, tmp_path, workload="builtin:slow-input")
    go_next(qtbot, window, 1)
    page = window.pages[1]
    qtbot.mouseClick(page.measure_button, LEFT)
    qtbot.waitUntil(lambda: page.status == ATTENTION, timeout=20_000)
    assert page.verdict_card.values["Verdict"].text() == "input-bound — the device waits for data"
    assert page.verdict_card.values["Time waiting for input"].text() == "80%"
    assert page.input_warning.isVisible() and page.anyway_button.isVisible()
    assert page.findings.codes() == ["INPUT_BOUND"]
    assert "prefetch(tf.data.AUTOTUNE)" in page.findings.cards[0].fix_block.text()
    assert not window.next_button.isEnabled()
    assert window.hint.text() == "The job is input-bound: fix the input pipeline first"
    assert window.session.baseline is None and window.steps.status_text(1) == ATTENTION


def test_the_whole_wizard_on_the_fake_backend(qtbot, tmp_path, monkeypatch):
    # No repaint timer: what the plots show at the end of a run must not wait for the next tick
    # (under load the verdict used to appear before the run's last samples were drawn).
    monkeypatch.setattr(live_plots, "REFRESH_MS", 10**7)
    window = make_window(qtbot, tmp_path, workload="builtin:fp16-softmax-head")
    session = window.session
    go_next(qtbot, window, 1)
    assert window.steps.status_text(0) == PASSED and session.study.path == tmp_path / "study"
    assert window.study_label.text() == f"Study: {tmp_path / 'study'}"

    baseline = window.pages[1]
    assert not window.next_button.isEnabled() and window.hint.text() == "Measure the baseline first"
    qtbot.mouseClick(baseline.measure_button, LEFT)
    assert window.hint.text() == "Measuring…"  # it said "Measure the baseline first" while measuring
    qtbot.waitUntil(lambda: baseline.status == PASSED, timeout=20_000)
    assert baseline.verdict_card.values["Verdict"].text() == "compute-bound — the device is the limit"
    assert baseline.results.values["Steps"].text() == "60"
    assert baseline.results.values["Peak memory"].text() == "95.4 MiB (host)"
    assert baseline.plots.plotted_lengths()["step_ms"] == [60]
    assert baseline.tensorboard_button.isEnabled()
    go_next(qtbot, window, 2)

    precision = window.pages[2]
    assert precision.policy.currentText() == "mixed_float16"  # float32 is recommended: the 16-bit check
    qtbot.waitUntil(lambda: precision.findings.codes() == ["HEAD_NOT_FLOAT32"], timeout=20_000)
    card = precision.findings.cards[0]
    assert card.checkbox.isChecked() and precision.run_button.isEnabled()
    qtbot.mouseClick(precision.run_button, LEFT)
    assert window.steps.status_text(2) == "running"
    qtbot.waitUntil(lambda: precision.rung is not None and precision.rung.decision is not None, timeout=45_000)
    assert precision.status == PASSED and precision.decision_card.badge.text() == "KEPT"
    speed = precision.decision_card.facts.values[SPEED_UP].text()
    # the card says once what the number was measured against (it read "Speed-up vs baseline: 1.42× [1.30, 1.55]
    # vs 01-baseline, …")
    assert speed.endswith("— faster") and speed.count("baseline") == 1 and " vs the baseline, " in speed, speed
    # beside this run, what the accuracy verdict compared it with: B trained the full length with validation
    # and was judged against the baseline run (a paired trial trains no A that long; its speed pairs measure
    # speed only and leave the validation plot empty), every step plotted, the baseline run named as such
    trial = window.session.trial_of(precision.rung)
    first_b = next(r for r in trial.runs if r.planned.arm == "b" and r.planned.replicate == 1)
    assert not any(r.planned.arm == "a" and r.planned.replicate == 1 for r in trial.runs)
    assert precision.plots.plotted_lengths()["step_ms"] == [session.baseline.summary.steps_completed,
                                                            first_b.summary.steps_completed]
    assert all(n > 0 for n in precision.plots.plotted_lengths()["val"])
    reference, candidate = precision.plots.legend_texts()
    assert reference == "reference float32, batch 64 (the baseline run)", reference
    assert candidate.startswith("mixed_float16, batch 64 (full length)")
    assert precision.plots.primary is precision.plots.series[1].data
    assert precision.plots.series[0].data is session.data_of(session.baseline)
    assert precision.run_panel.data is session.data_of(precision.rung)
    # issue 22: one speed number for the configuration, the card's; this run's own median is a detail, in the
    # tooltips and said as one (the panel's line and the plot's axis showed two more)
    assert "median" not in precision.run_panel.detail.text()
    assert "not the verdict" in precision.run_panel.detail.toolTip()
    assert precision.plots.step_plot.getPlotItem().getAxis("left").labelText == "ms"
    assert "not the verdict" in precision.plots.step_plot.toolTip()
    run_yaml = yaml.safe_load((session.rung_path(precision.rung) / "run.yaml").read_text())
    assert run_yaml["policy"] == "mixed_float16" and run_yaml["fix_head"] is True
    go_next(qtbot, window, 3)

    xla = window.pages[3]
    assert xla.extends.text() == "Builds on the best configuration kept so far: mixed_float16, batch 64."
    qtbot.waitUntil(lambda: xla.run_button.isEnabled(), timeout=20_000)
    qtbot.mouseClick(xla.run_button, LEFT)
    qtbot.waitUntil(lambda: xla.rung is not None and xla.rung.decision is not None, timeout=45_000)
    assert xla.rung.compared_with == "02-mixed_float16" and xla.status == PASSED
    speed = xla.decision_card.facts.values[SPEED_UP].text()
    assert speed.endswith("— faster") and " vs mixed_float16 + float32 output layer, " in speed and "baseline" not in speed, speed
    go_next(qtbot, window, 4)

    batch = window.pages[4]
    assert batch.batch.value() == 128  # the search doubles
    # the baseline's configuration trained from three seeds (the accuracy gate's noise sample): how much identical
    # runs differ in peak memory is known, so the freed memory is a figure
    assert batch.memory.values["Freed"].text().endswith("MiB")
    # the fake backend records no optimizer: the square-root rule, the milder (SGD's runs would take ×2.00)
    words = config_words("03-xla", session.study.rungs)  # what the search starts from, not its run folder
    assert words != "03-xla" and batch.lr.text() == (
        f"× 1.41 of the rate at batch 64 ({words}), by the square-root rule (the optimizer is not known: "
        "the square-root rule, the milder)")
    qtbot.mouseClick(batch.run_button, LEFT)
    qtbot.waitUntil(lambda: batch.rung is not None and batch.rung.decision is not None, timeout=45_000)
    assert session.best is batch.rung  # 128 samples per step beat 64 per sample: kept
    # the issue 22 walk: after a kept size the page went on with "Tuned peak … — float32, batch 40" and
    # "× 2.00 of the tuned run's" beside a proposal that said "learning rate scaled 4.00×"
    assert batch.memory.values["Tuned peak"].text().endswith(batch.rung.settings.label())
    assert batch.batch.value() > 128  # the search proposes its next size: its words and the page's agree
    scale = (batch.batch.value() / 64) ** 0.5  # the square-root rule, from the search's start
    assert f"learning rate ×{scale:.2f} by the square-root rule" in batch.plan_text.text(), batch.plan_text.text()
    assert batch.lr.text().startswith(f"× {scale:.2f} of the rate at batch 64 ({words})"), batch.lr.text()
    go_next(qtbot, window, 5)

    # the confirmation comes last: it measures the final recommendation, the larger batch included
    comparison = window.pages[5]
    view = comparison.view
    assert [r.name for r in view.rows] == ["01-baseline", "02-mixed_float16", "03-xla", "05-batch128"]
    assert view.cell(0, "speed-up [95% CI]") == "1.00x (baseline)" and view.cell(2, "verdict") == "faster, kept"
    assert view.cell(2, "speed-up [95% CI]").endswith("] 2 pairs vs mixed_float16 + float32 output layer")  # its trial's reference, in words
    assert view.plots.plotted_lengths()["step_ms"] == [60, 30]  # baseline and the tuned run (half the steps)
    # issue 12: the step measures something; it is not passed on arrival
    assert comparison.status == NOT_STARTED and not comparison.verdict.isVisible()
    assert comparison.needs.text().startswith("Needs a confirmation run: mixed_float16 + XLA, batch 128")
    assert comparison.run_button.isEnabled() and window.hint.text() == "Run the confirmation first, or skip it"
    legends = []  # what the legend said whenever the confirmation's runs sent events

    def legend_now(_events) -> None:
        plots = comparison.view.plots
        legends.append((plots.legend_shown(), plots.primary is plots.own))

    comparison.run_panel.events_received.connect(legend_now)
    qtbot.mouseClick(comparison.run_button, LEFT)
    qtbot.waitUntil(lambda: comparison.confirmation is not None and comparison.confirmation.decision is not None,
                    timeout=45_000)
    comparison.run_panel.events_received.disconnect(legend_now)
    # issue 22: the recommended configuration is the legend's own entry, the baseline's configuration its
    # reference, whichever run goes (the reference run was named as the page's own while it ran)
    recommended = comparison.confirmation.settings.label()
    assert legends
    for shown, _own_running in legends:
        assert all(name.startswith((recommended, "reference ")) for name in shown), shown
        assert len(shown) < 2 or (shown[0].startswith(recommended) and shown[1].startswith("reference ")), shown
    assert comparison.confirmation.compared_with == "01-baseline"
    assert comparison.verdict.headline.text() == "mixed_float16 + XLA, batch 128: recommended"
    assert comparison.verdict.speed_label.text().startswith("faster: ")
    assert comparison.verdict.accuracy_label.text().startswith("within tolerance: val_accuracy")
    # a confirmation only confirms: the kept batch rung stays the recommendation (the policy's rule)
    assert comparison.status == PASSED and session.best is batch.rung
    go_next(qtbot, window, 6)

    record = window.pages[6]
    assert record.recommended.values["Batch size"].text() == "128"
    assert record.recommended.values["Automatic fixes"].text() == "float32 output layer"
    assert 'set_global_policy("mixed_float16")' in record.snippet.text()
    # the code to apply is proven on the page as `tune` proves it: the patched copy of the workload file is run as
    # written (the fake backend measures what a run without flags measures), and the patch says what it found
    qtbot.waitUntil(lambda: record.check_status.text().startswith(("Checked", "Check failed", "Not checked")),
                    timeout=20_000)
    patch = session.study.patch
    assert patch["check"]["run"] == "patched/check" and record.snippet.text().splitlines()[1] == \
        "# " + patch["check"]["status"] + ": " + patch["check"]["reason"]
    assert record.snippet.text() == (tmp_path / "study" / "changes.patch").read_text().rstrip()
    qtbot.mouseClick(record.copy_button, LEFT)
    assert QGuiApplication.clipboard().text() == record.snippet.text() + "\n"
    saved = tmp_path / "elsewhere" / "fp16_softmax_head_tuned.py"
    record.save_path_dialog = lambda *args: (str(saved), "")
    qtbot.mouseClick(record.save_button, LEFT)
    assert saved.read_text() == (tmp_path / "study" / "patched" / "fp16_softmax_head.py").read_text()
    assert record.save_status.text() == f"Patched script saved: {saved}"
    assert "batch_size: 128" in record.record.text()
    assert not window.next_button.isVisible() and window.back_button.isEnabled()
    study = yaml.safe_load((tmp_path / "study" / "study.yaml").read_text())
    assert [e["name"] for e in study["ladder"]] == ["01-baseline", "02-mixed_float16", "03-xla",
                                                    "04-steps_per_execution", "05-batch128", "06-confirmation"]
    assert study["ladder"][3]["skipped"]  # 10 ms steps: recorded at its place when the batch page began
    assert study["status"] == "completed" and study["recommended"]["batch_size"] == 128
    assert [e["kept"] for e in study["ladder"]] == [True, True, True, False, True, True]

    pdf = tmp_path / "out" / "report.pdf"
    record.export(pdf)
    assert not record.export_button.isEnabled()  # the report renders in the background
    qtbot.waitUntil(lambda: record.report_path is not None, timeout=60_000)
    assert pdf.stat().st_size > 1000 and record.report_status.text() == f"Report written: {pdf}"
    assert record.open_button.isVisible() and record.status == PASSED
    assert [window.steps.status_text(i) for i in range(7)] == [PASSED] * 7


def test_closing_the_window_stops_every_backend(qtbot, tmp_path):
    window = make_window(qtbot, tmp_path, launcher=fake_launcher("slow", delay=0.05), steps=100_000)
    go_next(qtbot, window, 1)
    page = window.pages[1]
    qtbot.mouseClick(page.measure_button, LEFT)
    qtbot.waitUntil(lambda: page.stage == "run" and page.run_panel.data is not None
                    and len(page.run_panel.data.step.view()) > 20, timeout=20_000)
    assert any("fake_backend.py" in " ".join(p.cmdline()) for p in children())
    asked = []
    window.ask_close = lambda: asked.append(1) or False  # issue 12: closing mid-run asks; "No" keeps it going
    window.close()
    assert asked and window.isVisible() and page.run_panel.is_running()
    window.ask_close = lambda: asked.append(2) or True
    window.close()
    assert asked == [1, 2] and not window.isVisible()
    assert [p for p in children() if "fake_backend.py" in " ".join(p.cmdline())] == []
    summary = load_run(window.session.rung_path(page.rung)).summary
    assert summary.status == "cancelled"  # stopped cooperatively: the summary was still written
    study = yaml.safe_load((tmp_path / "study" / "study.yaml").read_text())
    assert study["status"] == "interrupted"  # not "running" forever
    assert study["ladder"][0]["status"] == "cancelled"


def test_run_browser_opens_a_study_and_compares_any_runs(qtbot, tmp_path):
    window = make_window(qtbot, tmp_path)
    go_next(qtbot, window, 1)
    page = window.pages[1]
    notes, lengths = [], []
    for again in range(2):
        qtbot.mouseClick(page.measure_button, LEFT)
        qtbot.waitUntil(lambda: page.status == PASSED and not page.run_panel.is_running(), timeout=20_000)
        notes.append(page.length_note.text() if page.length_note.isVisibleTo(page) else "")
        lengths.append(window.session.baseline_settings().steps)
        if not again:
            window.session.lengthen_runs(90)  # a second baseline of another length, to compare with the first
    # 60 fake steps of 10 ms: the trials' speed-only pairs are sized for 3 s each, and the first pair's 0.55 s
    # count too, so the page asks for no longer runs (trials/run_length.py)
    longer = lengths[1]
    assert notes == ["", ""] and lengths == [60, 90]
    browser = window.show_browser()
    browser.open_study(tmp_path / "study")
    top = browser.tree.topLevelItem(0)
    assert top.childCount() == 2 and top.child(0).text(1) == "completed"
    assert browser.checked() == [0, 1] and len(browser.compare.rows) == 2
    assert browser.compare.plots.plotted_lengths()["step_ms"] == [60, longer]
    top.child(1).setCheckState(0, Qt.CheckState.Unchecked)
    assert len(browser.compare.rows) == 1
    top.child(1).setCheckState(0, Qt.CheckState.Checked)
    browser.compare.baseline_combo.setCurrentIndex(1)
    assert browser.compare.cell(1, "speed-up [95% CI]") == "1.00x (baseline)"
    csv_path = browser.compare.export_csv(tmp_path / "table.csv")
    records = load_study_runs(tmp_path / "study").runs
    exported = csv_path.read_text().splitlines()  # `tfturbo compare`'s CSV, then the table's own columns
    expected = compare.to_csv(compare.compare_runs(records, baseline=1)).splitlines()
    assert len(exported) == len(expected) and all(e.startswith(x + ",") for e, x in zip(exported, expected))
    browser.compare.align_combo.setCurrentText("training time")
    assert browser.compare.plots.by_time
    assert browser.compare.plots.step_plot.getPlotItem().getAxis("bottom").labelText == "training time (s)"


def test_the_gui_process_never_imports_tensorflow_or_keras(tmp_path):
    """Drive every page in a fresh interpreter (other tests may have imported TensorFlow here)."""
    script = f"""
import sys, time
sys.path.insert(0, {str(FAKE_BACKEND.parent)!r})
from tests.gui.gui_helpers import fake_launcher
from tfturbo_gui.app import make_app
app = make_app()
from tfturbo_gui.main_window import MainWindow
w = MainWindow("builtin:mlp", launcher=fake_launcher(), steps=40)
w.show()
def wait(cond):
    end = time.time() + 30
    while not cond() and time.time() < end:
        app.processEvents(); time.sleep(0.01)
    assert cond()
w.pages[0].study_edit.setText({str(tmp_path / "study")!r})
wait(lambda: w.session.environment is not None)
w._on_next(); wait(lambda: w.current() == 1)
w.pages[1].start(); wait(lambda: w.session.baseline is not None)
for i in range(2, 7):
    w.goto(i)
    page = w.pages[i]
    if hasattr(page, "audit_panel"):
        wait(lambda: not page.audit_panel.is_running())
    w.stop_children()
print(sorted(m for m in ("tensorflow", "keras", "trainer_backend") if m in sys.modules))
"""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_tfturbo_gui_command_opens_the_wizard_on_the_workload(monkeypatch, tmp_path):
    import tfturbo_gui.app
    from tfturbo.cli import main

    opened = []
    monkeypatch.setattr(tfturbo_gui.app, "run", lambda workload, steps, study: opened.append((workload, steps, study))
                        or 0)
    workload = tmp_path / "my_model.py"
    assert main(["gui", str(workload), "--steps", "50", "--open", str(tmp_path)]) == 0
    assert main([]) == 0  # plain `tfturbo` opens the wizard too
    assert opened == [(str(workload.resolve()), 50, str(tmp_path)), ("", 300, None)]


def test_dropping_a_workload_file_on_the_page_selects_it(qtbot, tmp_path):
    from PySide6.QtCore import QMimeData, QPointF, QUrl
    from PySide6.QtGui import QDragEnterEvent, QDropEvent

    window = make_window(qtbot, tmp_path)
    page = window.pages[0]

    def mime(path):
        data = QMimeData()
        data.setUrls([QUrl.fromLocalFile(str(path))])
        return data

    text = mime(tmp_path / "notes.txt")
    enter = QDragEnterEvent(QPointF(5, 5).toPoint(), Qt.DropAction.CopyAction, text, LEFT, Qt.KeyboardModifier.NoModifier)
    enter.setAccepted(False)
    page.dragEnterEvent(enter)
    assert not enter.isAccepted()  # only .py files are workloads
    workload = tmp_path / "my_model.py"
    dropped = mime(workload)  # the event only points at its mime data: keep it alive
    drop = QDropEvent(QPointF(5, 5), Qt.DropAction.CopyAction, dropped, LEFT, Qt.KeyboardModifier.NoModifier)
    page.dropEvent(drop)
    assert page.workload_edit.text() == str(workload) and page.builtins.selectedItems() == []
    assert "/tfturbo-studies/my_model-" in page.study_edit.text()  # the default study folder follows the workload


def test_without_a_display_the_command_says_so_in_one_line(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    out = subprocess.run([sys.executable, "-m", "tfturbo.cli", "gui"], capture_output=True, text=True, env=env,
                         timeout=60, cwd=tmp_path)
    assert out.returncode == 2
    assert out.stderr.strip() == ("tfturbo gui: no display to open the window on (DISPLAY is not set) — run it in a "
                                  "desktop session (or over `ssh -X`), or tune without a window: "
                                  "tfturbo tune WORKLOAD --out STUDY_DIR")
