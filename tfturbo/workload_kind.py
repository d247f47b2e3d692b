"""Which kind of workload a `.py` file is: a contract workload or a training script (README, "Your workload").

Decided here once, from the source without running it, so the backend (which
loads it one way or the other) and the wizard (which offers a script's own
options only for a script) never disagree. Stdlib only: the GUI imports it.
"""

from __future__ import annotations

import ast
from pathlib import Path

CONTRACT_FUNCTIONS = ("build_model", "make_datasets")


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


def is_script(spec: str) -> bool:
    """True when the workload `spec` (a path or builtin:NAME) is a training script, run top-level: a built-in
    is a contract workload; a file that is not there is judged by the backend that loads it (False here)."""
    spec = str(spec)
    if spec.startswith("builtin:"):
        return False
    path = Path(spec).expanduser()
    return path.is_file() and not defines_contract(path)
