"""Run and study directories (docs/ARCHITECTURE.md, "Run and study directories"): writing them safely, reading them tolerantly.

Writers: run.yaml first, events.jsonl line by line, summary.json last and
atomically. Readers load whatever is valid and collect a warning for the rest,
so a study from a crashed run or another machine still opens; a file in a
newer format than this tfturbo reads is refused (`formats`). YAML is only
ever `safe_load`ed; names found inside files never become paths outside the
study directory.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .findings import FindingDoc, findings_in
from . import crash, protocol
from .formats import check_version
from . import run_summary
from .run_summary import RunSummary
from .errors import OutputDirError, UserError
from .learning_rate import Schedule
from .numbers import counted, json_safe
from .settings import RunSettings

RUN_YAML = "run.yaml"
EVENTS = "events.jsonl"
SUMMARY = "summary.json"
TB_DIR = "tb"
CHECKPOINT_DIR = "checkpoint"
CHECKPOINT_MODEL = "model.keras"
CHECKPOINT_SETTINGS = "tfturbo-settings.yaml"
BACKEND_LOG = "backend.log"
STUDY_YAML = "study.yaml"
RUNS_DIR = "runs"
XLA_CACHE_DIR = "xla-cache"  # a study's (or ab's) XLA persistent compilation cache, shared by its runs
VALIDATION_DIR = "validation"  # a study's (or ab's) fixed validation examples, shared by its runs (--val-set)
REPORT_PDF = "report.pdf"

MIN_FREE_BYTES = 50 * 1024 * 1024  # a run writes a profile and a checkpoint; refuse below this

_UMASK = os.umask(0o022)
os.umask(_UMASK)

_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$")


# ---------------------------------------------------------------- writing

# libyaml's safe dumper when PyYAML has it (its wheels do): the pure-Python dumper took 27 ms for a
# study.yaml, on the GUI thread at the end of every run (benchmarks/gui_ingest.py). Reading stays
# yaml.safe_load (tests/hardening audits that nothing else loads YAML).
_YAML_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def write_yaml(path: Path, data: dict[str, Any]) -> None:
    write_text_atomic(Path(path), yaml.dump(data, Dumper=_YAML_DUMPER, sort_keys=False, allow_unicode=True))


def write_checkpoint_settings(run_dir: Path, settings: RunSettings, learning_rate: float | None, steps: int,
                              env: dict[str, Any], schedule: Schedule | None = None) -> None:
    """checkpoint/tfturbo-settings.yaml: the run's own RunSettings, so the record reads back as the settings that
    trained the saved model; `steps` is how many it trained, and `env` (versions, device) where; the learning
    rate it started at and, for a schedule, the schedule as it ran (`learning_rate_schedule`, shown through
    `learning_rate.learning_rate_text`)."""
    lr = {"learning_rate": learning_rate, **({"learning_rate_schedule": schedule} if schedule else {})}
    write_yaml(Path(run_dir) / CHECKPOINT_DIR / CHECKPOINT_SETTINGS,
               json_safe({**settings.to_dict(), **lr, "steps": steps, **env}))


def write_json_atomic(path: Path, data: Any) -> None:
    write_text_atomic(Path(path), json.dumps(json_safe(data), indent=2, default=protocol._json_default,
                                             allow_nan=False) + "\n")


def shared_mode(path: str | os.PathLike[str]) -> None:
    """Give a file made by mkstemp (0600) the user's normal mode (0666 less the umask): study files are shared."""
    os.chmod(path, 0o666 & ~_UMASK)


