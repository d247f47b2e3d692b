"""The compare table: every number equals what the runs' summary.json files say, and a speed verdict
(faster / slower / no measurable change) is given only where replicates measured an interval."""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import replace

import numpy as np
import pytest

from tfturbo.run_summary import RunSummary
from tfturbo.compare import (SAME_SETTINGS, SINGLE_RUN, compare_runs, effective_summary, metric_names,
                             replicate_key, steady_steps, to_csv, to_json, to_text)
from tfturbo.errors import UserError
from tfturbo.runfiles import RUNS_DIR, load_run, load_study_runs
from tfturbo.stats import median_ci, two_sample_ratio_ci

from report_fixtures import PROFILE, WARMUP, make_run

RUNGS = ["01-baseline", "02-mixed_bfloat16", "03-xla", "04-larger_batch", "05-confirmation"]


def rung_records(study_dir):
    """The runs of the study's rungs, without their trials' other replicates (NN-slug.a1, ...)."""
    return [r for r in load_study_runs(study_dir).runs if "." not in r.name]


def rows_of(study_dir, baseline=0):
    records = rung_records(study_dir)
    return records, compare_runs(records, baseline)


def rate(record) -> float:
    return record.summary.samples_per_s


def test_rows_carry_the_numbers_of_summary_json(study):
    records, rows = rows_of(study)
    assert [r.name for r in rows] == RUNGS
    base = records[0].summary
    for record, row in zip(records, rows):
        s = json.loads((record.path / "summary.json").read_text())
        assert row.name == record.name and row.status == "completed"
        # the run's one throughput (`throughput.samples_per_s`) per step: what the speed-up compares. The backend
        # writes summary.json's steps_per_s as the same figure; this fixture's recorded numbers differ in the 4th digit
        assert row.steps_per_s == RunSummary.from_dict(s).step_rate == pytest.approx(s["steps_per_s"], rel=1e-2)
        assert row.step_ms == s["step_ms"]["median"] and list(row.step_ms_ci95) == s["step_ms"]["ci95"]
        assert row.peak_memory_bytes == s["peak_memory_bytes"] and row.memory_kind == "host"
        assert row.warmup_s == s["warmup_s"] and row.learning_rate == s["learning_rate"]
        assert row.metrics == {k: v for k, v in s["metrics"].items() if k.startswith("val_")}
        assert (row.policy, row.jit_compile, row.batch_size) == (
            s["settings"]["policy"], s["settings"]["jit_compile"], s["settings"]["batch_size"])
        # speed is throughput per sample from the device-drained windows, over the baseline's
        if row.verdict != "baseline":
            assert row.speedup == pytest.approx(s["throughput"]["samples_per_s"] / base.throughput["samples_per_s"])
        assert row.memory_ratio == base.memory_ratio(RunSummary.from_dict(s))


def test_a_configuration_measured_by_one_run_gets_no_interval_and_no_verdict(study):
    """Issue 10: one run per configuration cannot tell a gain from a slow minute of the machine, however tight
    each run's own interval; the table gives the ratio and says it is a single run."""
    records, rows = rows_of(study)
    verdicts = {r.name: r.verdict for r in rows}
    assert verdicts == {"01-baseline": "baseline", "02-mixed_bfloat16": SINGLE_RUN, "03-xla": SINGLE_RUN,
                        "04-larger_batch": SINGLE_RUN, "05-confirmation": SINGLE_RUN}
    assert all(r.speedup_ci95 is None for r in rows[1:])
    base = rows[0]
    assert (base.speedup, base.speedup_ci95, base.memory_ratio) == (1.0, (1.0, 1.0), 1.0)
    bigger = rows[3]  # 240 ms at batch 128 against 200 ms at batch 64: fewer steps/s, more samples/s
    assert bigger.steps_per_s < base.steps_per_s and bigger.speedup == pytest.approx(2 * 200 / 240, rel=0.08)
    assert rows[2].findings == ["DIM_NOT_MULTIPLE_OF_8"]
    # accuracy from the paired per-example results (paired_validation.npz) against the baseline's
    assert rows[2].val_delta == ("val_accuracy", pytest.approx(2 / 1000))
    assert rows[1].val_delta == ("val_accuracy", pytest.approx(-3 / 1000))
    assert rows[3].val_delta == ("val_accuracy", pytest.approx(-1 / 1000))
    text = to_text(rows)
    assert not any(w in line for line in text.splitlines()[2:7] for w in (" faster", " slower", "no measurable"))


