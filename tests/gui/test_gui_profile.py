"""Where the time goes, on the wizard's pages (fake backend): the baseline's op categories and top ops, every
rung's change against the baseline per category, and the profile's findings."""

from tests.gui.gui_helpers import go_next, make_window
from PySide6.QtCore import Qt

from tfturbo import profile as prof
from tfturbo_gui.step_status import PASSED

LEFT = Qt.MouseButton.LeftButton


def measure_baseline(qtbot, window):
    go_next(qtbot, window, 1)
    baseline = window.pages[1]
    assert baseline.profile_view.isHidden()  # nothing to show before the run
    qtbot.mouseClick(baseline.measure_button, LEFT)
    qtbot.waitUntil(lambda: baseline.status == PASSED, timeout=60_000)
    return baseline


def run_precision(qtbot, window):
    go_next(qtbot, window, 2)
    precision = window.pages[2]
    qtbot.waitUntil(lambda: precision.run_button.isEnabled(), timeout=20_000)
    qtbot.mouseClick(precision.run_button, LEFT)
    qtbot.waitUntil(lambda: precision.rung is not None and precision.rung.decision is not None, timeout=90_000)
    return precision


def test_baseline_shows_where_the_time_goes_and_a_rung_the_change(qtbot, tmp_path):
    window = make_window(qtbot, tmp_path, workload="builtin:transformer")
    baseline = measure_baseline(qtbot, window)
    view = baseline.profile_view
    assert view.isVisible() and view.tabs.isVisible()
    assert view.shown[-1] == prof.MATMUL  # the first category is drawn on top
    assert view.summary.text().startswith("Op time ") and "; 0% of matmul/attention time in 16-bit" in view.summary.text()
    assert view.table.rowCount() >= 4
    assert view.table.item(0, 0).text() == "functional_1/dense_1/Tensordot/MatMul"  # the caller prefix is dropped
    assert view.table.item(0, 2).text() == "matmul/conv"
    assert "functional_1/dense_1/Tensordot/MatMul" in view.category_tooltip(prof.MATMUL)  # on hover
    assert view.change.isHidden()
    # issue 42 walk: the bars' words were shares ("42%") at the ends of bars on a ms axis; each says its ms first
    import pyqtgraph as pg
    words = [item.toPlainText() for item in view.chart.getPlotItem().items if isinstance(item, pg.TextItem)]
    assert len(words) == len(view.shown) and all(w.split(" ms (")[1].endswith("%)") for w in words), words
    assert view.chart.getPlotItem().getAxis("bottom").labelText.startswith("ms per profiled step")

    precision = run_precision(qtbot, window)
    pview = precision.profile_view
    assert pview.isVisible()
    text = pview.change.text()
    # compared with the profile of the configuration it was measured against: the baseline's own run here (a
    # paired trial trains no A the full length, so no reference is profiled beside it)
    assert text.startswith("Against the baseline: matmul/conv −45%"), text
    assert "casts +" in text and "of step" in text
    assert "reference:" in pview.category_tooltip(prof.MATMUL)
    assert pview.legend.isVisible()
    # the legend is a line above the chart, never on the bars (in the chart it covered "input 29%" at 1024×640)
    window.resize(1024, 640)
    qtbot.wait(200)
    assert pview.legend.geometry().bottom() < pview.chart.geometry().top()
    assert pview.legend.text().count("&#9632;") == 2 and "reference" in pview.legend.text()
    pview.grab().save(str(tmp_path / "profile.png"))
    assert "MATMUL_NOT_16BIT" not in precision.findings.codes()


def test_a_16bit_policy_whose_matmuls_stay_float32_says_so(qtbot, tmp_path):
    window = make_window(qtbot, tmp_path, workload="builtin:float32-heavy")
    measure_baseline(qtbot, window)
    precision = run_precision(qtbot, window)
    assert "MATMUL_NOT_16BIT" in precision.findings.codes()
    assert "0% of matmul/attention time in 16-bit" in precision.profile_view.summary.text()


