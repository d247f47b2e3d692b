"""One A/B trial as a plan of runs: replicated, interleaved, adaptive, then judged.

A trial never runs anything itself. `next_run()` says which run comes next
(its arm, replicate, settings and directory name); the front end executes it —
a blocking backend subprocess in `tfturbo tune`/`ab`, a QProcess in the wizard
— and hands back the summary with `record()`. So every front end measures and
judges the same way, and a test can drive a trial with recorded summaries.

Design (chosen by measurement on a shared 2-core CPU, see docs/ARCHITECTURE.md,
"Measurement rules"): each replicate is an ordinary `run` in its own process,
A and B alternating AB, BA, AB, … so that process start-up, memory layout,
clocks and the machine's slow minutes are sampled into both arms; the speed
interval is taken across the pairs (`speed.SpeedRule`), whose number adapts to
the noise. The first pair trains the full length with validation: B on as many
samples as A (its steps and validation interval scaled by the batch ratio), so
the accuracy gate compares them at equal samples seen. The pairs after it
measure speed only (`speed_only`: no validation, no saved model), each arm's
length calibrated from its own runs so far — its warm-up plus `rule.steady_s`
seconds of steady state — as pyperf and Criterion size their loops. A trial
always ends within `rule.max_pairs` pairs, whatever its runs measured.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..numbers import duration_text
from ..settings import RunSettings
from . import accuracy
from .speed import SpeedRule
from .verdict import Change, Tolerance, TrialVerdict, keep

A, B = "a", "b"
NO_PROFILE = (0, 0)
# The first pair captures a profile (the default window after warm-up) in both runs, so every candidate has a
# profile.json to compare with the baseline's; its profiled steps stay out of the throughput, as in any run.
PROFILED_REPLICATE = 1
COMPLETED = "completed"


@dataclass
class PlannedRun:
    """A run the trial wants next."""

    arm: str  # "a" or "b"
    replicate: int  # 1-based pair number
    settings: RunSettings
    name: str  # the run directory's name (the front end puts it under its runs folder)


@dataclass
class MeasuredRun:
    planned: PlannedRun
    summary: dict[str, Any] | None
    run_dir: Path | None
    elapsed_s: float | None = None  # from next_run() to record(): the whole run, process start included

    @property
    def status(self) -> str:
        return str((self.summary or {}).get("status") or "crashed")


def trial_settings(settings: RunSettings) -> RunSettings:
    """A replicate measures the whole step budget, without the adaptive stop, and without the profiler (it slows
    steps) except in the first pair (`PROFILED_REPLICATE`)."""
    return settings.with_(profile=NO_PROFILE, until_ci=None, min_steps=0)


def equal_samples(a: RunSettings, b: RunSettings, a_batch: int, b_batch: int) -> RunSettings:
    """B's steps and validation interval scaled so that B sees as many samples as A at each validation point."""
    if a_batch == b_batch:
        return b.with_(steps=a.steps, val_every=a.effective_val_every())
    scale = a_batch / b_batch
    val_every = max(1, round(a.effective_val_every() * scale))
    points = max(1, round(a.steps / a.effective_val_every()))
    return b.with_(steps=val_every * points, val_every=val_every)


def default_names(arm: str, replicate: int) -> str:
    return f"{arm}{replicate}"


MAX_SPEED_STEPS = 1_000_000  # a speed-only replicate never trains longer than this, whatever the step time
WARMUP_MARGIN = 1.5  # a speed-only run allows its arm's longest warm-up so far times this, plus MIN_STEADY_STEPS
MIN_STEADY_STEPS = 20


