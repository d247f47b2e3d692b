"""Device memory and step times on the simulated accelerator: the larger-batch search's budget, batch-size arms
in processes of their own, memory pressure said, and per-step times from the drained windows."""

from __future__ import annotations

import pytest

from tests.accelerator.simulated import GIB
from tfturbo.settings import RunSettings, can_share_process
from tfturbo.tune.batch import NOT_FASTER, next_size


def test_on_a_gpu_the_study_has_a_memory_budget_for_the_larger_batch(accelerator, no_matmuls, tmp_path):
    """Before: available memory was None on any accelerator, so the batch search grew blind until a run failed."""
    from tfturbo.tune.engine import StudyEngine, TuneOptions
    from tfturbo.tune.study import Study
    from tfturbo.environment import Environment
    from trainer_backend.commands.env import document

    accelerator("GPU", memory_total=40 * GIB)
    engine = StudyEngine(TuneOptions("builtin:mlp", tmp_path), Study(tmp_path, "builtin:mlp", {}))
    engine.record_environment(Environment.from_dict(document()))
    assert engine.decisions.available_memory == 40 * GIB and engine.on_accelerator
    step = next_size(256, [], peak=20 * GIB, available=engine.decisions.available_memory, memory_kind="device")
    assert step.batch_size == 408 and "largest that fits in 80% of the available device memory is about 408" \
        in step.reason


def test_batch_size_arms_never_share_a_process_on_an_accelerator():
    """A paired process holds both arms in one device allocator: the larger batch's peak would be the pair's.
    Before: paired wherever the settings allowed, on a GPU too."""
    a = RunSettings("builtin:mlp", batch_size=128)
    b = a.with_(batch_size=256, lr_scale=2.0)
    assert can_share_process(a, b) and not can_share_process(a, b, accelerator=True)
    assert can_share_process(a, a.with_(policy="mixed_bfloat16"), accelerator=True)  # same batch: they still pair


def test_the_study_engines_trials_know_the_device(accelerator, no_matmuls, tmp_path):
    from tfturbo.trials.trial import Trial
    from tfturbo.tune.engine import StudyEngine, TuneOptions
    from tfturbo.tune.study import Study
    from tfturbo.environment import Environment
    from trainer_backend.commands.env import document

    accelerator("GPU")
    engine = StudyEngine(TuneOptions("builtin:mlp", tmp_path), Study(tmp_path, "builtin:mlp", {}))
    engine.record_environment(Environment.from_dict(document()))
    a = RunSettings("builtin:mlp", batch_size=128)
    trial = Trial(a, a.with_(batch_size=256), accelerator=engine.on_accelerator)
    assert not trial.paired and Trial(a, a.with_(batch_size=256)).paired


def test_a_not_faster_size_near_the_devices_limit_is_said_to_be_possibly_memory_pressure():
    step = next_size(256, [(512, NOT_FASTER)], peak=20 * GIB, available=40 * GIB, memory_kind="device",
                     peaks={512: 38 * GIB})
    assert step.done and "peaked at 95% of the device's memory" in step.reason and "memory pressure" in step.reason
    far = next_size(256, [(512, NOT_FASTER)], peak=10 * GIB, available=40 * GIB, memory_kind="device",
                    peaks={512: 20 * GIB})
    assert "memory pressure" not in far.reason


# ------------------------------------------------------------------------------ step times

def _record(host_ms: list[float], windows: list[tuple[int, int, float]], drained: bool):
    from trainer_backend.measure import StepRecord

    record = StepRecord(drained=drained)
    t = 0.0
    for step, ms in enumerate(host_ms, start=1):
        record.add(step, ms, t)
        t += ms / 1000
    record.windows = windows
    return record


def _device_steps(n: int = 200, slow_until: int = 60):
    """A GPU run: the host stamps 1 ms per step after the first (it runs ahead; the device drains at each
    window's read), while the device takes 40 ms a step until `slow_until` (cuDNN autotuning, caches), then 10."""
    host = [2000.0] + [1.0] * (n - 1)
    windows = [(first, first + 9, (0.04 if first < slow_until else 0.01) * 10) for first in range(1, n, 10)]
    return host, windows


def test_on_an_accelerator_step_times_and_warm_up_come_from_the_drained_windows():
    """Before: step_ms and warm-up used the host's stamps of on_train_batch_begin, which on a GPU time the
    dispatch (here 1 ms) while the device takes 10 ms, and call the device's slow start steady."""
    from trainer_backend.measure import step_time

    host, windows = _device_steps()
    drained = _record(host, windows, drained=True)
    drained.first_steady = drained.find_steady_start()
    drained.settle()
    assert drained.first_steady >= 61  # after the device's slow windows
    assert step_time(drained.steady_ms(), drained.clock)["median"] == pytest.approx(10.0)
    assert step_time(drained.steady_ms(), drained.clock)["clock"] == "drained windows"
    host_only = _record(host, windows, drained=False)
    host_only.first_steady = host_only.find_steady_start()
    assert host_only.first_steady == 2 and step_time(host_only.steady_ms())["median"] == 1.0  # the CPU's rule


def _storm_ctx(accelerator: str | None):
    from trainer_backend.detectors.base import RunContext

    return RunContext(RunSettings("builtin:mlp", jit_compile=True), None, None, warmup_end=10,
                      extra={"accelerator": accelerator})


def _feed(detector, ctx, host, windows):
    from trainer_backend.detectors.base import Window

    findings = []
    for first, last, seconds in windows:
        findings += detector.on_window(ctx, Window(list(range(first, last + 1)), host[first - 1:last], None, None,
                                                   None, (first, last, seconds)))
    return findings + detector.on_end(ctx)


def test_a_host_waiting_for_the_gpu_is_no_recompile_storm():
    """Under XLA the host runs ahead, then waits 400 ms in whichever call finds the queue full; the drained
    windows show the device never stalled. Before: RECOMPILE_STORM from the host stamps alone."""
    from trainer_backend.detectors.recompile import RecompileStorm

    host = [1500.0] + [5.0] * 299
    for step in range(40, 300, 20):
        host[step - 1] = 400.0  # the host's wait, not a compilation
    windows = [(first, first + 19, 0.2) for first in range(1, 300, 20)]  # 10 ms a step on the device, drained
    assert [f.code for f in _feed(RecompileStorm(), _storm_ctx(None), host, windows)] == ["RECOMPILE_STORM"]  # CPU
    assert _feed(RecompileStorm(), _storm_ctx("GPU"), host, windows) == []


def test_a_real_recompilation_on_a_gpu_still_raises_the_storm():
    from trainer_backend.detectors.recompile import RecompileStorm

    host = [1500.0] + [10.0] * 299
    windows = []
    for first in range(1, 300, 20):
        spike = first + 10 if first >= 40 else None
        if spike:
            host[spike - 1] = 600.0  # a compilation: the host and the device both wait for it
        windows.append((first, first + 19, 0.2 + (0.59 if spike else 0.0)))
    (finding,) = _feed(RecompileStorm(), _storm_ctx("GPU"), host, windows)
    assert finding.code == "RECOMPILE_STORM"
