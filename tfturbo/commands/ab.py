"""`tfturbo ab WORKLOAD --b SETTINGS [--a SETTINGS]`: one replicated, interleaved A/B trial.

A is the workload as written unless `--a` says otherwise (its own policy, XLA
and steps per call, read from its compile(); its batch size). The runs alternate AB, BA, … until the speed verdict is clear or
`--max-replicates` pairs are measured; then B's accuracy is compared with A's
on the same validation examples. B's full-length run comes first, so a
candidate that cannot run (in its script, in fit(), in validation) costs its
own seconds: it is a failed trial with its error, its fix and every finding of
both arms, and A runs only to tell a workload that rejects every
configuration (exit 2) from a candidate that cannot run (exit 1). Prints the
verdict (stdout), progress (stderr), or with `--json` the `ab` document. Exit codes: 0 the trial was
judged, 1 a run failed (the reference A, or the candidate B: then the trial is
"failed" with B's error and the fix to try, never a speed or accuracy verdict),
2 bad input.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, TypedDict

from .. import protocol
from ..findings import FindingDoc
from ..cli_args import WORKLOAD_HELP
from ..backend_client import BackendResult, log_path, run_backend
from ..console import format_finding
from ..errors import OutputDirError
from ..own_length import OwnLength, length_line
from ..run_summary import RunSummary
from ..runfiles import RUNS_DIR, VALIDATION_DIR, XLA_CACHE_DIR
from ..settings import DEFAULT_STEPS, RunSettings
from ..warm_start import warm_backend
from ..trials.execute import backend_executor, backend_pair_executor, fail_on_bad_input
from ..trials.spec import describe, keys, parse_settings
from ..trials.runs import PlannedPair, PlannedRun
from ..trials.trial import SEED_REPLICATES, Trial, run_trial
from ..trials.verdict import TrialVerdict, TrialVerdictDoc
from ..tune import levers
from ..tune.engine import audit_argv
from ..tune.options import AB, TuneOptions, add_options, values_from_args
from ..workload_kind import is_script

TRIAL_JSON = "trial.json"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("workload", metavar="WORKLOAD", help=WORKLOAD_HELP)
    parser.set_defaults(script_args=[])  # what follows `--`: the training script's own options, for every run
    parser.add_argument("--b", required=True, metavar="SETTINGS",
                        help=f"the candidate: key=value pairs joined by commas ({', '.join(keys())}), "
                             "e.g. policy=mixed_bfloat16,jit=on")
    parser.add_argument("--a", default="", metavar="SETTINGS",
                        help="the reference (default: the workload as written: its own policy, XLA and steps per "
                             "call, its batch size)")
    add_options(parser, AB)  # the study options `ab` takes (tfturbo/tune/options.py), as `tune` does
    parser.add_argument("--out", metavar="DIR", default=None,
                        help="keep the runs and trial.json here (default: a temporary folder, removed afterwards)")
    parser.add_argument("--json", action="store_true", help="print the ab document as JSON")


def run_steps(args: argparse.Namespace, runner: Callable[..., BackendResult] = run_backend) -> tuple[int, str]:
    """The steps of each A run, and the line that says where they came from ("" when --steps gave them or the
    workload is a builtin): a training script without --steps trains its own length, as `tune` does, which its
    audit reads (`OwnLength`); where the audit cannot read one, DEFAULT_STEPS, said so."""
    if args.steps is not None or not is_script(args.workload):
        return args.steps or DEFAULT_STEPS, ""
    fit_call = parse_settings(args.a, RunSettings(args.workload), "--a").fit_call  # the fit() A measures
    result = runner("audit", audit_argv(args.workload, script_args=list(args.script_args), fit_call=fit_call),
                    stderr_path=log_path())
    fail_on_bad_input(result.error, "the audit")
    own = OwnLength.of(result.document)
    steps = own.run_steps if own is not None else DEFAULT_STEPS
    return steps, length_line(own, steps)


def build_trial(args: argparse.Namespace) -> Trial:
    opts = TuneOptions(args.workload, Path(args.out or "."), **values_from_args(args, AB))
    base = RunSettings(args.workload, steps=opts.steps, seed=opts.seed, val_examples=opts.val_examples,
                       script_args=list(args.script_args)).as_written()  # A: the script as written
    a = parse_settings(args.a, base, "--a")
    b = parse_settings(args.b, a, "--b")
    return Trial(a, b, opts.speed_rule(), opts.tolerance, label_a=a.label(), label_b=b.label(), label_reference="A",
                 not_in_effect=levers.effect_check(a, b), seed_replicates=SEED_REPLICATES)


def _as_run(trial: Trial, arm: str, settings: RunSettings) -> RunSettings:
    """An arm's settings with what it left as the script wrote it (policy, XLA, steps per call) as its runs
    trained it (their summary's settings), else as any run read the script (its `as_written`: A never ran when
    B failed first)."""
    ran = next((r.summary.settings.to_dict() for r in trial.runs
                if r.planned.arm == arm and r.summary and r.summary.settings), None) or \
        next((r.summary.as_written for r in trial.runs if r.summary and r.summary.as_written), None)
    return settings.resolved(ran)


class AbRun(TypedDict):
    name: str
    arm: str
    replicate: int
    status: str | None
    samples_per_s: float | None


class AbDocument(TrialVerdictDoc, total=False):
    """The `ab --json` document (and trial.json with --out): the verdict's keys, both sides and every run."""

    a: dict[str, Any]  # `spec.describe`: the SETTINGS keys, steps and seed
    b: dict[str, Any]
    runs: list[AbRun]


