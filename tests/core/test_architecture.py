"""The architecture as checked rules (docs/ARCHITECTURE.md, "Packages").

The import rules are import-linter contracts in pyproject.toml (`[tool.importlinter]`): which package may
import what, the GUI's plain-Python models free of Qt, no CLI command module in the GUI. The first test runs
them, so `make test` and CI fail on a broken contract. What the linter cannot express stays here: Python runs
every package's __init__ before a module inside it (an import graph has no such edge), which modules say
they are Qt-free, and what the CLI really loads at start-up.
"""

import re
import subprocess
import sys
from pathlib import Path

import grimp
from importlinter import api

ROOT = Path(__file__).resolve().parents[2]
QT = {"PySide6", "pyqtgraph"}


def test_import_contracts_are_kept():
    """`lint-imports` on the repository's own contracts (no cache file is left in the checkout)."""
    out = subprocess.run([sys.executable, "-c", "from importlinter.cli import lint_imports_command as c; c()",
                          "--no-cache", "--no-logo"], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 broken" in out.stdout


def qt_free_gui_modules() -> list[str]:
    """The source modules of the contract that keeps Qt out of the GUI's plain-Python models."""
    contracts = api.read_configuration(str(ROOT / "pyproject.toml"))["contracts_options"]
    found = [c for c in contracts if c.get("type") == "forbidden" and set(c["forbidden_modules"]) == QT
             and all(m.startswith("tfturbo_gui.") for m in c["source_modules"])]
    assert len(found) == 1, "pyproject.toml has no (or more than one) Qt-free GUI models contract"
    return sorted(found[0]["source_modules"])


def loaded_by(graph, module: str) -> set[str]:
    """What `import module` runs: the module, what it imports (directly or not), and the __init__ of every
    package on the way (the edge an import graph does not have)."""
    seen: set[str] = set()
    todo = [module]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        todo += graph.find_modules_directly_imported_by(current)
        parts = current.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts)) if ".".join(parts[:i]) in graph.modules]
    return seen


def test_qt_free_gui_models_load_no_qt_through_their_packages():
    graph = grimp.build_graph("tfturbo_gui", "tfturbo", include_external_packages=True, cache_dir=None)
    offenders = {}
    for module in qt_free_gui_modules():
        assert module in graph.modules, f"{module} is listed as Qt-free but does not exist"
        loaded = loaded_by(graph, module)
        bad = {m: sorted(graph.find_modules_directly_imported_by(m) & QT) for m in loaded
               if m not in QT and graph.find_modules_directly_imported_by(m) & QT}
        if bad:
            offenders[module] = bad
    assert offenders == {}


def test_gui_modules_that_say_no_qt_are_in_the_contract():
    says = {".".join(p.relative_to(ROOT).with_suffix("").parts) for p in (ROOT / "tfturbo_gui").rglob("*.py")
            if "No Qt here" in p.read_text(encoding="utf-8")}
    assert says <= set(qt_free_gui_modules())


def test_cli_start_up_imports_neither_tensorflow_nor_qt():
    code = ("import sys; from tfturbo.cli import build_parser; build_parser(); "
            "print(sorted(m for m in ('tensorflow','keras','PySide6','reportlab') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"


def test_no_test_module_imports_a_conftest_by_its_bare_name():
    """`from conftest import X` resolves to whichever folder's conftest.py pytest imported first: collecting
    tests/tune with tests/report in one call failed with "cannot import name 'FakeBackend' from 'conftest'
    (tests/report/conftest.py)". Helpers shared by test modules live in modules of their own (tune_fakes.py,
    gui_helpers.py), imported by package path."""
    tests = ROOT / "tests"
    offenders = [str(path.relative_to(ROOT)) for path in tests.rglob("*.py")
                 if re.search(r"^\s*(from conftest import|import conftest)|tests\.\w+\.conftest",
                              path.read_text(encoding="utf-8"), re.MULTILINE)]
    assert not offenders, offenders


def import_cycles(graph) -> list[list[str]]:
    """The groups of modules that import each other, directly or not (strongly connected components of more than
    one module), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    cycles = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, imported = work[-1]
            nxt = next(imported, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.find_modules_directly_imported_by(nxt)))))
                elif nxt in on_stack:
                    low[module] = min(low[module], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[module])
            if low[module] == index[module]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == module:
                        break
                if len(group) > 1:
                    cycles.append(sorted(group))
    return cycles


def test_import_cycles_are_found():
    graph = grimp.ImportGraph()
    for module in ("a", "b", "c", "d"):
        graph.add_module(module)
    graph.add_import(importer="a", imported="b")
    graph.add_import(importer="b", imported="c")
    graph.add_import(importer="c", imported="a")
    graph.add_import(importer="c", imported="d")
    assert import_cycles(graph) == [["a", "b", "c"]]


def test_no_module_imports_one_that_imports_it_back():
    """No import cycles between modules, imports inside functions included (grimp reads every import statement):
    a cycle hidden in a function is a layering nobody decided (report/pdf imported profile_page, whose page
    imported pdf back). Annotation-only imports (`if TYPE_CHECKING:`) do not count, as in the contracts."""
    graph = grimp.build_graph("tfturbo", "tfturbo_gui", "trainer_backend", exclude_type_checking_imports=True,
                              cache_dir=None)
    cycles = import_cycles(graph)
    details = {" ↔ ".join(group): sorted(f"{m} -> {i}" for m in group for i in graph.find_modules_directly_imported_by(m)
                                           if i in group) for group in cycles}
    assert cycles == [], details
