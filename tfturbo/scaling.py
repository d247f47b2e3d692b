"""Scaling efficiency: how it is measured (`ScalingMeasurement`) and the one document it ends in (scaling.json).

`tfturbo scaling` and the wizard's Batch size page both measure through
`ScalingMeasurement`, so they plan the same trials and write the same
document; the report and the wizard read it back through
`ScalingResult.from_dict`, which owns its keys, their types and the version.

Each replica count N > 1 is one trial: A trains on one replica, B on N
replicas with the same per-replica batch (so B's global batch is N times A's
and, the trial scaling B's steps, both see the same samples). The trial's
ratio of throughput per sample, B over A, is the speed-up; the scaling
efficiency is speed-up / N, its interval the speed-up's divided by N. An
efficiency below 0.8 raises SCALING_INEFFICIENT with what to change.

Scaling is measured without XLA's jit_compile=True (`without_jit`): Keras
compiles every replica's step into one XLA function, which fails across
devices (keras-team/keras#19005, #20763; the backend refuses it), so a
configuration kept with XLA is measured without it, and the result says so
(`note`), on the terminal, in the wizard and in the report.

A study keeps its scaling measurement in STUDY/scaling/ (runs/ and
scaling.json), apart from the ladder's runs, so `load_study_runs` never mistakes
its runs for rungs.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from .findings import FindingDoc, findings_in
from . import findings as F
from .findings import Finding
from .formats import check_version
from .numbers import finite
from .runfiles import STUDY_YAML, read_json, write_json_atomic
from .settings import RunSettings
from .stats import replicate_ratio_ci
from .run_summary import RunSummary
from .trials.speed import SpeedRule
from .trials.runs import PlannedPair, PlannedRun
from .trials.trial import Trial

VERSION = 1
SCALING_JSON = "scaling.json"
SCALING_DIR = "scaling"  # inside a study folder
EFFICIENT = 0.8  # below this, SCALING_INEFFICIENT
STRATEGIES = ("mirrored", "multiworker")


def scaling_dir(out: Path) -> Path:
    """Where a scaling measurement into `out` goes: a study's scaling/ folder, else `out` itself."""
    out = Path(out)
    return out / SCALING_DIR if (out / STUDY_YAML).is_file() else out


def without_jit(settings: RunSettings) -> tuple[RunSettings, str]:
    """The settings scaling measures (jit_compile off: a strategy across devices cannot run Keras' XLA step) and
    the note that says so ('' when they had no XLA to drop)."""
    if not settings.jit_compile:
        return settings, ""
    return settings.with_(jit_compile=False), (
        f"measured without XLA (jit_compile=True): the configuration kept ({settings.label()}) compiles with "
        "it, but Keras compiles every replica's step into one XLA function, which fails across devices "
        "(keras-team/keras#19005, #20763), so each replica count trains it without XLA")


def on_replicas(settings: RunSettings, strategy: str, n: int) -> RunSettings:
    """`settings` on n replicas of `strategy`, the global batch n times the per-replica one."""
    batch = settings.batch_size * n if settings.batch_size else None
    if strategy == "multiworker":
        return settings.with_(strategy=strategy, workers=n, batch_size=batch)
    return settings.with_(strategy=strategy, devices=n, batch_size=batch)


def throughput_ci(rates: list[float | None]) -> tuple[float | None, list[float | None]]:
    """Geometric mean of runs' throughput and its Student-t 95% interval (on the log scale, like the ratios)."""
    measured = [r for r in rates if r and math.isfinite(r)]
    if not measured:
        return None, [None, None]
    center = math.exp(sum(math.log(r) for r in measured) / len(measured))
    if len(measured) < 2:
        return center, [None, None]
    _, (lo, hi) = replicate_ratio_ci([r / center for r in measured])
    return center, [lo * center, hi * center]


def _pair(value: Any) -> list[float | None]:
    """A [low, high] interval as read from a file: two finite numbers, else [None, None]."""
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(finite(v) for v in value):
        return [float(value[0]), float(value[1])]
    return [None, None]


def _number(value: Any) -> float | None:
    return float(value) if finite(value) and not isinstance(value, bool) else None


