"""A tuning study: its rungs, their decisions, and the two documents made from them.

`study.yaml` and the `tune --json` document
come from the same ladder entries, so what a script reads and what the
report and wizard read never disagree. study.yaml is rewritten after every
rung: a study stopped by Ctrl-C or a crash still says what it decided.

study.yaml keys: format, tool, workload, created, status (running |
completed | input_bound | failed | interrupted), message, environment (the
`env` document), options, audit (findings), probe (the `probe-input`
document), probe_input_fixes (the probe again with --input-fixes, when the
input_pipeline rung was kept), ladder (entries as in `tune --json`), recommended (settings or
null), findings, measurement (runs and pairs per rung), snippet (the text of changes.patch: the code to
apply), patch (`ChangesPatch.to_dict`: the file it changes, the patched copy, what was placed and what
was left to the user, the check), report.
`Study.load` is its typed inverse, the one reader of study.yaml: rungs come
back as `Rung`s with their run's summary read from its run directory, and
keys this version does not know are kept and written back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, TypedDict, cast

from ..findings import FindingDoc, findings_in
from .. import __version__
from ..as_written import AsWritten
from ..environment import Environment
from ..errors import UserError
from ..formats import check_version
from ..input_probe import InputProbe
from ..patch.document import PatchDoc
from ..numbers import json_safe, num
from ..run_summary import BOOL, DICT, INT, LIST, NUMBER, STR, RunSummary, read_typed
from ..runfiles import RUNS_DIR, STUDY_YAML, load_run, read_yaml, safe_child, write_yaml
from ..settings import RunSettings
from ..trials.runs import A, B, RunRole, RunRoleDoc
from ..trials.verdict import TrialVerdict, TrialVerdictDoc
from .skip import Skip, SkipDoc

STUDY_FORMAT = 1

# study.yaml's keys and their types (checked on load); findings and measurement are derived again on save
_STUDY_KINDS = {"format": INT, "tool": STR, "workload": STR, "created": STR, "status": STR, "message": STR,
                "environment": DICT, "options": DICT, "audit": DICT, "probe": DICT, "probe_input_fixes": DICT, "ladder": LIST,
                "recommended": DICT, "recommended_rung": STR, "findings": LIST, "measurement": DICT,
                "snippet": STR, "patch": DICT, "report": STR, "as_written": DICT}
# what a ladder entry records of its own; the rest of its keys are derived from its run's summary on save
_ENTRY_KINDS = {"name": STR, "rung": STR, "run": STR, "settings": DICT, "status": STR, "skipped": BOOL,
                "compared_with": STR, "replicates": LIST, "kept": BOOL, "reason": STR, "findings": LIST,
                "speed": DICT, "accuracy": DICT, "design": STR, "run_seconds": NUMBER, "rule": DICT,
                "way_forward": STR, "steady_s": NUMBER, "design_record": DICT, "roles": DICT,
                "speed_said": STR, "reason_parts": LIST, "skip": DICT}
_ENTRY_DERIVED = {"label", "steps_per_s", "samples_per_s", "step_ms", "steps_completed", "speedup", "speedup_ci95",
                  "val_delta", "metric", "peak_memory_bytes", "memory_kind", "memory_ratio"}


def rung_run_names(name: str) -> Callable[[str, int], str]:
    """Run directory names of a rung's trial: B's first replicate is the rung's own run."""
    return lambda arm, replicate: name if (arm == B and replicate == 1) else f"{name}.{arm}{replicate}"


def role_in_name(name: str) -> tuple[str, RunRole]:
    """(rung, role) of a run as its folder's name says (`rung_run_names` read backwards: "03-xla.a-1" is
    03-xla's A trained from another seed, "03-xla" its B's first run). Only for what study.yaml does not
    record: the runs of a study written before tfturbo recorded each run's role (`Rung.roles`), and a run
    no rung of the ladder holds."""
    rung, dot, suffix = name.rpartition(".")
    number = suffix[1:]
    if dot and suffix[:1] in (A, B) and number.lstrip("-").isdigit() and number[:2] != "-0":
        return rung, RunRole(suffix[0], int(number))
    return name, RunRole(B, 1)


class StepMsDoc(TypedDict, total=False):
    median: float | None
    ci95: list[float] | None


