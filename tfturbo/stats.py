"""Statistics for honest numbers: step-time intervals, replicate intervals, paired differences.

Step times are autocorrelated (a slow stretch lasts several steps), so the
confidence intervals come from a moving-block bootstrap rather than treating
every step as independent. The bootstrap uses a fixed seed: the same samples
always give the same interval, so reports are reproducible.

Verdicts between configurations do not come from one run's step times: the
run-to-run variation (machine load, process start, memory layout) is larger
than one run's own noise. `replicate_ratio_ci` gives the interval of a ratio
across replicated, interleaved runs, and `paired_difference_ci` the interval
of a per-example difference on the same validation examples.
"""

from __future__ import annotations

import functools
import math
from typing import Iterable, Sequence

import numpy as np
# Student's t and the normal distribution; scipy.stats would cost ~0.7 s more per process
from scipy.special import ndtr, stdtr, stdtrit

BOOTSTRAP_SAMPLES = 2000
_RNG_SEED = 20261130


def _block_length(n: int) -> int:
    return max(1, min(20, int(round(n ** (1 / 3)))))


def _block_bootstrap_medians(x: np.ndarray, rng: np.random.Generator, n_boot: int) -> np.ndarray:
    n = len(x)
    b = _block_length(n)
    n_blocks = math.ceil(n / b)
    starts = rng.integers(0, n - b + 1, size=(n_boot, n_blocks))
    idx = (starts[:, :, None] + np.arange(b)[None, None, :]).reshape(n_boot, -1)[:, :n]
    return np.asarray(np.median(x[idx], axis=1))


def median_ci(samples: Sequence[float], confidence: float = 0.95,
              n_boot: int = BOOTSTRAP_SAMPLES) -> tuple[float, tuple[float, float]]:
    """Median and its bootstrap confidence interval. Needs at least 2 samples for an interval."""
    x = np.asarray([s for s in samples if s is not None and math.isfinite(s)], dtype=float)
    if len(x) == 0:
        return float("nan"), (float("nan"), float("nan"))
    med = float(np.median(x))
    if len(x) < 2:
        return med, (med, med)
    rng = np.random.default_rng(_RNG_SEED)
    meds = _block_bootstrap_medians(x, rng, n_boot)
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(meds, [alpha, 1 - alpha])
    return med, (float(lo), float(hi))


def weighted_median(values: Iterable[float], weights: Iterable[float]) -> float | None:
    """The value below and above which half the weight lies (the mean of the two middle values on a tie)."""
    pairs = sorted((float(v), float(w)) for v, w in zip(values, weights) if w > 0 and math.isfinite(v))
    if not pairs:
        return None
    total = sum(w for _, w in pairs)
    acc = 0.0
    for i, (v, w) in enumerate(pairs):
        acc += w
        if math.isclose(acc, total / 2) and i + 1 < len(pairs):
            return (v + pairs[i + 1][0]) / 2
        if acc > total / 2:
            return v
    return pairs[-1][0]


def weighted_median_ci(values: Sequence[float], weights: Sequence[float], confidence: float = 0.95,
                       n_boot: int = BOOTSTRAP_SAMPLES) -> tuple[float | None, tuple[float, float] | None]:
    """Weighted median and its moving-block bootstrap interval (blocks of consecutive values keep their
    autocorrelation); no interval from fewer than 3 values."""
    v = np.asarray(values, dtype=float)
    w = np.asarray(weights, dtype=float)
    centre = weighted_median(v, w)
    if centre is None or len(v) < 3:
        return centre, None
    rng = np.random.default_rng(_RNG_SEED)
    n = len(v)
    b = _block_length(n)
    starts = rng.integers(0, n - b + 1, size=(n_boot, math.ceil(n / b)))
    idx = (starts[:, :, None] + np.arange(b)[None, None, :]).reshape(n_boot, -1)[:, :n]
    vals, wts = v[idx], w[idx]
    order = np.argsort(vals, axis=1)
    vals, wts = np.take_along_axis(vals, order, 1), np.take_along_axis(wts, order, 1)
    cum = np.cumsum(wts, axis=1)
    first = np.argmax(cum >= cum[:, -1:] / 2, axis=1)  # the lower weighted median of each resample
    meds = vals[np.arange(n_boot), first]
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(meds, [alpha, 1 - alpha])
    return centre, (float(lo), float(hi))


