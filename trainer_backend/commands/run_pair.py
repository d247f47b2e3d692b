"""`run-pair`: a trial's paired speed replicate — two speed-only runs built and measured in one process.

Why (docs/MEASUREMENT.md, "Paired speed replicates"): a replicate in its own
process spends most of its time starting the interpreter, importing
TensorFlow, building and warming up; two arms in one process pay the start-up
once and measure in interleaved blocks (`trainer_backend.blocks`), so each
arm's steady time can be sized to the process's own overhead.

Each arm is prepared exactly as `run` prepares it (`run.prepare`: its dtype
policy set before its model is built, so each model and optimizer keep their
own), written into its own run directory exactly as a speed-only `run`
(run.yaml, events.jsonl, summary.json; `run.start_run` / `run.finish_run`),
and its events on stdout carry its run's name. Each summary also gets the
rates of the windows either side of every hand-over (`hand_overs`), from
which the pair's speed ratio is taken (`tfturbo.summary.hand_over_ratio`). A failure in one arm stops the
other at its next step: the failing run is marked failed, the other's summary
is written (cancelled). The stop command stops both.
"""

from __future__ import annotations

import argparse
import threading
from pathlib import Path

from tfturbo import protocol, runfiles
from tfturbo.cli_args import pair_arms
from tfturbo.errors import UserError
from tfturbo.summary import window_rate

from .. import stdio
from ..blocks import BLOCKS_PER_ARM, ArmBlocks, Blocks, hand_overs
from . import run


def steady_rates(a: run.ActiveRun) -> list[tuple[int, float]]:
    """(holding, samples/s) of the arm's steady windows in time order, a window shorter than half the steady
    window left out (the few steps left when fit() returns): what `blocks.hand_overs` pairs across arms."""
    batch = a.job.settings.batch_size or 1
    return [(a.instrument.window_holding[w[0]], window_rate(w, batch)) for w in a.monitor.record.steady_windows()
            if w[0] in a.instrument.window_holding and w[2] >= a.instrument.steady_window_s / 2]


def main(args: argparse.Namespace, writer: protocol.EventWriter) -> tuple[str, int]:
    import keras

    arms = [(settings, Path(out)) for settings, out in pair_arms(args)]
    if arms[0][1].name == arms[1][1].name:
        raise UserError("run-pair needs two run directories with different names", "give each arm its own --out")
    for settings, out in arms:
        if not settings.speed_only:
            raise UserError("run-pair measures speed only", "add --speed-only to both arms")
        if out.exists():
            runfiles.prepare_run_dir(out)  # refuse an existing run before the expensive part; creates nothing
    writers = [writer.for_run(out.name) for _, out in arms]
    jobs = [run.prepare(settings, w) for (settings, _), w in zip(arms, writers)]  # each sets its own policy
    dirs = [runfiles.prepare_run_dir(out) for _, out in arms]
    for run_dir in dirs:  # the process's one stderr, in both runs' backend.log
        stdio.attach_log(run_dir / runfiles.BACKEND_LOG)
    active = [run.start_run(job, run_dir, w, log=False) for job, run_dir, w in zip(jobs, dirs, writers)]
    active[1].position = 1  # traces after the first arm: its own uid start (`xla_flags.align_trace_uid`)
    for a in active:  # one allocator (one process's RSS on a CPU) holds both arms: its peak is the pair's
        a.memory_note = (f"the peak of this paired process, whose two arms ({arms[0][1].name}, {arms[1][1].name}) "
                         "share one allocator: not this run's alone")
    names = [d.name for d in dirs]
    blocks = Blocks(names[0], names[1], blocks=args.blocks or BLOCKS_PER_ARM)
    for a, name in zip(active, names):
        a.instrument.blocks = ArmBlocks(blocks, name, args.steady_s / blocks.blocks)

    def train_arm(a: run.ActiveRun, name: str) -> None:
        try:
            blocks.wait_turn(name)
            keras.mixed_precision.set_global_policy(a.job.settings.policy)  # Keras' global state is per thread
            run.fit(a)
            if a.error is not None:
                blocks.abort()
        except BaseException:  # run.fit keeps its own errors; anything else must not hang the other
            blocks.abort()
            raise
        finally:
            blocks.finish(name)

    threads = [threading.Thread(target=train_arm, args=(a, name), name=f"arm-{name}") for a, name in zip(active, names)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for a, rows in zip(active, hand_overs({name: steady_rates(a) for a, name in zip(active, names)}).values()):
        a.hand_overs = [[round(own, 3), round(other, 3)] for own, other in rows]
    results = []
    for a, name in zip(active, names):
        a.wall_s = blocks.active_s[name]  # its own blocks: the other arm's time is not this run's
        keras.mixed_precision.set_global_policy(a.job.settings.policy)
        results.append(run.finish_run(a))
    documents = {name: a.document for name, a in zip(names, active)}
    writer.emit(protocol.RESULT, command="run-pair", document={
        "runs": documents, "blocks": blocks.blocks, "order": blocks.schedule,
        "switch_s": [round(s, 6) for s in blocks.switch_s]})
    failed = [r for r in results if r[0] != protocol.RunStatus.COMPLETED]
    return failed[0] if failed else results[0]
