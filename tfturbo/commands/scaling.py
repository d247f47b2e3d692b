"""`tfturbo scaling WORKLOAD --replicas 1,2[,4…]`: how throughput grows with the number of replicas.

The measurement and its document are `tfturbo.scaling`'s (shared with the
wizard); this module is the command line: it runs the planned runs one after
another and writes scaling.json into `--out`, or into `--out`/scaling/ when
`--out` is a study folder, where `tfturbo report` shows it.

`--strategy mirrored` replicates over this machine's devices (`--devices N`;
on a CPU-only machine TFTURBO_LOGICAL_CPUS is set to the largest N unless
given, splitting the CPU into that many logical devices); `multiworker` starts
N local worker processes (`--workers N`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from ..arg_types import positive_int
from ..cli_args import WORKLOAD_HELP, add_settings
from ..backend_client import log_path
from ..errors import OutputDirError
from ..numbers import counted
from ..runfiles import RUNS_DIR
from ..scaling import STRATEGIES, ScalingMeasurement, render, scaling_dir
from ..settings import DEFAULT_SEED, DEFAULT_STEPS, RunSettings
from ..trials.execute import backend_executor
from ..trials.speed import SpeedRule

LOGICAL_CPUS_ENV = "TFTURBO_LOGICAL_CPUS"


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
    add_settings(parser, ["fit_call"])
    parser.add_argument("--out", required=True, metavar="DIR", help="the runs and scaling.json go here (a study folder: its scaling/ folder, shown in its report)")
    parser.add_argument("--json", action="store_true", help="print the scaling document as JSON")


def main(args: argparse.Namespace) -> int:
    out = scaling_dir(Path(args.out))  # a study folder keeps its scaling runs in scaling/
    if (out / RUNS_DIR).exists():
        raise OutputDirError(f"{out} already holds runs", "choose a new --out directory")
    try:
        (out / RUNS_DIR).mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputDirError(f"cannot write to {out} ({e.strerror or e})", "choose a writable --out directory") from e
    if args.strategy == "mirrored" and not os.environ.get(LOGICAL_CPUS_ENV):
        os.environ[LOGICAL_CPUS_ENV] = str(max(args.replicas))  # CPU-only machines: N logical devices (GPUs first)
    base = RunSettings(args.workload, steps=args.steps, seed=args.seed, batch_size=args.batch_size,
                       script_args=list(args.script_args), fit_call=args.fit_call)
    measurement = ScalingMeasurement(base, args.strategy, args.replicas,
                                     SpeedRule(args.min_replicates, args.max_replicates))
    execute = backend_executor(out / RUNS_DIR, log_path=log_path())
    while (planned := measurement.next_run()) is not None:
        n = measurement.replicas_of(planned)
        print(f"[{planned.name}] {planned.settings.strategy}, {counted(n, 'replica')} — {planned.settings.steps} steps",
              file=sys.stderr)
        summary, path = execute(planned)
        rate = summary.samples_per_s
        print(f"[{planned.name}] {summary.status}" + (f", {rate:,.0f} samples/s" if rate else ""),
              file=sys.stderr)
        measurement.record(planned, summary, path)
    result = measurement.result()
    result.save(out)
    print(json.dumps(result.to_dict(), indent=2) if args.json else render(result))
    return 0 if result.points[0].samples_per_s is not None else 1
