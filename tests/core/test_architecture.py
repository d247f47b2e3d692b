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


# The GUI's plain-Python models: tested and used without a display, so they hold no Qt.
QT_FREE_GUI_MODULES = ("tfturbo_gui/run_data.py", "tfturbo_gui/session.py", "tfturbo_gui/step_status.py",
                       "tfturbo_gui/workload_catalog.py")
QT = {"PySide6", "pyqtgraph"}


def gui_modules_imported_by(path: Path) -> set[Path]:
    """`path` and every tfturbo_gui module it imports, directly or through others (with their packages)."""
    seen: set[Path] = set()
    todo = [path]
    while todo:
        current = todo.pop()
        if current in seen or not current.exists():
            continue
        seen.add(current)
        package = current.parent
        todo += [p / "__init__.py" for p in current.parents if (p / "__init__.py").exists() and ROOT in p.parents]
        tree = ast.parse(current.read_text(encoding="utf-8"), filename=str(current))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level > 0:
                base = package
                for _ in range(node.level - 1):
                    base = base.parent
                parts = node.module.split(".") if node.module else []
                target = base.joinpath(*parts)
                todo += [target.with_suffix(".py"), target / "__init__.py"]
                todo += [target / f"{a.name}.py" for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tfturbo_gui"):
                target = ROOT.joinpath(*node.module.split("."))
                todo += [target.with_suffix(".py"), target / "__init__.py"]
    return seen


@pytest.mark.parametrize("module", QT_FREE_GUI_MODULES)
def test_qt_free_gui_models_import_no_qt(module):
    path = ROOT / module
    assert path.exists(), f"{module} is listed as Qt-free but does not exist"
    offenders = {str(p.relative_to(ROOT)): sorted(imported_top_level_modules(p) & QT)
                 for p in sorted(gui_modules_imported_by(path))}
    assert {name: bad for name, bad in offenders.items() if bad} == {}


def test_gui_modules_that_say_no_qt_are_checked():
    says = {str(p.relative_to(ROOT)) for p in (ROOT / "tfturbo_gui").rglob("*.py")
            if "No Qt here" in p.read_text(encoding="utf-8")}
    assert says <= set(QT_FREE_GUI_MODULES)


def test_cli_start_up_imports_neither_tensorflow_nor_qt():
    code = ("import sys; from tfturbo.cli import build_parser; build_parser(); "
            "print(sorted(m for m in ('tensorflow','keras','PySide6','reportlab') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"
