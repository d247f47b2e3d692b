"""What saving a run's model costs: the seconds a run spends in `model.save(checkpoint/model.keras)`.

    python benchmarks/checkpoint_cost.py [--workloads builtin:mlp,builtin:transformer] [--saves 9]

A trial's reference replicates no longer save a model (`--no-model`, issue 23:
their configuration's model is its own rung's run); this measures what each
of them saved. Per workload: the model is built as the backend builds it,
trained two steps (so the optimizer's slots exist, as after a run), then saved
`--saves` times into fresh folders, exactly as `trainer_backend.commands.run.
save_checkpoint` does; the first save (which pays one-off imports) is reported
on its own, the rest as a median with its 95% interval (`tfturbo.stats.
median_ci`). In one process, so what it leaves out is nothing a run pays
besides the save itself.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def measure(spec: str, saves: int) -> dict:
    from tfturbo.stats import median_ci
    from trainer_backend.workload import load_workload

    workload = load_workload(spec, [])
    model = workload.build_model()
    train_ds, _ = workload.make_datasets(workload.default_batch_size)
    model.fit(train_ds.take(2), epochs=1, verbose=0)
    times, size = [], 0
    for _ in range(saves):
        folder = Path(tempfile.mkdtemp(prefix="tfturbo-ckpt-"))
        start = time.perf_counter()
        model.save(folder / "model.keras")
        times.append(time.perf_counter() - start)
        size = (folder / "model.keras").stat().st_size
        shutil.rmtree(folder)
    median, ci = median_ci(times[1:])
    return {"workload": spec, "first": times[0], "median": median, "ci": ci, "n": len(times) - 1, "mb": size / 1e6}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default="builtin:mlp,builtin:transformer")
    parser.add_argument("--saves", type=int, default=9)
    args = parser.parse_args()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    rows = [measure(spec, max(3, args.saves)) for spec in args.workloads.split(",")]
    load = os.getloadavg()[0]
    print("| workload | model.keras | first save | save (median) [95% CI] | saves | load (1-min avg) |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        lo, hi = r["ci"]
        print(f"| {r['workload']} | {r['mb']:.2f} MB | {r['first']:.3f} s | {r['median']:.3f} s [{lo:.3f}, {hi:.3f}] "
              f"| {r['n']} | {load:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
