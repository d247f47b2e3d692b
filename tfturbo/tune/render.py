"""The study as text: the tutorial's table with the user's own numbers, then what to change.

Relative step time is per sample (1 / speed-up), so a larger-batch rung
compares fairly with the others; its interval comes from the speed-up's.
"""

from __future__ import annotations

import math

from ..as_written import as_written_text, callbacks_not_run
from ..console import format_finding
from ..input_probe import InputProbe
from ..trials.verdict import AccuracyVerdict
from ..verdicts import Decision, Verdict, input_share_phrase
from . import levers
from .study import LadderEntry, RungKind, Study, StudyMeasurement

BASELINE = RungKind.BASELINE


def _speed(entry: LadderEntry) -> str:
    speed = entry.get("speed") or {}
    ratio, ci = speed.get("ratio"), speed.get("ci95") or [None, None]
    if entry.get("rung") == BASELINE:
        return "1.00x (reference)"
    if not isinstance(ratio, (int, float)):
        return "—"
    lo, hi = ci
    interval = f" [{lo:.2f}, {hi:.2f}]" if isinstance(lo, (int, float)) and isinstance(hi, (int, float)) else ""
    return f"{ratio:.2f}x{interval}"


def _memory(entry: LadderEntry) -> str:
    ratio = entry.get("memory_ratio")
    if not isinstance(ratio, (int, float)):
        return "—"
    kind = " (host)" if entry.get("memory_kind") == "host" else ""
    return f"{ratio:.2f}x{kind}"


def _accuracy(entry: LadderEntry) -> str:
    acc = entry.get("accuracy") or {}
    if entry.get("rung") == BASELINE or not acc:
        return "—"
    verdict = AccuracyVerdict.from_dict(acc)
    if not verdict.metric or verdict.delta is None:
        return str(acc.get("verdict") or "—")
    ci = verdict.ci95
    interval = f" [{verdict.shown(ci[0], 'pp')}, {verdict.shown(ci[1], 'pp')}]" if ci else ""
    return f"{verdict.metric.replace('val_', '')} {verdict.shown(verdict.delta, 'pp')}{interval} " \
           f"{acc.get('verdict', '')}".rstrip()


def _kept(entry: LadderEntry) -> str:
    if entry.get("skipped"):
        return "skipped"
    if entry.get("rung") == BASELINE:
        return "baseline" if entry.get("kept") else str(entry.get("status") or "failed")
    if (entry.get("speed") or {}).get("verdict") == Verdict.FAILED:
        return "failed"
    if (entry.get("speed") or {}).get("verdict") == Verdict.NOT_APPLIED:
        return "did not take effect"
    return "KEPT" if entry.get("kept") else Decision.NOT_KEPT


def render_table(ladder: list[LadderEntry]) -> str:
    header = ("#", "configuration", "against", "speed B/A [95% CI]", "accuracy vs baseline [95% CI]",
              "peak memory (one run)", "decision")
    names = {e.get("name"): i for i, e in enumerate(ladder, 1)}
    rows = [header]
    for i, e in enumerate(ladder, 1):
        against = f"#{names[e['compared_with']]}" if e.get("compared_with") in names else "—"
        rows.append((str(i), e.get("label") or e.get("name", ""), against, _speed(e), _accuracy(e), _memory(e),
                     _kept(e)))
    widths = [max(len(r[c]) for r in rows) for c in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    lines.append("speed is the throughput per sample over the row it was measured against (higher is faster), "
                 "from replicated, interleaved runs; intervals are 95%. Peak memory is one run's against the "
                 "baseline's (the report claims a change only beyond the runs' own spread).")
    return "\n".join(lines)


def render_reasons(ladder: list[LadderEntry]) -> str:
    return "\n".join(f"{i}. {e.get('name')}: {e.get('reason', '')}" for i, e in enumerate(ladder, 1))


def render_design(measurement: StudyMeasurement, ladder: list[LadderEntry]) -> str:
    design = next((e.get("design") for e in ladder if e.get("rung") != BASELINE and e.get("design")), None)
    if not design:
        return ""
    runs, seconds = measurement["runs"], measurement["run_seconds"]
    total = f" {runs} runs in all, about {_duration(float(seconds))} of training processes." \
        if isinstance(runs, int) and isinstance(seconds, (int, float)) else ""
    return f"How each rung was measured: {design}{total}"


def _duration(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "n/a"
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def _probe_line(probe: InputProbe) -> str:
    """ "compute-bound; time waiting for input: 3%", in the words every front end uses for the probe's share
    (`verdicts.input_share_phrase`: a share the input does not explain is not called waiting for data)."""
    verdict = str(probe.verdict).replace("_", "-")
    if not isinstance(probe.input_fraction, (int, float)):
        return verdict
    return f"{verdict}; {input_share_phrase(probe)}"


def render_study(study: Study) -> str:
    """The whole text output of `tfturbo tune`."""
    lines = [f"tfturbo tune {study.workload} — study in {study.path}"]
    env = study.environment
    if env is not None:
        lines.append(f"environment: TensorFlow {env.tensorflow}, Keras {env.keras}; "
                     f"recommended policy {env.policy_text()}")
    if study.probe is not None and study.probe.verdict:
        lines.append(f"input: {_probe_line(study.probe)}")
        fixed = study.probe_input_fixes
        if fixed is not None and fixed.verdict:
            lines.append(f"input with the automatic tf.data fixes: {_probe_line(fixed)}")
    as_written = study.as_written()
    written = as_written_text(as_written)
    if written:
        lines.append(f"baseline: the script as written: {written}")
        dropped = callbacks_not_run(as_written)
        if dropped:
            lines.append(f"not run while measuring: the script's callbacks {', '.join(dropped)} (CALLBACKS_NOT_RUN)")
    ladder = study.ladder()
    if ladder:
        lines += ["", render_table(ladder), "", render_reasons(ladder)]
        design = render_design(study.measurement(), ladder)
        if design:
            lines += ["", design]
    if study.message:
        lines += ["", f"status: {study.status} — {study.message}"]
    if study.recommended is not None:
        best = next((e for e in ladder if e.get("name") == study.recommended_rung), None)
        confirmed = next((e for e in ladder if levers.confirms(e.get("rung"))), None) or best
        if best is not None and best.get("rung") != BASELINE:
            lines += ["", f"Recommended: {best.get('label')} — {_speed(confirmed or best)} the baseline's throughput "
                          f"per sample, accuracy within tolerance."]
        else:
            lines += ["", "Recommended: keep the baseline settings — no change was measurably faster "
                          "while keeping the validation metric."]
    if study.snippet:
        lines += ["", study.snippet.rstrip()]
        if study.patch is not None and study.patch.get("copy"):  # the command line's way to the patched file (the wizard has a button)
            lines.append(f"write the patched file elsewhere: tfturbo apply {study.path} --write PATH")
    serious = [f for f in study.findings() if f.get("severity") in ("warning", "error")]
    if serious:
        lines += ["", "Findings:"] + [format_finding(f) for f in serious]
    if study.report:
        lines += ["", f"Report: {study.report}"]
    lines.append(f"Study: {study.path}/study.yaml")
    return "\n".join(lines)

