"""The page-1 chart of every configuration: no drawn text over another, for any number of rows, label lengths and
intervals (issue 42's walk: the label of the batch-128 row and its speed-up value were drawn over each other)."""

from __future__ import annotations

from dataclasses import replace
from itertools import combinations

import numpy as np
import pytest
from reportlab.graphics.shapes import String
from reportlab.pdfbase import pdfmetrics

from tfturbo.report import gather
from tfturbo.report.executive import configurations_chart
from tfturbo.report.flowables import WIDTH
from tfturbo.trials.verdict import Tolerance


def _boxes(drawing) -> list[tuple[str, float, float, float, float]]:
    """(text, left, right, bottom, top) of each string drawn unrotated at the drawing's top level, by its font's
    width and the ascent and descent of its size."""
    out = []
    for item in drawing.contents:
        if not isinstance(item, String):
            continue  # the rotated axis title sits in a group of its own, outside the rows
        width = pdfmetrics.stringWidth(item.text, item.fontName, item.fontSize)
        left = {"start": item.x, "end": item.x - width, "middle": item.x - width / 2}[item.textAnchor]
        out.append((item.text, left, left + width, item.y - 0.22 * item.fontSize, item.y + 0.78 * item.fontSize))
    return out


def _variants(report, rng: np.random.Generator):
    """The recorded study's rows, repeated to `n` rows with names of every length and intervals anywhere: beside
    the 1.00x line, near either edge of the panel, wider than it, against another configuration."""
    measured = [r for r in report.rungs if r.row is not None and r.headline is not None]
    words = ["XLA", "mixed_bfloat16 + XLA", "20 steps per call",
             "mixed_float16 + XLA auto-clustering + batch 1024 + learning rate x16 + float32 output layer"]
    for n in (2, 3, 5, 9, 14):
        for _ in range(8):
            rows = [measured[0]]
            for i in range(1, n):
                r = measured[1 + i % (len(measured) - 1)]
                mid = float(rng.choice([0.3, 0.95, 1.02, 1.37, 1.65, 2.4, 3.9, 6.0]) * rng.uniform(0.9, 1.1))
                spread = float(rng.choice([0.01, 0.1, 0.5, 3.0]))
                name = f"{rng.choice(words)} #{i}"
                headline = replace(r.headline, ratio=mid, ci95=(mid - spread * mid / 2, mid + spread * mid),
                                   vs_baseline=bool(rng.random() < 0.7), against="x",
                                   words=(("x", str(rng.choice(words))),))
                rows.append(replace(r, name=f"{i:02d}-x", row=replace(r.row, configuration=name, label=name),
                                    headline=headline))
            tuned = rows[int(rng.integers(1, n))]
            yield replace(report, rungs=rows, baseline=rows[0], tuned=tuned)


def test_no_text_of_the_configurations_chart_overlaps_another_or_leaves_the_page(study):
    report = gather(study)
    rng = np.random.default_rng(42)
    checked = 0
    for variant in _variants(report, rng):
        drawing = configurations_chart(variant, WIDTH, Tolerance())
        boxes = _boxes(drawing)
        for text, left, right, _, _ in boxes:
            assert -0.5 <= left and right <= WIDTH + 0.5, f"{text!r} runs off the chart: {left:.1f}..{right:.1f}"
        for (t1, l1, r1, b1, u1), (t2, l2, r2, b2, u2) in combinations(boxes, 2):
            overlap = min(r1, r2) - max(l1, l2) > 0.5 and min(u1, u2) - max(b1, b2) > 0.5
            assert not overlap, f"{t1!r} and {t2!r} are drawn over each other ({len(variant.rungs)} rows)"
        checked += 1
    assert checked == 40


def test_each_configuration_is_named_by_what_it_changes_and_its_value_stays_off_the_1x_line(study):
    """The walk's chart: "1.37x" was drawn across the dashed 1.00x line, the rows named by settings in full."""
    report = gather(study)
    drawing = configurations_chart(report, WIDTH, Tolerance())
    texts = [b[0] for b in _boxes(drawing)]
    assert "baseline: float32, batch 64" in texts and "mixed_bfloat16 (not kept)" in texts and "XLA" in texts
    assert "XLA + batch 128 + learning rate x2" in texts
    line = next(i for i in drawing.contents if getattr(i, "strokeDashArray", None) == [2, 2])  # the 1.00x line
    for text, left, right, _, _ in _boxes(drawing):
        if text.endswith("x") and text[:-1].replace(".", "").isdigit() and text != "1.00x":
            assert not left - 1 < line.x1 < right + 1, f"{text} is drawn across the 1.00x line"


