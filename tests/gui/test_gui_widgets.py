"""Each widget on its own, driven by the fake backend: what the user sees and what is kept."""

import json
import sys

import pytest
from tests.gui.gui_helpers import fake_launcher
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontInfo, QGuiApplication

from tfturbo.run_summary import RunSummary
from tfturbo import protocol
from tfturbo.cli_args import run_argv
from tfturbo.settings import RunSettings
from tfturbo_gui.findings_panel import FindingsPanel
from tfturbo_gui.live_plots import RunPlots
from tfturbo_gui.run_panel import RunPanel
from tfturbo_gui.tensorboard_launcher import TensorBoardLauncher

HEAD = {"code": "HEAD_NOT_FLOAT32", "severity": "error", "where": "layer head",
        "message": "the output layer 'head' computes its softmax in float16",
        "fix": 'keras.layers.Dense(10, activation="softmax", dtype="float32")'}


def start_run(qtbot, tmp_path, scenario="ok", delay=0.0, steps=60, policy="float32"):
    panel = RunPanel(fake_launcher(scenario, delay))
    qtbot.addWidget(panel)
    panel.show()
    argv = run_argv(RunSettings("builtin:mlp", policy=policy, steps=steps), str(tmp_path / "run"))
    data = panel.start("run", argv, name="r", log_path=str(tmp_path / "backend.log"))
    return panel, data


def test_completed_run_fills_the_data_and_says_so(qtbot, tmp_path):
    panel, data = start_run(qtbot, tmp_path)
    assert panel.stop_button.isVisible() and panel.stop_button.isEnabled()
    with qtbot.waitSignal(panel.ended, timeout=20_000):
        pass
    assert data.status == protocol.RunStatus.COMPLETED
    assert len(data.step.view()) == 60 and data.first_steady_step == 6
    assert data.summary.steps_completed == 60
    assert panel.state.text() == "Completed — 60 steps recorded"
    assert "step 60 / 60" in panel.detail.text() and "left" not in panel.detail.text()
    assert not panel.stop_button.isVisible() and not panel.error_box.isVisible()


def test_a_trial_run_keeps_saying_which_pair_and_arm_through_its_phases(qtbot, tmp_path):
    """Issue 22: "Trial pair N" gave way to "Warm-up / compilation" as soon as the run's phases arrived."""
    panel = RunPanel(fake_launcher("ok", 0.02))
    qtbot.addWidget(panel)
    argv = run_argv(RunSettings("builtin:mlp", steps=60), str(tmp_path / "run"))
    data = panel.start("run", argv, name="r", busy_text="Trial pair 2, the candidate run: starting",
                       context="Trial pair 2, the candidate run")
    seen = set()
    qtbot.waitUntil(lambda: seen.add(panel.state.text()) or data.finished, timeout=20_000)
    # whichever phases the polling catches (under load it saw only the profiler's), each keeps the context
    phases = [t for t in seen if any(w in t.lower() for w in ("warm-up", "training", "profiling"))]
    assert phases and all(t.startswith("Trial pair 2, the candidate run: ") for t in phases), seen


def test_failing_backend_shows_message_and_fix_with_traceback_behind_details(qtbot, tmp_path):
    panel, data = start_run(qtbot, tmp_path, scenario="fail")
    with qtbot.waitSignal(panel.ended, timeout=20_000):
        pass
    box = panel.error_box
    assert box.isVisible() and panel.state.text().startswith("Failed: training failed: shapes (64, 10)")
    assert box.message.text() == "training failed: shapes (64, 10) and (64, 4) are incompatible"
    assert box.fix.text() == "Fix: make the last layer's width match the number of classes"
    assert box.details_button.isVisible() and not box.details.isVisible()
    qtbot.mouseClick(box.details_button, Qt.MouseButton.LeftButton)
    assert box.details.isVisible() and "Traceback (most recent call last)" in box.details.text()
    assert box.details_button.text() == "Hide details"
    assert 0 < len(data.step.view()) < 60  # what was measured before the failure is kept