def test_single_runs_of_identical_settings_are_never_called_different(tmp_path):
    """The bug of issue 10: two runs of the same settings 15% apart, each with a tight interval of its own,
    were judged 'faster'. Runs with another learning rate are another configuration measured once: no verdict.
    (Another seed is another measurement of the same configuration, issue 39: the same settings.)"""
    a = make_run(tmp_path, "a", step_ms=200, noise=0.005, seed=1)
    b = make_run(tmp_path, "b", step_ms=230, noise=0.005, seed=2, lr_scale=0.5)
    seed = make_run(tmp_path, "other-seed", step_ms=230, noise=0.005, seed=3, settings_seed=99)
    assert compare_runs([load_run(a), load_run(seed)])[1].verdict == SAME_SETTINGS
    rows = compare_runs([load_run(a), load_run(b)])
    assert rows[1].verdict == SINGLE_RUN and rows[1].speedup_ci95 is None
    assert rows[1].speedup == pytest.approx(200 / 230, rel=0.01)
    assert "0.87x" in to_text(rows) and "single run: no interval" in to_text(rows)
    # the issue's own case: six runs of the same settings are replicates of one configuration, never "different"
    same = identical_runs(tmp_path, 6, 1234, 30)
    assert [r.verdict for r in compare_runs(same)] == ["baseline"] + [SAME_SETTINGS] * 5


def test_replicated_runs_get_an_interval_and_a_verdict(study):
    """With the trials' replicate runs in the comparison every configuration is measured several times: the
    interval is across those runs (Welch on the log throughputs), so it covers run-to-run noise."""
    records = load_study_runs(study).runs
    rows = compare_runs(records, "01-baseline")
    groups: dict[tuple, list[float]] = {}
    for r in records:
        groups.setdefault(replicate_key(r.summary.settings.to_dict()), []).append(rate(r))
    base_key = replicate_key(records[0].summary.settings.to_dict())
    expected = {"mixed_bfloat16": "slower", "xla": "faster", "batch 128": "faster"}
    for record, row in zip(records, rows):
        key = replicate_key(record.summary.settings.to_dict())
        if row.name == "01-baseline":
            assert row.verdict == "baseline"
        elif key == base_key:  # an A run of a trial: the baseline's own settings
            assert row.verdict == SAME_SETTINGS and row.speedup_ci95 is None
        else:
            ratio, ci = two_sample_ratio_ci(groups[base_key], groups[key])
            assert len(groups[key]) >= 3 and row.speedup == pytest.approx(ratio) and row.speedup_ci95 == ci
            assert ci[0] <= row.speedup <= ci[1]
            what = "mixed_bfloat16" if row.policy == "mixed_bfloat16" else \
                "batch 128" if row.batch_size == 128 else "xla"
            assert row.verdict == expected[what], row.name


def identical_runs(parent, n: int, settings_seed: int, first_seed: int, lr_scale: float = 1.0):
    """n runs of one configuration, each off by a run-level factor (±8%): a busy machine's replicates."""
    rng = np.random.default_rng(first_seed)
    return [load_run(make_run(parent, f"s{settings_seed}-{i}", step_ms=200 * (1 + 0.08 * rng.standard_normal()),
                              noise=0.005, seed=first_seed + i, settings_seed=settings_seed, lr_scale=lr_scale))
            for i in range(n)]


def test_a_run_with_another_steps_per_execution_is_not_a_replicate_of_the_baseline(tmp_path):
    """Issue 19: the replicate key was a hand-kept list without steps_per_execution (nor XLA auto-clustering,
    the tf.data fixes, devices, workers), so a steps_per_execution=4 run counted in the baseline's own group:
    'same settings', its 25% gain hidden. Now every declared setting counts but how a run is measured."""
    base = identical_runs(tmp_path, 3, 1234, 10)
    spe = load_run(make_run(tmp_path, "spe4", step_ms=150, noise=0.005, seed=40, steps_per_execution=4))
    profiled = load_run(make_run(tmp_path, "other-profile", step_ms=200, noise=0.005, seed=41, profile=(5, 9)))
    rows = compare_runs(base + [spe, profiled])
    assert [r.verdict for r in rows] == ["baseline", SAME_SETTINGS, SAME_SETTINGS, SINGLE_RUN, SAME_SETTINGS]
    assert rows[3].speedup == pytest.approx(200 / 150, rel=0.15)


