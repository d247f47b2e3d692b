"""Verdict calibration: how often `tfturbo ab` calls identical settings different, and finds real differences.

Every trial is a real `tfturbo ab --json` in a fresh process, as a user runs
it, so the numbers include everything a user meets: process start-up, the
machine's load, run-to-run variation.

- A/A: identical settings on both sides. Target: "faster"/"slower" in at most
  5% of the trials, and accuracy never "worse".
- Known differences on this CPU: a 4x larger batch (faster per sample on a
  small MLP) and mixed_float16 on builtin:cnn (about 4x slower than float32
  there without 16-bit hardware: 27 ms against 6.6 ms median steps; on the
  small MLP the penalty is only 10-20%, inside one trial's noise). Target:
  detected in at least 90% of the trials.
- A float16 custom training loop without loss scaling (builtin:custom-loop
  stops learning): rejected on accuracy ("worse"), not on speed alone.

Prints one table (share with its Wilson 95% interval, replicate pairs, time
per trial) and writes the raw documents to --out as JSON lines.

    .venv/bin/python benchmarks/verdict_calibration.py [--aa 20] [--known 10] [--loop 4] [--steps 300]
        [--cases aa,batch,mf16,loop]
    .venv/bin/python benchmarks/verdict_calibration.py --table RUN.jsonl [MORE.jsonl ...]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a share k/n."""
    if n == 0:
        return math.nan, math.nan
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def ab(workload: str, b: str, steps: int, a: str = "") -> tuple[dict, float]:
    argv = [sys.executable, "-m", "tfturbo.cli", "ab", workload, "--b", b, "--steps", str(steps), "--json"]
    if a:
        argv += ["--a", a]
    started = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=1800)
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[3:])} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return json.loads(proc.stdout), seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--aa", type=int, default=20, help="A/A trials (default 20)")
    parser.add_argument("--known", type=int, default=10, help="trials per known speed difference (default 10)")
    parser.add_argument("--loop", type=int, default=4, help="trials of the float16 loop (default 4)")
    parser.add_argument("--steps", type=int, default=300, help="steps of each A run (default 300, tune's)")
    parser.add_argument("--cases", default="aa,batch,mf16,loop", help="which cases, comma-separated")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "verdict_calibration.jsonl"),
                        help="where the raw ab documents go (JSON lines)")
    parser.add_argument("--table", nargs="+", metavar="JSONL", help="measure nothing: print the table of raw "
                        "documents an earlier run wrote (several files: a calibration run in parts)")
    args = parser.parse_args()

    cases = {"aa": ("A/A: identical settings", "builtin:mlp", "", "", args.aa, "no measurable change"),
             "batch": ("batch 256 vs 64 (per sample)", "builtin:mlp", "batch=256", "batch=64", args.known, "faster"),
             "mf16": ("mixed_float16 vs float32 (cnn)", "builtin:cnn", "policy=mixed_float16", "", args.known,
                      "slower"),
             "loop": ("float16 custom loop, no loss scaling", "builtin:custom-loop", "policy=mixed_float16", "",
                      args.loop, "accuracy worse")}
    if args.table:
        docs_by_case: dict[str, list[dict]] = {}
        for path in args.table:
            for line in Path(path).read_text(encoding="utf-8").splitlines():
                doc = json.loads(line)
                docs_by_case.setdefault(doc["case"], []).append(doc)
        print_table([(title, expected, docs_by_case[title]) for title, *_, expected in cases.values()
                     if title in docs_by_case])
        return 0
    cases = [cases[key.strip()] for key in args.cases.split(",") if key.strip()]
    measured = []
    with open(args.out, "w", encoding="utf-8") as raw:
        for title, workload, b, a, n, expected in cases:
            docs = []
            for i in range(n):
                doc, s = ab(workload, b or "policy=float32", args.steps, a)
                doc = {"case": title, "trial": i, "seconds": s, **doc}
                docs.append(doc)
                raw.write(json.dumps(doc) + "\n")
                raw.flush()
                ratio = doc["speed"].get("ratio")
                print(f"{title} #{i + 1}: speed {doc['speed']['verdict']} "
                      f"{'-' if ratio is None else format(ratio, '.3f')} {doc['speed'].get('ci95')}, pairs "
                      f"{doc['speed']['replicates']}, accuracy {doc['accuracy']['verdict']}, {s:.0f} s, "
                      f"load {os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)
            measured.append((title, expected, docs))
    print_table(measured)
    return 0


def print_table(measured: list[tuple[str, str, list[dict]]]) -> None:
    """One row per case: the share of its trials judged as expected (Wilson 95%), and what else they said."""
    print("Verdict calibration: tfturbo ab on builtin workloads, each trial a fresh process\n")
    header = f"{'case':38} {'n':>3}  {'expected':22} {'share as expected [Wilson 95%]':32} " \
             f"{'speed != no change':>18} {'acc. worse':>10} {'pairs':>5} {'s/trial':>7}"
    print(header)
    print("-" * len(header))
    for title, expected, docs in measured:
        n = len(docs)
        if expected == "accuracy worse":
            hits = sum(d["accuracy"]["verdict"] == "worse" for d in docs)
        else:
            hits = sum(d["speed"]["verdict"] == expected for d in docs)
        worse = sum(d["accuracy"]["verdict"] == "worse" for d in docs)
        different = sum(d["speed"]["verdict"] != "no measurable change" for d in docs)
        pairs = statistics.mean(d["speed"]["replicates"] for d in docs)
        secs = statistics.median(d["seconds"] for d in docs)
        lo, hi = wilson(hits, n)
        share = f"{hits}/{n} = {hits / n:.0%} [{lo:.0%}, {hi:.0%}]"
        print(f"{title:38} {n:>3}  {expected:22} {share:32} {different:>18} {worse:>10} {pairs:>5.1f} {secs:>7.0f}")


if __name__ == "__main__":
    sys.exit(main())
