"""The built-in workloads, listed without importing the backend (and so without TensorFlow).

The backend's `trainer_backend/workloads/*.py` files are found through the
import system's search path only (`find_spec` of a top-level package does not
execute it) and described by the first line of their docstring, read with
`ast`. A new built-in appears in the wizard without a change here.
`is_script` tells a training script (which takes its own options) from a
contract workload, with the backend's own rule (`tfturbo.workload_kind`).
"""

from __future__ import annotations

import ast
import importlib.util
from dataclasses import dataclass
from pathlib import Path

from tfturbo.workload_kind import defines_contract

BUILTIN_PREFIX = "builtin:"


@dataclass(frozen=True)
class BuiltinWorkload:
    spec: str  # builtin:NAME
    description: str
    path: Path


def _description(path: Path) -> str:
    try:
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    except (OSError, SyntaxError, ValueError):
        return ""
    first = doc.strip().splitlines()[0] if doc.strip() else ""
    return first.split("—", 1)[1].strip() if "—" in first else first


def builtin_workloads() -> list[BuiltinWorkload]:
    spec = importlib.util.find_spec("trainer_backend")
    if spec is None or not spec.submodule_search_locations:
        return []
    found = []
    for location in spec.submodule_search_locations:
        for path in sorted((Path(location) / "workloads").glob("*.py")):
            if not path.stem.startswith("_"):
                found.append(BuiltinWorkload(BUILTIN_PREFIX + path.stem.replace("_", "-"), _description(path), path))
    return found


def is_script(spec: str) -> bool:
    """True when `spec` names a training script, run as it is with its own options after `--`
    (a built-in or a .py file that does not define build_model() and make_datasets())."""
    if spec.startswith(BUILTIN_PREFIX):
        path = next((w.path for w in builtin_workloads() if w.spec == spec), None)
    else:
        path = Path(spec).expanduser()
    return path is not None and path.suffix == ".py" and path.is_file() and not defines_contract(path)
