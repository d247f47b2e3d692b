"""`tfturbo scaling WORKLOAD --replicas 1,2[,4…]`: how throughput grows with the number of replicas.

Each replica count N > 1 is one trial of the trial engine: A trains on one
replica, B on N replicas with the same per-replica batch (so B's global batch
is N times A's and, the trial scaling B's steps, both see the same samples).
The trial's ratio of throughput per sample, B over A, is the speed-up; the
scaling efficiency is speed-up / N, its interval the speed-up's divided by N.
An efficiency below 0.8 raises SCALING_INEFFICIENT with what to change.

`--strategy mirrored` replicates over this machine's devices (`--devices N`;
on a CPU-only machine TFTURBO_LOGICAL_CPUS is set to the largest N unless
given, splitting the CPU into that many logical devices); `multiworker` starts
N local worker processes (`--workers N`).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path
from typing import Any

from .. import findings as F
from ..arg_types import positive_int
from ..cli_args import WORKLOAD_HELP
from ..commands.backend import log_path
from ..errors import OutputDirError
from ..findings import Finding
from ..runfiles import RUNS_DIR, write_json_atomic
from ..settings import DEFAULT_SEED, DEFAULT_STEPS, RunSettings
from ..stats import replicate_ratio_ci
from ..trials.execute import backend_executor
from ..trials.speed import SpeedRule, samples_per_s
from ..trials.trial import PlannedRun, Trial, run_trial

SCALING_JSON = "scaling.json"
EFFICIENT = 0.8  # below this, SCALING_INEFFICIENT
LOGICAL_CPUS_ENV = "TFTURBO_LOGICAL_CPUS"
STRATEGIES = ("mirrored", "multiworker")


def replica_counts(text: str) -> list[int]:
    try:
        counts = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        counts = []
    if not counts or counts[0] < 1 or counts == [1]:
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of replica counts such as 1,2,4")
    return counts


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("workload", metavar="WORKLOAD", help=WORKLOAD_HELP)
    parser.set_defaults(script_args=[])
    parser.add_argument("--replicas", type=replica_counts, default=[1, 2], metavar="1,2[,4…]",
                        help="replica counts to measure (default 1,2); each N > 1 is compared with 1")
    parser.add_argument("--strategy", choices=STRATEGIES, default="mirrored",
                        help="mirrored: N devices of this machine; multiworker: N local worker processes "
                             "(default mirrored)")
    parser.add_argument("--batch-size", type=positive_int, default=None, metavar="N",
                        help="per-replica batch size (default: the workload's)")
    parser.add_argument("--steps", type=positive_int, default=DEFAULT_STEPS,
                        help=f"steps of each one-replica run (the N-replica runs see as many samples; "
                             f"default {DEFAULT_STEPS})")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="the same seed for every run")
    parser.add_argument("--min-replicates", type=positive_int, default=SpeedRule.min_pairs,
                        help=f"replicate pairs per replica count before stopping (default {SpeedRule.min_pairs})")
    parser.add_argument("--max-replicates", type=positive_int, default=SpeedRule.max_pairs,
                        help=f"replicate pairs per replica count at most (default {SpeedRule.max_pairs})")
    parser.add_argument("--out", required=True, metavar="DIR", help="the runs and scaling.json go here")
    parser.add_argument("--json", action="store_true", help="print the scaling document as JSON")


def on_replicas(settings: RunSettings, strategy: str, n: int) -> RunSettings:
    """`settings` on n replicas of `strategy`, the global batch n times the per-replica one."""
    batch = settings.batch_size * n if settings.batch_size else None
    if strategy == "multiworker":
        return settings.with_(strategy=strategy, workers=n, batch_size=batch)
    return settings.with_(strategy=strategy, devices=n, batch_size=batch)


def throughput_ci(rates: list[float]) -> tuple[float | None, list[float | None]]:
    """Geometric mean of runs' throughput and its Student-t 95% interval (on the log scale, like the ratios)."""
    rates = [r for r in rates if r and math.isfinite(r)]
    if not rates:
        return None, [None, None]
    center = math.exp(sum(math.log(r) for r in rates) / len(rates))
    if len(rates) < 2:
        return center, [None, None]
    _, (lo, hi) = replicate_ratio_ci([r / center for r in rates])
    return center, [lo * center, hi * center]


def point(n: int, trial: Trial) -> dict[str, Any]:
    """One replica count's row: B's throughput with an interval, the speed-up and the efficiency."""
    speed = trial.verdict().speed
    ratio, (lo, hi) = speed.ratio, speed.ci95
    base = speed.a_samples_per_s
    ok = math.isfinite(ratio)
    return {
        "replicas": n,
        "samples_per_s": speed.b_samples_per_s,
        # N replicas' throughput: the pairs' speed-up interval on the one-replica throughput they were paired with
        "ci95": [lo * base, hi * base] if ok and base else [None, None],
        "speedup": ratio if ok else None,
        "speedup_ci95": [lo, hi] if ok else [None, None],
        "efficiency": ratio / n if ok else None,
        "efficiency_ci95": [lo / n, hi / n] if ok else [None, None],
        "replicates": speed.replicates,
        "status": next((r.status for r in trial.runs if r.status != "completed"), "completed"),
    }


