"""Several devices: jit_compile under a strategy across devices, scaling without it, local workers on a GPU host
— on the simulated accelerator."""

from __future__ import annotations

import os

import pytest

from tfturbo.environment import Environment
from tfturbo.errors import UserError
from tfturbo.protocol import EventWriter
from tfturbo.scaling import ScalingMeasurement, ScalingResult, render
from tfturbo.settings import RunSettings


class _TwoReplicas:
    """A MirroredStrategy over two GPUs, as far as `prepare` asks (the simulated GPUs cannot hold variables)."""

    num_replicas_in_sync = 2

    def scope(self):
        import contextlib

        return contextlib.nullcontext()


def test_mirrored_with_jit_on_two_gpus_is_refused_with_one_line(accelerator, monkeypatch):
    """Before: refused only when no GPU was listed; on GPUs it went on to Keras' strategy.run inside the
    XLA-compiled step, which fails across devices (keras-team/keras#19005)."""
    from trainer_backend import distribute
    from trainer_backend.commands import run

    accelerator("GPU", count=2)
    monkeypatch.setattr(distribute, "strategy_for", lambda settings: _TwoReplicas())
    with pytest.raises(UserError) as refused:
        run.prepare(RunSettings("builtin:mlp", strategy="mirrored", jit_compile=True, steps=20), EventWriter())
    assert "--jit with --strategy mirrored (2 replicas)" in refused.value.problem
    assert "keras-team/keras#19005" in refused.value.problem and "--no-jit" in refused.value.fix
    assert "\n" not in refused.value.problem


def test_multiworker_with_jit_is_refused_before_any_worker_starts(monkeypatch):
    from trainer_backend import distribute, multiworker

    def start(*_a):
        raise AssertionError("workers started")

    monkeypatch.setattr(multiworker, "start", start)
    with pytest.raises(UserError, match="--jit with --strategy multiworker"):
        distribute.before_devices(RunSettings("builtin:mlp", strategy="multiworker", workers=2, jit_compile=True),
                                  EventWriter())


def test_one_device_keeps_jit():
    from trainer_backend.distribute import refuse_jit_across_devices

    refuse_jit_across_devices(RunSettings("builtin:mlp", strategy="mirrored", devices=1, jit_compile=True), 1)


def test_scaling_measures_the_kept_configuration_without_jit_and_says_so():
    """Before: the wizard's scaling measured the best kept settings as they were, XLA included, i.e. the runs the
    backend now refuses (and Keras cannot train)."""
    best = RunSettings("builtin:mlp", policy="mixed_bfloat16", jit_compile=True, batch_size=64, steps=60)
    measurement = ScalingMeasurement(best, "mirrored", [1, 2])
    planned = measurement.next_run()
    assert planned.settings.jit_compile is False and planned.settings.policy == "mixed_bfloat16"
    assert "without XLA" in measurement.note and "keras-team/keras#19005" in measurement.note
    result = measurement.result()
    assert result.note == measurement.note and "Measured without XLA" in render(result)
    assert "Measured without XLA" in result.interpretation()
    assert ScalingResult.from_dict(result.to_dict()).note == result.note
    plain = ScalingMeasurement(best.with_(jit_compile=False), "mirrored", [1, 2])
    assert plain.note == "" and "XLA" not in render(plain.result())


def test_the_wizards_scaling_section_says_it_measures_without_xla_before_it_runs(qtbot, tmp_path):
    from tfturbo_gui.scaling_section import ScalingSection
    from tests.gui.gui_helpers import fake_launcher

    class Session:
        environment = Environment.from_dict({"devices": [{"type": "CPU"}, {"type": "GPU"}, {"type": "GPU"}]})
        baseline = object()
        best = type("Rung", (), {"settings": RunSettings("builtin:mlp", jit_compile=True)})()

        def scaling_path(self):
            return tmp_path

    section = ScalingSection(Session(), fake_launcher())
    qtbot.addWidget(section)
    section.update_controls()
    assert section.button.isEnabled()
    assert "measured without XLA (jit_compile=True)" in section.about.text()


class _Proc:
    def __init__(self, argv, env, **_kw):
        self.env, self.pid, self.stdin = env, 4242, open(os.devnull, "wb")

    def poll(self):
        return None

    def send_signal(self, _sig):
        pass

    def wait(self, timeout=None):
        return 0


def test_local_workers_on_a_gpu_host_each_get_their_own_gpu_and_grow_their_memory(accelerator, monkeypatch):
    """Before: every local worker saw every GPU and TensorFlow mapped nearly all of each GPU's memory per process,
    so the workers collided."""
    from trainer_backend import multiworker

    accelerator("GPU", count=2)
    for name in ("TF_CONFIG", "TF_FORCE_GPU_ALLOW_GROWTH"):
        monkeypatch.delenv(name, raising=False)
    started = []
    monkeypatch.setattr(multiworker.subprocess, "Popen", lambda argv, env, **kw: started.append(_Proc(argv, env))
                        or started[-1])
    cluster = multiworker.LocalCluster(RunSettings("builtin:mlp", strategy="multiworker", workers=2), EventWriter())
    try:
        cluster.start()
        assert started[0].env["CUDA_VISIBLE_DEVICES"] == "1" and started[0].env["TF_FORCE_GPU_ALLOW_GROWTH"] == "true"
        assert os.environ["CUDA_VISIBLE_DEVICES"] == "0"  # the chief, set before TensorFlow sees its devices
        assert os.environ["TF_FORCE_GPU_ALLOW_GROWTH"] == "true"
    finally:
        cluster.close()


def test_gpu_slices_split_the_visible_gpus():
    from trainer_backend.multiworker import gpu_slices

    assert gpu_slices(["0", "1", "2", "3"], 2) == ["0,1", "2,3"]
    assert gpu_slices(["4", "5"], 2) == ["4", "5"]  # CUDA_VISIBLE_DEVICES's own ids
    assert gpu_slices(["0"], 3) == ["0", "0", "0"]  # fewer GPUs than workers: shared, memory growth lets them
    assert gpu_slices([], 2) == []  # a CPU host: nothing to set
