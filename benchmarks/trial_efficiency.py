"""Where a `tfturbo tune` study's wall time goes: steady measurement versus everything else.

    python benchmarks/trial_efficiency.py run builtin:mlp --code /path/to/checkout --out DIR [--label after]
    python benchmarks/trial_efficiency.py interleave builtin:transformer --code before=CHECKOUT --code after=CHECKOUT \
        --out DIR [--rounds 2]
    python benchmarks/trial_efficiency.py analyze DIR [DIR ...]
    python benchmarks/trial_efficiency.py scripts --code before=CHECKOUT --code after=CHECKOUT --out DIR \
        [-- more tune options]

`scripts` (issue 40) runs `interleave` for one round on each of the keras-io-style training scripts in
benchmarks/scripts/ (an LSTM forecaster, a small text transformer, a CNN with augmentation; tiny synthetic
data, no downloads), alternating which code goes first from one script to the next, after timing each
script's own `python SCRIPT` run once (the table's "× plain").

`run` times `tfturbo tune WORKLOAD --out DIR/study --no-report` at default
settings with the tfturbo of `--code` (PYTHONPATH), sampling the machine's
load average while it runs, and writes DIR/bench.json; `analyze` reads one or
more such folders and prints one markdown table (benchmarks/RESULTS.md).

This machine's speed drifts by up to 2.7x over an hour with no load of its own
(benchmarks/RESULTS.md, Trial efficiency), so two studies run an hour apart cannot be compared. `interleave`
runs the codes in ABBA order (A B B A for two rounds: a linear drift cancels in
each code's total) and every study records a fixed numpy probe of the
machine's speed just before and after it (`probe_ms`) and the baseline's median
step; the table prints both, and a wall-time claim is made only between
neighbouring studies whose probes agree.

The breakdown comes from each run's events.jsonl (every event carries its
wall-clock time `t`) and summary.json:

- process start and imports: the backend's `hello` to its `building` phase,
  plus everything outside the runs' own spans — the interpreter start and
  TensorFlow's import before `hello` (a process forked from the study's warm
  server skips the import), the study's env/audit/probe commands and the
  tune process itself (study wall time less the runs' spans);
- build: `building` to `compiling` (workload, model, datasets);
- warm-up and compilation: `compiling` to the start of the first steady window;
- validation: each `validating` phase to the next phase;
- steady measurement: the seconds of the run's steady windows
  (summary.json's `throughput.seconds`: what verdicts are measured on);
- checkpoint and summary: `saving` to `done` (model save, FLOP count);
- profiler: each `profiling` phase to the next phase;
- other training: what is left of the run's span (non-steady windows after
  warm-up: the profiler's neighbours, an epoch's first step).

A paired replicate (`run-pair`: two run directories whose events share one
process's `hello`) is one span, from its `hello` to its last event: process
start to the first `building`; each arm's build; the preparing between them
and each arm's fit() start to its steady state (`warmup_s`, its own time)
as warm-up; each arm's steady windows; from the first `saving` to the end as
checkpoint and summary; the rest (the other arm's blocks are not counted
twice) as other training.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

PHASES = ("process start and imports", "build", "warm-up and compilation", "validation", "steady measurement",
          "checkpoint and summary", "profiler", "other training")


def machine_probe() -> float:
    """Milliseconds of a fixed float32 matrix product (the median of 30): how fast this machine is right now."""
    import numpy as np

    rng = np.random.default_rng(0)
    a, b = rng.random((384, 384), dtype=np.float32), rng.random((384, 384), dtype=np.float32)
    times = []
    for _ in range(30):
        started = time.perf_counter()
        for _ in range(10):
            a @ b
        times.append((time.perf_counter() - started) * 1000.0)
    return sorted(times)[len(times) // 2]


SCRIPTS = Path(__file__).resolve().parent / "scripts"


def plain_run_s(script: Path) -> float:
    """Seconds of the script's own `python SCRIPT` run (interpreter start and imports included)."""
    started = time.time()
    subprocess.run([sys.executable, str(script)], cwd=str(script.parent), stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=True)
    return time.time() - started