class LadderEntry(TrialVerdictDoc, total=False):
    """A rung as study.yaml's `ladder` and `tune --json` hold it (`Rung.entry`): its decision's keys (read back
    by `TrialVerdict.from_dict`), and figures of its run a reader of the file wants beside them."""

    name: str
    rung: str  # its kind
    label: str
    run: str | None
    settings: dict[str, Any]  # `RunSettings.to_dict`
    skipped: bool
    skip: SkipDoc  # a skipped step's `reason` in its parts (`Skip`)
    steps_per_s: float | None
    samples_per_s: float | None
    step_ms: StepMsDoc | None
    steps_completed: int | None
    speedup: float | None
    speedup_ci95: list[float | None] | None
    val_delta: float | None
    metric: str | None
    peak_memory_bytes: int | None
    memory_kind: str | None
    memory_ratio: float | None
    compared_with: str | None
    replicates: list[str]
    roles: dict[str, RunRoleDoc]
    run_seconds: float | None


class StudyMeasurement(TypedDict):
    """How much a study measured (study.yaml's `measurement`)."""

    runs: int
    run_seconds: float
    pairs: dict[str, int]  # rung name -> the replicate pairs its speed verdict used


class RungKind:
    """What a rung of the ladder changes (a rung's `kind` in study.yaml): the baseline, or a lever's kind
    (`Lever.rung_kind`: mixed_precision, xla, larger_batch, … — each lever's module says its own)."""

    BASELINE = "baseline"


class StudyStatus:
    """How a study ended (`status` in study.yaml); STOPPED_INPUT_BOUND: the probe found the job input-bound."""

    RUNNING = "running"
    COMPLETED = "completed"
    STOPPED_INPUT_BOUND = "input_bound"
    FAILED = "failed"
    INTERRUPTED = "interrupted"


@dataclass
class Rung:
    """One configuration of the ladder: a measured run with its decision, or a skipped step."""

    name: str  # the run directory's name, "NN-slug": 01-baseline, 02-mixed_float16, 03-xla, 04-larger_batch
    kind: str  # baseline | mixed_precision | xla | larger_batch
    settings: RunSettings
    run: str | None = None  # run directory relative to the study ("runs/01-baseline"); None when skipped
    summary: RunSummary | None = None  # its run's summary.json
    decision: TrialVerdict | None = None
    skipped_reason: Skip | None = None  # why it was not run (a skipped step)
    compared_with: str | None = None  # the rung it was measured against (its trial's A)
    replicates: list[str] = field(default_factory=list)  # every run of its trial, A's and B's ("NN-slug.a1", …)
    roles: dict[str, RunRole] = field(default_factory=dict)  # each of those runs' place in the trial
    run_seconds: float | None = None  # the wall time of all its runs together
    extra: dict[str, Any] = field(default_factory=dict)  # entry keys a newer tfturbo wrote (kept as read)

    @property
    def kept(self) -> bool:
        return bool(self.decision and self.decision.kept)

    def role(self, run: str) -> RunRole:
        """`run`'s place in this rung's trial: as study.yaml recorded it, else (a study written before it
        recorded roles) as the run's name says (`role_in_name`)."""
        return self.roles.get(run) or role_in_name(run)[1]

    @property
    def steps_completed(self) -> int | None:
        return self.summary.steps_completed if self.summary else None

    def entry(self, baseline: RunSummary | None) -> LadderEntry:
        """The ladder entry of `tune --json` and study.yaml."""
        s = self.summary or RunSummary()
        d = self.decision
        step = s.step_ms or {}
        entry: LadderEntry = {
            "name": self.name,
            "rung": self.kind,
            "label": self.settings.label() if self.skipped_reason is None else f"{self.kind.replace('_', ' ')} (not run)",
            "run": self.run,
            "settings": self.settings.to_dict(),
            "status": s.status if self.summary else ("skipped" if self.skipped_reason else None),
            "skipped": self.skipped_reason is not None,
            "steps_per_s": num(s.steps_per_s),
            "samples_per_s": num(s.samples_per_s) if self.summary else None,
            "step_ms": {"median": num(step.get("median")), "ci95": step.get("ci95")} if step else None,
            "steps_completed": self.steps_completed,
            "speedup": num(d.speedup) if d else None,
            "speedup_ci95": [num(d.speedup_ci95[0]), num(d.speedup_ci95[1])] if d else None,
            "val_delta": num(d.val_delta) if d else None,
            "metric": d.metric if d else None,
            "speed": d.speed.to_dict() if d else None,
            "accuracy": d.accuracy.to_dict() if d else None,
            "design": d.design if d else None,
            "steady_s": num(d.steady_s) if d else None,  # the figure `design` words for paired processes
            # how the trial measured, as data (`design` is its words, for people: nothing reads them back)
            "design_record": d.design_record.to_dict() if d and d.design_record is not None else None,
            "rule": d.rule.to_dict() if d and d.rule is not None else None,  # the accuracy rule that judged it
            "way_forward": d.way_forward if d else "",  # the way forward the user took ("loss", "tolerance", ...)
            "peak_memory_bytes": s.peak_memory_bytes,
            "memory_kind": s.memory_kind,
            "memory_ratio": num(baseline.memory_ratio(s)) if baseline and self.summary else None,
            "compared_with": self.compared_with,
            "replicates": list(self.replicates),
            **({"roles": {n: role.to_dict() for n, role in self.roles.items()}} if self.roles else {}),
            "kept": self.kept,
            "reason": str(self.skipped_reason) if self.skipped_reason is not None else (d.reason if d else ""),
            **({"skip": self.skipped_reason.to_dict()} if self.skipped_reason is not None else {}),
            # the reason in its parts, each with what it says (`TrialVerdict.said`): read as data, never its words
            **({"reason_parts": [part.to_dict() for part in d.said]} if d else {}),
            "findings": list(d.findings) if d else [],
            "run_seconds": self.run_seconds,
        }
        # keys a newer tfturbo wrote, kept as read: the one place an entry holds keys its type does not name
        return cast(LadderEntry, {**entry, **{k: v for k, v in self.extra.items()
                                              if k not in _ENTRY_KINDS and k not in _ENTRY_DERIVED}})


