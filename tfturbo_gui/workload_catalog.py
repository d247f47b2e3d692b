"""The built-in workloads, listed without importing the backend (and so without TensorFlow).

Where the backend's `trainer_backend/workloads/*.py` files are, and which of
them is a training script (which takes its own options), is the core's rule
(`tfturbo.workload_kind`: `builtin_files`, `is_script`); here each is
described by what its file declares, read with `ast`: `DESCRIPTION` (what it
is), or for a demo workload `PLANTED` (the problem it plants). A new built-in
appears in the wizard without a change here.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from tfturbo.workload_kind import builtin_files


@dataclass(frozen=True)
class BuiltinWorkload:
    spec: str  # builtin:NAME
    about: str  # what it is (its `DESCRIPTION`), "" for a demo workload
    path: Path
    planted: str = ""  # a demo workload's planted problem (its `PLANTED`), "" for a clean one

    @property
    def description(self) -> str:
        """What it is, in a sentence (the list's tooltip)."""
        return f"demo workload; planted problem: {self.planted}." if self.planted else \
            f"{self.about}." if self.about else ""

    @property
    def line(self) -> str:
        """Its row in the list, short: "demo — planted problem: batch shapes vary"."""
        return f"demo — planted problem: {self.planted}" if self.planted else self.about


def _declared(path: Path) -> dict[str, str]:
    """The string constants a workload's file declares at its top level (`DESCRIPTION`, `PLANTED`)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return {}
    return {target.id: node.value.value for node in tree.body if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
            for target in node.targets if isinstance(target, ast.Name)}


def builtin_workloads() -> list[BuiltinWorkload]:
    return [BuiltinWorkload(spec, declared.get("DESCRIPTION", ""), path, declared.get("PLANTED", ""))
            for spec, path in builtin_files().items() for declared in [_declared(path)]]
