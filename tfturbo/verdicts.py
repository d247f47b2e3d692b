"""The words a measurement ends in, each owned here once.

They are strings, not enum members, because they are written into files users
keep (summary.json, study.yaml, `--json` documents) and compared with what
those files hold; the classes only group them so that a name says what kind
of word it is (`Verdict.BASELINE` is a speed verdict, `RungKind.BASELINE` a
rung of the ladder).
"""

from __future__ import annotations


class Verdict:
    """A speed-up judged by its 95% interval (`trials.verdict.speed_verdict_of`), or the run every other is judged
    against."""

    FASTER = "faster"
    SLOWER = "slower"
    NO_CHANGE = "no measurable change"
    NOT_ENOUGH = "not enough measurement"  # too few measured pairs, or replicates too short: no ratio at all
    BASELINE = "baseline"
    FAILED = "failed"  # B's runs failed (error, NaN, crash): nothing was measured to judge
    NOT_APPLIED = "did not take effect"  # B's first run shows its change did not happen (XLA not active): no ratio


class AccuracyVerdict:
    """B's validation metric against A's, paired on the same examples (`trials.accuracy.gate`)."""

    WITHIN = "within tolerance"
    WORSE = "worse"
    INCONCLUSIVE = "inconclusive"
    NOT_MEASURED = "not measured"  # B's runs failed: there is no accuracy to judge


class ProbeVerdict:
    """What limits the step rate, by `probe-input` (its document's `verdict`)."""

    INPUT_BOUND = "input_bound"
    COMPUTE_BOUND = "compute_bound"


class ProbeBand:
    """How much of a step waits for input, in XProf's overview-page bands (the probe document's `band`):
    HIGH is the input-bound verdict, MODERATE a warning, LOW not input-bound."""

    HIGH = "high"
    MODERATE = "moderate"
    LOW = "low"


def input_share_fact(doc: dict) -> tuple[str, str]:
    """The probe document's share of a step not explained by compute, as (label, value) for every front end:
    "Time waiting for input" when the input alone is slow enough to account for it; else said as what it is
    (a card read "Time waiting for input 41%" beside "compute-bound": the input alone took 0.15 ms a batch,
    the gap was host noise)."""
    share = f"{doc['input_fraction']:.0%}"
    step, limits = doc.get("step_ms") or {}, doc.get("thresholds") or {}
    data, compute, train = (step.get(k) for k in ("data", "compute", "train"))
    explains = limits.get("data_explains_gap")
    if not all(isinstance(v, (int, float)) for v in (data, compute, train, explains)):
        return "Time waiting for input", share
    gap = max(0.0, train - compute)
    if gap == 0 or data >= explains * gap:
        return "Time waiting for input", share
    return "Slower than compute alone", (f"{share} of a step ({gap:.2f} ms): not the input, which alone takes "
                                         f"{data:.2f} ms a batch — host noise")
