"""The architecture as a checked rule: which package may import what (docs/ARCHITECTURE.md, "Packages")."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN = {
    "tfturbo": {"tensorflow", "keras", "PySide6", "pyqtgraph", "trainer_backend", "tfturbo_gui"},
    "tfturbo_gui": {"tensorflow", "keras", "trainer_backend"},
}


def imported_top_level_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_never_imports_forbidden_layers(package):
    offenders = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        bad = imported_top_level_modules(path) & FORBIDDEN[package]
        # tfturbo.commands.gui is the one bridge that starts the GUI, lazily, inside main()
        if path.relative_to(ROOT).as_posix() == "tfturbo/commands/gui.py":
            bad -= {"tfturbo_gui"}
        if bad:
            offenders[str(path.relative_to(ROOT))] = sorted(bad)
    assert offenders == {}


def test_cli_start_up_imports_neither_tensorflow_nor_qt():
    code = ("import sys; from tfturbo.cli import build_parser; build_parser(); "
            "print(sorted(m for m in ('tensorflow','keras','PySide6','reportlab') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"
