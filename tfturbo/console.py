"""Human-readable terminal output for backend events and command documents.

`tfturbo run` in a terminal shows progress lines instead of raw events; each
document (`--json` off) is printed as a short table. No colours or cursor
tricks: the output must read well in CI logs and over ssh.
"""

from __future__ import annotations

import shlex
import sys
from typing import IO, Any, Callable

from .findings import FindingDoc, findings_in
from .input_probe import InputProbe
from . import protocol
from .as_written import as_written_text, callbacks_not_run
from .environment import Environment
from .run_summary import RunSummary
from .settings import RunSettings
from .verdicts import COMPUTE_NOISE, compute_slower_than_training, input_share_phrase
from .workload_kind import measured_fit_text


def fmt_ci(ci: Any, digits: int = 1, unit: str = "") -> str:
    try:
        lo, hi = ci
        return f"[{lo:.{digits}f}, {hi:.{digits}f}]{unit}"
    except (TypeError, ValueError):
        return "[n/a]"


def fmt_bytes(n: Any, decimals: int = 1) -> str:
    if not isinstance(n, (int, float)) or n <= 0:
        return "n/a"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.{decimals}f} {unit}"
        n /= 1024
    return f"{n:.{decimals}f} TiB"


def fmt_bytes_apart(a: Any, b: Any) -> tuple[str, str]:
    """Two sizes with enough decimals (up to 3) that they print differently when they differ ("1.1 GiB to
    1.1 GiB" read as no change beside "1% lower")."""
    for decimals in (1, 2, 3):
        shown = fmt_bytes(a, decimals), fmt_bytes(b, decimals)
        if shown[0] != shown[1] or a == b:
            return shown
    return shown


def format_finding(f: FindingDoc) -> str:
    where = f" ({f['where']})" if f.get("where") else ""
    lines = [f"[{str(f.get('severity', '')).upper()}] {f.get('code', '')}{where}: {f.get('message', '')}"]
    fix = str(f.get("fix") or "").strip()
    if fix:
        lines.append("    fix: " + fix.replace("\n", "\n         "))
    return "\n".join(lines)


class ProgressPrinter:
    """Prints a line per phase change, a progress line at most every few seconds, findings and errors."""

    def __init__(self, out: IO[str] | None = None, every_s: float = 2.0):
        self.out = out  # None: whatever sys.stderr is when a line is printed (it may be redirected later)
        self.every_s = every_s
        self._last_t = 0.0
        self._last_step: tuple[int, float, Any] | None = None

    def __call__(self, event: protocol.Event) -> None:
        t = float(event.get("t") or 0.0)
        if event["type"] == protocol.PHASE:
            self._print(f"· {event.get('phase')}" + (f": {event['detail']}" if event.get("detail") else ""))
        elif event["type"] == protocol.STEPS:
            steps = event.get("step") or []
            if steps:
                loss = (event.get("loss") or [None])[-1]
                self._last_step = (steps[-1], (event.get("step_ms") or [0])[-1], loss)
            if t - self._last_t >= self.every_s and self._last_step:
                self._last_t = t
                step, ms, loss = self._last_step
                loss_s = f"  loss {loss:.4f}" if isinstance(loss, (int, float)) else ""
                self._print(f"  step {step}  {ms:.1f} ms/step{loss_s}")
        elif event["type"] == protocol.VALIDATION:
            metrics = "  ".join(f"{k} {v:.4f}" for k, v in (event.get("metrics") or {}).items()
                                if isinstance(v, (int, float)))
            self._print(f"  validation @ step {event.get('step')}: {metrics}")
        elif event["type"] == protocol.FINDING:  # one line now; the final document prints it in full with its fix
            f = event.get("finding") or FindingDoc()
            self._print(f"  finding {f.get('code', '')}" + (f" ({f['where']})" if f.get("where") else ""))
        elif event["type"] == protocol.ERROR:
            fix = str(event.get("fix") or "")
            fix = fix if fix and fix not in str(event.get("message")) else ""  # an older backend's line ends with it
            if event.get("kind") == protocol.BAD_INPUT:  # what the user must change: one line, its fix once
                self._print(f"error: {event.get('message')}" + (f" — {fix}" if fix else ""))
            else:
                self._print(f"error: {event.get('message')}")
                if fix:
                    self._print(f"  fix: {fix}")

    def _print(self, line: str) -> None:
        print(line, file=self.out or sys.stderr, flush=True)


