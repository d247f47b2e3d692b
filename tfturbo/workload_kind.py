"""Which kind of workload a `.py` file is: a contract workload or a training script (README, "Your workload").

Decided here once, from the source without running it, so the backend (which
loads it one way or the other) and the wizard (which offers a script's own
options only for a script) never disagree. Stdlib only: the GUI imports it.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from typing import TypedDict

from .numbers import ordinal

CONTRACT_FUNCTIONS = ("build_model", "make_datasets")
BUILTIN_PREFIX = "builtin:"


def defines_contract(path: Path) -> bool:
    """True when the file defines (or imports) `build_model` and `make_datasets` at module level.

    Decided from the source, without running it: running a script is what trains.
    A file that does not parse is treated as a contract workload, whose import
    reports the syntax error.
    """
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8", errors="replace"), filename=str(path))
    except SyntaxError:
        return True
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return all(name in names for name in CONTRACT_FUNCTIONS)


def builtin_files() -> dict[str, Path]:
    """builtin:NAME -> its file in `trainer_backend/workloads/` (a `-` in NAME is a `_` in the file name).

    Found through the import system's search path only: `find_spec` of a top-level package does not execute
    it, so neither the core nor the GUI imports the backend (or TensorFlow) to know its built-ins.
    """
    spec = importlib.util.find_spec("trainer_backend")
    if spec is None or not spec.submodule_search_locations:
        return {}
    found: dict[str, Path] = {}
    for location in spec.submodule_search_locations:
        for path in sorted((Path(location) / "workloads").glob("*.py")):
            if not path.stem.startswith("_"):
                found.setdefault(BUILTIN_PREFIX + path.stem.replace("_", "-"), path)
    return found


def is_script(spec: str) -> bool:
    """True when the workload `spec` (a path or builtin:NAME) is a training script, run top-level with its own
    options after `--`: a .py file, built in or not, that does not define build_model() and make_datasets()
    (a built-in can be a script: builtin:train-script). A file that is not there is judged by the backend
    that loads it (False here)."""
    path = workload_file(spec)
    return path is not None and path.suffix == ".py" and not defines_contract(path)


def path_of(spec: str | Path) -> Path | None:
    """The file a workload `spec` names (a path, or builtin:NAME's file; None for an unknown built-in)."""
    spec = str(spec)
    return builtin_files().get(spec) if spec.startswith(BUILTIN_PREFIX) else Path(spec).expanduser()


def workload_file(spec: str | Path) -> Path | None:
    """The file of a workload `spec` when it exists (a path, or builtin:NAME's file); None when there is none."""
    path = path_of(spec)
    return path if path is not None and path.is_file() else None


class FitCall(TypedDict):
    """A `.fit(` call written in a training script: its first line and code."""

    line: int
    code: str


class MeasuredFit(TypedDict):
    """The fit() call of a training script a run measured (`ScriptWorkload.describe`'s `fit`)."""

    call: int  # its Nth
    line: int | None
    model: str  # the model's class
    model_name: str
    calls_in_source: list[FitCall]


class WorkloadDoc(TypedDict, total=False):
    """A workload as run.yaml, summary.json, the audit and the probe record it (the backend's `describe()`, with
    what running it showed of its code in a run's: `code_facts`)."""

    spec: str
    name: str
    path: str
    fit: MeasuredFit  # a training script's, once it ran
    data: str  # "numpy" | "tf.data": what fit() got
    fit_line: int  # a script's fit() line


def fit_calls_in_source(spec: str | Path) -> list[FitCall]:
    """[{"line", "code"}] for each `.fit(` call written in a training script (a path or builtin:NAME), in source
    order (the code's first line), so every result can say which others `--fit-call N` could measure. Read from
    the file, never run; [] for a file that cannot be read or parsed."""
    path = path_of(spec)
    try:
        source = path.read_text(encoding="utf-8", errors="replace") if path is not None else ""
        tree = ast.parse(source)
    except (OSError, SyntaxError, ValueError):
        return []
    found: list[FitCall] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "fit":
            code = (ast.get_source_segment(source, node) or "").splitlines()
            found.append({"line": node.lineno,
                          "code": (code[0] + (" ..." if len(code) > 1 else ""))[:120] if code else ""})
    return sorted(found, key=lambda c: c["line"])


def measured_fit_text(workload: WorkloadDoc | None, choose: str = "--fit-call N measures the Nth") -> str | None:
    """Which fit() call of a training script a run measured, in words (the workload as run.yaml, summary.json
    and the audit record it, `trainer_backend.script.ScriptWorkload.describe`): "fit() call 2 of train.py (line
    95, Distiller 'distiller'); the script calls .fit( at lines 80 and 95: --fit-call N measures the Nth" (`choose`:
    how this front end chooses another). None for a contract workload or a run recorded before the field."""
    fit = workload.get("fit") if isinstance(workload, dict) else None
    if not isinstance(workload, dict) or not isinstance(fit, dict) or not isinstance(fit.get("call"), int):
        return None
    name = Path(str(workload.get("path") or workload.get("name") or "the script")).name
    where = ", ".join(p for p in (f"line {fit['line']}" if fit.get("line") else "",
                                  f"{fit.get('model') or 'model'} {fit.get('model_name')!r}"
                                  if fit.get("model_name") else str(fit.get("model") or "")) if p)
    lines = [c.get("line") for c in fit.get("calls_in_source") or [] if isinstance(c, dict)]
    several = len(lines) > 1 or fit["call"] > 1
    text = f"the {ordinal(fit['call']) + ' ' if several else ''}fit() call of {name}" + (f" ({where})" if where else "")
    if several:
        at = ", ".join(map(str, lines[:-1])) + f" and {lines[-1]}" if len(lines) > 1 else ""
        text += (f"; the script calls .fit( at lines {at}" if at else "") + (f": {choose}" if choose else "")
    return text