def findings_for(points: list[dict[str, Any]], strategy: str) -> list[Finding]:
    out = []
    for p in points:
        e = p.get("efficiency")
        if p["replicas"] > 1 and e is not None and e < EFFICIENT:
            lo, hi = p["efficiency_ci95"]
            interval = f" [{lo:.2f}, {hi:.2f}]" if lo is not None else ""
            out.append(Finding(
                F.SCALING_INEFFICIENT,
                f"{p['replicas']} replicas ({strategy}) train {p['speedup']:.2f}× as fast as one: efficiency "
                f"{e:.2f}{interval}, below {EFFICIENT}",
                fix=("# each worker reads its own shard and prefetches:\n"
                     "ds = ds.shard(num_workers, worker_index)  # or files per worker\n"
                     "ds = ds.batch(per_replica_batch * replicas, drop_remainder=True).prefetch(tf.data.AUTOTUNE)\n"
                     "# a larger per-replica batch computes more between gradient all-reduces: --batch-size\n"
                     "# communication-bound: fewer replicas, or a faster interconnect (NVLink, one host)"),
                where=f"{p['replicas']} replicas",
                data={"replicas": p["replicas"], "efficiency": e, "efficiency_ci95": p["efficiency_ci95"]}))
    return out


def render(doc: dict[str, Any]) -> str:
    def num(v, fmt="{:,.0f}"):
        return fmt.format(v) if isinstance(v, (int, float)) and math.isfinite(v) else "—"

    lines = [f"{'replicas':>8}  {'samples/s':>10}  {'95% CI':>21}  {'efficiency':>10}  {'95% CI':>14}"]
    for p in doc["points"]:
        lo, hi = p["ci95"]
        elo, ehi = p["efficiency_ci95"]
        lines.append(f"{p['replicas']:>8}  {num(p['samples_per_s']):>10}  "
                     f"{'[' + num(lo) + ', ' + num(hi) + ']':>21}  {num(p['efficiency'], '{:.2f}'):>10}  "
                     f"{'[' + num(elo, '{:.2f}') + ', ' + num(ehi, '{:.2f}') + ']':>14}")
    lines += ["", "efficiency = throughput(N) / (N × throughput(1)), same per-replica batch; 1.00 is perfect scaling."]
    for f in doc["findings"]:
        lines.append(f"{f['code']}: {f['message']}")
    return "\n".join(lines)


def main(args: argparse.Namespace) -> int:
    out = Path(args.out)
    if (out / RUNS_DIR).exists():
        raise OutputDirError(f"{out} already holds runs", "choose a new --out directory")
    try:
        (out / RUNS_DIR).mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputDirError(f"cannot write to {out} ({e.strerror or e})", "choose a writable --out directory") from e
    counts = args.replicas
    if args.strategy == "mirrored" and not os.environ.get(LOGICAL_CPUS_ENV):
        os.environ[LOGICAL_CPUS_ENV] = str(max(counts))  # CPU-only machines: N logical devices (GPUs are used first)
    base = RunSettings(args.workload, steps=args.steps, seed=args.seed, batch_size=args.batch_size,
                       script_args=list(args.script_args))
    one = on_replicas(base, args.strategy, 1)
    execute = backend_executor(out / RUNS_DIR, log_path=log_path())
    trials: list[tuple[int, Trial]] = []
    for n in (c for c in counts if c > 1):
        trial = Trial(one, on_replicas(base, args.strategy, n), SpeedRule(args.min_replicates, args.max_replicates),
                      names=lambda arm, k, n=n: f"n{n}-{arm}{k}", label_a="1 replica", label_b=f"{n} replicas")
        run_trial(trial, _reporting(execute, trial, n))
        trials.append((n, trial))
        if any(r.planned.arm == "a" and r.status != "completed" for r in trial.runs):
            break  # the one-replica reference fails: no other count can be compared
    one_rates = [samples_per_s(r.summary) for _, t in trials for r in t.runs
                 if r.planned.arm == "a" and r.status == "completed"]
    rate, ci = throughput_ci(one_rates)
    points = [{"replicas": 1, "samples_per_s": rate, "ci95": ci, "speedup": 1.0, "speedup_ci95": [1.0, 1.0],
               "efficiency": 1.0, "efficiency_ci95": [1.0, 1.0], "replicates": len(one_rates),
               "status": "completed" if one_rates else "failed"}]
    points += [point(n, t) for n, t in trials]
    doc = {"workload": args.workload, "strategy": args.strategy,
           "per_replica_batch_size": _per_replica_batch(trials), "points": points,
           "findings": [f.to_dict() for f in findings_for(points, args.strategy)]}
    write_json_atomic(out / SCALING_JSON, doc)
    print(json.dumps(doc, indent=2) if args.json else render(doc))
    return 0 if one_rates else 1


def _reporting(execute, trial: Trial, n: int):
    """execute(planned) that prints progress and, after the first one-replica run, fixes B's global batch."""
    def run(planned: PlannedRun):
        print(f"[{planned.name}] {planned.settings.strategy}, "
              f"{1 if planned.arm == 'a' else n} replica(s) — {planned.settings.steps} steps", file=sys.stderr)
        summary, path = execute(planned)
        if planned.arm == "a" and trial.b.batch_size is None:  # the workload's own batch, now known
            per_replica = (summary.get("settings") or {}).get("batch_size")
            if isinstance(per_replica, int) and per_replica > 0:
                trial.b = trial.b.with_(batch_size=per_replica * n)
        rate = samples_per_s(summary)
        print(f"[{planned.name}] {summary.get('status')}" + (f", {rate:,.0f} samples/s" if rate else ""),
              file=sys.stderr)
        return summary, path
    return run


def _per_replica_batch(trials: list[tuple[int, Trial]]) -> int | None:
    for _, t in trials:
        for r in t.runs:
            if r.planned.arm == "a" and r.summary:
                b = (r.summary.get("settings") or {}).get("batch_size")
                if isinstance(b, int):
                    return b
    return None