def speedup_ci(baseline_ms: Sequence[float], candidate_ms: Sequence[float], confidence: float = 0.95,
               n_boot: int = BOOTSTRAP_SAMPLES) -> tuple[float, tuple[float, float]]:
    """Speed-up of candidate over baseline (>1 is faster) = median(baseline) / median(candidate),
    with a bootstrap interval from resampling both runs independently."""
    a = np.asarray([s for s in baseline_ms if s is not None and math.isfinite(s)], dtype=float)
    b = np.asarray([s for s in candidate_ms if s is not None and math.isfinite(s)], dtype=float)
    if len(a) == 0 or len(b) == 0:
        return float("nan"), (float("nan"), float("nan"))
    ratio = float(np.median(a) / np.median(b))
    if len(a) < 2 or len(b) < 2:
        return ratio, (ratio, ratio)
    rng = np.random.default_rng(_RNG_SEED)
    ratios = _block_bootstrap_medians(a, rng, n_boot) / _block_bootstrap_medians(b, rng, n_boot)
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(ratios, [alpha, 1 - alpha])
    return ratio, (float(lo), float(hi))


def relative_half_width(median: float, ci: tuple[float, float]) -> float:
    """Half the interval's width relative to the median (0.02 = ±2%)."""
    if not median or not math.isfinite(median):
        return float("inf")
    return (ci[1] - ci[0]) / 2 / median


def t_quantile(confidence: float, df: float) -> float:
    """Two-sided Student-t quantile (e.g. 4.30 for 95% with 2 degrees of freedom; df may be fractional: Welch)."""
    return float(stdtrit(df, 1 - (1 - confidence) / 2))


def _logs_and_spread(ratios: Sequence[float], errors: Sequence[float | None] | None) -> tuple[np.ndarray, float]:
    """The logarithms of the usable ratios and their SD across replicates, never below what the replicates' own
    standard errors (`errors`, in log, aligned with `ratios`; None: unknown) allow when every usable ratio has
    one: the SD whose standard error of the mean is the inverse-variance (fixed-effect) one, √(n / Σ 1/e²).

    The floor is the Hartung–Knapp–Sidik–Jonkman interval's ad hoc variance
    correction for meta-analyses of few studies (Röver, Knapp and Friede,
    BMC Med. Res. Methodol. 15:99, 2015): the interval is never narrower than
    the replicates' own errors make it. Each replicate's ratio is itself a
    measurement with an error, and three replicates can agree by chance more
    closely than they were measured (an A/A trial's 0.985, 0.980, 0.988 gave
    0.984× [0.972, 0.997], "slower"). Inverse-variance, not a plain mean of
    the errors: one pair with a wild hand-over (error 0.11 among 0.004–0.015)
    says little about the others and must not widen the interval of five
    consistent ones. NaN spread: fewer than two ratios.
    """
    rows = [(r, e) for r, e in zip(ratios, errors if errors is not None else [None] * len(ratios))
            if r is not None and math.isfinite(r) and r > 0]
    logs = np.log(np.asarray([r for r, _ in rows], dtype=float))
    if len(logs) < 2:
        return logs, float("nan")
    spread = float(np.std(logs, ddof=1))
    own = [e for _, e in rows if e is not None and math.isfinite(e) and e > 0]
    if own and len(own) == len(rows):
        spread = max(spread, math.sqrt(len(own) / sum(1.0 / e ** 2 for e in own)))
    return logs, spread


def replicate_ratio_ci(ratios: Sequence[float], confidence: float = 0.95,
                       errors: Sequence[float | None] | None = None) -> tuple[float, tuple[float, float]]:
    """Geometric mean of per-replicate ratios with a Student-t interval on their logarithms.

    Each ratio comes from one replicate (e.g. candidate/reference throughput
    of two runs measured next to each other), so the interval covers the
    variation between replicates, which is where run-to-run noise shows; with
    `errors` (each ratio's own standard error in log) the spread is never
    taken below them (`_logs_and_spread`). Needs two replicates for an
    interval; one gives an infinitely wide one.
    """
    logs, spread = _logs_and_spread(ratios, errors)
    if len(logs) == 0:
        return float("nan"), (float("nan"), float("nan"))
    centre = float(np.mean(logs))
    if len(logs) < 2:
        return math.exp(centre), (0.0, math.inf)
    half = t_quantile(confidence, len(logs) - 1) * spread / math.sqrt(len(logs))
    return math.exp(centre), (math.exp(centre - half), math.exp(centre + half))