def test_two_identical_configurations_replicated_are_no_measurable_change(tmp_path):
    a = identical_runs(tmp_path, 3, 1234, 10)
    b = identical_runs(tmp_path, 3, 99, 20, lr_scale=0.5)  # another learning rate: the same speed, another configuration
    rows = compare_runs(a + b)
    assert [r.verdict for r in rows] == ["baseline", SAME_SETTINGS, SAME_SETTINGS] + ["no measurable change"] * 3
    lo, hi = rows[3].speedup_ci95
    assert lo < 1.0 < hi
    # each single pair of runs, the way the old compare judged them, looks different often; replicated it is not
    singles = [compare_runs([x, y])[1] for x in a for y in b]
    assert all(r.verdict == SINGLE_RUN for r in singles)
    assert max(r.speedup for r in singles) / min(r.speedup for r in singles) > 1.1


def test_baseline_by_name_and_bad_baselines(study):
    records, rows = rows_of(study, "03-xla")
    assert [r.verdict for r in rows] == [SINGLE_RUN, SINGLE_RUN, "baseline", SINGLE_RUN, SINGLE_RUN]
    assert rows[0].speedup == pytest.approx(1 / compare_runs(records)[2].speedup, rel=1e-9)
    with pytest.raises(UserError, match="not one of the compared runs"):
        compare_runs(records, "nope")
    with pytest.raises(UserError, match="out of range"):
        compare_runs(records, 9)


def test_runs_without_summary_get_a_row_from_their_events(broken_study):
    records, rows = rows_of(broken_study)
    by_name = {r.name: r for r in rows}
    assert {n: r.status for n, r in by_name.items() if n >= "06"} == {
        "06-failed": "failed", "07-cancelled": "cancelled", "08-crashed": "crashed"}
    cancelled = by_name["07-cancelled"]
    assert not cancelled.from_summary and any("summary.json is missing" in w for w in cancelled.warnings)
    # steady steps are those after warm-up and outside the profiler window, as the backend counts them
    steps = load_run(broken_study / RUNS_DIR / "07-cancelled").steps()
    median, ci = median_ci([ms for n, ms in zip(steps.step, steps.step_ms)
                            if n > WARMUP and not PROFILE[0] <= n < PROFILE[1]])
    assert cancelled.step_ms == median and cancelled.step_ms_ci95 == ci
    assert cancelled.steps_per_s == pytest.approx(1000 / median)
    assert cancelled.peak_memory_bytes == records[0].summary.peak_memory_bytes
    assert cancelled.metrics["val_accuracy"] == pytest.approx(0.9)
    assert cancelled.recorded_settings == {} and cancelled.learning_rate is None
    # the baseline's own settings, measured again: a replicate, not a verdict
    assert cancelled.verdict == SAME_SETTINGS and cancelled.speedup_ci95 is None
    crashed = by_name["08-crashed"]
    assert any("truncated" in w for w in crashed.warnings)
    assert by_name["06-failed"].findings == ["NAN_LOSS"]


def test_steady_samples_from_events_equal_the_summarys(study):
    """The event-derived statistics of a run without summary agree with what the backend would write."""
    for record in load_study_runs(study).runs:
        steps, ms = steady_steps(record)
        assert ms == record.summary.step_ms_samples
        assert steps[0] == WARMUP + 1 and not any(PROFILE[0] <= n < PROFILE[1] for n in steps)
        rebuilt = effective_summary(replace(record, summary=None))
        assert rebuilt.step_ms["median"] == record.summary.step_ms["median"]
        assert rebuilt.warmup_s == pytest.approx(record.summary.warmup_s)
        assert rebuilt.validation == record.summary.validation


def test_a_run_with_nothing_measured_still_gets_a_row(tmp_path, study):
    empty = tmp_path / "empty-run"
    empty.mkdir()
    (empty / "events.jsonl").write_text("not json\n")
    rows = compare_runs([load_run(study / RUNS_DIR / "01-baseline"), load_run(empty)])
    row = rows[1]
    assert row.status == "crashed" and row.steps_per_s is None and row.speedup is None
    assert row.verdict == "not measured" and row.val_delta is None
    assert "n/a" in to_text(rows) and json.dumps(to_json(rows), allow_nan=False)


