"""Accuracy calibration (issue 39): does the accuracy gate hold the trainings' noise?

Every trial is a real `tfturbo ab --json` in a fresh process, on scripts with
augmentation, dropout and a shuffled tf.data pipeline
(benchmarks/calibration_workloads/):

- A/A′ (`aa`): the augmented CNN against itself from another seed
  (`--b seed=N`). Target: never judged worse or better (≥ 19 of 20).
- A change that does not take effect (`noeffect`): `--b jit=on` on the same
  CNN, whose RandomRotation has supports_jit=False. Target: never judged (no
  accuracy and no speed verdict).
- Real regressions: token ids cast to bfloat16 by the script's own embedding
  layer (`tokens`: `--b policy=mixed_bfloat16`), and builtin:custom-loop's
  float16 loop that stops learning (`loop`: `--b policy=mixed_float16`).
  Target: judged worse every time.

The speed side is fixed at two full-length pairs (`--steady-s 0`), so each
trial costs the same and the accuracy gate is what is measured. The table
also gives what the reference's seed replicates cost: their seconds (the runs'
own `process_s`) over the whole trial's.

Prints one table and writes the raw documents to --out as JSON lines.

    .venv/bin/python benchmarks/accuracy_calibration.py [--aa 20] [--noeffect 5] [--tokens 5] [--loop 5]
    .venv/bin/python benchmarks/accuracy_calibration.py --table RUN.jsonl
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent / "calibration_workloads"

CASES = {  # name: (workload, B's settings, steps, what the gate must say)
    "aa": (str(HERE / "augmented_cnn.py"), "seed={seed_b}", 240, "never worse or better"),
    "noeffect": (str(HERE / "augmented_cnn.py"), "jit=on", 240, "not judged"),
    "tokens": (str(HERE / "token_parity.py"), "policy=mixed_bfloat16", 160, "worse"),
    "loop": ("builtin:custom-loop", "policy=mixed_float16", 150, "worse"),
}


def ab(case: str, seed: int) -> dict:
    workload, b, steps, _ = CASES[case]
    with tempfile.TemporaryDirectory(prefix="tfturbo-acc-cal-") as out:
        argv = [sys.executable, "-m", "tfturbo.cli", "ab", workload, "--b", b.format(seed_b=seed + 500),
                "--seed", str(seed), "--steps", str(steps), "--min-replicates", "2", "--max-replicates", "2",
                "--steady-s", "0", "--out", str(Path(out) / "ab"), "--json"]
        started = time.perf_counter()
        proc = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=1800)
        seconds = time.perf_counter() - started
        if proc.returncode not in (0, 1):
            raise RuntimeError(f"{' '.join(argv[3:])} failed ({proc.returncode}): {proc.stderr[-2000:]}")
        doc = json.loads(proc.stdout)
        run_s = {}
        for run in doc.get("runs") or []:
            path = Path(out) / "ab" / "runs" / run["name"] / "summary.json"
            if path.exists():
                s = json.loads(path.read_text())
                run_s[run["name"]] = float(s.get("process_s") or s.get("wall_s") or 0.0)
    seed_s = sum(v for name, v in run_s.items() if name in ("a0", "a-1"))
    return {"case": case, "seed": seed, "seconds": seconds, "run_s": run_s, "seed_s": seed_s, "doc": doc}


def judged(doc: dict) -> str:
    """What the trial said about accuracy: worse, better (the interval above 0), within, inconclusive, or not
    judged (no accuracy verdict: the change did not take effect)."""
    acc = doc.get("accuracy") or {}
    if acc.get("checked") is False or acc.get("verdict") == "not measured":
        return "not judged"
    ci = acc.get("ci95")
    if acc.get("verdict") == "worse":
        return "worse"
    if ci and isinstance(ci[0], (int, float)) and ci[0] > 0:
        return "better"
    return "within" if acc.get("verdict") == "within tolerance" else "inconclusive"


def table(records: list[dict]) -> str:
    lines = ["Accuracy calibration: tfturbo ab on scripts with augmentation, dropout and shuffles",
             "",
             f"{'case':<10}{'trials':>7}{'worse':>7}{'better':>7}{'within':>7}{'inconc.':>8}{'not judged':>11}"
             f"{'  half-width pp (median)':>25}{'trainings':>10}{'s/trial':>9}{'seed runs':>11}  target"]
    for case in CASES:
        rows = [r for r in records if r["case"] == case]
        if not rows:
            continue
        said = [judged(r["doc"]) for r in rows]
        halves = [(a["ci95"][1] - a["ci95"][0]) / 2 * 100 for r in rows
                  if (a := r["doc"].get("accuracy") or {}).get("ci95") and None not in a["ci95"]]
        trainings = [int((n := (r["doc"].get("accuracy") or {}).get("noise") or {}).get("seeds_a") or 0)
                     + int(n.get("seeds_b") or 0) for r in rows]
        share = [r["seed_s"] / sum(r["run_s"].values()) for r in rows if sum(r["run_s"].values())]
        lines.append(
            f"{case:<10}{len(rows):>7}{said.count('worse'):>7}{said.count('better'):>7}{said.count('within'):>7}"
            f"{said.count('inconclusive'):>8}{said.count('not judged'):>11}"
            f"{(f'{statistics.median(halves):.1f}' if halves else '—'):>25}"
            f"{(str(statistics.median(trainings)) if any(trainings) else '—'):>10}"
            f"{statistics.median(r['seconds'] for r in rows):>9.0f}"
            f"{(f'{statistics.median(share):.0%}' if share else '—'):>11}  {CASES[case][3]}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for case, default in (("aa", 20), ("noeffect", 5), ("tokens", 5), ("loop", 5)):
        parser.add_argument(f"--{case}", type=int, default=default, help=f"trials of the {case} case")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "accuracy_calibration.jsonl"))
    parser.add_argument("--table", nargs="+", metavar="JSONL", help="print the table of recorded runs only")
    args = parser.parse_args()
    if args.table:
        records = [json.loads(line) for path in args.table for line in Path(path).read_text().splitlines() if line]
        print(table(records))
        return 0
    records = []
    counts = {case: getattr(args, case) for case in CASES}
    order = [(case, k) for k in range(max(counts.values())) for case in CASES if k < counts[case]]  # interleaved
    with open(args.out, "w") as out:
        for case, k in order:
            record = ab(case, k + 1)
            records.append(record)
            out.write(json.dumps(record) + "\n")
            out.flush()
            print(f"{case} seed {k + 1}: {judged(record['doc'])} — {(record['doc'].get('accuracy') or {}).get('explanation') or ''}"
                  f" ({record['seconds']:.0f} s)", file=sys.stderr, flush=True)
    print(table(records))
    return 0


if __name__ == "__main__":
    sys.exit(main())
