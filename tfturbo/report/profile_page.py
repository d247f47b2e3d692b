"""The report's "Where the time went" page: the baseline's profile beside the recommended configuration's, per
op category, with the findings the two profiles raise.

`gather` builds the page's data from the runs' profile.json (`tfturbo.profile`, the same documents, categories
and comparison the wizard shows); `section` draws it (a reportlab bar chart and tables). A study whose runs
captured no profile gets the page with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reportlab.graphics.charts.barcharts import HorizontalBarChart
from reportlab.graphics.charts.legends import Legend
from reportlab.graphics.shapes import Drawing, String
from reportlab.lib import colors

from ..findings import FindingDoc
from .. import profile as prof
from ..profile_findings import compare_findings
from ..runfiles import RUNS_DIR
from . import style
from .flowables import WIDTH, P, code_block, esc, name_markup, table

if TYPE_CHECKING:  # the report's model gathers this page's data
    from .model import LadderRow

PROFILE_CODES = ("MATMUL_NOT_16BIT", "CASTS_HEAVY", "HOST_OVERHEAD", "OP_SLOWER")
BASE_COLOR = colors.HexColor("#9AA5B1")


@dataclass
class TimeWent:
    base_label: str
    base: prof.Profile
    run_label: str | None = None  # None: nothing was recommended over the baseline
    run: prof.Profile | None = None
    change: prof.ProfileChange | None = None
    findings: list[FindingDoc] = field(default_factory=list)
    # every other configuration tried that captured a profile: (label, its change against the baseline)
    tried: list[tuple[str, prof.ProfileChange]] = field(default_factory=list)
    reference: prof.Profile | None = None  # what the recommended run is compared with, when not the baseline run
    reference_label: str = "the baseline"


def _profiled_in(row: LadderRow) -> dict[str, str]:
    """The rung's design record's `profiled_in` (arm -> the run holding its configuration's profile); {} for a
    study from before the record."""
    decision = row.rung.decision if row.rung is not None else None
    record = decision.design_record if decision is not None else None
    return dict(record.profiled_in) if record is not None else {}


def _dirs(runs: Path, row: LadderRow) -> tuple[Path, list[Path]]:
    return prof.rung_profile_dirs(runs, row.name, _profiled_in(row),
                                  row.rung.compared_with if row.rung is not None else None)


def gather(study_dir: Path, baseline: LadderRow | None, tuned: LadderRow | None, rungs: list[LadderRow],
           run_findings: list[FindingDoc]) -> TimeWent | None:
    """The page's data for the baseline and the recommended rung (`LadderRow`s; `tuned` may be None), and the
    change of every other rung. Each configuration's profile is where its rung's design record says
    (`profile.rung_profile_dirs`: profiled once per study, maybe in an earlier rung's run)."""
    if baseline is None:
        return None
    runs = Path(study_dir) / RUNS_DIR
    base = prof.Profile.load(runs / baseline.name)
    data = TimeWent(baseline.row.label if baseline.row else baseline.name, base)
    if tuned is not None and tuned is not baseline:
        data.run_label = tuned.row.label if tuned.row else tuned.name
        own, references = _dirs(runs, tuned)
        data.run = prof.Profile.load(own)
        # compared with its trial's reference's profile (the run profiled beside it where there is one: the same
        # minutes of the machine); the baseline's own run when that is the reference or none was found
        paired, where = prof.find(references[:1])
        if paired.available and where is not None and where.name != baseline.name:
            data.reference = paired
            beside = tuned.rung is not None and where.name in tuned.rung.replicates  # one of its trial's runs
            data.reference_label = ("its trial's reference run, profiled beside it" if beside else
                                    "its reference configuration, profiled once in an earlier step of this study")
        data.change = prof.compare(data.reference or base, data.run)
        data.findings = [f.to_dict() for f in compare_findings(data.reference or base, data.run,
                                                               baseline.settings, tuned.settings)]
    data.findings = [f for f in run_findings if f.get("code") in PROFILE_CODES] + data.findings
    for rung in rungs:
        if rung is baseline or rung is tuned:
            continue
        # what the rung changed: its reference's profile (the record's, else its trial's pair-1 reference, else the
        # run of the configuration it was measured against), else the baseline's
        own, references = _dirs(runs, rung)
        paired, _ = prof.find(list(references))
        change = prof.compare(paired if paired.available else base, prof.Profile.load(own))
        if change is not None:
            data.tried.append((rung.row.label if rung.row else rung.name, change))
    return data


# ---------------------------------------------------------------- drawing

def bar_chart(data: TimeWent, width: float) -> Drawing:
    """Per category, ms per profiled step: the baseline (grey) and the recommended configuration (accent); the
    recommended configuration's own alone when its categories are not comparable (XLA against no XLA)."""
    profiles = [p for p in (data.reference or data.base, data.run) if p is not None and p.available]
    own_only = data.change is not None and not data.change.comparable
    if own_only:
        profiles = profiles[-1:]
    cats = [c for c in prof.CATEGORIES if any(p.categories.get(c, 0) > 0 for p in profiles)]
    row_h = 22 if len(profiles) > 1 else 14
    height = 40 + row_h * len(cats)
    d = Drawing(width, height + 16)
    chart = HorizontalBarChart()
    chart.x, chart.y = 92, 28
    chart.width, chart.height = width - 110, row_h * len(cats)
    # the last series is drawn on top of each group: the baseline above the recommendation
    chart.data = [[p.categories.get(c, 0.0) for c in reversed(cats)] for p in reversed(profiles)]
    chart.categoryAxis.categoryNames = [prof.LABELS[c] for c in reversed(cats)]
    chart.categoryAxis.labels.fontName = style.FONT
    chart.categoryAxis.labels.fontSize = 7.5
    chart.categoryAxis.labels.dx = -4
    chart.categoryAxis.strokeColor = style.RULE
    chart.valueAxis.valueMin = 0
    chart.valueAxis.labels.fontName = style.FONT
    chart.valueAxis.labels.fontSize = 7
    chart.valueAxis.labels.fillColor = style.MUTED
    chart.valueAxis.strokeColor = style.RULE
    chart.valueAxis.visibleGrid = True
    chart.valueAxis.gridStrokeColor = colors.HexColor("#E3E7EC")
    chart.barSpacing = 1
    chart.groupSpacing = 5
    for i, colour in enumerate((style.ACCENT, BASE_COLOR)[:len(profiles)]):
        chart.bars[i].fillColor = colour
        chart.bars[i].strokeColor = None
    d.add(chart)
    d.add(String(chart.x + chart.width / 2, 6, "ms per profiled step (op self time, summed over threads)",
                 fontName=style.FONT, fontSize=7.5, fillColor=style.MUTED, textAnchor="middle"))
    if own_only:
        d.add(String(chart.x + chart.width, height + 4, "recommended configuration, its own categories (XLA)",
                     fontName=style.FONT, fontSize=7.5, fillColor=style.MUTED, textAnchor="end"))
    if len(profiles) > 1:
        legend = Legend()
        legend.x, legend.y = chart.x + chart.width - 150, height + 12
        legend.alignment = "right"
        legend.columnMaximum = 1
        legend.dx, legend.dy, legend.dxTextSpace = 8, 6, 4
        legend.fontName, legend.fontSize = style.FONT, 7.5
        legend.strokeColor = None
        legend.colorNamePairs = [(BASE_COLOR, "reference" if data.reference else "baseline"),
                                 (style.ACCENT, "recommended")]
        d.add(legend)
    return d


def _ms(p: prof.Profile | None, c: str) -> str:
    if p is None or not p.available:
        return "n/a"
    return f"{p.categories.get(c, 0.0):.2f} ({100 * p.share(c):.0f}%)"


def _signed(v: float | None, unit: str = "%") -> str:
    return "—" if v is None else f"{'+' if v >= 0 else '−'}{abs(v):.0f}{unit}"


def section(data: Any) -> list:
    """The page's flowables for a `model.ReportData` whose `time_went` was gathered."""
    from reportlab.platypus import KeepTogether, PageBreak, Spacer
    from reportlab.lib.units import cm

    heading = [PageBreak(), P("Where the time went", style.H1)]
    went: TimeWent | None = data.time_went
    if went is None:
        return heading + [P("No baseline run: there is no profile to show.", style.BODY)]
    run = went.run
    if not went.base.available:
        return heading + [P(esc(f"The baseline's profile is not available: {went.base.reason}."), style.BODY)]
    base = went.reference or went.base  # the left column: what the recommendation is compared with
    out = heading + [P(esc(
        "Op self time per profiled step, by category, from each run's profiler window (profile.json, read "
        "with xprof). On a CPU several ops run at once, so op time can exceed a step's wall time; the shares "
        "are of the op time. " + (f"Baseline: {went.base_label}; recommended: {went.run_label}, compared with "
                                  f"{went.reference_label}."
                                  if went.run_label else f"Baseline: {went.base_label}; nothing was "
                                  "recommended over it.")), style.BODY),
        bar_chart(went, WIDTH), Spacer(1, 0.3 * cm)]
    shown = [base, run] + [change.run for _label, change in went.tried]
    notes = sorted({n for p in shown if p is not None for n in (p.source_note(), p.input_note()) if n})
    out += [P(esc(f"{n[:1].upper()}{n[1:]}."), style.SMALL) for n in notes]
    if went.change is not None:
        out.append(P(esc(f"Against {went.reference_label}: {went.change.sentence()}."
                         + (f" ({went.change.note}.)" if went.change.note else "")), style.BODY))
    elif run is not None:
        out.append(P(esc(f"The recommended configuration's profile is not available: {run.reason}."), style.BODY))
    change = {c.category: c for c in went.change.changes} if went.change else {}
    compared = run is not None and (went.change is None or went.change.comparable)
    header = ["Category", ("Reference" if went.reference else "Baseline") + " ms (share)"] + \
        (["Recommended ms (share)"] if run is not None else []) + (["Change", "Points of step"] if compared else [])
    rows = []
    for c in prof.CATEGORIES:
        if not base.categories.get(c) and not (run and run.available and run.categories.get(c)):
            continue
        cells = [prof.LABELS[c], _ms(base, c)]
        if run is not None:
            cells.append(_ms(run, c))
        if compared:
            ch = change.get(c)
            cells += [_signed(100 * ch.relative if ch and ch.relative is not None else None),
                      _signed(went.change.points(ch), " pts") if ch and went.change else "—"]
        rows.append(cells)
    widths = [110, 110] + ([110] if run is not None else []) + ([70, 80] if compared else [])
    facts = [("Op time per step", lambda p: f"{p.op_ms_per_step:.2f} ms" if p.op_ms_per_step else "n/a"),
             ("Steps in the window took", lambda p: f"{p.wall_ms_per_step:.2f} ms" if p.wall_ms_per_step else "n/a"),
             ("Matmul/attention in 16-bit", lambda p: f"{100 * p.sixteen_bit_share():.0f}%"
              if p.sixteen_bit_share() is not None else f"not available: {p.sixteen_bit.get('reason', '')}"),
             ("Step breakdown", _breakdown)]
    for label, fn in facts:
        rows.append([label, fn(base)] + ([fn(run) if run.available else "n/a"] if run is not None else [])
                    + (["", ""] if compared else []))
    out.append(table(header, rows, widths))
    out.append(Spacer(1, 0.3 * cm))
    if went.tried:
        out.append(P("Every other configuration tried, against its reference run profiled beside it", style.H2))
        out.append(table(["Configuration", "Per category"],
                         [[label, change.sentence() + (f" ({change.note})" if change.note else "")]
                          for label, change in went.tried], [150, 340]))
    out += _top_ops(went, P, table)
    if went.findings:
        out.append(P("What the profiles say", style.H2))
        for f in went.findings:
            block = [P(f'<font name="{style.MONO}">{esc(f.get("code", ""))}</font> ' + esc(f.get("message", "")),
                       style.BODY)]
            if str(f.get("fix") or "").strip():
                block.append(code_block(str(f["fix"]).strip()))
            out.append(KeepTogether(block))
    return out


def _breakdown(p: prof.Profile) -> str:
    """'device compute 7.1, host compute 0.4, kernel launch 0.3 of 8.0 ms' where the device marks steps."""
    b = p.step_breakdown
    if not b.get("available"):
        return f"not available: {b.get('reason', '')}"
    parts = [f"{k.replace('_', ' ')} {v:.2f}" for k, v in (b.get("ms") or {}).items()
             if isinstance(v, (int, float)) and v > 0]
    return f"{', '.join(parts)} of {b.get('step_ms', 0):.2f} ms (unverified)"


OP_COLUMN, TOP_OPS_WIDTH = 250, 490  # the top ops table's op column, of its columns' widths (points, scaled)


def _top_ops(went: TimeWent, P, table) -> list:
    out = []
    for label, p in (("reference" if went.reference else "baseline", went.reference or went.base),
                     ("recommended", went.run)):
        if p is None or not p.available or not p.top_ops:
            continue
        # the op's name broken only after its '/', '_' and '.' (cut anywhere, it read "multi_he" / "ad_attention")
        rows = [[P(name_markup(prof.short_name(r.name) or r.type, OP_COLUMN * WIDTH / TOP_OPS_WIDTH - 8)),
                 prof.base_type(r.type), prof.LABELS[r.category], f"{r.ms_per_step:.3f}",
                 f"{100 * r.share:.1f}%"] for r in p.top_ops[:6]]
        out += [P(f"Top ops, {label}", style.H2),
                table(["Op", "Type", "Category", "ms/step", "Share"], rows, [OP_COLUMN, 80, 70, 50, 40])]
    return out