class ScalingPointDoc(TypedDict):
    """A `ScalingPoint` as scaling.json holds it."""

    replicas: int
    samples_per_s: float | None
    ci95: list[float | None]
    speedup: float | None
    speedup_ci95: list[float | None]
    efficiency: float | None
    efficiency_ci95: list[float | None]
    replicates: int
    status: str


class ScalingDoc(TypedDict):
    """scaling.json."""

    v: int
    workload: str
    strategy: str
    per_replica_batch_size: int | None
    points: list[ScalingPointDoc]
    findings: list[FindingDoc]
    note: str


@dataclass
class ScalingPoint:
    """One replica count: global throughput with its interval, the speed-up over one replica, the efficiency."""

    replicas: int
    samples_per_s: float | None = None
    ci95: list = field(default_factory=lambda: [None, None])
    speedup: float | None = None
    speedup_ci95: list = field(default_factory=lambda: [None, None])
    efficiency: float | None = None
    efficiency_ci95: list = field(default_factory=lambda: [None, None])
    replicates: int = 0
    status: str = "completed"

    @classmethod
    def from_trial(cls, n: int, trial: Trial) -> ScalingPoint:
        """N replicas' row from its trial: B's throughput, its interval from the pairs' speed-up interval."""
        speed = trial.verdict().speed
        ratio, (lo, hi) = speed.ratio, speed.ci95
        base = speed.a_samples_per_s
        ok = math.isfinite(ratio)
        return cls(n, speed.b_samples_per_s, [lo * base, hi * base] if ok and base else [None, None],
                   ratio if ok else None, [lo, hi] if ok else [None, None],
                   ratio / n if ok else None, [lo / n, hi / n] if ok else [None, None], speed.replicates,
                   next((r.status for r in trial.runs if r.status != "completed"), "completed"))

    @classmethod
    def one_replica(cls, rates: list[float | None]) -> ScalingPoint:
        """The reference row: every one-replica run's throughput pooled, efficiency 1 by definition."""
        rate, ci = throughput_ci(rates)
        return cls(1, rate, ci, 1.0, [1.0, 1.0], 1.0, [1.0, 1.0], len(rates),
                   "completed" if rate is not None else "failed")

    def to_dict(self) -> ScalingPointDoc:
        return {"replicas": self.replicas, "samples_per_s": self.samples_per_s, "ci95": list(self.ci95),
                "speedup": self.speedup, "speedup_ci95": list(self.speedup_ci95), "efficiency": self.efficiency,
                "efficiency_ci95": list(self.efficiency_ci95), "replicates": self.replicates, "status": self.status}

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> ScalingPoint:
        """A point as read from a file; a value of the wrong type reads as not measured."""
        replicates = doc.get("replicates")
        return cls(int(doc["replicas"]), _number(doc.get("samples_per_s")), _pair(doc.get("ci95")),
                   _number(doc.get("speedup")), _pair(doc.get("speedup_ci95")), _number(doc.get("efficiency")),
                   _pair(doc.get("efficiency_ci95")),
                   replicates if isinstance(replicates, int) and not isinstance(replicates, bool) else 0,
                   str(doc.get("status") or "completed"))


def findings_for(points: list[ScalingPoint], strategy: str) -> list[Finding]:
    """SCALING_INEFFICIENT for each replica count whose efficiency is below EFFICIENT."""
    out = []
    for p in points:
        e = p.efficiency
        if p.replicas > 1 and e is not None and e < EFFICIENT:
            lo, hi = p.efficiency_ci95
            interval = f" [{lo:.2f}, {hi:.2f}]" if lo is not None else ""
            out.append(Finding(
                F.SCALING_INEFFICIENT,
                f"{p.replicas} replicas ({strategy}) train {p.speedup:.2f}× as fast as one: efficiency "
                f"{e:.2f}{interval}, below {EFFICIENT}",
                fix=("# each worker reads its own shard and prefetches:\n"
                     "ds = ds.shard(num_workers, worker_index)  # or files per worker\n"
                     "ds = ds.batch(per_replica_batch * replicas, drop_remainder=True).prefetch(tf.data.AUTOTUNE)\n"
                     "# a larger per-replica batch computes more between gradient all-reduces: --batch-size\n"
                     "# communication-bound: fewer replicas, or a faster interconnect (NVLink, one host)"),
                where=f"{p.replicas} replicas",
                data={"replicas": p.replicas, "efficiency": e, "efficiency_ci95": p.efficiency_ci95}))
    return out