def test_stop_ends_the_run_and_keeps_what_it_measured(qtbot, tmp_path):
    panel, data = start_run(qtbot, tmp_path, scenario="slow", delay=0.05, steps=100_000)
    qtbot.waitUntil(lambda: len(data.step.view()) >= 30, timeout=20_000)
    with qtbot.waitSignal(panel.ended, timeout=20_000):
        qtbot.mouseClick(panel.stop_button, Qt.MouseButton.LeftButton)
    kept = len(data.step.view())
    assert data.status == protocol.RunStatus.CANCELLED and 30 <= kept < 100_000
    assert panel.state.text() == f"Stopped by you — {kept} steps recorded; what was measured is kept"
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["status"] == "cancelled" and summary["steps_completed"] == kept


def test_a_backend_deaf_to_stop_is_terminated_then_killed_and_its_steps_kept(qtbot, tmp_path):
    panel, data = start_run(qtbot, tmp_path, scenario="stubborn", delay=0.05, steps=100_000)
    panel.process.stop_grace_ms = panel.process.terminate_grace_ms = 300
    qtbot.waitUntil(lambda: len(data.step.view()) >= 20, timeout=20_000)
    with qtbot.waitSignal(panel.ended, timeout=20_000):
        panel.stop()
        assert panel.state.text().startswith("Stopping")
    assert data.status == protocol.RunStatus.CRASHED and data.exit_code != 0  # killed: no `done` event
    assert len(data.step.view()) >= 20 and panel.state.text().startswith("The backend ended unexpectedly")


def test_a_killed_backend_is_reported_as_crashed_with_its_log(qtbot, tmp_path):
    panel, data = start_run(qtbot, tmp_path, scenario="crash")
    with qtbot.waitSignal(panel.ended, timeout=20_000):
        pass
    assert data.status == protocol.RunStatus.CRASHED and data.exit_code == 9 and len(data.step.view()) == 30
    assert panel.state.text() == ("The backend ended unexpectedly (exit code 9) — 30 steps recorded; "
                                  f"the backend's messages are in {tmp_path / 'backend.log'}")


def test_a_backend_that_cannot_start_says_how_to_check_the_installation(qtbot, tmp_path):
    panel = RunPanel(lambda command, argv: [str(tmp_path / "no-such-python"), "-m", "trainer_backend", command])
    qtbot.addWidget(panel)
    panel.show()
    with qtbot.waitSignal(panel.ended, timeout=10_000):
        data = panel.start("env", [])
    assert data.error["message"].startswith("could not start the training backend")
    assert panel.state.text().startswith("Failed: could not start the training backend")
    assert panel.error_box.isVisible() and "python -m trainer_backend env" in panel.error_box.fix.text()


def test_high_rate_stream_is_ingested_completely_and_plotted(qtbot, tmp_path):
    panel, data = start_run(qtbot, tmp_path, scenario="flood", steps=100_000)
    plots = RunPlots()
    qtbot.addWidget(plots)
    plots.show_run(data)
    with qtbot.waitSignal(panel.ended, timeout=60_000):
        pass
    assert panel.process._parser.skipped == 0
    assert len(data.step.view()) == 100_000 and data.step.view()[-1] == 100_000
    plots.refresh()
    assert plots.plotted_lengths()["step_ms"] == [100_000] and plots.plotted_lengths()["loss"] == [100_000]
    curve = plots.curves["step_ms"][0]  # drawn downsampled to the view: the UI never paints 100k points
    assert (curve.opts["autoDownsample"], curve.opts["downsampleMethod"], curve.opts["clipToView"]) == \
        (True, "peak", True)


