"""`audit WORKLOAD [--policy P] [--batch-size N] [--jit]`: static findings on the model and its data.

Builds the model under the policy (in this backend process, as a run would;
a training script runs up to its first fit(), so the audit sees the model and
data the script passes to compile/fit),
then inspects it without training — except one eager step of a custom
train_step under mixed_float16, the only way to see whether it scales its loss.
A script or model that fails only under the policy (an op given a 16-bit and
a float32 tensor: DTYPE_MISMATCH_16BIT) is that finding, and the other checks
run on it built under float32 (`built_under`).
"""

from __future__ import annotations

import argparse
import sys

from tfturbo import protocol
from tfturbo.findings import Finding
from tfturbo.settings import DEFAULT_SEED

from ..batch_parts import features, labels
from ..detectors.xla import jit_support_findings
from ..diagnostics import advice, dataset_audit, integer_inputs, loss_scaling_audit, model_audit
from ..diagnostics.sixteen_bit_hazard import SixteenBitFailure

INPUT_SAMPLE_BATCHES = 8  # batches read to see whether a float input holds integer ids


def main(args: argparse.Namespace, writer: protocol.EventWriter) -> int:
    from ..workload import load_workload

    findings: list[Finding] = []

    def report(new: list[Finding]) -> None:
        for finding in new:
            writer.emit(protocol.FINDING, finding=finding.to_dict())
        findings.extend(new)

    args.policy = args.policy or "float32"  # no --policy: the checks of a float32 build (a study names its 16-bit one)
    script_args, fit_call = getattr(args, "script_args", None) or [], getattr(args, "fit_call", None)
    workload = load_workload(args.workload, script_args, fit_call)
    writer.emit(protocol.PHASE, phase=protocol.BUILDING, step=None,
                detail=f"building {workload.name} under {args.policy}")
    built_under = args.policy
    try:
        model = build(workload, args.policy)  # a training script runs here, up to its first fit()
    except SixteenBitFailure as failure:  # only the policy makes it fail: a finding, and the rest audited without it
        report([failure.finding])
        print(f"tfturbo: {workload.name} fails under {args.policy} ({failure.finding.where}); the other checks "
              "ran on it built under float32", file=sys.stderr)
        workload, built_under = load_workload(args.workload, script_args, fit_call), "float32"
        model = build(workload, built_under)
    batch_size = args.batch_size or workload.default_batch_size
    train_ds, _val = workload.make_datasets(batch_size)
    first_batch = next(iter(train_ds))

    shape = advice.shape_of(workload, model)
    checks = [("output head dtype", lambda: model_audit.head_findings(
        model, sample_x=features(first_batch), sample_y=labels(first_batch), shape=shape))]
    if built_under != "float32":  # the 16-bit checks read the model built under the policy
        checks += [("integer inputs under 16-bit", lambda: integer_inputs.workload_findings(
                       workload, model, [features(b) for b in train_ds.take(INPUT_SAMPLE_BATCHES)], features(train_ds.element_spec))),
                   ("layer sizes", lambda: model_audit.dim_findings(model)),
                   ("batch size", lambda: dataset_audit.batch_findings(batch_size, args.policy, shape)),
                   ("custom train_step loss scaling",
                    lambda: loss_scaling_audit.custom_loop_findings(model, args.policy, first_batch))]
    if args.jit:
        checks += [("dataset shapes under XLA", lambda: dataset_audit.xla_findings(train_ds, batch_size, shape=shape)),
                   ("XLA support", lambda: jit_support_findings(model))]
    for i, (what, check) in enumerate(checks):
        writer.emit(protocol.PROGRESS, step=i, total=len(checks), eta_s=None, detail=what)
        report(check())
    writer.emit(protocol.PROGRESS, step=len(checks), total=len(checks), eta_s=0.0)

    document = {
        "findings": [f.to_dict() for f in findings],
        "workload": workload.describe(),
        "policy": args.policy,
        "built_under": built_under,  # float32 when the build failed under the policy (DTYPE_MISMATCH_16BIT)
        "jit_compile": bool(args.jit),
        "batch_size": batch_size,
        "layers": model_audit.layer_table(model),  # after the checks: a subclassed model is built by then
        "dataset": {"element_spec": dataset_audit.describe_spec(train_ds),
                    "cardinality": int(train_ds.cardinality())},
        "checks": [what for what, _ in checks],
    }
    call = getattr(workload, "call", None)  # a training script: the length it trains for on its own
    per_epoch = (call.steps_per_epoch or int(train_ds.cardinality())) if call is not None else 0
    if call is not None and per_epoch > 0:
        document["own_length"] = {"epochs": int(call.epochs), "steps_per_epoch": per_epoch,
                                  "steps": int(call.epochs) * per_epoch}
    writer.emit(protocol.RESULT, command="audit", document=document)
    return 0


def build(workload, policy: str):
    """The workload's model built under `policy`, with the seed every audit uses."""
    import keras

    keras.utils.set_random_seed(DEFAULT_SEED)
    keras.mixed_precision.set_global_policy(policy)
    return workload.build_model()

