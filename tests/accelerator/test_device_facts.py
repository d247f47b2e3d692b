"""What tfturbo reads about a GPU or TPU — devices, memory, TF32, the matmul ceiling and MFU — on the simulated
accelerator (docs/MEASUREMENT.md, "What differs on an accelerator")."""

from __future__ import annotations

import pytest

from tests.accelerator.simulated import GIB
from trainer_backend import ceiling, hardware, step_flops


def test_env_on_an_a100_records_tf32_its_memory_budget_and_labels_the_float32_ceiling(accelerator, no_matmuls):
    """Before: no TF32 anywhere, the float32 ceiling unlabelled, and no memory budget on any accelerator
    ("available_bytes": None), so the larger-batch search had none."""
    from trainer_backend.commands.env import document

    accelerator("GPU", memory_total=80 * GIB, tf32=True)
    doc = document()
    gpu = next(d for d in doc["devices"] if d["type"] == "GPU")
    assert gpu["compute_capability"] == "8.0" and gpu["memory_total_bytes"] == 80 * GIB
    assert doc["accelerator"] == "GPU" and doc["tf32"] is True
    assert doc["memory"]["available_bytes"] == 80 * GIB and doc["memory"]["kind"] == "device"
    assert doc["ceiling_labels"]["float32"] == "float32 (TF32)" and doc["ceiling_labels"]["bfloat16"] == "bfloat16"
    assert doc["recommended_policy"] == "mixed_bfloat16"


def test_the_ceiling_is_cached_per_tf32_state(accelerator, no_matmuls):
    """TF32 on and off are two float32 ceilings (Tensor Core math or not): the cache key holds the state."""
    accelerator("GPU")
    devs = hardware.devices()
    ceiling.ceilings(devs, "GPU: A100", "2.21.0", tf32=True)
    assert len(no_matmuls) == 3
    ceiling.ceilings(devs, "GPU: A100", "2.21.0", tf32=True)
    assert len(no_matmuls) == 3  # cached
    ceiling.ceilings(devs, "GPU: A100", "2.21.0", tf32=False)
    assert len(no_matmuls) == 6  # TF32 off: measured again


def test_tf32_exists_only_on_ampere_and_later(accelerator):
    accelerator("GPU", cc=(7, 0), name="Tesla V100-SXM2-16GB")
    assert hardware.tf32_enabled(hardware.devices()) is None
    accelerator("GPU", cc=(9, 0), name="NVIDIA H100 80GB HBM3", tf32=False)
    assert hardware.tf32_enabled(hardware.devices()) is False


def test_without_nvml_the_budget_says_why_it_is_unknown(accelerator, monkeypatch):
    monkeypatch.setattr("shutil.which", lambda name: None)  # no nvidia-smi either
    accelerator("GPU", memory_total=None)
    memory = hardware.available_memory(hardware.devices())
    assert memory["available_bytes"] is None and "nvidia-ml-py" in memory["source"]


def test_the_memory_total_follows_cuda_visible_devices(accelerator, monkeypatch):
    """NVML numbers every GPU of the machine; TensorFlow's GPU:0 is the first CUDA_VISIBLE_DEVICES leaves."""
    sim = accelerator("GPU", count=4)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3")
    assert hardware.gpu_memory_total(0) == sim.memory_total
    assert hardware.gpu_memory_total(1) is None  # only one visible


def test_a_tpus_memory_is_the_devices_never_the_hosts_rss(accelerator):
    """Before: MemoryMeter read GPU:0 or else the host's RSS, so a TPU run's peak was the host's."""
    sim = accelerator("TPU", count=8, peak=3 * GIB)
    meter = hardware.MemoryMeter()
    assert meter.read() == {"peak_bytes": 3 * GIB, "current_bytes": sim.current, "kind": "device"}
    assert sim.reset == ["TPU:0"]
    memory = hardware.available_memory(hardware.devices())
    assert memory["available_bytes"] is None and "not measured on a TPU" in memory["source"]


class _Counted(step_flops.TracedStep):
    """A traced step that counted `flops` (no graph: the optimizers found stay as found)."""

    def __init__(self, flops: float):
        super().__init__(None)
        self.counted = flops

    def flops(self) -> step_flops.StepFlops:
        return step_flops.StepFlops(self.counted)


class _Job:
    """What `run.step_facts` reads of a prepared run."""

    def __init__(self, replicas: int, strategy=None, kind: str = "mirrored"):
        from tfturbo.settings import RunSettings

        self.settings = RunSettings("builtin:mlp", batch_size=256, strategy=kind)
        self.replicas, self.strategy, self.model = replicas, strategy, None
        self.train_ds = type("DS", (), {"element_spec": (None,)})()


def test_mfu_under_mirrored_strategy_is_one_devices_share(accelerator, no_matmuls, monkeypatch):
    """Two GPUs train the global batch; the ceiling is one GPU's. Before: the global FLOP/s over one device's
    ceiling, 2x too high (and capped at 100% where that overflowed)."""
    from tfturbo.run_summary import RunSummary
    from trainer_backend.commands import run

    accelerator("GPU", count=2)
    monkeypatch.setattr(step_flops, "trace_train_step", lambda *a: _Counted(60e9))
    devs = hardware.devices()
    env = {"device": hardware.device_label(devs), "versions": {"tensorflow": "2.21.0"}}
    summary = RunSummary(throughput={"samples_per_s": 256 * 1000.0})  # 1000 global steps/s
    summary.tf32 = True
    got = run.step_facts(_Job(replicas=2), summary, devs, env)
    assert got["achieved_flops"] == pytest.approx(30e12)  # per device: 60 GFLOP × 1000 /s ÷ 2
    assert got["mfu"] == pytest.approx(0.2) and got["ceiling_dtype"] == "float32 (TF32)"
    assert got["mfu_note"] is None


def test_an_mfu_above_100_percent_is_kept_and_explained(accelerator, no_matmuls, monkeypatch):
    from tfturbo.run_summary import RunSummary
    from trainer_backend.commands import run

    accelerator("GPU")
    monkeypatch.setattr(step_flops, "trace_train_step", lambda *a: _Counted(600e9))
    devs = hardware.devices()
    env = {"device": hardware.device_label(devs), "versions": {"tensorflow": "2.21.0"}}
    got = run.step_facts(_Job(replicas=1, kind="default"), RunSummary(throughput={"samples_per_s": 256e3}), devs,
                         env)
    assert got["mfu"] == pytest.approx(4.0) and "above 100%" in got["mfu_note"]
    from tfturbo.compare import fmt_mfu

    assert fmt_mfu(got["mfu"]) == "400% (above its measured ceiling)" and fmt_mfu(0.23) == "23%"  # shown, not capped
    assert RunSummary.from_dict({"mfu": 4.0, "mfu_note": got["mfu_note"]}).mfu_note == got["mfu_note"]


def test_on_a_tpu_the_ceiling_is_measured_inside_the_strategy_or_not_at_all(accelerator, no_matmuls):
    """Before: the TPU's matmul ceiling ran on the host (no strategy), a CPU's rate named a TPU's."""
    from trainer_backend.commands.env import document

    accelerator("TPU", count=8)
    doc = document()
    assert doc["ceiling"] == {} and "not measured on a TPU" in doc["ceiling_note"] and not no_matmuls
    strategy = object()
    peaks = ceiling.ceilings(hardware.devices(), "TPU: v4", "2.21.0", strategy=strategy)
    assert set(peaks) == {"float32", "bfloat16"}
    assert [c[2] for c in no_matmuls] == [strategy, strategy]  # every matmul inside the TPU strategy
