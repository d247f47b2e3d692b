"""The PDF report built from recorded run files (no training): its text against summary.json."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from pypdf import PdfReader


import resources
from report_fixtures import PROFILE, WARMUP, make_run, make_study, pdf_text
from tfturbo.run_summary import RunSummary
from tfturbo.errors import UserError
from tfturbo.report import gather, write_report
from tfturbo.report.charts import line_chart
from tfturbo.runfiles import RUNS_DIR, STUDY_YAML, load_study_runs
from tfturbo.tune.study import Study

ROOT = Path(__file__).resolve().parents[2]


def summary_of(study: Path, name: str) -> dict:
    return json.loads((study / RUNS_DIR / name / "summary.json").read_text())


@pytest.fixture
def report_text(study) -> str:
    return pdf_text(write_report(study))


def flat(text: str) -> str:
    """Text with line breaks as spaces (a wrapped paragraph reads as one line)."""
    return " ".join(text.split())


def ladder(study: Path) -> dict[str, dict]:
    return {e["name"]: e for e in yaml.safe_load((study / STUDY_YAML).read_text())["ladder"]}


RUNGS = ["01-baseline", "02-mixed_bfloat16", "03-xla", "04-larger_batch", "05-confirmation"]


def test_verdict_states_the_trials_ratio_interval_pairs_and_accuracy(study, report_text):
    base, tuned = summary_of(study, "01-baseline"), summary_of(study, "04-larger_batch")
    confirmation = ladder(study)["05-confirmation"]
    speed, acc = confirmation["speed"], confirmation["accuracy"]
    lo, hi = speed["ci95"]
    text = flat(report_text)
    # the headline is the confirmation trial: the recommendation side by side with the baseline
    assert speed["verdict"] == "faster" and speed["replicates"] == 3
    assert (f"Training with float32 + XLA, batch 128 is {speed['ratio']:.2f}x as fast as the baseline "
            "(float32, batch 64), measured as throughput per sample side by side with it "
            f"(95% interval {lo:.2f}x to {hi:.2f}x over 3 interleaved replicate pairs, so run-to-run variation "
            "is included; faster).") in text
    ratio = RunSummary.from_dict(base).memory_ratio(RunSummary.from_dict(tuned))
    assert f"Peak host memory is {abs(1 - ratio) * 100:.0f}% higher" in text
    alo, ahi = acc["ci95"]
    assert acc["n_examples"] == 1000 and acc["verdict"] == "within tolerance"
    assert (f"Accuracy against the baseline on 1000 validation examples at equal samples seen: val_accuracy "
            f"{acc['delta'] * 100:+.2f} pp [{alo * 100:+.2f} pp, {ahi * 100:+.2f} pp] — within tolerance.") in text
    # the settings to apply, as recorded in the tuned run's summary
    settings = tuned["settings"]
    assert f"Precision policy {settings['policy']}" in text
    assert f"jit_compile (XLA) {settings['jit_compile']}" in text
    assert f"Batch size {settings['batch_size']}" in text
    assert f"Learning rate {tuned['learning_rate']:.6g}" in text


def test_configuration_table_shows_each_configurations_headline(study, report_text):
    """One speed-up per configuration (`tfturbo.headline`): the last trial against the baseline, else its own
    trial against its reference; the larger batch shows the confirmation's number, as the verdict does."""
    text = flat(report_text)
    entries = ladder(study)
    confirmation = entries["05-confirmation"]
    for name in RUNGS[1:]:
        e = entries[name]
        source = confirmation if name == "04-larger_batch" else e
        s, (a, b) = source["speed"]["ratio"], source["speed"]["ci95"]
        whose = " (the confirmation's trial)" if source is not e else ""
        assert source["compared_with"] == "01-baseline"  # said as what it is, not as its run folder
        assert f"{s:.2f}x [{a:.2f}, {b:.2f}] vs the baseline, 3 pairs{whose}" in text, name
        acc = e["accuracy"]
        lo, hi = acc["ci95"]
        assert f"{acc['delta'] * 100:+.2f} pp [{lo * 100:+.2f}, {hi * 100:+.2f}] {acc['verdict']}, 1000 ex." \
            in text, name
    assert entries["04-larger_batch"]["compared_with"] == "03-xla"  # the larger batch extends the kept XLA rung
    assert entries["02-mixed_bfloat16"]["accuracy"]["verdict"] == "inconclusive"
    # the decision column gives the trial's reason, its speed said once (the Speed-up column holds the number)
    # in the wizard's word for the same decision (`verdicts.Decision`): the PDF said "rejected" where the GUI said
    # "not kept" (issue 42)
    assert "not kept mixed_bfloat16 was the policy asked for; slower; accuracy inconclusive: 1000 examples" in text
    assert "rejected" not in text.lower()
    assert "kept XLA on the best configuration so far; faster; val_accuracy +0.20 pp" in text


def test_a_decision_cell_labels_a_figure_that_is_not_the_rows_headline(study, report_text):
    """Issue 22 walk: a rung's Decision cell quoted its own trial (1.72×) beside the row's confirmation figure
    (1.91×). One headline per configuration; the rung's own trial is secondary and says what it is."""
    text = flat(report_text)
    table = text.split("Configurations")[1].split("Before and after")[0]
    own, confirmation = ladder(study)["04-larger_batch"]["speed"], ladder(study)["05-confirmation"]["speed"]
    lo, hi = own["ci95"]
    row = table.split("Batch size · 04-larger_batch")[1].split("Re-measure & compare · 05-confirmation")[0]
    assert f"{confirmation['ratio']:.2f}x" in row  # the headline, in the Speed-up column
    assert (f"its own trial, against XLA: {own['ratio']:.2f}× [{lo:.2f}, {hi:.2f}] over 3 pairs, faster"
            in row), row
    assert f"faster: {own['ratio']:.2f}×" not in row  # never unlabelled
    rows = {"03-xla": ("XLA compilation · 03-xla", "Batch size · 04-larger_batch"),
            "05-confirmation": ("Re-measure & compare · 05-confirmation", "tfturbo report")}
    for name, (start, end) in rows.items():  # their headline is their own trial: the number once
        cell = table.split(start)[1].split(end)[0]
        assert cell.count(f"{ladder(study)[name]['speed']['ratio']:.2f}") == 1, cell


