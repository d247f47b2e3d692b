"""Same seed, same run: data order and initial weights do not change between runs (DESIGN.md section 8)."""

from __future__ import annotations

from backend_helpers import TINY, run_backend

from tfturbo import protocol


def _curves(run):
    epochs = [(e["step"], e["metrics"]["loss"]) for e in run.of_type(protocol.EPOCH)]
    vals = [(e["step"], e["metrics"]["val_loss"]) for e in run.of_type(protocol.VALIDATION)]
    return epochs, vals


def test_same_seed_gives_identical_loss_curves(tmp_path):
    runs = [run_backend("run", TINY, "--out", str(tmp_path / name), "--steps", "60", "--val-every", "20",
                        "--profile", "0:0") for name in ("a", "b")]
    for run in runs:
        assert run.exit_code == 0, run.stderr[-3000:]
    a, b = (_curves(r) for r in runs)
    assert [s for s, _ in a[0]] == [20, 40, 60] and len(a[1]) == 3
    assert a == b
