"""The speed verdict's statistics on realistic noise: autocorrelated steps and run-to-run offsets.

Each simulated run has an offset of its own (lognormal, 10%: process start, memory
layout, a busy neighbour) and AR(1) step times inside it. The interval must cover the
true ratio about as often as it says, identical settings must rarely be called
different, and a real difference must be found.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tfturbo.stats import final_look_chance, median_ci, replicate_ratio_ci, sequential_levels, speedup_ci, two_sample_ratio_ci
from tfturbo.trials.speed import SpeedRule
from tfturbo.trials.verdict import FASTER, NO_CHANGE, SLOWER


def run_steps(rate: float, rng: np.random.Generator, offset_sd: float = 0.10, n: int = 200,
              phi: float = 0.8) -> np.ndarray:
    """Step times (ms) of one run: a run-level offset and autocorrelated noise around 1000/rate."""
    offset = math.exp(rng.normal(0, offset_sd))
    e = np.zeros(n)
    for i in range(1, n):
        e[i] = phi * e[i - 1] + rng.normal(0, 0.05)
    return (1000.0 / rate) * offset * np.exp(e)


def run_rate(rate: float, rng: np.random.Generator, **kw) -> float:
    ms = run_steps(rate, rng, **kw)
    return len(ms) * 1000.0 / ms.sum()


def simulate(ratio: float, rule: SpeedRule, rng: np.random.Generator):
    a, b = [], []
    while True:
        a.append(run_rate(100.0, rng))
        b.append(run_rate(100.0 * ratio, rng))
        if rule.clear([y / x for x, y in zip(a, b)]):
            return rule.verdict(a, b)


@pytest.fixture(scope="module")
def aa_trials():
    rng = np.random.default_rng(20261201)
    return [simulate(1.0, SpeedRule(), rng) for _ in range(400)]


def test_replicate_interval_covers_identical_settings_as_often_as_it_says(aa_trials):
    coverage = np.mean([v.ci95[0] <= 1.0 <= v.ci95[1] for v in aa_trials])
    assert coverage >= 0.90


def test_identical_settings_are_rarely_called_different(aa_trials):
    different = np.mean([v.verdict != NO_CHANGE for v in aa_trials])
    assert different <= 0.06  # at most 5% with the looks included (`stats.sequential_levels`), ±1.1 points here
    assert all(2 <= v.replicates <= SpeedRule().max_pairs for v in aa_trials)


def simulated_false_rate(rule: SpeedRule, rng: np.random.Generator, trials: int) -> float:
    """How often `rule`, looking after every pair as a trial does, calls identical settings different, on
    normal log-ratios with the paired replicates' spread (6%, benchmarks/RESULTS.md, Trial efficiency)."""
    wrong = 0
    for _ in range(trials):
        logs = rng.normal(0.0, 0.06, rule.max_pairs)
        ratios = list(np.exp(logs))
        n = next(k for k in range(1, rule.max_pairs + 1) if rule.clear(ratios[:k]))
        wrong += rule.verdict([1.0] * n, ratios[:n]).verdict != NO_CHANGE
    return wrong / trials


@pytest.mark.parametrize("pairs", [(3, 6), (2, 4), (3, 10)])
def test_the_looks_after_each_pair_do_not_raise_the_false_difference_rate_above_five_percent(pairs):
    """The contract: identical settings are "no measurable change" at least 95% of the time. Looking after every
    pair and stopping at a 99% interval, with a final 95% one, called them different 6.3% of the time. The levels
    are derived without the futility stop (it only lowers the rate, below), so they are checked without it."""
    rule = SpeedRule(*pairs, futility=0.0)
    rng = np.random.default_rng(11)
    rate = simulated_false_rate(rule, rng, 6000)
    assert rate <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 6000)  # within the simulation's own error of 5%
    assert rate >= 0.035  # and not bought with an interval much wider than it needs
    assert rule.levels[1] > rule.confidence  # the final look is stricter than a lone 95% look


def test_sequential_levels_are_reproducible_and_a_single_look_keeps_its_level():
    assert sequential_levels(3, 6) == sequential_levels(3, 6)
    assert sequential_levels(3, 3) == (0.99, 0.95)  # no interim look: nothing to pay for
    interim, final = sequential_levels(3, 20)  # many looks: the interim level gets stricter too
    assert interim > 0.99 and 0.95 < final < interim


def test_a_real_difference_is_found_and_covered():
    rng = np.random.default_rng(7)
    verdicts = [simulate(1.3, SpeedRule(), rng) for _ in range(200)]
    assert np.mean([v.verdict == FASTER for v in verdicts]) >= 0.90
    # stopping as soon as the difference is clear costs a little coverage of its size (measured 88-93%)
    assert np.mean([v.ci95[0] <= 1.3 <= v.ci95[1] for v in verdicts]) >= 0.85
    slower = [simulate(1 / 1.3, SpeedRule(), rng) for _ in range(200)]
    assert np.mean([v.verdict == SLOWER for v in slower]) >= 0.85  # measured 87-93% (96.5% final look)