def test_no_count_reads_as_a_plural_in_brackets(study, report_text):
    """Issue 22 walk: "replicate pair(s)" in the PDF's decision cells and the tune output: counts say their
    noun in the right number ("1 pair", "3 pairs")."""
    assert not re.search(r"\w\(s\)", report_text), re.search(r".{60}\w\(s\).{20}", report_text)
    old = yaml.safe_load((study / STUDY_YAML).read_text())  # a study written before: its reasons say "pair(s)"
    for e in old["ladder"]:
        e["reason"] = (e.get("reason") or "").replace("replicate pairs", "replicate pair(s)")
        e["design"] = (e.get("design") or "").replace("replicate pairs", "replicate pair(s)")
        e.pop("reason_parts", None)  # recorded since issue 41: an older study's reason is matched
        e.pop("speed_said", None)
    (study / STUDY_YAML).write_text(yaml.safe_dump(old))
    assert "pair(s)" in (study / STUDY_YAML).read_text()
    again = pdf_text(write_report(study))
    table = again.split("Before and after")[0]
    assert not re.search(r"\w\(s\)", flat(table) + flat(again.split("How each trial measured")[1][:600]))


def _set_peaks(study: Path, peaks_gib: dict[tuple, list[float]]) -> None:
    """Each run's peak memory by its configuration (policy, XLA, batch), cycling through the values given."""
    used: dict[tuple, int] = {}
    for path in sorted((study / RUNS_DIR).iterdir()):
        doc = json.loads((path / "summary.json").read_text())
        s = doc["settings"]
        key = (s["policy"], s["jit_compile"], s["batch_size"])
        if key in peaks_gib:
            values = peaks_gib[key]
            doc["peak_memory_bytes"] = int(values[used.get(key, 0) % len(values)] * 2**30)
            used[key] = used.get(key, 0) + 1
            (path / "summary.json").write_text(json.dumps(doc))


def test_a_memory_change_is_claimed_only_beyond_the_runs_own_spread(study):
    """Issue 22 walk: "Peak host memory is 1% lower (1.1 GiB to 1.1 GiB)" from one run of each. Runs of one
    configuration differ (RSS): a change is claimed only beyond that spread, with digits that show it."""
    base, tuned = ("float32", False, 64), ("float32", True, 128)
    _set_peaks(study, {base: [1.101, 1.128, 1.117], tuned: [1.109, 1.094]})  # overlapping: noise
    verdict = gather(study).verdict
    said = verdict[verdict.index("Peak host memory"):].split(". ")[0]
    assert said.startswith("Peak host memory is about the same (1.12 GiB and 1.10 GiB; runs of one configuration "
                           "differ by up to 27.6 MiB"), said
    assert "lower" not in said and "higher" not in said
    table = flat(pdf_text(write_report(study))).split("Configurations")[1].split("Before and after")[0]
    row = table.split("Batch size · 04-larger_batch")[1].split("Re-measure & compare · 05-confirmation")[0]
    assert "about the same 1.1 GiB (within the runs' spread)" in row and "0.99x" not in row, row
    _set_peaks(study, {base: [1.101, 1.128, 1.117], tuned: [1.31, 1.33]})  # apart, beyond the spread
    said = gather(study).verdict.split("Peak host memory")[1].split(". ")[0]
    assert said.startswith(" is 18% higher (1.1 GiB to 1.3 GiB"), said


def test_one_run_of_each_claims_no_memory_change(study):
    from tfturbo.report.model import _memory_sentence
    from tfturbo.runfiles import load_study_runs

    _set_peaks(study, {("float32", False, 64): [1.1], ("float32", True, 128): [1.09]})
    data = gather(study)
    one_each = {r.name: r for r in load_study_runs(study).runs if r.name in ("01-baseline", "04-larger_batch")}
    said = _memory_sentence(data.baseline, data.tuned, one_each)
    assert said == ("Peak host memory: 1.10 GiB before, 1.09 GiB after (one run of each, so how much identical "
                    "runs differ is not known and no change is claimed). "), said


def test_replicate_runs_are_measurements_of_their_trial_not_rungs(study, report_text):
    data = gather(study)
    assert [r.name for r in data.rungs] == RUNGS
    # the baseline, and of each trial B's full-length run (the accuracy gate's) and 3 speed pairs; the first
    # trial's reference trained again from two other seeds (the gate's trainings' noise, once per study)
    assert len(list((study / RUNS_DIR).iterdir())) == 1 + 4 * 7 + 2
    text = flat(report_text)
    assert not any(f"{name}.{arm}" in text for name in RUNGS for arm in ("a2", "a3", "a4", "b2", "b3", "b4"))
    # each trial by what it measured, never by its run folder (issue 42); the two of one configuration told apart
    assert "Runs measured 31 in all; replicate pairs: mixed_bfloat16: 3; XLA: 3; XLA + batch 128 + learning rate " \
           "x2, the batch size step: 3; XLA + batch 128 + learning rate x2, the confirmation: 3" in text


def test_appendix_states_the_design(study, report_text):
    text = flat(report_text)
    designs = {name: e["design"] for name, e in ladder(study).items() if e.get("design") and name != "01-baseline"}
    design = designs["03-xla"]
    assert design.startswith("3 replicate pairs, each an A and a B run in one process, "
                             "alternating AB/BA")  # the paired replicates (docs/MEASUREMENT.md)
    assert "Before the pairs, B's first run trained" in design and "for the accuracy gate only" in design
    # every trial's count, not the first one's (issue 22: "4 replicate pair(s)" for trials of 4, 6, 5, 3 pairs)
    shown = design.replace("3 replicate pairs", "3 replicate pairs per trial (each row gives its own)", 1)
    steady = sorted({int(re.search(r"measuring about (\d+) s", d).group(1)) for d in designs.values()})
    shown = re.sub(r"measuring about \d+ s", f"measuring about {steady[0]}–{steady[-1]} s" if len(steady) > 1
                   else f"measuring about {steady[0]} s", shown)  # each trial sized its own pairs: the range
    # the seed runs are the study's, trained once by its first trial (a rung's own words say whose they are)
    shown = re.sub(r" \((by this trial|by an earlier trial of the study|\d+ of them by this trial)\)",
                   " (once for the study, by its first trial)", shown)
    assert f"How each trial measured {shown}" in text, text[text.find("How each trial"):][:1200]
    assert "accuracy paired on the same 1000 validation examples at equal samples seen" in text
    assert "the speed interval is a Student-t interval across the pairs' ratios, so it includes run-to-run " \
           "variation" in text
    assert "3 replicate pairs per trial;" in text.split("Study options")[1][:300]
    assert "{" not in text.split("Study options")[1][:300]  # the tune options in words, not a Python dict


