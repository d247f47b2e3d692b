"""Findings read from profiles (docs/FINDINGS.md): one run's (`run_findings`, raised by the backend into its
summary) and a run's against the baseline's (`compare_findings`, which the wizard's rung pages and the
report call on the two profile.json documents, so every front end shows the same).

Thresholds, and where they come from:
- MATMUL_NOT_16BIT: under a 16-bit policy, less than half of the matmul/conv and attention time is 16-bit.
  The tutorial's "0% Tensor Core usage" case as it reads on a Volta/Turing GPU; on an Ampere or later GPU
  with TF32 on (TensorFlow's default) float32 matmuls use Tensor Cores too, at TF32's precision and half
  16-bit's rate, so the finding says so there instead of "no Tensor Cores". Half is the line where most of
  the heavy math still runs in float32, so the policy cannot deliver its speed-up.
- CASTS_HEAVY: Cast ops take 10% or more of the op time. Mixed precision adds casts at every layer boundary;
  a few percent is its normal price (3.7% on builtin:transformer under mixed_bfloat16, CPU), 10% means the
  model switches dtypes far more often than it computes.
- HOST_OVERHEAD: host compute plus kernel launch take 15% or more of the step (warning), 3–15% (info):
  XProf's overview-page bands for a kernel-launch / "all other" bound step.
- OP_SLOWER: under 16-bit or XLA, a category's time per step rose by 25% or more of its own and its share of the
  op time by 5 points or more. Shares, not milliseconds: six identical float32 runs of builtin:transformer on
  this loaded 2-core machine took 26–62 ms of op time per step, while their shares spread by at most 10 points
  (matmul/conv 29–39%) and mostly 2–5; the fronts compare a candidate with the reference run profiled beside it
  (the trial's first pair), which shares the machine's minute. A pointer to the part that ate the gain, from one
  pair's profiles, never a verdict. Never on the input pipeline's ops: they run on tf.data's own threads, and
  neither lever changes them (issue 42: OP_SLOWER on tf.data internals when XLA's time was read as input).
"""

from __future__ import annotations

import re
from typing import Any

from . import findings as fc
from .findings import Finding
from .profile import CASTS, HEAVY, INPUT, LABELS, Profile, compare, short_name

SIXTEEN_BIT_MIN_SHARE = 0.5
CASTS_MAX_SHARE = 0.10
HOST_HIGH, HOST_MODERATE = 15.0, 3.0  # % of the step, XProf's bands
SLOWER_RELATIVE, SLOWER_SHARE_POINTS = 0.25, 5.0


def _get(settings: Any, key: str, default: Any) -> Any:
    if isinstance(settings, dict):
        return settings.get(key, default)
    return getattr(settings, key, default)


def run_findings(profile: Profile, settings: Any, tf32: bool | None = None) -> list[Finding]:
    """The findings one run's profile raises by itself; `tf32`: float32 matmuls ran as TF32 (the summary's)."""
    if not profile.available:
        return []
    out: list[Finding] = []
    policy = str(_get(settings, "policy", "float32"))
    share = profile.sixteen_bit_share()
    if policy != "float32" and share is not None and share < SIXTEEN_BIT_MIN_SHARE:
        ops = [short_name(n) for n in profile.sixteen_bit.get("float32_ops") or []]
        named = ", ".join(ops[:4]) or "the heavy ops"
        out.append(Finding(
            fc.MATMUL_NOT_16BIT,
            f"under {policy}, only {100 * share:.0f}% of the matmul/conv and attention time runs in 16-bit; "
            f"float32: {named}"
            + (" (TF32 is on: these use Tensor Cores at TF32's precision, about half the 16-bit rate)" if tf32
               else "") + ". Usual causes: the layer was built with dtype=\"float32\" (or before the policy "
            "was set), a width or batch that is not a multiple of 8, or an op without a 16-bit kernel on this "
            f"device ({profile.sixteen_bit.get('source', '')})",
            fix="keras.mixed_precision.set_global_policy(\"" + policy + "\")  # before the model is built\n"
                "# and leave dtype unset on the heavy layers; round widths to multiples of 8 "
                "(tfturbo audit --policy " + policy + ")",
            where=ops[0] if ops else "", data={"share": share, "float32_ops": ops}))
    casts = profile.share(CASTS)
    if casts >= CASTS_MAX_SHARE:
        out.append(Finding(
            fc.CASTS_HEAVY, f"Cast ops take {100 * casts:.0f}% of the step's op time "
                            f"({profile.categories.get(CASTS, 0):.2f} ms per step)",
            fix="keep the dtype the same across neighbouring layers (no float32 island in a 16-bit model, no "
                "tf.cast inside the model's call), and cast the input batch once in the tf.data pipeline",
            where="Cast", data={"share": casts}))
    breakdown = profile.step_breakdown
    if breakdown.get("available"):
        ms = breakdown.get("ms") or {}
        step = breakdown.get("step_ms") or 0
        host = sum(v for v in (ms.get("host_compute"), ms.get("kernel_launch")) if isinstance(v, (int, float)))
        pct = 100 * host / step if step else 0.0
        if pct >= HOST_MODERATE:
            out.append(Finding(
                fc.HOST_OVERHEAD,
                f"{pct:.0f}% of each step is host compute and kernel launch ({host:.2f} of {step:.2f} ms): "
                "the device waits for the host" + (" (XProf: highly bound)" if pct >= HOST_HIGH else ""),
                fix="model.compile(..., steps_per_execution=32)  # fewer host round trips\n"
                    "model.compile(..., jit_compile=True)  # XLA fuses the small kernels",
                severity=fc.WARNING if pct >= HOST_HIGH else fc.INFO, where="host",
                data={"percent": pct, "note": breakdown.get("note", "")}))
    return out


