"""Side-by-side comparison of measured runs: one row per run, numbers against a baseline.

`tfturbo compare`, the GUI's compare view, the tune summary and the PDF report
all show the same table, so it is computed here once, from the run
directories alone. Every number comes from the run's summary.json through
`tfturbo.summary`; a run without a summary (crashed, cancelled before it
wrote one, events truncated) still gets a row with what its events measured,
and its status and warnings say why it is incomplete.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Iterable, Sequence

from . import profile, protocol, summary as summ
from .console import fmt_bytes
from .errors import UserError
from .findings import codes_of
from .learning_rate import learning_rate_text, schedule_of, schedule_text
from .numbers import counted, finite, num
from .runfiles import CHECKPOINT_DIR, CHECKPOINT_SETTINGS, RunRecord, trained_settings
from .settings import RunSettings
from .settings import replicate_key as replicate_key  # (re-exported: the rule of what one configuration is)
from . import steady
from .run_summary import RunSummary
from .stats import median_ci, two_sample_ratio_ci
from .trials import label_free
from .trials.verdict import Tolerance, speed_verdict_of
from .verdicts import Verdict

SINGLE_RUN = "single run: no interval"  # verdict of a row whose settings were measured once
SAME_SETTINGS = "same settings"  # a replicate of the baseline's own settings


NOT_IN_CSV = {"csv": False}  # a CompareRow field that is no column of the CSV (`CSV_COLUMNS`)


@dataclass
class CompareRow:
    """One run as the compare table shows it. Numbers not measured are None (never NaN)."""

    name: str  # the run's folder: a secondary detail beside `configuration`
    # what the configuration is, against the compared baseline (`RunSettings.name_against`: "20 steps per call",
    # "baseline: float32, batch 64"): the name every list of configurations shows
    configuration: str
    label: str  # its settings in full ("float32 + XLA, batch 128"), for sentences naming both sides
    status: str
    policy: str | None
    jit_compile: bool | None
    batch_size: int | None
    steps_per_s: float | None
    steps_per_s_ci95: tuple[float, float] | None
    step_ms: float | None
    step_ms_ci95: tuple[float, float] | None
    speedup: float | None
    speedup_ci95: tuple[float, float] | None
    # Verdict.BASELINE | "faster" | "slower" | "no measurable change" (from replicates: ≥2 runs of each settings) |
    # SINGLE_RUN (one run cannot tell a gain from a slow minute of the machine) | SAME_SETTINGS
    verdict: str
    warmup_s: float | None
    peak_memory_bytes: int | None
    memory_ratio: float | None
    memory_kind: str | None
    # the CSV's columns are these fields in this order, as `_flat` writes them (`CSV_COLUMNS`); NOT_IN_CSV: not one
    metrics: dict[str, float] = field(default_factory=dict, metadata=NOT_IN_CSV)  # final validation metrics (a column each)
    # (metric, this - baseline) on the baseline's primary metric, at the largest validation step both runs
    # reached (val_step; None: their final metrics), as the tune ladder's accuracy gate compares them
    val_delta: tuple[str, float] | None = None
    val_step: int | None = None
    learning_rate: float | None = None  # the rate it started at (a schedule's initial rate)
    learning_rate_schedule: str = ""  # its schedule as it ran, "CosineDecay(initial_learning_rate=…)"; "": constant
    steps_completed: int | None = None
    mfu: float | None = None  # achieved FLOP/s over the device's measured matmul ceiling (summary's "mfu")
    mfu_unknown: str | None = None  # why there is no MFU (summary's "mfu_unknown": a loop of unknown length, ...)
    findings: list[str] = field(default_factory=list)  # finding codes
    warnings: list[str] = field(default_factory=list)
    recorded_settings: dict[str, Any] = field(default_factory=dict)  # checkpoint/tfturbo-settings.yaml
    # profile.json: op ms per profiled step by category (tfturbo.profile.CATEGORIES), empty without a profile
    profile_ms: dict[str, float] = field(default_factory=dict)
    sixteen_bit_share: float | None = None  # of the matmul/attention op time, from the profile
    from_summary: bool = field(default=True, metadata=NOT_IN_CSV)  # False: numbers recomputed from events.jsonl
    missing_summary: str = field(default="", metadata=NOT_IN_CSV)  # which of `warnings` says summary.json is missing
    path: str = field(default="", metadata=NOT_IN_CSV)


# ---------------------------------------------------------------- reading one run

def run_settings(record: RunRecord) -> RunSettings | None:
    """The run's settings: summary.json's, else run.yaml's (flat, or under a `settings` key); None when neither
    holds valid settings."""
    if record.summary and record.summary.settings is not None:
        return record.summary.settings
    nested = record.settings.get("settings")
    return trained_settings(nested if isinstance(nested, dict) else record.settings)


def steady_steps(record: RunRecord) -> tuple[list[int], list[float]]:
    """(steps, step_ms) of the steady state, as the backend counts it: after warm-up, outside the profiler.

    The summary's `first_steady_step` is the backend's final decision; without
    a summary, the warm-up -> training phase event (or the later one revised on
    the whole run) carries it; the profiler window runs from a `profiling`
    phase to the next `training` phase that is not a resumption after
    validation. Without phase events the warm-up is found from the step times
    themselves, by the same rule the backend uses (`tfturbo.steady`).
    """
    series = record.steps()
    first, excluded = _steady_window(record.events)
    recorded = record.summary.first_steady_step if record.summary else None
    if recorded is not None:
        first = recorded
    if first is None:
        index = steady.final_start(series.step_ms)
        first = series.step[index] if index < len(series.step) else math.inf
    pairs = [(step, float(ms)) for step, ms in zip(series.step, series.step_ms)
             if isinstance(step, int) and step >= first and not excluded(step) and finite(ms)]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def effective_summary(record: RunRecord) -> RunSummary:
    """summary.json, or a summary rebuilt from the events of a run that wrote none.

    Only what the events measured is filled in, so `tfturbo.summary` can answer
    the same questions of complete and incomplete runs alike.
    """
    if record.summary is not None:
        return record.summary
    series = record.steps()
    steps, steady = steady_steps(record)
    first = steps[0] if steps else math.inf
    warm = [ms for step, ms in zip(series.step, series.step_ms) if isinstance(step, int) and step < first
            and finite(ms)]
    doc = RunSummary(status=record.status, settings=run_settings(record), step_ms_samples=steady,
                     steps_completed=len(series.step), first_steady_step=steps[0] if steps else None)
    if steady:
        median, ci = median_ci(steady)
        doc.step_ms = {"median": median, "ci95": list(ci), "n": len(steady)}
        doc.steps_per_s = 1000.0 / median if median > 0 else None
        doc.warmup_s = sum(warm) / 1000.0
    first_steady = steps[0] if steps else math.inf
    profiled = steady_windows(record.events)[1]
    windows = [w for w in series.windows if w[0] >= first_steady
               and not any(lo <= w[1] and w[0] <= hi for lo, hi in profiled)]
    if windows:
        batch = doc.batch_size
        doc.throughput = summ.window_throughput(windows, batch)
        if doc.throughput["samples_per_s"]:
            doc.steps_per_s = doc.throughput["samples_per_s"] / batch
    memory = [e for e in record.events if e["type"] == protocol.MEMORY
              and isinstance(e.get("peak_bytes"), (int, float))]
    if memory:
        peak = max(memory, key=lambda e: e["peak_bytes"])
        doc.peak_memory_bytes = int(peak["peak_bytes"])
        doc.memory_kind = peak.get("kind")
    validation = record.validation()
    if validation:
        doc.metrics = dict(validation[-1].get("metrics") or {})
        doc.validation = [{"step": v.get("step"), "metrics": v.get("metrics")} for v in validation]
    return doc


def _steady_window(events: list[protocol.Event]):
    """(first steady step or None, is-excluded(step)) from the phase events."""
    first, windows = steady_windows(events)
    return first, lambda step: any(lo <= step <= hi for lo, hi in windows)


def steady_windows(events: list[protocol.Event]) -> tuple[int | None, list[tuple[float, float]]]:
    """(first steady step or None, profiler windows as inclusive (start, stop)) from the phase events.

    When the profiler stops, the backend's phase event carries `excluded:
    [start, stop]` (inclusive); a run killed while profiling excludes every
    step from the profiling start on (stop is inf). The GUI shades the same
    windows it leaves out of its live median.
    """
    first = None
    windows: list[tuple[float, float]] = []
    open_start = None
    for e in events:
        if e["type"] != protocol.PHASE:
            continue
        phase, step, excluded = e.get("phase"), e.get("step"), e.get("excluded")
        if isinstance(excluded, list) and len(excluded) == 2 and all(isinstance(v, int) for v in excluded):
            windows.append((excluded[0], excluded[1]))
            open_start = None
        elif phase == protocol.PROFILING and isinstance(step, int) and open_start is None:
            open_start = step
        elif phase == protocol.TRAINING and isinstance(step, int) and (first is None or e.get("settled")):
            first = step
    if open_start is not None:
        windows.append((open_start, math.inf))
    return first, windows


def _interval(ci: Any) -> tuple[float, float] | None:
    if isinstance(ci, (list, tuple)) and len(ci) == 2 and all(finite(c) for c in ci):
        return float(ci[0]), float(ci[1])
    return None


def _final_metrics(doc: RunSummary, record: RunRecord) -> dict[str, float]:
    """Final validation metrics: the summary's val_* metrics, else the last validation event's."""
    metrics = {k: float(v) for k, v in (doc.metrics or {}).items()
               if str(k).startswith("val_") and finite(v)}
    if metrics:
        return metrics
    validation = record.validation()
    last = (validation[-1].get("metrics") or {}) if validation else {}
    return {k: float(v) for k, v in last.items() if finite(v)}


# ---------------------------------------------------------------- the table

def _baseline_index(records: list[RunRecord], baseline: int | str) -> int:
    if isinstance(baseline, int):
        if not -len(records) <= baseline < len(records):
            raise UserError(f"baseline index {baseline} is out of range for {counted(len(records), 'run')}",
                            "pass a run name or an index from 0")
        return baseline % len(records)
    for i, r in enumerate(records):
        if baseline in (r.name, str(r.path)) or r.path.resolve() == _resolve(baseline):
            return i
    raise UserError(f"baseline {baseline!r} is not one of the compared runs",
                    "pass --baseline with the name or path of one of the RUN_DIRs")


def _resolve(path: str) -> Path | None:
    try:
        return Path(path).resolve()
    except OSError:
        return None


def own_process_peaks(settings: RunSettings, runs: Iterable[tuple[RunSettings | None, RunSummary | None]]
                      ) -> list[int | None]:
    """The peak memory of every completed full-length run of the configuration `settings` among `runs` (each
    its settings and its summary; replicates included): a speed-only run validates nothing and a paired
    replicate's peak is its process's, both arms' together. What `summary.memory_change` compares, in the
    report and on the Batch size page alike."""
    key = replicate_key(settings)
    return [doc.peak_memory_bytes for s, doc in runs
            if s is not None and replicate_key(s) == key and not s.speed_only
            and doc is not None and doc.status == protocol.RunStatus.COMPLETED]


def not_in_effect(base: RunSummary, doc: RunSummary) -> str | None:
    """Why the run `doc`'s change against the baseline run `base` did not take effect (the levers' own check,
    `tune.levers.effect_check`: XLA requested and never on), None when it did or nothing can tell. Such a run
    gets no speed-up and no accuracy delta in the table or the CSV: it trained the baseline's math (issue 39)."""
    from .tune import levers

    if doc.status != protocol.RunStatus.COMPLETED:
        return None
    check = levers.effect_check(base.settings or RunSettings(), doc.settings or RunSettings())
    return check(doc) if check is not None else None


def compare_runs(records: list[RunRecord], baseline: int | str = 0,
                 replicates: Sequence[RunRecord] = ()) -> list[CompareRow]:
    """One row per record, in order; speed-up (per sample), memory and accuracy against `baseline`.

    The speed-up's interval and verdict come from replicates: every run with
    the same settings counts as one (`replicate_key`), and the interval of
    the ratio of their throughputs covers the run-to-run noise. A
    configuration measured by one run gets its ratio without an interval and
    the verdict SINGLE_RUN — `tfturbo ab` measures a verdict. `replicates` are
    more runs that count in the groups without a row of their own (a study's
    trial replicates behind the rungs shown).
    """
    if not records:
        return []
    base_i = _baseline_index(records, baseline)
    docs = [effective_summary(r) for r in records]
    base = docs[base_i]
    keys = [replicate_key(d.settings or {}) for d in docs]
    rates = [d.samples_per_s if d.status == protocol.RunStatus.COMPLETED or r.summary is None else None
             for d, r in zip(docs, records)]
    groups: dict[tuple, list[float]] = {}
    for key, rate in zip(keys, rates):
        if rate:
            groups.setdefault(key, []).append(rate)
    for record in replicates:
        doc = effective_summary(record)
        rate = doc.samples_per_s if doc.status == protocol.RunStatus.COMPLETED else None
        if rate:
            groups.setdefault(replicate_key(doc.settings or {}), []).append(rate)
    # peak memory as the report and the Batch page give it: each configuration's runs in a process of their own
    # (`own_process_peaks`, replicates included), their median and the ratio of medians (`summary.MemoryChange`)
    measured = [(d.settings, d) for d in docs] + [(s.settings, s) for s in map(effective_summary, replicates)]
    base_peaks = own_process_peaks(base.settings, measured) if base.settings is not None else []
    rows = []
    for i, (record, doc) in enumerate(zip(records, docs)):
        settings = doc.settings
        recorded = record.checkpoint_settings()
        median = ci = None
        if doc.step_ms or doc.steady_samples:
            m, c = doc.step_time()
            median, ci = num(m), _interval(c)
        sps, sps_ci = steps_per_s_ci95(doc, ci)
        val_delta = None
        speedup: float | None
        speedup_ci: tuple[float, float] | None
        if i == base_i:
            speedup, speedup_ci, verdict = 1.0, (1.0, 1.0), Verdict.BASELINE
        elif not_in_effect(base, doc):  # it trained the baseline's math: no speed-up, no accuracy to judge
            speedup, speedup_ci, verdict = None, None, Verdict.NOT_APPLIED
        else:
            speedup, speedup_ci, verdict = _speed(groups.get(keys[base_i], []), groups.get(keys[i], []),
                                                  keys[i] == keys[base_i], rates[base_i], rates[i])
            acc = label_free.compare_runs([(base, records[base_i].path)], [(doc, record.path)], Tolerance())
            if acc.metric is not None and acc.delta is not None:
                val_delta = (acc.metric, acc.delta)
        peak: float | None = doc.peak_memory_bytes
        memory_ratio = base.memory_ratio(doc)
        memory = summ.memory_change(base_peaks, own_process_peaks(settings, measured)) \
            if settings is not None and doc.status == protocol.RunStatus.COMPLETED else None
        if memory is not None:  # one figure per configuration; a run on its own (none measured alone): its own
            peak, memory_ratio = memory.after_bytes, memory.ratio
        rows.append(CompareRow(
            name=record.name,
            configuration=settings.name_against(base.settings) if settings is not None else record.name,
            label=settings.label() if settings is not None else record.name,
            status=record.status,
            policy=settings.policy if settings is not None else None,
            # a TPU compiles every step with XLA, whatever jit_compile says
            jit_compile=None if settings is None else True if settings.strategy == "tpu" else settings.jit_compile,
            batch_size=settings.batch_size if settings is not None else None,
            steps_per_s=sps,
            steps_per_s_ci95=sps_ci,
            step_ms=median,
            step_ms_ci95=ci,
            speedup=speedup,
            speedup_ci95=speedup_ci,
            verdict=verdict,
            warmup_s=num(doc.warmup_s),
            peak_memory_bytes=int(peak) if finite(peak) else None,
            memory_ratio=num(memory_ratio),
            memory_kind=doc.memory_kind,
            metrics=_final_metrics(doc, record),
            val_delta=val_delta,
            val_step=None,
            findings=[c for c in codes_of(record.findings()) if c],
            learning_rate=num(doc.learning_rate if finite(doc.learning_rate) else recorded.get("learning_rate")),
            learning_rate_schedule=_schedule(doc.learning_rate_schedule) or
            _schedule(recorded.get("learning_rate_schedule")),
            warnings=list(record.warnings),
            steps_completed=doc.steps_completed,
            from_summary=record.summary is not None,
            missing_summary=record.missing_summary,
            recorded_settings=recorded,
            path=str(record.path),
            mfu=num(doc.mfu),
            mfu_unknown=doc.mfu_unknown,
            **_profile_columns(record.path),
        ))
    return rows


def _profile_columns(run_dir: Path) -> dict[str, Any]:
    """The run's profile.json as the row's category columns (empty when it has none)."""
    p = profile.Profile.load(run_dir)
    if not p.available:
        return {}
    return {"profile_ms": {c: p.categories.get(c, 0.0) for c in profile.CATEGORIES},
            "sixteen_bit_share": p.sixteen_bit_share()}


def _speed(base_rates: list[float], rates: list[float], same: bool, base_rate: float | None,
           rate: float | None) -> tuple[float | None, tuple[float, float] | None, str]:
    """(ratio, interval or None, verdict) of one row against the baseline's configuration."""
    if not rate or not base_rate:
        return None, None, "not measured"
    if same:
        return rate / base_rate, None, SAME_SETTINGS
    if len(base_rates) >= 2 and len(rates) >= 2:
        ratio, ci = two_sample_ratio_ci(base_rates, rates)
        return ratio, ci, speed_verdict_of(ci)
    return rate / base_rate, None, SINGLE_RUN


# ---------------------------------------------------------------- output

def metric_names(rows: list[CompareRow]) -> list[str]:
    """Union of the rows' validation metric names, in first-seen order."""
    names: list[str] = []
    for r in rows:
        names += [k for k in r.metrics if k not in names]
    return names


# how `_flat` writes a field that is not one column of its own name
_COLUMNS_OF = {**{k: (f"{k}_lo", f"{k}_hi") for k in ("steps_per_s_ci95", "step_ms_ci95", "speedup_ci95")},
               "val_delta": ("val_delta_metric", "val_delta"), "recorded_settings": ("settings_record",),
               "profile_ms": ("profile_op_ms_per_step", *(f"profile_{c}_ms" for c in profile.CATEGORIES)),
               "sixteen_bit_share": ("profile_sixteen_bit_share",)}
# the CSV's columns (one per metric follow them): CompareRow's fields in order, so a new field is a column
CSV_COLUMNS = tuple(column for f in fields(CompareRow) if f.metadata.get("csv", True)
                    for column in _COLUMNS_OF.get(f.name, (f.name,)))


def _schedule(schedule: object) -> str:
    """A run's learning-rate schedule in words (`learning_rate.schedule_text`), "" for a constant rate."""
    found = schedule_of(schedule)
    return schedule_text(found) if found is not None else ""


def _flat(row: CompareRow) -> dict[str, Any]:
    d = asdict(row)
    for key in ("steps_per_s_ci95", "step_ms_ci95", "speedup_ci95"):
        lo_hi = d.pop(key)
        d[key + "_lo"], d[key + "_hi"] = lo_hi if lo_hi else (None, None)
    delta = d.pop("val_delta")
    d["val_delta_metric"], d["val_delta"] = delta if delta else (None, None)
    d["findings"] = ";".join(row.findings)
    d["warnings"] = " | ".join(row.warnings)
    d["settings_record"] = fmt_settings_record(row.recorded_settings)
    ms = d.pop("profile_ms")
    d["profile_op_ms_per_step"] = sum(ms.values()) if ms else None
    for c in profile.CATEGORIES:
        d[f"profile_{c}_ms"] = ms.get(c)
    d["profile_sixteen_bit_share"] = d.pop("sixteen_bit_share")
    return d


def to_csv(rows: list[CompareRow]) -> str:
    """The table as CSV: one line per run, intervals as _lo/_hi columns, one column per metric.

    Numbers are written with full precision (repr), empty where not measured.
    """
    metrics = metric_names(rows)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(list(CSV_COLUMNS) + metrics)
    for row in rows:
        d = _flat(row)
        values = [d[c] for c in CSV_COLUMNS] + [row.metrics.get(m) for m in metrics]
        writer.writerow(["" if v is None else repr(v) if isinstance(v, float) else v for v in values])
    return out.getvalue()


def to_json(rows: list[CompareRow]) -> list[dict[str, Any]]:
    """The rows as JSON-ready dicts (intervals as [lo, hi] lists)."""
    out = []
    for row in rows:
        d = asdict(row)
        for k, v in d.items():
            if isinstance(v, tuple):
                d[k] = list(v)
        out.append(d)
    return out


# -------- formatting shared by the terminal table, the GUI and the report

def fmt_num(v: float | None, digits: int = 2) -> str:
    return f"{v:.{digits}f}" if v is not None else "n/a"


def fmt_with_ci(v: float | None, ci: tuple[float, float] | None, digits: int = 2, unit: str = "") -> str:
    """'1.23x [1.20, 1.26]' — value with its 95% interval, or 'n/a'."""
    if v is None:
        return "n/a"
    text = f"{v:.{digits}f}{unit}"
    return text + (f" [{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]" if ci else "")


def fmt_memory(row: CompareRow) -> str:
    """'812.0 MiB (0.61x, host)'."""
    if row.peak_memory_bytes is None:
        return "n/a"
    extras = [f"{row.memory_ratio:.2f}x"] if row.memory_ratio is not None else []
    if row.memory_kind:
        extras.append(row.memory_kind)
    return fmt_bytes(row.peak_memory_bytes) + (f" ({', '.join(extras)})" if extras else "")


def fmt_speedup(row: CompareRow) -> str:
    if row.verdict == Verdict.BASELINE:
        return "1.00x (baseline)"
    return fmt_with_ci(row.speedup, row.speedup_ci95, 2, "x")


def steps_per_s_ci95(doc: RunSummary, step_ci: tuple[float, float] | None
                     ) -> tuple[float | None, tuple[float, float] | None]:
    """The run's throughput in steps/s (`RunSummary.step_rate`: `samples_per_s`, what every speed-up compares, per
    step; None when it has none) with its interval: the windows', else, for runs from before the windows, the median step's. The
    compare table and the baseline page's card both show this figure (the card once showed 1000 / median step,
    895 steps/s beside the table's 812 for one run).

    A secondary figure (one run's own rate, never a verdict): its interval only where it means something —
    `summary.throughput_ci`, the one rule the summary was written by (from at least
    `summary.MIN_INTERVAL_WINDOWS` windows, never degenerate); else none. The verdicts' statistics
    (`tfturbo.stats`, the trials) are not this function's."""
    tp = doc.throughput or {}
    batch = doc.batch_size
    rate = doc.step_rate  # the speed-up's own figure (`samples_per_s`) in steps/s: never a second rate
    if tp.get("windows"):  # a run measured in windows: their interval or none, never the median step's
        ci = doc.throughput_ci
        return rate, summ.interval_around(rate, (ci[0] / batch, ci[1] / batch)) if ci else None
    shown = (1000.0 / step_ci[1], 1000.0 / step_ci[0]) if step_ci and step_ci[0] > 0 else None
    return rate, (summ.interval_around(rate, shown) if rate is not None else shown)


MFU_SHOWN_FROM = 0.005  # below this an MFU rounds to "0%", which reads as a measured nothing: "—" with `mfu_why`


def fmt_mfu(mfu: float | None, unknown: str | None = None) -> str:
    """'23%': the share of this device's measured matmul FLOP/s the run reached; above 100% it says it cannot be a
    utilisation (the summary's `mfu_note` says why) instead of being capped; "—" when it is not known or rounds to
    0% (issue-42 walk: "0%" on every row of a small text model on a CPU), with `mfu_why` as its tooltip/footnote."""
    if mfu is None or mfu < MFU_SHOWN_FROM:
        return "—"
    return f"{mfu:.0%}" + (" (above its measured ceiling)" if mfu > 1 else "")


def mfu_why(mfu: float | None, unknown: str | None = None) -> str:
    """Why `fmt_mfu` shows "—" ('' when it shows a figure): not known (the run's `unknown` reason, or no FLOPs or
    no device peak measured), or a figure under 0.5%, given with its decimals."""
    if mfu is None:
        return f"MFU not known: {unknown}" if unknown else \
            "MFU not known: the run measured no FLOPs per step or no peak matmul rate for this device"
    if mfu < MFU_SHOWN_FROM:
        return (f"MFU {mfu:.2%}, under 0.5%: the model's matrix multiplies are too small a part of its step for the "
                "utilisation of this device's matmul rate to say anything")
    return ""


def fmt_xla(row: CompareRow) -> str:
    return "n/a" if row.jit_compile is None else "on" if row.jit_compile else "off"


def fmt_metric(v: float | None) -> str:
    return f"{v:.4f}" if v is not None else "n/a"


TEXT_HEADER = ("run", "status", "policy", "XLA", "batch", "steps/s [95% CI]", "speed-up [95% CI]",
               "verdict", "warm-up s", "peak memory", "MFU")


def text_cells(row: CompareRow, metrics: list[str]) -> list[str]:
    """One row of the compare table as display strings (terminal, GUI and report use these)."""
    return [row.name, row.status, row.policy or "n/a", fmt_xla(row),
            str(row.batch_size) if row.batch_size is not None else "n/a",
            fmt_with_ci(row.steps_per_s, row.steps_per_s_ci95, 2), fmt_speedup(row), row.verdict,
            fmt_num(row.warmup_s, 1), fmt_memory(row), fmt_mfu(row.mfu, row.mfu_unknown)] + \
        [fmt_metric(row.metrics.get(m)) for m in metrics] + [", ".join(row.findings) or "-"]


def fmt_settings_record(record: dict[str, Any]) -> str:
    """checkpoint/tfturbo-settings.yaml in one line: how the saved model was trained."""
    if not record:
        return "none (the run saved no checkpoint settings)"
    settings = trained_settings(record)
    if settings is None:
        return "unreadable (its settings are not valid)"
    parts = [settings.policy or "policy as written", f"jit_compile {settings.jit_compile}",
             f"batch {settings.batch_size if settings.batch_size is not None else 'n/a'}"]
    parts.append(f"learning rate {learning_rate_text(record)}")
    versions = record.get("versions")
    versions = versions if isinstance(versions, dict) else {}
    parts += [f"{name} {versions[key]}" for key, name in (("tensorflow", "TensorFlow"), ("keras", "Keras"))
              if versions.get(key)]
    if record.get("device"):
        parts.append(str(record["device"]))
    return ", ".join(parts)


def to_text(rows: list[CompareRow]) -> str:
    """An aligned plain-text table, then each run's warnings (truncated files, missing summary)."""
    if not rows:
        return "No runs to compare."
    metrics = metric_names(rows)
    header = list(TEXT_HEADER) + metrics + ["findings"]
    table = [header] + [text_cells(r, metrics) for r in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip() for line in table]
    lines.insert(1, "  ".join("-" * w for w in widths))
    base = next((r for r in rows if r.verdict == Verdict.BASELINE), None)
    if base is not None:
        lines.append("")
        lines.append(f"Speed-up is throughput per sample against {base.name}. Its 95% interval comes from "
                     "replicates (runs with the same settings); a configuration measured once has none, because "
                     "identical runs differ by more than one run's own noise — `tfturbo ab` measures a verdict.")
    lines += ["", f"settings record ({CHECKPOINT_DIR}/{CHECKPOINT_SETTINGS}):"]
    width = max(len(r.name) for r in rows)
    lines += [f"  {r.name.ljust(width)}  {fmt_settings_record(r.recorded_settings)}" for r in rows]
    for r in rows:
        for w in r.warnings:
            lines.append(f"warning: {r.name}: {w}")
    return "\n".join(lines)
