"""Mixed precision: the heavy math in 16-bit, the weights in float32, the head in float32.

The recommended 16-bit policy of the hardware report (or the one chosen with
--policy; both with --both-policies). The audit's float32-head fix is applied
when it found a 16-bit head (StudyDecisions.fixes_for); a 16-bit rung whose runs
failed on a cause an automatic fix cures is measured once more with it
(`follow_up`). Its code changes set the policy before the model is built and
keep the output layer in float32 (dtype="float32" on the layer the audit found).
"""

from __future__ import annotations

from ... import findings as F
from ...patch import changes as C
from ...settings import with_audit_fixes
from . import Candidate, Lever, as_written

NOT_MEASURED = "not measured: the study kept the sizes it measured"


class MixedPrecision(Lever):
    name = "mixed_precision"
    order = 20
    title = "Mixed precision"
    page = "precision"
    intro = ("Run the heavy math in 16-bit while the weights stay float32. The policy is set before the model "
             "is built; the output layer must stay float32. Kept only if it is faster beyond the noise and the "
             "validation metric holds.")
    settings_changed = ("policy", "fix_head")

    def candidates(self, decisions, chosen: str | None = None) -> list[Candidate]:
        base = decisions.best.settings
        if as_written(decisions).sixteen_bit and base.sixteen_bit and not chosen:
            # the script trains in 16-bit already: does it pay here?
            return [Candidate(self.rung_kind, "float32", base.with_(policy="float32"),
                              f"the script trains in {base.policy}: measured in float32, in case 16-bit is not "
                              "faster on this hardware", decisions.best)]
        return [Candidate(self.rung_kind, p, decisions.fixes_for(base.with_(policy=p)),
                          decisions.policy_reason if p == decisions.policies[0] else "measured on request",
                          decisions.best)
                for p in ([chosen] if chosen else decisions.policies)]

    def follow_up(self, decisions) -> list[Candidate]:
        """A 16-bit rung whose runs failed on a cause an automatic fix cures (its first failing step named it:
        a metric refusing 16-bit outputs, integer ids rounded) is measured once more with that fix."""
        last = next((r for r in reversed(decisions.rungs) if r.kind == self.rung_kind), None)
        if not decisions.auto_fix or last is None or last.decision is None or not last.decision.failed:
            return []
        found = list((last.summary.findings if last.summary else None) or [])
        codes = set(F.codes_of(found))
        s = last.settings
        fixed = with_audit_fixes(s, codes)
        if fixed == s or any(r.settings == fixed for r in decisions.rungs):
            return []
        decisions.audit = list(decisions.audit) + [f for f in found
                                             if f.get("code") in (F.HEAD_NOT_FLOAT32, F.INTEGER_INPUT_16BIT)]
        return [Candidate(self.rung_kind, f"{s.policy}-fixed", fixed,
                          f"the {s.policy} run {last.decision.reason}; measured again with that fix", decisions.best)]

    def slug_for(self, settings) -> str:
        return settings.policy

    def changes(self, rec, base, findings, code=None) -> list[C.Change]:
        out: list[C.Change] = []
        if rec.policy is not None:  # (None: left as the workload wrote it, nothing to change)
            out.append(C.Policy(name=rec.policy, differs=rec.policy != base.policy, why=(
                f"precision policy {rec.policy}, set before the model is built (layers take the policy they are "
                "created under)" if rec.policy != "float32" else "precision policy float32")))
        if not rec.sixteen_bit:
            return out
        if rec.policy == base.policy and not (rec.fix_head or rec.fix_int_inputs):
            return out  # the script's own 16-bit policy, as it wrote it and as measured: nothing more to change
        heads = [f for f in findings if f.get("code") == F.HEAD_NOT_FLOAT32]
        if heads:
            named = tuple(dict.fromkeys((str((f.get("data") or {}).get("layer") or f.get("where") or ""),
                                         str((f.get("data") or {}).get("class") or "")) for f in heads))
            found = ", ".join(dict.fromkeys(str(f.get("where") or "the output layer") for f in heads))
            fix = next((str(f["fix"]) for f in heads if f.get("fix")), "")  # the audit's code for this model
            out.append(C.Float32Head(layers=named, snippet=fix, why=(
                f'float32 head: dtype="float32" on the output layer the audit found in 16-bit ({found}), so its '
                "activation and the loss compute in float32")))
        ids = next((f for f in findings if f.get("code") == F.INTEGER_INPUT_16BIT), None)
        if ids is not None:
            out.append(C.IntegerInput(snippet=str(ids.get("fix") or ""), why=(
                'integer inputs: the ids Input declared dtype="int32", so they reach their lookup exact (16-bit '
                "floats round them)")))
        if rec.policy == "mixed_float16":
            out += [C.ByHand(snippet=str(f.get("fix") or "scale the loss with optimizer.scale_loss(loss)"),
                             reason="a custom train_step is the user's own loop",
                             why="custom train_step: scale the loss under mixed_float16")
                    for f in findings if f.get("code") == F.CUSTOM_LOOP_NO_LOSS_SCALING]
        out += [C.ByHand(snippet=str(f["fix"]), reason=NOT_MEASURED,
                         why=f"{f.get('where') or f.get('code')}: a size that is not a multiple of 8 under 16-bit")
                for f in findings if f.get("code") == F.DIM_NOT_MULTIPLE_OF_8 and f.get("fix")]
        if rec.batch_size and rec.batch_size % 8:
            out += [C.ByHand(snippet=str(f["fix"]), reason=NOT_MEASURED,
                             why=f"batch size {rec.batch_size} is not a multiple of 8 under 16-bit")
                    for f in findings if f.get("code") == F.BATCH_NOT_MULTIPLE_OF_8 and f.get("fix")]
        return out


LEVER = MixedPrecision()
