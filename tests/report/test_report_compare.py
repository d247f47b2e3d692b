"""The compare table: every number equals what the runs' summary.json files say."""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import replace

import pytest

from tfturbo import summary as summ
from tfturbo.compare import (compare_runs, effective_summary, metric_names, steady_steps, to_csv, to_json,
                             to_text)
from tfturbo.errors import UserError
from tfturbo.runfiles import RUNS_DIR, load_run, load_study
from tfturbo.stats import median_ci

from report_fixtures import PROFILE, WARMUP


def rows_of(study_dir, baseline=0):
    records = load_study(study_dir).runs
    return records, compare_runs(records, baseline)


def test_rows_carry_the_numbers_of_summary_json(study):
    records, rows = rows_of(study)
    base = records[0].summary
    for record, row in zip(records, rows):
        s = json.loads((record.path / "summary.json").read_text())
        assert row.name == record.name and row.status == "completed"
        assert row.steps_per_s == s["steps_per_s"]
        assert row.step_ms == s["step_ms"]["median"] and list(row.step_ms_ci95) == s["step_ms"]["ci95"]
        assert row.peak_memory_bytes == s["peak_memory_bytes"] and row.memory_kind == "host"
        assert row.warmup_s == s["warmup_s"] and row.learning_rate == s["learning_rate"]
        assert row.metrics == {k: v for k, v in s["metrics"].items() if k.startswith("val_")}
        assert (row.policy, row.jit_compile, row.batch_size) == (
            s["settings"]["policy"], s["settings"]["jit_compile"], s["settings"]["batch_size"])
        speedup, ci = summ.speedup(base, s)
        if row.verdict != "baseline":
            assert row.speedup == speedup and row.speedup_ci95 == ci
        assert row.memory_ratio == summ.memory_ratio(base, s)


def test_verdicts_follow_the_intervals(study):
    _, rows = rows_of(study)
    verdicts = {r.name: r.verdict for r in rows}
    assert verdicts == {"01-baseline": "baseline", "02-mixed_bfloat16": "slower", "03-xla": "faster",
                        "04-batch-128": "faster"}
    base = rows[0]
    assert (base.speedup, base.speedup_ci95, base.memory_ratio) == (1.0, (1.0, 1.0), 1.0)
    bigger = rows[3]  # 280 ms at batch 128 against 200 ms at batch 64: faster per sample
    assert bigger.steps_per_s < base.steps_per_s and bigger.speedup == pytest.approx(2 * 200 / 280, rel=0.02)
    assert rows[2].findings == ["DIM_NOT_MULTIPLE_OF_8"]
    assert rows[2].val_delta == ("val_accuracy", pytest.approx(0.002))


def test_baseline_by_name_and_bad_baselines(study):
    records, rows = rows_of(study, "03-xla")
    assert [r.verdict for r in rows] == ["slower", "slower", "baseline", "faster"]
    assert rows[0].speedup == pytest.approx(1 / compare_runs(records)[2].speedup, rel=0.01)
    with pytest.raises(UserError, match="not one of the compared runs"):
        compare_runs(records, "nope")
    with pytest.raises(UserError, match="out of range"):
        compare_runs(records, 9)


def test_runs_without_summary_get_a_row_from_their_events(broken_study):
    records, rows = rows_of(broken_study)
    by_name = {r.name: r for r in rows}
    assert {n: r.status for n, r in by_name.items() if n >= "05"} == {
        "05-failed": "failed", "06-cancelled": "cancelled", "07-crashed": "crashed"}
    cancelled = by_name["06-cancelled"]
    assert not cancelled.from_summary and any("summary.json is missing" in w for w in cancelled.warnings)
    # steady steps are those after warm-up and outside the profiler window, as the backend counts them
    steps = load_run(broken_study / RUNS_DIR / "06-cancelled").steps()
    median, ci = median_ci([ms for n, ms in zip(steps.step, steps.step_ms)
                            if n > WARMUP and not PROFILE[0] <= n < PROFILE[1]])
    assert cancelled.step_ms == median and cancelled.step_ms_ci95 == ci
    assert cancelled.steps_per_s == pytest.approx(1000 / median)
    assert cancelled.peak_memory_bytes == records[0].summary["peak_memory_bytes"]
    assert cancelled.metrics["val_accuracy"] == pytest.approx(0.9)
    assert cancelled.recorded_settings == {} and cancelled.learning_rate is None
    crashed = by_name["07-crashed"]
    assert any("truncated" in w for w in crashed.warnings)
    assert by_name["05-failed"].findings == ["NAN_LOSS"]


