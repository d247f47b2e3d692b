"""Bad input never takes the app down or further than it should go (issue 7, item 3).

Corrupt study files are reported and the rest still loads, in the loader, the
GUI's Open Study, `tfturbo report` and `tfturbo compare`; paths written inside
run files never make any of them write outside the study; and the source code
itself never starts a subprocess through a shell nor loads YAML unsafely.
(The event parser fuzz and the corrupt-run-file cases are in tests/core.)
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml
from hardening_helpers import ROOT

from tests.report.report_fixtures import make_study, pdf_text
from tfturbo import protocol, runfiles
from tfturbo.cli import main as tfturbo_main
from tfturbo.runfiles import load_study_runs
from tfturbo.tune.study import Study
from tfturbo_gui.run_browser import RunBrowser

# the rungs' own runs and the runs the ladder does not name (each rung's replicate runs are listed too)
RUN_NAMES = ["01-baseline", "02-mixed_bfloat16", "03-xla", "04-larger_batch", "05-confirmation", "06-failed",
             "07-cancelled", "08-crashed"]


def in_order(names: list[str]) -> list[str]:
    """The RUN_NAMES among `names`, in the order listed."""
    return [n for n in names if n in RUN_NAMES]


@pytest.fixture
def damaged_study(tmp_path) -> Path:
    """A recorded study (with failed, cancelled and crashed runs) whose files are damaged in every way."""
    study = make_study(tmp_path / "study", broken=True)
    runs = study / runfiles.RUNS_DIR
    (study / runfiles.STUDY_YAML).write_text("workload: builtin:transformer\nladder: [{name: 01-baseline, kept: \n")
    (runs / "02-mixed_bfloat16" / runfiles.RUN_YAML).write_text("policy: [unclosed")
    (runs / "03-xla" / runfiles.SUMMARY).write_text('{"status": "completed", "step_ms": ')
    with open(runs / "04-larger_batch" / runfiles.EVENTS, "ab") as f:
        f.write(b"\x00\xff not an event\n[1, 2]\n")
    return study


def test_a_study_with_corrupt_files_still_loads_every_run(damaged_study):
    record = load_study_runs(damaged_study)
    assert in_order([r.name for r in record.runs]) == RUN_NAMES
    study = Study.load(damaged_study)
    assert study.rungs == [] and any("study.yaml is corrupt" in p for p in study.problems)
    runs = {r.name: r for r in record.runs}
    assert any("run.yaml is corrupt" in w for w in runs["02-mixed_bfloat16"].warnings)
    assert any("summary.json is corrupt" in w for w in runs["03-xla"].warnings)
    assert any("2 lines are not valid events" in w for w in runs["04-larger_batch"].warnings)
    assert runs["03-xla"].status == protocol.RunStatus.COMPLETED  # from its `done` event
    assert runs["08-crashed"].status == protocol.RunStatus.CRASHED
    for name in ("02-mixed_bfloat16", "03-xla", "04-larger_batch", "08-crashed"):
        assert runs[name].steps().step[:3] == [1, 2, 3]  # what was measured is still there


def test_open_study_in_the_gui_lists_every_run_and_shows_the_warnings(qtbot, damaged_study):
    browser = RunBrowser()
    qtbot.addWidget(browser)
    browser.open_study(damaged_study)
    top = browser.tree.topLevelItem(0)
    rows = {top.child(i).text(0): top.child(i).text(1) for i in range(top.childCount())}
    assert in_order(list(rows)) == RUN_NAMES
    assert rows["03-xla"] == protocol.RunStatus.COMPLETED and rows["08-crashed"] == protocol.RunStatus.CRASHED
    assert browser.warnings.isVisibleTo(browser) and "study.yaml is corrupt" in browser.warnings.text()
    assert "summary.json is corrupt" in top.child(list(rows).index("03-xla")).toolTip(1)


def test_report_and_compare_of_a_damaged_study_still_cover_every_run(damaged_study, capsys):
    assert tfturbo_main(["report", str(damaged_study)]) == 0
    text = pdf_text(damaged_study / runfiles.REPORT_PDF)
    assert all(name in text for name in RUN_NAMES)
    assert "study.yaml is corrupt" in text
    capsys.readouterr()
    assert tfturbo_main(["compare", str(damaged_study)]) == 0
    table = capsys.readouterr().out
    assert all(name in table for name in RUN_NAMES)


# ------------------------------------------------------------------ paths inside run files

OUTSIDE = "../../outside"


def snapshot(root: Path, skip: Path) -> dict[str, tuple[int, int]]:
    """Every file under `root` but outside `skip`: (size, mtime_ns)."""
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in root.rglob("*") if p.is_file() and skip not in p.parents}


def test_paths_named_in_run_files_never_make_the_app_write_outside_the_study(qtbot, tmp_path, capsys):
    study = make_study(tmp_path / "study")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x").write_text("precious")
    runs = study / runfiles.RUNS_DIR
    meta = yaml.safe_load((study / runfiles.STUDY_YAML).read_text())
    meta["ladder"][1].update(name=f"{OUTSIDE}/x", run=f"{OUTSIDE}/x")
    meta.update(report=f"{OUTSIDE}/report.pdf", recommended_rung=f"{OUTSIDE}/x", runs_dir=OUTSIDE)
    runfiles.write_yaml(study / runfiles.STUDY_YAML, meta)
    summary = runfiles.read_json(runs / "03-xla" / runfiles.SUMMARY, [])
    summary.update(checkpoint=f"../{OUTSIDE}/model.keras",
                   profile={"window": [15, 24], "logdir": f"../{OUTSIDE}", "xplane": f"../{OUTSIDE}/x.xplane.pb"})
    runfiles.write_json_atomic(runs / "03-xla" / runfiles.SUMMARY, summary)
    (runs / "08-link").symlink_to(outside, target_is_directory=True)  # a run folder that leads outside
    before = snapshot(tmp_path, study)

    assert tfturbo_main(["report", str(study)]) == 0
    assert tfturbo_main(["compare", str(study), "--csv", str(study / "table.csv")]) == 0
    capsys.readouterr()
    browser = RunBrowser()
    qtbot.addWidget(browser)
    browser.open_study(study)
    top = browser.tree.topLevelItem(0)
    listed = [top.child(i).text(0) for i in range(top.childCount())]
    assert "08-link" not in listed and "03-xla" in listed  # the symlinked folder is not a run of the study

    assert snapshot(tmp_path, study) == before
    assert (study / runfiles.REPORT_PDF).is_file() and (outside / "x").read_text() == "precious"


# ------------------------------------------------------------------ the source code itself

SOURCE_DIRS = ("tfturbo", "tfturbo_gui", "trainer_backend")
SHELL_CALLS = {"os.system", "os.popen", "subprocess.getoutput", "subprocess.getstatusoutput"}
UNSAFE_YAML = {f"yaml.{name}" for name in ("load", "load_all", "unsafe_load", "unsafe_load_all", "full_load",
                                          "full_load_all", "Loader", "FullLoader", "UnsafeLoader", "CLoader",
                                          "CFullLoader", "CUnsafeLoader")}


def _qualified(node: ast.AST, aliases: dict[str, str]) -> str | None:
    if isinstance(node, ast.Name):
        return aliases.get(node.id, node.id)
    if isinstance(node, ast.Attribute):
        base = _qualified(node.value, aliases)
        return f"{base}.{node.attr}" if base else None
    return None


def audit(source: str) -> list[str]:
    """Shell-started subprocesses and unsafe YAML in `source`, as 'line: what' strings."""
    tree = ast.parse(source)
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases.update({a.asname or a.name.split(".")[0]: a.name if a.asname else a.name.split(".")[0]
                            for a in node.names})
        elif isinstance(node, ast.ImportFrom) and node.module:
            aliases.update({a.asname or a.name: f"{node.module}.{a.name}" for a in node.names})
    found = []
    for node in ast.walk(tree):
        name = _qualified(node, aliases) if isinstance(node, (ast.Name, ast.Attribute)) else None
        if name in UNSAFE_YAML:
            found.append(f"{node.lineno}: {name}")
        if not isinstance(node, ast.Call):
            continue
        called = _qualified(node.func, aliases)
        if called in SHELL_CALLS or (called or "").endswith(".startCommand"):
            found.append(f"{node.lineno}: {called}()")
        for kw in node.keywords:
            if kw.arg == "shell" and not (isinstance(kw.value, ast.Constant) and kw.value.value is False):
                found.append(f"{node.lineno}: shell={ast.unparse(kw.value)}")
    return sorted(set(found))


def sources() -> list[Path]:
    return sorted(p for d in SOURCE_DIRS for p in (ROOT / d).rglob("*.py"))


def test_the_audit_finds_what_it_looks_for():
    planted = ("import os, subprocess as sp, yaml\nfrom yaml import load as yload\n"
               "os.system('ls')\nsp.run(cmd, shell=True)\nyload(text, Loader=yaml.FullLoader)\n"
               "yaml.unsafe_load(text)\nprocess.startCommand(line)\nyaml.safe_load(text)\n"
               "sp.run(['ls'], shell=False)\n")
    assert audit(planted) == ["3: os.system()", "4: shell=True", "5: yaml.FullLoader", "5: yaml.load",
                              "6: yaml.unsafe_load", "7: process.startCommand()"]


def test_no_subprocess_is_started_through_a_shell_and_yaml_is_only_safe_loaded():
    files = sources()
    assert len(files) > 40 and any("yaml.safe_load" in p.read_text() for p in files)
    found = {str(p.relative_to(ROOT)): audit(p.read_text(encoding="utf-8")) for p in files}
    assert {path: what for path, what in found.items() if what} == {}
