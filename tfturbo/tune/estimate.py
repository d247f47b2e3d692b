"""How long a study's trials will take: the trial under way (its first pair too) and the stages not begun yet.

The wizard shows it beside a running trial ("Pair 1 of 3–6 · about 3 min left
(at most 5 min 50 s)", "Still to come: XLA compilation about 2 min 50 s – 5 min
40 s · …"), `tfturbo tune` could print it too: both read it from the study
engine, so the estimate is the engine's, not a page's.

A trial is not 2 × pairs runs of one length. Where its arms share a process
(the study's default), B trains the full length with validation and the
profiler for the accuracy gate, and each of its P speed pairs is one paired
process (each arm a start-up and warm-up plus its steady seconds): full +
2 × P × speed. Where they cannot, its first pair trains the full length in
two processes and counts for speed, and each later pair is two short
processes: 2 × full + 2 × (P − 1) × speed. A trial that trains the accuracy
reference again from other seeds (a study's first, `Trial.seed_runs`) adds
a full-length run for each, with

- full: the median wall time of the full-length runs the study's trials
  measured, process start included; before one ended, the baseline's own
  process time (`process_s`: the backend's clock from its start — the baseline
  is such a run: full length, validation, profiler). Its fit() time alone
  (`wall_s`) left out TensorFlow's import and the build: during a trial's
  first pair the stages after it read "about 6 s" each for trials that took
  a minute;
- speed: the median wall time of the speed-only runs measured (a paired
  process counts half for each of its runs); before one ended, the
  baseline's time outside its fit() (start-up, build), plus its warm-up, plus
  the steady seconds a speed-only run aims at (`SpeedRule.steady_s`; with 0
  every pair is full length).

Once a trial has a pair, its own estimate (`Trial.estimate_remaining_s`, from
its arms' runs) says what is left of it. Each stage left is its lever's
candidates now (a skipped one costs nothing; a search such as the batch size
may ask for more once a verdict is in, so its upper bound is a floor) times a
trial of the rule's pairs, min to max, and, before any trial began, the first
one's seed runs. The confirmation counts one trial: it runs whenever a change
is kept.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..numbers import duration_text
from ..protocol import RunStatus
from ..trials.trial import SEED_REPLICATES


@dataclass(frozen=True)
class StageEstimate:
    """One stage still to come: its title and seconds (at least, at most)."""

    title: str
    low_s: float
    high_s: float

    def text(self) -> str:
        return f"{self.title} about {span_text(self.low_s, self.high_s)}"


def span_text(low: float, high: float) -> str:
    """'2 min 50 s – 5 min 40 s', or one figure when the two are close."""
    if high > low * 1.1 + 5:
        return f"{duration_text(low)} – {duration_text(high)}"
    return duration_text(low)


def _positive(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None


def _median(values: list[float]) -> float:
    values = sorted(values)
    return values[len(values) // 2]


def _runs(engine) -> list:
    return [r for t in engine.trials.values() for r in t.own_runs() if r.elapsed_s and r.status == RunStatus.COMPLETED]


def full_run_s(engine) -> float | None:
    """Seconds of one full-length run (a trial's first pair), process start included (None: nothing measured)."""
    full = [r.elapsed_s for r in _runs(engine) if not r.planned.settings.speed_only]
    if full:
        return _median(full)
    base = engine.baseline.summary if engine.baseline is not None else None
    return _positive(base.process_s if base else None) or _positive(base.wall_s if base else None)


def speed_run_s(engine) -> float | None:
    """Seconds of one speed-only run (half a paired process), start-up and warm-up included."""
    speed = [r.elapsed_s for r in _runs(engine) if r.planned.settings.speed_only]
    if speed:
        return _median(speed)
    steady = engine.opts.speed_rule().steady_s
    if not steady:  # every pair trains the full length
        return full_run_s(engine)
    base = engine.baseline.summary if engine.baseline is not None else None
    process, fit = _positive(base.process_s if base else None), _positive(base.wall_s if base else None)
    if process is None or fit is None:
        return full_run_s(engine)
    return max(0.0, process - fit) + (_positive(base.warmup_s if base else None) or 0.0) + steady


def trial_s(engine, pairs: int, done: int = 0, trial=None) -> float | None:
    """Seconds of a trial of `pairs` speed pairs of which `done` full-length runs have ended (None: nothing to
    estimate from). `trial`: the trial under way (its own design), else one the study would plan on its best
    configuration (`StudyEngine.trials_pair`)."""
    full, speed = full_run_s(engine), speed_run_s(engine)
    if full is None or speed is None:
        return None
    seeds = 0  # the reference trained again from other seeds (`Trial.seed_runs`): full-length runs too
    if trial is not None:  # a reference run it re-uses (`Trial.reused_run`) is no run to wait for
        gate = len(trial.gate_arms()) - (1 if trial.reused_run() is not None else 0)
        pair_one_counts = trial.first_speed_replicate == 1
        seeds = trial.seed_runs()
    else:
        gate, pair_one_counts = (1, False) if engine.trials_pair() else (2, True)
    if pair_one_counts:
        return max(0, 2 + seeds - done) * full + 2 * max(0, pairs - 1) * speed
    return max(0, gate + seeds - done) * full + 2 * pairs * speed


def trial_remaining(engine, trial) -> tuple[float, float] | None:
    """(at least, at most) seconds left of `trial`: its own estimate once it has a pair, else — its first pair
    under way — from the study's runs so far (the baseline's process time before any), to the rule's fewest
    and most pairs. None when nothing is measured to estimate from."""
    own = trial.estimate_remaining_s()
    if own is not None:
        return own
    done = len(trial.own_runs())
    rule = trial.rule
    low, high = trial_s(engine, rule.min_pairs, done, trial), trial_s(engine, rule.max_pairs, done, trial)
    return (low, high) if low is not None and high is not None else None


def progress_text(engine, trial) -> str:
    """The trial's "pair 1 of 3–6 · about 3 min left (at most 5 min 50 s)" ("" once decided): the trial's own
    words, with the time left from the study's runs while its first pair goes (the trial has none yet)."""
    text = trial.progress_text()
    if not text or trial.estimate_remaining_s() is not None:
        return text
    left = trial_remaining(engine, trial)
    if left is None:
        return text
    low, high = left
    return text + f" · about {duration_text(low)} left" + (f" (at most {duration_text(high)})"
                                                           if high > low * 1.1 + 5 else "")


def remaining(engine) -> list[StageEstimate]:
    """The stages of `engine`'s study not begun yet, in order, each with its estimate (empty: none, or nothing
    measured to estimate from)."""
    if engine.decisions is None or engine.best is None:
        return []
    rule = engine.opts.speed_rule()
    low, high = trial_s(engine, rule.min_pairs), trial_s(engine, rule.max_pairs)
    if low is None or high is None or high <= 0:  # nothing timed to estimate from: said as nothing, never "0 s"
        return []
    # the study's first trial also trains the baseline from other seeds, once for the study (`Trial.seed_runs`):
    # a full-length run each, on the first stage that makes a trial, while no trial has begun
    seeds = SEED_REPLICATES * (full_run_s(engine) or 0.0) if not engine.trials else 0.0
    out = []
    for lever in engine.stages_left():
        trials = 1 if lever.confirms else sum(1 for c in lever.candidates(engine.decisions) if c.skipped_reason is None)
        if trials:
            out.append(StageEstimate(lever.title, trials * low + seeds, trials * high + seeds))
            seeds = 0.0
    return out


def remaining_text(engine) -> str:
    """"Still to come: XLA compilation about 40 s – 1 min 20 s · Re-measure & compare about 40 s" ("": none)."""
    stages = remaining(engine)
    return ("Still to come: " + " · ".join(s.text() for s in stages)) if stages else ""