def compare_findings(base: Profile, run: Profile, base_settings: Any, run_settings: Any) -> list[Finding]:
    """The categories that got slower under the change from `base_settings` to `run_settings` (16-bit or XLA)."""
    change = compare(base, run)
    base_op, run_op = base.op_ms_per_step, run.op_ms_per_step
    if change is None or not base_op or not run_op:  # compare() found no op times
        return []
    to_16 = str(_get(run_settings, "policy", "float32")) != str(_get(base_settings, "policy", "float32"))
    to_xla = bool(_get(run_settings, "jit_compile", False)) and not bool(_get(base_settings, "jit_compile", False))
    if not (to_16 or to_xla):
        return []
    lever = " and ".join(w for w, on in (("16-bit", to_16), ("XLA", to_xla)) if on)
    out = []
    for c in change.changes:
        rel = c.relative
        if c.category == INPUT:  # tf.data's ops: neither 16-bit nor XLA changes them (nor reads them as slower)
            continue
        if rel is None or rel < SLOWER_RELATIVE or change.share_points(c) < SLOWER_SHARE_POINTS:
            continue
        ops = [short_name(r.name) or r.type for r in run.top_ops if r.category == c.category][:3]
        layers = sorted({_layer(n) for n in ops if _layer(n)})
        fix = ("# compute these layers in float32, the rest stays 16-bit:\n" +
               "\n".join(f'model.get_layer("{name}").dtype_policy = keras.DTypePolicy("float32")'
                         for name in layers[:3]) + "\nmodel.compile(...)  # again, after the change"
               if to_16 and layers else
               "keep this part out of the change: compute its layers in float32 "
               "(layer.dtype_policy = keras.DTypePolicy(\"float32\"), then compile again)" if to_16 else
               "try XLA auto-clustering instead of jit_compile=True: tf.config.optimizer.set_jit(\"autoclustering\")")
        out.append(Finding(
            fc.OP_SLOWER,
            f"{LABELS[c.category]} got slower under {lever}: {c.base_ms:.2f} → {c.run_ms:.2f} ms per step "
            f"(+{100 * rel:.0f}%; its share of the op time {100 * c.base_ms / base_op:.0f}% → "
            f"{100 * c.run_ms / run_op:.0f}%)"
            + (f"; most of it in {', '.join(ops)}" if ops else ""),
            fix=fix, where=LABELS[c.category],
            data={"category": c.category, "base_ms": c.base_ms, "run_ms": c.run_ms, "relative": rel,
                  "share_points": change.share_points(c), "heavy": c.category in HEAVY}))
    return out


def _layer(op_name: str) -> str:
    """The layer scope an op ran in ('StatefulPartitionedCall/functional_1/layer_normalization_1/Mul' →
    'layer_normalization'): the innermost scope that is not the model, a gradient or the call."""
    scopes = [s for s in short_name(op_name).split("/")[:-1]
              if s != "gradient_tape" and not s.startswith(("functional", "sequential"))]
    return re.sub(r"_\d+$", "", scopes[0]) if scopes else ""