def paired_difference_ci(differences: Iterable[float], confidence: float = 0.95) -> tuple[float, tuple[float, float]]:
    """Mean of per-example differences (candidate - reference) with its interval.

    Differences of the same examples are paired, so what both models get right
    or wrong cancels and the interval is as tight as the disagreement allows.
    A Student-t interval on the mean (the central limit theorem holds for the
    hundreds of examples a validation set has); identical outputs give [0, 0].
    """
    d = np.asarray([v for v in differences if v is not None and math.isfinite(v)], dtype=float)
    if len(d) == 0:
        return float("nan"), (float("nan"), float("nan"))
    mean = float(np.mean(d))
    if len(d) < 2:
        return mean, (-math.inf, math.inf)
    half = t_quantile(confidence, len(d) - 1) * float(np.std(d, ddof=1)) / math.sqrt(len(d))
    return mean, (mean - half, mean + half)


def training_variance(runs: Sequence[Sequence[float] | np.ndarray]) -> tuple[float, float, int]:
    """(variance of one training's mean, the part of it the examples explain, degrees of freedom) from
    per-example values of one configuration trained from different seeds (`runs`: one row per seed, the same
    examples in the same order).

    Two trainings of one configuration end in different models, so each run's
    mean moves by an offset the validation examples do not show (augmentation
    draws, shuffles, dropout, a chaotic few hundred steps). The runs' means
    vary by that offset's variance plus the example-by-run interaction's over
    n examples (a one-way random-effects decomposition, runs × examples): the
    first number is the means' sample variance (unbiased for the whole, on
    seeds − 1 degrees of freedom), the second the interaction's share, so the
    offsets' own variance is their difference (the verdict says which part
    dominates). (0, 0, 0) from fewer than two seeds.
    """
    rows = [np.asarray(r, dtype=float) for r in runs]
    if len(rows) < 2 or len({len(r) for r in rows}) != 1 or len(rows[0]) < 2:
        return 0.0, 0.0, 0
    y = np.vstack(rows)
    m, n = y.shape
    means = y.mean(axis=1)
    residual = y - means[:, None] - y.mean(axis=0)[None, :] + y.mean()
    interaction = float(np.sum(residual ** 2)) / ((m - 1) * (n - 1))
    return float(np.var(means, ddof=1)), interaction / n, m - 1


def with_training_noise_ci(differences: Iterable[float], difference_var: float, training_df: int,
                           confidence: float = 0.95) -> tuple[float, tuple[float, float], float]:
    """(mean, interval, the examples' standard error) of a paired difference B − A whose arms are also apart by
    their trainings (`difference_var`: the variance of the difference of two arms' means that trainings from
    different seeds give, estimated on `training_df` degrees of freedom: `training_variance` × (1/seeds of A
    + 1/seeds of B)).

    The interval is a Student-t one on the trainings' degrees of freedom,
    never narrower than the paired examples' own: under "B is A's
    configuration from another seed" the difference over the seeds' spread is
    exactly t-distributed, whatever part of that spread the examples explain.
    A Welch–Satterthwaite interval that added the trainings' part to the
    examples' on more degrees of freedom missed 13-21% of such A/A′ trials in
    simulation (a spread measured small by chance on one degree of freedom is
    believed), this one 0-4% (tests/trials/test_training_noise.py).
    """
    d = np.asarray([v for v in differences if v is not None and math.isfinite(v)], dtype=float)
    if len(d) < 2:
        mean = float(np.mean(d)) if len(d) else float("nan")
        return mean, (-math.inf, math.inf), math.inf
    mean = float(np.mean(d))
    v_examples = float(np.var(d, ddof=1)) / len(d)
    if training_df < 1:
        half = t_quantile(confidence, len(d) - 1) * math.sqrt(v_examples)
    else:
        half = t_quantile(confidence, training_df) * math.sqrt(max(difference_var, v_examples))
    return mean, (mean - half, mean + half), math.sqrt(v_examples)


def two_sample_ratio_ci(reference: Sequence[float], candidate: Sequence[float], confidence: float = 0.95
                        ) -> tuple[float, tuple[float, float]]:
    """Ratio of geometric means (candidate / reference) of unpaired replicate rates, Welch interval on the logs.

    For runs that were not measured in pairs (e.g. `tfturbo compare` of
    separate runs with the same settings): every run is one replicate. Needs
    two runs on each side for an interval.
    """
    a = np.log(np.asarray([v for v in reference if v and math.isfinite(v) and v > 0], dtype=float))
    b = np.log(np.asarray([v for v in candidate if v and math.isfinite(v) and v > 0], dtype=float))
    if len(a) == 0 or len(b) == 0:
        return float("nan"), (float("nan"), float("nan"))
    centre = float(np.mean(b) - np.mean(a))
    if len(a) < 2 or len(b) < 2:
        return math.exp(centre), (0.0, math.inf)
    va, vb = float(np.var(a, ddof=1)) / len(a), float(np.var(b, ddof=1)) / len(b)
    se = math.sqrt(va + vb)
    if se == 0:
        return math.exp(centre), (math.exp(centre), math.exp(centre))
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
    half = t_quantile(confidence, df) * se
    return math.exp(centre), (math.exp(centre - half), math.exp(centre + half))


