"""Check tfturbo's accelerator rules on the real device: one script for a GPU machine with TensorFlow, under 10 minutes.

    PYTHONPATH=. python benchmarks/accelerator_check.py [--steps 200] [--keep DIR]

Each rule of docs/MEASUREMENT.md "What differs on an accelerator" was written from Keras', TensorFlow's and
xprof's sources and tested on a simulated device (tests/accelerator/); this runs the claims where they live:
Keras' jit_compile="auto" on this device, the TF32 state, the policy, the memory budget, the 16-bit share of a
known mixed_bfloat16 model (with and without XLA), its MFU, cuDNN RNNs and XLA, --strategy mirrored --jit
refused in one line, the step-time clock, local workers' GPU slices, and scaling over 2+ GPUs. Every row says
what it saw, what the rule expects, and "ok", "WRONG", or "not checked: why" (on a CPU-only machine most rows
are not checked; what the CPU can check it does). Copy the table into benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# builtin:mlp under mixed_bfloat16: its two hidden layers are bfloat16, its 4-wide head float32. By FLOPs the share
# is ~97%; by time (what the profile measures) a tiny op's overhead weighs as much as its math: 76-91% in two runs
# on this CPU. The check is the finding's own line: at least half, so no MATMUL_NOT_16BIT.
BF16_SHARE_MIN = 0.5


def tfturbo(*args: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """`tfturbo ARGS` from this checkout, as a user runs it."""
    return subprocess.run([sys.executable, "-m", "tfturbo.cli", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})


class Table:
    def __init__(self) -> None:
        self.rows: list[tuple[str, str, str, str]] = []
        self.cpu_only = False  # no accelerator: an "ok" is the CPU side of the rule, the GPU side is not checked

    def add(self, check: str, seen: str, expected: str, verdict: bool | str) -> None:
        ok = "ok on the CPU (not checked: no GPU)" if self.cpu_only else "ok"
        result = verdict if isinstance(verdict, str) else ok if verdict else "WRONG"
        self.rows.append((check, seen, expected, result))
        print(f"[{result}] {check}: {seen}", file=sys.stderr)

    def print(self) -> None:
        head = ("check", "seen", "expected", "result")
        widths = [max(len(r[i]) for r in [head, *self.rows]) for i in range(4)]
        line = lambda r: "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |"  # noqa: E731
        print(line(head))
        print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
        for r in self.rows:
            print(line(r))


def keras_auto_jit(kind: str | None) -> tuple[str, str, bool | str]:
    """What Keras' default compile() resolves jit_compile="auto" to here (a GPU: True when every layer supports
    XLA; a CPU: False), and a cuDNN LSTM's supports_jit (False once a GPU is listed)."""
    import keras

    dense = keras.Sequential([keras.Input((8,)), keras.layers.Dense(4)])
    dense.compile(optimizer="adam", loss="mse")
    lstm = keras.layers.LSTM(4)
    seen = f"Dense model jit_compile={dense.jit_compile}; LSTM supports_jit={lstm.supports_jit}"
    if kind == "GPU":
        return seen, "True; False (cuDNN)", dense.jit_compile is True and lstm.supports_jit is False
    if kind is None:
        return seen, "False; True (CPU)", dense.jit_compile is False and lstm.supports_jit is True
    return seen, "TPU: not decided by Keras' auto rule", "not checked: a TPU"


