"""The PDF report built from recorded run files (no training): its text against summary.json."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from pypdf import PdfReader

from reportlab.graphics.charts.lineplots import LinePlot

from report_fixtures import PROFILE, WARMUP, make_run, make_study, pdf_text
from tfturbo import summary as summ
from tfturbo.errors import UserError
from tfturbo.report import gather, write_report
from tfturbo.report.charts import line_chart
from tfturbo.runfiles import RUNS_DIR, STUDY_YAML

ROOT = Path(__file__).resolve().parents[2]


def summary_of(study: Path, name: str) -> dict:
    return json.loads((study / RUNS_DIR / name / "summary.json").read_text())


@pytest.fixture
def report_text(study) -> str:
    return pdf_text(write_report(study))


def flat(text: str) -> str:
    """Text with line breaks as spaces (a wrapped paragraph reads as one line)."""
    return " ".join(text.split())


def test_report_states_the_measured_speedup_and_settings(study, report_text):
    base, tuned = summary_of(study, "01-baseline"), summary_of(study, "04-batch-128")
    speedup, (lo, hi) = summ.speedup(base, tuned)
    text = flat(report_text)
    # the verdict: speed-up with its interval, memory, accuracy
    assert f"is {speedup:.2f}x as fast as the baseline" in text
    assert f"95% confidence interval {lo:.2f}x to {hi:.2f}x" in text
    ratio = summ.memory_ratio(base, tuned)
    assert f"Peak host memory is {abs(1 - ratio) * 100:.0f}% higher" in text
    assert "Accuracy is kept: val_accuracy -0.10 percentage points" in text
    # the configuration table: every rung's speed-up and interval against the baseline
    for name in ("02-mixed_bfloat16", "03-xla", "04-batch-128"):
        s, (a, b) = summ.speedup(base, summary_of(study, name))
        assert f"{s:.2f}x [{a:.2f}, {b:.2f}]" in text, name
        assert f"{1 / s:.2f}x [{1 / b:.2f}, {1 / a:.2f}]" in text, name  # relative time per sample
    # the settings to apply, as recorded in the tuned run's summary
    settings = tuned["settings"]
    assert f"Precision policy {settings['policy']}" in text
    assert f"jit_compile (XLA) {settings['jit_compile']}" in text
    assert f"Batch size {settings['batch_size']}" in text
    assert f"Learning rate {tuned['learning_rate']:.6g}" in text


def test_report_has_every_section_page_numbers_and_vector_plots(study):
    path = write_report(study)
    reader = PdfReader(str(path))
    text = flat(pdf_text(path))
    for heading in ("Training speed-up report", "Verdict", "Configurations", "Before and after", "Step time",
                    "Training loss", "Validation: val_accuracy", "Findings and fixes", "Input pipeline",
                    "Compute-bound", "Settings record", "Appendix: reproducibility", "Commands"):
        assert heading in text, heading
    n = len(reader.pages)
    assert all(f"Page {i} of {n}" in flat(p.extract_text()) for i, p in enumerate(reader.pages, 1))
    assert all(not page.images for page in reader.pages)  # plots are vector paths with text, not pictures
    assert "baseline: float32, batch 64" in text and "tuned: float32 + XLA, batch 128" in text  # legend
    assert reader.metadata.title == "Training speed-up report: builtin:transformer"


def test_step_time_plot_leaves_the_profiler_window_as_a_gap(study):
    plot = gather(study).plots[0]
    assert plot.title == "Step time" and len(plot.curves) == 2
    for curve in plot.curves:  # steady steps only: after warm-up, outside the profiler window
        assert curve.x[0] == WARMUP + 1 and not any(PROFILE[0] <= x < PROFILE[1] for x in curve.x)
    chart = line_chart(plot, 400)
    lines = [node for node in chart.contents if isinstance(node, LinePlot)][0]
    assert len(lines.data) == 4  # each curve drawn in two pieces: no line bridges the profiler window
    assert [p[0] for p in lines.data[1]][0] == PROFILE[1]


def test_report_reads_back_each_runs_settings_record_and_reproduction_commands(study, report_text):
    text = flat(report_text)
    assert "checkpoint/tfturbo-settings.yaml" in text
    assert "04-batch-128 float32 True 128 0.002" in text
    # the exact commands, through cli_args.run_argv
    assert ("tfturbo run builtin:transformer --out rerun/04-batch-128 --policy float32 --jit --steps 60 "
            "--seed 1234") in text
    assert "Seed 1234" in text and "Steps per run 60" in text and "TensorFlow 2.21.0" in text


def test_findings_are_shown_with_their_fix_as_code(study, report_text):
    text = flat(report_text)
    assert "WARNING DIM_NOT_MULTIPLE_OF_8" in text
    assert "keras.layers.Dense(104) # was Dense(100)" in text


def test_user_strings_are_printed_literally_never_interpreted(tmp_path):
    evil = "<b>&evil</b>"
    study = make_study(tmp_path / "s", workload=f"./{evil}.py")
    data = yaml.safe_load((study / STUDY_YAML).read_text())
    data["findings"].append({"code": "HEAD_NOT_FLOAT32", "severity": "error", "where": "<font size=40>head",
                             "message": "unclosed <i>tag & stray >", "fix": "layers.Dense(10, dtype='float32') <br/>"})
    (study / STUDY_YAML).write_text(yaml.safe_dump(data))
    text = pdf_text(write_report(study))
    assert f"./{evil}.py" in text  # title page, footer and commands
    assert "dense_<b>&evil</b>" in text
    assert "<font size=40>head" in text and "unclosed <i>tag & stray >" in text
    assert "layers.Dense(10, dtype='float32') <br/>" in text


def test_huge_and_odd_strings_never_break_the_layout(tmp_path):
    """A table row cannot span pages: file-supplied text is cut in cells, and flows in full elsewhere."""
    study = make_study(tmp_path / "s", workload="builtin:\u4e2d\u6587\x1b[31m" + "w" * 2000)
    data = yaml.safe_load((study / STUDY_YAML).read_text())
    data["ladder"][1]["reason"] = "a very long reason " * 600
    data["findings"].append({"code": "X", "severity": "warning", "where": "\x00\x07 layer", "message": "m " * 3000,
                             "fix": ("    y = f(x)  # " + "z" * 300 + "\n") * 150})
    (study / STUDY_YAML).write_text(yaml.safe_dump(data))
    text = flat(pdf_text(write_report(study)))
    assert "a very long reason a very long reason" in text and "(shortened)" in text


def test_failed_cancelled_and_truncated_runs_are_marked(broken_study):
    text = flat(pdf_text(write_report(broken_study)))
    assert "05-failed" in text and "06-cancelled" in text and "07-crashed" in text
    for status in ("failed", "cancelled", "crashed"):
        assert f" {status} " in text  # the status column
    assert "Warnings" in text
    assert "06-cancelled (CANCELLED): no summary.json, so its numbers are what its events recorded" in text
    assert "07-crashed (CRASHED)" in text and "events.jsonl: the last line is truncated" in text
    assert "05-failed (FAILED)" in text


@pytest.mark.parametrize("damage", ["missing", "corrupt"])
def test_without_a_readable_study_yaml_the_runs_are_compared_with_the_first(study, damage):
    path = study / STUDY_YAML
    if damage == "missing":
        path.unlink()
    else:
        path.write_text("ladder: [unclosed\n  : :")
    data = gather(study)
    assert not data.has_ladder and data.baseline.name == "01-baseline"
    assert data.tuned.name == "04-batch-128"  # the fastest run that is faster beyond the noise
    text = flat(pdf_text(write_report(study)))
    assert "no readable ladder decisions (study.yaml), so the runs are compared with the first one" in text
    assert "study.yaml" in text and "Warnings" in text


def test_an_input_bound_study_says_so_in_the_verdict(study):
    data = yaml.safe_load((study / STUDY_YAML).read_text())
    data["probe"] = {"verdict": "input_bound", "input_fraction": 0.62, "data_steps_per_s": 3.0,
                     "compute_steps_per_s": 9.0, "train_steps_per_s": 3.1, "findings": []}
    (study / STUDY_YAML).write_text(yaml.safe_dump(data))
    text = flat(pdf_text(write_report(study)))
    assert "The training job is input-bound (about 62% of each step waits for data)" in text
    assert "Input-bound: the input pipeline limits the step rate" in text


def test_an_input_bound_study_without_runs_still_gets_its_report(tmp_path):
    study = tmp_path / "s"
    study.mkdir()
    (study / STUDY_YAML).write_text(yaml.safe_dump({
        "workload": "builtin:slow-input", "status": "input_bound", "ladder": [], "recommended": None,
        "probe": {"verdict": "input_bound", "input_fraction": 0.8, "data_steps_per_s": 2.0,
                  "compute_steps_per_s": 40.0, "train_steps_per_s": 2.1},
        "findings": [{"code": "INPUT_BOUND", "severity": "error", "where": "train dataset",
                      "message": "80% of each step waits for data",
                      "fix": "ds = ds.map(f, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)"}]}))
    text = flat(pdf_text(write_report(study)))
    assert "The training job is input-bound (about 80% of each step waits for data)" in text
    assert "ERROR INPUT_BOUND in train dataset" in text
    assert "ds = ds.map(f, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)" in text
    assert "No configuration was measured" in text and "Input pipeline alone 2.00 batches/s" in text


def test_when_nothing_beats_the_baseline_the_verdict_keeps_it(tmp_path):
    runs = tmp_path / "s" / RUNS_DIR
    make_run(runs, "01-baseline", seed=1)
    make_run(runs, "02-mixed_float16", policy="mixed_float16", step_ms=260, seed=2)
    (tmp_path / "s" / STUDY_YAML).write_text(yaml.safe_dump({
        "workload": "builtin:mlp", "recommended": None, "recommended_rung": None,
        "ladder": [{"name": "01-baseline", "kept": True, "reason": "baseline"},
                   {"name": "02-mixed_float16", "kept": False, "reason": "slower: 0.77x [0.76, 0.78]"}]}))
    data = gather(tmp_path / "s")
    assert data.tuned is None
    assert "No configuration was measurably faster than the baseline" in data.verdict
    s, (lo, hi) = summ.speedup(summary_of(tmp_path / "s", "01-baseline"), summary_of(tmp_path / "s", "02-mixed_float16"))
    assert f"Tried: mixed_float16, batch 64: {s:.2f}x [{lo:.2f}, {hi:.2f}], slower." in data.verdict
    assert [c.label for c in data.plots[0].curves] == ["baseline: float32, batch 64", "tried: mixed_float16, batch 64"]
    assert ("Precision policy", "float32") in data.apply_rows


def test_report_path_default_and_output_option(study, tmp_path):
    assert write_report(study) == study / "report.pdf"
    out = write_report(study, tmp_path / "deep" / "client.pdf")
    assert out.read_bytes().startswith(b"%PDF")
    assert not [p for p in out.parent.iterdir() if p.name != "client.pdf"]  # no temporary file left
    with pytest.raises(UserError, match="is a directory"):
        write_report(study, tmp_path)
    with pytest.raises(UserError, match="holds no runs"):
        write_report(tmp_path / "deep")  # neither runs nor study.yaml


def test_report_is_headless_no_qt_no_tensorflow(study):
    code = ("import sys; from tfturbo.report import write_report; write_report(sys.argv[1]); "
            "print(sorted(m for m in ('tensorflow', 'keras', 'PySide6', 'pyqtgraph') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code, str(study)], capture_output=True, text=True, cwd=ROOT,
                         env={"PATH": "/usr/bin:/bin", "HOME": str(study)}, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]"


def test_symbols_without_a_glyph_in_the_font_are_spelled_out(tmp_path):
    study = make_study(tmp_path / "s")
    data = yaml.safe_load((study / STUDY_YAML).read_text())
    data["findings"].append({"code": "DIM_NOT_MULTIPLE_OF_8", "severity": "warning", "where": "dense",
                             "message": "units = 250 → 256", "fix": "keras.layers.Dense(256)"})
    (study / STUDY_YAML).write_text(yaml.safe_dump(data))
    text = pdf_text(write_report(study))
    assert "units = 250 -> 256" in text and "→" not in text


def test_greek_and_cyrillic_study_names_print_in_the_shipped_font(tmp_path):
    """Issue 12: a workload path in Cyrillic printed as empty boxes; DejaVu Sans (resources/fonts) has the glyphs."""
    from reportlab.pdfbase import pdfmetrics

    from tfturbo.report import style

    name = "модель_αβγ"
    study = make_study(tmp_path / "s", workload=f"./{name}.py")
    text = pdf_text(write_report(study))
    assert f"./{name}.py" in text
    face = pdfmetrics.getFont(style.FONT).face
    assert all(ord(c) in face.charToGlyph for c in name)  # a glyph for each, not the .notdef box


def test_a_run_that_failed_before_its_folder_reads_as_failed_not_missing(tmp_path):
    """Issue 12: such a run read "missing", with its whole traceback in a narrow column."""
    study = make_study(tmp_path / "s")
    data = yaml.safe_load((study / STUDY_YAML).read_text())
    data["ladder"].append({**data["ladder"][1], "name": "05-mixed_float16", "run": "runs/05-mixed_float16",
                           "status": "failed", "kept": False, "findings": [],
                           "reason": "the run failed: TypeError: boom\nTraceback (most recent call last):\n  File x"})
    (study / STUDY_YAML).write_text(yaml.safe_dump(data))
    text = flat(pdf_text(write_report(study)))
    assert "05-mixed_float16" in text and "TypeError: boom" in text
    assert "Traceback (most recent call last)" not in text and "missing" not in text.lower().split("05-mixed")[1][:80]
