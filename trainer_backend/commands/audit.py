"""`audit WORKLOAD [--policy P] [--batch-size N] [--jit]`: static findings on the model and its data.

Builds the model under the policy (in this backend process, as a run would;
a training script runs up to its first fit(), so the audit sees the model and
data the script passes to compile/fit),
then inspects it without training — except one eager step of a custom
train_step under mixed_float16, the only way to see whether it scales its loss.
"""

from __future__ import annotations

import argparse

from tfturbo import protocol
from tfturbo.findings import Finding
from tfturbo.settings import DEFAULT_SEED

from ..detectors.xla import jit_support_findings
from ..diagnostics import advice, dataset_audit, integer_inputs, loss_scaling_audit, model_audit

INPUT_SAMPLE_BATCHES = 8  # batches read to see whether a float input holds integer ids


def main(args: argparse.Namespace, writer: protocol.EventWriter) -> int:
    import keras

    from ..workload import load_workload

    workload = load_workload(args.workload, getattr(args, "script_args", None) or [], getattr(args, "fit_call", None))
    writer.emit(protocol.PHASE, phase=protocol.BUILDING, step=None,
                detail=f"building {workload.name} under {args.policy}")
    keras.utils.set_random_seed(DEFAULT_SEED)
    keras.mixed_precision.set_global_policy(args.policy)
    model = workload.build_model()  # a training script runs here, up to its first fit()
    batch_size = args.batch_size or workload.default_batch_size
    train_ds, _val = workload.make_datasets(batch_size)
    first_batch = next(iter(train_ds))

    findings: list[Finding] = []

    def report(new: list[Finding]) -> None:
        for finding in new:
            writer.emit(protocol.FINDING, finding=finding.to_dict())
        findings.extend(new)

    shape = advice.shape_of(workload, model)
    checks = [("output head dtype", lambda: model_audit.head_findings(
        model, sample_x=first_batch[0], sample_y=first_batch[1], shape=shape))]
    if args.policy != "float32":
        checks += [("integer inputs under 16-bit", lambda: integer_inputs.workload_findings(
                       workload, model, [b[0] for b in train_ds.take(INPUT_SAMPLE_BATCHES)], train_ds.element_spec[0])),
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