def run(out: Path, *args: str, env: dict | None = None) -> tuple[int, dict, dict, str]:
    """(exit code, summary.json, profile.json, stderr) of one `tfturbo run`."""
    proc = tfturbo("run", "builtin:mlp", "--out", str(out), *args, env=env)
    read = lambda name: json.loads((out / name).read_text()) if (out / name).is_file() else {}  # noqa: E731
    return proc.returncode, read("summary.json"), read("profile.json"), proc.stderr


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200, help="steps of each measured run (default 200)")
    parser.add_argument("--keep", metavar="DIR", help="keep the runs here (default: a temporary folder, deleted)")
    args = parser.parse_args()
    started = time.monotonic()
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="tfturbo-accel-"))
    folder.mkdir(parents=True, exist_ok=True)
    table = Table()
    try:
        env_proc = tfturbo("env", "--json")
        if env_proc.returncode != 0:
            print(env_proc.stderr[-2000:], file=sys.stderr)
            return 1
        env = json.loads(env_proc.stdout)
        kind = env.get("accelerator")
        gpus = sum(1 for d in env["devices"] if d.get("type") == "GPU")
        print(f"device: {env['device']}; TensorFlow {env['tensorflow']}, Keras {env['keras']}", file=sys.stderr)
        no_gpu = "not checked: no GPU"
        table.cpu_only = kind is None

        table.add("Keras jit_compile='auto' (as written) and cuDNN LSTM", *keras_auto_jit(kind))

        tf32 = env.get("tf32")
        cc = next((d.get("compute_capability") for d in env["devices"] if d.get("type") == "GPU"), None)
        if kind == "GPU":
            ampere = cc is not None and float(cc) >= 8.0
            table.add("TF32 recorded", f"tf32={tf32}, compute capability {cc}, ceiling labels "
                      f"{env.get('ceiling_labels')}", "True/False on 8.0+ (float32 labelled TF32 when on), None below",
                      (tf32 is not None) == ampere and (not tf32 or env["ceiling_labels"].get("float32") ==
                                                        "float32 (TF32)"))
        else:
            table.add("TF32 recorded", f"tf32={tf32}", "None (no TF32 here)", tf32 is None if kind is None else no_gpu)

        expected = {"TPU": "mixed_bfloat16"}.get(kind) or (
            "mixed_bfloat16" if kind == "GPU" and cc and float(cc) >= 8.0 else "mixed_float16" if kind == "GPU"
            else None)
        table.add("policy", f"{env['recommended_policy']} ({env['reason'][:60]}…)", expected or "the CPU's rule",
                  env["recommended_policy"] == expected if expected else "not checked: no GPU or TPU (CPU rule)")

        memory = env.get("memory") or {}
        total = next((d.get("memory_total_bytes") for d in env["devices"] if d.get("type") == "GPU"), None)
        budget = memory.get("available_bytes")
        seen = f"{memory.get('kind')}: {budget / 2 ** 30:.1f} GiB ({memory.get('source')})" if budget else \
            f"{memory.get('kind')}: none ({memory.get('source')})"
        table.add("memory budget", seen, "the GPU's total (NVML or nvidia-smi)" if kind == "GPU" else "host memory",
                  bool(budget) and budget == total if kind == "GPU" else no_gpu)

        window = f"{args.steps // 3}:{args.steps // 3 + 20}"
        code, plain, plain_profile, err = run(folder / "bf16", "--policy", "mixed_bfloat16", "--steps",
                                              str(args.steps), "--profile", window)
        sixteen = (plain_profile.get("sixteen_bit") or {})
        share = sixteen.get("share") if sixteen.get("available") else None
        seen = (f"{share:.0%} ({sixteen.get('source', '')[:50]}…)" if share is not None
                else f"not available: {sixteen.get('reason') or err[-200:]}")
        codes = [f.get("code") for f in plain.get("findings") or []]
        table.add("16-bit share, builtin:mlp mixed_bfloat16, no XLA", seen,
                  f">= {BF16_SHARE_MIN:.0%}, no MATMUL_NOT_16BIT",
                  share is not None and share >= BF16_SHARE_MIN and "MATMUL_NOT_16BIT" not in codes)
        mfu = plain.get("mfu")
        table.add("MFU below 100%", f"{mfu:.1%} of {plain.get('ceiling_dtype')}" if mfu is not None else
                  f"none ({plain.get('mfu_note') or 'not measured'})", "0 < MFU <= 100%, per device",
                  mfu is not None and 0 < mfu <= 1)
        clock = (plain.get("step_ms") or {}).get("clock")
        table.add("step-time clock", str(clock), "drained windows" if kind else "host",
                  clock == ("drained windows" if kind else "host"))

        if kind == "GPU":
            code, xla, xla_profile, err = run(folder / "bf16-xla", "--policy", "mixed_bfloat16", "--jit", "--steps",
                                              str(args.steps), "--profile", window)
            sixteen = (xla_profile.get("sixteen_bit") or {})
            share = sixteen.get("share") if sixteen.get("available") else None
            codes = [f.get("code") for f in xla.get("findings") or []]
            table.add("16-bit share under XLA (HLO operand types)",
                      f"{share:.0%}" if share is not None else f"not available: {sixteen.get('reason')}",
                      f">= {BF16_SHARE_MIN:.0%}, no MATMUL_NOT_16BIT",
                      share is not None and share >= BF16_SHARE_MIN and "MATMUL_NOT_16BIT" not in codes)
        else:
            table.add("16-bit share under XLA (HLO operand types)", "—", "a GPU's HLO keeps bf16 dots",
                      no_gpu + " (a CPU's XLA computes bf16 dots in float32; the share says so)")

        # two replicas: two GPUs, else two logical CPUs with the GPU hidden (one GPU is one replica: jit allowed)
        logical = {} if gpus >= 2 else {"TFTURBO_LOGICAL_CPUS": "2", "CUDA_VISIBLE_DEVICES": ""}
        code, _summary, _profile, err = run(folder / "mirrored-jit", "--strategy", "mirrored", "--jit", "--steps",
                                            "20", env=logical)
        last = [line for line in err.splitlines() if line.strip()][-2:] if err else []
        refused = code == 2 and any("--jit with --strategy mirrored" in line for line in last)
        where = "2 GPUs" if gpus >= 2 else "2 logical CPUs (no 2 GPUs)"
        table.add(f"mirrored + XLA refused cleanly ({where})", f"exit {code}: {last[-1][:90] if last else ''}",
                  "exit 2, one line naming keras-team/keras#19005", refused)

        if gpus >= 2:
            out = folder / "scaling"
            proc = tfturbo("scaling", "builtin:mlp", "--replicas", "1,2", "--steps", str(args.steps),
                           "--min-replicates", "2", "--max-replicates", "2", "--out", str(out), "--json", timeout=420)
            doc = json.loads(proc.stdout) if proc.returncode == 0 else {}
            two = next((p for p in doc.get("points", []) if p.get("replicas") == 2), {})
            table.add("scaling over 2 GPUs", f"efficiency {two.get('efficiency')}" if two else proc.stderr[-120:],
                      "completes (efficiency with its interval)", bool(two) and two.get("efficiency") is not None)
            proc = tfturbo("run", "builtin:mlp", "--strategy", "multiworker", "--workers", "2", "--steps", "40",
                           "--profile", "0:0", "--out", str(folder / "workers"), "--json")
            log = (folder / "workers" / "backend.log")
            slices = next((line for line in log.read_text().splitlines() if "CUDA_VISIBLE_DEVICES" in line), "") \
                if log.is_file() else ""
            table.add("local workers, one GPU each", f"exit {proc.returncode}; {slices[-60:]}",
                      "completes, CUDA_VISIBLE_DEVICES 0 and 1", proc.returncode == 0 and "0, 1" in slices)
        else:
            table.add("scaling over 2 GPUs", "—", "completes", "not checked: fewer than 2 GPUs")
            table.add("local workers, one GPU each", "—", "CUDA_VISIBLE_DEVICES per worker",
                      "not checked: fewer than 2 GPUs")
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"accelerator check on {env['device']} (TensorFlow {env['tensorflow']}, Keras {env['keras']}), "
          f"{time.monotonic() - started:.0f} s")
    table.print()
    return 0 if not any(r[3] == "WRONG" for r in table.rows) else 1


if __name__ == "__main__":
    sys.exit(main())
