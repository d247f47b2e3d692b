"""`env` and the policy rules it applies (tutorial step 2), plus the step-time record."""

from __future__ import annotations

import json

import pytest

from tfturbo.settings import POLICIES
from tests.conftest import run_cli
from trainer_backend.hardware import device_label, recommend_policy
from trainer_backend.measure import StepRecord


def test_env_lists_the_cpu_and_recommends_a_policy():
    proc = run_cli("env", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["devices"][0]["type"] == "CPU" and doc["devices"][0]["cores"] >= 1
    assert doc["tensorflow"].startswith("2.") and doc["keras"].startswith("3.")
    assert doc["recommended_policy"] in POLICIES and doc["reason"]
    assert doc["ceiling"]["float32"] > 1e8  # measured FLOP/s of a large float32 matmul


@pytest.mark.parametrize("devices, policy, says", [
    ([{"type": "GPU", "name": "Tesla V100", "compute_capability": "7.0"}], "mixed_float16", "Volta"),
    ([{"type": "GPU", "name": "T4", "compute_capability": "7.5"}], "mixed_float16", "float16 Tensor Cores"),
    ([{"type": "GPU", "name": "A100", "compute_capability": "8.0"}], "mixed_bfloat16", "mixed_float16 is the alternative"),
    ([{"type": "GPU", "name": "H100", "compute_capability": "9.0"}], "mixed_bfloat16", "bfloat16"),
    ([{"type": "GPU", "name": "P100", "compute_capability": "6.0"}], "float32", "no Tensor Cores"),
    ([{"type": "TPU", "name": "TPU:0"}, {"type": "CPU"}], "mixed_bfloat16", "TPU"),
    ([{"type": "CPU", "native_bf16": False}], "float32", "no native bfloat16"),
    ([{"type": "CPU", "native_bf16": True, "bf16_flags": ["amx_bf16"]}], "mixed_bfloat16", "amx_bf16"),
])
def test_policy_follows_the_hardware(devices, policy, says):
    got, reason = recommend_policy(devices)
    assert got == policy and says in reason


def test_device_label_names_the_accelerator():
    gpus = [{"type": "CPU", "name": "Xeon", "cores": 8}, {"type": "GPU", "name": "A100", "compute_capability": "8.0"}]
    assert device_label(gpus) == "GPU: A100 (compute capability 8.0)"
    assert device_label([{"type": "CPU", "name": "EPYC", "cores": 2, "logical_devices": 2}]) == \
        "CPU: EPYC (2 cores, 2 logical devices)"


def test_steady_samples_exclude_warmup_and_the_profile_window():
    record = StepRecord()
    for step, ms in enumerate([900.0, 40.0] + [10.0] * 30, start=1):
        record.add(step, ms, float(step))
    record.first_steady = record.find_steady_start()
    assert record.first_steady == 3
    record.excluded = (10, 15)
    assert record.steady_ms() == [10.0] * (30 - 6)
    assert record.start_of(3) == 3.0 and record.start_of(99) is None


def test_long_runs_are_summarised_from_an_even_subsample():
    from trainer_backend.measure import MAX_STAT_SAMPLES, step_time, thin

    samples = [10.0 + (i % 7) for i in range(3 * MAX_STAT_SAMPLES + 1)]
    used = thin(samples)
    assert len(used) <= MAX_STAT_SAMPLES and used[0] == samples[0] and used[1] == samples[4]
    st = step_time(samples)
    assert (st["n"], st["n_steady"]) == (len(used), len(samples)) and st["median"] == 13.0
    assert thin(samples[:100]) == samples[:100]


def test_a_run_that_ends_in_the_profiler_window_before_settling_keeps_its_earlier_steps():
    """A short, noisy run: no steady stretch was seen before the profiler started, and the run ended with it.
    The steps before the profiler are its steady state (the profiler's own stay out), not nothing."""
    from tfturbo.protocol import EventWriter
    from tfturbo.settings import RunSettings
    from trainer_backend.detectors.base import RunContext
    from trainer_backend.monitor import RunMonitor

    class Memory:
        def read(self):
            return {"peak_bytes": 1, "kind": "host"}

    settings = RunSettings("w", steps=30)
    monitor = RunMonitor(EventWriter(), settings, [], RunContext(settings, None, None), Memory())
    ms = [900.0, 5.0, 9.0, 4.0, 12.0, 3.0] * 4  # never 5 steps within 1.5x of each other
    for i, v in enumerate(ms, start=1):
        monitor.record.add(i, v, float(i))
    monitor.on_profile_start(25)
    monitor.on_profile_stop(25, 30)
    monitor.on_train_end(30)
    assert monitor.record.first_steady is not None and monitor.record.first_steady <= 24
    assert monitor.record.steady_ms()  # something to measure


def test_cpu_flags_are_read_from_the_first_processor_of_cpuinfo(tmp_path):
    """The bfloat16 decision rests on these flags (oneDNN agrees: on an AVX2-only host it reports `isa:Intel AVX2`)."""
    from trainer_backend import hardware

    block = "processor\t: {i}\nmodel name\t: AMD EPYC 9B14\nflags\t\t: fpu sse2 avx2 avx512f avx512_bf16 {extra}\n\n"
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(block.format(i=0, extra="amx_bf16") + block.format(i=1, extra=""))
    name, flags = hardware._cpu_info(cpuinfo)
    assert name == "AMD EPYC 9B14" and {"avx512_bf16", "amx_bf16"} <= flags
    assert hardware._cpu_info(tmp_path / "missing")[1] == set()


def test_progress_counts_to_the_steps_the_run_trains_in_whole_calls():
    """h42a walk: a run of 450 steps at 22 steps per call (steps_per_execution) read "step 462 / 450". Keras trains
    whole calls, so the run trains 462: its progress counts to that, never past its total."""
    import io
    import json

    from tfturbo import protocol
    from tfturbo.protocol import EventWriter
    from tfturbo.settings import RunSettings
    from trainer_backend.detectors.base import RunContext, Window
    from trainer_backend.monitor import RunMonitor

    out = io.StringIO()
    settings = RunSettings("w", steps=450, steps_per_execution=22)
    monitor = RunMonitor(EventWriter(sinks=[out]), settings, [], RunContext(settings, None, None), None)
    monitor.record.steps_per_sample = 22  # what the instrument reads off the compiled model
    for done in (22, 440, 462):
        monitor._progress(done, Window([done], [1.0], None, None, None))
    progress = [e for e in map(json.loads, out.getvalue().splitlines()) if e["type"] == protocol.PROGRESS]
    assert [(e["step"], e["total"]) for e in progress] == [(22, 462), (440, 462), (462, 462)]
    assert progress[-1]["eta_s"] == 0
