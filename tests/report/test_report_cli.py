"""`tfturbo compare` and `tfturbo report` as a user runs them (fresh processes, recorded runs)."""

from __future__ import annotations

import csv
import json

from report_fixtures import pdf_text
from tfturbo import summary as summ
from tfturbo.runfiles import RUNS_DIR

from tests.conftest import run_cli  # the suite runs from the repository root (`python -m pytest`)


def test_compare_prints_the_table_and_writes_csv(broken_study, tmp_path):
    runs = broken_study / RUNS_DIR
    out_csv = tmp_path / "table.csv"
    proc = run_cli("compare", str(runs / "01-baseline"), str(runs / "03-xla"), str(runs / "07-crashed"),
                   "--csv", str(out_csv))
    assert proc.returncode == 0, proc.stderr
    base = json.loads((runs / "01-baseline" / "summary.json").read_text())
    xla = json.loads((runs / "03-xla" / "summary.json").read_text())
    s, (lo, hi) = summ.speedup(base, xla)
    lines = proc.stdout.splitlines()
    assert lines[0].split()[:3] == ["run", "status", "policy"]
    assert any(line.startswith("03-xla") and f"{s:.2f}x [{lo:.2f}, {hi:.2f}]" in line and "faster" in line
               for line in lines)
    assert any(line.startswith("07-crashed") and "crashed" in line for line in lines)
    assert "warning: 07-crashed: events.jsonl: the last line is truncated" in proc.stdout
    assert [r["name"] for r in csv.DictReader(out_csv.open())] == ["01-baseline", "03-xla", "07-crashed"]


def test_compare_json_and_baseline_choice(study):
    proc = run_cli("compare", str(study), "--baseline", "03-xla", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["baseline"] == "03-xla"
    rows = {r["name"]: r for r in doc["runs"]}
    assert list(rows) == ["01-baseline", "02-mixed_bfloat16", "03-xla", "04-batch-128"]
    xla = json.loads((study / RUNS_DIR / "03-xla" / "summary.json").read_text())
    assert rows["03-xla"]["steps_per_s"] == xla["steps_per_s"] and rows["03-xla"]["verdict"] == "baseline"
    assert rows["01-baseline"]["verdict"] == "slower"


def test_compare_errors_are_one_line_with_exit_2(study, tmp_path):
    proc = run_cli("compare", str(tmp_path / "nowhere"))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "is not a directory" in proc.stderr
    proc = run_cli("compare", str(study), "--baseline", "nope")
    assert proc.returncode == 2 and "not one of the compared runs" in proc.stderr
    (tmp_path / "empty").mkdir()
    proc = run_cli("compare", str(tmp_path / "empty"))
    assert proc.returncode == 2 and "holds no run" in proc.stderr


def test_report_command_writes_the_pdf(study, tmp_path):
    out = tmp_path / "client.pdf"
    proc = run_cli("report", str(study), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"report written to {out}"
    assert "Training speed-up report" in pdf_text(out)
    proc = run_cli("report", str(tmp_path / "missing"))
    assert proc.returncode == 2 and "is not a directory" in proc.stderr
