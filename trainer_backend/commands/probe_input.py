"""`probe-input WORKLOAD [--batch-size N] [--steps N] [--input-fixes]`: input-bound or compute-bound, with its
measurements (with --input-fixes: measured on the training data with the automatic tf.data fixes).

The model is built in float32 with the workload's own compile settings; the
verdict does not depend on the precision policy (checklist step 1 comes
before any tuning).
"""

from __future__ import annotations

import argparse

from tfturbo import protocol

from ..diagnostics import input_probe

PROBES = 4  # input alone, step alone, real training, profiler analysis
MAX_CACHE_FILL = 2000  # batches of warm-up at most to fill an added cache (a longer pass is measured while filling)


def cache_fill(train_ds, cached: bool, steps: int) -> int | None:
    """With a cache() added, each probe first reads one whole pass (at most MAX_CACHE_FILL batches) as its
    warm-up: the steady state of a cached pipeline begins at its second pass, and a short probe would never
    reach it. None: the default warm-up."""
    if not cached:
        return None
    return max(input_probe.warmup_steps(steps), min(int(train_ds.cardinality()), MAX_CACHE_FILL))


def main(args: argparse.Namespace, writer: protocol.EventWriter) -> int:
    import keras

    from ..workload import load_workload

    workload = load_workload(args.workload, getattr(args, "script_args", None) or [], getattr(args, "fit_call", None))
    writer.emit(protocol.PHASE, phase=protocol.BUILDING, step=None, detail=f"building {workload.name}")
    keras.utils.set_random_seed(args.seed)
    model = workload.build_model()  # a training script runs here, up to its first fit()
    batch_size = args.batch_size or workload.default_batch_size
    train_ds, _val = workload.make_datasets(batch_size)
    fixes, warmup = [], None
    if args.input_fixes:  # the same fixes a run applies: the re-probe of the ladder's input_pipeline rung
        from .run import input_fixes

        train_ds, applied = input_fixes(train_ds, batch_size)
        fixes.append(applied.to_dict())
        warmup = cache_fill(train_ds, bool(applied.data.get("cache")), args.steps)

    def on_phase(detail: str, index: int) -> None:
        writer.emit(protocol.PHASE, phase=protocol.MEASURING, step=None, detail=detail)
        writer.emit(protocol.PROGRESS, step=index, total=PROBES, eta_s=None, detail=detail)

    from ..diagnostics.advice import shape_of

    document = input_probe.probe(model, train_ds, args.steps, on_phase, warmup=warmup,
                                 shape=shape_of(workload, model), batch_size=batch_size)
    document["findings"] = fixes + document["findings"]
    writer.emit(protocol.PROGRESS, step=PROBES, total=PROBES, eta_s=0.0)
    for finding in document["findings"]:
        writer.emit(protocol.FINDING, finding=finding)
    document.update(workload=workload.describe(),
                    batch_size=batch_size, input_fixes=bool(args.input_fixes))
    writer.emit(protocol.RESULT, command="probe-input", document=document)
    return 0
