"""`tfturbo compare` and `tfturbo report` as a user runs them (fresh processes, recorded runs)."""

from __future__ import annotations

import csv
import json

import pytest

from report_fixtures import pdf_text
from tests.conftest import run_cli  # the suite runs from the repository root (`python -m pytest`)
from tfturbo.run_summary import RunSummary
from tfturbo.runfiles import RUNS_DIR

RUNGS = ["01-baseline", "02-mixed_bfloat16", "03-xla", "04-larger_batch", "05-confirmation"]


def test_compare_prints_the_table_and_writes_csv(broken_study, tmp_path):
    runs = broken_study / RUNS_DIR
    out_csv = tmp_path / "table.csv"
    proc = run_cli("compare", str(runs / "01-baseline"), str(runs / "03-xla"), str(runs / "08-crashed"),
                   "--csv", str(out_csv))
    assert proc.returncode == 0, proc.stderr
    base = RunSummary.from_dict(json.loads((runs / "01-baseline" / "summary.json").read_text()))
    xla = RunSummary.from_dict(json.loads((runs / "03-xla" / "summary.json").read_text()))
    ratio = xla.samples_per_s / base.samples_per_s
    lines = proc.stdout.splitlines()
    assert lines[0].split()[:3] == ["run", "status", "policy"]
    # one run of each configuration: the ratio, no interval and no verdict
    xla_line = next(line for line in lines if line.startswith("03-xla"))
    assert f"{ratio:.2f}x  " in xla_line and "single run: no interval" in xla_line
    assert not any(w in xla_line for w in ("faster", "slower", "x [")), xla_line  # no speed-up interval
    assert any(line.startswith("08-crashed") and "crashed" in line for line in lines)
    assert "warning: 08-crashed: events.jsonl: the last line is truncated" in proc.stdout
    assert "`tfturbo ab` measures a verdict" in proc.stdout
    assert [r["name"] for r in csv.DictReader(out_csv.open())] == ["01-baseline", "03-xla", "08-crashed"]


def test_compare_of_replicated_runs_gives_intervals_and_verdicts(study):
    """The trials' replicate runs are in runs/: comparing the whole folder, each configuration's runs are
    its replicates and get an interval and a verdict."""
    proc = run_cli("compare", str(study), "--json")
    assert proc.returncode == 0, proc.stderr
    rows = {r["name"]: r for r in json.loads(proc.stdout)["runs"]}
    assert len(rows) == 31  # with the first trial's two seed replicates of the baseline (issue 39)
    # another seed is another measurement of the baseline's configuration, not another configuration
    assert rows["02-mixed_bfloat16.a0"]["verdict"] == rows["02-mixed_bfloat16.a-1"]["verdict"] == "same settings"
    assert rows["03-xla"]["verdict"] == rows["03-xla.b2"]["verdict"] == "faster"
    assert rows["02-mixed_bfloat16"]["verdict"] == "slower"
    lo, hi = rows["04-larger_batch"]["speedup_ci95"]
    assert rows["04-larger_batch"]["verdict"] == "faster" and 1.0 < lo <= rows["04-larger_batch"]["speedup"] <= hi
    assert rows["03-xla.a2"]["verdict"] == "same settings"  # an A run of a trial: the baseline's own settings


def test_compare_json_and_baseline_choice(study):
    runs = study / RUNS_DIR
    proc = run_cli("compare", *(str(runs / n) for n in RUNGS), "--baseline", "03-xla", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["baseline"] == "03-xla"
    rows = {r["name"]: r for r in doc["runs"]}
    assert list(rows) == RUNGS
    xla = json.loads((runs / "03-xla" / "summary.json").read_text())
    assert rows["03-xla"]["steps_per_s"] == pytest.approx(xla["steps_per_s"]) and rows["03-xla"]["verdict"] == "baseline"
    assert rows["01-baseline"]["verdict"] == "single run: no interval"
    assert rows["01-baseline"]["speedup"] < 1 and rows["01-baseline"]["speedup_ci95"] is None


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
