"""One A/B trial as a plan of runs: replicated, interleaved, adaptive, then judged.

A trial never runs anything itself. `next_run()` says which run comes next
(its arm, replicate, settings and directory name); the front end executes it —
a blocking backend subprocess in `tfturbo tune`/`ab`, a QProcess in the wizard
— and hands back the summary with `record()`. So every front end measures and
judges the same way, and a test can drive a trial with recorded summaries.

Design (chosen by measurement on a shared 2-core CPU, see docs/ARCHITECTURE.md):
each replicate is an ordinary `run` in its own process, A and B alternating
AB, BA, AB, … so that process start-up, memory layout, clocks and the
machine's slow minutes are sampled into both arms; the speed interval is taken
across the pairs (`speed.SpeedRule`), whose number adapts to the noise. B
trains on as many samples as A (its steps and validation interval are scaled
by the batch ratio), so the accuracy gate compares them at equal samples seen.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..settings import RunSettings
from . import accuracy
from .speed import SpeedRule, samples_per_s
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
    runs: list[MeasuredRun] = field(default_factory=list)
    started: float | None = None

    def __post_init__(self) -> None:
        self.a = trial_settings(self.a)
        self.b = trial_settings(self.b)
        self._stopped = False

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

    def settings_of(self, arm: str) -> RunSettings:
        """The settings the next run of `arm` gets (B's steps follow A's batch for equal samples seen)."""
        if arm == A:
            return self.a
        a_batch, b_batch = self._batch(A), self._batch(B)
        if a_batch and b_batch and a_batch != b_batch:
            return equal_samples(self.a, self.b, a_batch, b_batch)
        return self.b.with_(steps=self.a.steps, val_every=self.a.effective_val_every())

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
        settings = self.settings_of(arm)
        if replicate == PROFILED_REPLICATE:  # both arms alike, so the pair's ratio stays fair
            settings = settings.with_(profile=None)
        return PlannedRun(arm, replicate, settings, self.names(arm, replicate))

    def record(self, planned: PlannedRun, summary: dict[str, Any] | None, run_dir: Path | str | None) -> None:
        if self.started is None:
            self.started = time.monotonic()
        self.runs.append(MeasuredRun(planned, summary, Path(run_dir) if run_dir is not None else None))

    def stop(self) -> None:
        """No more runs (the user stopped): the verdict uses the complete pairs measured so far."""
        self._stopped = True

    def _decided(self) -> bool:
        if len(self.runs) % 2 == 1:
            last = self.runs[-1]
            return last.status != COMPLETED  # a failed run ends the trial; its pair is never completed
        if any(r.status != COMPLETED for r in self.runs):
            return True
        ratios = self._ratios()
        over_budget = (self.budget_s is not None and self.started is not None
                       and time.monotonic() - self.started > self.budget_s)
        if over_budget and len(ratios) >= 2:
            return True
        return self.rule.clear(ratios)

    def _rates(self) -> tuple[list[float | None], list[float | None]]:
        a_rates, b_rates = [], []
        for ra, rb in self.pairs():
            if ra is not None and rb is not None and ra.status == COMPLETED and rb.status == COMPLETED:
                a_rates.append(samples_per_s(ra.summary))
                b_rates.append(samples_per_s(rb.summary))
        return a_rates, b_rates

    def _ratios(self) -> list[float]:
        a_rates, b_rates = self._rates()
        return [b / a for a, b in zip(a_rates, b_rates) if a and b]

    # -- judging --------------------------------------------------------------------------------

    def verdict(self) -> TrialVerdict:
        speed = self.rule.verdict(*self._rates())
        b_runs = [r for r in self.runs if r.planned.arm == B]
        a_runs = [r for r in self.runs if r.planned.arm == A]
        arm_b = accuracy.ArmData()
        for r in b_runs:
            if r.status == COMPLETED:
                arm_b.add_run(r.summary, r.run_dir)
        arm_a = accuracy.ArmData()
        reference = self.accuracy_reference if self.accuracy_reference is not None else \
            [(r.summary, r.run_dir) for r in a_runs if r.status == COMPLETED]
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
                            error=error)

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
                f"throughput from device-drained windows of the steady state; the speed interval is a Student-t "
                f"interval across the pairs' ratios, so it includes run-to-run variation. Each run trains "
                f"{steps_a} steps of A's batch (B the same number of samples)")
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