def measurement_only(settings: RunSettings) -> RunSettings:
    """The settings a user trains with: without the profiler window, the adaptive stop and the gate's per-example
    points of a measured run."""
    return settings.with_(profile=None, until_ci=None, min_steps=0, paired_from=None)


@dataclass
class Study:
    path: Path
    workload: str
    options: dict[str, Any]
    created: str = field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds"))
    status: str = StudyStatus.RUNNING
    message: str = ""
    environment: Environment | None = None  # the `env` document
    audit: list[FindingDoc] = field(default_factory=list)
    probe: InputProbe | None = None
    probe_input_fixes: InputProbe | None = None  # the probe again with --input-fixes (input_pipeline rung kept)
    rungs: list[Rung] = field(default_factory=list)
    recommended: RunSettings | None = None
    recommended_rung: str | None = None  # the name of the ladder entry the recommendation comes from
    snippet: str | None = None  # the code to apply: changes.patch's text (`tfturbo.patch.document.ChangesPatch`)
    patch: PatchDoc | None = None  # study.yaml's `patch` (`ChangesPatch.to_dict`)
    report: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # study.yaml keys a newer tfturbo wrote (kept as read)
    # findings study.yaml recorded that no rung gives any more (its run folder is gone, or a user added one)
    recorded_findings: list[FindingDoc] = field(default_factory=list)
    problems: list[str] = field(default_factory=list, repr=False, compare=False)  # what load() could not read

    @property
    def baseline(self) -> Rung | None:
        return self.rungs[0] if self.rungs and self.rungs[0].kind == RungKind.BASELINE else None

    def run_roles(self) -> dict[str, tuple[str, RunRole]]:
        """Every run the ladder's rungs recorded a role for: its name -> (its rung, its role)."""
        return {name: (r.name, role) for r in self.rungs for name, role in r.roles.items()}

    @property
    def unfinished(self) -> bool:
        """It stopped before its end (a kill, a crash, Ctrl-C, the wizard closed): the same command continues it."""
        return self.status in (StudyStatus.RUNNING, StudyStatus.INTERRUPTED)

    def next_name(self, slug: str) -> str:
        """The next ladder entry's name, NN-slug (its run folder is runs/NN-slug)."""
        return f"{len(self.rungs) + 1:02d}-{slug}"

    def add_skipped(self, kind: str, slug: str, settings: RunSettings, reason: Skip, compared_with: str) -> Rung:
        """A step of the ladder that was not run, with why (tune and the wizard record them alike)."""
        rung = Rung(self.next_name(slug), kind, settings, skipped_reason=reason, compared_with=compared_with)
        self.rungs.append(rung)
        self.save()
        return rung

    def findings(self) -> list[FindingDoc]:
        """Audit, probe, run and decision findings, each once."""
        out: list[FindingDoc] = []
        seen = set()
        groups = [self.audit, self.probe.findings if self.probe else [],
                  self.probe_input_fixes.findings if self.probe_input_fixes else []]
        for r in self.rungs:
            groups.append(findings_in(r.summary.findings) if r.summary else [])
            groups.append(r.decision.findings if r.decision else [])
        groups.append(self.recorded_findings)
        for group in groups:
            for f in group:
                key = (f.get("code"), f.get("where"), f.get("message"))
                if key not in seen:
                    seen.add(key)
                    out.append(f)
        return out

    def measurement(self) -> StudyMeasurement:
        """How much was measured: the runs of every trial and their wall time."""
        runs = sum(max(1, len(r.replicates)) for r in self.rungs if r.summary is not None)
        seconds = sum(r.run_seconds if r.run_seconds is not None else num(r.summary.wall_s if r.summary else None) or 0.0
                      for r in self.rungs)
        return {"runs": runs, "run_seconds": round(seconds, 1),
                "pairs": {r.name: r.decision.speed.replicates for r in self.rungs
                          if r.decision is not None and r.kind != RungKind.BASELINE}}

    def ladder(self) -> list[LadderEntry]:
        base = self.baseline.summary if self.baseline else None
        return [r.entry(base) for r in self.rungs]

    def document(self) -> dict[str, Any]:
        """The `tune --json` document plus context keys."""
        return {
            "workload": self.workload,
            "study_dir": str(self.path),
            "status": self.status,
            "message": self.message,
            "ladder": self.ladder(),
            "recommended": self.recommended.to_dict() if self.recommended else None,
            "recommended_rung": self.recommended_rung,
            "findings": self.findings(),
            "report": self.report,
            "environment": self.environment.to_dict() if self.environment is not None else None,
            "probe": self.probe.to_dict() if self.probe is not None else None,
            "probe_input_fixes": self.probe_input_fixes.to_dict() if self.probe_input_fixes is not None else None,
            "measurement": self.measurement(),
            "snippet": self.snippet,
            "patch": self.patch,
            "as_written": self.as_written(),
        }

    def as_written(self) -> AsWritten | None:
        """The script's own configuration, which the baseline measured (its run's `as_written`)."""
        return self.baseline.summary.as_written if self.baseline is not None and self.baseline.summary else None

    def save(self) -> Path:
        doc = self.document()
        data = {
            "format": STUDY_FORMAT,
            "tool": f"tfturbo {__version__}",
            "workload": self.workload,
            "created": self.created,
            "status": self.status,
            "message": self.message,
            "environment": self.environment.to_dict() if self.environment is not None else None,
            "options": self.options,
            "audit": {"findings": self.audit},
            "probe": self.probe.to_dict() if self.probe is not None else None,
            "probe_input_fixes": self.probe_input_fixes.to_dict() if self.probe_input_fixes is not None else None,
            "ladder": doc["ladder"],
            "recommended": doc["recommended"],
            "recommended_rung": self.recommended_rung,
            "as_written": doc["as_written"],  # the baseline: the script's own configuration
            "findings": doc["findings"],
            "measurement": doc["measurement"],
            "snippet": self.snippet,
            "patch": self.patch,
            "report": self.report,
            **{k: v for k, v in self.extra.items() if k not in _STUDY_KINDS},
        }
        path = self.path / STUDY_YAML
        write_yaml(path, json_safe(data))
        return path

    @classmethod
    def load(cls, path: str | Path) -> Study:
        """The study saved in `path`: as much of its study.yaml as is valid, every problem named in `problems`.

        Raises FormatVersionError for a study.yaml in a newer format than this
        tfturbo reads; never raises on a damaged file: a missing or corrupt study.yaml gives a
        study without rungs (readers then fall back to the runs in runs/), a
        key of the wrong type is dropped, a ladder entry that cannot be read is
        skipped, and the rest still loads.
        """
        path = Path(path)
        problems: list[str] = []
        raw = read_yaml(path / STUDY_YAML, problems)
        check_version(raw.get("format"), STUDY_FORMAT, path / STUDY_YAML)
        doc, extra = read_typed(raw, _STUDY_KINDS, STUDY_YAML, problems)
        workload = doc.get("workload") or ""
        study = cls(path, workload, doc.get("options") or {}, created=doc.get("created") or "",
                    status=doc.get("status") or "", message=doc.get("message") or "",
                    environment=Environment.from_dict(doc["environment"], f"{STUDY_YAML}: environment")
                    if doc.get("environment") is not None else None, audit=_audit_findings(doc.get("audit")),
                    probe=InputProbe.from_dict(doc["probe"], f"{STUDY_YAML}: probe")
                    if doc.get("probe") is not None else None,
                    probe_input_fixes=InputProbe.from_dict(doc["probe_input_fixes"], f"{STUDY_YAML}: probe_input_fixes")
                    if doc.get("probe_input_fixes") is not None else None, recommended_rung=doc.get("recommended_rung"),
                    snippet=doc.get("snippet"), patch=doc.get("patch"), report=doc.get("report"), extra=extra,
                    recorded_findings=findings_in(doc.get("findings")),
                    problems=problems)
        study.recommended = _settings(doc.get("recommended"), f"{STUDY_YAML}: recommended", problems)
        for i, entry in enumerate(doc.get("ladder") or []):
            rung = _rung(path, entry, f"{STUDY_YAML}: ladder[{i}]", workload, problems)
            if rung is not None:
                study.rungs.append(rung)
        return study


