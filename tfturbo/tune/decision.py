"""Keep or reject one rung of the ladder: faster beyond the noise AND accurate enough.

This is the product's promise in code — never keep a flag that was not
measured to help, and speed that costs accuracy is not speed. The tune
ladder, the wizard and the compare/report views all call `decide()`, so one
rung gets one verdict everywhere.

Both inputs are run summaries (summary.json / the `run` document). The
speed-up comes from `summary.speedup` (per sample, with its interval) and is
judged by `stats.change_verdict`; accuracy is compared at the largest
validation step both runs reached, because adaptive measurement may stop the
runs at different steps and a run stopped earlier has simply trained less.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .. import findings as F
from .. import protocol, summary
from ..numbers import finite
from ..settings import RunSettings
from ..stats import change_verdict
from ..verdicts import Verdict

# Candidate findings that disqualify a rung whatever its speed: it is not training correctly.
DISQUALIFYING = {
    F.RECOMPILE_STORM: "XLA kept recompiling after warm-up (a recompilation storm)",
    F.LOSS_SCALE_COLLAPSE: "the dynamic loss scale collapsed (most steps were skipped)",
}


@dataclass
class Tolerance:
    accuracy_pp: float = 0.5     # percentage points of an accuracy metric
    loss_rel: float = 0.02       # relative, for loss metrics


@dataclass
class RungDecision:
    speedup: float
    speedup_ci95: tuple[float, float]
    val_delta: float | None
    metric: str | None
    kept: bool
    reason: str
    findings: list[dict] = field(default_factory=list)  # SLOWER_THAN_BASELINE / ACCURACY_REGRESSION / ... dicts
    val_step: int | None = None  # the validation step the metrics were compared at (None: final metrics)
    # speed-up over `reference` (the configuration this rung extends) with its interval, when given
    reference_speedup: tuple[float, tuple[float, float]] | None = None


def _label(s: dict[str, Any]) -> str:
    try:
        return RunSettings.from_dict(s.get("settings") or {}).label()
    except Exception:  # a summary from another version: still decide, just name it plainly
        return "this configuration"


def common_validation(baseline: dict[str, Any], candidate: dict[str, Any]) -> tuple[int, dict, dict] | None:
    """(step, baseline metrics, candidate metrics) at the largest validation step both runs reached."""
    def by_step(s: dict[str, Any]) -> dict[int, dict]:
        out = {}
        for v in s.get("validation") or []:
            if isinstance(v, dict) and isinstance(v.get("step"), int) and isinstance(v.get("metrics"), dict):
                out[v["step"]] = v["metrics"]
        return out

    a, b = by_step(baseline), by_step(candidate)
    common = sorted(set(a) & set(b))
    if not common:
        return None
    step = common[-1]
    return step, a[step], b[step]


def accuracy_gate(baseline: dict[str, Any], candidate: dict[str, Any], tolerance: Tolerance
                  ) -> tuple[str | None, float | None, int | None, str | None]:
    """(metric, delta, step, problem): problem is None when the candidate is within tolerance.

    Compared at the largest common validation step; without one, on the final metrics.
    """
    common = common_validation(baseline, candidate)
    if common is not None and summary.primary_metric({"metrics": common[1]}) is not None:
        step, base, cand = common[0], {"metrics": common[1]}, {"metrics": common[2]}
        where = f"at step {step}"
    else:
        step, base, cand = None, baseline, candidate
        where = "at the end of the runs"
    primary = summary.primary_metric(base)
    if primary is None:
        return None, None, step, None  # nothing to gate on; the reason says so
    name, base_value, higher_is_better = primary
    delta = summary.val_delta(base, cand)
    if delta is None:
        value = (cand.get("metrics") or {}).get(name)
        what = "is not a finite number (NaN)" if name in (cand.get("metrics") or {}) else "was not measured"
        return name, None, step, f"{name} {what} {where}" if value is None or not finite(value) else None
    d = delta[1]
    if higher_is_better:
        limit = tolerance.accuracy_pp / 100.0
        worse = -d
        if worse > limit:
            return name, d, step, (f"{name} {d * 100:+.2f} pp {where} "
                                   f"(tolerance {tolerance.accuracy_pp:g} pp)")
    else:
        limit = tolerance.loss_rel * abs(base_value)
        if d > limit:
            rel = d / abs(base_value) if base_value else float("inf")
            return name, d, step, f"{name} {rel:+.1%} {where} (tolerance {tolerance.loss_rel:.0%})"
    return name, d, step, None


def _speed(ratio: float, ci: tuple[float, float]) -> str:
    if not math.isfinite(ratio):
        return "no steady-state step times to compare"
    return f"{ratio:.2f}× [{ci[0]:.2f}, {ci[1]:.2f}]"


def _finding(code: str, message: str, fix: str, where: str, **data: Any) -> dict[str, Any]:
    return F.Finding(code, message, fix, where, data={k: v for k, v in data.items() if v is not None}).to_dict()


def decide(baseline: dict, candidate: dict, tolerance: Tolerance = Tolerance(), *,
           reference: dict | None = None) -> RungDecision:
    """Keep the candidate only if it is faster beyond the noise and its validation metric is within tolerance.

    `speedup` is always against `baseline`, and so is the accuracy gate (tolerances do not add up
    along the ladder). With `reference` (the configuration the candidate extends, e.g. the kept
    mixed-precision rung under "+ XLA"), the candidate must also be faster than that reference.
    """
    where = _label(candidate)
    status = str(candidate.get("status") or protocol.RunStatus.CRASHED)
    ratio, ci = summary.speedup(baseline, candidate)
    ci = (float(ci[0]), float(ci[1]))
    ref_speed = None
    if reference is not None:
        r, rci = summary.speedup(reference, candidate)
        ref_speed = (float(r), (float(rci[0]), float(rci[1])))
    metric, delta, step, problem = accuracy_gate(baseline, candidate, tolerance)

    def result(kept: bool, reason: str, found: list[dict]) -> RungDecision:
        return RungDecision(ratio, ci, delta, metric, kept, reason, found, step, ref_speed)

    if status == protocol.RunStatus.NAN_STOPPED:
        own = [f for f in candidate.get("findings") or [] if isinstance(f, dict) and f.get("code") == F.NAN_LOSS]
        msg = f"{where}: the loss became NaN or infinite; training was stopped"
        return result(False, "NaN loss: " + msg.split(": ", 1)[1], own[:1] or [_finding(
            F.NAN_LOSS, msg, "keep the earlier settings; under mixed precision compute the output layer and "
            "loss in float32 (dtype='float32' on the last layer)", where)])
    if status != protocol.RunStatus.COMPLETED:
        what = {protocol.RunStatus.CANCELLED: "was cancelled before it finished",
                protocol.RunStatus.CRASHED: "crashed (the backend ended without a summary)"}.get(status, "failed")
        err = candidate.get("error") or {}
        detail = f": {err.get('message')}" if isinstance(err, dict) and err.get("message") else ""
        return result(False, f"the run {what}{detail}", [])

    reasons: list[str] = []
    found: list[dict] = []
    for code, text in DISQUALIFYING.items():
        if code in F.codes_of(candidate.get("findings") or []):
            reasons.append(text)
            found.append(_finding(code, f"{where}: {text}", "see the run's finding for the fix", where))

    judged_ratio, judged_ci = ref_speed if ref_speed is not None else (ratio, ci)
    against = "the baseline" if reference is None else _label(reference)
    verdict = change_verdict(judged_ci)
    speed = _speed(judged_ratio, judged_ci)
    if reference is not None and math.isfinite(judged_ratio):
        speed += f" vs {against} ({_speed(ratio, ci)} vs the baseline)"
    if verdict == Verdict.FASTER:
        speed_text = f"faster: {speed}"
    else:
        speed_text = f"{verdict}: {speed}"
        reasons.insert(0, speed_text)
        found.insert(0, _finding(
            F.SLOWER_THAN_BASELINE,
            f"{where} is {'slower than' if verdict == 'slower' else 'not measurably faster than'} "
            f"{against} (throughput per sample {speed})",
            "not recommended: keep the previous settings", where,
            speedup=judged_ratio if math.isfinite(judged_ratio) else None, speedup_ci95=list(judged_ci),
            verdict=verdict, compared_with=against))

    if problem is not None:
        reasons.append(f"accuracy: {problem}")
        code = F.NAN_LOSS if "NaN" in problem else F.ACCURACY_REGRESSION
        found.append(_finding(code, f"{where}: {problem}",
                              "not recommended; if only the 16-bit policy changed, compute the output layer in "
                              "float32 or keep the previous settings", where,
                              metric=metric, delta=delta, step=step))

    if found:
        return result(False, "; ".join(reasons), found)
    if metric is None:
        gate = "no validation metric to compare"
    else:
        shown = f"{delta * 100:+.2f} pp" if not metric.endswith("loss") else f"{delta:+.4f}"
        gate = f"{metric} {shown}" + (f" at step {step}" if step is not None else "") + ", within tolerance"
    return result(True, f"{speed_text}; {gate}", [])


def reference_decision(baseline: dict) -> RungDecision:
    """The baseline's own row: speed-up 1.0, with the interval its own step-time noise allows."""
    median, (lo, hi) = summary.step_time(baseline)
    ci = (median / hi, median / lo) if finite(median) and finite(lo) and finite(hi) and lo > 0 else (1.0, 1.0)
    primary = summary.primary_metric(baseline)
    noise = f" (step time ±{(hi - lo) / 2 / median:.1%})" if ci != (1.0, 1.0) else ""
    return RungDecision(1.0, (float(ci[0]), float(ci[1])), 0.0 if primary else None,
                        primary[0] if primary else None, True, f"reference: {_label(baseline)}{noise}", [])
