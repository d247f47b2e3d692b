"""The code changes a user makes in their own training script for the recommended settings.

The ladder measured settings (policy, XLA, batch, learning-rate scale, the
automatic fixes); a user applies them as code. This turns the difference
between the baseline and the recommended settings, plus what the audit
found, into a patch-like snippet: `-` lines to change, `+` lines to write,
each with the reason. The tune command, the wizard and the report all show
this same text.
"""

from __future__ import annotations

from typing import Any

from .. import findings as F
from ..settings import RunSettings


def _settings(s: RunSettings | dict[str, Any] | None) -> RunSettings:
    if isinstance(s, RunSettings):
        return s
    return RunSettings.from_dict(s or {})


def _where(findings: list[dict[str, Any]], code: str) -> list[dict[str, Any]]:
    return [f for f in findings or [] if isinstance(f, dict) and f.get("code") == code]


def _fmt_scale(x: float) -> str:
    return f"{x:.3f}".rstrip("0").rstrip(".")


def snippet(recommended_settings: RunSettings | dict[str, Any] | None,
            baseline_settings: RunSettings | dict[str, Any] | None,
            findings: list[dict[str, Any]] | None = None) -> str:
    """Patch-like text with the changes from `baseline_settings` to `recommended_settings`."""
    rec, base = _settings(recommended_settings), _settings(baseline_settings)
    findings = findings or []
    hunks: list[tuple[str, list[str]]] = []  # (why, patch lines)

    if rec.policy != base.policy:
        hunks.append((
            "precision policy: set it BEFORE the model is built (layers take the policy they are created under)", [
            " import keras",
            f'+keras.mixed_precision.set_global_policy("{rec.policy}")',
            " model = build_model()",
        ]))
    if rec.sixteen_bit:
        heads = _where(findings, F.HEAD_NOT_FLOAT32)
        found = "; ".join(f"{f.get('where') or 'output layer'}: {f.get('message', '')}".strip() for f in heads)
        own = next((f.get("fix") for f in heads if f.get("fix")), None)  # written for this model's kind
        hunks.append((
            "float32 head: the output layer / final activation must compute in float32"
            + (f" (the audit found: {found})" if found else " (keeps softmax and loss from overflowing in 16-bit)"),
            [line if line.startswith("#") else f"+{line}" for line in own.splitlines()] if own else [
            '-outputs = keras.layers.Dense(num_classes, activation="softmax")(x)',
            '+outputs = keras.layers.Dense(num_classes, activation="softmax", dtype="float32")(x)',
            "# or, after a 16-bit Dense without activation:",
            '+outputs = keras.layers.Activation("softmax", dtype="float32")(x)',
        ]))
        ids = next((f.get("fix") for f in _where(findings, F.INTEGER_INPUT_16BIT) if f.get("fix")), None)
        if ids:
            hunks.append(("integer inputs: token ids / indices must reach their lookup as integers (16-bit floats "
                          "round them)", [line if line.startswith("#") else f"+{line}" for line in ids.splitlines()]))
    xla = rec.jit_compile and not base.jit_compile
    spe = rec.steps_per_execution != base.steps_per_execution
    if xla or spe:
        why = (["XLA: compile the training step"] if xla else []) + \
            ([f"{rec.steps_per_execution} steps per call of the compiled step (short steps: less host overhead)"]
             if spe else [])
        args = (["jit_compile=True"] if xla else []) + \
            ([f"steps_per_execution={rec.steps_per_execution}"] if spe else [])
        hunks.append(("; ".join(why), [
            " model.compile(optimizer=optimizer, loss=loss, metrics=metrics,",
            f"+              {', '.join(args)})",
        ]))
    if rec.xla_autoclustering and not base.xla_autoclustering:
        hunks.append((
            "XLA auto-clustering: XLA compiles the parts of the step it supports (set before training)", [
            " import tensorflow as tf",
            '+tf.config.optimizer.set_jit("autoclustering")',
        ]))
    if rec.input_fixes and not base.input_fixes:
        applied = next((f.get("fix") for f in _where(findings, F.INPUT_FIXES_APPLIED) if f.get("fix")), None)
        hunks.append((
            "input pipeline: the automatic tf.data fixes tfturbo measured (at the end of make_datasets())",
            ["+" + line for line in (applied or "train_ds = train_ds.prefetch(tf.data.AUTOTUNE)").splitlines()]))
    batch_changed = rec.batch_size and base.batch_size and rec.batch_size != base.batch_size
    drop = rec.drop_remainder or rec.jit_compile
    if batch_changed or (drop and not base.drop_remainder):
        old_batch = base.batch_size or "BATCH_SIZE"
        new_batch = rec.batch_size or old_batch
        why = []
        if drop:
            why.append("drop_remainder=True keeps the batch shape fixed, so XLA compiles once"
                       if rec.jit_compile else "drop the partial last batch")
        if batch_changed:
            why.append(f"batch {old_batch} → {new_batch}: the largest size the batch search kept (faster per sample, "
                       "accuracy within tolerance)")
        hunks.append((
            "input pipeline: " + "; ".join(why), [
            f"-train_ds = train_ds.batch({old_batch})",
            f"+train_ds = train_ds.batch({new_batch}{', drop_remainder=True' if drop else ''})",
        ]))
    if abs(rec.lr_scale - base.lr_scale) > 1e-9:
        factor = rec.lr_scale / base.lr_scale
        hunks.append((
            "learning rate: linear scaling rule (multiply it by the factor the batch grew)", [
            "-optimizer = keras.optimizers.Adam(learning_rate=LEARNING_RATE)",
            f"+optimizer = keras.optimizers.Adam(learning_rate=LEARNING_RATE * {_fmt_scale(factor)})",
        ]))

    extras = []
    if rec.policy == "mixed_float16":
        for f in _where(findings, F.CUSTOM_LOOP_NO_LOSS_SCALING):
            extras.append(f"# custom train_step: {f.get('fix') or 'scale the loss with optimizer.scale_loss(loss)'}")
    if rec.sixteen_bit:
        for code in (F.DIM_NOT_MULTIPLE_OF_8, F.BATCH_NOT_MULTIPLE_OF_8):
            for f in _where(findings, code):
                if f.get("fix"):
                    extras.append(f"# {f.get('where') or code}: {f['fix']}")

    title = f"# tfturbo: changes for the recommended settings — {rec.label()}"
    if not hunks:
        return "\n".join([
            title,
            f"# No code changes: the measured ladder kept your current settings ({base.label()}).",
            "# No change beat them beyond the measurement noise while keeping the validation metric.",
            *extras,
        ]) + "\n"
    lines = [title]
    for i, (why, patch) in enumerate(hunks, 1):
        lines += ["", f"# {i}. {why}", *patch]
    if extras:
        lines += ["", "# also, under the 16-bit policy:", *extras]
    return "\n".join(lines) + "\n"
