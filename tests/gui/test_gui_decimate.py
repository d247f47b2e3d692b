"""The step-time curve's min/max decimation: bounded points, every spike kept, only new steps read."""

import numpy as np

from tfturbo_gui.decimate import PeakDecimator


def noisy_steps(n, seed=3):
    """Autocorrelated step times with slow outliers, as a busy machine gives them."""
    rng = np.random.default_rng(seed)
    ar = np.zeros(n)
    for i in range(1, n):
        ar[i] = 0.9 * ar[i - 1] + rng.normal(0, 0.05)
    y = 1.4 * np.exp(ar)
    y[rng.choice(n, 25, replace=False)] *= 30  # stalls
    return np.arange(1, n + 1, dtype=float), y


def test_a_growing_curve_keeps_every_spike_and_a_bounded_number_of_points():
    x, y = noisy_steps(300_000)
    dec = PeakDecimator(target=512)
    for end in list(range(700, len(x), 7_000)) + [len(x)]:
        out_x, out_y = dec.update(x[:end], y[:end])
    assert len(out_x) <= 4 * 512 + dec.block  # two points per block, plus the unfinished block's steps
    assert np.nanmax(out_y) == y.max() and np.nanmin(out_y) == y.min()
    for spike in np.flatnonzero(y > 20):  # each stall is the maximum drawn at its block's position
        block_start = x[spike - spike % dec.block]
        drawn = out_y[out_x == block_start] if spike < dec.done else out_y[out_x == x[spike]]
        assert drawn.max() >= y[spike]
    assert np.all(np.diff(out_x) >= 0)


def test_incremental_blocks_equal_the_blocks_of_the_whole_curve():
    x, y = noisy_steps(40_000, seed=5)
    y[100:140] = np.nan  # steps without a time: skipped, never hiding their neighbours
    dec = PeakDecimator(target=256)
    for end in range(333, len(x) + 333, 333):
        dec.update(x[:end], y[:end])
    blocks = y[:dec.done].reshape(-1, dec.block)
    lo, hi = np.fmin.reduce(blocks, axis=1), np.fmax.reduce(blocks, axis=1)
    out_x, out_y = dec.update(x, y)
    n = len(lo)
    assert np.array_equal(out_y[0:2 * n:2], lo, equal_nan=True) and np.array_equal(out_y[1:2 * n:2], hi,
                                                                                   equal_nan=True)
    assert np.array_equal(out_x[0:2 * n:2], x[:dec.done:dec.block])


def test_a_stored_run_given_at_once_is_decimated_in_one_pass_and_a_shorter_curve_starts_again():
    x, y = noisy_steps(100_000)
    dec = PeakDecimator(target=1024)
    out_x, _ = dec.update(x, y)
    assert dec.block == 64 and len(out_x) <= 4 * 1024 + 64
    out_x, out_y = dec.update(x[:10], y[:10])
    assert list(out_x) == list(x[:10]) and list(out_y) == list(y[:10])


def test_the_live_plot_draws_decimated_step_times_and_every_step_once_the_user_zooms(qtbot):
    from tfturbo_gui.live_plots import RunPlots
    from tfturbo_gui.run_data import RunData

    x, y = noisy_steps(60_000)
    data = RunData("r")
    data.ingest([{"type": "phase", "phase": "training", "step": 1},
                 {"type": "steps", "step": x.astype(int).tolist(), "step_ms": y.tolist()},
                 {"type": "progress", "step": 60_000, "total": 60_000}])
    plots = RunPlots()
    qtbot.addWidget(plots)
    plots.show_run(data)
    curve = plots.curves["step_ms"][0]
    assert plots.plotted_lengths()["step_ms"] == [60_000]  # every step is represented...
    assert len(curve.xData) < 9_000 and curve.yData.max() == y.max()  # ...by its blocks' min and max
    view = plots.step_plot.getPlotItem().getViewBox()
    view.setRange(xRange=(1000, 1200), padding=0)
    view.sigRangeChangedManually.emit(view.state["mouseEnabled"])  # a wheel or drag
    plots.refresh()
    assert len(curve.xData) == 60_000  # zoomed in: the detail is there
    button = plots.step_plot.getPlotItem().autoBtn
    button.clicked.emit(button)  # "A": back to the fitted view
    assert len(curve.xData) < 9_000
