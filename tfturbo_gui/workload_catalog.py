"""The built-in workloads, listed without importing the backend (and so without TensorFlow).

Where the backend's `trainer_backend/workloads/*.py` files are, and which of
them is a training script (which takes its own options), is the core's rule
(`tfturbo.workload_kind`: `builtin_files`, `is_script`); here each is
described by the first line of its docstring, read with `ast`. A new
built-in appears in the wizard without a change here.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from tfturbo.workload_kind import builtin_files


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
    return [BuiltinWorkload(spec, _description(path), path) for spec, path in builtin_files().items()]