@dataclass
class ScalingResult:
    """scaling.json: what a scaling measurement found. `problems` says what `from_dict` could not read."""

    workload: str
    strategy: str
    per_replica_batch_size: int | None
    points: list[ScalingPoint]
    findings: list[FindingDoc]
    note: str = ""  # what was measured differently from the configuration asked for (`without_jit`)
    problems: list[str] = field(default_factory=list, repr=False, compare=False)

    def to_dict(self) -> ScalingDoc:
        return {"v": VERSION, "workload": self.workload, "strategy": self.strategy,
                "per_replica_batch_size": self.per_replica_batch_size,
                "points": [p.to_dict() for p in self.points], "findings": list(self.findings), "note": self.note}

    @classmethod
    def from_dict(cls, doc: Any, source: str = SCALING_JSON) -> ScalingResult:
        """The result in `doc`, as far as it is valid: a point without a replica count is dropped and named."""
        if not isinstance(doc, dict):
            return cls("", "", None, [], [], problems=[f"{source} is not a mapping; nothing in it was read"])
        problems, points = [], []
        written = doc.get("points")
        for i, p in enumerate(written if isinstance(written, list) else []):
            if isinstance(p, dict) and isinstance(p.get("replicas"), int) and p["replicas"] >= 1:
                points.append(ScalingPoint.from_dict(p))
            else:
                problems.append(f"{source}: point {i + 1} has no replica count; ignored")
        batch = doc.get("per_replica_batch_size")
        return cls(str(doc.get("workload") or ""), str(doc.get("strategy") or ""),
                   batch if isinstance(batch, int) and not isinstance(batch, bool) else None, points,
                   findings_in(doc.get("findings")),
                   doc["note"] if isinstance(doc.get("note"), str) else "", problems)

    def save(self, folder: Path) -> Path:
        path = Path(folder) / SCALING_JSON
        write_json_atomic(path, self.to_dict())
        return path

    @classmethod
    def load(cls, folder: Path) -> ScalingResult | None:
        """The scaling document in `folder` (or in a study's scaling/ folder); None when there is none.
        A scaling.json in a newer format than this tfturbo reads raises FormatVersionError."""
        path = scaling_dir(folder) / SCALING_JSON
        if not path.is_file():
            return None
        warnings: list[str] = []
        doc = read_json(path, warnings)
        if doc is None:
            return cls("", "", None, [], [], problems=warnings)
        check_version(doc.get("v"), VERSION, path)
        return cls.from_dict(doc, path.name)

    def interpretation(self) -> str:
        """One sentence: how close to linear the largest measured replica count came, and what that means."""
        measured = [p for p in self.points if p.replicas > 1 and p.efficiency is not None]
        if not measured:
            return ("No replica count above one was measured to completion, so nothing can be said about scaling."
                    + self.note_sentence())
        p = max(measured, key=lambda q: q.replicas)
        lo, hi = p.efficiency_ci95
        if lo is not None and lo >= EFFICIENT:
            how = "scales well: adding replicas pays off"
        elif hi is not None and hi < EFFICIENT:
            how = "scales poorly: each added replica buys clearly less than its share, so fix the finding first"
        else:
            how = "may or may not reach the 0.8 mark: the interval straddles it, so more replicate pairs would tell"
        return (f"At {p.replicas} replicas ({self.strategy}) the job trains {p.speedup:.2f}× as fast as on one, "
                f"an efficiency of {p.efficiency:.2f} (1.00 is linear); it {how}." + self.note_sentence())

    def note_sentence(self) -> str:
        """' Measured without XLA …: …' — what the measurement changed, as a sentence ('' when nothing)."""
        return f" {self.note[:1].upper()}{self.note[1:]}." if self.note else ""


def _run_name(n: int, arm: str, replicate: int) -> str:
    """A run's folder name in a scaling measurement: its replica count, arm and replicate (`n4-b2`)."""
    return f"n{n}-{arm}{replicate}"