def test_plots_overlay_the_baseline_and_mark_warmup_and_median(qtbot, tmp_path):
    panel, data = start_run(qtbot, tmp_path, steps=60, policy="mixed_float16")
    with qtbot.waitSignal(panel.ended, timeout=20_000):
        pass
    base_panel, base = start_run(qtbot, tmp_path / "b", steps=40)
    with qtbot.waitSignal(base_panel.ended, timeout=20_000):
        pass
    plots = RunPlots()
    qtbot.addWidget(plots)
    plots.show_run(data, baseline=base)
    lengths = plots.plotted_lengths()
    assert lengths["step_ms"] == [40, 60] and lengths["loss_scale"] == [0, 60]  # baseline first, then this run
    assert lengths["val"] == [len(base.validation), len(data.validation)] and plots.val_metric == "val_accuracy"
    assert plots.has_scale and not plots.scale_plot.isHidden()  # mixed_float16: its loss scale is plotted
    assert plots.median_line.value() == data.summary.step_ms["median"]
    # one run's median is a detail of that run, said as one in the plot's tooltip: never on the axis or in the
    # title, where it was a third speed number beside the verdict's (issue 22) and cut at 1024 × 640
    median = f"{data.summary.step_ms['median']:.3g}"
    for size in ((600, 600), (420, 230)):
        plots.resize(*size)
        plots.show()
        qtbot.waitExposed(plots)
        qtbot.wait(30)
        assert plots.step_plot.getPlotItem().getAxis("left").labelText == "ms"
        assert plots.step_plot._title_text == "Step time"
        assert plots.step_plot.toolTip().startswith(f"Dotted line: this run's median step, {median} ms")
        assert "not the verdict" in plots.step_plot.toolTip()
    assert plots.legend_texts() == ["baseline", data.name]  # beside the plots, not on them
    regions = [item for _, item in plots._decor]
    assert regions[0].getRegion() == (0.5, 5.5)  # warm-up: steps 1-5

    plots.show_run(base)  # float32 only: no empty "Loss scale: none" plot, the validation plot takes its room
    assert not plots.has_scale and plots.scale_plot.isHidden()
    index = plots.grid.indexOf(plots.val_plot)
    assert plots.grid.getItemPosition(index) == (1, 0, 1, 2)
    plots.show_run(data, baseline=base)  # a run with a loss scale on the page: shown again
    assert plots.has_scale and not plots.scale_plot.isHidden()
    assert plots.grid.getItemPosition(plots.grid.indexOf(plots.val_plot)) == (1, 0, 1, 1)

