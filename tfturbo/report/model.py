"""What the report says, gathered from a study directory as plain data (no PDF here).

Everything the PDF shows is decided in this module, so it can be tested
without reading a PDF and reused by other front ends: which run is the
baseline, which rung is recommended, the configuration table (from
`tfturbo.compare`, so every number comes from the runs' summaries), the
curves, findings, the input probe, the settings records and the commands
that re-run each rung.

The study's ladder (study.yaml, written by `tfturbo tune` and read through
`Study.load`) decides which rungs were kept. Without a readable study.yaml the runs in runs/ are compared with
the first as baseline and the report says so.
"""

from __future__ import annotations

import math
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..findings import SIXTEEN_BIT_ONLY, FindingDoc
from .. import compare, protocol, summary as summ
from ..headline import Headline, config_words, headlines, reason_beside, step_words
from ..cli_args import run_argv
from ..console import fmt_bytes, fmt_bytes_apart
from ..errors import UserError
from ..learning_rate import rate_text
from ..numbers import counted, finite
from ..run_summary import RunSummary
from ..environment import Environment
from ..input_probe import InputProbe
from ..runfiles import RUNS_DIR, STUDY_YAML, RunRecord, load_study_runs
from ..scaling import ScalingResult
from ..settings import RunSettings, overlaid, switched_on_rows
from ..trials import label_free
from ..trials.runs import A, B
from ..trials.design import study_words
from ..trials.way_forward import for_rung
from ..trials.verdict import WORSE, AccuracyVerdict, SpeedVerdict, Tolerance
from ..tune import levers
from ..tune.batch import rule_of
from ..tune.options import rerun_argv
from ..tune.study import Rung, RungKind, Study, StudyMeasurement, StudyStatus, role_in_name
from . import profile_page
from ..verdicts import ProbeVerdict, Verdict
from ..workload_kind import measured_fit_text
from ..as_written import as_written_text, callbacks_not_run

MAX_POINTS = 400  # per curve; longer series are reduced to bin medians/means so the PDF stays small
STEP_TIME_POINTS = 150  # step times are noisy: at most this many bin medians per curve stay readable


@dataclass
class LadderRow:
    """One configuration of the study, as the table and the appendix show it."""

    name: str
    row: compare.CompareRow | None  # None: the ladder names a run that is not in runs/
    settings: RunSettings | None  # None: its run recorded no valid settings
    rung: Rung | None = None  # the study's ladder rung; None: a study without a ladder (every run a row)
    headline: Headline | None = None  # the configuration's one speed-up (tfturbo.headline), None: no trial
    memory: summ.MemoryChange | None = None  # its peak memory against the baseline's, over their runs
    # what it is against the ladder's baseline (`RunSettings.name_against`), for a rung without a run of its own
    # (a step not run): a row's own is `row.configuration`
    configuration: str = ""

    @property
    def kept(self) -> bool | None:
        """The ladder's decision; None when none was recorded (no ladder, or a trial that never finished)."""
        if self.rung is None:
            return None
        if self.rung.skipped_reason is not None:
            return False
        return self.rung.decision.kept if self.rung.decision else None

    @property
    def lever_title(self) -> str:
        """The lever's own words for what this rung changed ("" for the baseline or a run outside the ladder)."""
        kind = self.rung.kind if self.rung is not None else ""
        return next((lv.title for lv in levers.LEVERS if lv.rung_kind == kind), "")

    @property
    def reason(self) -> str:
        if self.rung is None:
            return ""
        if self.rung.skipped_reason is not None:
            return str(self.rung.skipped_reason)
        return self.rung.decision.reason if self.rung.decision else ""

    @property
    def decision_reason(self) -> str:
        """The reason for the Decision column, its speed said once per configuration (`headline.reason_beside`)."""
        if self.rung is None or self.rung.skipped_reason is not None:
            return self.reason
        return reason_beside(self.rung, self.headline)

    @property
    def status(self) -> str:
        if self.row:
            return self.row.status
        if self.rung is not None and self.rung.skipped_reason is not None:
            return "skipped"
        # e.g. failed before its run folder was written: study.yaml still says how it ended
        return (self.rung.summary.status if self.rung and self.rung.summary else None) or "missing"

    @property
    def compared_with(self) -> str | None:
        """The rung its trial measured it against."""
        return self.rung.compared_with if self.rung else None

    @property
    def speed(self) -> SpeedVerdict | None:
        """The trial's speed verdict when it measured a ratio; None for runs measured outside a trial."""
        decision = self.rung.decision if self.rung else None
        return decision.speed if decision is not None and finite(decision.speed.ratio) else None

    @property
    def accuracy(self) -> AccuracyVerdict | None:
        """The trial's accuracy verdict when it recorded one (a metric, or why there was none)."""
        decision = self.rung.decision if self.rung else None
        acc = decision.accuracy if decision is not None else None
        return acc if acc is not None and (acc.metric or acc.explanation) else None


@dataclass
class OutsideRun:
    """A run in runs/ that none of the study's decisions used (the appendix "Runs outside the decisions"): a run
    of a trial the ladder does not hold (stopped and measured again, repeated, abandoned after Esc), its reference
    runs on the baseline's settings among them, or a run the ladder's trial did not count. Never a row of the
    decisions, its charts or its numbers: its single-run rate would read as one more speed-up."""

    name: str  # its run folder: a secondary detail
    configuration: str  # what it trained, in words ("the baseline's settings (float32, batch 64)")
    status: str
    why: str  # why it is outside the decisions, in words
    run: str = ""  # the run in words: its configuration and pair ("mixed_bfloat16, pair 2")


@dataclass
class Curve:
    label: str
    x: list[float]
    y: list[float]
    clipped: list[float] = field(default_factory=list)  # x of the points drawn at the top edge (above the range)


@dataclass
class Plot:
    title: str
    x_label: str
    y_label: str
    curves: list[Curve]
    note: str = ""
    bands: list[tuple[float, float, str]] = field(default_factory=list)  # (x0, x1, "warm-up" | "profiler") shaded