def test_the_appendix_reads_each_trials_steady_seconds_as_recorded_and_an_older_study_from_its_words(study):
    """The steady seconds are a number in study.yaml (each trial's `design_record`), the report's range is made of
    those numbers, never read back out of words; a study.yaml written before the record keeps its words."""
    def appendix() -> str:
        return flat(pdf_text(write_report(study))).split("How each trial measured")[1].split("Runs measured")[0]

    doc = yaml.safe_load((study / STUDY_YAML).read_text())
    trials = [e for e in doc["ladder"] if e.get("design_record") and e["name"] != "01-baseline"]
    assert all(isinstance(e["design_record"]["steady_s_measured"], float) for e in trials)
    first = round(trials[0]["design_record"]["steady_s_measured"])
    for i, e in enumerate(trials[1:]):
        e["design_record"]["steady_s_measured"] = 1000.0 + i  # the numbers decide the range, not the words
    (study / STUDY_YAML).write_text(yaml.safe_dump(doc))
    assert f"measuring about {first}–{999 + len(trials) - 1} s of steady state" in appendix()
    for e in doc["ladder"]:
        e.pop("design_record", None)  # written before tfturbo recorded the design as data
    (study / STUDY_YAML).write_text(yaml.safe_dump(doc))
    older = appendix()
    assert "replicate pairs" in older and "measuring about" in older


def test_without_a_confirmation_the_verdict_says_what_the_recommendation_was_measured_against(tmp_path):
    """A study stopped before its confirmation: the recommended rung was measured against 03-xla only."""
    study = make_study(tmp_path / "s", confirmation=False)
    e = ladder(study)["04-larger_batch"]
    lo, hi = e["speed"]["ci95"]
    verdict = gather(study).verdict
    assert (f"Training with float32 + XLA, batch 128 is recommended: it was {e['speed']['ratio']:.2f}x as fast as "
            f"03-xla, the configuration kept before it (95% interval {lo:.2f}x to {hi:.2f}x over 3 interleaved "
            "replicate pairs; faster). It was not measured side by side with the baseline") in verdict
    assert "one run of each" in verdict and "nan" not in verdict
    assert "Accuracy against the baseline on 1000 validation examples" in verdict


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
    assert "baseline: float32, batch 64" in text and "tuned: XLA + batch 128 + learning rate x2" in text  # legend
    assert reader.metadata.title == "Training speed-up report: builtin:transformer"


def test_time_plot_shows_warm_up_and_profiler_shaded_aligned_by_samples(study):
    """Issue 22: the chart hid the warm-up and the profiler (the baseline began at step ~37), compared steps of
    different batch sizes, and plotted runs other than the ones the headline compared."""
    data = gather(study)
    plot = data.plots[0]
    assert plot.title == "Time per sample" and plot.x_label == "samples seen" and plot.y_label == "µs per sample"
    assert len(plot.curves) == 2
    base, tuned = plot.curves
    warm_end = max(hi for _, hi, kind in plot.bands if kind == "warm-up")
    assert base.x[0] < warm_end and tuned.x[0] < warm_end  # the warm-up is drawn (in samples), not hidden
    profiled = [(lo, hi) for lo, hi, kind in plot.bands if kind == "profiler"]
    assert profiled == [(PROFILE[0] * 64, (PROFILE[1] - 1) * 64), (PROFILE[0] * 128, (PROFILE[1] - 1) * 128)]
    warm = [(lo, hi) for lo, hi, kind in plot.bands if kind == "warm-up"]
    assert warm == [(64, (WARMUP + 1) * 128)]  # both runs' warm-ups, merged into one band
    assert base.clipped and "marked with a triangle" in plot.note  # the warm-up is clamped and marked
    # the headline trial's median pair: an A and a B of one pair, never each arm's median from different pairs
    pair = re.search(r"the median pair, (\d) of 3", base.label)
    assert pair and f"the median pair, {pair.group(1)} of 3" in tuned.label
    line_chart(plot, 400)  # draws