def test_one_runs_own_interval_misses_run_to_run_noise():
    """Why verdicts need replicates: two identical single runs are 'different' most of the time."""
    rng = np.random.default_rng(3)
    wrong = 0
    for _ in range(100):
        _, (lo, hi) = speedup_ci(run_steps(100.0, rng), run_steps(100.0, rng), n_boot=300)
        wrong += not (lo <= 1.0 <= hi)
    assert wrong >= 50


def test_clear_differences_stop_early_and_noise_runs_to_the_budget():
    rule = SpeedRule(min_pairs=3, max_pairs=6)
    assert not rule.clear([1.5, 1.6])  # never before min_pairs
    assert rule.clear([1.50, 1.55, 1.52])  # far from 1 at the interim level
    assert rule.clear([1.001, 0.999, 1.0, 1.002])  # within ±3% with confidence: no change, done
    assert not rule.clear([1.12, 1.02, 1.09])  # promising but unclear: more pairs
    assert rule.clear([1.2, 0.85, 1.1])  # noise around 1: the pairs left could not tell them apart (futility)
    assert rule.futility_note([1.2, 0.85, 1.1]).startswith("stopped at 3 of at most 6 pairs")
    assert rule.clear([1.2, 0.85, 1.1, 0.9, 1.15, 0.95])  # the budget


def test_replicate_interval_basics():
    ratio, (lo, hi) = replicate_ratio_ci([1.1, 1.2, 1.15])
    assert lo < ratio < hi and ratio == pytest.approx(math.exp(np.mean(np.log([1.1, 1.2, 1.15]))))
    assert replicate_ratio_ci([1.2])[1] == (0.0, math.inf)  # one pair has no interval
    assert math.isnan(replicate_ratio_ci([])[0])


def test_unpaired_replicates_interval():
    rng = np.random.default_rng(5)
    a = [run_rate(100.0, rng) for _ in range(6)]
    b = [run_rate(100.0, rng) for _ in range(6)]
    ratio, (lo, hi) = two_sample_ratio_ci(a, b)
    assert lo <= 1.0 <= hi
    assert two_sample_ratio_ci([100.0], [120.0])[1] == (0.0, math.inf)


def test_median_interval_still_serves_one_runs_step_time():
    rng = np.random.default_rng(2)
    ms = run_steps(100.0, rng, offset_sd=0.0)
    median, (lo, hi) = median_ci(ms)
    assert lo <= median <= hi


def trial_lengths(rule: SpeedRule, ratio: float, rng: np.random.Generator, trials: int,
                  sd: float = 0.07, trial_sd: float = 0.016) -> tuple[list[int], list[str]]:
    """Pairs and verdicts of `trials` simulated trials on the calibration's noise: paired log-ratios with a 7%
    spread inside a trial and a trial-level offset of 1.6% (RESULTS.md, Verdict calibration run 5)."""
    pairs, verdicts = [], []
    for _ in range(trials):
        logs = math.log(ratio) + rng.normal(0.0, trial_sd) + rng.normal(0.0, sd, rule.max_pairs)
        ratios = list(np.exp(logs))
        n = next(k for k in range(1, rule.max_pairs + 1) if rule.clear(ratios[:k]))
        pairs.append(n)
        verdicts.append(rule.verdict([1.0] * n, ratios[:n]).verdict)
    return pairs, verdicts


def test_the_futility_stop_ends_near_null_trials_early_without_adding_false_differences():
    rng = np.random.default_rng(23)
    with_stop, without = SpeedRule(), SpeedRule(futility=0.0)
    pairs, verdicts = trial_lengths(with_stop, 1.0, rng, 3000)
    pairs_without, verdicts_without = trial_lengths(without, 1.0, np.random.default_rng(23), 3000)
    assert np.mean(pairs) < 4.5 < np.mean(pairs_without)  # measured 3.9 against 5.8 pairs
    assert np.mean([v != NO_CHANGE for v in verdicts]) <= np.mean([v != NO_CHANGE for v in verdicts_without])


@pytest.mark.parametrize("ratio", [1.25, 1 / 1.25])
def test_the_futility_stop_keeps_finding_a_real_difference(ratio):
    """A 25% difference at the calibration's noise is found as often with the futility stop as without it."""
    found = {}
    for futility in (0.10, 0.0):
        _, verdicts = trial_lengths(SpeedRule(futility=futility), ratio, np.random.default_rng(5), 1000)
        found[futility] = np.mean([v == (FASTER if ratio > 1 else SLOWER) for v in verdicts])
    assert found[0.10] >= found[0.0] - 0.02
    assert found[0.10] >= 0.9


def test_final_look_chance_reads_the_pairs_so_far():
    _, final = sequential_levels(3, 6)
    assert final_look_chance([1.0, 1.01, 0.99], 6, final) < 0.01  # a null, measured tightly
    assert final_look_chance([1.20, 1.25, 1.22], 6, final) > 0.99  # a clear difference
    assert 0.1 < final_look_chance([1.12, 1.02, 1.09], 6, final) < 0.99  # promising: worth the pairs left
    assert final_look_chance([1.1], 6, final) == 1.0 and final_look_chance([1.1] * 6, 6, final) == 1.0
