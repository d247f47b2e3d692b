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

import time
from pathlib import Path
from typing import Any, Callable

from .. import protocol
from ..run_summary import RunSummary
from . import judging, progress
from .runs import A, B, FinishedRun, MeasuredRun, Planned, PlannedPair, PlannedRun, as_summary, process_s_of
from .schedule import Schedule
from .verdict import TrialVerdict

# The reference's trainings from other seeds a trial (`ab`) or a study (`tune`, once) adds for the accuracy gate's
# trainings' noise: with 3 trainings of one configuration the noise rests on 2 degrees of freedom (t = 4.30); with
# 2 on one (t = 12.7), an interval too wide to judge anything but a collapse (docs/MEASUREMENT.md)
SEED_REPLICATES = 2

# The first pair captures a profile (the default window after warm-up) in each arm whose configuration has none
# in the study yet (`Trial.profiled`), so every configuration has one profile.json; its profiled steps stay out of
# the throughput, as in any run.
PROFILED_REPLICATE = 1


class Trial(Schedule):
    """B against A, run by a front end: `next_run()` says what to measure, `record()` takes what it measured,
    `verdict()` judges it.

    The coordinator: its setup, runs and sizing are the schedule's (`trials.schedule.Schedule`, which it is),
    its judging `trials.judging`'s, its progress words `trials.progress`'; it keeps the clock between a run
    offered and recorded, and whether the user stopped.
    """

    def __post_init__(self) -> None:
        super().__post_init__()
        self._stopped = False
        self._stop_at: int | None = None  # `resume(pairs)`: stop again once this many speed pairs are complete
        self._asked: float | None = None  # when next_run() first offered the run not yet recorded
        self.unpaired = False  # a paired process failed before training (`_pairing_failed`): separate ones since

    def next_run(self) -> Planned | None:
        """The next run to measure — a `PlannedPair` for a paired replicate (the speed pairs when `paired`) — or
        None when the trial is decided."""
        if self._stopped:
            return None
        if self._stop_at is not None and self.complete_pairs() >= self._stop_at and not judging.decided(self):
            self._stopped = True  # the pairs the user asked for are measured: judged as stopped again
            return None
        if judging.decided(self):
            return self.more_seeds_run()
        done = len(self.runs)
        replicate, arm = self.slot(done)
        found = self.reused_run(arm) if replicate == 1 else None
        if found is not None:  # taken, not planned: the next run is the one after it
            self._take(arm, found)
            return self.next_run()
        if self._asked is None:
            self._asked = time.monotonic()
        settings = self.settings_of(arm, replicate)
        if replicate == PROFILED_REPLICATE and not self.profiled_run(arm):
            settings = settings.with_(profile=None)  # the default window, after warm-up (its steps in no window)
        if arm == A or not self.save_model:  # A's model is its own rung's run's (the baseline's, the kept one's)
            settings = settings.with_(no_model=True)
        if arm == B and replicate == 1 and not settings.speed_only:
            settings = settings.with_(paired_from=self.gate_from())
        planned = PlannedRun(arm, replicate, settings, self.names(arm, replicate))
        first_of_pair = replicate > 1 and (done == 0 or self.slot(done - 1)[0] != replicate)
        if first_of_pair and self.paired and settings.speed_only:
            other = self.order(replicate)[1]
            second = PlannedRun(other, replicate, self.settings_of(other, replicate), self.names(other, replicate))
            if second.settings.speed_only:
                return PlannedPair(planned, second, self.paired_steady_s() or self.rule.steady_s)
        return planned

    def _take(self, arm: str, found: FinishedRun) -> None:
        """Record the study's run `found` as `arm`'s full-length run, measured before this trial (its process time
        stands for the run's in the estimates; it adds nothing to the trial's own seconds)."""
        planned = PlannedRun(arm, 1, self.full_settings(arm).with_(no_model=True), found.name)
        self.runs.append(MeasuredRun(planned, found.summary, found.run_dir, process_s_of(found.summary) or None,
                                     reused=True))

    def record(self, planned: Planned, summary: Any, run_dir: Any, handed_back: bool = False) -> None:
        """Take a run's summary and run directory; for a `PlannedPair`, a sequence of two of each, in
        `planned.runs` order (a missing summary: None). A summary is a `RunSummary` or the document as the
        backend wrote it (`RunSummary.from_dict` reads it). `handed_back`: measured before, read back from its
        run directory (a continued study): its seconds are the process time it recorded, not the instant it took
        to read (a reopened study's estimates read "about 0 s"; unknown: none)."""
        now = time.monotonic()
        if self.started is None:
            self.started = now
        elapsed = now - self._asked if self._asked is not None else None
        self._asked = None
        if handed_back:
            found = [as_summary(one) for one in summary] if isinstance(planned, PlannedPair) else [as_summary(summary)]
            elapsed = max(process_s_of(one) for one in found) or None  # a pair: one process, halved below
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

    def resume(self, pairs: int | None = None) -> None:
        """Go on after `stop()` (the wizard's "run 1 more pair"): the next runs follow the complete pairs; with
        `pairs`, exactly that many more complete pairs (fewer if the trial is decided sooner), then it stops
        again — the walk's "Run 1 more pair" ran two (the rule wanted more once the first was in)."""
        self._stopped = False
        self._stop_at = self.complete_pairs() + pairs if pairs is not None else None

    @property
    def stopped(self) -> bool:
        """The user stopped it (`stop()`), or the pairs `resume(pairs)` asked for are measured."""
        return self._stopped

    def measured_seconds(self) -> float:
        """The wall time of the runs this trial measured (a re-used run's was its own rung's)."""
        return sum((r.summary.wall_s if r.summary else None) or 0.0 for r in self.runs if not r.reused)

    def own_runs(self) -> list[MeasuredRun]:
        """The runs this trial measured itself, not the study's runs it re-used (`reused_run`)."""
        return [r for r in self.runs if not r.reused]

    def verdict(self) -> TrialVerdict:
        """The trial's verdict from the runs so far (`judging.judge`)."""
        return judging.judge(self)

    def shortfall(self) -> str:
        """What would be enough measurement, when the pairs so far are not: "" when they are."""
        return judging.shortfall(self)

    def estimate_remaining_s(self) -> tuple[float, float] | None:
        """(at least, at most) seconds of runs left (`progress.remaining_s`); (0, 0) once decided."""
        return progress.remaining_s(self, self.next_run() is None, judging.decided(self))

    def progress_text(self) -> str:
        """Where the trial stands, for a log line or a page (`progress.progress_text`); once decided ""."""
        planned = self.next_run()
        if planned is None:
            return ""
        return progress.progress_text(self, planned, self.estimate_remaining_s(), judging.decided(self))


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
