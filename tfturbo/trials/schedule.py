"""A trial's setup, its runs so far, and what they call for next: which arm and replicate each run is, how
long it trains, where it validates, which run it re-uses, where each configuration's profile is.

The plan and sizing of a trial (`trials.trial.Trial` is one, with the coordination on top): it reads the
runs recorded so far (`trials.runs`) and applies the length rules (`trials.sizing`); it never runs, records
or judges anything. See `trials.trial` for the design it follows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..run_summary import RunSummary
from ..settings import NO_PROFILE, RunSettings, configuration_key, training_key
from . import accuracy, label_free
from .plan import TrialPlan
from .runs import A, B, COMPLETED, FinishedRun, MeasuredRun, PlannedRun, before_measuring_s, default_names, process_s, process_s_of, steady_s
from .sizing import (PAIRED_STEPS_CAP, STEADY_PER_OVERHEAD, aligned_reference, compared_points, equal_samples,
                     speed_in_paired_processes, speed_steps, trial_settings)
from .speed import SpeedRule
from .verdict import Tolerance


@dataclass
class Schedule:
    """B against A, as set up and measured so far. `names(arm, replicate)` names the run directories.

    `budget_s`, `way_forward` and `started` are the judging's (`trials.judging`), kept here so that a trial's
    setup is one list of fields. `accuracy_reference`: (summary, run dir) pairs to judge B's accuracy
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
    # the way forward "train more seeds" (`trials.way_forward`): trainings of B and of the accuracy reference from
    # further seeds, this many of each, after the trial's own runs (its pairs decided): B's replicates 0, -1, ...
    # (NN-slug.b0), the reference's after its own seed runs. Each arm's mean then rests on several trainings, which
    # narrows an interval the trainings' noise dominates (`accuracy.TrainingNoise.scale`)
    more_seeds: int = 0
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

    def batch(self, arm: str) -> int | None:
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
        a_batch, b_batch = self.batch(A), self.batch(B)
        if not (a_batch and b_batch):
            return self.a if arm == A else self.b.with_(steps=self.a.steps, val_every=self.a.effective_val_every())
        if arm == A:
            first = next((r for r in self.runs if r.planned.arm == A and r.planned.replicate == 1), None)
            if first is not None:  # what it ran with
                return self.a.with_(steps=first.planned.settings.steps, val_every=first.planned.settings.val_every)
            own = self.accuracy_reference is None  # A's runs are what B is judged against
            return aligned_reference(self.a, a_batch, b_batch) if own else self.a
        external = self.reference_run_settings()
        if external is not None and isinstance(external.batch_size, int) and external.batch_size > 0:
            return equal_samples(external, self.b, external.batch_size, b_batch)
        return equal_samples(self.full_settings(A), self.b, a_batch, b_batch)

    def reference_run_settings(self) -> RunSettings | None:
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
        found = self.finished.get(training_key(self.full_settings(A), self.batch(A)))
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
        total = process_s_of(s)
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
        external, b_batch = self.reference_run_settings(), self.batch(B)
        ref, ref_batch = (external, external.batch_size) if external is not None and external.batch_size else \
            (self.full_settings(A), self.batch(A))
        if not (b_batch and ref_batch):
            return None
        b = self.full_settings(B)
        compared = compared_points(ref, ref_batch, b, b_batch)
        if not compared:
            return None
        first = min(sb for _, sb in compared) // b_batch
        return first if first > min(b.effective_val_every(), b.steps) else None

    def _configuration(self, arm: str) -> tuple[str, ...]:
        return configuration_key(self.a if arm == A else self.b, self.batch(arm))

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
            elif (earlier := self.profiled_run(arm)):
                found[arm] = earlier
        return found

    def profiled_run(self, arm: str) -> str:
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

    def slot(self, index: int) -> tuple[int, str]:
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
        return replicate, self.order(replicate)[k % 2]

    def runs_through(self, speed_pairs: int) -> int:
        """How many runs the trial has made once `speed_pairs` speed pairs are complete."""
        return 2 * speed_pairs + (len(self.gate_arms()) if self.first_speed_replicate > 1 else 0) + self.seed_runs()

    def seed_runs(self) -> int:
        """How many trainings of the reference from other seeds the trial makes (`seed_replicates`): none once the
        gate's runs show B's change did not take effect, B's run failed or validated nothing per example (or, for
        a model trained without labels, per batch: `label_free.gate_file`), and
        none when the accuracy reference already holds runs of two seeds."""
        wanted = max(0, self.seed_replicates + 1 - len(self.reference_seeds())) if self.reference_seeds() else \
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

    def reference_seeds(self) -> set[int]:
        """The seeds of the external accuracy reference's runs (empty for a trial judged against its own A)."""
        return {summary.settings.seed for summary, _ in self.accuracy_reference or []
                if summary is not None and summary.settings is not None}

    def noise_seed(self, j: int) -> int:
        """The seed of the `j`-th (1-based) training of the reference from another seed: 1000 × j after the
        reference's own, past any seed either arm trains from (B's `seed=` in an A/A′ trial)."""
        ref = self.reference_run_settings()
        own = ref.seed if ref is not None else self.a.seed
        taken = {own, self.a.seed, self.b.seed} | self.reference_seeds()
        seed, k = own, 0
        while k < j:
            seed += 1000
            k += seed not in taken
        return seed

    def seed_settings(self, replicate: int) -> RunSettings:
        """The settings of the reference trained from another seed (replicate 0, -1, ...): the accuracy
        reference's configuration (the external run's recorded settings, else A's full-length run's) at the
        same length and validation points, from `noise_seed`."""
        ref = self.reference_run_settings()
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
            return max(0.0, max(max(process_s(ra), process_s(rb)) - steady_s(ra) - steady_s(rb)
                                for ra, rb in processes))
        first = [r for r in self.runs if r.planned.replicate == 1 and r.status == COMPLETED]
        if len(first) < len(self.gate_arms()):
            return None
        # two processes' worth (two arms' builds and warm-ups), from B's alone when only B trained the full length
        return sum(before_measuring_s(r) for r in first) * 2 / len(first)

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
                         sized is not None, (self.batch(A), self.batch(B)), self.gate_arms(), self.planned_gate(),
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

    def order(self, replicate: int) -> tuple[str, str]:
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

    def complete_pairs(self) -> int:
        """The speed pairs with both arms measured (what "pair k" counts, and "run 1 more pair" adds to)."""
        return sum(1 for ra, rb in self.speed_pairs() if ra is not None and rb is not None)

    def _replicates(self) -> list[tuple[int, tuple[MeasuredRun | None, MeasuredRun | None]]]:
        out: dict[int, list[MeasuredRun | None]] = {}
        for r in self.runs:
            slot = out.setdefault(r.planned.replicate, [None, None])
            slot[0 if r.planned.arm == A else 1] = r
        return [(k, tuple(out[k])) for k in sorted(out)]  # type: ignore[misc]


    def more_seeds_measured(self) -> tuple[list[MeasuredRun], list[MeasuredRun]]:
        """(B's, the reference's) trainings of the way forward "train more seeds" measured so far."""
        return ([r for r in self.runs if r.planned.arm == B and r.planned.replicate < 1],
                [r for r in self.runs if r.planned.arm == A and r.planned.replicate < 1][self.seed_runs():])

    def more_seeds_run(self) -> PlannedRun | None:
        """The next training of the way forward "train more seeds" (`more_seeds`), B's and the reference's in
        turn, or None when they are all measured. The reference's continue its seed runs (replicates below
        them, seeds after theirs); B's j-th is B's gate run from the seed of the reference's j-th, so each new seed
        trains both configurations, as the trial's first pair did."""
        extra_b, extra_a = self.more_seeds_measured()
        if len(extra_b) >= self.more_seeds and len(extra_a) >= self.more_seeds:
            return None
        if self.change_missing() or any(r.status != COMPLETED for r in extra_b + extra_a):
            return None  # nothing to train again from: no change to judge, or a training failed
        first_b = next((r for r in self.runs if r.planned.arm == B and r.planned.replicate == 1), None)
        if first_b is None or first_b.status != COMPLETED:
            return None
        if len(extra_b) <= len(extra_a):
            j = len(extra_b) + 1
            settings = first_b.planned.settings.with_(seed=self.noise_seed(self.seed_runs() + j), no_model=True)
            return PlannedRun(B, 1 - j, settings, self.names(B, 1 - j))
        replicate = -(self.seed_runs() + len(extra_a))
        settings = self.seed_settings(replicate)
        return PlannedRun(A, replicate, settings.with_(no_model=True), self.names(A, replicate))

    def change_missing(self) -> str:
        """Why B's change did not take effect, from B's first run ("" when it did, or nothing can tell yet)."""
        first_b = next((r for r in self.runs if r.planned.arm == B), None)
        if self.not_in_effect is None or first_b is None or first_b.status != COMPLETED:
            return ""
        return self.not_in_effect(first_b.summary or RunSummary()) or ""