def test_settings_record_is_read_back_from_the_checkpoint(study):
    _, rows = rows_of(study)
    rec = rows[3].recorded_settings
    assert rec["policy"] == "float32" and rec["jit_compile"] is True and rec["batch_size"] == 128
    assert rec["learning_rate"] == 2e-3 and rec["device"] and rec["versions"]["tensorflow"] == "2.21.0"


def test_csv_round_trip(broken_study):
    rows = compare_runs(load_study_runs(broken_study).runs)  # with the replicates: some rows have intervals
    parsed = list(csv.DictReader(io.StringIO(to_csv(rows))))
    assert [p["name"] for p in parsed] == [r.name for r in rows]
    assert any(r.speedup_ci95 and r.verdict != "baseline" for r in rows)
    for p, r in zip(parsed, rows):
        for key in ("steps_per_s", "step_ms", "speedup", "memory_ratio", "warmup_s"):
            value = getattr(r, key)
            assert (p[key] == "" if value is None else float(p[key]) == value), key
        lo_hi = (p["speedup_ci95_lo"], p["speedup_ci95_hi"])
        assert (lo_hi == ("", "")) if r.speedup_ci95 is None else tuple(map(float, lo_hi)) == r.speedup_ci95
        assert p["verdict"] == r.verdict
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
            "n/a" if row.speedup is None else f"{row.speedup:.2f}x"
        assert line[col:].startswith(cell)
        assert f"  {row.verdict}" in line
    assert "warning: 08-crashed: events.jsonl: the last line is truncated" in text
    # the settings record of each checkpoint, read back
    assert ("  04-larger_batch    float32, jit_compile True, batch 128, learning rate 0.002, TensorFlow 2.21.0, "
            "Keras 3.15.0, CPU (2 cores, host memory)") in text
    assert "  07-cancelled       none (the run saved no checkpoint settings)" in text
    assert "Its 95% interval comes from replicates (runs with the same settings)" in text
    assert "`tfturbo ab` measures a verdict" in text


def test_json_rows_are_strict_json(broken_study):
    rows = compare_runs(load_study_runs(broken_study).runs)
    doc = to_json(rows)
    back = json.loads(json.dumps(doc, allow_nan=False))
    i = next(i for i, r in enumerate(rows) if r.speedup_ci95 and r.verdict != "baseline")
    assert back[i]["speedup_ci95"] == list(rows[i].speedup_ci95)
    assert all(d["speedup_ci95"] is None for d, r in zip(back, rows) if r.verdict == SINGLE_RUN)
    assert all(v is None or not (isinstance(v, float) and math.isnan(v)) for d in back for v in d.values())


def test_a_configurations_peak_memory_is_the_median_of_its_runs_as_the_report_and_batch_page_give_it(tmp_path):
    """Issue 42 walk: the compare table gave the baseline's own run's peak (369.7 MiB, XLA 1.38x) where the PDF
    and the Batch page gave the median of its runs (358.0 MiB, 1.43x): one configuration, two figures. The
    table now takes each configuration's runs in a process of their own, row and replicates alike
    (`compare.own_process_peaks`), and the ratio of their medians (`summary.MemoryChange`)."""
    from tfturbo import summary as summ
    from tfturbo.compare import own_process_peaks

    base = [load_run(make_run(tmp_path, f"base{i}", peak_mb=mb, seed=i)) for i, mb in enumerate((370.0, 358.0, 350.0))]
    xla = [load_run(make_run(tmp_path, f"xla{i}", jit=True, peak_mb=mb, seed=i)) for i, mb in enumerate((510.0, 515.0))]
    rows = compare_runs([base[0], xla[0]], 0, replicates=[*base[1:], xla[1]])
    measured = [(r.summary.settings, r.summary) for r in base + xla]
    expected = summ.memory_change(own_process_peaks(base[0].summary.settings, measured),
                                  own_process_peaks(xla[0].summary.settings, measured))
    assert rows[0].peak_memory_bytes == pytest.approx(358.0 * 2**20) and rows[0].memory_ratio == 1.0
    assert rows[1].peak_memory_bytes == pytest.approx(expected.after_bytes)
    assert rows[1].memory_ratio == pytest.approx(expected.ratio) == pytest.approx(512.5 / 358.0)
    alone = compare_runs([base[0], xla[0]])  # single runs: each its own peak, as before
    assert alone[1].memory_ratio == pytest.approx(510.0 / 370.0)
