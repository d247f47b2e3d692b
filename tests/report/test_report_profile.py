"""The report's "Where the time went" page and compare's CSV categories, from recorded profile.json files."""

from __future__ import annotations

import csv
import io

from report_fixtures import make_study, pdf_text
from tfturbo import profile as prof
from tfturbo.compare import compare_runs, to_csv
from tfturbo.report import gather, write_report
from tfturbo.runfiles import RUNS_DIR, load_run


def fake_profile(matmul: float, norm: float, casts: float) -> prof.Profile:
    rows = [("_MklMatMul", "StatefulPartitionedCall/functional_1/dense_1/Tensordot/MatMul", matmul * 10e3, 10, True),
            ("Mul", "StatefulPartitionedCall/functional_1/layer_normalization_1/mul", norm * 10e3, 10, None),
            ("AddV2", "StatefulPartitionedCall/functional_1/add", 2.0 * 10e3, 10, None)]
    if casts:
        rows.append(("Cast", "StatefulPartitionedCall/functional_1/Cast", casts * 10e3, 10, None))
    return prof.build(rows, 10, prof.SOURCE_OP_STATS, wall_ms_per_step=9.0,
                      sixteen_bit=prof.sixteen_bit_from_ops(rows, prof.SOURCE_OP_STATS, "test"),
                      step_breakdown=prof.not_available("the CPU marks no device steps"))


def flat(text: str) -> str:
    return " ".join(text.split())


def test_where_the_time_went_page_compares_baseline_and_recommendation(tmp_path):
    study = make_study(tmp_path / "study")
    data = gather(study)
    fake_profile(10.0, 2.0, 0.0).save(study / RUNS_DIR / data.baseline.name)
    fake_profile(5.5, 3.5, 1.0).save(study / RUNS_DIR / data.tuned.name)
    text = flat(pdf_text(write_report(study)))
    assert "Where the time went" in text
    # no reference run profiled beside it (a study from before pair 1 profiled): the baseline's own run
    assert "Against the baseline: matmul/conv −45%, normalization +75%, casts +7% of step." in text
    assert "10.00 (71%)" in text and "5.50 (46%)" in text  # baseline and recommended ms (share)
    assert "not available: the CPU marks no device steps" in text
    assert "OP_SLOWER" in text and "normalization got slower" in text  # the finding from the two profiles
    assert "Top ops, baseline" in text and "functional_1/dense_1/Tensordot/MatMul" in text


def test_the_recommendation_is_compared_with_the_reference_profiled_beside_it(tmp_path):
    """A busier machine during the baseline run (every category 2x slower) does not read as a speed-up. The
    reference run profiled beside it is one its trial recorded (`Rung.replicates`), whatever its name."""
    import yaml

    study = make_study(tmp_path / "study")
    data = gather(study)
    fake_profile(20.0, 4.0, 0.0).save(study / RUNS_DIR / data.baseline.name)
    fake_profile(10.0, 2.0, 0.0).save(study / RUNS_DIR / f"{data.tuned.name}.a1")
    doc = yaml.safe_load((study / "study.yaml").read_text())  # A's full-length run, as a trial not paired has one
    rung = next(r for r in doc["ladder"] if r["name"] == data.tuned.name)
    rung["replicates"].append(f"{data.tuned.name}.a1")
    rung["roles"][f"{data.tuned.name}.a1"] = {"arm": "a", "replicate": 1}
    (study / "study.yaml").write_text(yaml.safe_dump(doc))
    fake_profile(10.0, 2.0, 0.0).save(study / RUNS_DIR / data.tuned.name)
    text = flat(pdf_text(write_report(study)))
    assert "compared with its trial's reference run, profiled beside it" in text
    assert "Against its trial's reference run, profiled beside it: no category changed" in text