def render_run_summary(run: RunSummary) -> str:
    s = run.settings or RunSettings()
    step = run.step_ms or {}
    lines = [
        f"status        {run.status}",
        f"settings      {s.policy}{' + XLA' if s.jit_compile else ''}, batch {s.batch_size}, "
        + (f"{s.steps_per_execution} steps per call, " if s.calls > 1 else "")
        + f"{s.steps} steps, seed {s.seed}",
    ]
    written = as_written_text(run.as_written)
    if written:  # the script's own configuration: what the settings left unset took
        lines.append(f"as written    {written}")
        dropped = callbacks_not_run(run.as_written)
        if dropped:
            lines.append(f"not run       the script's callbacks {', '.join(dropped)} (CALLBACKS_NOT_RUN)")
    if s.script_args:
        lines.append(f"script opts   {shlex.join(str(a) for a in s.script_args)}")
    fit = measured_fit_text(run.workload)
    if fit:
        lines.append(f"measured      {fit}")
    if isinstance(step.get("median"), (int, float)):
        lines.append(f"step time     {step['median']:.2f} ms median, 95% CI {fmt_ci(step.get('ci95'), 2, ' ms')}")
    rate = run.samples_per_s
    if rate:
        batch = run.batch_size
        tp = run.throughput or {}
        interval = run.throughput_ci  # the one rule: from enough windows, never degenerate
        ci = f", 95% CI {fmt_ci(interval, 0)}" if interval else ""
        where = (f"median of {tp['windows']} device-drained windows, {tp['seconds']:.1f} s"
                 if tp.get("windows") else "median step")
        lines.append(f"throughput    {rate:,.0f} samples/s{ci} ({rate / batch:.2f} steps/s at batch {batch}; "
                     f"{where})")
    if run.warmup_s is not None:
        lines.append(f"warm-up       {run.warmup_s:.2f} s (compile/tracing, excluded)")
    lines.append(f"peak memory   {fmt_bytes(run.peak_memory_bytes)} ({run.memory_kind or 'n/a'})")
    if run.mfu is not None:
        lines.append(f"MFU           {run.mfu:.1%} of this device's measured {run.ceiling_dtype} matmul rate "
                     f"({run.flops_per_step or 0:.3g} FLOPs per step)"
                     + (f"; {run.mfu_note}" if run.mfu_note else ""))
    elif run.mfu_unknown:
        lines.append(f"MFU           not known: {run.mfu_unknown}")
    metrics = run.metrics or {}
    if metrics:
        lines.append("metrics       " + "  ".join(f"{k} {v:.4f}" for k, v in metrics.items()
                                                  if isinstance(v, (int, float))))
    for f in run.findings or []:
        lines.append(format_finding(f))
    return "\n".join(lines)


def render_findings(findings: list[FindingDoc]) -> str:
    if not findings:
        return "No findings."
    return "\n".join(format_finding(f) for f in findings)


def render_probe(doc: InputProbe) -> str:
    def rate(v: float | None) -> str:
        return f"{v:.1f}" if isinstance(v, (int, float)) else "n/a"

    lines = [
        f"verdict            {str(doc.verdict).replace('_', '-')}",
        f"input pipeline     {rate(doc.data_steps_per_s)} batches/s (no model)",
        f"training step      {rate(doc.compute_steps_per_s)} steps/s (data already in memory"
        + (f"; {COMPUTE_NOISE})" if compute_slower_than_training(doc) else ")"),
        f"real training      {rate(doc.train_steps_per_s)} steps/s",
    ]
    if isinstance(doc.input_fraction, (int, float)):
        band = f" ({doc.band} band, XProf's)" if doc.band else ""
        # a share the input does not explain is not "waiting for data"
        lines.append(f"input share        {input_share_phrase(doc)}{band}")
    if doc.findings:
        lines.append(render_findings(doc.findings))
    return "\n".join(lines)


def render_env(env: Environment) -> str:
    lines = [f"TensorFlow {env.tensorflow}, Keras {env.keras}"]
    for d in env.devices:
        extra = ", ".join(f"{k} {v}" for k, v in d.items() if k not in ("name", "type") and v not in (None, ""))
        lines.append(f"  {d.get('type', '?')}: {d.get('name', '?')}" + (f" ({extra})" if extra else ""))
    lines.append(f"recommended policy: {env.recommended_policy} — {env.reason or ''}")
    return "\n".join(lines)


RENDERERS: dict[str, Callable[[dict[str, Any]], str]] = {
    "run": lambda doc: render_run_summary(RunSummary.from_dict(doc)), "audit": lambda doc: render_findings(findings_in(doc.get("findings"))),
    "probe-input": lambda doc: render_probe(InputProbe.from_dict(doc)),
    "env": lambda doc: render_env(Environment.from_dict(doc, "the env document"))}