def test_a_long_configuration_name_wraps_between_words_and_is_never_cut_inside_one(study):
    """Issue 42 walk: page 1's row labels were cut inside a word ("…float32 outp..."). A label wraps between its
    words onto up to three lines; whatever is shortened ends in whole words and "…"; the rows grow to hold it."""
    from tfturbo.report.executive import LABEL_LINES, wrapped

    report = gather(study)
    long = "mixed_float16 + XLA auto-clustering + batch 1024 + learning rate x16 + float32 output layer"
    rows = [report.rungs[0]] + [replace(r, row=replace(r.row, configuration=long)) if r.name == "02-mixed_bfloat16"
                                else r for r in report.rungs[1:] if r.row is not None and r.headline is not None]
    drawing = configurations_chart(replace(report, rungs=rows), WIDTH, Tolerance())
    texts = [b[0] for b in _boxes(drawing)]
    first = texts.index("mixed_float16 + XLA auto-clustering +")  # its lines, one under the other
    assert texts[first:first + 3] == ["mixed_float16 + XLA auto-clustering +", "batch 1024 + learning rate x16 + "
                                      "float32", "output layer (not kept)"], texts  # every word, whole
    assert not any(t.endswith(("...", "…")) for t in texts), texts
    words = set((long + " (not kept) vs the baseline").split(" "))
    # shortened: whole words only, never more lines than allowed
    lines = wrapped(long + " " + long, 120, 7.5)
    assert len(lines) == LABEL_LINES and lines[-1].endswith(" …")
    assert all(w in words or w == "…" for line in lines for w in line.split(" ")), lines


def _header_positions(path) -> list[list[tuple[float, float]]]:
    """Per page, the (x, y from the top) of each table header cell reading "Configuration"."""
    from pypdf import PdfReader

    pages = []
    for page in PdfReader(str(path)).pages:
        found: list[tuple[float, float]] = []
        height = float(page.mediabox.height)

        def visit(text, cm, tm, _font, _size, found=found, height=height):
            if text.strip() == "Configuration":  # the text matrix's origin through the current matrix
                x = tm[4] * cm[0] + tm[5] * cm[2] + cm[4]
                y = tm[4] * cm[1] + tm[5] * cm[3] + cm[5]
                found.append((round(x, 1), round(height - y, 1)))

        page.extract_text(visitor_text=visit)
        pages.append(found)
    return pages


@pytest.mark.parametrize("space", [300, 400, 450, 600])
def test_a_table_whose_rows_continue_on_the_next_page_repeats_its_header_only_there(tmp_path, space):
    """Issue-42 walk, PDF page 2: the configurations table (decision cells given whole, split where the page ends)
    repeated its header in mid-page before the XLA row, with every column 6 pt further left, and went on at the
    top of page 3. Wherever the table starts, its header is drawn once per page — at the top of a continuation
    page — and always at the same x."""
    from reportlab.lib.pagesizes import A4
    from reportlab.platypus import SimpleDocTemplate, Spacer

    from tfturbo.report.flowables import MARGIN, table

    decision = " ".join(["reason"] * 160)
    rows = [["baseline", "completed", "1.00x", "1.00x", "-", "kept"],
            ["mixed_bfloat16", "completed", "1.09x", "1.12x", "-0.37 pp", decision],
            ["XLA", "completed", "0.79x", "1.50x", "+1.02 pp", decision],
            ["30 steps per call", "completed", "1.76x", "same", "+0.00 pp", "kept"]]
    path = tmp_path / "t.pdf"
    SimpleDocTemplate(str(path), pagesize=A4, leftMargin=MARGIN, rightMargin=MARGIN, topMargin=MARGIN,
                      bottomMargin=MARGIN).build(
        [Spacer(1, space), table(["Configuration", "Status", "Speed-up", "Peak memory", "Accuracy", "Decision"],
                                 rows, [100, 50, 98, 56, 76, 120], split_rows=True)])
    pages = _header_positions(path)
    assert all(len(found) <= 1 for found in pages), pages
    assert len({x for found in pages for x, _y in found}) == 1, pages
    for found in pages[1:]:
        assert all(y < MARGIN + 20 for _x, y in found), pages  # at the top of the continuation page
