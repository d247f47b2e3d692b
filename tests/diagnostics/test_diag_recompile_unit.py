"""RECOMPILE_STORM from step times alone: compile spikes after warm-up count, the profiler's own cost does not."""

from tfturbo.settings import RunSettings
from trainer_backend.detectors.base import RunContext, Window
from trainer_backend.detectors.recompile import RecompileStorm


def feed(spike_steps, profile_steps=None):
    ctx = RunContext(RunSettings(workload="w", jit_compile=True), model=None, train_ds=None, warmup_end=5)
    if profile_steps:
        ctx.extra["profile_steps"] = profile_steps
    detector = RecompileStorm()
    detector.on_start(ctx)
    steps = list(range(1, 201))
    ms = [900.0 if s in spike_steps else 2.0 for s in steps]
    found = []
    for i in range(0, 200, 20):
        found += detector.on_window(ctx, Window(steps[i:i + 20], ms[i:i + 20], 0.5, None, None))
    return found


def test_recurring_compile_spikes_after_warmup_are_a_storm():
    [finding] = feed({40, 80, 120, 160})
    assert finding.code == "RECOMPILE_STORM" and finding.data["spike_steps"] == [40, 80, 120]  # raised live, once


def test_spikes_at_the_profiler_window_edges_are_not_a_storm():
    assert feed({29, 30, 50, 51}, profile_steps=(30, 50)) == []


def test_one_or_two_new_shapes_are_not_a_storm():
    assert feed({40, 41}) == []


def feed_series(ms, window=20):
    ctx = RunContext(RunSettings(workload="w", jit_compile=True), model=None, train_ds=None, warmup_end=5)
    detector = RecompileStorm()
    detector.on_start(ctx)
    steps = list(range(1, len(ms) + 1))
    found = []
    for i in range(0, len(ms), window):
        found += detector.on_window(ctx, Window(steps[i:i + window], ms[i:i + window], 0.5, None, None))
    return found


def test_a_few_long_compilations_that_cost_real_time_are_a_storm():
    """Six one-second spikes among 285 steps of 20 ms (2.1%): the median hides them, the time lost does not."""
    ms = [20.0 * (1 + 0.05 * ((i * 7) % 5 - 2)) for i in range(290)]
    for s in (40, 80, 120, 180, 240, 280):
        ms[s] = 1000.0
    [finding] = feed_series(ms)
    assert finding.code == "RECOMPILE_STORM" and finding.data["time_lost_s"] > 2.5
    assert "of the steady training time" in finding.message


def test_spikes_that_cost_little_time_are_not_a_storm():
    """Eight 150 ms hiccups among 2000 steps of 20 ms lose 1.0 s of 40 s: under the 3% line."""
    ms = [20.0] * 2000
    for s in range(100, 2000, 250):
        ms[s] = 150.0
    assert feed_series(ms) == []


def test_three_compilations_in_a_long_run_are_under_the_documented_two_percent():
    """Issue 42: an ERROR for 3 spikes in 1,134 steady steps (0.26%; docs/FINDINGS.md: at least 2% of the steady
    steps), though each compilation cost seconds; a spike every 45 steps (2.2%) is a storm."""
    ms = [20.0] * 1140
    for s in (300, 600, 900):
        ms[s] = 3000.0
    assert feed_series(ms) == []
    for s in range(100, 1140, 45):
        ms[s] = 3000.0
    [finding] = feed_series(ms)  # raised live, once the spikes so far are 2% of the steady steps so far
    assert finding.code == "RECOMPILE_STORM"
    assert finding.data["spikes"] >= 0.02 * finding.data["steady_steps"]