def document(trial: Trial, verdict: TrialVerdict, runs_kept: bool = False) -> AbDocument:
    """The `ab --json` document: the verdict, and every finding of both arms' runs after the verdict's own, each
    once (a failed B's included), naming its run only where the runs are kept (`--out`)."""
    doc: AbDocument = {"a": describe(_as_run(trial, "a", trial.a)), "b": describe(_as_run(trial, "b", trial.settings_of("b"))),
           **verdict.to_dict(),
           "runs": [{"name": r.planned.name, "arm": r.planned.arm, "replicate": r.planned.replicate,
                     "status": r.status, "samples_per_s": r.summary.samples_per_s if r.summary else None} for r in trial.runs]}
    findings, seen = list(verdict.findings), {_key(f) for f in verdict.findings}
    for run in trial.runs:
        for f in (run.summary.findings if run.summary else None) or []:
            if isinstance(f, dict) and _key(f) not in seen:
                seen.add(_key(f))
                findings.append({**f, "arm": run.planned.arm, **({"run": run.planned.name} if runs_kept else {})})
    doc["findings"] = findings
    return doc


def _key(finding: FindingDoc) -> tuple[object, ...]:
    return finding.get("code"), finding.get("where"), finding.get("message")


def rejected_before_a(trial: Trial) -> bool:
    """B's run was rejected by the workload (bad input) before any run of A completed: only A's run can tell a
    broken workload from a candidate that cannot run."""
    failed_b = next((r for r in trial.runs if r.planned.arm == "b" and r.status != "completed"), None)
    kind = ((failed_b.summary.error if failed_b.summary else None) or {}).get("kind") if failed_b is not None else None
    return kind == protocol.BAD_INPUT and not any(r.planned.arm == "a" and r.status == "completed"
                                                  for r in trial.runs)


def _settings_text(settings: dict) -> str:
    """A side's settings as SETTINGS (what `--a`/`--b` take): `policy=float32 jit=off batch=32 ...`."""
    words = {True: "on", False: "off", None: "default"}
    return "  ".join(f"{k}={words.get(v, v) if isinstance(v, (bool, type(None))) else v}"
                     for k, v in settings.items() if k in keys())