def test_steady_samples_from_events_equal_the_summarys(study):
    """The event-derived statistics of a run without summary agree with what the backend would write."""
    for record in load_study(study).runs:
        steps, ms = steady_steps(record)
        assert ms == record.summary["step_ms_samples"]
        assert steps[0] == WARMUP + 1 and not any(PROFILE[0] <= n < PROFILE[1] for n in steps)
        rebuilt = effective_summary(replace(record, summary=None))
        assert rebuilt["step_ms"]["median"] == record.summary["step_ms"]["median"]
        assert rebuilt["warmup_s"] == pytest.approx(record.summary["warmup_s"])
        assert rebuilt["validation"] == record.summary["validation"]


def test_a_run_with_nothing_measured_still_gets_a_row(tmp_path, study):
    empty = tmp_path / "empty-run"
    empty.mkdir()
    (empty / "events.jsonl").write_text("not json\n")
    rows = compare_runs([load_run(study / RUNS_DIR / "01-baseline"), load_run(empty)])
    row = rows[1]
    assert row.status == "crashed" and row.steps_per_s is None and row.speedup is None
    assert row.verdict == "no measurable change"
    assert "n/a" in to_text(rows) and json.dumps(to_json(rows), allow_nan=False)


def test_settings_record_is_read_back_from_the_checkpoint(study):
    _, rows = rows_of(study)
    rec = rows[3].recorded_settings
    assert rec["policy"] == "float32" and rec["jit_compile"] is True and rec["batch_size"] == 128
    assert rec["learning_rate"] == 2e-3 and rec["device"] and rec["versions"]["tensorflow"] == "2.21.0"


def test_csv_round_trip(broken_study):
    _, rows = rows_of(broken_study)
    parsed = list(csv.DictReader(io.StringIO(to_csv(rows))))
    assert [p["name"] for p in parsed] == [r.name for r in rows]
    for p, r in zip(parsed, rows):
        for key in ("steps_per_s", "step_ms", "speedup", "memory_ratio", "warmup_s"):
            value = getattr(r, key)
            assert (p[key] == "" if value is None else float(p[key]) == value), key
        assert (float(p["speedup_ci95_lo"]), float(p["speedup_ci95_hi"])) == r.speedup_ci95
        assert int(p["peak_memory_bytes"]) == r.peak_memory_bytes and p["status"] == r.status
        for m in metric_names(rows):
            assert float(p[m]) == r.metrics[m]
        assert p["findings"].split(";") == (r.findings or [""])
        assert p["warnings"] == " | ".join(r.warnings)


def test_text_table_is_aligned_and_explains_itself(broken_study):
    _, rows = rows_of(broken_study)
    text = to_text(rows)
    lines = text.splitlines()
    header, rule = lines[0], lines[1]
    assert header.startswith("run") and set(rule.replace(" ", "")) == {"-"}
    col = header.index("speed-up")
    for line, row in zip(lines[2:], rows):
        assert line.startswith(row.name)
        cell = "1.00x (baseline)" if row.verdict == "baseline" else \
            f"{row.speedup:.2f}x [{row.speedup_ci95[0]:.2f}, {row.speedup_ci95[1]:.2f}]"
        assert line[col:].startswith(cell)
    assert "warning: 07-crashed: events.jsonl: the last line is truncated" in text
    # the settings record of each checkpoint, read back
    assert ("  04-batch-128       float32, jit_compile True, batch 128, learning rate 0.002, TensorFlow 2.21.0, "
            "Keras 3.15.0, CPU (2 cores, host memory)") in text
    assert "  06-cancelled       none (the run saved no checkpoint settings)" in text
    assert "interval containing 1.00 is no measurable change" in text


def test_json_rows_are_strict_json(broken_study):
    _, rows = rows_of(broken_study)
    doc = to_json(rows)
    text = json.dumps(doc, allow_nan=False)
    back = json.loads(text)
    assert back[2]["speedup_ci95"] == list(rows[2].speedup_ci95)
    assert all(v is None or not (isinstance(v, float) and math.isnan(v)) for d in back for v in d.values())