def _audit_findings(audit: dict[str, Any] | None) -> list[FindingDoc]:
    """The audit's findings (`audit: {findings: [...]}`), the ones that are findings at all."""
    return findings_in((audit or {}).get("findings"))


def _settings(doc: dict[str, Any] | None, source: str, problems: list[str]) -> RunSettings | None:
    """RunSettings from a settings mapping; None, with the reason in `problems`, when they are not valid."""
    if doc is None:
        return None
    try:
        return RunSettings.from_dict(doc)
    except (UserError, TypeError, ValueError) as e:
        problems.append(f"{source}: the settings are not valid ({e}); ignored")
        return None


def _rung(study_dir: Path, raw: Any, source: str, workload: str, problems: list[str]) -> Rung | None:
    """One ladder entry as a Rung, its summary read from its run directory; None when it names no rung."""
    if not isinstance(raw, dict):
        problems.append(f"{source} is not a mapping; skipped")
        return None
    entry, extra = read_typed(raw, _ENTRY_KINDS, source, problems)
    name = entry.get("name")
    if not name:
        problems.append(f"{source} has no name; skipped")
        return None
    source = f"{STUDY_YAML}: {name}"
    record_summary = _run_summary(study_dir, entry.get("run"), source, problems)
    settings = (_settings(entry.get("settings"), source, problems) or (record_summary.settings if record_summary else None)
                or RunSettings(workload=workload))
    skipped = bool(entry.get("skipped"))
    if record_summary is None and entry.get("status") and not skipped:  # its run left no summary.json
        record_summary = RunSummary(status=entry["status"])
    return Rung(name, entry.get("rung") or "", settings, run=entry.get("run"), summary=record_summary,
                decision=None if skipped else _decision(cast(LadderEntry, entry), source, problems),
                skipped_reason=Skip.read(entry.get("skip"), entry.get("reason") or "") if skipped else None,
                compared_with=entry.get("compared_with"), replicates=[str(n) for n in entry.get("replicates") or []],
                roles={str(n): role for n, doc in (entry.get("roles") or {}).items()
                       if (role := RunRole.from_dict(doc)) is not None},
                run_seconds=entry.get("run_seconds"),
                extra={k: v for k, v in extra.items() if k not in _ENTRY_DERIVED})


def _run_summary(study_dir: Path, run: str | None, source: str, problems: list[str]) -> RunSummary | None:
    """The summary.json of a rung's run ("runs/NN-slug"), read by runfiles; None when there is none.

    Only a folder directly under the study's runs/ is read: a path in the
    file never leads anywhere else.
    """
    if not run:
        return None
    parent, _, name = run.rpartition("/")
    try:
        if parent != RUNS_DIR:
            raise ValueError(f"{run!r} is not under {RUNS_DIR}/")
        run_dir = safe_child(study_dir / RUNS_DIR, name)
    except ValueError as e:
        problems.append(f"{source}: run {e}; its run is not read")
        return None
    return load_run(run_dir).summary if run_dir.is_dir() else None


def _decision(entry: LadderEntry, source: str, problems: list[str]) -> TrialVerdict | None:
    """The entry's trial verdict; None when it records no decision (a rung that never finished its trial)."""
    if not (entry.get("speed") or entry.get("accuracy") or entry.get("reason")):
        return None
    try:
        return TrialVerdict.from_dict(entry)
    except (TypeError, ValueError) as e:
        problems.append(f"{source}: its decision could not be read ({e}); ignored")
        return None