def render(doc: AbDocument) -> str:
    """The text output: the two sides, then the verdict lines as `tune` prints a rung, then the findings."""
    v = TrialVerdict.from_dict(doc)
    lines = [f"A  {_settings_text(doc['a'])}", f"B  {_settings_text(doc['b'])}", ""]
    if v.failed:
        lines += [f"B {v.failure_text()}", "decision  not kept: the candidate cannot train as configured"]
    else:
        lines += [f"speed     B/A {v.speed.text()} — {v.speed.verdict}",
                  f"accuracy  {v.accuracy.text()} — {v.accuracy.verdict}",
                  *(f"  output  {line}" for line in v.accuracy.output_lines()),
                  "decision  " + ("KEPT: " if v.kept else "not kept: ") + v.reason, "", v.design]
        lines += [f"rule      {v.rule_text()}"] if v.rule_text() else []
    serious = [f for f in v.findings if f.get("severity") in ("warning", "error")]
    if serious:
        lines += ["", "Findings:"] + [format_finding(f) for f in serious]
    return "\n".join(lines)


def main(args: argparse.Namespace) -> int:
    with warm_backend(log_path()):  # every run of the trial forked from one TensorFlow import
        return _measure(args)


def _measure(args: argparse.Namespace) -> int:
    args.steps, length = run_steps(args)
    if length:
        print(length, file=sys.stderr)
    trial = build_trial(args)
    keep_runs = args.out is not None
    out = Path(args.out) if keep_runs else Path(tempfile.mkdtemp(prefix="tfturbo-ab-"))
    if keep_runs and (out / RUNS_DIR).exists():
        raise OutputDirError(f"{out} already holds runs", "choose a new --out directory")
    try:
        (out / RUNS_DIR).mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputDirError(f"cannot write to {out} ({e.strerror or e})", "choose a writable --out directory") from e

    trial.save_model = keep_runs  # B's model only where its run is kept
    trial.a, trial.b = (s.with_(xla_cache=s.xla_cache or str(out / XLA_CACHE_DIR),
                                val_set=s.val_set or str(out / VALIDATION_DIR)) for s in (trial.a, trial.b))
    print(f"plan: {trial.plan().text()}", file=sys.stderr)

    def started(planned: PlannedRun, path: Path) -> None:
        what = "speed only, " if planned.settings.speed_only else ""
        print(f"[{planned.name}] {planned.settings.label()} — running {what}{planned.settings.steps} steps; "
              f"{trial.progress_text()}", file=sys.stderr)

    # B runs first (`Trial.gate_arms`): its rejection by the workload is B's failure, A's ends ab (exit 2)
    execute = backend_executor(out / RUNS_DIR, log_path=log_path(), on_start=started,
                               own_failure=lambda planned: planned.arm == "b")

    def finished(name: str, summary: RunSummary) -> None:
        rate = summary.samples_per_s
        print(f"[{name}] {summary.status}" + (f", {rate:,.0f} samples/s" if rate else ""), file=sys.stderr)

    def measured(planned: PlannedRun):
        summary, path = execute(planned)
        finished(planned.name, summary)
        return summary, path

    def pair_started(pair: PlannedPair, paths: list[Path]) -> None:
        print(f"[{pair.name}] {pair.first.settings.label()} and {pair.second.settings.label()} — {pair.text()}; "
              f"{trial.progress_text()}", file=sys.stderr)

    execute_pair = backend_pair_executor(out / RUNS_DIR, log_path=log_path(), on_start=pair_started)

    def measured_pair(pair: PlannedPair):
        summaries, paths = execute_pair(pair)
        for run, summary in zip(pair.runs, summaries):
            finished(run.name, summary)
        return summaries, paths

    try:
        verdict = run_trial(trial, measured, execute_pair=measured_pair)
        if verdict.failed and rejected_before_a(trial):  # A's run tells: the workload rejects A too (exit 2)?
            planned = trial.reference_run()
            trial.record(planned, *measured(planned))
            verdict = trial.verdict()
        doc = document(trial, verdict, runs_kept=keep_runs)
        if keep_runs:
            (out / TRIAL_JSON).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    finally:
        if not keep_runs:
            shutil.rmtree(out, ignore_errors=True)
    print(json.dumps(doc, indent=2) if args.json else render(doc))
    failed_reference = any(r.planned.arm == "a" and r.status != "completed" for r in trial.runs)
    return 1 if failed_reference or verdict.failed else 0
