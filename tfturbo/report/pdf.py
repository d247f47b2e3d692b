"""Lays out a `model.ReportData` as a PDF with reportlab's platypus.

Every string that came from a file (workload, run and layer names, messages,
fixes, warnings) goes through `esc` before it reaches a Paragraph, because
Paragraph text is reportlab mini-markup: a layer called `<b>&evil</b>` must be
printed as written, not interpreted. Table cells are Paragraphs so long
values wrap instead of running off the page, and code blocks are Paragraphs
too, so a long snippet splits across pages.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from reportlab.lib.pagesizes import A4
from reportlab.lib.units import cm
from reportlab.pdfgen import canvas as rl_canvas
from reportlab.platypus import (KeepTogether, PageBreak, Paragraph, SimpleDocTemplate, Spacer, Table,
                                TableStyle)

from .. import __version__, compare, protocol
from ..console import fmt_bytes
from ..headline import step_words
from ..learning_rate import learning_rate_text
from ..option_words import in_words
from ..numbers import counted, digits_for, finite
from ..trials.verdict import AccuracyVerdict, Tolerance
from ..tune.skip import SKIPPED
from ..verdicts import COMPUTE_NOISE, Decision, ProbeVerdict, Verdict, compute_slower_than_training, input_share_fact
from . import executive, profile_page, style
from .charts import line_chart
from .flowables import CELL_LIMIT, MARGIN, PAGE_H, PAGE_W, WIDTH, P, code_block, esc, kv_table, short, table
from .model import LadderRow, ReportData, validation_examples

def status_cell(status: str) -> Paragraph:
    """Completed runs plainly; anything else (failed, cancelled, crashed, skipped) in bold red."""
    if status == protocol.RunStatus.COMPLETED:
        return P(esc(status))
    return P(f'<font color="{style.BAD.hexval()}"><b>{esc(status)}</b></font>')


# ---------------------------------------------------------------- sections

def _versions_text(versions: dict[str, str]) -> str:
    names = {"tfturbo": "tfturbo", "tensorflow": "TensorFlow", "keras": "Keras", "python": "Python"}
    return ", ".join(f"{names.get(k, k)} {v}" for k, v in versions.items()) or "not recorded"


def _when(iso: str) -> str:
    """'2026-11-30 11:15 UTC' for an ISO time stamp; anything else as written."""
    try:
        t = _dt.datetime.fromisoformat(iso)
    except (TypeError, ValueError):
        return iso
    if t.tzinfo is not None:
        return t.astimezone(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return t.strftime("%Y-%m-%d %H:%M")


MAX_CHANGES = 3  # on page 1; the rest are under Settings to apply


def title_page(data: ReportData) -> list:
    """Page 1, the executive summary (`executive`); page 2, the study's details and the verdict in full."""
    tolerance = Tolerance.from_dict(data.options.get("tolerance") if isinstance(data.options, dict) else None)
    big, under = executive.headline_sentence(data)
    accuracy = executive.accuracy_sentence(data, tolerance)
    lines = [[P(esc(big), style.HEADLINE)], [P(esc(under), style.VERDICT)]]
    if accuracy:
        lines.append([P(esc(accuracy), style.VERDICT)])
    box = Table(lines, colWidths=[WIDTH])
    box.setStyle(TableStyle([("BACKGROUND", (0, 0), (-1, -1), style.TINT),
                             ("LINEBEFORE", (0, 0), (0, -1), 3, style.ACCENT),
                             ("LEFTPADDING", (0, 0), (-1, -1), 12), ("RIGHTPADDING", (0, 0), (-1, -1), 12),
                             ("TOPPADDING", (0, 0), (-1, -1), 4), ("BOTTOMPADDING", (0, 0), (-1, -1), 4),
                             ("TOPPADDING", (0, 0), (-1, 0), 10), ("BOTTOMPADDING", (0, -1), (-1, -1), 10)]))
    when = _when(data.created)
    out = [Spacer(1, 0.6 * cm), P("Training speed-up report", style.TITLE),
           P(esc(data.workload) + f' <font size="9">· {esc(data.device)} · {esc(when)}</font>', style.SUBTITLE),
           box, Spacer(1, 0.5 * cm)]
    chart = executive.configurations_chart(data, WIDTH, tolerance)
    if chart is not None:
        out += [P("Every configuration measured", style.H2), chart,
                P(f"Each bar is a 95% interval, the square the measured value; blue: {Decision.KEPT}, grey: "
                  f"{Decision.NOT_KEPT}; the "
                  f"shaded band is the accuracy tolerance (±{tolerance.accuracy_pp:g} pp). An arrow marks an "
                  "interval that runs past the axis. A speed-up never measured against the baseline itself says "
                  "what it was measured against.", style.SMALL), Spacer(1, 0.4 * cm)]
    out.append(P("Changes to make", style.H2))
    if data.changes:
        out += [Paragraph(esc(c), style.BULLET, bulletText="\u2022") for c in data.changes[:MAX_CHANGES]]
        if len(data.changes) > MAX_CHANGES:
            out.append(P(f"and {len(data.changes) - MAX_CHANGES} more: see Settings to apply.", style.SMALL))
        out.append(P("The code for these changes is under Settings to apply; nothing there was left unmeasured.",
                     style.SMALL))
    else:
        out.append(P("None: keep the current settings.", style.BODY))
    env = data.environment
    rec = env.recommended_policy
    meta = [("Workload", data.workload)] + ([("Measured", data.measured_fit)] if data.measured_fit else []) + \
        ([("Baseline", f"the script as written: {data.as_written}")] if data.as_written else []) + \
        ([("Not run while measuring", f"the script's callbacks {', '.join(data.callbacks_not_run)} "
                                      "(CALLBACKS_NOT_RUN)")] if data.callbacks_not_run else []) + [
            ("Study", str(data.study_dir.name)), ("Hardware", data.device),
            ("Study created", when),
            ("Report generated", _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")),
            ("Versions", _versions_text(data.versions))]
    kept = next((value for key, value in data.apply_rows if key == "Precision policy"), None)
    if kept:  # the recommendation's policy; the hardware's 16-bit candidate read as it ("Policy: mixed_bfloat16")
        measured = f"; {rec} was the 16-bit policy measured on this hardware" + \
            (f" ({env.reason})" if env.reason else "") if rec and rec != kept else ""
        meta.append(("Precision policy", f"{kept} (recommended{'' if data.tuned else ': the current settings'})"
                     + measured))
    elif rec:
        meta.append(("16-bit policy for this hardware", f"{rec}" + (f" ({env.reason})" if env.reason else "")))
    verdict_box = Table([[P(esc(data.verdict), style.VERDICT)]], colWidths=[WIDTH])
    verdict_box.setStyle(TableStyle([("BACKGROUND", (0, 0), (-1, -1), style.TINT),
                                     ("LEFTPADDING", (0, 0), (-1, -1), 12), ("RIGHTPADDING", (0, 0), (-1, -1), 12),
                                     ("TOPPADDING", (0, 0), (-1, -1), 8), ("BOTTOMPADDING", (0, 0), (-1, -1), 8)]))
    return out + [Spacer(1, 0.3 * cm), P("About this study", style.H2), kv_table(meta), PageBreak(),
                  P("Verdict in full", style.H1), verdict_box,
                  P("A replicate pair is one run of each configuration, in alternating order (both in one process "
                    "where they can share one); the interval across the pairs includes how much identical runs "
                    "differ.", style.SMALL)]


NAME_COLUMN = 100 / 500  # the configuration column's share of the configurations table


def fitted_name(name: str, width: float) -> str:
    """A run name in bold, in a smaller size when it is wider than `width` points: split inside a word it
    read "06-steps_per_execut ion" (a name has no spaces to wrap at)."""
    from reportlab.pdfbase import pdfmetrics

    size = style.CELL.fontSize
    while size > 5.5 and pdfmetrics.stringWidth(name, style.FONT_BOLD, size) > width:
        size -= 0.25
    text = f"<b>{esc(name)}</b>"
    return text if size == style.CELL.fontSize else f'<font size="{size:g}">{text}</font>'


def named(data: ReportData, name: str) -> str:
    """Rung `name` in a sentence: its configuration (`CompareRow.configuration`), and which of its rungs it is
    where two share one ("…, the confirmation", `headline.step_words`); never its run folder (the configurations
    table gives that). A name no rung has (the study's audit: "study") as it is."""
    rung = next((r for r in data.rungs if r.name == name and r.row is not None), None)
    if rung is None or rung.row is None:
        return name
    config = rung.row.configuration
    if sum(1 for r in data.rungs if r.row is not None and r.row.configuration == config) < 2:
        return config
    return f"{config}, {step_words(name, [r.rung for r in data.rungs if r.rung is not None])}"


def configuration_name(rung: LadderRow) -> Paragraph:
    """A configuration by what it is (`CompareRow.configuration`: "20 steps per call", "baseline: float32, batch
    64"), and under it, muted, the step that measured it and its run folder: the report named configurations by
    folder ("04-spe20"), which a client cannot read (issue 42)."""
    name = rung.row.configuration if rung.row else rung.configuration or rung.name
    # a step not run has no run folder; a run the ladder names that is missing keeps its name
    folder = short(rung.name, 80) if rung.row or (rung.configuration and rung.status == "missing") else ""
    detail = " · ".join(p for p in (rung.lever_title, folder) if p)
    return P(f"<b>{esc(name)}</b>" + (f'<br/><font color="{style.MUTED.hexval()}">{esc(detail)}</font>'
                                      if detail else ""))


def _decision(rung: LadderRow) -> Paragraph:
    if rung.kept is None:
        head = "baseline" if rung.row and rung.row.verdict == Verdict.BASELINE else "no decision"
        return P(esc(head) + (f"<br/>{esc(rung.reason)}" if rung.reason else ""))
    decision = rung.rung.decision if rung.rung else None
    if decision is not None and decision.speed.verdict == Verdict.NOT_APPLIED:  # nothing judged: no decision row
        return P(f'<font color="{style.MUTED.hexval()}"><b>not judged</b></font><br/>'
                 f"{esc(decision.speed.text())}")
    colour = style.GOOD if rung.kept else style.MUTED  # not kept is an answer, not a fault (as the wizard shows it)
    head = "skipped" if not rung.kept and rung.status == "skipped" else Decision.word(bool(rung.kept))
    skip = rung.rung.skipped_reason if rung.rung is not None else None  # "skipped" heads it: its why alone
    reason = skip.why if skip is not None and skip.word == SKIPPED else rung.decision_reason
    reason = in_words(reason.strip().splitlines()[0]) if reason.strip() else ""  # a traceback's first line; whole
    return P(f'<font color="{colour.hexval()}"><b>{head}</b></font>'
             + (f"<br/>{esc(reason)}" if reason else ""))


def with_ci(value: float | None, ci: tuple[float, float] | None, digits: int | None = None,
            unit: str = "") -> Paragraph:
    """The value, and its 95% interval on a second, muted line."""
    if value is None:
        return P("n/a")
    digits = digits_for(value) if digits is None else digits
    text = f"{value:.{digits}f}{unit}"
    if ci:
        text += f'<br/><font color="{style.MUTED.hexval()}">[{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]</font>'
    return P(text)


def _speedup(rung: LadderRow) -> Paragraph:
    """The configuration's headline (`tfturbo.headline`): the ratio, its interval, against what, how many pairs."""
    row = rung.row
    if row is not None and row.verdict == Verdict.BASELINE:
        return P("1.00x<br/>(baseline)")
    if row is not None and row.status != protocol.RunStatus.COMPLETED:  # a crash is not "no measurable change"
        return P(f"not measured<br/>(the run {esc(row.status)})")
    decision = rung.rung.decision if rung.rung else None
    if decision is not None and decision.speed.verdict in (Verdict.NOT_APPLIED, Verdict.NOT_ENOUGH):
        return P(f"not measured<br/>({esc(decision.speed.verdict)})")  # never the runs' own ratio
    shown = rung.headline
    if shown is not None:
        lo, hi = shown.ci95
        ci = f"[{lo:.2f}, {hi:.2f}]" if shown.has_interval else "[no interval]"
        whose = f"<br/>({esc(shown.pooled_words(rung.name))})" if len(shown.trials) > 1 else \
            f"<br/>({esc(shown.word(shown.trial))}'s trial)" if shown.trial != rung.name else ""
        return P(f"{shown.ratio:.2f}x<br/><font color=\"{style.MUTED.hexval()}\">{ci} vs "
                 f"{esc(shown.against_words)}, {counted(shown.pairs, 'pair')}{whose}</font>")
    return with_ci(row.speedup, row.speedup_ci95, 2, "x") if row is not None else P("n/a")


def _memory(rung: LadderRow) -> Paragraph | str:
    """Peak memory against the baseline's: a ratio only beyond the runs' own spread (`summary.MemoryChange`)."""
    change = rung.memory
    if change is None:
        return fmt_bytes(rung.row.peak_memory_bytes) if rung.row else "n/a"
    after = esc(fmt_bytes(change.after_bytes))
    if rung.row is not None and rung.row.verdict == Verdict.BASELINE:
        return P(f"1.00x<br/>{after}")
    if change.beyond_spread:
        return P(f"{change.ratio:.2f}x<br/>{after}")
    why = "one run each" if change.spread is None else "within the runs' spread"
    return P(f"about the same<br/>{after}<br/><font color=\"{style.MUTED.hexval()}\">({why})</font>")


def _accuracy(rung: LadderRow) -> Paragraph | str:
    """The trial's paired accuracy change against the baseline, with its interval and verdict."""
    acc = rung.accuracy
    if rung.row is not None and rung.row.verdict == Verdict.BASELINE:
        return "-"
    if acc is not None:
        text = acc.shown(acc.delta) if finite(acc.delta) else "n/a"
        if acc.ci95 and all(finite(c) for c in acc.ci95):  # in the delta's unit
            lo, hi = (acc.shown(c, "") for c in acc.ci95)
            text += f'<br/><font color="{style.MUTED.hexval()}">[{lo}, {hi}]</font>'
        n = acc.examples
        counted = (f", {n} ex." if acc.unit == "example" else f", {acc.paired_on().replace('validation ', '')}") \
            if n else ""
        several = (f"{esc(acc.metric)} (the deciding one of {len(acc.outputs)} outputs)<br/>"
                   if len(acc.outputs) > 1 else "")
        return P(f"{several}{text}<br/>{esc(acc.verdict)}{counted}")
    row = rung.row
    if row is not None and row.val_delta:
        name, d = row.val_delta
        return P(AccuracyVerdict(name, d, None, "").shown(d))
    return "n/a"


def _ladder_only(rung: LadderRow) -> str:
    """The speed-up study.yaml recorded for a rung whose run folder is gone."""
    return f"{rung.headline.ratio:.2f}x (study.yaml)" if rung.headline is not None else "n/a"


def configuration_section(data: ReportData) -> list:
    if not data.rungs:
        return [P("Configurations", style.H1),
                P("No configuration was measured: the study stopped before its first run (see the verdict).",
                  style.BODY)]
    metric = data.metric
    header = ["Configuration", "Status", "Speed-up [95% CI]", "Peak memory vs baseline",
              "Accuracy vs baseline [95% CI]", "Decision"]
    rows = []
    for rung in data.rungs:
        row = rung.row
        if row is None:
            rows.append([configuration_name(rung), status_cell(rung.status), _ladder_only(rung), "n/a",
                         "n/a", _decision(rung)])
            continue
        mem = _memory(rung)
        rows.append([configuration_name(rung), status_cell(row.status), _speedup(rung), mem, _accuracy(rung),
                     _decision(rung)])
    val_note = (f" Accuracy is the change in <font name=\"{style.MONO}\">{esc(metric)}</font> from the baseline, "
                "paired on the same validation examples at equal samples seen and averaged over the last "
                "validation points, with its 95% interval" + (" in percentage points (pp); " if not
                                                             metric.endswith("loss") else "; ") +
                "within tolerance means the interval's worse end stays inside the tolerance, inconclusive that "
                "the validation set is too small to tell.") if metric else ""
    on_loss = [named(data, r.name) for r in data.rungs if r.accuracy is not None and r.accuracy.is_loss
               and not (metric or "").endswith("loss")]
    if on_loss and val_note:  # a rung judged on the loss (the way forward, --judge-on loss): its own unit
        val_note += (f" {esc('; '.join(on_loss))} {'was' if len(on_loss) == 1 else 'were'} judged on the validation "
                     "loss instead: the change in val_loss in its own units (see How accuracy was judged).")
    kind = next((r.row.memory_kind for r in data.rungs if r.row and r.row.memory_kind), None)
    mem_note = {"device": "Peak memory is accelerator (device) memory.",
                "host": "Peak memory is host memory (process RSS): this run had no accelerator."}.get(kind or "", "")
    return [
        P("Configurations", style.H1),
        P("Each configuration was measured as an A/B trial against the best configuration kept before it "
          "(its row says which): replicated runs of both, alternating AB, BA, …, each in its own process with the "
          "same seed and data order. Speed is throughput per sample over that reference, from the device-drained "
          "windows of the steady state, with a 95% interval across the replicate pairs, so run-to-run variation "
          "is inside it (widened for the trial's looks after each pair, so it is 95% for the trial as a whole); "
          "an interval that contains 1.00 is reported as no measurable change. A configuration "
          "measured again against the baseline (the confirmation) shows that trial's number on every row. "
          + esc(mem_note) + val_note, style.BODY),
        table(header, rows, [NAME_COLUMN * 500, 50, 98, 56, 76, 120], split_rows=True),  # decisions whole
    ] + steps_not_run_section(data) + accuracy_rules_section(data) + way_forward_section(data)


def steps_not_run_section(data: ReportData) -> list:
    """Each step of the checklist the study decided not to run, with its whole reason: the table's cell is
    shortened, and a step not run because it could not take effect (XLA that Keras refuses) says what would enable
    it, which a client needs in full."""
    skipped = [r for r in data.rungs if r.rung is not None and r.rung.skipped_reason is not None]
    if not skipped:
        return []
    out = [P("Steps not run", style.H2),
           P("These steps of the checklist were decided without training: what they would change could not "
             "take effect or had nothing to measure for this job.", style.BODY)]
    for r in skipped:
        skip = r.rung.skipped_reason if r.rung is not None else None
        why = skip.why.strip() if skip is not None else r.reason  # its why alone: the heading says it was not run
        out.append(Paragraph(f"<b>{esc(r.lever_title or r.name)}</b>: {esc(why)}{'' if why.endswith('.') else '.'}",
                             style.BULLET, bulletText="\u2022"))
    return [KeepTogether(out)]


def accuracy_rules_section(data: ReportData) -> list:
    """Which rule judged each configuration's accuracy, when it was not the default: nothing kept silently."""
    if not data.accuracy_rules:
        return []
    out = [P("How accuracy was judged", style.H2),
           P(f"These configurations were judged by another rule than the default ({esc(Tolerance().text())}), "
             "chosen by the user:", style.BODY)]
    out += [Paragraph(f"<b>{esc(named(data, name))}</b>: {esc(text)}.", style.BULLET, bulletText="\u2022")
            for name, text in data.accuracy_rules]
    return out


def way_forward_section(data: ReportData) -> list:
    """For each faster configuration whose accuracy was not decided: what would decide it, recommended first."""
    if not data.way_forward:
        return []
    out = [P("Accuracy not decided: what would decide it", style.H2),
           P("These configurations were faster, but the validation set could not tell whether accuracy held, so "
             "they were not kept. Nothing is kept without a decision; these are the ways to reach one.", style.BODY)]
    for name, lines in data.way_forward:  # a name and its ways on one page (the name ended a page alone)
        out.append(KeepTogether([P(f"<b>{esc(named(data, name))}</b>", style.BODY)] +
                                [Paragraph(esc(in_words(line)), style.BULLET, bulletText="\u2022") for line in lines]))
    return [KeepTogether(out[:3])] + out[3:] if len(out) >= 3 else out


def single_runs_section(data: ReportData) -> list:
    """Each rung's one run on its own: details, never a comparison (the speed-ups are the trials')."""
    # a findings column only when a run raised one (a column of "-" said nothing, issue 42)
    findings = any(r.row.findings for r in data.rungs if r.row is not None)
    measured = [_measured_row(r, findings) for r in data.rungs if r.row is not None]
    if not measured:
        return []
    header = ["Configuration", "Steps/s [95% CI]", "Step time ms [95% CI]", "Warm-up (s)",
              "Final validation metrics", "Steps"] + (["Findings"] if findings else [])
    widths = [88, 62, 62, 48, 88, 34] + ([111] if findings else [])
    widths[0] += WIDTH - sum(widths)  # the configuration's name takes what a findings column leaves
    return [KeepTogether([
        P("Single runs on their own", style.H2),
        P("Each rung's own run, measured alone: its interval is that run's step-to-step noise, not the spread "
          "between runs, so these rates are not comparisons (a larger batch also takes longer per step). The "
          "speed-ups are the trials' (Configurations).", style.BODY),
        table(header, measured, widths)])]


def _measured_row(rung: LadderRow, findings: bool) -> list:
    row = rung.row
    assert row is not None, "a rung with its own run (single_runs_section)"
    metrics = P("<br/>".join(f"{esc(k)} {v:.4f}" for k, v in row.metrics.items()) or "n/a")
    return [configuration_name(rung), with_ci(row.steps_per_s, row.steps_per_s_ci95),
            with_ci(row.step_ms, row.step_ms_ci95), compare.fmt_num(row.warmup_s, 1), metrics,
            str(row.steps_completed or "n/a")] + \
        ([P("<br/>".join(esc(c) for c in row.findings) or "none")] if findings else [])


def plots_section(data: ReportData) -> list:
    if not data.plots:
        return [P("Before and after", style.H1), P("No per-step measurements were recorded to plot.", style.BODY)]
    out = [PageBreak(), P("Before and after", style.H1),
           P(("The runs the headline compares: the median pair (by its speed ratio) of the trial that measured "
              "the recommendation against the baseline, its two runs measured side by side" if data.tuned else
              "Nothing was recommended over the baseline; it is shown with every configuration tried")
             + ", step by step, from the runs' events.jsonl.", style.BODY)]
    for plot in data.plots:
        block = [line_chart(plot, WIDTH)]
        if plot.note:
            block.append(P(esc(plot.note), style.SMALL))
        block.append(Spacer(1, 0.35 * cm))
        out.append(KeepTogether(block))
    return out


def findings_section(data: ReportData) -> list:
    heading = P("Findings and fixes", style.H1)
    if not data.findings:
        return [heading, P("No findings: the audit and the runs raised nothing to fix.", style.BODY)]
    out: list = []
    order = {"error": 0, "warning": 1, "info": 2}
    # what applies to the kept settings first, by severity; then what was raised only by configurations not kept
    for f in sorted(data.findings, key=lambda f: (not f.get("applies", True), order.get(str(f.get("severity")), 3))):
        sev = str(f.get("severity") or "info")
        applies = f.get("applies", True)
        colour = {"error": style.BAD, "warning": style.CONTRAST}.get(sev, style.MUTED) if applies else style.MUTED
        head = esc(sev.upper()) if applies else f"{esc(sev)}, did not apply to the kept settings:"
        where = f" in <b>{esc(f['where'])}</b>" if f.get("where") else ""
        source = f' <font color="{style.MUTED.hexval()}">(from {esc(named(data, str(f.get("source"))))})</font>'
        body = style.BODY if applies else style.BODY.clone("findingNotKept", textColor=style.MUTED)
        block = [P(f'<font color="{colour.hexval()}"><b>{head}</b></font> '
                   f'<font name="{style.MONO}">{esc(f.get("code", ""))}</font>{where}{source}', body),
                 P(esc(in_words(str(f.get("message", "")))), body)]
        if str(f.get("fix") or "").strip():  # options said in words, their flags a detail (`option_words`)
            block.append(code_block(in_words(str(f["fix"]).strip())))
        # the heading travels with the first finding (keepWithNext does not reach into a KeepTogether)
        out.append(KeepTogether(([heading] if not out else []) + block))
    return out


def probe_section(data: ReportData) -> list:
    out = [P("Input pipeline", style.H1)]
    probe = data.probe
    if not probe:
        return out + [P("This study recorded no input-bound probe.", style.BODY)]
    verdict = str(probe.verdict)
    frac = probe.input_fraction
    text = {ProbeVerdict.INPUT_BOUND: "<b>Input-bound</b>: the input pipeline limits the step rate. Fix it before tuning "
                           "the model (see the INPUT_BOUND finding).",
            ProbeVerdict.COMPUTE_BOUND: "<b>Compute-bound</b>: the device, not the input pipeline, limits the step rate, so "
                             "precision and compilation changes can help."}.get(verdict, esc(verdict))
    out.append(P(text, style.BODY))

    def rate(v: float | None, unit: str) -> str:
        return f"{v:.2f} {unit}" if isinstance(v, (int, float)) else "n/a"

    rows = [("Input pipeline alone", rate(probe.data_steps_per_s, "batches/s")),
            ("Training step, data in memory", rate(probe.compute_steps_per_s, "steps/s")
             + (f" ({COMPUTE_NOISE})" if compute_slower_than_training(probe) else "")),
            ("Real training", rate(probe.train_steps_per_s, "steps/s"))]
    if isinstance(frac, (int, float)):
        rows.append(input_share_fact(probe))
    return out + [kv_table(rows, 0.4)]


def _ci_text(ci: list, fmt: str) -> str:
    return f"[{fmt.format(ci[0])}, {fmt.format(ci[1])}]" if ci[0] is not None else "[no interval]"


def scaling_section(data: ReportData) -> list:
    """Throughput and efficiency per replica count, how to read them, and the findings with their fixes."""
    result = data.scaling
    if result is None:
        return []
    rows = []
    for p in result.points:
        rate = P(f"{p.samples_per_s:,.0f}<br/><font color=\"{style.MUTED.hexval()}\">{_ci_text(p.ci95, '{:,.0f}')}"
                 "</font>") if p.samples_per_s is not None else status_cell(p.status)
        eff = P(f"{p.efficiency:.2f}<br/><font color=\"{style.MUTED.hexval()}\">{_ci_text(p.efficiency_ci95, '{:.2f}')}"
                "</font>") if p.efficiency is not None else P("n/a")
        rows.append([P(f"<b>{p.replicas}</b>"), rate, eff, str(p.replicates)])
    batch = f", {result.per_replica_batch_size} samples per replica per step" if result.per_replica_batch_size else ""
    out = [P("Scaling", style.H1),
           P(f"Strategy {esc(result.strategy or 'not recorded')}{batch}. Each replica count N is an A/B trial "
             "against one replica with the same per-replica batch, runs replicated and interleaved; efficiency = "
             "throughput(N) / (N x throughput(1)), with the speed-up's 95% interval divided by N.", style.BODY),
           table(["Replicas", "Samples/s [95% CI]", "Efficiency [95% CI]", "Replicate pairs"], rows,
                 [60, 140, 140, 80]),
           Spacer(1, 0.3 * cm), P(esc(result.interpretation()), style.BODY)]
    for f in result.findings:
        block = [P(f'<font name="{style.MONO}">{esc(f.get("code", ""))}</font>: '
                   f'{esc(in_words(str(f.get("message", ""))))}', style.BODY)]
        if str(f.get("fix") or "").strip():
            block.append(code_block(in_words(str(f["fix"]).strip())))
        out.append(KeepTogether(block))
    return out


def settings_section(data: ReportData) -> list:
    if not data.apply_rows:
        return [P("Settings to apply", style.H1),
                P("No configuration was measured, so there are no new settings to apply.", style.BODY)]
    out = [P("Settings to apply", style.H1),
           P("The configuration the study recommends" + (f" ({esc(named(data, data.tuned.name))})" if data.tuned else
                                                         " (the baseline: nothing was measurably better)") + ":",
             style.BODY), kv_table(data.apply_rows)]
    if data.snippet:
        out += [P("The change to make in the training script", style.H2), code_block(data.snippet)]
    header = ["Configuration", "Policy", "jit_compile", "Batch", "Learning rate", "Device", "Versions"]
    rows = []
    for rung in data.rungs:  # each by what it is, its run folder muted under it, as in the configurations table
        rec = rung.row.recorded_settings if rung.row else {}
        if not rec:
            rows.append([configuration_name(rung), P("<i>no settings record</i>"), "", "", "", "", ""])
            continue
        versions = rec.get("versions")
        versions = versions if isinstance(versions, dict) else {}
        rows.append([configuration_name(rung), str(rec.get("policy", "n/a")), str(rec.get("jit_compile", "n/a")),
                     str(rec.get("batch_size", "n/a")), P(esc(learning_rate_text(rec))),
                     str(rec.get("device", "n/a")), _versions_text({str(k): str(v) for k, v in versions.items()})])
    out.append(KeepTogether([
        P("Settings record", style.H2),
        P(f"Read back from each run's <font name=\"{style.MONO}\">checkpoint/tfturbo-settings.yaml</font>, "
          "which is saved beside the model so a deployed checkpoint can be traced to how it was trained.",
          style.BODY),
        table(header, rows, [104, 76, 58, 34, 46, 72, 105])]))
    return out


def warnings_section(data: ReportData) -> list:
    if not data.warnings:
        return []
    return [P("Warnings", style.H1),
            P("Runs that did not complete and files that could not be read in full. Their numbers are shown as "
              "far as they were measured.", style.BODY)] + \
        [P("\u2022 " + esc(w), style.BODY) for w in data.warnings]


def _options_text(options: dict[str, Any]) -> str:
    """The recorded tune options in words ('steps 60, seed 1234, 3 to 6 replicate pairs, ...')."""
    parts = []
    for key, value in options.items():
        if value is None or value == [] or value == {}:
            continue
        if key == "replicates" and isinstance(value, dict):
            span = value.get("min") if value.get("min") == value.get("max") else \
                f"{value.get('min')} to {value.get('max')}"
            parts.append(f"{span} replicate pairs per trial")
        elif key == "tolerance" and isinstance(value, dict):
            parts.append(f"accuracy tolerance {value.get('accuracy_pp', 0.5):g} pp, loss tolerance "
                         f"{float(value.get('loss_rel', 0.02)):.0%}")
        elif isinstance(value, list):
            parts.append(f"{key.replace('_', ' ')} {', '.join(map(str, value))}")
        elif isinstance(value, bool):
            parts.append(f"{key.replace('_', ' ')} {'on' if value else 'off'}")
        else:
            parts.append(f"{key.replace('_', ' ')} {value}")
    return "; ".join(parts)


def appendix(data: ReportData) -> list:
    base = data.baseline.settings if data.baseline else None
    rows = []
    if base is not None:
        val_every = f"every {base.effective_val_every()} steps"
        examples = validation_examples(data.rungs) or base.val_examples
        rows += [("Seed", str(base.seed)), ("Steps per run", str(base.steps)),
                 ("Validation", f"{val_every}, on the first {examples} validation examples "
                                "(the same examples for every batch size)")]
    rows += [("Device", data.device), ("Versions", _versions_text(data.versions))]
    if data.design:
        rows.append(("How each trial measured", data.design))
    if data.measurement is not None:
        pairs = "; ".join(f"{named(data, k)}: {v}" for k, v in data.measurement["pairs"].items())
        rows.append(("Runs measured", f"{data.measurement['runs']} in all" + (f"; replicate pairs: {pairs}"
                                                                              if pairs else "")))
    options = _options_text(data.options)
    if options:
        rows.append(("Study options", options))
    rows.append(("Report written by", f"tfturbo {__version__}"))
    # the design and the options are our own text, long but bounded: printed in full
    out = [PageBreak(), P("Appendix: reproducibility", style.H1), kv_table(rows, limit=4 * CELL_LIMIT),
           P("Commands to reproduce these measurements", style.H2),
           P("A reproducibility record for tfturbo's command line: each command re-runs one configuration into a "
             "new directory (the study itself is never overwritten). Nothing here is needed to apply the "
             "recommendation (see Settings to apply).", style.BODY)]
    for rung, command in data.commands:
        out += [configuration_name(rung) if rung is not None else P("<b>the whole study</b>", style.CELL),
                code_block(command)]
    return out + single_runs_section(data) + outside_section(data)


def outside_section(data: ReportData) -> list:
    """The runs no decision used (`model.OutsideRun`): what each trained and why it is outside, no numbers, so
    none reads as a decision or a speed-up."""
    if not data.outside:
        return []
    rows = [[P(f"<b>{esc(o.run)}</b>"), status_cell(o.status), P(esc(o.why)),
             P(f'<font color="{style.MUTED.hexval()}">{esc(o.name)}</font>')]
            for o in data.outside]
    return [P("Appendix: runs outside the decisions", style.H1),
            P("Runs in the study's folder that none of its decisions used: runs of a trial that was stopped and "
              "measured again, repeated or abandoned, and their reference runs. They are not in the "
              "configurations table, the charts or any speed-up; their files stay in runs/.", style.BODY),
            table(["Run", "Status", "Why it is outside the decisions", "Run folder"], rows, [120, 56, 228, 96])]


# ---------------------------------------------------------------- the document

class NumberedCanvas(rl_canvas.Canvas):
    """Draws 'page N of M' and a running footer once the page count is known."""

    footer = ""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._pages: list[dict] = []

    def showPage(self):  # noqa: N802 - reportlab's Canvas method
        self._pages.append(dict(self.__dict__))
        self._startPage()

    def save(self):
        total = len(self._pages)
        for state in self._pages:
            self.__dict__.update(state)
            self._decorate(total)
            super().showPage()
        super().save()

    def _decorate(self, total: int) -> None:
        self.saveState()
        self.setStrokeColor(style.RULE)
        self.setLineWidth(0.5)
        self.line(MARGIN, 1.4 * cm, PAGE_W - MARGIN, 1.4 * cm)
        self.setFillColor(style.MUTED)
        style.draw_string(self, MARGIN, 1.0 * cm, self.footer[:110], style.FONT, 7.5)
        self.setFont(style.FONT, 7.5)
        self.drawRightString(PAGE_W - MARGIN, 1.0 * cm, f"Page {self._pageNumber} of {total}")
        if self._pageNumber > 1:
            self.setFillColor(style.ACCENT)
            self.rect(MARGIN, PAGE_H - 1.3 * cm, WIDTH, 2, stroke=0, fill=1)
        self.restoreState()


def render(data: ReportData, out_path: str) -> None:
    """Write the report for `data` to `out_path`."""
    story = (title_page(data) + configuration_section(data) + plots_section(data) + profile_page.section(data)
             + findings_section(data)
             + probe_section(data) + scaling_section(data) + settings_section(data) + warnings_section(data) + appendix(data))
    doc = SimpleDocTemplate(out_path, pagesize=A4, leftMargin=MARGIN, rightMargin=MARGIN, topMargin=MARGIN,
                            bottomMargin=MARGIN, title=f"Training speed-up report: {data.workload}",
                            author=f"tfturbo {__version__}", subject="Before/after training performance",
                            creator="tfturbo")
    canvas_cls = type("ReportCanvas", (NumberedCanvas,), {"footer": f"tfturbo report · {data.workload}"})
    doc.build(story, canvasmaker=canvas_cls)