def test_findings_show_fix_as_copyable_monospace_and_offer_the_automatic_fix(qtbot):
    panel = FindingsPanel()
    qtbot.addWidget(panel)
    panel.show()
    assert panel.empty.isVisible()
    received = []
    panel.fixes_changed.connect(received.append)
    panel.set_findings([HEAD, dict(HEAD)])  # the same finding twice is shown once
    assert len(panel.cards) == 1 and not panel.empty.isVisible()
    card = panel.cards[0]
    assert card.code_label.text() == "HEAD_NOT_FLOAT32" and card.message.text() == HEAD["message"]
    assert card.fix_block.text() == HEAD["fix"]
    assert QFontInfo(card.fix_block.editor.font()).fixedPitch()
    qtbot.mouseClick(card.fix_block.copy_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == HEAD["fix"]
    assert panel.chosen_fixes() == {}
    card.checkbox.setChecked(True)
    assert panel.chosen_fixes() == {"fix_head": True} and received == [{"fix_head": True}]
    panel.set_findings([HEAD])  # a new audit keeps the user's choice
    assert panel.cards[0].checkbox.isChecked()


_NO_FONTS_CHILD = """
from PySide6.QtGui import QFontDatabase, QFontInfo
from PySide6.QtWidgets import QApplication
app = QApplication([])
system = QFontInfo(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)).fixedPitch()
from tfturbo_gui import app as gui_app
gui_app.make_app()
from tfturbo_gui.code_block import CodeBlock
block = CodeBlock("x = 1")
info = QFontInfo(block.editor.font())
print(system, info.family(), info.fixedPitch())
"""


def test_code_is_monospace_on_a_machine_without_a_monospace_font(tmp_path):
    """Issue 22: on a fresh machine the system's fixed font resolved to a proportional face, so code (and the
    suite's monospace test) failed; the app registers the DejaVu Sans Mono it ships at start."""
    import os
    import subprocess

    conf = tmp_path / "fonts.conf"  # fontconfig with no font directories: a machine without fonts
    conf.write_text(f'<?xml version="1.0"?><fontconfig><cachedir>{tmp_path}/cache</cachedir></fontconfig>')
    env = {**os.environ, "FONTCONFIG_FILE": str(conf), "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run([sys.executable, "-c", _NO_FONTS_CHILD], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    system, *family, fixed = out.stdout.split()
    assert system == "False"  # the machine really has no monospace face of its own
    assert " ".join(family) == "DejaVu Sans Mono" and fixed == "True"


def test_tensorboard_opens_the_address_it_prints_and_stops_with_the_app(qtbot, tmp_path):
    opened = []
    script = "import sys, time; print('TensorBoard 2.21 at http://localhost:%s/ (Press CTRL+C to quit)' % sys.argv[1]," \
             " flush=True); time.sleep(60)"
    launcher = TensorBoardLauncher(command=lambda logdir, port: [sys.executable, "-c", script, str(port)],
                                   open_url=lambda url: opened.append(url.toString()))
    with qtbot.waitSignal(launcher.url_ready, timeout=10_000) as signal:
        launcher.open(str(tmp_path))
    assert signal.args[0].startswith("http://localhost:") and opened == [signal.args[0]]
    launcher.open(str(tmp_path))  # the same study: the browser again, no second server
    assert opened == [signal.args[0]] * 2 and launcher.is_running()
    launcher.stop()
    assert not launcher.is_running()


def test_tensorboard_that_is_missing_explains_how_to_install_it(qtbot, tmp_path):
    launcher = TensorBoardLauncher(command=lambda logdir, port: [str(tmp_path / "no-tensorboard")])
    with qtbot.waitSignal(launcher.failed, timeout=10_000) as signal:
        launcher.open(str(tmp_path))
    assert "pip install tensorboard" in signal.args[0]


def test_the_verdict_view_prints_a_tiny_loss_change_as_the_report_does():
    """The compare page printed loss deltas with two decimals ("val_loss -0.00"), the report with four: one rule now."""
    from tfturbo.trials.verdict import AccuracyVerdict
    from tfturbo_gui.verdict_view import accuracy_text

    doc = {"metric": "val_loss", "delta": -2.3e-5, "ci95": [-8.4e-5, 1.1e-6], "verdict": "within tolerance"}
    assert accuracy_text(doc) == "within tolerance: val_loss -0.000023, interval [-0.000084, +0.000001]"
    assert AccuracyVerdict.from_dict(doc).text() == "val_loss -0.000023 [-0.000084, +0.000001]"
    pp = {"metric": "val_accuracy", "delta": -0.004, "ci95": [-0.01, 0.002], "verdict": "within tolerance", "step": 60}
    assert accuracy_text(pp) == "within tolerance: val_accuracy -0.40 pp at step 60, interval [-1.00, +0.20] pp"
    # B's whole steps could not meet A's points (batch 50 against 128): the line says where each was compared
    near = {**pp, "samples_seen": [4800], "b_samples_seen": [4864]}
    assert accuracy_text(near).endswith("pp (compared at 4,800 samples of A and 4,864 of B, 1.3% apart)")
    assert accuracy_text({**pp, "samples_seen": [3800, 4800], "b_samples_seen": [3800, 4800]}) == accuracy_text(pp)


def test_the_verdict_view_says_what_a_model_without_labels_was_compared_on():
    """Issue 44: a VAE's gate compares its own loss; the card said "inconclusive: 0 validation examples"."""
    from tfturbo_gui.verdict_view import accuracy_text, speed_text

    training = {"metric": "loss", "delta": 0.02, "ci95": None, "verdict": "inconclusive", "paired": False,
                "n_examples": 0, "checked": False, "explanation": "training loss at equal samples 10.5 → 10.52 "
                "(+0.2%; the model takes no labels and the script has no validation data: one run each, no "
                "interval, so not a verdict; within the 2% tolerance as a point estimate)"}
    assert accuracy_text(training).startswith("inconclusive: training loss at equal samples 10.5 → 10.52")
    batches = {"metric": "val_loss", "delta": 0.001, "ci95": [-0.01, 0.012], "verdict": "within tolerance",
               "paired": True, "n_examples": 64, "unit": "validation batch", "explanation": "val_loss +0.0010 "
               "[-0.0100, +0.0120] of 11.2, paired on the same 64 validation batches (the model's own test_step)"}
    assert accuracy_text(batches) == "within tolerance: " + batches["explanation"]
    slower = {"ratio": 0.72, "ci95": [0.48, 1.07], "verdict": "no measurable change", "replicates": 6,
              "ratios": [0.44, 0.51, 0.69, 0.95, 0.96, 0.94]}
    assert speed_text(slower).endswith("over 6 pairs (slower in 6 of 6 pairs; size uncertain)")


def test_runs_of_different_batch_sizes_are_aligned_by_samples_seen(qtbot):
    """Issue 22: plots show what the verdict compared, aligned by samples when batch sizes differ."""
    from tfturbo_gui.run_data import RunData

    def run(name: str, steps: int) -> RunData:
        data = RunData(name)
        data.ingest([{"type": protocol.STEPS, "step": list(range(1, steps + 1)), "step_ms": [5.0] * steps,
                      "loss": [1.0] * steps, "loss_scale": [None] * steps, "warmup": [s <= 3 for s in range(1, steps + 1)]},
                     {"type": protocol.DONE, "status": protocol.RunStatus.COMPLETED, "exit_code": 0}])
        return data

    plots = RunPlots()
    qtbot.addWidget(plots)
    reference, candidate = run("a", 60), run("b", 30)  # batch 64 and 128: the same samples
    plots.show_pair(candidate, reference, "batch 128 (pair 1)", "reference batch 64 (pair 1)", batches=(128, 64))
    plots.refresh()
    ref_curve, cand_curve = plots.curves["step_ms"]
    assert max(ref_curve.xData) == 60 * 64 and max(cand_curve.xData) == 30 * 128
    assert plots.step_plot.getPlotItem().getAxis("bottom").labelText == "samples seen"
    plots.show_pair(candidate, reference, "b", "a", batches=(64, 64))  # the same batch: by step
    plots.refresh()
    assert plots.step_plot.getPlotItem().getAxis("bottom").labelText == "step"


def test_warm_up_label_sits_inside_a_short_step_plot_above_the_median(qtbot, tmp_path):
    """The issue 22 walk: on the baseline page at 1280x800 (a step plot ~120 px high) "warm-up" sank below the
    axis; before that it sat on the median line. The label is inside the plot, clear of the median."""
    from PySide6.QtCore import QPointF

    panel, data = start_run(qtbot, tmp_path, steps=60)
    with qtbot.waitSignal(panel.ended, timeout=20_000):
        pass
    plots = RunPlots()
    qtbot.addWidget(plots)
    plots.resize(600, 300)
    plots.show()
    plots.show_run(data)
    for _ in range(10):
        plots.refresh()
        qtbot.wait(30)
    view = plots.step_plot.getPlotItem().getViewBox()
    assert view.height() < 160  # as short as on the page
    inside = view.sceneBoundingRect()
    median_y = view.mapViewToScene(QPointF(0, plots.median_line.value())).y()
    labels = [label for _edge, label, _row in plots._shade_labels]
    assert [label.toPlainText() for label in labels][:1] == ["warm-up"]
    for label in labels:
        box = label.sceneBoundingRect()
        assert inside.top() <= box.top() and box.bottom() <= inside.bottom(), label.toPlainText()
        assert box.bottom() < median_y, label.toPlainText()


def test_a_finding_with_a_long_op_path_wraps_in_its_column(qtbot):
    """The issue 22 walk: an OP_SLOWER finding naming "Iterator::Root::Prefetch::ForeverRepeat[1]::…" widened the
    XLA page's left column past the window at 1280 px, its sentences cut and the column scrolling sideways."""
    message = ("input got slower under XLA: 0.86 → 1.16 ms per step (+35%; its share of the op time 58% → 98%); "
               "most of it in Iterator::Root::Prefetch::ForeverRepeat[1]::Prefetch,"
               "Iterator::Root::Prefetch::ForeverRepeat[1]::Prefetch::ParallelMapV2")
    panel = FindingsPanel()
    qtbot.addWidget(panel)
    panel.set_findings([{"code": "OP_SLOWER", "severity": "warning", "where": "input", "message": message}])
    label = panel.cards[0].message
    assert label.minimumSizeHint().width() < 300  # wraps inside a 400 px column
    assert label.text().replace("\u200b", "") == message  # the words are the finding's, unchanged


@pytest.mark.parametrize("where", ["sequential/dense_1", "functional/transformer_block_3/multi_head_attention/softmax"])
def test_a_findings_location_wraps_whole_in_a_narrow_card(qtbot, where):
    """The issue 22 walk at 1024x640: HEAD_NOT_FLOAT32's location read "sequential/dense_" (the label was cut to
    what the header row had left)."""
    from PySide6.QtWidgets import QVBoxLayout, QWidget

    column = QWidget()
    QVBoxLayout(column).setContentsMargins(0, 0, 0, 0)
    panel = FindingsPanel()
    column.layout().addWidget(panel)
    qtbot.addWidget(column)
    panel.set_findings([{"code": "HEAD_NOT_FLOAT32", "severity": "error", "where": where,
                         "message": "output layer computes its softmax in bfloat16", "fix": "dtype='float32'"}])
    column.resize(300, 400)  # the left column at 1024 px
    column.show()
    qtbot.waitExposed(column)
    card = panel.cards[0]
    label = card.where
    assert label.text().replace("\u200b", "") == where and label.toolTip() == where
    assert card.width() <= column.width()
    assert label.width() >= label.minimumSizeHint().width()  # no word of it cut
    assert label.heightForWidth(label.width()) <= label.height(), "its lines are cut"


def test_a_filling_code_block_shows_every_wrapped_line_after_the_window_narrows(qtbot):
    """The issue 22 walk: the Record page's "Changes to make" scrolled at 1024x640 with 230 px empty below it,
    after the window had been 1920 px wide: the block kept the height of its lines wrapped at the wide width."""
    from PySide6.QtWidgets import QVBoxLayout, QWidget

    from tfturbo_gui.code_block import CodeBlock

    text = "\n".join(f"# {i}. a change to make, explained in a sentence long enough to wrap in a narrow column"
                      for i in range(8))
    column = QWidget()
    layout = QVBoxLayout(column)
    block = CodeBlock(text, fill=True)
    layout.addWidget(block, 1)  # as the Record page lays it out, above a stretch
    layout.addStretch(0)
    qtbot.addWidget(column)
    column.resize(1400, 900)
    column.show()
    qtbot.waitExposed(column)
    qtbot.wait(30)
    column.resize(380, 900)  # room for every wrapped line below
    qtbot.waitUntil(lambda: block.editor.verticalScrollBar().maximum() == 0, timeout=2_000)
    assert block.editor.height() < 900
    assert block.editor.y() == block.copy_button.y()  # the code beside its Copy button, not centred below it


def test_the_run_card_shows_the_same_steps_per_s_as_the_compare_table():
    """The issue 22 walk: the baseline page said "Steady speed 894.9 steps/s" (1000 / median step) while the
    compare table said 812.4 steps/s (the steady windows' figure, `summary.steps_per_s`) for the same run."""
    from tfturbo.compare import steps_per_s_ci95
    from tfturbo_gui.cards import run_facts

    summary = RunSummary.from_dict({
        "status": "completed", "settings": {"batch_size": 50, "steps": 96}, "steps_completed": 96,
        "step_ms": {"median": 1.1174, "ci95": [1.0807, 1.1498], "n": 71},
        "throughput": {"samples_per_s": 40622.26, "ci95": [28327.15, 40622.26], "steps": 76, "seconds": 0.107,
                       "windows": 6},
        "steps_per_s": 812.445})
    facts = dict(run_facts(summary))
    # a weighted-median bootstrap over 6 windows put its upper end on the point ([566.5, 812.4] for 812.4): a
    # secondary figure shows no interval rather than a degenerate one (issue 22)
    assert facts["Steady speed"] == "812.4 steps/s"
    assert summary.step_rate == 40622.26 / 50
    assert steps_per_s_ci95(summary, None) == (summary.step_rate, None)
    # h42a walk: "473.8 steps/s" beside "median step 1.72 ms" (581/s) read as two speeds of one run: one speed,
    # the figure every speed-up compares; the median step said as a detail of it
    speeds = [label for label, value in facts.items() if "steps/s" in value or "/s" in value]
    assert speeds == ["Steady speed"], facts
    assert facts["Median step (detail)"].startswith("1.12 ms [1.08, 1.15]: the typical step alone")



def test_the_run_card_counts_a_runs_steps_in_whole_calls():
    """h42a walk: 450 steps at 22 steps per call train 462 (whole calls): the card said "462 of 450"."""
    from tfturbo_gui.cards import run_facts

    def steps(done: int) -> str:
        return dict(run_facts(RunSummary.from_dict({
            "status": "completed", "settings": {"steps": 450, "steps_per_execution": 22, "batch_size": 64},
            "steps_completed": done, "steps_per_sample": 22})))["Steps"]

    assert steps(462) == "462"
    assert steps(220) == "220 of 462"  # stopped early: out of what it would have trained


def test_the_confirmations_bars_have_a_scale_in_their_units(qtbot):
    """Issue 42 walk: the Re-measure & compare page's speed and accuracy bars had no scale, so an interval drawn
    was a shape without a number. Each bar has ticks under it labelled in its unit, and the drawn interval lies
    within them."""
    from tfturbo_gui.verdict_view import VerdictView

    view = VerdictView()
    qtbot.addWidget(view)
    view.resize(420, 200)
    document = {"kept": True, "reason": "faster",
                "speed": {"ratio": 1.42, "ci95": [1.31, 1.55], "verdict": "faster", "replicates": 4},
                "accuracy": {"metric": "val_accuracy", "delta": -0.001, "ci95": [-0.004, 0.002],
                             "verdict": "within tolerance", "n_examples": 1000, "paired": True}}
    view.set_verdict(document, "float32 + XLA, batch 64")
    view.show()
    qtbot.waitExposed(view)
    speed = view.speed_bar.ticks()
    assert len(speed) >= 2 and all(label.endswith("×") for _, label in speed), speed
    assert speed[0][0] <= 1.0 and speed[-1][0] >= 1.5  # the reference and the interval inside the scale's span
    accuracy = view.accuracy_bar.ticks()
    assert len(accuracy) >= 2 and all(label.endswith(" pp") for _, label in accuracy), accuracy
    assert ("+0.0 pp" in [label for _, label in accuracy]) == any(v == 0 for v, _ in accuracy)
    assert view.speed_bar.height() >= view.speed_bar.BAR_H + view.speed_bar.fontMetrics().height()
    assert view.speed_bar.grab().width() == view.speed_bar.width()  # paints


def test_a_findings_fix_names_the_cards_box_never_a_command_line_flag(qtbot):
    """Issue 42 walk (h42w): the Mixed precision page's HEAD_NOT_FLOAT32 card ended its fix with
    "# or let tfturbo do it (any model): tfturbo run ... --fix-head (ab/tune settings: fix_head=on)", right above
    its own "Fix it in the next run" box."""
    advice = ('# mlp.py line 18:\nlayers.Dense(1, activation="sigmoid", dtype="float32"),\n'
              "# or let tfturbo do it (any model): tfturbo run ... --fix-head (ab/tune settings: fix_head=on)")
    panel = FindingsPanel()
    qtbot.addWidget(panel)
    panel.set_findings([dict(HEAD, fix=advice)])
    card = panel.cards[0]
    assert card.fix_block.text() == '# mlp.py line 18:\nlayers.Dense(1, activation="sigmoid", dtype="float32"),'
    assert card.checkbox is not None  # the box that does it is on the card
    panel.set_findings([dict(HEAD, fix="compute the output layer in float32: --fix-head (ab/tune settings: "
                                       "fix_head=on)")])  # a training failure's one-line fix
    assert panel.cards[0].fix_block.text() == "compute the output layer in float32: the “float32 output layer” box"


def test_the_wheel_scrolls_the_page_past_a_combo_box_and_never_changes_it(qtbot):
    """Issue 42 walk: scrolling the compare page with the wheel switched "Align curves by" from samples to
    training time when the pointer passed over it, and the page stopped scrolling."""
    from PySide6.QtCore import QPoint, QPointF
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtWidgets import QApplication, QComboBox, QScrollArea, QVBoxLayout, QWidget

    from tfturbo_gui import wheel_guard

    wheel_guard.install(QApplication.instance())
    area, body = QScrollArea(), QWidget()
    layout = QVBoxLayout(body)
    combo = QComboBox()
    combo.addItems(["samples", "training time"])
    layout.addWidget(combo)
    layout.addSpacing(3000)
    area.setWidget(body)
    area.resize(300, 200)
    qtbot.addWidget(area)
    area.show()
    qtbot.waitExposed(area)

    def wheel() -> None:
        centre = QPointF(combo.rect().center())
        QApplication.sendEvent(combo, QWheelEvent(centre, QPointF(combo.mapToGlobal(QPoint(5, 5))), QPoint(),
                                                  QPoint(0, -120), Qt.MouseButton.NoButton,
                                                  Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase,
                                                  False))

    wheel()
    assert combo.currentIndex() == 0 and area.verticalScrollBar().value() > 0  # the page scrolled, not the box
    combo.setFocus()  # a box the user clicked into takes the wheel
    qtbot.waitUntil(combo.hasFocus)
    wheel()
    assert combo.currentIndex() == 1