@dataclass
class ReportData:
    study_dir: Path
    workload: str
    created: str
    device: str
    versions: dict[str, str]
    environment: Environment
    rungs: list[LadderRow]
    baseline: LadderRow | None
    tuned: LadderRow | None  # the recommended rung (None: keep the baseline)
    verdict: str
    recommended: RunSettings | None
    apply_rows: list[tuple[str, str]]
    findings: list[FindingDoc]
    probe: InputProbe | None
    plots: list[Plot]
    snippet: str | None
    commands: list[tuple[LadderRow | None, str]]  # (the rung, None: the whole study; its command line)
    warnings: list[str]
    has_ladder: bool
    metric: str | None
    options: dict[str, Any] = field(default_factory=dict)  # the tune options study.yaml recorded
    measurement: StudyMeasurement | None = None  # runs and replicate pairs (study.yaml; None: no study.yaml read)
    design: str = ""  # how the trials measured, in words (from the ladder's trial verdicts)
    scaling: ScalingResult | None = None  # STUDY/scaling/scaling.json, when the study measured scaling
    changes: list[str] = field(default_factory=list)  # the measured, kept changes in words (page 1)
    way_forward: list[tuple[str, list[str]]] = field(default_factory=list)  # rung -> what would decide its accuracy
    # rung -> the accuracy rule that judged it, when it is not the default (the way forward taken, the options)
    accuracy_rules: list[tuple[str, str]] = field(default_factory=list)
    time_went: Any = None  # profile_page.TimeWent: the baseline's and the recommended run's profiles
    measured_fit: str | None = None  # a training script's fit() call the runs measured, in words
    # the baseline: the script's own configuration in words, and the callbacks its runs left out (as_written)
    as_written: str | None = None
    callbacks_not_run: list[str] = field(default_factory=list)
    outside: list[OutsideRun] = field(default_factory=list)  # runs no decision used (appendix), ladder order kept


# ---------------------------------------------------------------- helpers

def _run_meta(record: RunRecord, key: str) -> Any:
    """A run's `versions`/`device`/`workload`: from summary.json, run.yaml, or its hello event."""
    if record.summary and getattr(record.summary, key):  # versions, device, workload: RunSummary fields
        return getattr(record.summary, key)
    if record.settings.get(key):
        return record.settings[key]
    for e in record.events:
        if e["type"] == protocol.HELLO:
            if key == "versions" and isinstance(e.get("versions"), dict):
                return e["versions"]
            if key == "device" and e.get("devices"):
                return ", ".join(_device_name(d) for d in e["devices"])
    return None


def _device_name(d: Any) -> str:
    if isinstance(d, dict):
        extra = [str(d[k]) for k in ("compute_capability",) if d.get(k)]
        name = f"{d.get('type', '')}: {d.get('name', '')}".strip(": ")
        return name + (f" (compute capability {extra[0]})" if extra else "")
    return str(d)


def _workload(study: Study, records: list[RunRecord]) -> str:
    if study.workload:
        return study.workload
    for r in records:
        meta = _run_meta(r, "workload")
        if isinstance(meta, dict) and (meta.get("spec") or meta.get("name")):
            return str(meta.get("spec") or meta.get("name"))
        settings = compare.run_settings(r)
        if settings is not None and settings.workload:
            return settings.workload
    return "unknown workload"


