"""One A/B trial as a plan of runs: replicated, interleaved, adaptive, then judged.

A trial never runs anything itself. `next_run()` says which run comes next
(its arm, replicate, settings and directory name); the front end executes it —
a blocking backend subprocess in `tfturbo tune`/`ab`, a QProcess in the wizard
— and hands back the summary with `record()`. So every front end measures and
judges the same way, and a test can drive a trial with recorded summaries.

Design (chosen by measurement on a shared 2-core CPU, see docs/MEASUREMENT.md,
"Replicates and their length"): each replicate is an ordinary `run` in its own process,
A and B alternating (BA, AB, BA, …: B first, so a candidate that cannot run
costs its own run, not A's before it) so that process start-up, memory layout,
clocks and the machine's slow minutes are sampled into both arms; the speed
interval is taken across the pairs (`speed.SpeedRule`), whose number adapts to
the noise. The first pair trains the full length with validation: B on as many
samples as the runs it is judged against, validating at the same sample counts
where whole steps allow (`equal_samples`), so the accuracy gate compares them
at equal samples seen. The pairs after it
measure speed only (`speed_only`: no validation, no saved model), each arm's
length calibrated from its own runs so far — its warm-up plus `rule.steady_s`
seconds of steady state — as pyperf and Criterion size their loops.

Where the arms can share a process (`settings.can_share_process`), the trial
is `paired`: its full-length runs are the accuracy gate's only (B's alone when
B is judged against an external reference run, the ladder's baseline: A's
would serve nothing), and the speed verdict is taken from the speed pairs
after them, each ONE process measuring both arms in interleaved blocks
(`PlannedPair`, `run-pair`), the two arms together aiming at as many steady
seconds as the process spends on everything else (`STEADY_PER_OVERHEAD`), each
at least `rule.steady_s`. A ratio of two separate full-length runs was 2.3×
noisier than a paired one and the outlier that ran trials to their maximum
or hid a real difference (benchmarks/RESULTS.md, Trial efficiency). A trial always ends
within `rule.max_pairs` speed pairs, whatever its runs measured.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .. import protocol
from ..numbers import counted, duration_text
from ..run_summary import RunSummary
from ..settings import NO_PROFILE, RunSettings, can_share_process, configuration_key, training_key
from . import accuracy, label_free
from .design import FULL, PAIRED, SPEED_ONLY, Design, Lengths, full_length_words, seed_runs_words
from .speed import SpeedRule
from .verdict import NOT_APPLIED, NOT_MEASURED, AccuracyVerdict, Change, SpeedVerdict, Tolerance, TrialVerdict, keep

A, B = "a", "b"
# The reference's trainings from other seeds a trial (`ab`) or a study (`tune`, once) adds for the accuracy gate's
# trainings' noise: with 3 trainings of one configuration the noise rests on 2 degrees of freedom (t = 4.30); with
# 2 on one (t = 12.7), an interval too wide to judge anything but a collapse (docs/MEASUREMENT.md)
SEED_REPLICATES = 2

# The first pair captures a profile (the default window after warm-up) in each arm whose configuration has none
# in the study yet (`Trial.profiled`), so every configuration has one profile.json; its profiled steps stay out of
# the throughput, as in any run.
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
class PlannedPair:
    """A paired speed replicate the trial wants next: both arms' speed-only runs in ONE backend process
    (`python -m trainer_backend run-pair`), measured in interleaved blocks, each aiming at `steady_s` seconds of
    steady state. `first` trains first (the pair's AB/BA order); each run keeps its own directory, so it is
    read back like any speed-only run."""

    first: PlannedRun
    second: PlannedRun
    steady_s: float

    @property
    def replicate(self) -> int:
        return self.first.replicate

    @property
    def runs(self) -> tuple[PlannedRun, PlannedRun]:
        return (self.first, self.second)

    @property
    def name(self) -> str:
        return f"{self.first.name}+{self.second.name}"

    def text(self) -> str:
        """How it measures, for the front ends' progress lines: "speed only, in one process, 5 s of steady
        state each"."""
        return f"speed only, in one process, {self.steady_s:.0f} s of steady state each"


Planned = PlannedRun | PlannedPair


@dataclass
class MeasuredRun:
    planned: PlannedRun
    summary: RunSummary | None
    run_dir: Path | None
    # from next_run() to record(): the whole run, process start included; a paired replicate's process time is
    # shared equally by its two runs
    elapsed_s: float | None = None
    paired: bool = False  # measured with the other arm in one process (`PlannedPair`)
    reused: bool = False  # a run the study trained before (`FinishedRun`, planned.name is its name), not measured here

    @property
    def status(self) -> str:
        return (self.summary.status if self.summary else None) or "crashed"


@dataclass
class FinishedRun:
    """A completed full-length run a study already holds (its run directory `name`): a trial whose reference
    run would train the same way (`settings.training_key`) takes it instead of training it again."""

    name: str
    summary: RunSummary
    run_dir: Path | None = None


def trial_settings(settings: RunSettings) -> RunSettings:
    """A replicate measures the whole step budget, without the adaptive stop, and without the profiler (it slows
    steps) except in the first pair (`PROFILED_REPLICATE`), and with per-example results at every validation point
    but in B's full-length run (`Trial.gate_from`)."""
    return settings.with_(profile=NO_PROFILE, until_ci=None, min_steps=0, paired_from=None)


def validation_points(steps: int, val_every: int, batch: int) -> list[int]:
    """The samples seen at each validation point of a full-length run, as the backend validates: after every
    `val_every` steps (one Keras epoch each) and after the last step, samples being steps × batch."""
    every = max(1, min(val_every, steps))
    return [k * batch for k in range(every, steps, every)] + [steps * batch]


def compared_points(ref: RunSettings, ref_batch: int, b: RunSettings, b_batch: int) -> list[tuple[int, int]]:
    """The (reference, B) points the accuracy gate would compare for these two full-length runs
    (`accuracy.common_points` on their validation points)."""
    mine = validation_points(b.steps, b.effective_val_every(), b_batch)
    theirs = validation_points(ref.steps, ref.effective_val_every(), ref_batch)
    return accuracy.common_points(dict.fromkeys(theirs), dict.fromkeys(mine), accuracy.POINTS)


def enough_exact(pairs: list[tuple[int, int]], ref: RunSettings, ref_batch: int) -> bool:
    """True when the gate compares as many points as it averages (`accuracy.POINTS`, or every point the
    reference has when it has fewer), each at exactly equal samples seen."""
    wanted = min(accuracy.POINTS, len(validation_points(ref.steps, ref.effective_val_every(), ref_batch)))
    return len(pairs) >= wanted and all(sa == sb for sa, sb in pairs)


def equal_samples(ref: RunSettings, b: RunSettings, ref_batch: int, b_batch: int) -> RunSettings:
    """B's steps and validation interval for as many samples as the reference run `ref` at each validation
    point, at exactly the same sample counts where whole steps of B allow it.

    B's points are whole steps, so they can only meet the reference's at
    multiples of `b_batch`: validating every lcm(reference interval in
    samples, `b_batch`) samples gives every point the two can share (every
    point when the reference's interval is a whole number of B's batches, as
    for 300 steps at batch 64 against 96 or 256); with steps_per_execution N
    every lcm(interval, N × `b_batch`), so a call never spans a point and B
    keeps its N (the backend lowers N otherwise, `whole_calls`, and B's run
    would measure another configuration's speed: such a run's rate does not
    count, `Trial._rate`; two exact points at B's own N are worth more than
    three at another N). B trains the reference's samples to the nearest
    whole step. When that gives the gate fewer points to compare than the
    reference's interval rounded to whole calls of B (its nearest points,
    within `accuracy.SAMPLES_TOLERANCE`), B takes that instead, and the gate
    says how far apart the points it compares are
    (`AccuracyVerdict.points_note`).
    """
    every = max(1, min(ref.effective_val_every(), ref.steps))
    interval, total = every * ref_batch, ref.steps * ref_batch
    steps = max(1, round(total / b_batch))
    n = b.calls  # whole calls: B's run is measured at its own steps_per_execution
    candidates = [b.with_(steps=steps, val_every=min(math.lcm(interval, n * b_batch) // b_batch, steps)),
                  b.with_(steps=steps, val_every=min(max(1, round(interval / (n * b_batch))) * n, steps))]
    compared = [compared_points(ref, ref_batch, c, b_batch) for c in candidates]
    exact = next((c for c, pairs in zip(candidates, compared) if enough_exact(pairs, ref, ref_batch)), None)
    if exact is not None:
        return exact
    most = max(len(pairs) for pairs in compared)
    return next(c for c, pairs in zip(candidates, compared) if len(pairs) == most)


def aligned_reference(a: RunSettings, a_batch: int, b_batch: int) -> RunSettings:
    """A's full-length run moved, only where needed, to validation points B can meet exactly.

    Where A's own points already give the gate enough exact points with B
    (`equal_samples`, `enough_exact`), A is unchanged. Else A validates every
    multiple of lcm(`a_batch`, `b_batch`) samples nearest its own interval
    (both arms stop there after whole steps), and trains a multiple of it when
    its samples are not a whole number of B's batches and the nearest
    multiple is within `accuracy.SAMPLES_TOLERANCE` of them (so both arms end
    at the same count). When that does not give enough exact points either
    (the lcm is longer than the run), A is unchanged and B takes the nearest
    points. A's run records the interval it validated at (its run.yaml and
    summary), and the interval is a measurement setting
    (`compare.replicate_key`), so the run is still a replicate of A's
    configuration.
    """
    def enough(ref: RunSettings) -> bool:
        return enough_exact(compared_points(ref, a_batch, equal_samples(ref, ref, a_batch, b_batch), b_batch),
                            a, a_batch)

    if a_batch == b_batch or enough(a):
        return a
    lcm = math.lcm(a_batch, b_batch)
    total = a.steps * a_batch
    if total % b_batch:
        nearest = round(total / lcm) * lcm
        total = nearest if nearest and abs(nearest - total) <= accuracy.SAMPLES_TOLERANCE * total else total
    interval = max(1, round(min(a.effective_val_every(), a.steps) * a_batch / lcm)) * lcm
    moved = a.with_(steps=total // a_batch, val_every=min(interval, total) // a_batch)
    return moved if enough(moved) else a


def speed_in_paired_processes(share_process: bool, rule: SpeedRule, a: RunSettings, b: RunSettings,
                              accelerator: bool = False) -> bool:
    """The one rule of whether a trial of `a` against `b` takes its speed from paired processes only
    (`Trial.paired`): its runs may share a process (`share_process`: they run here), it has speed pairs to
    size (`rule.steady_s`), and the settings allow it on this device (`settings.can_share_process`; `accelerator`:
    a GPU or TPU trains them)."""
    return share_process and bool(rule.steady_s) and can_share_process(a, b, accelerator)


def default_names(arm: str, replicate: int) -> str:
    return f"{arm}{replicate}"


MAX_SPEED_STEPS = 1_000_000  # a speed-only replicate never trains longer than this, whatever the step time
# A paired replicate process measures, per arm, at least this many steady seconds per second of the process's own
# overhead (interpreter start, TensorFlow import, both builds, both warm-ups), split between its two arms: with
# 1.0 the arms' steady windows together last as long as everything else, so the process is at least half steady
# measurement by construction, as pyperf and Criterion size a benchmark's loops to outweigh its fixed cost.
STEADY_PER_OVERHEAD = 1.0
# A paired replicate ends each arm once it measured its steady seconds; its steps are only a cap, this many times
# what the arm's step time says, so blocks that overshoot or a slow moment never cut the measurement short.
PAIRED_STEPS_CAP = 1.5
WARMUP_MARGIN = 1.5  # a speed-only run allows its arm's longest warm-up so far times this, plus MIN_STEADY_STEPS
MIN_STEADY_STEPS = 20


def settled_warmup(summary: RunSummary) -> int | None:
    """The warm-up steps of a run that reached a steady state (`first_steady_step` - 1, with steady windows),
    None when it never settled."""
    first = summary.first_steady_step
    return first - 1 if first is not None and first > 0 and (summary.throughput or {}).get("windows") else None


def speed_steps(summaries: list[RunSummary], steady_s: float, per_call: int = 1) -> int | None:
    """Steps a speed-only replicate needs for `steady_s` seconds of steady state, from the arm's runs so far.

    Warm-up: the longest seen (a run that never settled counts its whole
    length, so the next one trains at least twice as long). Step time: the
    median of the runs' median steady steps, else (nothing steady yet) their
    wall time per step, which over-estimates it and errs towards shorter runs
    the next calibration lengthens; once any run measured a step, the
    wall-time estimates are dropped (14 ms against a measured 0.4 ms kept a
    script's pair 3 too short to count). None: no completed run to size from.
    """
    warmups, steady_ms, wall_ms = [], [], []
    for s in summaries:
        done = s.steps_completed or 0
        if not done:
            continue
        warmup = settled_warmup(s)
        warmups.append(warmup if warmup is not None else 2 * done)
        median = s.median_step_ms
        if median is not None and median > 0:
            steady_ms.append(median)
        elif s.wall_s is not None and s.wall_s > 0:
            wall_ms.append(1000.0 * s.wall_s / done)
    step_ms = steady_ms or wall_ms
    if not warmups or not step_ms:
        return None
    ms = sorted(step_ms)[len(step_ms) // 2]
    steps = math.ceil(WARMUP_MARGIN * max(warmups)) + max(MIN_STEADY_STEPS, math.ceil(steady_s * 1000.0 / ms))
    steps = min(MAX_SPEED_STEPS, steps)
    return steps + (-steps) % max(1, per_call)  # whole calls of steps_per_execution


@dataclass
class TrialPlan:
    """What a trial intends to measure (`Trial.plan()`), for the front ends to announce."""

    min_pairs: int  # speed pairs: the pairs whose ratios the speed verdict is taken from
    max_pairs: int
    steady_s: float  # steady-state seconds each replicate aims at (0: every pair trains the full length)
    full_steps: tuple[int, int]  # (A, B) steps of the full-length runs, which validate for the accuracy gate
    speed_steps: tuple[int | None, int | None]  # (A, B) steps of the speed-only pairs (None: not sized yet)
    paired: bool = False  # the speed pairs: both arms in one process, in interleaved blocks (`PlannedPair`)
    sized: bool = False  # paired: steady_s is sized from the measured overhead (else the floor, until pair 1 ends)
    batches: tuple[int | None, int | None] = (None, None)  # (A, B) batch sizes, when known
    gate_arms: tuple[str, ...] = (A, B)  # the arms with a full-length run; paired: before the speed pairs
    gate: str = ""  # which accuracy gate will judge (`accuracy.planned_gate`); "": not known before a run says
    reused: str = ""  # the study's run A's full-length run re-uses (`Trial.reused_run`); "": A trains its own
    # the accuracy reference trained again from other seeds after the gate's runs (`Trial.seed_runs`), their seeds
    # and what the reference is called ("the baseline", "A")
    seed_runs: int = 0
    noise_seeds: tuple[int, ...] = ()
    reference: str = "A"

    @property
    def gate_runs(self) -> int:
        """Full-length runs to train that are not a speed pair (paired, or A's run re-used: the accuracy gate's
        and the fresh ones only; else 0, pair 1 counts)."""
        if not (self.paired or self.reused):
            return 0
        return len(self.gate_arms) - (1 if self.reused and A in self.gate_arms else 0)

    @property
    def min_runs(self) -> int:
        return self.gate_runs + self.seed_runs + 2 * self.min_pairs

    @property
    def max_runs(self) -> int:
        return self.gate_runs + self.seed_runs + 2 * self.max_pairs

    def text(self) -> str:
        """One line: "3–6 pairs (6–12 runs): the first trains 300 steps with validation, the others measure
        speed only, aiming at 3 s of steady state each"; the reference's trainings from other seeds named where
        they come ("then 2 trainings of the baseline from seeds 1000, 2000 for the accuracy gate's training
        noise") and counted in the runs."""
        pairs = (f"{self.min_pairs}–{self.max_pairs} pairs" if self.max_pairs > self.min_pairs
                 else counted(self.min_pairs, "pair"))
        runs = f"{self.min_runs}–{self.max_runs}" if self.max_runs > self.min_runs else str(self.min_runs)
        full = full_length_words(*self.full_steps, *self.batches)
        return self._speed_text(pairs, runs, full) + (f"; accuracy gate: {self.gate}" if self.gate else "")

    def _speed_text(self, pairs: str, runs: str, full: str) -> str:
        none = self.gate == accuracy.NO_VALIDATION
        gated = "(no validation data)" if none else "with validation (the accuracy gate)"
        seeds = seed_runs_words(self.seed_runs, self.noise_seeds, self.reference)
        if not self.steady_s:
            return (f"{pairs} ({runs} runs), each training {full} " + ("(no validation data)" if none else
                                                                         "with validation")
                    + (f"; after the first pair, {seeds}" if seeds else ""))
        gated += f", then {seeds}" if seeds else ""
        gate = "B trains" if self.gate_arms == (B,) or self.reused else "A and B each train"
        reused = (f", A's full-length run re-used from {self.reused} (trained the same way in this study: same "
                  f"settings, seed, length and validation points; it counts for no speed ratio)"
                  if self.reused else "")
        if self.paired:
            aim = (f"{self.steady_s:.0f} s of steady state per arm (the two arms together as long as the "
                   f"process's own start-up, builds and warm-ups)" if self.sized else
                   f"at least {self.steady_s:g} s of steady state per arm, more if the first runs show the "
                   f"process's start-up, builds and warm-ups take longer")
            return (f"{runs} runs: first {gate} {full} {gated}{reused}, then {pairs} measure "
                    f"speed only, A and B in one process in interleaved blocks (ABBA BAAB), aiming at {aim}")
        sized = ""
        if all(self.speed_steps):
            sa, sb = self.speed_steps
            sized = f" ({sa} steps)" if sa == sb else f" ({sa} steps of A, {sb} of B)"
        if self.reused:
            return (f"{runs} runs: first {gate} {full} {gated}{reused}, then {pairs} measure speed only{sized}, "
                    f"aiming at {self.steady_s:g} s of steady state each")
        return (f"{pairs} ({runs} runs): the first trains {full} {gated}, {'then ' if seeds else ''}"
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
    accuracy_reference: list[tuple[RunSummary | None, Path | None]] | None = None
    label_a: str = "A"
    label_b: str = "B"
    label_reference: str = ""  # the accuracy reference in words ("the baseline"; "": `reference_words` says)
    xla_cache: str | None = None  # XLA's persistent compilation cache folder, shared by every run of the trial
    val_set: str | None = None  # the fixed validation examples' folder, shared by every run of the trial (--val-set)
    # pairs 2..N as one process each (`PlannedPair`) where the settings allow it (`can_share_process`); False for
    # a front end that runs elsewhere (a remote host)
    share_process: bool = True
    accelerator: bool = False  # a GPU or TPU trains the runs: arms of different batch sizes get their own processes
    # why B's change did not take effect in a completed run of B ("why; what would enable it"), or None when it did
    # (the levers' words, `tune.levers.effect_check`): asked of B's first run, and the trial stops there if it says
    not_in_effect: Callable[[RunSummary], str | None] | None = None
    # the study's runs that hold a configuration's profile, by `settings.configuration_key` (the study engine's
    # index): an arm whose configuration is in it trains without the profiler window — a configuration is
    # profiled once per study, and the reference configuration of every later trial already was (the
    # baseline's run, a kept rung's own run); `profiled_in` says where each arm's profile is
    profiled: dict[tuple[str, ...], str] = field(default_factory=dict)
    # B's full-length run saves its model (checkpoint/model.keras): the one run of a trial that may be kept (its
    # rung's own). False where none is: the confirmation (its configuration's model is its own rung's), a scaling
    # measurement, `ab` without --out (its runs are deleted). Every other run never saves one: A's (its own
    # rung's run has it), the seed replicates, the speed-only pairs — a model nobody uses costs seconds a run
    save_model: bool = True
    # False: A's first run completes B's settings (a scaling measurement reads the workload's per-replica batch
    # from it), so A trains first whatever the batch sizes say
    b_first: bool = True
    # summaries of A's configuration measured before this trial (its rung's own run): what A's speed-only runs are
    # sized from while the trial has run no A of its own (a paired trial judged against an external accuracy
    # reference runs none before its first speed pair)
    a_history: list[RunSummary] = field(default_factory=list)
    way_forward: str = ""  # the way forward this trial takes after an inconclusive verdict (`trials.way_forward`)
    # trainings of the accuracy reference's configuration from other seeds (`noise_seed`), after the gate's
    # full-length runs: what the gate measures the trainings' noise from (`accuracy.training_noise`); fewer when
    # the external reference already holds runs of other seeds, none when B's change did not take effect or B
    # validated nothing per example. 2 in `ab` and `tune` (SEED_REPLICATES); 0 here: a trial as before
    seed_replicates: int = 0
    # the study's completed full-length runs by `settings.training_key` (the study engine's index): A's full-length
    # run, when one of them trained the same way, is taken from here instead of trained again (`reused_run`)
    finished: dict[tuple[tuple[str, str], ...], FinishedRun] = field(default_factory=dict)
    runs: list[MeasuredRun] = field(default_factory=list)
    started: float | None = None

    def __post_init__(self) -> None:
        self.a = trial_settings(self.a)
        self.b = trial_settings(self.b)
        if self.xla_cache:
            self.a, self.b = self.a.with_(xla_cache=self.xla_cache), self.b.with_(xla_cache=self.xla_cache)
        if self.val_set:  # every arm validates on the examples the first run that validated read
            self.a, self.b = self.a.with_(val_set=self.val_set), self.b.with_(val_set=self.val_set)
        self._stopped = False
        self._asked: float | None = None  # when next_run() first offered the run not yet recorded
        self.unpaired = False  # a paired process failed before training (`_pairing_failed`): separate ones since

    # -- planning -------------------------------------------------------------------------------

    def _batch(self, arm: str) -> int | None:
        settings = self.a if arm == A else self.b
        if settings.batch_size:
            return settings.batch_size
        for r in self.runs:
            if r.planned.arm == arm and r.summary and r.summary.settings:
                b = r.summary.settings.batch_size
                if b is not None and b > 0:
                    return b
        return None

    def full_settings(self, arm: str) -> RunSettings:
        """The settings of `arm`'s full-length run: B on as many samples as the runs its accuracy is judged
        against, at the same validation points where whole steps allow (`equal_samples`); A moved to points
        B can meet only when A's own runs are that reference and its first run has not been planned yet
        (`aligned_reference`)."""
        a_batch, b_batch = self._batch(A), self._batch(B)
        if not (a_batch and b_batch):
            return self.a if arm == A else self.b.with_(steps=self.a.steps, val_every=self.a.effective_val_every())
        if arm == A:
            first = next((r for r in self.runs if r.planned.arm == A and r.planned.replicate == 1), None)
            if first is not None:  # what it ran with
                return self.a.with_(steps=first.planned.settings.steps, val_every=first.planned.settings.val_every)
            own = self.accuracy_reference is None  # A's runs are what B is judged against
            return aligned_reference(self.a, a_batch, b_batch) if own else self.a
        external = self._reference_run_settings()
        if external is not None and isinstance(external.batch_size, int) and external.batch_size > 0:
            return equal_samples(external, self.b, external.batch_size, b_batch)
        return equal_samples(self.full_settings(A), self.b, a_batch, b_batch)

    def _reference_run_settings(self) -> RunSettings | None:
        """The settings of the run B's accuracy is judged against when it is not A's own (the ladder's
        baseline, as its summary recorded them); None when A's runs are the reference."""
        for summary, _ in self.accuracy_reference or []:
            if summary is not None and summary.settings is not None:
                return summary.settings
        return None

    @property
    def paired(self) -> bool:
        """The speed pairs are paired replicates, both arms in one process (`PlannedPair`), and only they count
        for speed: the full-length runs before them are the accuracy gate's."""
        return speed_in_paired_processes(self.share_process, self.rule, self.a, self.b, self.accelerator)

    def gate_arms(self) -> tuple[str, ...]:
        """The arms with a full-length run (replicate 1), in the order they run. A paired trial whose accuracy is
        judged against runs of its own (`accuracy_reference`: the ladder's baseline run) trains only B the full
        length: A's full-length run would be neither the gate's reference nor a speed pair. Else both, B first
        where it can (`_order`)."""
        if self.paired and self.accuracy_reference is not None:
            return (B,)
        return (B, A) if self._b_first() else (A, B)

    def _b_first(self) -> bool:
        """B's full-length run before A's, so a candidate that fails — in its script, in fit(), in validation —
        costs its own seconds, not A's whole run first (a ViT's B failed in 4.2 s after 25.5 s of A). Not when B's
        run is sized on a batch size of A's that only A's run can tell (A at the workload's default batch, B at
        another): B trains A's samples at equal points (`equal_samples`)."""
        return self.b_first and (bool(self.a.batch_size) or self.a.batch_size == self.b.batch_size)

    def reused_run(self, arm: str = A) -> FinishedRun | None:
        """The study's run that `arm`'s full-length run re-uses (`finished`), None when it trains its own. Only A's:
        the reference configuration, which a ladder trial would otherwise train again as its baseline's or its
        kept rung's own run already did; B's full-length run is its rung's own. Once A's full-length run is
        recorded, what it was."""
        if arm != A or A not in self.gate_arms():
            return None
        first = next((r for r in self.runs if r.planned.arm == A and r.planned.replicate == 1), None)
        if first is not None:
            return FinishedRun(first.planned.name, first.summary or RunSummary(), first.run_dir) if first.reused else None
        if not self.finished:
            return None
        found = self.finished.get(training_key(self.full_settings(A), self._batch(A)))
        if found is not None and self.accuracy_reference is None and \
                found.summary.settings is not None and found.summary.settings.paired_from:
            return None  # A's runs are the gate's reference here: one with per-example results at every point
        return found if found is not None and self._reuse_pays(found) else None

    def _reuse_pays(self, found: FinishedRun) -> bool:
        """Whether taking `found` saves time. In a paired trial always (its full-length runs count for no speed
        ratio anyway). Else taking it costs one more speed pair (a ratio against a run trained minutes before
        does not count): worth it where the run took longer than that pair's two speed-only runs, each
        estimated from it as its time before fit() (start-up, build), its warm-up and `rule.steady_s` (a run
        that reported no time: taken). Never with full-length pairs (`rule.steady_s` 0): the extra pair would
        be as long as the run it saves."""
        if self.paired:
            return True
        if not self.rule.steady_s:
            return False
        s = found.summary
        total = _process_s_of(s)
        if not total:
            return True
        fit, warm = s.wall_s or 0.0, s.warmup_s or 0.0
        one = max(0.0, total - fit) + max(0.0, warm) + self.rule.steady_s
        return total > 2 * one

    def gate_from(self) -> int | None:
        """The first step of B's full-length run at which the accuracy gate will compare it (`compared_points`
        with the run it is judged against: the external reference's, else A's full-length run), so its
        per-example results are kept from there on only (`RunSettings.paired_from`); None when that is its
        first validation point or nothing tells yet (a batch size not known). Keras' validation, the curve the
        plots show, still runs at every point."""
        external, b_batch = self._reference_run_settings(), self._batch(B)
        ref, ref_batch = (external, external.batch_size) if external is not None and external.batch_size else \
            (self.full_settings(A), self._batch(A))
        if not (b_batch and ref_batch):
            return None
        b = self.full_settings(B)
        compared = compared_points(ref, ref_batch, b, b_batch)
        if not compared:
            return None
        first = min(sb for _, sb in compared) // b_batch
        return first if first > min(b.effective_val_every(), b.steps) else None

    def _configuration(self, arm: str) -> tuple[str, ...]:
        return configuration_key(self.a if arm == A else self.b, self._batch(arm))

    def profiled_in(self) -> dict[str, str]:
        """Arm -> the run that holds its configuration's profile: its own full-length run where that one had the
        profiler window, else the study's earlier run of the configuration (`profiled`; a re-used run is found
        there too); an arm with neither is left out. What every front end reads an arm's profile from (the
        design record's `profiled_in`), so a profile taken once is found wherever it is shown."""
        found: dict[str, str] = {}
        for arm in (A, B):
            first = next((r for r in self.runs if r.planned.arm == arm and r.planned.replicate == 1), None)
            if first is not None and not first.reused and first.planned.settings.profile != NO_PROFILE:
                found[arm] = first.planned.name
            elif (earlier := self._profiled_run(arm)):
                found[arm] = earlier
        return found

    def _profiled_run(self, arm: str) -> str:
        """The run holding a profile of `arm`'s configuration: the study's (`profiled`), else one of this trial's own
        runs with the profiler window (an A/A′ trial's arms are one configuration: B's profile is A's); ""."""
        key = self._configuration(arm)
        return self.profiled.get(key) or next(
            (r.planned.name for r in self.runs if not r.reused and r.planned.settings.profile != NO_PROFILE
             and self._configuration(r.planned.arm) == key), "")

    @property
    def first_speed_replicate(self) -> int:
        """The first replicate whose ratio counts for speed: 2 for a paired trial (its speed pairs share a
        process; a ratio of two separate full-length runs was the outlier that kept trials going) and where A's
        full-length run is re-used (trained minutes before B's: its ratio would carry the machine's drift in
        between), else 1."""
        return 2 if self.paired or self.reused_run() is not None else 1

    def speed_pair_number(self, replicate: int) -> int:
        """The speed pair a replicate is (1-based; 0: a full-length run of the gate that is no speed pair)."""
        return max(0, replicate - self.first_speed_replicate + 1)

    def _slot(self, index: int) -> tuple[int, str]:
        """(replicate, arm) of the trial's `index`-th run: the gate's full-length runs, then the pairs, each
        in its AB/BA order."""
        gate = self.gate_arms()
        if index < len(gate):
            return 1, gate[index]
        extra = self.seed_runs()
        if index < len(gate) + extra:  # the reference from another seed: replicates 0, -1, ...
            return len(gate) - index, A
        k = index - len(gate) - extra
        replicate = k // 2 + 2
        return replicate, self._order(replicate)[k % 2]

    def _runs_through(self, speed_pairs: int) -> int:
        """How many runs the trial has made once `speed_pairs` speed pairs are complete."""
        return 2 * speed_pairs + (len(self.gate_arms()) if self.first_speed_replicate > 1 else 0) + self.seed_runs()

    def seed_runs(self) -> int:
        """How many trainings of the reference from other seeds the trial makes (`seed_replicates`): none once the
        gate's runs show B's change did not take effect, B's run failed or validated nothing per example (or, for
        a model trained without labels, per batch: `label_free.gate_file`), and
        none when the accuracy reference already holds runs of two seeds."""
        wanted = max(0, self.seed_replicates + 1 - len(self._reference_seeds())) if self._reference_seeds() else \
            self.seed_replicates
        if not wanted:
            return 0
        gate = self.gate_arms()
        if len(self.runs) < len(gate):
            return wanted  # planned, until the gate's runs say otherwise
        first_b = next((r for r in self.runs if r.planned.arm == B), None)
        if first_b is None or first_b.status != COMPLETED or self.change_missing():
            return 0
        return wanted if label_free.gate_file(first_b.summary) else 0

    def _reference_seeds(self) -> set[int]:
        """The seeds of the external accuracy reference's runs (empty for a trial judged against its own A)."""
        return {summary.settings.seed for summary, _ in self.accuracy_reference or []
                if summary is not None and summary.settings is not None}

    def noise_seed(self, j: int) -> int:
        """The seed of the `j`-th (1-based) training of the reference from another seed: 1000 × j after the
        reference's own, past any seed either arm trains from (B's `seed=` in an A/A′ trial)."""
        ref = self._reference_run_settings()
        own = ref.seed if ref is not None else self.a.seed
        taken = {own, self.a.seed, self.b.seed} | self._reference_seeds()
        seed, k = own, 0
        while k < j:
            seed += 1000
            k += seed not in taken
        return seed

    def seed_settings(self, replicate: int) -> RunSettings:
        """The settings of the reference trained from another seed (replicate 0, -1, ...): the accuracy
        reference's configuration (the external run's recorded settings, else A's full-length run's) at the
        same length and validation points, from `noise_seed`."""
        ref = self._reference_run_settings()
        if ref is None:
            base = self.full_settings(A)
        else:
            base = trial_settings(ref).with_(speed_only=False)
            if self.xla_cache:
                base = base.with_(xla_cache=self.xla_cache)
            if self.val_set:
                base = base.with_(val_set=self.val_set)
        return base.with_(seed=self.noise_seed(1 - replicate), no_model=True)

    def speed_steps_of(self, arm: str) -> int | None:
        """Steps of `arm`'s speed-only runs, calibrated on its completed runs so far (None: nothing to size from);
        in a paired replicate a cap (`PAIRED_STEPS_CAP`): the process ends each arm at its steady seconds."""
        if not self.rule.steady_s:
            return None
        done = [r.summary for r in self.runs if r.planned.arm == arm and r.status == COMPLETED and r.summary]
        if not done and arm == A:  # A's configuration measured before, else B's runs stand in (a cap, not a target)
            done = list(self.a_history) or \
                [r.summary for r in self.runs if r.planned.arm == B and r.status == COMPLETED and r.summary]
        settings = self.a if arm == A else self.b
        if self.paired:
            target = self.paired_steady_s()
            return speed_steps(done, PAIRED_STEPS_CAP * target, settings.calls) if target else None
        return speed_steps(done, self.rule.steady_s, settings.calls)

    def paired_steady_s(self) -> float | None:
        """Steady seconds each arm of a paired replicate aims at: at least `rule.steady_s`, and the process's own
        overhead times STEADY_PER_OVERHEAD split between the arms (None: no overhead measured yet).

        The overhead is the longest of the paired processes' own (their time
        less their steady windows) once one was measured, else what the first pair's
        separate runs spent outside steady windows and validation — two
        start-ups where a paired process has one, so the first paired
        replicate errs towards measuring longer. A process's time is what its
        runs report (`process_s`, else their fit() time `wall_s`), never the
        front end's clock: every front end sizes the same pairs from the same
        summaries.
        """
        overhead = self.paired_overhead_s()
        if overhead is None:
            return None
        return max(self.rule.steady_s, STEADY_PER_OVERHEAD * overhead / 2)

    def paired_overhead_s(self) -> float | None:
        """Seconds a paired replicate process spends outside its steady windows (see `paired_steady_s`).

        Before any paired process ran, from the gate's full-length runs: what each spent before it measured —
        its time to fit() (start, the script up to its fit(), build) and its warm-up — which a paired process
        pays once per arm. Not what such a run spends after training (its saved model, its profile read: 5 of
        a script's 23 s) nor in its profiler window: a speed-only arm does neither, and counting them made the
        first paired process measure 17 s per arm where the later ones, sized on their own overhead, took 6 s.
        """
        processes = [(ra, rb) for ra, rb in self.pairs() if ra and rb and ra.paired and rb.paired
                     and ra.status == COMPLETED and rb.status == COMPLETED]
        if processes:
            # the longest seen (as for warm-up): on a machine whose load changes, one trial's successive paired
            # processes spent 18, 30 and 41 s outside their windows, and a median lagged behind
            return max(0.0, max(max(_process_s(ra), _process_s(rb)) - _steady_s(ra) - _steady_s(rb)
                                for ra, rb in processes))
        first = [r for r in self.runs if r.planned.replicate == 1 and r.status == COMPLETED]
        if len(first) < len(self.gate_arms()):
            return None
        # two processes' worth (two arms' builds and warm-ups), from B's alone when only B trained the full length
        return sum(_before_measuring_s(r) for r in first) * 2 / len(first)

    def settings_of(self, arm: str, replicate: int = 1) -> RunSettings:
        """The settings of `arm`'s run in pair `replicate`: the first pair full length with validation, the
        others speed only, as long as the arm's calibration says (see the module's docstring)."""
        if replicate < 1:
            return self.seed_settings(replicate)
        full = self.full_settings(arm)
        steps = self.speed_steps_of(arm) if replicate > 1 else None
        if steps is None:
            return full
        return full.with_(steps=steps, val_every=steps, speed_only=True)

    def plan(self) -> TrialPlan:
        """What this trial will measure: pairs min..max, the runs' lengths, the steady seconds each aims at."""
        paired = self.paired
        sized = self.paired_steady_s() if paired else None
        seeds = self.seed_runs()
        return TrialPlan(self.rule.min_pairs, self.rule.max_pairs, sized or self.rule.steady_s,
                         (self.full_settings(A).steps, self.full_settings(B).steps),
                         (None, None) if paired else (self.speed_steps_of(A), self.speed_steps_of(B)), paired,
                         sized is not None, (self._batch(A), self._batch(B)), self.gate_arms(), self.planned_gate(),
                         (found.name if (found := self.reused_run()) is not None else ""), seeds,
                         tuple(self.noise_seed(j) for j in range(1, seeds + 1)), self.reference_words())

    def reference_words(self) -> str:
        """What the accuracy reference is called in words: `label_reference`, else A's label when A's own runs
        are the reference, else "the accuracy reference"."""
        return self.label_reference or (self.label_a if self.accuracy_reference is None else
                                        "the accuracy reference")

    def planned_gate(self) -> str:
        """Which accuracy gate will judge this trial, from the runs of this workload measured so far (its
        accuracy reference, A's history, its own runs): `accuracy.planned_gate`."""
        known = [s for s, _ in self.accuracy_reference or [] if s is not None] + list(self.a_history) + [
            r.summary for r in self.runs if r.summary]
        return accuracy.planned_gate(known, self.tolerance)

    def estimate_remaining_s(self) -> tuple[float, float] | None:
        """(at least, at most) seconds of runs left: to the fewest pairs the rule allows (at least the pair under
        way), and to its maximum.

        None while nothing of the trial is measured to estimate from (before
        its full-length runs ended) and once the trial is decided, (0, 0).
        Each run still to come is estimated from what the trial measured,
        process start, warm-up and validation included: a paired process as
        the overhead its trial's processes showed plus its arms' steady
        seconds; a separate speed-only run as its arm's runs so far.
        """
        if self.next_run() is None:
            return (0.0, 0.0)
        done = len(self.runs)
        if done < len(self.gate_arms()):
            return None
        estimates: dict[tuple[int, str], float] = {(1, A): 0.0} if self.reused_run() is not None else {}
        def left(pairs: int) -> float | None:
            total = 0.0
            for k in range(done, self._runs_through(pairs)):
                replicate, arm = self._slot(k)
                if (replicate, arm) not in estimates:
                    one = self._slot_estimate(replicate, arm)
                    if one is None:
                        return None
                    estimates[replicate, arm] = one
                total += estimates[replicate, arm]
            return total
        under_way = self.speed_pair_number(self._slot(done)[0])  # the pair begun counts
        low, high = left(max(self.rule.min_pairs, under_way)), left(self.rule.max_pairs)
        return (low, high) if low is not None and high is not None else None

    def progress_text(self) -> str:
        """Where the trial stands, for a log line or a page: "pair 2 of 3–6 · about 1 min 40 s left (at most
        3 min 10 s)", or "full-length run for the accuracy gate (then 3–6 speed pairs)" while the gate's runs
        go; once decided ""."""
        planned = self.next_run()
        if planned is None:
            return ""
        rule = self.rule
        span = f"{rule.min_pairs}–{rule.max_pairs}" if rule.max_pairs > rule.min_pairs else str(rule.min_pairs)
        number = self.speed_pair_number(planned.replicate)
        if isinstance(planned, PlannedRun) and planned.replicate < 1:
            text = (f"the accuracy reference trained again from another seed (seed {planned.settings.seed}), for "
                    f"the trainings' noise (then {span} speed pairs)")
        elif number:
            text = f"pair {number} of {span}"
        else:
            gate = self.gate_arms()
            first = planned.first if isinstance(planned, PlannedPair) else planned
            which = f" {gate.index(first.arm) + 1} of {len(gate)}" if len(gate) > 1 and self.reused_run() is None \
                else ""
            words = self.planned_gate()
            seeds = self.seed_runs()
            then = (f"{counted(seeds, 'training')} from other seeds and " if seeds else "") + f"{span} speed pairs"
            text = (f"full-length run{which} (then {then}; accuracy gate: {words})"
                    if words == accuracy.NO_VALIDATION else
                    f"full-length run{which} for the accuracy gate (then {then}"
                    + (f"; {words}" if words else "") + ")")
        if isinstance(planned, PlannedPair):
            text += f": {self.label_a} and {self.label_b} in one process"
        left = self.estimate_remaining_s()
        if left is not None:
            low, high = left
            text += f" · about {duration_text(low)} left"
            if high > low * 1.1 + 5:
                text += f" (at most {duration_text(high)})"
        return text

    def _slot_estimate(self, replicate: int, arm: str) -> float | None:
        """Seconds of the run in `replicate` of `arm` (a paired process: half of it), from what was measured."""
        if replicate < 1:  # the reference from another seed: as long as the gate's full-length runs
            full = [r.elapsed_s for r in self.runs if r.planned.replicate == 1 and r.elapsed_s]
            return sorted(full)[len(full) // 2] if full else None
        if replicate >= 2 and self.paired:  # half a paired process: half its overhead, and its own steady seconds
            overhead = self.paired_overhead_s()
            return overhead / 2 + (self.paired_steady_s() or 0.0) if overhead is not None else None
        return self._run_estimate(arm)

    def _run_estimate(self, arm: str) -> float | None:
        runs = [r for r in self.runs if r.planned.arm == arm and r.elapsed_s]
        if not runs:
            return None
        speed = [r for r in runs if r.planned.settings.speed_only]
        if speed:
            return sorted(r.elapsed_s or 0.0 for r in speed)[len(speed) // 2]
        if not self.rule.steady_s:
            return runs[-1].elapsed_s
        last = runs[-1]
        overhead = max(0.0, (last.elapsed_s or 0.0) - _steady_s(last) - self._validation_s(last))
        return overhead + self.rule.steady_s

    @staticmethod
    def _validation_s(run: MeasuredRun) -> float:
        """What a full-length run spent outside its steps: its fit() wall time less warm-up and windows."""
        s = run.summary or RunSummary()
        wall, warm = s.wall_s or 0.0, s.warmup_s or 0.0
        windows = s.windows or []
        in_windows = sum(float(w[2]) for w in windows if isinstance(w, (list, tuple)) and len(w) == 3)
        return max(0.0, wall - max(warm, 0.0) - in_windows) if windows else 0.0

    def _order(self, replicate: int) -> tuple[str, str]:
        """The arms of `replicate` in the order they run, alternating so the process order falls on both arms
        alike: from the gate's order where the first pair counts for speed, else AB, BA, … from pair 2 on."""
        if self.paired:  # the speed pairs, from 2 on (the gate's full-length runs count for no ratio)
            return (A, B) if replicate % 2 == 1 else (B, A)
        first = self.gate_arms()  # the first pair counts for speed: alternate from its order
        return (first[0], first[1]) if replicate % 2 == 1 else (first[1], first[0])

    def pairs(self) -> list[tuple[MeasuredRun | None, MeasuredRun | None]]:
        """(A run, B run) of each replicate so far, in order (a gate's B-only replicate: (None, B))."""
        return [pair for _, pair in self._replicates()]

    def speed_pairs(self) -> list[tuple[MeasuredRun | None, MeasuredRun | None]]:
        """(A run, B run) of each replicate whose ratio counts for speed (`first_speed_replicate` on)."""
        return [pair for k, pair in self._replicates() if k >= self.first_speed_replicate]

    def _replicates(self) -> list[tuple[int, tuple[MeasuredRun | None, MeasuredRun | None]]]:
        out: dict[int, list[MeasuredRun | None]] = {}
        for r in self.runs:
            slot = out.setdefault(r.planned.replicate, [None, None])
            slot[0 if r.planned.arm == A else 1] = r
        return [(k, tuple(out[k])) for k in sorted(out)]  # type: ignore[misc]

    def next_run(self) -> Planned | None:
        """The next run to measure — a `PlannedPair` for a paired replicate (the speed pairs when `paired`) — or
        None when the trial is decided."""
        if self._stopped or self._decided():
            return None
        done = len(self.runs)
        replicate, arm = self._slot(done)
        found = self.reused_run(arm) if replicate == 1 else None
        if found is not None:  # taken, not planned: the next run is the one after it
            self._take(arm, found)
            return self.next_run()
        if self._asked is None:
            self._asked = time.monotonic()
        settings = self.settings_of(arm, replicate)
        if replicate == PROFILED_REPLICATE and not self._profiled_run(arm):
            settings = settings.with_(profile=None)  # the default window, after warm-up (its steps in no window)
        if arm == A or not self.save_model:  # A's model is its own rung's run's (the baseline's, the kept one's)
            settings = settings.with_(no_model=True)
        if arm == B and replicate == 1 and not settings.speed_only:
            settings = settings.with_(paired_from=self.gate_from())
        planned = PlannedRun(arm, replicate, settings, self.names(arm, replicate))
        first_of_pair = replicate > 1 and (done == 0 or self._slot(done - 1)[0] != replicate)
        if first_of_pair and self.paired and settings.speed_only:
            other = self._order(replicate)[1]
            second = PlannedRun(other, replicate, self.settings_of(other, replicate), self.names(other, replicate))
            if second.settings.speed_only:
                return PlannedPair(planned, second, self.paired_steady_s() or self.rule.steady_s)
        return planned

    def _take(self, arm: str, found: FinishedRun) -> None:
        """Record the study's run `found` as `arm`'s full-length run, measured before this trial (its process time
        stands for the run's in the estimates; it adds nothing to the trial's own seconds)."""
        planned = PlannedRun(arm, 1, self.full_settings(arm).with_(no_model=True), found.name)
        self.runs.append(MeasuredRun(planned, found.summary, found.run_dir, _process_s_of(found.summary) or None,
                                     reused=True))

    def record(self, planned: Planned, summary: Any, run_dir: Any) -> None:
        """Take a run's summary and run directory; for a `PlannedPair`, a sequence of two of each, in
        `planned.runs` order (a missing summary: None). A summary is a `RunSummary` or the document as the
        backend wrote it (`RunSummary.from_dict` reads it)."""
        now = time.monotonic()
        if self.started is None:
            self.started = now
        elapsed = now - self._asked if self._asked is not None else None
        self._asked = None
        if isinstance(planned, PlannedPair):
            if self._pairing_failed([as_summary(one) for one in summary]):
                self.share_process = False  # the arms' own processes from now on (`unpaired`)
                self.unpaired = True
                return
            half = elapsed / 2 if elapsed is not None else None
            for run, one, folder in zip(planned.runs, summary, run_dir):
                self.runs.append(MeasuredRun(run, as_summary(one), Path(folder) if folder is not None else None,
                                             half, True))
            return
        self.runs.append(MeasuredRun(planned, as_summary(summary), Path(run_dir) if run_dir is not None else None,
                                     elapsed))

    @staticmethod
    def _pairing_failed(summaries: list[RunSummary | None]) -> bool:
        """A paired process that failed before either arm trained a step (not stopped on request): what the
        pairing itself caused — each arm trained in its own process before (B's gate run, A's runs), and what a
        paired process adds is the other arm's build in the same process (a training script run a second time
        that refuses to, both arms' memory). Its runs are not recorded; the trial measures on in separate
        processes (`unpaired`), as where the arms cannot share one, so a failure of the pairing is never B's."""
        if any(s is not None and (s.steps_completed or 0) > 0 for s in summaries):
            return False
        return any(s is None or s.status in (protocol.RunStatus.FAILED, protocol.RunStatus.CRASHED)
                   for s in summaries)

    def reference_run(self) -> PlannedRun:
        """A's full-length run planned on its own, outside the trial's order: what tells a broken workload (the
        workload rejects A too) from a candidate that cannot run, when B's run was rejected before A ran."""
        return PlannedRun(A, 1, self.settings_of(A, 1).with_(no_model=True), self.names(A, 1))

    def stop(self) -> None:
        """No more runs (the user stopped): the verdict uses the complete pairs measured so far."""
        self._stopped = True

    def resume(self) -> None:
        """Go on after `stop()` (the wizard's "run 1 more pair"): the next runs follow the complete pairs."""
        self._stopped = False

    def change_missing(self) -> str:
        """Why B's change did not take effect, from B's first run ("" when it did, or nothing can tell yet)."""
        first_b = next((r for r in self.runs if r.planned.arm == B), None)
        if self.not_in_effect is None or first_b is None or first_b.status != COMPLETED:
            return ""
        return self.not_in_effect(first_b.summary or RunSummary()) or ""

    def _decided(self) -> bool:
        if self.change_missing():  # B trained as A: no pair can measure a change
            return True
        done = len(self.runs)
        if done and self._slot(done)[0] == self.runs[-1].planned.replicate:  # a replicate under way
            return self.runs[-1].status != COMPLETED  # a failed run ends the trial; its pair is never completed
        if any(r.status != COMPLETED for r in self.runs if r.planned.replicate >= 1):  # a seed run's failure only
            return True  # leaves the trainings' noise unmeasured
        pairs = sum(1 for ra, rb in self.speed_pairs() if ra is not None and rb is not None)
        if pairs >= self.rule.max_pairs:  # whatever the runs measured: a trial never runs past its maximum
            return True
        ratios, errors = self._ratios()
        if len(ratios) + self.rule.max_pairs - pairs < self.rule.min_pairs:
            return True  # the pairs left cannot make up the measured pairs the verdict needs
        over_budget = (self.budget_s is not None and self.started is not None
                       and time.monotonic() - self.started > self.budget_s)
        if over_budget and len(ratios) >= 2:
            return True
        return self.rule.clear(ratios, errors)

    def _rates(self) -> tuple[list[float | None], list[float | None], list[float | None], list[float | None]]:
        """Each complete pair's A and B throughput, its B/A ratio (`rule.pair_ratio`) and that ratio's own error
        (`rule.pair_error`); None for a run that measured too little (`rule.rate`) and for the ratio of its pair."""
        a_rates, b_rates, ratios, errors = [], [], [], []
        for ra, rb in self.speed_pairs():
            if ra is not None and rb is not None and ra.status == COMPLETED and rb.status == COMPLETED:
                a_rates.append(self._rate(ra))
                b_rates.append(self._rate(rb))
                ratios.append(self.rule.pair_ratio(a_rates[-1], b_rates[-1], rb.summary))
                errors.append(self.rule.pair_error(rb.summary))
        return a_rates, b_rates, ratios, errors

    def _rate(self, run: MeasuredRun) -> float | None:
        """The run's throughput by `rule.rate`, or None when the backend ran it with another steps_per_execution
        than planned (`whole_calls` lowers it where a call would span a validation point, e.g. B's full-length
        run validating every 15 steps with 4 per call): that rate is another configuration's, not the arm's."""
        ran = run.summary.settings.steps_per_execution if run.summary and run.summary.settings else None
        planned = run.planned.settings.steps_per_execution  # None: as the script wrote it, whatever it is
        if ran is not None and planned is not None and ran != planned:
            return None
        return self.rule.rate(run.summary)

    def shortfall(self) -> str:
        """What would be enough measurement, when the pairs so far are not: "" when they are."""
        ratios, _ = self._ratios()
        if len(ratios) >= self.rule.min_pairs:
            return ""
        short = [(r, why) for r in self.runs if r.status == COMPLETED and self.speed_pair_number(r.planned.replicate)
                 and (why := self.rule.shortfall(r.summary)) is not None]
        if short:
            run, why = short[-1]
            arm = run.planned.arm
            steps = self.speed_steps_of(arm)
            longer = f" (about {steps} steps of {self.label_a if arm == A else self.label_b})" if steps else ""
            return (f"{counted(len(short), 'replicate run')} measured too little steady state — "
                    f"{run.planned.name}: {why}; each needs {self.rule.needs_text()}: longer runs{longer}, "
                    f"or more pairs (at most {self.rule.max_pairs})")
        was = "was" if len(ratios) == 1 else "were"
        return (f"{len(ratios)} of the {self.rule.min_pairs} replicate pairs the verdict needs {was} measured: "
                f"run {counted(self.rule.min_pairs - len(ratios), 'more pair')}")

    def _ratios(self) -> tuple[list[float], list[float | None]]:
        """The measured pairs' ratios and their own errors (`_rates`), the pairs that measured too little left out."""
        _, _, ratios, errors = self._rates()
        return [r for r in ratios if r], [e for r, e in zip(ratios, errors) if r]

    # -- judging --------------------------------------------------------------------------------

    def verdict(self) -> TrialVerdict:
        missing = self.change_missing()
        a_rates, b_rates, ratios, errors = self._rates()
        speed = (SpeedVerdict(math.nan, (math.nan, math.nan), NOT_APPLIED, 0, note=missing) if missing else
                 self.rule.verdict(a_rates, b_rates, needed=self.shortfall(), pair_ratios=ratios, pair_errors=errors))
        b_runs = [r for r in self.runs if r.planned.arm == B]
        a_runs = [r for r in self.runs if r.planned.arm == A]
        validated = [(r.summary, r.run_dir) for r in b_runs  # speed-only runs do not validate
                     if r.status == COMPLETED and not r.planned.settings.speed_only]
        seeds = [(r.summary, r.run_dir) for r in a_runs if r.planned.replicate < 1 and r.status == COMPLETED]
        reference = [*self.accuracy_reference, *seeds] if self.accuracy_reference is not None else \
            [(r.summary, r.run_dir) for r in a_runs if r.status == COMPLETED and not r.planned.settings.speed_only]
        acc = not_judged(missing) if missing else label_free.compare_runs(reference, validated, self.tolerance)

        failed_a = next((r for r in a_runs if r.status != COMPLETED and r.planned.replicate >= 1), None)
        status = next((r.status for r in b_runs if r.status != COMPLETED), COMPLETED if b_runs else "crashed")
        b_done = [r.summary for r in b_runs if r.summary is not None]
        findings = [f for s in b_done for f in s.findings or []]
        xla_active = all(r.summary is None or r.summary.xla_active is not False for r in b_runs if r.status == COMPLETED)
        error = next((r.summary.error if r.summary else None for r in b_runs if r.status != COMPLETED), None)
        outputs = next((s.output_dtypes for s in b_done if s.output_dtypes), None)
        kept, reason, found = keep(speed, acc, status, findings, self.label_b, self.label_a,
                                   xla_requested=bool(self.b.jit_compile and not self.a.jit_compile),
                                   xla_active=xla_active, error=error,
                                   change=Change(self._reference_run_settings() or self.a, self.settings_of(B), outputs))
        if failed_a is not None and status == COMPLETED:
            kept = False
            reason = f"the reference run ({self.label_a}) ended as {failed_a.status}, so nothing was compared"
        design = self.design_record(speed.replicates, acc)
        return TrialVerdict(speed, acc, kept, reason, found, status, design.words(acc),
                            error=error, rule=self.tolerance, way_forward=self.way_forward,
                            steady_s=design.steady_s_measured, design_record=design)

    def design(self, pairs: int, acc: AccuracyVerdict | None = None) -> str:
        """How this trial measured, in words, for the report and the wizard (`acc`: the accuracy verdict, whose
        points compared the words give exactly)."""
        return self.design_record(pairs, acc).words(acc)

    def design_record(self, pairs: int, acc: AccuracyVerdict | None = None) -> Design:
        """How this trial measured, as data (study.yaml's `design_record`; `trials.design` words it)."""
        measure = PAIRED if self.paired else SPEED_ONLY if self.rule.steady_s and any(
            r.planned.settings.speed_only for r in self.runs) else FULL
        paired_accuracy = acc is not None and acc.paired and bool(acc.examples)
        ref = self._reference_run_settings()
        seeds = sorted({r.planned.settings.seed for r in self.runs if r.planned.replicate < 1} |
                       (self._reference_seeds() - {ref.seed if ref is not None else self.a.seed})) \
            if paired_accuracy else []
        found = self.reused_run()
        return Design(pairs, measure, self.gate_arms(),
                      Lengths(self.full_settings(A).steps, self.full_settings(B).steps, self._batch(A), self._batch(B)),
                      self.rule.steady_s, self.measured_paired_steady_s(), self.rule.confidence,
                      len(acc.samples_seen) if acc is not None and paired_accuracy else 0, tuple(seeds),
                      found.name if found is not None else "",
                      sum(1 for r in self.runs if r.planned.replicate < 1) if paired_accuracy else 0,
                      self.profiled_in())

    def measured_paired_steady_s(self) -> float | None:
        """The steady seconds each arm measured per paired process (the median run's; `design` words it, the
        verdict records it as a number), None when no pair shared a process."""
        paired = sorted(_steady_s(r) for r in self.runs if r.paired)
        return paired[len(paired) // 2] if paired else None

    def measured_seconds(self) -> float:
        """The wall time of the runs this trial measured (a re-used run's was its own rung's)."""
        return sum((r.summary.wall_s if r.summary else None) or 0.0 for r in self.runs if not r.reused)

    def own_runs(self) -> list[MeasuredRun]:
        """The runs this trial measured itself, not the study's runs it re-used (`reused_run`)."""
        return [r for r in self.runs if not r.reused]


def not_judged(why: str) -> AccuracyVerdict:
    """The accuracy verdict of a trial whose change did not take effect: B trained A's configuration, so any
    difference is the trainings' noise, never the change's; nothing is judged (`checked` False)."""
    return AccuracyVerdict(None, None, None, NOT_MEASURED, 0, False, checked=False,
                           explanation=f"not judged: the change did not take effect ({why})")


def _steady_s(run: MeasuredRun) -> float:
    """The steady-window seconds a run measured."""
    return float(((run.summary.throughput if run.summary else None) or {}).get("seconds") or 0.0)


def _process_s(run: MeasuredRun) -> float:
    """The run's process time as it reported it (`process_s`), else its fit() time (a run from before)."""
    return _process_s_of(run.summary)


def _before_measuring_s(run: MeasuredRun) -> float:
    """What a run spent before its steady state: its process's time to fit() and its warm-up (`fit_start_s`,
    `warmup_s`); from a run that did not record when its fit() began, its time outside steady windows and
    validation (the profiler window and the saving after training included, so it errs longer)."""
    s = run.summary or RunSummary()
    if s.fit_start_s is not None and s.warmup_s is not None:
        return max(0.0, s.fit_start_s) + max(0.0, s.warmup_s)
    return max(0.0, _process_s(run) - _steady_s(run) - Trial._validation_s(run))


def _process_s_of(summary: RunSummary | None) -> float:
    if summary is None:
        return 0.0
    value = summary.process_s if summary.process_s is not None else summary.wall_s
    return float(value) if value is not None else 0.0


def as_summary(summary: RunSummary | dict[str, Any] | None) -> RunSummary | None:
    """A recorded run's summary as the class: a `RunSummary` as given, the backend's document read into one."""
    return RunSummary.from_dict(summary) if isinstance(summary, dict) else summary


Executor = Callable[[PlannedRun], tuple[RunSummary | None, Path | None]]
PairExecutor = Callable[[PlannedPair], tuple[list[RunSummary | None], list[Path | None]]]


def run_trial(trial: Trial, execute: Executor, cancelled: Callable[[], bool] = lambda: False,
              execute_pair: PairExecutor | None = None) -> TrialVerdict:
    """Measure a trial to its end with a blocking `execute(planned) -> (summary, run_dir)`, and
    `execute_pair(pair) -> ([summaries], [run dirs])` for paired replicates; without it a pair's two runs are
    measured one after the other with `execute`, each in its own process."""
    while (planned := trial.next_run()) is not None:
        if cancelled():
            trial.stop()
            break
        if isinstance(planned, PlannedPair):
            if execute_pair is not None:
                summaries, run_dirs = execute_pair(planned)
            else:
                measured = [execute(run) for run in planned.runs]
                summaries, run_dirs = [m[0] for m in measured], [m[1] for m in measured]
            trial.record(planned, summaries, run_dirs)
        else:
            summary, run_dir = execute(planned)
            trial.record(planned, summary, run_dir)
        if cancelled():
            trial.stop()
    return trial.verdict()