def final_look_chance(ratios: Sequence[float], max_looks: int, final_confidence: float,
                      errors: Sequence[float | None] | None = None) -> float:
    """The chance that a sequential rule's final look, at `max_looks` replicates, tells the ratio from 1, given
    the replicates so far: the predictive probability of a futility stop (Spiegelhalter's).

    On the logarithms: with k replicates of mean m and SD s, the mean of all
    `max_looks` is predicted as normal around m with variance
    s²(N - k)/(N k) (the remaining replicates' noise and the uncertainty of m
    itself, flat prior), and the final look rejects when that mean is beyond
    t(final, N - 1) · s / √N (the SD taken to stay as measured). Interim looks
    before the final one are left out: their thresholds are far stricter, so
    they add little. `errors`: as `replicate_ratio_ci` takes them (the SD
    never below the replicates' own errors). 1.0 when nothing is left to
    predict from (fewer than two replicates) or the final look is already here.
    """
    logs, s = _logs_and_spread(ratios, errors)
    k, n = len(logs), int(max_looks)
    if k < 2 or k >= n:
        return 1.0
    m = abs(float(np.mean(logs)))
    half = t_quantile(final_confidence, n - 1) * s / math.sqrt(n)
    spread = s * math.sqrt((n - k) / (n * k))
    if spread == 0:
        return 1.0 if m > half else 0.0
    return float(ndtr((m - half) / spread) + ndtr((-m - half) / spread))


SEQUENTIAL_TRIALS = 100_000  # simulated null trials behind `sequential_levels`: its error rate to ±0.07 points, in 0.05 s


@functools.lru_cache(maxsize=32)
def sequential_levels(min_looks: int, max_looks: int, interim: float = 0.99, overall: float = 0.95
                      ) -> tuple[float, float]:
    """(interim, final) confidence of each look of a sequential replicate rule, so that the rule as a whole
    calls identical settings different with at most 1 - `overall` probability.

    A rule that looks at its Student-t interval after every replicate from
    `min_looks` on and stops as soon as it excludes 1 gives chance a try at
    every look: with 99% interim looks at 3, 4 and 5 pairs and a 95% final
    one at 6, identical settings are called different 6.3% of the time, not
    5%. Here the interim level is kept (made stricter only if the interim looks
    alone would spend more than half the error) and the final level is
    chosen so the overall rate is `overall`'s: a repeated confidence
    interval. Found by simulating the rule on normal log-ratios (the
    t-statistic does not depend on their scale), with a fixed seed, so the
    same rule always has the same levels; stops for equivalence and for
    futility (`final_look_chance`) are left out: they only ever end a trial
    without a difference, so leaving them out errs towards a wider final
    interval.
    """
    alpha = 1.0 - overall
    if max_looks <= min_looks:
        return interim, overall
    rng = np.random.default_rng(_RNG_SEED)
    x = rng.standard_normal((SEQUENTIAL_TRIALS, max_looks))
    n = np.arange(1, max_looks + 1)
    mean = np.cumsum(x, axis=1) / n
    var = (np.cumsum(x * x, axis=1) - n * mean ** 2) / np.maximum(n - 1, 1)
    t_abs = np.abs(mean) / np.sqrt(np.maximum(var, 1e-300) / n)
    while True:
        stopped = np.zeros(SEQUENTIAL_TRIALS, dtype=bool)
        for k in range(min_looks, max_looks):
            stopped |= t_abs[:, k - 1] > t_quantile(interim, k - 1)
        if stopped.mean() <= alpha / 2:
            break
        interim = 1.0 - (1.0 - interim) / 2
    final_t = np.where(stopped, np.inf, t_abs[:, max_looks - 1])
    critical = float(np.quantile(final_t, overall))
    final = 1.0 - 2.0 * float(stdtr(max_looks - 1, -critical))
    return interim, round(final, 4)
