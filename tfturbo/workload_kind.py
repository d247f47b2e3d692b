"""Which kind of workload a `.py` file is: a contract workload or a training script (README, "Your workload").

Decided here once, from the source without running it, so the backend (which
loads it one way or the other) and the wizard (which offers a script's own
options only for a script) never disagree. Stdlib only: the GUI imports it.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

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


def workload_file(spec: str) -> Path | None:
    """The file of a workload `spec` (a path, or builtin:NAME's file in the backend's package); None when there is
    no such file."""
    spec = str(spec)
    path = builtin_files().get(spec) if spec.startswith(BUILTIN_PREFIX) else Path(spec).expanduser()
    return path if path is not None and path.is_file() else None
