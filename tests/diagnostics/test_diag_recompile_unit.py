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
