"""Start-up: time from launching `tfturbo` to the first painted wizard window.

Each launch is a fresh process, `tfturbo gui` (the console script a user
runs), with `TFTURBO_EXIT_AFTER_FIRST_PAINT=1`: the window prints one JSON line
when its first paint has finished and quits (`tfturbo_gui/first_paint.py`).
The time is taken here, from just before the process is spawned to the
arrival of that line. The window reports whether TensorFlow or Keras got
imported (they must not). The display is Xvfb when `xvfb-run` is installed
and `--xvfb` is given, otherwise Qt's offscreen platform. One untimed launch
warms the file cache first. Target: median < 1.5 s.

    .venv/bin/python benchmarks/startup.py [--launches 5] [--xvfb]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _targets import print_targets  # benchmarks/ is the script's own directory

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 1.5
TIMEOUT_S = 60


def command() -> list[str]:
    script = Path(sys.executable).with_name("tfturbo")
    return [str(script), "gui"] if script.exists() else [sys.executable, "-m", "tfturbo.cli", "gui"]


def launch(argv: list[str], env: dict[str, str]) -> tuple[float, dict]:
    """(seconds to the first-paint line, that line's report)."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=ROOT)
    try:
        assert proc.stdout is not None
        for raw in proc.stdout:
            line = raw.decode(errors="replace").strip()
            if line.startswith("{") and '"first_paint"' in line:
                return time.perf_counter() - started, json.loads(line)
        raise RuntimeError(f"{' '.join(argv)} exited ({proc.wait()}) without painting a window")
    finally:
        try:
            proc.wait(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--launches", type=int, default=5)
    parser.add_argument("--xvfb", action="store_true", help="run under xvfb-run instead of the offscreen platform")
    args = parser.parse_args()
    argv = command()
    env = {**os.environ, "TFTURBO_EXIT_AFTER_FIRST_PAINT": "1"}
    if args.xvfb:
        if not shutil.which("xvfb-run"):
            print("xvfb-run is not installed (apt-get install xvfb); use the offscreen platform", file=sys.stderr)
            return 2
        argv = ["xvfb-run", "-a", *argv]
        env.pop("QT_QPA_PLATFORM", None)
        platform = "Xvfb"
    else:
        env["QT_QPA_PLATFORM"] = "offscreen"
        platform = "offscreen"
    with tempfile.TemporaryDirectory(prefix="tfturbo-startup-") as home:
        env["HOME"] = home  # a first start: no settings or studies of the user's
        launch(argv, env)  # untimed: warms the file cache
        results = [launch(argv, env) for _ in range(args.launches)]
    times = [t for t, _ in results]
    ages = [r["process_age_s"] for _, r in results if isinstance(r.get("process_age_s"), (int, float))]
    tf_seen = any(r.get("tensorflow_imported") or r.get("keras_imported") for _, r in results)
    median = statistics.median(times)
    print(f"\nStart-up: `{' '.join(argv)}` ({platform}) to the first painted window, "
          f"{args.launches} fresh launches after one untimed\n")
    rows = [
        ("launch -> first paint, median", f"{median:.3f} s", f"< {TARGET_S} s", median < TARGET_S),
        ("min .. max", f"{min(times):.3f} .. {max(times):.3f} s", "", None),
        ("each launch", ", ".join(f"{t:.2f}" for t in times) + " s", "", None),
        ("process age at first paint (median, /proc)", f"{statistics.median(ages):.2f} s" if ages else "n/a", "",
         None),
        ("TensorFlow or Keras imported by the GUI", "yes" if tf_seen else "no", "no", not tf_seen),
    ]
    print_targets(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