def test_an_xla_profile_beside_one_without_xla_shows_its_own_categories_and_the_time_per_step(qtbot):
    """Issue 22 walk: "Where the time goes" under XLA showed −100% / +1473% and an axis labelled "(x0.001)".
    XLA's fused clusters make the categories incomparable: the run's own bars, the totals compared, no SI
    rescaling of an axis already in ms."""
    from tfturbo_gui.profile_view import ProfileView

    view = ProfileView()
    qtbot.addWidget(view)
    base = prof.build([("MatMul", "dense/MatMul", 20.0, 10, None), ("AddV2", "add", 10.0, 10, None)], 10,
                      prof.SOURCE_OP_STATS, wall_ms_per_step=0.004)
    xla = prof.build([("dot_add_fusion.1", "dot_add_fusion.1", 25.0, 10, None)], 10, prof.SOURCE_XLA_TRACE,
                     wall_ms_per_step=0.003)
    view.set_profile(xla, base, "the baseline")
    view.show()
    text = view.change.text()
    assert text.startswith("Against the baseline: op time 0.003 → 0.0025 ms per step (−17%); the profiled steps "
                           "took 0.004 → 0.003 ms (−25%). (XLA fuses ops into clusters, so the op categories"), text
    assert "−100" not in text
    assert view.shown == [prof.MATMUL] and not view.legend.isVisible()  # the XLA run's own category only
    assert "reference:" not in view.category_tooltip(prof.MATMUL)
    axis = view.chart.getPlotItem().getAxis("bottom")
    assert "x0.001" not in axis.labelString() and "(x" not in axis.labelString()
    comparable = prof.build([("MatMul", "dense/MatMul", 10.0, 10, None)], 10, prof.SOURCE_OP_STATS)
    view.set_profile(comparable, base, "the baseline")
    assert view.legend.isVisible() and "reference:" in view.category_tooltip(prof.MATMUL)


def test_the_profiles_input_share_says_it_is_not_the_probes_wait(qtbot):
    """Issue 42: "Where the time goes" showed input 57% beside the probe's "0% waiting for input". The input
    share is the tf.data pipeline's own work on its threads (beside the step when it prefetches), not a wait: the
    view says so beside it, and says nothing when the profile holds no input time."""
    from tfturbo_gui.profile_view import ProfileView

    view = ProfileView()
    qtbot.addWidget(view)
    busy = prof.build([("MatMul", "dense/MatMul", 4.3e4, 10, None),
                       ("Dataset", "Iterator::Root::Prefetch", 5.7e4, 10, None)], 10, prof.SOURCE_OP_STATS)
    view.set_profile(busy)
    said = view.summary.text()
    assert "Input is the tf.data pipeline's own work, summed over its threads" in said
    assert "not time the step waited for data (the input probe measures that wait)" in said
    view.set_profile(prof.build([("MatMul", "dense/MatMul", 4.3e4, 10, None)], 10, prof.SOURCE_OP_STATS))
    assert "tf.data" not in view.summary.text()


def test_a_new_trial_does_not_show_the_last_trials_profile_while_it_runs(qtbot, tmp_path):
    """Issue 42 walk (h42w): measuring steps_per_execution on the XLA page showed the XLA trial's "Where the time
    goes" (input 95%) under its own running plots; the new trial's profile appears once it is judged."""
    from tfturbo_gui.step_status import RUNNING

    window = make_window(qtbot, tmp_path, workload="builtin:mlp")
    measure_baseline(qtbot, window)
    precision = run_precision(qtbot, window)
    first = precision.rung
    assert precision.profile_view.isVisible()
    qtbot.waitUntil(lambda: precision.run_button.isEnabled(), timeout=20_000)
    qtbot.mouseClick(precision.run_button, LEFT)  # the same page's next trial
    assert precision.status == RUNNING and precision.rung is not first
    assert precision.profile_view.isHidden()
    qtbot.waitUntil(lambda: precision.rung.decision is not None, timeout=90_000)
    assert precision.profile_view.isVisible()