class ScalingMeasurement:
    """The trials of a scaling measurement, one run at a time: the CLI drives it with a blocking executor,
    the wizard with its run panel. `next_run` plans, `record` takes each run's summary, `result` judges."""

    def __init__(self, base: RunSettings, strategy: str, counts: list[int], rule: SpeedRule | None = None):
        base, self.note = without_jit(base)
        self.base, self.strategy = base, strategy
        one = on_replicas(base, strategy, 1)
        self.trials = [(n, Trial(one, on_replicas(base, strategy, n), rule or SpeedRule(),
                                 names=functools.partial(_run_name, n), label_a="1 replica",
                                 label_b=f"{n} replicas", share_process=False,  # one strategy per process
                                 b_first=False,  # the one-replica run fixes B's global batch (`record`)
                                 save_model=False))  # a measurement of speed: no model is kept
                       for n in counts if n > 1]
        self._current = 0

    def replicas_of(self, planned: PlannedRun) -> int:
        return 1 if planned.arm == "a" else self.trials[self._current][0]

    def next_run(self) -> PlannedRun | None:
        """The next run, or None when every count is measured (or the one-replica reference failed)."""
        while self._current < len(self.trials):
            trial = self.trials[self._current][1]
            planned = trial.next_run()
            assert not isinstance(planned, PlannedPair), "share_process=False: the trial plans one run at a time"
            if planned is not None:
                return planned
            if any(r.planned.arm == "a" and r.status != "completed" for r in trial.runs):
                self.trials = self.trials[:self._current + 1]  # no other count can be compared with a failed one
                break
            self._current += 1
        return None

    def record(self, planned: PlannedRun, summary: RunSummary | None, run_dir: Path | str | None) -> None:
        """Take one run's summary; the first one-replica run fixes B's global batch when the workload chose it."""
        n, trial = self.trials[self._current]
        trial.record(planned, summary, run_dir)
        recorded = trial.runs[-1].summary  # as the trial read it
        if planned.arm == "a" and trial.b.batch_size is None and recorded and recorded.settings:
            per_replica = recorded.settings.batch_size
            if per_replica is not None and per_replica > 0:
                for m, later in self.trials[self._current:]:
                    later.b = later.b.with_(batch_size=per_replica * m)

    def stop(self) -> None:
        """No more runs: the counts measured so far are judged on their complete pairs."""
        for _, trial in self.trials:
            trial.stop()

    def measured(self) -> list[tuple[int, Trial]]:
        return [(n, t) for n, t in self.trials if t.runs]

    def result(self) -> ScalingResult:
        trials = self.measured()
        one_runs = [r for _, t in trials for r in t.runs if r.planned.arm == "a" and r.status == "completed"]
        points = [ScalingPoint.one_replica([r.summary.samples_per_s if r.summary else None for r in one_runs])]
        points += [ScalingPoint.from_trial(n, t) for n, t in trials]
        batch = next((r.summary.settings.batch_size if r.summary and r.summary.settings else None
                      for r in one_runs), None)
        return ScalingResult(self.base.workload, self.strategy, batch if isinstance(batch, int) else None, points,
                             [f.to_dict() for f in findings_for(points, self.strategy)], self.note)


def render(result: ScalingResult) -> str:
    """The terminal table of a result, then how to read it and the findings."""
    def num(v, fmt="{:,.0f}"):
        return fmt.format(v) if isinstance(v, (int, float)) and math.isfinite(v) else "—"

    lines = [f"{'replicas':>8}  {'samples/s':>10}  {'95% CI':>21}  {'efficiency':>10}  {'95% CI':>14}"]
    for p in result.points:
        lo, hi = p.ci95
        elo, ehi = p.efficiency_ci95
        lines.append(f"{p.replicas:>8}  {num(p.samples_per_s):>10}  "
                     f"{'[' + num(lo) + ', ' + num(hi) + ']':>21}  {num(p.efficiency, '{:.2f}'):>10}  "
                     f"{'[' + num(elo, '{:.2f}') + ', ' + num(ehi, '{:.2f}') + ']':>14}")
    lines += ["", "efficiency = throughput(N) / (N × throughput(1)), same per-replica batch; 1.00 is perfect scaling."]
    if result.note:
        lines.append(result.note_sentence().strip())
    for f in result.findings:
        lines.append(f"{f.get('code')}: {f.get('message')}")
    return "\n".join(lines)
