"""profile.json from real CPU captures (docs/MEASUREMENT.md, "Profiles"): the backend reads every capture after
training, in a child, and writes where the step's op time went; the capture's findings join the summary."""

from __future__ import annotations

import json

import pytest

from tfturbo import findings as fc
from tfturbo import profile as prof
from tests.conftest import run_cli
from tests.backend.backend_helpers import WORKLOADS


@pytest.fixture(scope="module")
def planted_run(tmp_path_factory):
    """builtin-style workload under mixed_bfloat16 whose wide layers stay float32."""
    out = tmp_path_factory.mktemp("runs") / "planted"
    proc = run_cli("run", str(WORKLOADS / "float32_heavy.py"), "--out", str(out), "--policy", "mixed_bfloat16",
                   "--steps", "60", "--json")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def test_float32_run_writes_a_profile_whose_categories_add_up(mlp_run):
    doc = prof.Profile.load(mlp_run)
    assert doc.available, doc.reason
    assert doc.steps == 10 and doc.window == [30, 40]
    assert sum(doc.categories.values()) == pytest.approx(doc.op_ms_per_step, rel=1e-6)
    assert doc.coverage is not None and doc.coverage > 0.97  # xprof's rows hold the capture's op time
    assert doc.categories[prof.MATMUL] > 0
    # oneDNN's fused kernels (_MklNativeFusedMatMul, ...) count as the matmuls they are
    assert all(r.category == prof.MATMUL for r in doc.top_types if "MatMul" in r.type)
    assert doc.wall_ms_per_step and doc.wall_ms_per_step > 0
    assert doc.sixteen_bit_share() == 0.0  # float32: no matmul in 16-bit
    assert doc.read_s is not None and doc.read_s < 30
    assert not doc.step_breakdown["available"] and "No step time" in doc.step_breakdown["reason"]
    raw = json.loads((mlp_run / prof.FILE).read_text())
    assert raw["format"] == prof.FORMAT and raw["v"] == prof.VERSION


def test_planted_float32_heavy_layers_under_16bit_raise_the_finding(planted_run):
    doc = prof.Profile.load(planted_run)
    assert doc.available, doc.reason
    share = doc.sixteen_bit_share()
    assert share is not None and 0 < share < 0.5  # the small 16-bit layer counts; the wide ones do not
    summary = json.loads((planted_run / "summary.json").read_text())
    found = [f for f in summary["findings"] if f["code"] == fc.MATMUL_NOT_16BIT]
    assert len(found) == 1
    assert "wide_a" in found[0]["message"] or "wide_b" in found[0]["message"]


def test_every_run_writes_its_settings_and_results_as_tensorboard_hparams(mlp_run):
    """`tensorboard --logdir STUDY/runs` lists the run in its HParams tab: policy, jit_compile, batch size, and
    the measured samples/s."""
    from tensorboard.backend.event_processing import event_accumulator
    from tensorboard.plugins.hparams import metadata
    from tensorboard.util import tensor_util

    acc = event_accumulator.EventAccumulator(str(mlp_run / "tb" / "hparams"),
                                             size_guidance={event_accumulator.TENSORS: 0})
    acc.Reload()
    content = acc.PluginTagToContent(metadata.PLUGIN_NAME)
    start = metadata.parse_session_start_info_plugin_data(content[metadata.SESSION_START_INFO_TAG])
    assert start.hparams["policy"].string_value == "float32"
    assert start.hparams["jit_compile"].bool_value is False
    assert start.hparams["batch_size"].number_value == 64
    summary = json.loads((mlp_run / "summary.json").read_text())
    rate = float(tensor_util.make_ndarray(acc.Tensors("samples_per_s")[0].tensor_proto))
    assert rate == pytest.approx(summary["throughput"]["samples_per_s"], rel=1e-5)
