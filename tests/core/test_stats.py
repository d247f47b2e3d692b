"""Step-time statistics: medians with honest intervals, and 'no measurable change' inside the noise."""

import math

import numpy as np

from tfturbo.stats import median_ci, relative_half_width, replicate_ratio_ci, speedup_ci
from tfturbo.trials.verdict import speed_verdict_of as change_verdict
from tfturbo.steady import live_start as detect_warmup


def noisy(median, n=300, spread=0.03, seed=0):
    rng = np.random.default_rng(seed)
    return list(median * (1 + spread * rng.standard_normal(n)))


def test_median_ci_contains_the_median_and_is_reproducible():
    x = noisy(10.0)
    med, (lo, hi) = median_ci(x)
    assert lo <= med <= hi
    assert abs(med - 10.0) < 0.2
    assert median_ci(x) == (med, (lo, hi))
    assert relative_half_width(med, (lo, hi)) < 0.02


def test_median_ci_ignores_missing_and_non_finite_samples():
    med, ci = median_ci([1.0, None, float("nan"), 3.0, 2.0])
    assert med == 2.0 and ci[0] <= 2.0 <= ci[1]
    assert np.isnan(median_ci([])[0])


def test_real_speedup_is_called_faster_with_interval_above_one():
    ratio, ci = speedup_ci(noisy(10.0, seed=1), noisy(8.0, seed=2))
    assert abs(ratio - 1.25) < 0.03
    assert ci[0] > 1.0
    assert change_verdict(ci) == "faster"


def test_difference_inside_noise_is_no_measurable_change():
    ratio, ci = speedup_ci(noisy(10.0, spread=0.2, n=30, seed=3), noisy(10.1, spread=0.2, n=30, seed=4))
    assert ci[0] < 1.0 < ci[1]
    assert change_verdict(ci) == "no measurable change"


def test_slower_is_slower():
    _, ci = speedup_ci(noisy(10.0, seed=5), noisy(13.0, seed=6))
    assert change_verdict(ci) == "slower"


def test_warmup_excludes_compile_steps_and_ends_at_steady_state():
    steps = [9000.0, 400.0, 60.0] + noisy(20.0, n=100, spread=0.05, seed=7)
    assert detect_warmup(steps) == 3


def test_warmup_first_step_always_excluded_and_partial_series():
    assert detect_warmup([20.0] * 10) == 1
    assert detect_warmup([5000.0, 30.0]) == 2  # not enough steady steps seen yet
    assert detect_warmup([]) == 0


def test_t_quantile_matches_scipy_stats_for_every_df_and_confidence_the_trials_use():
    """stdtrit (scipy.special, cheap to import) replaced scipy.stats.t.ppf: the same quantile for integer
    replicate counts from 1 degree of freedom up, Welch's fractional df, and the 95%/99% levels the gate uses."""
    from scipy import stats as sps

    from tfturbo.stats import t_quantile
    for confidence in (0.90, 0.95, 0.99):
        for df in (1, 2, 3, 5, 11, 30, 1000, 1e6, 1.0, 1.37, 2.5, 7.9):
            expected = float(sps.t.ppf(1 - (1 - confidence) / 2, df))
            assert abs(t_quantile(confidence, df) - expected) <= 1e-9 * expected, (confidence, df)
    assert abs(t_quantile(0.95, 2) - 4.3027) < 1e-4
    assert abs(t_quantile(0.95, 1) - 12.7062) < 1e-4


def test_welch_interval_uses_the_fractional_df_quantile():
    from scipy import stats as sps

    from tfturbo.stats import two_sample_ratio_ci
    a, b = [100.0, 103.0, 98.0], [120.0, 131.0, 118.0, 125.0]
    ratio, (lo, hi) = two_sample_ratio_ci(a, b)
    la, lb = np.log(a), np.log(b)
    va, vb = la.var(ddof=1) / 3, lb.var(ddof=1) / 4
    df = (va + vb) ** 2 / (va ** 2 / 2 + vb ** 2 / 3)
    half = sps.t.ppf(0.975, df) * np.sqrt(va + vb)
    assert abs(np.log(hi) - np.log(ratio) - half) < 1e-9
    assert abs(np.log(ratio) - np.log(lo) - half) < 1e-9


def test_replicates_that_agree_more_closely_than_each_was_measured_do_not_narrow_the_interval():
    """An A/A trial's three paired processes read 0.985, 0.980 and 0.988, each from five hand-overs spread by
    about 3%: the spread across them alone gave [0.972, 0.997], "slower". Each ratio's own error is the floor."""
    ratios = [0.985, 0.980, 0.988]
    _, (lo, hi) = replicate_ratio_ci(ratios)
    assert hi < 1.0  # the spread alone
    _, (lo, hi) = replicate_ratio_ci(ratios, errors=[0.015, 0.016, 0.014])
    assert lo < 1.0 < hi
    # an error unknown for one ratio: no floor (a ratio of two separate processes has none to offer)
    assert replicate_ratio_ci(ratios, errors=[0.015, None, 0.014]) == replicate_ratio_ci(ratios)
    # a spread wider than the errors is kept as it is
    wide = [0.90, 1.00, 1.10]
    assert replicate_ratio_ci(wide, errors=[0.01] * 3) == replicate_ratio_ci(wide)
    # one pair's wild hand-over does not widen the interval of consistent, precisely measured ones
    steady = [1.179, 1.154, 1.143, 1.166, 1.159]
    assert replicate_ratio_ci(steady, errors=[0.012, 0.109, 0.015, 0.004, 0.008]) == replicate_ratio_ci(steady)


def test_the_floor_keeps_a_a_trials_from_tight_processes_at_their_nominal_rate():
    """A/A with realistic paired processes: each process's ratio is the median of five hand-overs with 3% noise
    (heavier-tailed: a t with 3 df), each process its own ±1% offset. Under the floor, intervals at 95% exclude 1
    in at most about 5% of 3-pair trials; the spread alone calls more of them different."""
    rng = np.random.default_rng(3)
    floor_hits = plain_hits = 0
    trials = 4000
    for _ in range(trials):
        ratios, errors = [], []
        for _ in range(3):
            hand_overs = rng.normal(0, 0.01) + 0.03 * rng.standard_t(3, 5) / math.sqrt(3)
            ratios.append(math.exp(float(np.median(hand_overs))))
            errors.append(float(np.std(hand_overs, ddof=1)) / math.sqrt(5))  # summary.hand_over_error
        _, (lo, hi) = replicate_ratio_ci(ratios, errors=errors)
        floor_hits += not lo <= 1.0 <= hi
        _, (lo, hi) = replicate_ratio_ci(ratios)
        plain_hits += not lo <= 1.0 <= hi
    assert floor_hits / trials <= 0.05 and floor_hits < plain_hits
