"""A trial's runs as records: the run it plans next (`PlannedRun`, `PlannedPair`), the run it measured
(`MeasuredRun`) and a study's run it re-uses (`FinishedRun`), and the seconds read from a measured run.

What every other part of the trial engine reads its runs through: the schedule sizes the next run from
them, progress estimates the time left from them, judging takes the verdict from them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from ..run_summary import RunSummary
from ..settings import RunSettings

A, B = "a", "b"
COMPLETED = "completed"


class RunRoleDoc(TypedDict):
    """A run's role as study.yaml's ladder entry records it (`roles`)."""

    arm: str
    replicate: int


@dataclass(frozen=True)
class RunRole:
    """A run's place in its trial: its arm and replicate (1-based pair number; 0, -1, ...: the accuracy
    reference trained again from another seed). study.yaml records it for each run of a rung's trial
    (`Rung.roles`), so a run's role is read from there, never from its folder's name."""

    arm: str
    replicate: int

    @property
    def seed(self) -> bool:
        """A training of the accuracy reference from another seed (`Schedule.seed_settings`)."""
        return self.replicate < 1

    def to_dict(self) -> RunRoleDoc:
        return {"arm": self.arm, "replicate": self.replicate}

    @classmethod
    def from_dict(cls, doc: Any) -> RunRole | None:
        """The role as study.yaml wrote it; None for anything else."""
        if not isinstance(doc, dict) or doc.get("arm") not in (A, B) or type(doc.get("replicate")) is not int:
            return None
        return cls(str(doc["arm"]), int(doc["replicate"]))


@dataclass
class PlannedRun:
    """A run the trial wants next."""

    arm: str  # "a" or "b"
    replicate: int  # 1-based pair number
    settings: RunSettings
    name: str  # the run directory's name (the front end puts it under its runs folder)

    @property
    def role(self) -> RunRole:
        return RunRole(self.arm, self.replicate)


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



def default_names(arm: str, replicate: int) -> str:
    """A run directory's name when the front end gives none: "a1", "b2"."""
    return f"{arm}{replicate}"


def steady_s(run: MeasuredRun) -> float:
    """The steady-window seconds a run measured."""
    return float(((run.summary.throughput if run.summary else None) or {}).get("seconds") or 0.0)


def process_s(run: MeasuredRun) -> float:
    """The run's process time as it reported it (`process_s`), else its fit() time (a run from before)."""
    return process_s_of(run.summary)


def before_measuring_s(run: MeasuredRun) -> float:
    """What a run spent before its steady state: its process's time to fit() and its warm-up (`fit_start_s`,
    `warmup_s`); from a run that did not record when its fit() began, its time outside steady windows and
    validation (the profiler window and the saving after training included, so it errs longer)."""
    s = run.summary or RunSummary()
    if s.fit_start_s is not None and s.warmup_s is not None:
        return max(0.0, s.fit_start_s) + max(0.0, s.warmup_s)
    return max(0.0, process_s(run) - steady_s(run) - validation_s(run))


def process_s_of(summary: RunSummary | None) -> float:
    if summary is None:
        return 0.0
    value = summary.process_s if summary.process_s is not None else summary.wall_s
    return float(value) if value is not None else 0.0


def validation_s(run: MeasuredRun) -> float:
    """What a full-length run spent outside its steps: its fit() wall time less warm-up and windows."""
    s = run.summary or RunSummary()
    wall, warm = s.wall_s or 0.0, s.warmup_s or 0.0
    windows = s.windows or []
    in_windows = sum(float(w[2]) for w in windows if isinstance(w, (list, tuple)) and len(w) == 3)
    return max(0.0, wall - max(warm, 0.0) - in_windows) if windows else 0.0


def as_summary(summary: RunSummary | dict[str, Any] | None) -> RunSummary | None:
    """A recorded run's summary as the class: a `RunSummary` as given, the backend's document read into one."""
    return RunSummary.from_dict(summary) if isinstance(summary, dict) else summary
