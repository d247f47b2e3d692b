"""How finely a paired replicate must interleave its arms: A/A ratios of `run-pair` processes by block count.

    python benchmarks/pair_blocks.py [--workload builtin:mlp] [--processes 8] [--blocks 4,16] [--steady-s 6]

Each process is a real `python -m trainer_backend run-pair` whose two arms
have identical settings (an A/A pair), so every ratio away from 1 is noise.
The block counts are interleaved process by process (4, 16, 4, 16, ...), so
the machine's load falls on each alike. Two statistics per process:

- arm ratio: B's throughput over A's, each arm's the median of its steady
  windows' rates (summary.json `throughput`: what a trial judges today);
- neighbour ratio: the median, over each pair of adjacent stretches of the
  two arms, of B's stretch rate over A's (a stretch: an arm's consecutive
  steady windows between two hand-overs), so each comparison is between
  moments seconds apart.

Prints per block count the spread of each statistic across processes: the
geometric standard deviation of the ratios (what a trial's Student-t
interval is built from), their range, and the interval a trial of 3 and of
5 such ratios would have on average (±t·sd/√n, in percent).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
T975 = {2: 4.303, 4: 2.776}  # Student-t 97.5% quantiles for 3 and 5 ratios


def run_pair(workload: str, steps: int, steady_s: float, blocks: int, out: Path) -> tuple[float, float]:
    # as a trial's PlannedPair arms: a step cap far beyond the blocks' need, no profiler, no validation
    def arm(name: str) -> str:
        return json.dumps([workload, "--steps", str(steps), "--profile", "0:0", "--val-every", str(steps),
                           "--speed-only", "--no-model", "--out", str(out / name)])

    argv = [sys.executable, "-m", "trainer_backend", "run-pair", "--arm", arm("a"), "--arm", arm("b"),
            "--steady-s", str(steady_s), "--blocks", str(blocks)]
    # stdin stays open while it runs, as a trial's does: the backend reads its stop command there (EOF stops it)
    with subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}) as proc:
        events = proc.stdout.read()
        proc.stdin.close()
    if proc.returncode != 0 or '"status":"completed"' not in events:
        raise RuntimeError(f"run-pair failed ({proc.returncode}): {events[-1500:]}")
    rates = [json.loads((out / name / "summary.json").read_text())["throughput"]["samples_per_s"] for name in "ab"]
    return rates[1] / rates[0], neighbour_ratio(out)


def stretches(run_dir: Path) -> list[tuple[float, float]]:
    """(time of the stretch's first window, its steps per second) of each stretch of one arm's steady windows:
    a stretch ends where the arm handed over (a `phase` event "block … after … of the other run's block")."""
    out, steps, seconds, start, steady_from = [], 0, 0.0, None, math.inf
    for line in (run_dir / "events.jsonl").read_text().splitlines():
        e = json.loads(line)
        if e["type"] == "phase" and e.get("phase") == "training" and steady_from == math.inf:
            steady_from = e.get("step") or math.inf  # the first steady step: warm-up windows are not compared
        if e["type"] == "phase" and "other run's block" in (e.get("detail") or ""):
            if seconds > 0:
                out.append((start, steps / seconds))
            steps, seconds, start = 0, 0.0, None
        elif e["type"] == "steps":
            w = e.get("window") or []
            for i in range(0, len(w) - 2, 3):
                first, last, s = w[i:i + 3]
                if s and last >= first >= steady_from:
                    steps, seconds = steps + last - first + 1, seconds + s
                    start = e["t"] if start is None else start
    if seconds > 0:
        out.append((start, steps / seconds))
    return out


def neighbour_ratio(out: Path) -> float:
    merged = sorted([(t, "a", r) for t, r in stretches(out / "a")] + [(t, "b", r) for t, r in stretches(out / "b")])
    ratios = []
    for (_, x, rx), (_, y, ry) in zip(merged, merged[1:]):
        if x != y:
            ratios.append(ry / rx if x == "a" else rx / ry)
    return statistics.median(ratios) if ratios else math.nan


def spread(ratios: list[float]) -> str:
    logs = [math.log(r) for r in ratios if r and math.isfinite(r)]
    sd = statistics.stdev(logs)
    half = {n: 100 * (math.exp(T975[n - 1] * sd / math.sqrt(n)) - 1) for n in (3, 5)}
    return (f"gsd {100 * (math.exp(sd) - 1):5.1f}%  range {min(ratios):.3f}–{max(ratios):.3f}  "
            f"±{half[3]:5.1f}% (3)  ±{half[5]:5.1f}% (5)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", default="builtin:mlp")
    parser.add_argument("--processes", type=int, default=8, help="run-pair processes per block count")
    parser.add_argument("--blocks", default="4,16", help="block counts per arm, comma-separated")
    parser.add_argument("--steady-s", type=float, default=6.0, help="steady seconds each arm measures")
    parser.add_argument("--steps", type=int, default=50000, help="each arm's step cap (the blocks end it)")
    args = parser.parse_args()
    counts = [int(b) for b in args.blocks.split(",")]
    results: dict[int, list[tuple[float, float]]] = {b: [] for b in counts}
    with tempfile.TemporaryDirectory(prefix="pair-blocks-") as tmp:
        for i in range(args.processes):
            for b in counts:
                r = run_pair(args.workload, args.steps, args.steady_s, b, Path(tmp) / f"{b}-{i}")
                results[b].append(r)
                print(f"blocks {b:>3} #{i + 1}: arm ratio {r[0]:.3f}, neighbour ratio {r[1]:.3f}, "
                      f"load {os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)
    print(f"A/A run-pair on {args.workload}, {args.processes} processes per block count, "
          f"{args.steady_s:g} s of steady state per arm\n")
    for b in counts:
        print(f"blocks {b:>3}  arm ratio:       {spread([r[0] for r in results[b]])}")
        print(f"            neighbour ratio: {spread([r[1] for r in results[b]])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