def speed_steps(summaries: list[dict[str, Any]], steady_s: float, per_call: int = 1) -> int | None:
    """Steps a speed-only replicate needs for `steady_s` seconds of steady state, from the arm's runs so far.

    Warm-up: the longest seen (a run that never settled counts its whole
    length, so the next one trains at least twice as long). Step time: the
    median of the runs' median steady steps, else (nothing steady yet) their
    wall time per step, which over-estimates it and errs towards shorter runs
    the next calibration lengthens. None: no completed run to size from.
    """
    warmups, step_ms = [], []
    for s in summaries:
        done = int(s.get("steps_completed") or 0)
        if not done:
            continue
        first = s.get("first_steady_step")
        warmups.append(int(first) - 1 if isinstance(first, int) and first > 0 and (s.get("throughput") or {}).get("windows")
                       else 2 * done)
        median = (s.get("step_ms") or {}).get("median")
        if isinstance(median, (int, float)) and median > 0:
            step_ms.append(float(median))
        elif isinstance(s.get("wall_s"), (int, float)) and s["wall_s"] > 0:
            step_ms.append(1000.0 * float(s["wall_s"]) / done)
    if not warmups or not step_ms:
        return None
    ms = sorted(step_ms)[len(step_ms) // 2]
    steps = math.ceil(WARMUP_MARGIN * max(warmups)) + max(MIN_STEADY_STEPS, math.ceil(steady_s * 1000.0 / ms))
    steps = min(MAX_SPEED_STEPS, steps)
    return steps + (-steps) % max(1, per_call)  # whole calls of steps_per_execution


@dataclass
class TrialPlan:
    """What a trial intends to measure (`Trial.plan()`), for the front ends to announce."""

    min_pairs: int
    max_pairs: int
    steady_s: float  # steady-state seconds each replicate aims at (0: every pair trains the full length)
    full_steps: tuple[int, int]  # (A, B) steps of the first pair, which validates for the accuracy gate
    speed_steps: tuple[int | None, int | None]  # (A, B) steps of the speed-only pairs (None: not sized yet)

    @property
    def min_runs(self) -> int:
        return 2 * self.min_pairs

    @property
    def max_runs(self) -> int:
        return 2 * self.max_pairs

    def text(self) -> str:
        """One line: "pairs 3–6 (6–12 runs): the first trains 300 steps with validation, the others measure
        speed only, aiming at 3 s of steady state each"."""
        pairs = f"{self.min_pairs}–{self.max_pairs}" if self.max_pairs > self.min_pairs else str(self.min_pairs)
        runs = f"{self.min_runs}–{self.max_runs}" if self.max_runs > self.min_runs else str(self.min_runs)
        a, b = self.full_steps
        full = f"{a} steps" if a == b else f"{a} steps of A, {b} of B (equal samples)"
        if not self.steady_s:
            return f"pairs {pairs} ({runs} runs), each training {full} with validation"
        sized = ""
        if all(self.speed_steps):
            sa, sb = self.speed_steps
            sized = f" ({sa} steps)" if sa == sb else f" ({sa} steps of A, {sb} of B)"
        return (f"pairs {pairs} ({runs} runs): the first trains {full} with validation (the accuracy gate), "
                f"the others measure speed only{sized}, aiming at {self.steady_s:g} s of steady state each")


@dataclass
class Trial:
    """B against A. `names(arm, replicate)` names the run directories.

    `accuracy_reference`: (summary, run dir) pairs to judge B's accuracy
    against instead of A's own runs — the ladder judges every rung's accuracy
    against the baseline so tolerances do not add up along it.
    """

    a: RunSettings
    b: RunSettings
    rule: SpeedRule = field(default_factory=SpeedRule)
    tolerance: Tolerance = field(default_factory=Tolerance)
    names: Callable[[str, int], str] = default_names
    budget_s: float | None = None
    accuracy_reference: list[tuple[dict[str, Any], Path | None]] | None = None
    label_a: str = "A"
    label_b: str = "B"
    xla_cache: str | None = None  # XLA's persistent compilation cache folder, shared by every run of the trial
    way_forward: str = ""  # the way forward this trial takes after an inconclusive verdict (`trials.way_forward`)
    runs: list[MeasuredRun] = field(default_factory=list)
    started: float | None = None

    def __post_init__(self) -> None:
        self.a = trial_settings(self.a)
        self.b = trial_settings(self.b)
        if self.xla_cache:
            self.a, self.b = self.a.with_(xla_cache=self.xla_cache), self.b.with_(xla_cache=self.xla_cache)
        self._stopped = False
        self._asked: float | None = None  # when next_run() first offered the run not yet recorded

    # -- planning -------------------------------------------------------------------------------

    def _batch(self, arm: str) -> int | None:
        settings = self.a if arm == A else self.b
        if settings.batch_size:
            return settings.batch_size
        for r in self.runs:
            if r.planned.arm == arm and r.summary:
                b = (r.summary.get("settings") or {}).get("batch_size")
                if isinstance(b, int) and b > 0:
                    return b
        return None

    def full_settings(self, arm: str) -> RunSettings:
        """The settings of `arm`'s full-length run (B's steps follow A's batch for equal samples seen)."""
        if arm == A:
            return self.a
        a_batch, b_batch = self._batch(A), self._batch(B)
        if a_batch and b_batch and a_batch != b_batch:
            return equal_samples(self.a, self.b, a_batch, b_batch)
        return self.b.with_(steps=self.a.steps, val_every=self.a.effective_val_every())

    def speed_steps_of(self, arm: str) -> int | None:
        """Steps of `arm`'s speed-only runs, calibrated on its completed runs so far (None: nothing to size from)."""
        if not self.rule.steady_s:
            return None
        done = [r.summary for r in self.runs if r.planned.arm == arm and r.status == COMPLETED and r.summary]
        settings = self.a if arm == A else self.b
        return speed_steps(done, self.rule.steady_s, settings.steps_per_execution)

    def settings_of(self, arm: str, replicate: int = 1) -> RunSettings:
        """The settings of `arm`'s run in pair `replicate`: the first pair full length with validation, the
        others speed only, as long as the arm's calibration says (see the module's docstring)."""
        full = self.full_settings(arm)
        steps = self.speed_steps_of(arm) if replicate > 1 else None
        if steps is None:
            return full
        return full.with_(steps=steps, val_every=steps, speed_only=True)

    def plan(self) -> TrialPlan:
        """What this trial will measure: pairs min..max, the runs' lengths, the steady seconds each aims at."""
        return TrialPlan(self.rule.min_pairs, self.rule.max_pairs, self.rule.steady_s,
                         (self.full_settings(A).steps, self.full_settings(B).steps),
                         (self.speed_steps_of(A), self.speed_steps_of(B)))

    def estimate_remaining_s(self) -> tuple[float, float] | None:
        """(at least, at most) seconds of runs left: to the fewest pairs the rule allows (at least the pair under
        way), and to its maximum.

        None before the first pair has completed (nothing to estimate from) and
        once the trial is decided, (0, 0). Each run still to come is estimated
        from its arm's runs so far, process start, warm-up and validation
        included: a speed-only run as the overhead its arm's runs showed (their
        whole time less their steady measurement) plus its steady seconds.
        """
        if self.next_run() is None:
            return (0.0, 0.0)
        if len(self.pairs()) < 1 or len(self.runs) < 2:
            return None
        per_run = {arm: self._run_estimate(arm) for arm in (A, B)}
        if None in per_run.values():
            return None
        done = len(self.runs)
        def left(pairs: int) -> float:
            total = 0.0
            for k in range(done, 2 * pairs):
                replicate = k // 2 + 1
                total += per_run[self._order(replicate)[k % 2]]  # type: ignore[operator]
            return total
        return left(max(self.rule.min_pairs, done // 2 + 1)), left(self.rule.max_pairs)  # the pair begun counts

    def progress_text(self) -> str:
        """Where the trial stands, for a log line or a page: "pair 2 of 3–6 · about 1 min 40 s left (at most
        3 min 10 s)"; before its first pair only the pair, once decided ""."""
        planned = self.next_run()
        if planned is None:
            return ""
        rule = self.rule
        span = f"{rule.min_pairs}–{rule.max_pairs}" if rule.max_pairs > rule.min_pairs else str(rule.min_pairs)
        text = f"pair {planned.replicate} of {span}"
        left = self.estimate_remaining_s()
        if left is not None:
            low, high = left
            text += f" · about {duration_text(low)} left"
            if high > low * 1.1 + 5:
                text += f" (at most {duration_text(high)})"
        return text

    def _run_estimate(self, arm: str) -> float | None:
        runs = [r for r in self.runs if r.planned.arm == arm and r.elapsed_s]
        if not runs:
            return None
        speed = [r for r in runs if r.planned.settings.speed_only]
        if speed:
            return sorted(r.elapsed_s for r in speed)[len(speed) // 2]  # type: ignore[misc]
        if not self.rule.steady_s:
            return runs[-1].elapsed_s
        last = runs[-1]
        measured = float(((last.summary or {}).get("throughput") or {}).get("seconds") or 0.0)
        overhead = max(0.0, (last.elapsed_s or 0.0) - measured - self._validation_s(last))
        return overhead + self.rule.steady_s

    @staticmethod
    def _validation_s(run: MeasuredRun) -> float:
        """What a full-length run spent outside its steps: its fit() wall time less warm-up and windows."""
        s = run.summary or {}
        wall, warm = float(s.get("wall_s") or 0.0), float(s.get("warmup_s") or 0.0)
        windows = s.get("windows") or []
        in_windows = sum(float(w[2]) for w in windows if isinstance(w, (list, tuple)) and len(w) == 3)
        return max(0.0, wall - max(warm, 0.0) - in_windows) if windows else 0.0

    def _order(self, replicate: int) -> tuple[str, str]:
        return (A, B) if replicate % 2 == 1 else (B, A)

    def pairs(self) -> list[tuple[MeasuredRun | None, MeasuredRun | None]]:
        """(A run, B run) of each replicate so far, in order."""
        out: dict[int, list[MeasuredRun | None]] = {}
        for r in self.runs:
            slot = out.setdefault(r.planned.replicate, [None, None])
            slot[0 if r.planned.arm == A else 1] = r
        return [tuple(out[k]) for k in sorted(out)]  # type: ignore[misc]

    def next_run(self) -> PlannedRun | None:
        """The next run to measure, or None when the trial is decided."""
        if self._stopped or self._decided():
            return None
        done = len(self.runs)
        replicate = done // 2 + 1
        arm = self._order(replicate)[done % 2]
        if self._asked is None:
            self._asked = time.monotonic()
        settings = self.settings_of(arm, replicate)
        if replicate == PROFILED_REPLICATE:  # both arms alike, so the pair's ratio stays fair
            settings = settings.with_(profile=None)
        return PlannedRun(arm, replicate, settings, self.names(arm, replicate))

    def record(self, planned: PlannedRun, summary: dict[str, Any] | None, run_dir: Path | str | None) -> None:
        now = time.monotonic()
        if self.started is None:
            self.started = now
        elapsed = now - self._asked if self._asked is not None else None
        self._asked = None
        self.runs.append(MeasuredRun(planned, summary, Path(run_dir) if run_dir is not None else None, elapsed))

    def stop(self) -> None:
        """No more runs (the user stopped): the verdict uses the complete pairs measured so far."""
        self._stopped = True

    def _decided(self) -> bool:
        if len(self.runs) % 2 == 1:
            last = self.runs[-1]
            return last.status != COMPLETED  # a failed run ends the trial; its pair is never completed
        if any(r.status != COMPLETED for r in self.runs):
            return True
        pairs = len(self.runs) // 2
        if pairs >= self.rule.max_pairs:  # whatever the runs measured: a trial never runs past its maximum
            return True
        ratios = self._ratios()
        if len(ratios) + self.rule.max_pairs - pairs < self.rule.min_pairs:
            return True  # the pairs left cannot make up the measured pairs the verdict needs
        over_budget = (self.budget_s is not None and self.started is not None
                       and time.monotonic() - self.started > self.budget_s)
        if over_budget and len(ratios) >= 2:
            return True
        return self.rule.clear(ratios)

    def _rates(self) -> tuple[list[float | None], list[float | None]]:
        """Each complete pair's A and B throughput; None for a run that measured too little (`rule.rate`)."""
        a_rates, b_rates = [], []
        for ra, rb in self.pairs():
            if ra is not None and rb is not None and ra.status == COMPLETED and rb.status == COMPLETED:
                a_rates.append(self.rule.rate(ra.summary))
                b_rates.append(self.rule.rate(rb.summary))
        return a_rates, b_rates

    def shortfall(self) -> str:
        """What would be enough measurement, when the pairs so far are not: "" when they are."""
        ratios = self._ratios()
        if len(ratios) >= self.rule.min_pairs:
            return ""
        short = [(r, why) for r in self.runs if r.status == COMPLETED
                 and (why := self.rule.shortfall(r.summary)) is not None]
        if short:
            run, why = short[-1]
            arm = run.planned.arm
            steps = self.speed_steps_of(arm)
            longer = f" (about {steps} steps of {self.label_a if arm == A else self.label_b})" if steps else ""
            return (f"{len(short)} replicate run(s) measured too little steady state — {run.planned.name}: {why}; "
                    f"each needs at least {self.rule.min_steady_s:.1f} s in 3 windows: longer runs{longer}, "
                    f"or more pairs (at most {self.rule.max_pairs})")
        return (f"{len(ratios)} of the {self.rule.min_pairs} replicate pairs the verdict needs were measured: "
                f"run {self.rule.min_pairs - len(ratios)} more pair(s)")

    def _ratios(self) -> list[float]:
        a_rates, b_rates = self._rates()
        return [b / a for a, b in zip(a_rates, b_rates) if a and b]

    # -- judging --------------------------------------------------------------------------------

    def verdict(self) -> TrialVerdict:
        speed = self.rule.verdict(*self._rates(), needed=self.shortfall())
        b_runs = [r for r in self.runs if r.planned.arm == B]
        a_runs = [r for r in self.runs if r.planned.arm == A]
        arm_b = accuracy.ArmData()
        for r in b_runs:
            if r.status == COMPLETED and not r.planned.settings.speed_only:  # speed-only runs do not validate
                arm_b.add_run(r.summary, r.run_dir)
        arm_a = accuracy.ArmData()
        reference = self.accuracy_reference if self.accuracy_reference is not None else \
            [(r.summary, r.run_dir) for r in a_runs if r.status == COMPLETED and not r.planned.settings.speed_only]
        for summary, run_dir in reference:
            arm_a.add_run(summary, run_dir)
        acc = accuracy.gate(arm_a, arm_b, self.tolerance)

        failed_a = next((r for r in a_runs if r.status != COMPLETED), None)
        status = next((r.status for r in b_runs if r.status != COMPLETED), COMPLETED if b_runs else "crashed")
        findings = [f for r in b_runs for f in (r.summary or {}).get("findings") or [] if isinstance(f, dict)]
        xla_active = all((r.summary or {}).get("xla_active", True) is not False for r in b_runs if r.status == COMPLETED)
        error = next(((r.summary or {}).get("error") for r in b_runs if r.status != COMPLETED), None)
        error = error if isinstance(error, dict) else None
        outputs = next(((r.summary or {}).get("output_dtypes") for r in b_runs if (r.summary or {}).get(
            "output_dtypes")), None)
        kept, reason, found = keep(speed, acc, status, findings, self.label_b, self.label_a,
                                   xla_requested=self.b.jit_compile and not self.a.jit_compile,
                                   xla_active=xla_active, error=error,
                                   change=Change(self._accuracy_reference_settings(), self.settings_of(B), outputs))
        if failed_a is not None and status == COMPLETED:
            kept = False
            reason = f"the reference run ({self.label_a}) ended as {failed_a.status}, so nothing was compared"
        return TrialVerdict(speed, acc, kept, reason, found, status, self.design(speed.replicates, acc.examples),
                            error=error, rule=self.tolerance, way_forward=self.way_forward)

    def _accuracy_reference_settings(self) -> RunSettings:
        """The settings B's accuracy is judged against (the baseline's in a ladder), for naming causes."""
        for summary, _ in self.accuracy_reference or []:
            settings = (summary or {}).get("settings")
            if isinstance(settings, dict):
                return RunSettings.from_dict(settings)
        return self.a

    def design(self, pairs: int, examples: int) -> str:
        """How this trial measured, in words, for the report and the wizard."""
        steps_a = self.a.steps
        text = (f"{pairs} replicate pair(s), each an A and a B run in their own processes, alternating AB/BA; "
                f"throughput: the median rate of device-drained windows of the steady state; the speed interval "
                f"is a Student-t interval across the pairs' ratios, so it includes run-to-run variation. ")
        if self.rule.steady_s and any(r.planned.settings.speed_only for r in self.runs):
            text += (f"The first pair trains {steps_a} steps of A's batch (B the same number of samples) with "
                     f"validation; the others measure speed only, sized for {self.rule.steady_s:g} s of steady "
                     f"state each")
        else:
            text += f"Each run trains {steps_a} steps of A's batch (B the same number of samples)"
        if examples:
            text += (f"; accuracy paired on the same {examples} validation examples at equal samples seen, "
                     f"averaged over the last {accuracy.POINTS} validation points")
        return text + "."

    def measured_seconds(self) -> float:
        return sum(float((r.summary or {}).get("wall_s") or 0.0) for r in self.runs)


def run_trial(trial: Trial, execute: Callable[[PlannedRun], tuple[dict[str, Any] | None, Path | None]],
              cancelled: Callable[[], bool] = lambda: False) -> TrialVerdict:
    """Measure a trial to its end with a blocking `execute(planned) -> (summary, run_dir)`."""
    while (planned := trial.next_run()) is not None:
        if cancelled():
            trial.stop()
            break
        summary, run_dir = execute(planned)
        trial.record(planned, summary, run_dir)
        if cancelled():
            trial.stop()
    return trial.verdict()

