"""Mixed precision: the heavy math in 16-bit, the weights in float32, the head in float32.

The recommended 16-bit policy of the hardware report (or the one chosen with
--policy; both with --both-policies). The audit's float32-head fix is applied
when it found a 16-bit head (TuningPolicy.fixes_for); a 16-bit rung whose runs
failed on a cause an automatic fix cures is measured once more with it
(`follow_up`). The snippet sets the policy before the model is built and keeps
the output layer in float32.
"""

from __future__ import annotations

from typing import Any

from ... import findings as F
from ...settings import with_audit_fixes
from . import Candidate, Hunk, Lever


def _added(fix: str) -> list[str]:
    """A finding's fix as patch lines: comments stay comments, code lines are added."""
    return [line if line.startswith("#") else f"+{line}" for line in fix.splitlines()]


class MixedPrecision(Lever):
    name = "mixed_precision"
    order = 20
    title = "Mixed precision"
    page = "precision"
    intro = ("Run the heavy math in 16-bit while the weights stay float32. The policy is set before the model "
             "is built; the output layer must stay float32. Kept only if it is faster beyond the noise and the "
             "validation metric holds.")
    settings_changed = ("policy", "fix_head")

    def candidates(self, policy, chosen: str | None = None) -> list[Candidate]:
        base = policy.best.settings
        return [Candidate(self.rung_kind, p, policy.fixes_for(base.with_(policy=p)),
                          policy.policy_reason if p == policy.policies[0] else "measured on request", policy.best)
                for p in ([chosen] if chosen else policy.policies)]

    def follow_up(self, policy) -> list[Candidate]:
        """A 16-bit rung whose runs failed on a cause an automatic fix cures (its first failing step named it:
        a metric refusing 16-bit outputs, integer ids rounded) is measured once more with that fix."""
        last = next((r for r in reversed(policy.rungs) if r.kind == self.rung_kind), None)
        if not policy.auto_fix or last is None or last.decision is None or not last.decision.failed:
            return []
        codes = set(F.codes_of(list((last.summary or {}).get("findings") or [])))
        s = last.settings
        fixed = with_audit_fixes(s, codes)
        if fixed == s or any(r.settings == fixed for r in policy.rungs):
            return []
        policy.audit = list(policy.audit) + [f for f in (last.summary or {}).get("findings") or []
                                             if f.get("code") in (F.HEAD_NOT_FLOAT32, F.INTEGER_INPUT_16BIT)]
        return [Candidate(self.rung_kind, f"{s.policy}-fixed", fixed,
                          f"the {s.policy} run {last.decision.reason}; measured again with that fix", policy.best)]

    def slug_for(self, settings) -> str:
        return settings.policy

    def hunks(self, rec, base, findings, code=None) -> list[Hunk]:
        out: list[Hunk] = []
        if rec.policy != base.policy:
            out.append(("precision policy: set it BEFORE the model is built (layers take the policy they are "
                        "created under)", [" import keras", f'+keras.mixed_precision.set_global_policy("{rec.policy}")',
                                           " model = build_model()"]))
        if rec.sixteen_bit:
            heads = [f for f in findings if f.get("code") == F.HEAD_NOT_FLOAT32]
            found = "; ".join(f"{f.get('where') or 'output layer'}: {f.get('message', '')}".strip() for f in heads)
            own = next((f.get("fix") for f in heads if f.get("fix")), None)  # written for this model's kind
            out.append((
                "float32 head: the output layer / final activation must compute in float32"
                + (f" (the audit found: {found})" if found else " (keeps softmax and loss from overflowing in 16-bit)"),
                _added(own) if own else [
                    '-outputs = keras.layers.Dense(num_classes, activation="softmax")(x)',
                    '+outputs = keras.layers.Dense(num_classes, activation="softmax", dtype="float32")(x)',
                    "# or, after a 16-bit Dense without activation:",
                    '+outputs = keras.layers.Activation("softmax", dtype="float32")(x)',
                ]))
            ids = next((f.get("fix") for f in findings if f.get("code") == F.INTEGER_INPUT_16BIT and f.get("fix")), None)
            if ids:
                out.append(("integer inputs: token ids / indices must reach their lookup as integers (16-bit floats "
                            "round them)", _added(ids)))
        return out

    def extras(self, rec, findings: list[dict[str, Any]]) -> list[str]:
        out = []
        if rec.policy == "mixed_float16":
            out += [f"# custom train_step: {f.get('fix') or 'scale the loss with optimizer.scale_loss(loss)'}"
                    for f in findings if f.get("code") == F.CUSTOM_LOOP_NO_LOSS_SCALING]
        if rec.sixteen_bit:
            out += [f"# {f.get('where') or f.get('code')}: {f['fix']}" for code in
                    (F.DIM_NOT_MULTIPLE_OF_8, F.BATCH_NOT_MULTIPLE_OF_8)
                    for f in findings if f.get("code") == code and f.get("fix")]
        return out


LEVER = MixedPrecision()