def test_the_recommendation_is_compared_with_its_reference_profiled_where_the_design_record_says(tmp_path):
    """Issue 40: a configuration is profiled once per study, so a trial whose reference configuration was profiled
    in an earlier rung trains its reference run without the profiler; the rung's design record says where that
    profile is (`profiled_in`), and the page compares with it — not with the baseline's run, profiled under
    other minutes of the machine."""
    import yaml

    study = make_study(tmp_path / "study")
    data = gather(study)
    doc = yaml.safe_load((study / "study.yaml").read_text())
    rung = next(r for r in doc["ladder"] if r["name"] == data.tuned.name)
    reference = rung["compared_with"]
    assert reference != data.baseline.name
    rung["design_record"]["profiled_in"] = {"a": reference, "b": data.tuned.name}
    (study / "study.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    fake_profile(20.0, 4.0, 0.0).save(study / RUNS_DIR / data.baseline.name)  # a busier machine
    fake_profile(10.0, 2.0, 0.0).save(study / RUNS_DIR / reference)
    fake_profile(10.0, 2.0, 0.0).save(study / RUNS_DIR / data.tuned.name)
    text = flat(pdf_text(write_report(study)))
    assert "compared with its reference configuration, profiled once in an earlier step of this study" in text
    assert "Against its reference configuration, profiled once in an earlier step of this study: no category " \
           "changed" in text


def test_without_profiles_the_page_says_why(tmp_path):
    study = make_study(tmp_path / "study")
    text = flat(pdf_text(write_report(study)))
    assert "Where the time went" in text
    assert "The baseline's profile is not available: this run captured no profile" in text


def test_compare_csv_gains_the_categories(tmp_path):
    for name, p in (("a", fake_profile(10.0, 2.0, 0.0)), ("b", None)):
        run = tmp_path / name
        run.mkdir()
        (run / "summary.json").write_text('{"status": "completed", "settings": {"policy": "float32"}}')
        if p is not None:
            p.save(run)
    rows = compare_runs([load_run(tmp_path / "a"), load_run(tmp_path / "b")])
    parsed = list(csv.DictReader(io.StringIO(to_csv(rows))))
    assert float(parsed[0]["profile_matmul_conv_ms"]) == 10.0
    assert float(parsed[0]["profile_op_ms_per_step"]) == 14.0
    assert float(parsed[0]["profile_sixteen_bit_share"]) == 1.0
    assert parsed[1]["profile_matmul_conv_ms"] == "" and parsed[1]["profile_op_ms_per_step"] == ""


def test_an_xla_recommendation_is_compared_on_its_time_per_step_not_its_categories(tmp_path):
    """Issue 22 walk: under XLA the page read "−100% / +1473%" per category: XLA fuses ops into clusters, so the
    categories of an XLA run and a run without XLA are not comparable. The page says so and compares the time
    per step; the recommended run's categories are its own."""
    study = make_study(tmp_path / "study")
    data = gather(study)
    fake_profile(10.0, 2.0, 0.0).save(study / RUNS_DIR / data.baseline.name)
    xla = prof.build([("dot_add_fusion.1", "dot_add_fusion.1", 6.0e4, 10, None),
                      ("multiply_add_fusion.2", "multiply_add_fusion.2", 1.5e4, 10, None)], 10, prof.SOURCE_XLA_TRACE,
                     wall_ms_per_step=6.0)
    xla.save(study / RUNS_DIR / data.tuned.name)
    text = flat(pdf_text(write_report(study)))
    page = text.split("Where the time went")[1]
    assert ("Against the baseline: op time 14.00 -> 7.50 ms per step (−46%); the profiled steps took 9.00 -> 6.00 ms "
            "(−33%). (XLA fuses ops into clusters, so the op categories of an XLA run are not comparable") in page
    assert "Points of step" not in page and "−100%" not in page and "pts" not in page
    assert "6.00 (80%)" in page  # the XLA run's own matmul share


def test_a_long_op_name_breaks_only_after_its_separators(tmp_path):
    """Issue 42 walk: the top-ops table split op names inside a word ("multi_he" / "ad_attention"). A name breaks
    only after a '/', '_' or '.', each line whole; a piece wider than the column is elided in its middle."""
    from reportlab.pdfbase import pdfmetrics

    from tfturbo.report import style
    from tfturbo.report.flowables import name_markup

    long = ("StatefulPartitionedCall/gradient_tape/functional_1/transformer_block_with_a_long_name/"
            "multi_head_attention/attention_output/einsum/Einsum")
    study = make_study(tmp_path / "study")
    data = gather(study)
    rows = [("Einsum", long, 9.0 * 10e3, 10, True), ("AddV2", "StatefulPartitionedCall/functional_1/add", 2e4, 10, None)]
    prof.build(rows, 10, prof.SOURCE_OP_STATS, wall_ms_per_step=9.0,
               sixteen_bit=prof.sixteen_bit_from_ops(rows, prof.SOURCE_OP_STATS, "test"),
               step_breakdown=prof.not_available("the CPU marks no device steps")).save(study / RUNS_DIR / data.baseline.name)
    text = pdf_text(write_report(study))
    table = text.split("Top ops, baseline")[1]
    shown = prof.short_name(long)
    lines = table.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("gradient_tape/"))
    name_lines = []
    for line in lines[first:]:
        name_lines.append(line.split(" ")[0])
        if "".join(name_lines) == shown:
            break
    assert "".join(name_lines) == shown, lines[first:first + 8]  # every character, in order
    assert len(name_lines) > 1 and all(n.endswith(("/", "_", ".")) for n in name_lines[:-1]), name_lines
    # a piece wider than its column keeps its two ends around "…"
    piece = name_markup("a" * 60 + "z" * 60 + "/x", 80)
    first_line = piece.split("<br/>")[0]
    assert first_line.startswith("aaa") and "…" in first_line and first_line.endswith("zz/")
    assert pdfmetrics.stringWidth(first_line, style.CELL.fontName, style.CELL.fontSize) <= 80
