"""The words a measurement ends in, each owned here once.

They are strings, not enum members, because they are written into files users
keep (summary.json, study.yaml, `--json` documents) and compared with what
those files hold; the classes only group them so that a name says what kind
of word it is (`Verdict.BASELINE` is a speed verdict, `RungKind.BASELINE` a
rung of the ladder).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .input_probe import InputProbe


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


class Decision:
    """Whether a measured configuration was kept: the one pair of words the wizard's pages, the compare table, the
    step list and the PDF say it with (the PDF said "rejected" where the wizard said "not kept" for the same
    decision, issue 42)."""

    KEPT = "kept"
    NOT_KEPT = "not kept"

    @staticmethod
    def word(kept: bool) -> str:
        return Decision.KEPT if kept else Decision.NOT_KEPT


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


def input_explains_gap(data_ms: float, compute_ms: float, train_ms: float, explains: float) -> bool:
    """True when the input alone (`data_ms` a batch) is slow enough to account for the part of a real step that
    compute does not explain: at least `explains` of that gap (the input probe's EXPLAINS_GAP, its threshold).
    False means the gap is host noise, not the pipeline. The probe decides with it
    (`trainer_backend/diagnostics/input_probe.decide`) and records the answer (`input_explains_gap`)."""
    return data_ms >= explains * max(0.0, train_ms - compute_ms)


COMPUTE_NOISE = "slower than training: noise of a few-second probe, not a finding"


def compute_rates(doc: InputProbe) -> tuple[float, float] | None:
    """(compute alone, real training) in steps/s from the probe document, when both were measured."""
    compute, train = doc.compute_steps_per_s, doc.train_steps_per_s
    step = doc.step_ms or {}
    if not (isinstance(compute, (int, float)) and isinstance(train, (int, float))):
        c_ms, t_ms = step.get("compute"), step.get("train")
        if not (isinstance(c_ms, (int, float)) and isinstance(t_ms, (int, float)) and c_ms > 0 and t_ms > 0):
            return None
        compute, train = 1000.0 / c_ms, 1000.0 / t_ms
    return float(compute), float(train)


def compute_slower_than_training(doc: InputProbe) -> bool:
    """The training step alone (one cached batch) ran slower than real training. It cannot be, as a measurement of
    the job: the cached step does less work. Each probe lasts seconds on a shared machine, so it is the probes'
    noise (issue 42: "compute alone 523.5 steps/s" beside training 750.2); it leaves no gap for the input to fill,
    so no wait is seen, and it is said as noise, never a finding."""
    rates = compute_rates(doc)
    return rates is not None and rates[0] < rates[1]


def input_share_fact(doc: InputProbe) -> tuple[str, str]:
    """The probe document's share of a step not explained by compute, as (label, value) for every front end:
    "Time waiting for input" when the probe found the input alone slow enough to account for it
    (`input_explains_gap`); else said as what it is (a card read "Time waiting for input 41%" beside
    "compute-bound": the input alone took 0.15 ms a batch, the gap was host noise). Compute alone slower than
    training is the probes' noise, said so beside the 0% it gives (`compute_slower_than_training`)."""
    share = f"{doc.input_fraction:.0%}"
    if compute_slower_than_training(doc):
        rates = compute_rates(doc)
        assert rates is not None
        return "Time waiting for input", (f"{share}: none seen — compute alone ran slower than training "
                                          f"({rates[0]:.1f} vs {rates[1]:.1f} steps/s), noise of a few-second "
                                          "probe, not a finding")
    step = doc.step_ms or {}
    data, compute, train = (step.get(k) for k in ("data", "compute", "train"))
    if not (isinstance(data, (int, float)) and isinstance(compute, (int, float)) and isinstance(train, (int, float))):
        return "Time waiting for input", share
    explained = doc.input_explains_gap
    if not isinstance(explained, bool):  # a document from before the probe recorded its decision: the same rule
        explains = (doc.thresholds or {}).get("data_explains_gap")
        explained = not isinstance(explains, (int, float)) or input_explains_gap(data, compute, train, explains)
    if explained:
        return "Time waiting for input", share
    gap = max(0.0, train - compute)
    return "Slower than compute alone", (f"{share} of a step ({_ms(gap)}): not the input, which alone takes "
                                         f"{_ms(data)} a batch — host noise")


def probe_training_note(doc: InputProbe, steady: float | None, ci: tuple[float, float] | None,
                        median_ms: float | None) -> str:
    """Why the probe's real-training rate differs from the baseline run's steady speed ('' when either is missing).
    They measure different things: the probe is the median step of a few seconds of `fit()` with no callback of
    the script's and no validation; the steady speed counts every step of the run's measured windows (its slow
    ones too). Issue-42 walk: "Both (training) 471.0 steps/s" sat above "Steady speed 420.8 [373.4, 445.7]" with
    no word; the run's own median step (2.14 ms, 468 steps/s) agreed with the probe. Inside the interval it is
    said to be the same speed (noise)."""
    rates = compute_rates(doc)
    if rates is None or not steady:
        return ""
    train = rates[1]
    if ci is not None and ci[0] <= train <= ci[1]:
        return f"within the baseline run's interval [{ci[0]:.1f}, {ci[1]:.1f}]: the same speed, the rest is noise"
    median = f"; the run's own median step, {median_ms:.2f} ms, is {1000 / median_ms:.1f} steps/s" \
        if median_ms else ""
    return (f"{abs(train / steady - 1):.0%} {'above' if train > steady else 'below'} the baseline run's steady "
            f"speed ({steady:.1f} steps/s): the probe times the median step of a few seconds without the script's "
            f"callbacks or validation, the steady speed every step of the run's measured windows{median}")


def _ms(value: float) -> str:
    """Milliseconds to two decimals, and "under 0.01 ms" where two decimals would print a zero that was not."""
    return f"{value:.2f} ms" if value >= 0.005 or value == 0 else "under 0.01 ms"


def input_share_phrase(doc: InputProbe) -> str:
    """`input_share_fact` as one phrase inside a line of text ("time waiting for input: 3%"), for the CLI."""
    label, value = input_share_fact(doc)
    return f"{label[0].lower()}{label[1:]}: {value}"