def run(workload: str, code: Path, out: Path, label: str, extra: list[str], plain_s: float | None = None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    probe_before = machine_probe()
    loads: list[float] = []
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(10.0):
            loads.append(os.getloadavg()[0])

    threading.Thread(target=sample, daemon=True).start()
    env = {**os.environ, "PYTHONPATH": str(code)}
    command = [sys.executable, "-c", "import sys; from tfturbo.cli import main; sys.exit(main())", "tune", workload,
               "--out", str(out / "study"), "--no-report", *extra]
    started, load_start = time.time(), os.getloadavg()[0]
    with open(out / "tune.stderr", "w") as err, open(out / "tune.stdout", "w") as std:
        code_ = subprocess.call(command, cwd=str(code), env=env, stdout=std, stderr=err)
    wall = time.time() - started
    stop.set()
    doc = {"workload": workload, "label": label, "code": str(code), "exit_code": code_, "wall_s": wall,
           "load_start": load_start, "load_mean": sum(loads) / len(loads) if loads else load_start,
           "load_max": max(loads, default=load_start), "cpus": os.cpu_count(), "extra": extra,
           "probe_ms": [probe_before, machine_probe()], "plain_s": plain_s}
    (out / "bench.json").write_text(json.dumps(doc, indent=2) + "\n")


def run_breakdown(run_dir: Path) -> tuple[dict[str, float], float] | None:
    """(seconds per phase, the run's span from hello to done) of one run directory."""
    events = _events(run_dir)
    times = [e["t"] for e in events if isinstance(e.get("t"), (int, float))]
    if not times:  # no readable events either
        return None
    summary_path = run_dir / "summary.json"
    summary = json.loads(summary_path.read_text()) if summary_path.exists() else {}
    out = dict.fromkeys(PHASES, 0.0)
    phases = [(e["t"], e.get("phase")) for e in events if e.get("type") == "phase"]
    hello = next((e["t"] for e in events if e.get("type") == "hello"), times[0])
    end = next((e["t"] for e in events if e.get("type") == "done"), times[-1])
    at = {name: t for t, name in reversed(phases)}  # the first time of each phase
    building, compiling = at.get("building", hello), at.get("compiling")
    out["process start and imports"] = building - hello
    if compiling is not None:
        out["build"] = compiling - building
    steady = float((summary.get("throughput") or {}).get("seconds") or 0.0)
    out["steady measurement"] = steady
    first_steady = summary.get("first_steady_step")
    steady_start = None
    for e in events:
        if e.get("type") == "steps" and isinstance(e.get("window"), list) and first_steady is not None \
                and e["window"][0] >= first_steady:
            steady_start = e["t"] - float(e["window"][2])
            break
    aside = []  # (start, end) of validation and profiler phases
    for (t, name), (t_next, _) in zip(phases, phases[1:] + [(end, None)]):
        if name == "validating":
            out["validation"] += t_next - t
            aside.append((t, t_next))
        elif name == "profiling":
            out["profiler"] += t_next - t
            aside.append((t, t_next))
    if compiling is not None:  # to the first steady window, less the validation and profiling inside
        until = steady_start if steady_start is not None else at.get("saving", end)
        inside = sum(max(0.0, min(b, until) - max(a, compiling)) for a, b in aside)
        out["warm-up and compilation"] = max(0.0, until - compiling - inside)
    if "saving" in at:
        out["checkpoint and summary"] = end - at["saving"]
    span = end - hello
    out["other training"] = max(0.0, span - sum(v for k, v in out.items() if k != "other training"))
    return out, span


def _events(run_dir: Path) -> list[dict]:
    """The run's events ([]: no readable events.jsonl)."""
    try:
        return [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines() if line.strip()]
    except (OSError, json.JSONDecodeError):
        return []


def pair_breakdown(run_dirs: list[Path]) -> tuple[dict[str, float], float] | None:
    """(seconds per phase, the process's span) of a run-pair process's two run directories (module docstring)."""
    arms = []
    for run_dir in run_dirs:
        events = _events(run_dir)
        summary_path = run_dir / "summary.json"
        summary = json.loads(summary_path.read_text()) if summary_path.exists() else {}
        at: dict[str, float] = {}
        for e in events:
            if e.get("type") == "phase":
                at.setdefault(e.get("phase"), e["t"])
        arms.append((events, summary, at))
    times = [e["t"] for events, _, _ in arms for e in events if isinstance(e.get("t"), (int, float))]
    hello = next((e["t"] for events, _, _ in arms for e in events if e.get("type") == "hello"), None)
    if not times or hello is None:
        return None
    out = dict.fromkeys(PHASES, 0.0)
    end = max(times)
    building = min(at.get("building", hello) for _, _, at in arms)
    out["process start and imports"] = building - hello
    for _, summary, at in arms:
        if "building" in at and "compiling" in at:
            out["build"] += at["compiling"] - at["building"]
        out["warm-up and compilation"] += max(0.0, float(summary.get("warmup_s") or 0.0))
        out["steady measurement"] += float((summary.get("throughput") or {}).get("seconds") or 0.0)
    starts = sorted(at["building"] for _, _, at in arms if "building" in at)
    compiled = sorted(at["compiling"] for _, _, at in arms if "compiling" in at)
    if len(starts) == 2 and compiled:  # the first arm's re-compile and checks, before the second's build
        out["warm-up and compilation"] += max(0.0, starts[1] - compiled[0])
    saving = [at["saving"] for _, _, at in arms if "saving" in at]
    if saving:
        out["checkpoint and summary"] = end - min(saving)
    span = end - hello
    out["other training"] = max(0.0, span - sum(v for k, v in out.items() if k != "other training"))
    return out, span


def processes(runs: list[Path]) -> list[list[Path]]:
    """The run directories grouped by the process that wrote them (a run-pair's two share its `hello`)."""
    groups: dict[tuple, list[Path]] = {}
    for run_dir in runs:
        hello = next((e for e in _events(run_dir) if e.get("type") == "hello"), None)
        key = (hello.get("pid"), hello.get("t")) if hello else (str(run_dir),)
        groups.setdefault(key, []).append(run_dir)
    return list(groups.values())


def analyze(folder: Path) -> dict:
    bench = json.loads((folder / "bench.json").read_text())
    runs = sorted(p for p in (folder / "study" / "runs").iterdir() if p.is_dir())
    totals = dict.fromkeys(PHASES, 0.0)
    spans = 0.0
    counted = 0
    for group in processes(runs):
        found = pair_breakdown(group) if len(group) == 2 else run_breakdown(group[0])
        if found is None:
            continue
        phases, span = found
        counted += len(group)
        spans += span
        for k, v in phases.items():
            totals[k] += v
    wall = float(bench["wall_s"])
    totals["process start and imports"] += max(0.0, wall - spans)
    return {**bench, "runs": counted, "phases": totals, "steady_share": totals["steady measurement"] / wall,
            "baseline_step_ms": _baseline_step_ms(folder / "study" / "runs")}


def _baseline_step_ms(runs: Path) -> float | None:
    """The baseline run's median step (ms): the workload's own measure of the machine's speed in that study."""
    try:
        return float(json.loads((runs / "01-baseline" / "summary.json").read_text())["step_ms"]["median"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def table(results: list[dict]) -> str:
    head = ["workload", "code", "wall time", "× plain", "runs", "steady share", *PHASES,
            "machine load (1-min avg, mean/max)",
            "machine probe before/after", "baseline median step"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in results:
        wall = r["wall_s"]
        note = "" if r.get("exit_code") == 0 else f" (did not finish: {r.get('note') or 'exit ' + str(r.get('exit_code'))})"
        plain = r.get("plain_s")
        cells = [Path(r["workload"]).name, r["label"], f"{wall:.0f} s{note}",
                 f"{wall / plain:.0f}× (of {plain:.0f} s)" if plain else "", str(r["runs"]),
                 f"{r['steady_share']:.1%}"]
        cells += [f"{r['phases'][p]:.0f} s ({r['phases'][p] / wall:.0%})" for p in PHASES]
        cells.append(f"{r['load_mean']:.1f} / {r['load_max']:.1f} on {r['cpus']} cores")
        probe = r.get("probe_ms")
        cells.append(f"{probe[0]:.1f} / {probe[1]:.1f} ms" if probe else "not recorded")
        step = r.get("baseline_step_ms")
        cells.append(f"{step:.1f} ms" if step is not None else "none")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("workload")
    r.add_argument("--code", type=Path, default=Path(__file__).resolve().parents[1])
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--label", default="after")
    r.add_argument("extra", nargs="*", help="more `tune` options (after --)")
    i = sub.add_parser("interleave")
    i.add_argument("workload")
    i.add_argument("--code", action="append", required=True, metavar="LABEL=CHECKOUT",
                   help="a code to time (give two or more)")
    i.add_argument("--out", type=Path, required=True)
    i.add_argument("--rounds", type=int, default=2, help="rounds; even rounds run the codes in reverse order")
    i.add_argument("extra", nargs="*", help="more `tune` options (after --)")
    sc = sub.add_parser("scripts")
    sc.add_argument("--code", action="append", required=True, metavar="LABEL=CHECKOUT")
    sc.add_argument("--out", type=Path, required=True)
    sc.add_argument("--only", action="append", help="script names (default: every one in benchmarks/scripts)")
    sc.add_argument("extra", nargs="*", help="more `tune` options (after --)")
    a = sub.add_parser("analyze")
    a.add_argument("folders", type=Path, nargs="+")
    args = parser.parse_args()
    if args.command == "run":
        run(args.workload, args.code, args.out, args.label, args.extra)
        print(table([analyze(args.out)]))
    elif args.command == "interleave":
        codes = [tuple(spec.split("=", 1)) for spec in args.code]
        folders = []
        for round_ in range(args.rounds):
            for label, checkout in (codes if round_ % 2 == 0 else codes[::-1]):
                folder = args.out / f"{round_ + 1}-{label}"
                run(args.workload, Path(checkout), folder, label, args.extra)
                folders.append(folder)
                print(table([analyze(folder)]), flush=True)
        print(table([analyze(f) for f in folders]))
    elif args.command == "scripts":
        codes = [tuple(spec.split("=", 1)) for spec in args.code]
        folders = []
        scripts = sorted(SCRIPTS.glob("*.py"))
        scripts = [p for p in scripts if not args.only or p.stem in args.only]
        for k, script in enumerate(scripts):
            plain = plain_run_s(script)
            for label, checkout in (codes if k % 2 == 0 else codes[::-1]):
                folder = args.out / f"{script.stem}-{label}"
                run(str(script), Path(checkout), folder, label, args.extra, plain)
                folders.append(folder)
                print(table([analyze(folder)]), flush=True)
        print(table([analyze(f) for f in folders]))
    else:
        print(table([analyze(f) for f in args.folders]))


if __name__ == "__main__":
    main()
