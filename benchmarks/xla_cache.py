"""What XLA's persistent compilation cache saves a replicate: the first step's time, cache warm vs none.

    python benchmarks/xla_cache.py [--workload builtin:transformer] [--pairs 4] [--steps 20] [--out DIR]

For jit_compile=True (`--jit`) and for auto-clustering (`--xla-autoclustering`,
with `--tf_xla_cpu_global_jit`, without which auto-clustering compiles nothing
on a CPU), it first fills a cache with one run, then measures interleaved
pairs — a run without the cache and a run with the warm cache, in alternating
order — and prints, per mode, the median first step (tracing + compilation,
the backend's first window) of each arm and the ratio warm/none with its
Student-t interval across the pairs (`tfturbo.stats.replicate_ratio_ci`), and
the same for the whole process's wall time. Every run is a real backend
process (`python -m trainer_backend run`), as in a study.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tfturbo.stats import replicate_ratio_ci  # noqa: E402

MODES = {"jit_compile=True": (["--jit"], ""),
         "auto-clustering": (["--xla-autoclustering"], "--tf_xla_cpu_global_jit")}


def one_run(out: Path, workload: str, steps: int, args: list[str], flags: str, cache: Path | None) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TF_XLA_FLAGS": flags}
    command = [sys.executable, "-m", "trainer_backend", "run", workload, "--out", str(out), "--steps", str(steps),
               "--profile", "0:0", "--speed-only", "--val-every", str(steps), *args]
    if cache is not None:
        command += ["--xla-cache", str(cache)]
    started = time.perf_counter()
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # stdin kept open: closing it means "parent gone"
    proc.wait()
    wall = time.perf_counter() - started
    summary = json.loads((out / "summary.json").read_text())
    return {"first_step_s": float(summary["windows"][0][2]), "process_s": wall, "status": summary["status"]}


def measure(workload: str, steps: int, pairs: int, out: Path) -> dict[str, dict]:
    results = {}
    for mode, (args, flags) in MODES.items():
        cache = out / f"cache-{mode.split('=')[0]}"
        one_run(out / f"{mode}-fill", workload, steps, args, flags, cache)
        rows = []
        for i in range(pairs):
            order = ("none", "warm") if i % 2 == 0 else ("warm", "none")
            pair = {}
            for arm in order:
                pair[arm] = one_run(out / f"{mode}-{arm}{i}", workload, steps, args, flags,
                                    cache if arm == "warm" else None)
            rows.append(pair)
        results[mode] = {"pairs": rows, "files": len(list(cache.glob("xla_compile_cache__*"))),
                         "load": os.getloadavg()[0]}
    return results


def table(results: dict[str, dict]) -> str:
    lines = ["| mode | cache files | first step, no cache (median) | first step, warm cache (median) | "
             "warm/none [95% CI] | process, no cache | process, warm cache | warm/none [95% CI] | pairs | "
             "load (1-min avg) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for mode, r in results.items():
        pairs = r["pairs"]
        cells = [mode, str(r["files"])]
        for key in ("first_step_s", "process_s"):
            none = [p["none"][key] for p in pairs]
            warm = [p["warm"][key] for p in pairs]
            ratio, (lo, hi) = replicate_ratio_ci([w / n for w, n in zip(warm, none)])
            cells += [f"{statistics.median(none):.2f} s", f"{statistics.median(warm):.2f} s",
                      f"{ratio:.2f} [{lo:.2f}, {hi:.2f}]"]
        cells += [str(len(pairs)), f"{r['load']:.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workload", default="builtin:transformer")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--out", type=Path, default=None, help="keep the runs here (default: a temporary folder)")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="tfturbo-xla-cache-"))
    try:
        results = measure(args.workload, args.steps, args.pairs, out)
        (out / "xla_cache.json").write_text(json.dumps(results, indent=2) + "\n")
        print(table(results))
    finally:
        if args.out is None:
            shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
