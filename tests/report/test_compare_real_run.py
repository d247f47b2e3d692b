"""A run whose summary.json is lost (killed backend) is rebuilt from its events with the same steady samples
the backend measured: warm-up and the profiler window are left out the same way on both sides."""

import json
import shutil

import pytest

from tfturbo.compare import effective_summary
from tfturbo.runfiles import SUMMARY, load_run


def test_events_alone_give_the_backend_s_steady_samples(mlp_run, tmp_path):
    summary = json.loads((mlp_run / SUMMARY).read_text())
    copy = tmp_path / "killed"
    shutil.copytree(mlp_run, copy)
    (copy / SUMMARY).unlink()
    rebuilt = effective_summary(load_run(copy))
    assert summary["profile"]["window"] == [30, 40]
    assert rebuilt.step_ms_samples == summary["step_ms_samples"]
    assert rebuilt.step_ms["median"] == pytest.approx(summary["step_ms"]["median"], rel=1e-4)  # samples are stored to 0.1 µs