def write_text_atomic(path: Path, text: str) -> None:
    """Write to a temporary file beside `path`, fsync, then rename over it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + path.name, suffix=".tmp", dir=path.parent)
    try:
        shared_mode(tmp)  # mkstemp makes 0600; run files are meant to be shared
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def prepare_run_dir(path: str | os.PathLike[str]) -> Path:
    """Create the run directory, or explain in one line why it cannot be used.

    Checked before training starts: not an existing run, writable, enough free space.
    """
    run_dir = Path(path)
    if run_dir.exists() and not run_dir.is_dir():
        raise OutputDirError(f"{run_dir} exists and is not a directory", "choose another --out path")
    if (run_dir / EVENTS).exists() or (run_dir / SUMMARY).exists():
        raise OutputDirError(f"{run_dir} already holds a run", "choose a new --out directory or delete the old run")
    created = [p for p in (run_dir, *run_dir.parents) if not p.exists()]  # removed again if refused
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        probe = run_dir / ".tfturbo-write-test"
        probe.write_bytes(b"ok")
        probe.unlink()
    except OSError as e:
        _remove_empty(created)
        raise OutputDirError(f"cannot write to {run_dir} ({e.strerror or e})",
                             "choose a writable --out directory") from e
    free = shutil.disk_usage(run_dir).free
    if free < MIN_FREE_BYTES:
        _remove_empty(created)
        raise OutputDirError(f"only {free // (1024 * 1024)} MiB free on the disk of {run_dir}",
                             f"free at least {MIN_FREE_BYTES // (1024 * 1024)} MiB or choose another --out")
    return run_dir


def _remove_empty(dirs: list[Path]) -> None:
    """Remove the directories a refused prepare_run_dir created (deepest first), leaving nothing behind."""
    for d in dirs:
        try:
            (d / ".tfturbo-write-test").unlink(missing_ok=True)
            d.rmdir()
        except FileNotFoundError:
            continue  # mkdir failed below this level
        except OSError:
            return  # not empty: something else is in there


def safe_child(parent: Path, name: str) -> Path:
    """`parent/name` for a name read from a file, refusing anything that would leave `parent`."""
    if not isinstance(name, str) or not _SAFE_NAME.match(name) or name in (".", ".."):
        raise ValueError(f"unsafe name {name!r}")
    child = (parent / name).resolve()
    if parent.resolve() not in child.parents:
        raise ValueError(f"{name!r} leaves {parent}")
    return child


# ---------------------------------------------------------------- reading

def read_yaml(path: Path, warnings: list[str]) -> dict[str, Any]:
    """A YAML mapping, or {} with a warning when missing or corrupt."""
    path = Path(path)
    if not path.exists():
        warnings.append(f"{path.name} is missing")
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8", errors="replace"))
    except yaml.YAMLError as e:
        warnings.append(f"{path.name} is corrupt and was ignored ({str(e).splitlines()[0]})")
        return {}
    if data is None:
        warnings.append(f"{path.name} is empty")
        return {}
    if not isinstance(data, dict):
        warnings.append(f"{path.name} is not a mapping and was ignored")
        return {}
    return data


def read_json(path: Path, warnings: list[str], missing_ok: bool = False) -> dict[str, Any] | None:
    path = Path(path)
    if not path.exists():
        if not missing_ok:
            warnings.append(f"{path.name} is missing")
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except ValueError as e:
        warnings.append(f"{path.name} is corrupt and was ignored ({e})")
        return None
    if not isinstance(data, dict):
        warnings.append(f"{path.name} is not a JSON object and was ignored")
        return None
    return data


def read_events(path: Path, warnings: list[str]) -> list[protocol.Event]:
    """Every valid event of an events.jsonl; skipped lines and a truncated tail become warnings.

    A file a newer tfturbo wrote in a newer protocol is refused (`formats.check_version` on the first
    event's "v": one backend writes the whole file).
    """
    path = Path(path)
    if not path.exists():
        warnings.append(f"{path.name} is missing")
        return []
    parser = protocol.LineParser()
    with open(path, "rb") as f:
        data = f.read()
    events = parser.feed(data)
    truncated = bool(data) and not data.endswith(b"\n")
    events += parser.close()
    if events:
        check_version(events[0].get("v"), protocol.PROTOCOL_VERSION, path)
    if parser.skipped:
        what = "the last line is truncated" if truncated and parser.skipped == 1 else \
            f"{counted(parser.skipped, 'line')} {'is' if parser.skipped == 1 else 'are'} not valid events"
        warnings.append(f"{path.name}: {what}; they were skipped")
    return events


@dataclass
class StepSeries:
    """Per-step samples of a run, flattened from its `steps` events."""

    step: list[int] = field(default_factory=list)
    step_ms: list[float] = field(default_factory=list)
    loss: list[float | None] = field(default_factory=list)
    loss_scale: list[float | None] = field(default_factory=list)
    # (first step, last step, seconds) of each measured window, from the events that carry one
    windows: list[tuple[int, int, float]] = field(default_factory=list)

    @classmethod
    def from_events(cls, events: list[protocol.Event]) -> StepSeries:
        s = cls()
        for e in events:
            if e["type"] != protocol.STEPS:
                continue
            for step, ms, loss, scale in protocol.iter_steps(e):
                s.step.append(step)
                s.step_ms.append(ms)
                s.loss.append(loss)
                s.loss_scale.append(scale)
            w = e.get("window")
            if (isinstance(w, list) and len(w) == 3 and all(isinstance(v, (int, float)) for v in w)
                    and not any(isinstance(v, bool) for v in w)):
                s.windows.append((int(w[0]), int(w[1]), float(w[2])))
        return s


@dataclass
class RunRecord:
    """Everything readable about one run directory."""

    path: Path
    name: str
    settings: dict[str, Any]  # run.yaml as read
    summary: RunSummary | None  # summary.json; None when the run wrote none (`compare.effective_summary` rebuilds it)
    events: list[protocol.Event]
    warnings: list[str]
    missing_summary: str = ""  # the one of `warnings` that says summary.json is missing ("": it is not)

    @property
    def status(self) -> str:
        """From summary.json, else the `done` event, else `crashed` (events stop without one)."""
        if self.summary and self.summary.status:
            return self.summary.status
        for e in reversed(self.events):
            if e.get("type") == protocol.DONE:
                return str(e.get("status", protocol.RunStatus.FAILED))
        return protocol.RunStatus.CRASHED

    def steps(self) -> StepSeries:
        return StepSeries.from_events(self.events)

    def validation(self) -> list[protocol.EpochEvent]:
        return [e for e in self.events if e["type"] == protocol.VALIDATION]

    def findings(self) -> list[FindingDoc]:
        if self.summary and self.summary.findings is not None:
            return findings_in(self.summary.findings)
        return findings_in([e.get("finding") for e in self.events if e.get("type") == protocol.FINDING])

    def checkpoint_settings(self) -> dict[str, Any]:
        """checkpoint/tfturbo-settings.yaml as written: the settings, learning rate, versions and device."""
        path = self.path / CHECKPOINT_DIR / CHECKPOINT_SETTINGS
        return read_yaml(path, []) if path.exists() else {}

    def trained_settings(self) -> RunSettings | None:
        """The RunSettings that trained the saved model, read back from its settings record; None without one."""
        record = self.checkpoint_settings()
        return trained_settings(record) if record else None


def trained_settings(record: dict[str, Any]) -> RunSettings | None:
    """A settings record (checkpoint/tfturbo-settings.yaml) as RunSettings; None when its settings are not valid."""
    try:
        return RunSettings.from_dict(record)
    except (UserError, TypeError, ValueError):
        return None


def load_run(path: str | os.PathLike[str]) -> RunRecord:
    run_dir = Path(path)
    warnings: list[str] = []
    settings = read_yaml(run_dir / RUN_YAML, warnings)
    events = read_events(run_dir / EVENTS, warnings)
    doc = read_json(run_dir / SUMMARY, warnings, missing_ok=True)
    summary = None
    if doc is not None:  # the one reader of summary.json: wrong types are named and dropped
        check_version(doc.get("v"), run_summary.VERSION, run_dir / SUMMARY)
        summary = RunSummary.from_dict(doc, SUMMARY)
        warnings += summary.problems
    record = RunRecord(run_dir, run_dir.name, settings, summary, events, warnings)
    if summary is None and not (run_dir / SUMMARY).exists():  # (a corrupt one was reported as such)
        status = record.status
        record.missing_summary = "summary.json is missing: the run " + (
            "was killed before it finished; what it measured so far is shown"
            if status == protocol.RunStatus.CRASHED else f"ended as {status}")
        warnings.append(record.missing_summary)
        cause = crash.explain(run_dir / BACKEND_LOG) if status == protocol.RunStatus.CRASHED else None
        if cause is not None:
            warnings.append(f"{cause['message']} — {cause['fix']}")
    return record


@dataclass
class StudyRuns:
    """The runs of a study directory; its study.yaml is read by `tfturbo.tune.study.Study.load`."""

    path: Path
    runs: list[RunRecord]
    warnings: list[str]


def load_study_runs(path: str | os.PathLike[str]) -> StudyRuns:
    """Every run folder under the study's runs/, oldest first (a link is not followed)."""
    study_dir = Path(path)
    warnings: list[str] = []
    runs_dir = study_dir / RUNS_DIR
    runs: list[RunRecord] = []
    if runs_dir.is_dir():
        for child in sorted(runs_dir.iterdir(), key=lambda p: (p.stat().st_mtime, p.name)):
            if child.is_dir() and not child.is_symlink():
                runs.append(load_run(child))
    else:
        warnings.append(f"{study_dir} has no runs/ folder")
    return StudyRuns(study_dir, runs, warnings)