def _downsample(x: list[float], y: list[float], reduce: str = "median", points: int = MAX_POINTS
                ) -> tuple[list[float], list[float]]:
    """At most `points` points: each bin of consecutive points becomes (mean x, median or mean y)."""
    n = len(x)
    if n <= points:
        return x, y
    size = math.ceil(n / points)
    xs, ys = [], []
    for i in range(0, n, size):
        bx, by = x[i:i + size], sorted(y[i:i + size])
        xs.append(sum(bx) / len(bx))
        ys.append(by[len(by) // 2] if reduce == "median" else sum(by) / len(by))
    return xs, ys


def _label(rung: LadderRow, role: str) -> str:
    """A plotted run's legend entry: its role, then its configuration as every list names it ("tuned: XLA + batch
    128"); the baseline's by its settings ("baseline: float32, batch 64", its name would say "baseline" twice)."""
    if rung.row is None:
        return f"{role}: {rung.name}"
    return rung.row.configuration if role == "baseline" else f"{role}: {rung.row.configuration}"


# ---------------------------------------------------------------- the pieces

def _rungs(study: Study, rows: dict[str, compare.CompareRow], records: list[RunRecord]) -> list[LadderRow]:
    """The ladder's rungs in its order; without a ladder, every run (the first the baseline)."""
    shown = headlines(study.rungs)
    rungs = [LadderRow(r.name, rows.get(r.name), r.settings, r, headline=shown.get(r.name),
                       configuration=r.settings.name_against(study.rungs[0].settings))
             for r in study.rungs]
    named = {r.name for r in rungs}
    return rungs + [LadderRow(r.name, rows[r.name], compare.run_settings(r)) for r in records if r.name not in named]


def _settings_words(settings: RunSettings | None, baseline: Rung | None) -> str:
    """A run's configuration by what it is, as every list of configurations names it (`RunSettings.name_against`:
    "mixed_bfloat16", "baseline: float32, batch 64")."""
    if settings is None:
        return "settings not recorded"
    return settings.name_against(baseline.settings if baseline is not None else None)


def _outside(study: Study, records: list[RunRecord]) -> list[OutsideRun]:
    """The runs in runs/ that no rung of the ladder holds (its own run or its trial's replicates), each with what
    it trained and why no decision used it (`OutsideRun`)."""
    held = {r.name for r in study.rungs} | {n for r in study.rungs for n in r.replicates}
    rungs = {r.name: r for r in study.rungs}
    baseline = study.rungs[0] if study.rungs else None
    out = []
    for record in records:
        if record.name in held:
            continue
        settings = compare.run_settings(record)
        # a run no rung holds has no recorded role: its trial and arm as its trials named it (`role_in_name`)
        trial, role = role_in_name(record.name)
        status = str(compare.effective_summary(record).status or "crashed")
        if trial in rungs:
            why = f"a run of {config_words(trial, study.rungs)}'s trial that its verdict did not count"
        else:
            group = [(r, role_in_name(r.name)[1]) for r in records if role_in_name(r.name)[0] == trial]
            tried = [compare.run_settings(r) for r, its in group if its.arm != A]
            what = _settings_words(tried[0] if tried else settings, baseline)
            first = tried[0] if tried else None
            decided = next((r for r in study.rungs[1:] if r.skipped_reason is None and r.decision is not None
                            and first is not None and compare.replicate_key(r.settings) == compare.replicate_key(first)),
                           None)
            arm = "the reference arm of " if role.arm == A else ""
            if decided is not None:
                why = (f"{arm}a trial of {what} measured again and not in the ladder (stopped and redone, or "
                       f"repeated); the study decided this configuration in {step_words(decided.name, study.rungs)}")
            elif len(group) == 1:
                why = "a run that no trial of the study's ladder holds"
            else:
                why = f"{arm}a trial of {what} stopped before its verdict and never decided (abandoned)"
        if status != protocol.RunStatus.COMPLETED:
            why += f"; the run {status}"
        configuration = _settings_words(settings, baseline)
        which = f"pair {role.replicate}" if role.replicate > 0 else "trained from another seed"
        out.append(OutsideRun(record.name, configuration, status, why, f"{configuration}, {which}"))
    return out


def _baseline_name(study: Study, records: list[RunRecord]) -> str | None:
    """The first rung of the ladder that has a run, else the first run."""
    names = {r.name for r in records}
    first = next((r.name for r in study.rungs if r.name in names), None)
    return first or (records[0].name if records else None)


def _pick_tuned(rungs: list[LadderRow], baseline: LadderRow | None, study: Study, has_ladder: bool
                ) -> LadderRow | None:
    """The rung whose settings the study recommends; None when the baseline stays best."""
    candidates = [r for r in rungs if r is not baseline and r.row is not None]
    recommended = study.recommended
    named = study.recommended_rung
    if has_ladder and named is not None:
        return next((r for r in candidates if r.name == named), None)
    if has_ladder:
        kept = [r for r in candidates if r.kept]
        for r in reversed(kept):
            if recommended is not None and r.settings is not None and (
                    (r.settings.policy, r.settings.jit_compile, r.settings.batch_size)
                    == (recommended.policy, recommended.jit_compile, recommended.batch_size)):
                return r
        return kept[-1] if kept else None
    # No ladder: the fastest completed run that is faster beyond the noise.
    faster = [r for r in candidates if r.row is not None and r.row.status == protocol.RunStatus.COMPLETED
              and r.row.verdict == Verdict.FASTER]
    return max(faster, key=lambda r: (r.row.speedup if r.row else None) or 0.0) if faster else None


def _pct(ratio: float) -> str:
    return f"{abs(1 - ratio) * 100:.0f}%"


def _metric_phrase(metric: str, delta: float) -> str:
    return f"{metric} {AccuracyVerdict(metric, delta, None, '').shown(delta, ' percentage points')}"


def _outcome(rung: LadderRow) -> str:
    """'mixed_bfloat16, batch 64: 0.37x [0.29, 0.61] over 3 replicate pairs vs 01-baseline, slower' — one tried
    rung in a few words: its trial's speed verdict when the ladder has one, else the compare table's."""
    row = rung.row
    shown = rung.headline
    decision = rung.rung.decision if rung.rung else None
    if decision is not None and decision.speed.verdict == Verdict.NOT_APPLIED:  # measured nothing: say why
        return f"{row.label if row else rung.name}: {decision.speed.text()}"
    if row is not None and shown is not None:
        text = f"{row.label}: {shown.text('x')} over {counted(shown.pairs, 'replicate pair')} vs {shown.against_words}, {shown.verdict}"
        faster = shown.verdict == Verdict.FASTER
    elif row is None or row.speedup is None:
        return f"{row.label if row else rung.name}: {rung.status}"
    else:
        text = f"{row.label}: {compare.fmt_with_ci(row.speedup, row.speedup_ci95, 2, 'x')}, {row.verdict}"
        faster = row.verdict == Verdict.FASTER
    if row.status != protocol.RunStatus.COMPLETED:
        text += f" ({row.status})"
    elif rung.kept is False and faster:
        text += " but rejected (see the table)"
    return text


def _headline_trial(tuned: LadderRow, rungs: list[LadderRow]) -> LadderRow | None:
    """The rung whose trial gives the recommendation its headline against the baseline (`tfturbo.headline`):
    the confirmation, or the recommended rung itself; None when no trial measured it against the baseline."""
    shown = tuned.headline
    if shown is None or not shown.vs_baseline:
        return None
    return next((r for r in rungs if r.name == shown.trial), None)


def _verdict(baseline: LadderRow | None, tuned: LadderRow | None, rungs: list[LadderRow], probe: InputProbe | None,
             has_ladder: bool, docs: dict[str, RunSummary], records: dict[str, RunRecord]) -> str:
    """One paragraph in plain words: speed-up with its interval, memory, accuracy."""
    if probe is not None and probe.verdict == ProbeVerdict.INPUT_BOUND:
        frac = probe.input_fraction
        share = f" (about {frac:.0%} of each step waits for data)" if finite(frac) else ""
        return (f"The training job is input-bound{share}: the input pipeline, not the device, limits the step "
                "rate, so precision and XLA changes cannot speed it up. Fix the input pipeline first (see the "
                "findings), then run the study again.")
    if baseline is None or baseline.row is None or baseline.row.step_ms is None:
        return ("No baseline run with steady-state step times was found, so no speed-up can be stated. "
                "See the warnings section for what is missing.")
    base = baseline.row
    source = "" if has_ladder else ("This study has no readable ladder decisions (study.yaml), so the runs are "
                                    f"compared with the first one, {baseline.name}. ")
    if tuned is None or tuned.row is None:
        why = "; ".join(_outcome(r) for r in rungs if r is not baseline)
        return (source + f"No configuration was measurably faster than the baseline ({base.label}) without losing "
                "accuracy on this hardware, so the recommendation is to keep the baseline settings."
                + (f" Tried: {why}." if why else ""))
    row = tuned.row
    trial = _headline_trial(tuned, rungs)
    shown = tuned.headline
    if trial is not None and trial.speed is not None and shown is not None:
        # the configuration's one number (`tfturbo.headline`): every pair that compared it with the baseline, its
        # own trial's and the confirmation's pooled, as page 1 says it — never the last trial's pairs alone (the
        # walk's report read 2.75x on page 1 and "2.84x ... over 4 pairs" here)
        lo, hi = shown.ci95
        text = (source + f"Training with {row.label} is {shown.ratio:.2f}x as fast as the baseline ({base.label}), "
                f"measured as throughput per sample side by side with it (95% interval {lo:.2f}x to {hi:.2f}x over "
                f"{counted(shown.pairs, 'interleaved replicate pair')}, so run-to-run variation is included; "
                f"{shown.verdict}). ")
    elif tuned.speed is not None:  # its trial was against an earlier rung, and no confirmation followed
        speed = tuned.speed
        lo, hi = speed.ci95
        single = f" (one run of each: {row.speedup:.2f}x, without an interval)" if row.speedup is not None else ""
        text = (source + f"Training with {row.label} is recommended: it was {speed.ratio:.2f}x as fast as "
                f"{tuned.compared_with}, the configuration kept before it (95% interval {lo:.2f}x to "
                f"{hi:.2f}x over {counted(speed.replicates, 'interleaved replicate pair')}; {speed.verdict}). "
                f"It was not measured side by side with the baseline ({base.label}), so no interval against the "
                f"baseline can be stated{single}. ")
    elif row.speedup_ci95 is not None:
        lo, hi = row.speedup_ci95
        text = (source + f"Training with {row.label} is {row.speedup:.2f}x as fast as the baseline ({base.label}), "
                f"measured as throughput per sample (95% confidence interval {lo:.2f}x to {hi:.2f}x over the "
                f"replicate runs of each, {row.verdict if row.verdict != 'faster' else 'faster beyond the noise'}). ")
    else:
        ratio = f"{row.speedup:.2f}x as fast as" if row.speedup is not None else "compared with"
        text = (source + f"Training with {row.label} is {ratio} the baseline ({base.label}) in throughput per "
                "sample, measured by one run of each, so without an interval: identical runs differ by more "
                "than one run's own noise. ")
    text += _memory_sentence(baseline, tuned, records)
    if not compare.mfu_why(row.mfu, row.mfu_unknown):
        text += (f"Model FLOP utilisation (MFU, the share of the matrix-multiply rate this device measured that "
                 f"the training reaches) is {compare.fmt_mfu(row.mfu)}"
                 + (f", the baseline's {compare.fmt_mfu(base.mfu)}" if not compare.mfu_why(base.mfu) else "") + ". ")
    elif row.mfu is not None or row.mfu_unknown:  # "0%" would read as a measured nothing: the reason instead
        text += f"{compare.mfu_why(row.mfu, row.mfu_unknown)}. "
    judged = trial if trial is not None else tuned  # every trial judges accuracy against the baseline
    if judged.accuracy is not None:
        acc = judged.accuracy
        seen = "equal" if acc.exact_points() else "the nearest"  # acc.text() says how far apart, then
        examples = f" on {acc.paired_on()} at {seen} samples seen" if acc.paired else ""
        text += f"Accuracy against the baseline{examples}: {acc.text()} — {acc.verdict}." + acc.outputs_sentence()
        return text
    acc = label_free.compare_runs([(docs[baseline.name], baseline.row.path if baseline.row else None)],
                                  [(docs[tuned.name], tuned.row.path if tuned.row else None)], Tolerance())
    if acc.metric is None or not acc.checked:
        text += "No validation metric was recorded to check accuracy."
    elif acc.delta is None:
        text += f"Accuracy could not be checked: {acc.text()}."
    else:
        seen = "equal" if acc.exact_points() else "the nearest"
        text += (f"Accuracy against the baseline at {seen} samples seen: {acc.text()} — {acc.verdict}"
                 + (" (lost beyond the tolerance)." if acc.verdict == WORSE else "."))
    return text


def _own_process_peaks(settings: RunSettings | None, records: dict[str, RunRecord]) -> list[int | None]:
    """`compare.own_process_peaks` of the study's run folders (none for a row without settings)."""
    if settings is None:
        return []
    return compare.own_process_peaks(settings, ((compare.run_settings(r), r.summary) for r in records.values()))


def _memory_sentence(baseline: LadderRow, tuned: LadderRow, records: dict[str, RunRecord]) -> str:
    """Peak memory before and after, a change claimed only beyond the runs' own spread (`summary.MemoryChange`)."""
    change = summ.memory_change(_own_process_peaks(baseline.settings, records),
                                _own_process_peaks(tuned.settings, records))
    return memory_words(change, tuned.row.memory_kind if tuned.row else None)


def memory_words(change: summ.MemoryChange | None, memory_kind: str | None) -> str:
    """The verdict's sentence on peak memory."""
    if change is None:
        return ""
    kind = "device" if memory_kind == "device" else "host"
    before, after = fmt_bytes_apart(change.before_bytes, change.after_bytes)
    runs = counted(len(change.before) + len(change.after), "run")
    if change.spread is None:
        return (f"Peak {kind} memory: {before} before, {after} after (one run of each, so how much identical runs "
                "differ is not known and no change is claimed). ")
    spread = (f"runs of one configuration differ by up to {fmt_bytes(change.spread)}" if change.spread else
              "every run of each configuration peaked the same") + f", over {runs}"
    if not change.beyond_spread:
        return f"Peak {kind} memory is about the same ({before} and {after}; {spread}). "
    return (f"Peak {kind} memory is {_pct(change.ratio)} {'lower' if change.ratio < 1 else 'higher'} ({before} to "
            f"{after}, the median of each configuration's runs; {spread}). ")


def _apply_rows(tuned: LadderRow | None, baseline: LadderRow | None, recommended: RunSettings | None
                ) -> list[tuple[str, str]]:
    """The settings to apply, each with the value the study recommends (none when nothing was measured)."""
    rung = tuned or baseline
    if rung is None or rung.row is None:
        return []
    settings = overlaid(rung.settings, recommended)
    if settings is None:
        return []
    row = rung.row
    lr_text = (row.learning_rate_schedule or (rate_text(row.learning_rate) if row.learning_rate is not None else "")
               ) if row else ""
    lr_text = lr_text or "the workload's own"
    scale = settings.lr_scale
    if finite(scale) and scale != 1.0:
        lr_text += f" (the workload's rate x {scale:.3g} for the larger batch{_rule_words(settings, baseline)})"
    rows = [("Precision policy", str(settings.policy)),
            ("jit_compile (XLA)", str(bool(settings.jit_compile))),
            ("Batch size", str(settings.batch_size or "the workload's default")),
            ("Learning rate", lr_text)]
    return rows + switched_on_rows(settings)


def _rule_words(settings: RunSettings, baseline: LadderRow | None) -> str:
    """", the square-root rule": the learning-rate rule the recommended batch's scale follows (`tune.batch`)."""
    base = baseline.settings if baseline is not None else None
    b, b0, scale = settings.batch_size, base.batch_size if base else None, settings.lr_scale
    if not (isinstance(b, int) and isinstance(b0, int) and b0 and finite(scale) and base is not None):
        return ""
    rule = rule_of(b / b0, scale / float(base.lr_scale or 1.0))
    return f", the {rule.name} rule" if rule is not None else ""


def _changes(tuned: LadderRow | None, baseline: LadderRow | None, recommended: RunSettings | None) -> list[str]:
    """Each measured, kept change from the baseline to the recommendation, in words (page 1; the code to apply,
    changes.patch, shows them as a patch of the user's file)."""
    if tuned is None or baseline is None:
        return []
    rec = overlaid(tuned.settings, recommended)
    base = baseline.settings
    if rec is None or base is None:
        return []
    out = []
    if rec.policy is not None and rec.policy != base.policy:
        out.append(f'Train in {rec.policy} precision: keras.mixed_precision.set_global_policy("{rec.policy}") '
                   "before the model is built" + (", with the output layer in float32" if rec.sixteen_bit else ""))
    if rec.jit_compile and not base.jit_compile:
        out.append("Compile the training step with XLA: model.compile(..., jit_compile=True)")
    elif rec.jit_compile is False and base.jit_compile:  # the script compiles with XLA and it lost
        out.append("Compile the training step without XLA: model.compile(..., jit_compile=False)")
    if rec.xla_autoclustering and not base.xla_autoclustering:
        out.append('Turn on XLA auto-clustering: tf.config.optimizer.set_jit("autoclustering")')
    if rec.steps_per_execution is not None and rec.steps_per_execution != base.steps_per_execution:
        out.append(f"Run {rec.steps_per_execution} steps per call: "
                   f"model.compile(..., steps_per_execution={rec.steps_per_execution})")
    if rec.batch_size and base.batch_size and rec.batch_size != base.batch_size:
        lr = f", with the learning rate x {rec.lr_scale / base.lr_scale:g}" if rec.lr_scale != base.lr_scale else ""
        out.append(f"Train with batch size {rec.batch_size} instead of {base.batch_size}{lr}")
    if rec.input_fixes and not base.input_fixes:
        out.append("Apply the measured input-pipeline fixes at the end of make_datasets() (the code is under "
                   "Settings to apply)")
    if rec.drop_remainder and not base.drop_remainder:
        out.append("Drop the partial last batch: .batch(..., drop_remainder=True)")
    return out


def _design(rungs: list[Rung]) -> str:
    """How the trials measured, in words: the first trial's design with the number of pairs of every trial (the
    first's alone read "4 replicate pairs" for trials of 4, 6, 5 and 3 pairs) and the range of their steady
    seconds (`trials.design.study_words`). A study from before the design was recorded as data keeps the first
    trial's words as written, with the range of pairs said before them."""
    trials = [r.decision for r in rungs if r.decision and r.decision.design and r.kind != RungKind.BASELINE]
    if not trials:
        return ""
    if all(d.design_record is not None for d in trials):
        return study_words([(d.design_record, d.accuracy) for d in trials if d.design_record is not None])
    pairs = sorted({d.speed.replicates for d in trials})
    if len(pairs) == 1:
        return trials[0].design
    return f"{pairs[0]} to {pairs[-1]} replicate pairs per trial (each row gives its own); the first trial: " \
           f"{trials[0].design}"


def validation_examples(rungs: list[LadderRow]) -> int | None:
    """The number of validation examples the accuracy gates compared (the data may hold fewer than the
    `val_examples` setting asks for)."""
    counts = [r.accuracy.examples for r in rungs if r.accuracy is not None and r.accuracy.examples]
    return max(counts) if counts else None


def _findings(study: Study, records: list[RunRecord], kept: list[LadderRow | None]) -> list[FindingDoc]:
    """The study's findings, then each run's, without repeats; each tagged with the run it came from and whether it
    `applies` to the kept settings (the `kept` rows': the recommendation's and the baseline's): a finding that only
    runs of other configurations raised (a 16-bit run's, an XLA run's, when neither was kept) did not apply to them
    (issue 42: three red ERRORs under a "keep the current settings" study). A rung's configuration is its ladder
    settings, as the kept rows have them."""
    settings = {r.name: compare.run_settings(r) for r in records} | {r.name: r.settings for r in study.rungs}
    keys = {compare.replicate_key(row.settings) for row in kept if row is not None and row.settings is not None}
    # the study's own findings (the audit's) apply to what was kept, but those about a 16-bit policy only when the
    # kept settings train in 16-bit (issue 42 walk: HEAD_NOT_FLOAT32 a red ERROR under a float32 recommendation)
    written = study.as_written()  # a policy left as written is the script's own
    own = (written.get("policy") if written else None) or "float32"
    kept_16 = any(str(row.settings.policy or own) != "float32" for row in kept
                  if row is not None and row.settings is not None)
    sources: dict[tuple[str, str, str], list[str]] = {}
    out: list[FindingDoc] = []
    study_level = [study.audit, study.probe.findings if study.probe else [],
                   study.probe_input_fixes.findings if study.probe_input_fixes else []]
    groups = [("study", f) for group in study_level for f in group] + \
        [(r.name, f) for r in study.rungs for f in (r.summary.findings if r.summary else None) or []] + \
        [(r.name, f) for r in study.rungs for f in (r.decision.findings if r.decision else [])] + \
        [(r.name, f) for r in records for f in r.findings()] + \
        [("", f) for f in study.recorded_findings]  # the union study.yaml wrote: only what nothing above says
    for source, f in groups:
        if not isinstance(f, dict):
            continue
        key = (str(f.get("code")), str(f.get("where")), str(f.get("message")))
        if key not in sources:
            sources[key] = []
            out.append({**f, "source": source or "study"})
        elif not source:
            continue
        sources[key].append(source or "study")
    for f in out:
        key = (str(f.get("code")), str(f.get("where")), str(f.get("message")))
        study_applies = kept_16 or f.get("code") not in SIXTEEN_BIT_ONLY
        f["applies"] = not keys or any((study_applies if s == "study" else
                                        (setting := settings.get(s)) is None
                                        or compare.replicate_key(setting) in keys)
                                       for s in sources[key])
    return out


def _speed_pairs(rung: Rung) -> dict[int, tuple[str, str]]:
    """k -> (A's run, B's run) of each of the rung's trial's pairs, by the roles study.yaml records (`Rung.role`;
    B's first run is the rung's own); A runs of other seeds (replicate < 1) are no pair."""
    names = [rung.name, *rung.replicates]
    by_role = {(role.arm, role.replicate): n for n in names if not (role := rung.role(n)).seed}
    return {k: (a, by_role[B, k]) for (arm, k), a in sorted(by_role.items()) if arm == A and (B, k) in by_role}


def _median_pair(rung: Rung, records: dict[str, RunRecord]) -> tuple[int, RunRecord, RunRecord] | None:
    """(k, A, B) of the trial's pair with the median B/A throughput ratio: two runs of one pair (from pair 2 on,
    measured side by side in one process), never an A and a B taken from different pairs."""
    pairs = []
    for k, (a_name, b_name) in _speed_pairs(rung).items():
        a, b = records.get(a_name), records.get(b_name)
        rate_a = compare.effective_summary(a).samples_per_s if a is not None else None
        rate_b = compare.effective_summary(b).samples_per_s if b is not None else None
        if rate_a and rate_b and a is not None and b is not None:
            pairs.append((rate_b / rate_a, k, a, b))
    if not pairs:
        return None
    pairs.sort(key=lambda p: (p[0], p[1]))
    _, k, a, b = pairs[(len(pairs) - 1) // 2]
    return k, a, b


def _plotted_runs(baseline: LadderRow | None, tuned: LadderRow | None, rungs: list[LadderRow],
                  all_records: dict[str, RunRecord], validated: bool = False) -> list[tuple[str, RunRecord, int]]:
    """(label, run, batch) to plot: the headline trial's median pair (the two arms its speed verdict compared,
    measured side by side) or, `validated`, its first pair (the runs the accuracy gate compared: the
    later pairs measure speed only, without validation), else the rungs' own runs."""
    trial = None
    if tuned is not None and tuned.headline is not None and tuned.headline.vs_baseline:
        trial = next((r for r in rungs if r.name == tuned.headline.trial and r.rung is not None), None)
    if trial is not None and tuned is not None and trial.rung is not None and trial.rung.replicates:
        base_batch = baseline.row.batch_size if baseline and baseline.row else None
        tuned_batch = tuned.row.batch_size if tuned.row else None
        if validated:  # B's full-length run against A's, or the baseline run when the trial trained no A that long
            a = all_records.get(f"{trial.name}.a1") or (all_records.get(baseline.name) if baseline else None)
            b = all_records.get(trial.name)
            words = ("the accuracy gate's run", "the accuracy gate's run")
        else:
            found = _median_pair(trial.rung, all_records)
            a, b = found[1:] if found else (None, None)
            n_pairs = len(_speed_pairs(trial.rung))
            words = (f"the median pair, {found[0]} of {n_pairs}",) * 2 if found else ("", "")
        if a is not None and b is not None:
            return [(f"{_label(baseline, 'baseline') if baseline else 'baseline'} ({words[0]})", a, base_batch or 1),
                    (f"{_label(tuned, 'tuned')} ({words[1]})", b, tuned_batch or 1)]
    if tuned is not None:
        pairs = [(baseline, "baseline"), (tuned, "tuned")]
    else:  # nothing to recommend: show what was tried against the baseline
        pairs = [(baseline, "baseline")] + [(r, "tried") for r in rungs if r is not baseline and r.row is not None]
    return [(_label(r, role), all_records[r.name], (r.row.batch_size if r.row else None) or 1)
            for r, role in pairs if r is not None and r.name in all_records]


def _plots(baseline: LadderRow | None, tuned: LadderRow | None, rungs: list[LadderRow], records: dict[str, RunRecord],
           metric: str | None) -> list[Plot]:
    """Step time, loss and the validation metric of the runs the headline compared, every step shown (warm-up
    and the profiler window shaded, not hidden), aligned by samples seen when the batch sizes differ."""
    plotted = _plotted_runs(baseline, tuned, rungs, records)
    validated = _plotted_runs(baseline, tuned, rungs, records, validated=True)
    by_samples = len({batch for _, _, batch in plotted}) > 1
    x_label = "samples seen" if by_samples else "step"
    step_curves, loss_curves, val_curves, bands = [], [], [], []
    longest, medians = 0, []
    for label, record, batch in plotted:
        scale = batch if by_samples else 1
        series = record.steps()
        steady_steps_, steady_ms = compare.steady_steps(record)
        per = (1000.0 / batch) if by_samples else 1.0  # ms per step -> µs per sample when batches differ
        pts = [(float(s) * scale, float(ms) * per) for s, ms in zip(series.step, series.step_ms)
               if isinstance(s, int) and finite(ms)]
        if pts:
            step_curves.append(Curve(label, *_downsample([p[0] for p in pts], [p[1] for p in pts],
                                                         points=STEP_TIME_POINTS)))
            longest = max(longest, len(pts))
        if steady_ms:
            medians.append(sorted(steady_ms)[len(steady_ms) // 2] * per)
            first = steady_steps_[0]
            if series.step and first > series.step[0]:
                bands.append((float(series.step[0]) * scale, float(first) * scale, "warm-up"))
        for lo, hi in compare.steady_windows(record.events)[1]:
            if math.isfinite(hi):
                bands.append((float(lo) * scale, float(hi) * scale, "profiler"))
        loss = [(float(s) * scale, float(v)) for s, v in zip(series.step, series.loss) if finite(v)]
        if loss:
            loss_curves.append(Curve(label, *_downsample([p[0] for p in loss], [p[1] for p in loss], "mean")))
    for label, record, batch in validated:
        scale = batch if by_samples else 1
        validation = (record.summary.validation if record.summary else None) or \
            [{"step": e.get("step"), "metrics": e.get("metrics")} for e in record.validation()]
        vpts = [(float(v["step"]) * scale, float(v["metrics"][metric])) for v in validation
                if isinstance(v, dict) and finite(v.get("step")) and isinstance(v.get("metrics"), dict)
                and finite(v["metrics"].get(metric))] if metric else []
        if vpts:
            val_curves.append(Curve(label, [p[0] for p in vpts], [p[1] for p in vpts]))
    clipped = _clip_spikes(step_curves, 2 * max(medians)) if medians else ""
    if longest > STEP_TIME_POINTS:
        clipped += (f" Each point is the median of {math.ceil(longest / STEP_TIME_POINTS)} consecutive steps "
                    "(fewer for shorter runs).")
    unit = "µs per sample" if by_samples else "ms per step"
    why = ("The batch sizes differ, so the runs are aligned by samples seen and the time is per sample. "
           if by_samples else "")
    plots = [Plot("Time per sample" if by_samples else "Step time", x_label, unit, step_curves,
                  why + "Every step is drawn; the shaded warm-up (tracing, XLA compilation) and profiler window are "
                  "left out of the statistics." + clipped, bands=_merged(bands)),
             Plot("Training loss", x_label, "loss", loss_curves),
             Plot(f"Validation: {metric}" if metric else "Validation", x_label, metric or "", val_curves,
                  ("The runs the accuracy gate compared (each trial's full-length runs validate; its speed "
                   "pairs measure speed only). " if [r.path for _, r, _ in validated] != [r.path for _, r, _ in plotted]
                   else "")
                  + "Same seed and data order in every run" + ("; the larger batch trains on as many samples in "
                                                                "fewer steps." if by_samples else "."))]
    return [p for p in plots if p.curves]


def _merged(bands: list[tuple[float, float, str]]) -> list[tuple[float, float, str]]:
    """One band per kind over the runs' overlapping windows (the runs' warm-ups end at different steps)."""
    out: list[tuple[float, float, str]] = []
    for lo, hi, kind in sorted(bands, key=lambda b: (b[2], b[0])):
        if out and out[-1][2] == kind and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi), kind)
        else:
            out.append((lo, hi, kind))
    return out


def _clip_spikes(curves: list[Curve], limit: float) -> str:
    """Clamp steps slower than `limit` (2x the slowest steady median) to it, marked, so a
    warm-up or one 35 ms spike does not flatten 1-4 ms lines; returns the sentence that says so."""
    n = 0
    for c in curves:
        c.clipped = [x for x, v in zip(c.x, c.y) if v > limit]
        n += len(c.clipped)
        c.y = [min(v, limit) for v in c.y]
    if not n:
        return ""
    shown = f"{limit:,.0f}" if limit >= 100 else f"{limit:.3g}"
    return f" {counted(n, 'point')} above {shown} (warm-up, spikes) are drawn at the top edge and marked with a triangle."


def _snippet(workload: str, recommended: RunSettings, baseline: LadderRow | None, findings: list[FindingDoc],
             baseline_summary: RunSummary | None = None) -> str | None:
    """The code to apply of a study that recorded none (written before the patch, or stopped before its end):
    the recommendation's patch of the workload's file, made now and not checked (`tune.code_changes`)."""
    from ..patch.document import ChangesPatch
    from ..tune.code_changes import recommended_patch

    try:
        patch = recommended_patch(workload, recommended, baseline.settings if baseline else None,
                                  findings, baseline_summary)
        label = recommended.label()
        return ChangesPatch(label, patch).text()
    except Exception as e:  # noqa: BLE001 - the code is an aid; a failure must not cost the user the report
        return f"# the code to apply could not be made: {type(e).__name__}: {e}"


def _commands(study_dir: Path, rungs: list[LadderRow], workload: str, options: dict[str, Any]
              ) -> list[tuple[LadderRow | None, str]]:
    """`tfturbo tune ...` for the whole study and `tfturbo run ...` for each rung that ran (into a fresh
    directory, so it never overwrites the study); a skipped rung never ran, so it has no command."""
    out: list[tuple[LadderRow | None, str]] = [(None, shlex.join(rerun_argv(workload, options, f"{study_dir.name}-rerun")))]
    for rung in rungs:
        if rung.rung is not None and rung.rung.skipped_reason is not None:
            continue
        settings = rung.settings
        if settings is None:
            continue
        if not settings.workload:
            settings = settings.with_(workload=workload)
        out.append((rung, shlex.join(["tfturbo", "run", *run_argv(settings, f"rerun/{rung.name}")])))
    return out


def _warnings(study_warnings: list[str], rungs: list[LadderRow]) -> list[str]:
    """The study's own warnings, then one line per run that did not complete or was not read in full."""
    out = list(study_warnings)
    for rung in rungs:
        if rung.row is None:
            if rung.status == "missing":
                out.append(f"{rung.name} (MISSING): the study's ladder names this run but runs/{rung.name} is not "
                           "there; its numbers are not shown")
            continue
        problems = list(rung.row.warnings)
        if rung.row.status != protocol.RunStatus.COMPLETED:
            problems = [p for p in problems if p != rung.row.missing_summary]  # said in its own words below
            problems.insert(0, "no summary.json, so its numbers are what its events recorded before it stopped"
                            if not rung.row.from_summary else "its summary holds what it measured before it stopped")
        if problems:
            out.append(f"{rung.name} ({rung.row.status.upper()}): " + "; ".join(problems))
    return out


# ---------------------------------------------------------------- entry point

def gather(study_dir: str | Path) -> ReportData:
    """Everything the report shows, read from a study directory."""
    study_dir = Path(study_dir)
    if not study_dir.is_dir():
        raise UserError(f"{study_dir} is not a directory", "pass a study directory written by `tfturbo tune`")
    record = load_study_runs(study_dir)
    if not record.runs and not (study_dir / STUDY_YAML).is_file():
        raise UserError(f"{study_dir} holds no runs (no {RUNS_DIR}/ with run directories) and no {STUDY_YAML}",
                        "pass a study directory written by `tfturbo tune`")
    study = Study.load(study_dir)
    # A study with no runs still has a story to tell (an input-bound job stops after the probe).
    has_ladder = bool(study.rungs)
    stopped_early = study.status == StudyStatus.STOPPED_INPUT_BOUND  # no runs is the expected outcome, not a problem
    warnings = study.problems + [w for w in record.warnings if not (stopped_early and "runs/" in w)]
    if not has_ladder and record.runs:
        warnings.append(f"{STUDY_YAML} has no ladder decisions: the runs are compared with the first as baseline")
    if study.status in (StudyStatus.RUNNING, StudyStatus.INTERRUPTED, StudyStatus.FAILED):
        message = f": {study.message}" if study.message else ""
        warnings.append(f"the study did not finish (status {study.status}){message}; "
                        "this report shows the rungs it completed")
    # a rung's other replicates (NN-slug.a1, .b2, ...) are measurements of its trial, not rungs of their own
    replicas = {n for r in study.rungs for n in r.replicates if n != r.name}
    every_run = {r.name: r for r in record.runs}  # replicates included: the plots draw the trial's median runs
    record.runs = [r for r in record.runs if r.name not in replicas]
    # with a ladder, the report holds only its decisions: every other run goes to the appendix, never into a
    # row, a chart or a pooled number (a replicate of the baseline's settings read as "1.68x")
    outside = _outside(study, record.runs) if has_ladder else []
    left_out = {o.name for o in outside}
    # their unreadable files are still said in the warnings (each run on its own: no baseline, no pooling)
    outside_rows = [LadderRow(r.name, row, None) for r in record.runs if r.name in left_out
                    for row in compare.compare_runs([r])]
    record.runs = [r for r in record.runs if r.name not in left_out]
    every_run = {n: r for n, r in every_run.items() if n not in left_out}
    runs = {r.name: r for r in record.runs}
    base_name = _baseline_name(study, record.runs)
    # the ladder's order first, then any other run
    ordered = [runs[r.name] for r in study.rungs if r.name in runs]
    ordered += [r for r in record.runs if r not in ordered]
    rows = {row.name: row for row in compare.compare_runs(ordered, base_name if base_name is not None else 0)}
    rungs = _rungs(study, rows, ordered)
    baseline = next((r for r in rungs if r.name == base_name), None)
    if baseline is not None:
        base_peaks = _own_process_peaks(baseline.settings, every_run)
        for r in rungs:
            r.memory = summ.memory_change(base_peaks, _own_process_peaks(r.settings, every_run))
    recommended = study.recommended
    tuned = _pick_tuned(rungs, baseline, study, has_ladder)
    docs = {r.name: compare.effective_summary(r) for r in ordered}
    base_record = runs.get(base_name) if base_name else None
    primary = docs[base_record.name].primary_metric() if base_record else None
    metric = primary[0] if primary and primary[0].startswith("val_") else None
    findings = _findings(study, ordered, [tuned, baseline])
    workload = _workload(study, ordered)
    ref = base_record or (ordered[0] if ordered else None)
    env = study.environment or Environment()
    scaling = ScalingResult.load(study_dir)
    if scaling is not None:
        warnings += [f"scaling: {p}" for p in scaling.problems]
    device = (_run_meta(ref, "device") if ref else None) or \
        ", ".join(_device_name(d) for d in env.devices) or "unknown"
    versions = (_run_meta(ref, "versions") if ref else None) or \
        {k: v for k, v in (("tensorflow", env.tensorflow), ("keras", env.keras)) if v}
    return ReportData(
        study_dir=study_dir, workload=workload, created=study.created or "not recorded",
        device=str(device), versions={str(k): str(v) for k, v in (versions or {}).items()}, environment=env,
        rungs=rungs, baseline=baseline, tuned=tuned,
        verdict=_verdict(baseline, tuned, rungs, study.probe, has_ladder, docs, every_run),
        recommended=recommended, apply_rows=_apply_rows(tuned, baseline, recommended),
        findings=findings, probe=study.probe, plots=_plots(baseline, tuned, rungs, every_run, metric),
        snippet=study.snippet if study.snippet and study.snippet.strip() else
        _snippet(study.workload, recommended or (tuned.settings if tuned else None) or RunSettings(), baseline,
                 findings, docs.get(base_name or "")),
        commands=_commands(study_dir, rungs, workload, study.options or {}), warnings=_warnings(warnings, rungs + outside_rows),
        has_ladder=has_ladder, metric=metric, options=study.options,
        measurement=study.measurement() if study.status else None,  # (no status: no study.yaml was read)
        design=_design(study.rungs),
        scaling=scaling if scaling is not None and scaling.points else None,
        changes=_changes(tuned, baseline, recommended),
        way_forward=[(r.name, w.lines()) for r in study.rungs
                     if (w := for_rung(study_dir, r, Tolerance.from_dict((study.options or {}).get("tolerance")),
                                       study.baseline)) is not None],
        accuracy_rules=[(r.name, text) for r in study.rungs if r.decision is not None
                        and (text := r.decision.rule_text())],
        time_went=profile_page.gather(study_dir, baseline, tuned, rungs, findings),
        measured_fit=measured_fit_text(  # in words (a client reads it), the flag a labelled detail
            _run_meta(ref, "workload"), "another is measured by choosing it as the app's “Measured fit()” (command line "
                                        "--fit-call N)")
        if ref else None,
        as_written=as_written_text(study.as_written()) or None,
        callbacks_not_run=callbacks_not_run(study.as_written()),
        outside=outside,
    )
