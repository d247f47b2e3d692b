"""Instrumentation overhead: plain `model.fit(verbose=0)` against tfturbo's instrumented run.

All arms run in this one TensorFlow process on the same compiled model, the
same datasets and the same number of steps (and the same validation points):

- plain: `model.fit(train.repeat(), epochs, steps_per_epoch, validation_data, verbose=0)`,
  the fair baseline (docs/MEASUREMENT.md, "Steady state");
- tfturbo: `trainer_backend.commands.run.train()` — the backend's own run path
  (Instrument callback, RunMonitor, live detectors, events to events.jsonl and
  a stdout-like sink, TensorBoard scalars), profiler window off. Its fit() wall
  time is the `wall_s` of the summary it writes; run.yaml and the checkpoint
  are written outside that time, as in a real run;
- quiet (for the record): plain fit() through the backend's `QuietCallbackList`
  with no callback in it. tfturbo / quiet is the cost of the Instrument and
  the monitor alone, without the per-step log conversion that plain fit()
  does and tfturbo avoids.

One untimed round of each arm traces the functions first. Then rounds run
every arm once, interleaved, and the order rotates from round to round, so
slow drift of a shared machine favours no arm. Each round gives a ratio of
throughputs (steps/s); the table shows the median ratio over the rounds, its
bootstrap 95% interval and its range. Target: tfturbo / plain >= 0.99.

    .venv/bin/python benchmarks/instrumentation_overhead.py [--rounds 12] [--models mlp,transformer]
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from tfturbo import protocol
from tfturbo.settings import RunSettings
from tfturbo.stats import median_ci

# steps per arm: each arm of a pair trains for a few seconds on a 2-core CPU
STEPS = {"mlp": 6000, "cnn": 300, "transformer": 500}
TARGET = 0.99


def prepare(name: str, steps: int):
    from trainer_backend.commands import run

    settings = RunSettings(workload=f"builtin:{name}", steps=steps, profile=(0, 0), val_steps=5)
    job = run.prepare(settings, protocol.EventWriter())
    return job


def plain_fit(job) -> tuple[int, float]:
    """(steps, seconds) of the user's own fit() with the same steps and validation points."""
    s = job.settings
    val_every = min(s.effective_val_every(), s.steps)
    epochs = math.ceil(s.steps / val_every)
    val = job.val_ds.take(s.val_steps) if job.val_ds is not None else None
    started = time.perf_counter()
    job.model.fit(job.train_ds.repeat(), epochs=epochs, steps_per_epoch=val_every, validation_data=val, verbose=0)
    return epochs * val_every, time.perf_counter() - started


def instrumented_fit(job, workdir: Path, index: int) -> tuple[int, float]:
    """(steps, seconds) of the backend's run path, as `python -m trainer_backend run` trains."""
    from tfturbo import runfiles
    from trainer_backend.commands import run

    run_dir = runfiles.prepare_run_dir(workdir / f"run-{index:03d}")
    with open(os.devnull, "w", encoding="utf-8") as stdout_like:
        status, _code = run.train(job, run_dir, protocol.EventWriter(run_dir.name, [stdout_like]))
    summary = runfiles.load_run(run_dir).summary or {}
    if status != protocol.RunStatus.COMPLETED:
        raise RuntimeError(f"instrumented run ended as {status}: {summary.get('error')}")
    return int(summary["steps_completed"]), float(summary["wall_s"])


def quiet_fit(job) -> tuple[int, float]:
    """(steps, seconds) of fit() with the backend's QuietCallbackList holding no callback."""
    from trainer_backend.instrument import QuietCallbackList

    s = job.settings
    val_every = min(s.effective_val_every(), s.steps)
    epochs = math.ceil(s.steps / val_every)
    callbacks = QuietCallbackList([], add_history=True, model=job.model, verbose=0, epochs=epochs, steps=val_every)
    val = job.val_ds.take(s.val_steps) if job.val_ds is not None else None
    started = time.perf_counter()
    job.model.fit(job.train_ds.repeat(), epochs=epochs, steps_per_epoch=val_every, validation_data=val,
                  callbacks=callbacks, verbose=0)
    return epochs * val_every, time.perf_counter() - started


ARMS = ("plain", "tfturbo", "quiet")


def measure(name: str, rounds: int, workdir: Path) -> dict:
    steps = STEPS[name]
    job = prepare(name, steps)
    fits = {"plain": plain_fit, "quiet": quiet_fit,
            "tfturbo": lambda j: instrumented_fit(j, workdir, len(list(workdir.glob("run-*"))))}
    workdir.mkdir(parents=True, exist_ok=True)
    for arm in ARMS:  # trace train/test functions once; no timed arm pays for it
        fits[arm](job)
    sps: dict[str, list[float]] = {arm: [] for arm in ARMS}
    for i in range(rounds):
        order = ARMS[i % 3:] + ARMS[:i % 3]
        if i // 3 % 2:
            order = order[::-1]
        for arm in order:
            n, seconds = fits[arm](job)
            sps[arm].append(n / seconds)
        print(f"  {name} round {i + 1}/{rounds}: " + ", ".join(f"{arm} {sps[arm][-1]:.1f}" for arm in ARMS)
              + " steps/s", file=sys.stderr)
    row = {"model": name, "steps": steps, "rounds": rounds, **{arm: statistics.median(sps[arm]) for arm in ARMS}}
    for key, num, den in (("vs_plain", "tfturbo", "plain"), ("vs_quiet", "tfturbo", "quiet")):
        ratios = [a / b for a, b in zip(sps[num], sps[den])]
        median, ci = median_ci(ratios)
        row[key] = {"median": median, "ci": ci, "lo": min(ratios), "hi": max(ratios)}
    return row


def _ratio(r: dict) -> str:
    return f"{r['median']:.4f} [{r['ci'][0]:.4f}, {r['ci'][1]:.4f}] {r['lo']:.3f}..{r['hi']:.3f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--models", default="mlp,transformer", help=f"comma-separated, from {', '.join(STEPS)}")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="tfturbo-overhead-") as tmp:
        for name in args.models.split(","):
            rows.append(measure(name.strip(), args.rounds, Path(tmp) / name))
    print(f"\nInstrumentation overhead: throughput ratios, median of {args.rounds} interleaved rounds "
          f"[bootstrap 95% CI] min..max\n")
    header = (f"{'model':<12} {'steps':>5} {'plain':>8} {'quiet':>8} {'tfturbo':>8}  "
              f"{'tfturbo/plain (target >= 0.99)':<38} {'tfturbo/quiet':<33}")
    print(header)
    print("-" * len(header))
    for r in rows:
        verdict = "met" if r["vs_plain"]["median"] >= TARGET else "MISSED"
        print(f"{r['model']:<12} {r['steps']:>5} {r['plain']:>8.1f} {r['quiet']:>8.1f} {r['tfturbo']:>8.1f}  "
              f"{_ratio(r['vs_plain']) + ' ' + verdict:<38} {_ratio(r['vs_quiet']):<33}")
    print("\nplain/quiet/tfturbo columns: median steps/s. quiet = fit() without the per-step log conversion "
          "and without tfturbo's callback.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
