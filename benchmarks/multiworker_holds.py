"""Do two-worker runs hold on a loaded machine? N consecutive `run --strategy multiworker --workers 2` of a small
MLP while another training job runs beside them, then a table: each run's status, attempts (a worker that died
from a signal or a collective error is retried once as the same replicate) and why an attempt failed.

    PYTHONPATH=. python benchmarks/multiworker_holds.py --runs 10 [--workload builtin:mlp] [--steps 60]

The job beside them is `tfturbo run builtin:cnn` with a step budget far beyond the benchmark, stopped at the end.
Target: every run completes (issue 20: 10 of 10 with another training job beside them).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._targets import print_targets
from tfturbo.backend_client import run_backend


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson 95% interval of a proportion k/n (honest at 10/10, where k/n alone says nothing of the odds)."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def neighbour(folder: Path) -> subprocess.Popen:
    """Another training job on the same cores, for as long as the benchmark runs."""
    return subprocess.Popen([sys.executable, "-m", "tfturbo.cli", "run", "builtin:cnn", "--steps", "1000000",
                             "--profile", "0:0", "--out", str(folder / "neighbour")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--workload", default="builtin:mlp")
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--no-neighbour", action="store_true", help="run without the training job beside")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="tfturbo-mw-bench-"))
    beside = None if args.no_neighbour else neighbour(folder)
    time.sleep(0 if beside is None else 15)  # the neighbour is training before the first run starts
    rows = []
    try:
        for i in range(1, args.runs + 1):
            out = folder / f"run{i:02d}"
            started = time.monotonic()
            result = run_backend("run", [args.workload, "--out", str(out), "--strategy", "multiworker",
                                         "--workers", "2", "--steps", str(args.steps), "--profile", "0:0"],
                                 stderr_path=str(folder / "stderr.log"))
            doc = result.document or {}
            retries = doc.get("retries") or []
            reason = "; ".join(r.get("reason", "") for r in retries) or (result.error or {}).get("message", "")
            rows.append((i, result.status, 1 + len(retries), time.monotonic() - started, reason))
            print(f"run {i:2d}: {result.status:<10} attempts {1 + len(retries)}  {rows[-1][3]:6.1f} s  {reason}",
                  file=sys.stderr, flush=True)
    finally:
        if beside is not None:
            os.killpg(beside.pid, signal.SIGTERM)
            beside.wait(timeout=60)
    print(f"\n{'run':>4}  {'status':<10} {'attempts':>8}  {'wall s':>7}  why an attempt failed")
    for i, status, attempts, wall, reason in rows:
        print(f"{i:>4}  {status:<10} {attempts:>8}  {wall:>7.1f}  {reason[:110]}")
    completed = sum(1 for r in rows if r[1] == "completed")
    retried = sum(1 for r in rows if r[2] > 1)
    lo, hi = wilson(completed, len(rows))
    print()
    print_targets([
        ("runs completed", f"{completed}/{len(rows)} (95% CI {lo:.0%}–{hi:.0%})", f"{len(rows)}/{len(rows)}",
         completed == len(rows)),
        ("runs that needed their retry", f"{retried}/{len(rows)}", "", None),
        ("training job beside them", "builtin:cnn" if beside is not None else "none", "", None),
    ])
    print(json.dumps({"completed": completed, "runs": len(rows), "retried": retried}))
    return 0 if completed == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