def test_report_reads_back_each_runs_settings_record_and_reproduction_commands(study, report_text):
    text = flat(report_text)
    assert "checkpoint/tfturbo-settings.yaml" in text
    assert "04-larger_batch float32 True 128 0.002" in text
    # the exact commands, through cli_args.run_argv (the larger batch trains as many samples in 30 steps)
    assert ("tfturbo run builtin:transformer --out rerun/04-larger_batch --policy float32 --jit --steps 30 "
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
    data["ladder"][2]["compared_with"] = "r" * 300
    data["findings"].append({"code": "X", "severity": "warning", "where": "\x00\x07 layer", "message": "m " * 3000,
                             "fix": ("    y = f(x)  # " + "z" * 300 + "\n") * 150})
    (study / STUDY_YAML).write_text(yaml.safe_dump(data))
    text = flat(pdf_text(write_report(study)))
    assert "a very long reason a very long reason" in text and "(shortened)" in text  # the finding's message
    # a decision is never cut: its row goes on over the next pages
    configurations = text[text.index("Configurations"):text.index("Before and after")]
    # (a few are split by a page's footer); cut at 400 characters, the cell held 21
    assert configurations.count("a very long reason") > 580 and "(shortened)" not in configurations


def test_decision_cells_are_whole(study):
    """Issue 42: decision cells were cut with "(shortened)"; a reason longer than a cell's old limit wraps whole."""
    data = yaml.safe_load((study / STUDY_YAML).read_text())
    reason = ("mixed_bfloat16 was the policy asked for; slower: 0.39x [0.35, 0.42] vs the baseline, 3 pairs; "
              "accuracy inconclusive: 1000 examples, interval [-0.64 pp, +0.04 pp] (tolerance 0.5 pp); about 2,883 "
              "examples would decide it, or judge on the validation loss, or accept a tolerance of 0.7 pp; "
              "its seed replicates of the baseline trained from two other seeds differ by 0.3 pp, so the trainings' noise is inside the interval")
    assert len(reason) > 400  # longer than a cut cell held
    data["ladder"][1]["reason"] = reason
    (study / STUDY_YAML).write_text(yaml.safe_dump(data))
    text = flat(pdf_text(write_report(study)))
    configurations = text[text.index("Configurations"):text.index("Before and after")]
    assert "(shortened)" not in configurations
    tail = "so the trainings' noise is inside the interval"
    assert tail in configurations


def test_failed_cancelled_and_truncated_runs_are_marked(broken_study):
    text = flat(pdf_text(write_report(broken_study)))
    assert "06-failed" in text and "07-cancelled" in text and "08-crashed" in text
    for status in ("failed", "cancelled", "crashed"):
        assert f" {status} " in text  # the status column
    assert "Warnings" in text
    assert "07-cancelled (CANCELLED): no summary.json, so its numbers are what its events recorded" in text
    assert "08-crashed (CRASHED)" in text and "events.jsonl: the last line is truncated" in text
    assert "06-failed (FAILED)" in text
    # none of them is a decision: they are the appendix's runs outside the decisions, with why
    assert [o.name for o in gather(broken_study).outside] == ["06-failed", "07-cancelled", "08-crashed"]
    assert "Appendix: runs outside the decisions" in text
    assert "a run that no trial of the study's ladder holds; the run cancelled" in text
    assert "not in the study's ladder" not in text and "no decision" not in text


def test_the_report_holds_only_the_study_decisions(tmp_path, study):
    """Issue 42: a study reopened after Esc printed 40 rows "no decision — not in the study's ladder", baseline
    replicates among them as "1.68x". The runs of a trial the ladder does not hold (06-mixed_bfloat16, stopped
    after two pairs and measured nowhere else) go to an appendix with what they trained and why they are out;
    the decisions, their numbers and their charts are the same as without them."""
    abandoned = make_study(tmp_path / "abandoned", abandoned=True)
    assert (abandoned / RUNS_DIR / "06-mixed_bfloat16.a2").is_dir()
    data, plain = gather(abandoned), gather(study)
    assert [r.name for r in data.rungs] == [r.name for r in plain.rungs] == [r.name for r in Study.load(study).rungs]
    assert all(r.rung is not None for r in data.rungs)
    # the baseline's settings trained again by the abandoned trial's reference arm are not pooled into its row
    assert data.baseline.row.step_ms == plain.baseline.row.step_ms
    assert data.baseline.row.steps_per_s_ci95 == plain.baseline.row.steps_per_s_ci95
    assert [c.label for p in data.plots for c in p.curves] == [c.label for p in plain.plots for c in p.curves]
    assert {(o.name, o.configuration) for o in data.outside} == {
        ("06-mixed_bfloat16", "mixed_bfloat16"), ("06-mixed_bfloat16.b2", "mixed_bfloat16"),
        ("06-mixed_bfloat16.a2", "baseline: float32, batch 64")}
    assert plain.outside == []
    text = flat(pdf_text(write_report(abandoned)))
    config_table = text[text.index("Configurations"):text.index("Before and after")]
    assert "06-mixed_bfloat16" not in config_table and "no decision" not in text
    appendix = text[text.index("Appendix: runs outside the decisions"):]
    # each run by what it is, its folder a labelled column after it (issue 42: run folders named runs)
    assert "baseline: float32, batch 64, pair 2 completed the reference arm of a trial " \
           "of mixed_bfloat16 measured again and not in the ladder" in appendix
    assert "Run Status Why it is outside the decisions Run folder" in appendix
    assert "the study decided this configuration in the mixed precision step 06-mixed_bfloat16.a2" in appendix
    assert "mixed_bfloat16, pair 1 completed" in appendix and "mixed_bfloat16, pair 2 completed" in appendix
    assert "x" not in appendix.split("Why it is outside the decisions")[1].replace("Page", "").split("tfturbo report")[0] \
        .replace("mixed", "").replace("XLA", "")  # no speed-up of a run outside the decisions


@pytest.mark.parametrize("damage", ["missing", "corrupt"])
def test_without_a_readable_study_yaml_the_runs_are_compared_with_the_first(study, damage):
    path = study / STUDY_YAML
    if damage == "missing":
        path.unlink()
    else:
        path.write_text("ladder: [unclosed\n  : :")
    data = gather(study)
    assert not data.has_ladder and data.baseline.name == "01-baseline"
    # without the ladder every run is a row, the trials' replicates too: runs with the same settings are
    # replicates, so the batch-128 configuration (6 runs) is faster than the baseline's (10 runs) beyond the noise
    assert data.tuned.row.batch_size == 128 and data.tuned.row.verdict == "faster"
    assert data.tuned.row.speedup_ci95[0] > 1.0
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
    speed = {"ratio": 0.77, "ci95": [0.74, 0.80], "verdict": "slower", "replicates": 4}
    (tmp_path / "s" / STUDY_YAML).write_text(yaml.safe_dump({
        "workload": "builtin:mlp", "recommended": None, "recommended_rung": None,
        "ladder": [{"name": "01-baseline", "kept": True, "reason": "baseline", "replicates": ["01-baseline"]},
                   {"name": "02-mixed_float16", "kept": False, "reason": "slower: 0.77x [0.74, 0.80]",
                    "speed": speed, "compared_with": "01-baseline",
                    "replicates": ["02-mixed_float16.a1", "02-mixed_float16"]}]}))
    data = gather(tmp_path / "s")
    assert data.tuned is None
    assert "No configuration was measurably faster than the baseline" in data.verdict
    # the trial's verdict, not a comparison of the two single runs
    assert ("Tried: mixed_float16, batch 64: 0.77x [0.74, 0.80] over 4 replicate pairs vs the baseline, slower."
            in data.verdict)
    assert [c.label for c in data.plots[0].curves] == ["baseline: float32, batch 64", "tried: mixed_float16"]
    assert ("Precision policy", "float32") in data.apply_rows


def test_runs_measured_once_each_get_no_interval_in_the_verdict(tmp_path):
    """Without ladder decisions and without replicates nothing is 'faster beyond the noise'."""
    runs = tmp_path / "s" / RUNS_DIR
    make_run(runs, "01-baseline", seed=1)
    make_run(runs, "02-xla", jit=True, step_ms=150, seed=2)
    data = gather(tmp_path / "s")
    assert data.tuned is None and data.rungs[1].row.verdict == "single run: no interval"
    assert "Tried: float32 + XLA, batch 64: 1.33x, single run: no interval." in data.verdict


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


def _embedded_fonts(path: Path) -> set[str]:
    """The base names of the fonts embedded in the PDF (a font file in their descriptor)."""
    from pypdf import PdfReader

    out = set()
    for page in PdfReader(str(path)).pages:
        for font in (page["/Resources"].get("/Font") or {}).values():
            font = font.get_object()
            for desc in [font] + [d.get_object() for d in font.get("/DescendantFonts", [])]:
                descriptor = desc.get("/FontDescriptor")
                if descriptor is not None and any(k in descriptor.get_object() for k in ("/FontFile2", "/FontFile")):
                    out.add(str(font["/BaseFont"]).split("+")[-1])
    return out


@pytest.mark.parametrize("name, fallback", [("модель_цифры", None), ("цифры_数字", "DroidSansFallback"),
                                            ("日本語のモデル", "DroidSansFallback"), ("한국어_모델", "NanumSquare")])
def test_cyrillic_chinese_japanese_and_korean_names_print_in_an_embedded_font(tmp_path, name, fallback):
    """Issue 22: a study of `цифры_数字.py` printed the Cyrillic and not the Chinese (DejaVu has no CJK)."""
    from reportlab.pdfbase import pdfmetrics

    from tfturbo.report import style

    study = make_study(tmp_path / name, workload=f"./{name}.py")
    pdf = write_report(study)
    text = pdf_text(pdf)
    assert f"./{name}.py" in text and name in text  # the workload and the study folder, read back
    embedded = _embedded_fonts(pdf)

    def face(font: str) -> str:  # the name the PDF gives it
        return pdfmetrics.getFont(font).face.name.decode() if isinstance(pdfmetrics.getFont(font).face.name, bytes) \
            else str(pdfmetrics.getFont(font).face.name)

    for char in name:
        font = style.fallback_for(char) or style.FONT
        assert ord(char) in pdfmetrics.getFont(font).face.charToGlyph, char  # a glyph, not the .notdef box
        assert face(font) in embedded, (char, font, embedded)
    fallbacks = {f for f in resources.FALLBACK_FONTS if f in pdfmetrics.getRegisteredFontNames() and face(f) in embedded}
    assert fallbacks == ({fallback} if fallback else set())  # loaded only when the text needs it


def test_code_is_set_in_the_embedded_monospace_face(tmp_path):
    from tfturbo.report import style

    pdf = write_report(make_study(tmp_path / "s"))
    assert style.MONO == "DejaVuSansMono" and "DejaVuSansMono" in _embedded_fonts(pdf)


def _page_texts(path: Path) -> list[str]:
    return [page.extract_text() for page in PdfReader(str(path)).pages]


def test_page_one_is_an_executive_summary_with_the_headline_accuracy_chart_and_changes(study):
    """Issue 22: page 1 was one dense paragraph, no chart, half empty, with MFU jargon."""
    from tfturbo.headline import headline

    pdf = write_report(study)
    page1 = flat(_page_texts(pdf)[0])
    loaded = Study.load(study)
    shown = headline("04-larger_batch", loaded.rungs)  # the recommendation's one number
    lo, hi = shown.ci95
    assert f"{shown.ratio:.2f}x faster" in page1 and f"between {lo:.2f}x and {hi:.2f}x (95% interval)" in page1
    assert "Accuracy: unchanged within the tolerance of 0.5 percentage points" in page1
    assert "Every configuration measured" in page1 and "Speed-up vs the baseline" in page1  # the chart's text
    # each configuration by what it changes from the baseline (issue 42: named by run folder or by every setting)
    for label in ("baseline: float32, batch 64", "mixed_bfloat16 (not kept)", "XLA",
                  "XLA + batch 128 + learning rate x2"):
        assert label in page1
    changes = page1.split("Changes to make")[1].split("About this study")[0]
    assert "jit_compile=True" in changes and "batch size 128 instead of 64" in changes
    assert "drop_remainder" not in changes and "set_global_policy" not in changes  # nothing unmeasured
    for jargon in ("MFU", "replicate pair", "paired"):
        assert jargon not in page1
    # the same number for the same configuration in the configurations table
    assert f"{shown.ratio:.2f}x [{lo:.2f}, {hi:.2f}] vs the baseline" in flat("\n".join(_page_texts(pdf)[1:]))


def test_counts_commands_and_names_are_the_studys(study):
    """Issue 22: "first 2048 validation examples" where the trials compared 1024; the whole-study command
    dropped --steps 60; a skipped rung got a rerun command; tune options printed as a Python dict."""
    data = yaml.safe_load((study / STUDY_YAML).read_text())
    data["ladder"].append({"name": "06-steps_per_execution", "rung": "steps_per_execution", "skipped": True,
                           "kept": False, "reason": "steps are long enough", "run": None,
                           "settings": data["ladder"][-1]["settings"]})
    (study / STUDY_YAML).write_text(yaml.safe_dump(data))
    text = flat(pdf_text(write_report(study)))
    assert "on the first 1000 validation examples" in text and "2048 validation examples" not in text
    whole = text.split("whole study")[1][:400]
    assert whole.startswith(" tfturbo tune builtin:transformer --out study-rerun --steps 60 --seed 1234 "
                            "--batch-size 64 --val-every 20")
    assert "--min-replicates 3 --max-replicates 3" in whole
    commands = text.split("Commands")[1]
    assert "06-steps_per_execution" not in commands.split("Single runs")[0]  # skipped: nothing to re-run
    # but it is in the tables, named by what it is (issue 42), never by a name cut mid-word (the issue 22 walk
    # read "04-steps_per_executio n"): a step not run has no run folder to show
    record = text.split("Settings record")[1].split("Appendix")[0]
    assert "XLA + batch 128 + learning rate x2 Steps per execution no settings record" in record, record
    assert "06-steps_per_execution" not in text and "executio n" not in text


def test_a_faster_configuration_with_undecided_accuracy_gets_a_way_forward_in_the_report(study):
    """Issue 22: on a small validation set nothing could be kept, and the report offered nothing to do next."""
    data = yaml.safe_load((study / STUDY_YAML).read_text())
    entry = next(e for e in data["ladder"] if e["name"] == "02-mixed_bfloat16")
    assert entry["accuracy"]["verdict"] == "inconclusive"
    entry["speed"].update({"ratio": 1.26, "ci95": [1.19, 1.35], "verdict": "faster"})
    (study / STUDY_YAML).write_text(yaml.safe_dump(data))
    text = flat(pdf_text(write_report(study)))
    section = text.split("Accuracy not decided: what would decide it")[1]
    # issue 39: the data holds no more examples, and a looser tolerance is never the recommendation: offered,
    # saying what it would accept
    first = section.split("mixed_bfloat16")[1].lstrip()  # named by what it is, not "02-mixed_bfloat16"
    assert first.startswith("• Or: Accept a larger accuracy tolerance") and "Recommended" not in first[:400]
    assert "it accepts a model whose accuracy may be up to" in section and "--accuracy-tolerance" in section
    assert "XLA" not in section.split("Before and after")[0]  # decided rungs get none


def test_when_nothing_is_kept_page_one_never_says_accuracy_was_kept(study):
    """A batch 1.42× faster whose accuracy was inconclusive is not "losing accuracy": page 1 said "No change made
    training measurably faster without losing accuracy" of a study whose only faster change was undecided."""
    import dataclasses

    from tfturbo.report.executive import headline_sentence

    big, under = headline_sentence(dataclasses.replace(gather(study), tuned=None))
    assert big == "Keep the current settings"
    assert under.startswith("No change was shown to be both faster and within the accuracy tolerance")
    assert "losing accuracy" not in under


@pytest.mark.parametrize("metric,delta,ci,said", [
    ("val_accuracy", 0.0467, (0.0318, 0.0615), "Accuracy: better than the baseline"),
    ("val_accuracy", 0.002, (-0.003, 0.007), "Accuracy: unchanged within the tolerance of 0.5 percentage points"),
    ("val_loss", -0.05, (-0.08, -0.02), "Accuracy: better than the baseline"),
])
def test_page_ones_accuracy_sentence_calls_a_clearly_better_accuracy_better(metric, delta, ci, said):
    """The issue 22 walk (a larger batch, 300 validation examples): page 1 read "Accuracy: unchanged within the
    tolerance of 0.5 percentage points (val_accuracy +4.67 percentage points …)" for an interval of
    [+3.18, +6.15] pp."""
    from types import SimpleNamespace

    from tfturbo.report.executive import accuracy_sentence
    from tfturbo.trials.verdict import AccuracyVerdict, Tolerance

    acc = AccuracyVerdict(metric, delta, ci, "within tolerance", 300)
    tuned = SimpleNamespace(name="04-batch80", accuracy=acc, headline=SimpleNamespace(trial="04-batch80"))
    sentence = accuracy_sentence(SimpleNamespace(tuned=tuned, rungs=[tuned]), Tolerance())
    assert sentence.startswith(said), sentence
    assert "on 300 validation examples" in sentence


def test_page_one_says_what_a_speed_up_not_measured_against_the_baseline_was_measured_against(tmp_path):
    """The chart is titled "Speed-up vs the baseline", but a configuration measured only against another one shows
    that trial's ratio: a user script's "float32, batch 64, 30 steps/call (not k..." bar read 1.61x with its
    "vs 07-spe30" cut off the label (it is about 5.5x the baseline)."""
    from tfturbo.headline import headline

    study = make_study(tmp_path / "s", confirmation=False)
    shown = headline("04-larger_batch", Study.load(study).rungs)
    assert not shown.vs_baseline and shown.against == "03-xla"
    page1 = flat(_page_texts(write_report(study))[0])
    chart = page1.split("Every configuration measured")[1].split("Each bar is")[0]
    assert shown.against_words == "XLA"  # what it is, not "03-xla"
    assert f"{shown.ratio:.2f}x vs XLA" in chart  # beside its bar
    assert chart.count("vs XLA") == 2  # and in its label, whole
    assert "A speed-up never measured against the baseline itself says what it was measured against" in page1


def test_the_validation_plot_draws_the_runs_the_accuracy_gate_compared(study):
    """A script's report drew the baseline's validation curve alone: the plots took each arm's median replicate,
    and the tuned arm's was a speed-only run (the later pairs do not validate)."""
    from tfturbo.report.model import _plotted_runs

    data = gather(study)
    every = {r.name: r for r in load_study_runs(study).runs}
    gate = _plotted_runs(data.baseline, data.tuned, data.rungs, every, validated=True)
    trial = data.tuned.headline.trial
    # B's full-length run and the run it was judged against: the baseline's (the trial trained no A that long)
    assert [record.name for _, record, _ in gate] == ["01-baseline", trial]
    [validation] = [p for p in data.plots if p.title.startswith("Validation")]
    assert [c.label for c in validation.curves] == [label for label, _, _ in gate]
    assert all(label.endswith("(the accuracy gate's run)") for label, _, _ in gate)
    assert validation.note.startswith("The runs the accuracy gate compared")


def test_the_plotted_runs_are_one_pair_the_median_ratio_not_each_arms_median(tmp_path):
    """Each arm's median run came from different pairs (a pair-1 run beside a paired one): the chart compared
    two runs that were never measured side by side. The pairs are the roles study.yaml records, not the folders'
    names: here "T.a3" is recorded as pair 3's B and "T.b3" as its A (names say the opposite)."""
    from tfturbo.report.model import _median_pair
    from tfturbo.runfiles import load_run
    from tfturbo.trials.runs import RunRole
    from tfturbo.tune.study import Rung

    steps = {"T.a1": 100.0, "T": 50.0, "T.a2": 300.0, "T.b2": 200.0, "T.a3": 200.0, "T.b3": 40.0}  # 2x, 1.5x, 5x
    records = {name: load_run(make_run(tmp_path, name, step_ms=ms, noise=0.0)) for name, ms in steps.items()}
    rung = Rung("T", "xla", records["T"].settings, replicates=[n for n in steps if n != "T"])
    k, a, b = _median_pair(rung, records)
    assert (k, a.path.name, b.path.name) == (1, "T.a1", "T")  # the 2x pair; the arms' medians were T.a3 and T
    # study.yaml's roles, not the names: pair 3 is then T.b3 (A, 40 ms) against T.a3 (B, 200 ms), 0.2x, the median
    # of 2x, 1.5x and 0.2x is pair 2
    rung.roles = {"T.a3": RunRole("b", 3), "T.b3": RunRole("a", 3)}
    k, a, b = _median_pair(rung, records)
    assert (k, a.path.name, b.path.name) == (2, "T.a2", "T.b2")


def test_band_labels_of_narrow_neighbouring_bands_do_not_overprint():
    """The report's time plot printed "warmprofiler": a warm-up band and a profiler band a few points apart
    had their labels drawn on one baseline, one over the other."""
    from reportlab.graphics.shapes import String
    from reportlab.pdfbase.pdfmetrics import stringWidth

    from tfturbo.report import style
    from tfturbo.report.model import Curve, Plot

    plot = Plot("Time per sample", "samples seen", "µs", [Curve("a", [0.0, 25_000.0], [1.0, 2.0])],
                bands=[(0.0, 800.0, "warm-up"), (1_000.0, 1_500.0, "profiler")])
    labels = [s for s in line_chart(plot, 400).contents if isinstance(s, String) and s.text in ("warm-up", "profiler")]
    assert {s.text for s in labels} == {"warm-up", "profiler"}
    (a, b) = sorted(labels, key=lambda s: s.x)
    overlap_x = a.x + stringWidth(a.text, style.FONT, a.fontSize) > b.x
    assert not (overlap_x and abs(a.y - b.y) < a.fontSize)  # side by side, or one above the other


def test_the_report_names_the_fit_call_a_script_study_measured_and_its_options_repeat_it(study):
    """Issue 47: a script with several fit() calls; the About table says which one every run measured, and the
    command that repeats the study keeps --fit-call."""
    path = study / RUNS_DIR / "01-baseline" / "summary.json"
    doc = json.loads(path.read_text())
    doc["workload"] = {"spec": "distill.py", "name": "distill", "path": "/home/u/distill.py",
                       "fit": {"call": 2, "line": 58, "model": "Distiller", "model_name": "distiller",
                               "calls_in_source": [{"line": 49, "code": "teacher.fit(x, y)"},
                                                   {"line": 58, "code": "distiller.fit(x, y)"}]}}
    path.write_text(json.dumps(doc))
    recorded = yaml.safe_load((study / STUDY_YAML).read_text())
    recorded["options"]["fit_call"] = 2
    (study / STUDY_YAML).write_text(yaml.safe_dump(recorded))
    data = gather(study)
    assert data.measured_fit == ("the 2nd fit() call of distill.py (line 58, Distiller 'distiller'); the script "
                                 "calls .fit( at lines 49 and 58: another is measured by choosing it as the app's "
                                 "“Measured fit()” (command line --fit-call N)")  # in words (issue 42)
    assert "--fit-call 2" in data.commands[0][1]
    assert "Distiller 'distiller'" in flat(pdf_text(write_report(study)))


def test_page_one_names_each_output_of_a_model_with_several():
    """Issue 47: with loss_weights [1, 0.2] the second output's loss got worse and no verdict named an output;
    page 1 gives the deciding output's verdict and every output's line."""
    from types import SimpleNamespace

    from tfturbo.report.executive import accuracy_sentence
    from tfturbo.trials.verdict import AccuracyVerdict, Tolerance

    label = AccuracyVerdict("val_label_accuracy", 0.001, (-0.004, 0.006), "within tolerance", 1200,
                            confidence=0.975)
    value = AccuracyVerdict("val_value_loss", 0.046, (0.031, 0.061), "worse", 1200, base=0.33, confidence=0.975)
    acc = AccuracyVerdict.from_dict(value.to_dict())
    acc.outputs = [label, value]
    tuned = SimpleNamespace(name="03-bf16", accuracy=acc, headline=SimpleNamespace(trial="03-bf16"))
    sentence = accuracy_sentence(SimpleNamespace(tuned=tuned, rungs=[tuned]), Tolerance())
    assert sentence.startswith("Accuracy: worse by more than the tolerance of 2% (val_value_loss +0.0460")
    assert "Each of the model's 2 outputs was judged on its own: val_label_accuracy +0.10 pp" in sentence
    assert "val_value_loss +0.0460 (+14%) [+0.0310, +0.0610] — worse." in sentence


def test_page_one_states_the_tolerance_the_user_set_and_a_loss_worse_beyond_its_noise():
    """Issue 39: page 1 said "unchanged within the tolerance of 0.5 percentage points" of a rung kept under the
    user's 2.2 pp, interval [−2.19, +1.39] pp, and never mentioned its val_loss +13%."""
    from types import SimpleNamespace

    from tfturbo.report.executive import accuracy_sentence
    from tfturbo.trials.verdict import AccuracyVerdict, Tolerance

    acc = AccuracyVerdict("val_accuracy", -0.004, (-0.0219, 0.0139), "within tolerance", 1000,
                          also_worse=["val_loss +0.0970 (+13%) [+0.0510, +0.1430]"])
    rung = SimpleNamespace(decision=SimpleNamespace(rule=Tolerance(accuracy_pp=2.2)))
    tuned = SimpleNamespace(name="03-bf16", accuracy=acc, headline=SimpleNamespace(trial="03-bf16"), rung=rung)
    sentence = accuracy_sentence(SimpleNamespace(tuned=tuned, rungs=[tuned]), Tolerance())
    assert sentence.startswith("Accuracy: unchanged within the tolerance of 2.2 percentage points (the tolerance "
                               "the user set) (val_accuracy -0.40 percentage points [-2.19, +1.39 pp]"), sentence
    assert "0.5 percentage points" not in sentence
    assert sentence.endswith("Worse beyond its noise: val_loss +0.0970 (+13%) [+0.0510, +0.1430].")


def _chart_strings(drawing) -> list[str]:
    """Every text a reportlab drawing draws, in order (groups included)."""
    out = []
    for item in getattr(drawing, "contents", []):
        out += [item.text] if hasattr(item, "text") else _chart_strings(item)
    return out


def test_a_keep_the_current_settings_report_says_what_it_kept(study):
    """Issue 42's client PDF of a "keep the current settings" study: the bf16 rung's val_loss change was drawn on
    the val_accuracy axis (read as a large gain), the XLA row was missing from "Every configuration measured"
    (no speed-up: its change did not take effect), "Policy: mixed_bfloat16" stood under a float32
    recommendation, and the bf16 run's ERROR findings were red though they did not apply to what was kept."""
    from tfturbo.report.executive import configurations_chart
    from tfturbo.report.flowables import WIDTH
    from tfturbo.trials.verdict import Tolerance

    data = yaml.safe_load((study / STUDY_YAML).read_text())
    data["ladder"] = data["ladder"][:4]  # stopped before the confirmation; nothing kept over the baseline
    for entry in data["ladder"][2:]:
        entry["kept"] = False
    data["recommended"], data["recommended_rung"] = data["ladder"][0]["settings"], None
    data["environment"]["recommended_policy"] = "mixed_bfloat16"
    data["ladder"][2]["speed"].update(ratio=None, ci95=None, verdict="not applied")
    data["ladder"][1]["accuracy"].update(metric="val_loss", delta=-0.05, ci95=[-0.08, -0.02],
                                         verdict="within tolerance")
    data["ladder"][1]["findings"].append({"code": "NAN_LOSS", "severity": "error", "where": "step 40",
                                          "message": "the loss became NaN", "fix": "keep the head in float32"})
    data.setdefault("audit", {}).setdefault("findings", []).append(  # the study's audit checks the 16-bit policy
        {"code": "HEAD_NOT_FLOAT32", "severity": "error", "where": "dense_1",
         "message": "the output layer computes in bfloat16", "fix": "dtype='float32' on the head"})
    (study / STUDY_YAML).write_text(yaml.safe_dump(data))
    report = gather(study)
    assert report.tuned is None
    drawn = _chart_strings(configurations_chart(report, WIDTH, Tolerance()))
    for label in ("baseline: float32, batch 64", "mixed_bfloat16 (not kept)", "XLA (not kept)"):
        assert label in drawn, label
    assert "no speed-up: not applied" in drawn  # the XLA row says why it has no bar
    assert "val_accuracy change (pp)" in drawn  # one metric on the axis, named (shortened to its panel)
    assert any(s.startswith("judged on val_loss: ") and s.endswith("(not on this axis)") for s in drawn)
    text = flat(pdf_text(write_report(study)))
    assert "Precision policy float32 (recommended: the current settings); mixed_bfloat16 was the 16-bit policy " \
           "measured on this hardware" in text
    assert "Policy for this hardware" not in text
    assert "error, did not apply to the kept settings: NAN_LOSS in step 40 (from mixed_bfloat16)" in text
    assert "ERROR NAN_LOSS" not in text
    # the audit's 16-bit finding does not apply to float32 settings (issue 42 walk: a red ERROR under float32)
    assert "error, did not apply to the kept settings: HEAD_NOT_FLOAT32" in text
    assert "ERROR HEAD_NOT_FLOAT32" not in text
    assert "WARNING DIM_NOT_MULTIPLE_OF_8" in text  # the audit's finding applies to the script as kept


def test_the_pdfs_fixes_say_tfturbos_options_in_words(study):
    """Issue 42 walk: the client PDF gave its fixes as command-line flags ("tfturbo run ... --fix-head (ab/tune
    settings: fix_head=on)", "--drop-remainder"). Each is said as what it does and where the app applies it; the
    flag stays only after it, labelled "command line"; the code to change in the script stays as it is."""
    from tfturbo.option_words import in_words

    data = yaml.safe_load((study / STUDY_YAML).read_text())
    data.setdefault("audit", {}).setdefault("findings", []).extend([  # as the backend's advice writes them
        {"code": "HEAD_NOT_FLOAT32", "severity": "warning", "where": "dense_1", "message": "the head is 16-bit",
         "fix": 'outputs = keras.layers.Dense(2, dtype="float32")(x)\n'
                "# or let tfturbo do it (any model): tfturbo run ... --fix-head (ab/tune settings: fix_head=on)"},
        {"code": "PARTIAL_LAST_BATCH", "severity": "warning", "where": "train_ds", "message": "a partial batch",
         "fix": "train_ds = train_ds.batch(64, drop_remainder=True)\n"
                "# or let tfturbo drop the partial batch: tfturbo run ... --drop-remainder"}])
    (study / STUDY_YAML).write_text(yaml.safe_dump(data))
    text = flat(pdf_text(write_report(study)))
    findings = text.split("Findings and fixes")[1].split("Input pipeline")[0]
    assert 'outputs = keras.layers.Dense(2, dtype="float32")(x)' in findings  # the change to the script
    assert "# or let tfturbo do it (any model): tfturbo's automatic fix “float32 output layer” (in the app, the " \
           "“float32 output layer” box of its finding; command line --fix-head)" in findings
    assert "tfturbo's automatic fix “drop the partial last batch” (in the app, the “drop the partial batch” box " \
           "of its finding; command line --drop-remainder)" in findings
    assert "tfturbo run" not in findings and "fix_head=on" not in findings
    assert sorted(re.findall(r"\S+ --[a-z-]+", findings)) == ["line --drop-remainder", "line --fix-head"]  # labelled
    # said once: words already said are left as they are
    assert in_words(in_words("tfturbo run ... --fix-head")) == in_words("tfturbo run ... --fix-head")
