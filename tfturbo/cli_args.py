"""Argument definitions shared by `tfturbo` and `python -m trainer_backend`.

The backend takes the same sub-commands and arguments as the tfturbo commands
it serves (docs/ARCHITECTURE.md, "Processes"), so both parsers are built here, and the tune
ladder turns a RunSettings back into the same arguments.
"""

from __future__ import annotations

import argparse
from typing import Any

from .errors import UserError
from .settings import DEFAULT_SEED, DEFAULT_STEPS, POLICIES, STRATEGIES, RunSettings

BACKEND_COMMANDS = ("env", "audit", "probe-input", "run")


def _profile(value: str) -> tuple[int, int]:
    try:
        start, stop = value.split(":")
        return int(start), int(stop)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected START:STOP (e.g. 20:40), got {value!r}") from None


def positive_int(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a number >= 1, got {n}")
    return n


def _checked_float(value: str, ok, expectation: str) -> float:
    try:
        v = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {value!r}") from None
    if not ok(v):
        raise argparse.ArgumentTypeError(f"expected {expectation}, got {v}")
    return v


def fraction(value: str) -> float:
    return _checked_float(value, lambda v: 0 < v < 1, "a fraction between 0 and 1 (e.g. 0.02)")


def non_negative(value: str) -> float:
    return _checked_float(value, lambda v: v >= 0, "a number >= 0")


def positive(value: str) -> float:
    return _checked_float(value, lambda v: v > 0, "a number > 0")


def add_json(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print one machine-readable JSON document")


def add_workload(p: argparse.ArgumentParser) -> None:
    p.add_argument("workload", metavar="WORKLOAD", help="path to a workload .py file, or builtin:NAME")
    p.add_argument("--batch-size", type=positive_int, default=None, help="batch size (default: the workload's)")


def add_policy(p: argparse.ArgumentParser, default: str | None = "float32") -> None:
    p.add_argument("--policy", choices=POLICIES, default=default, help="Keras dtype policy")


def add_jit(p: argparse.ArgumentParser) -> None:
    p.add_argument("--jit", dest="jit", action="store_true", default=False, help="compile with XLA (jit_compile=True)")
    p.add_argument("--no-jit", dest="jit", action="store_false", help="no XLA (default)")


def add_fixes(p: argparse.ArgumentParser) -> None:
    p.add_argument("--fix-head", action="store_true", help="compute the output layer in float32 (automatic fix)")
    p.add_argument("--drop-remainder", action="store_true",
                   help="drop the partial last batch of the training data (automatic fix)")


def add_backend_commands(sub: argparse._SubParsersAction) -> dict[str, argparse.ArgumentParser]:
    """The four commands the backend serves, with identical arguments in both programs."""
    parsers = {}
    p = sub.add_parser("env", help="devices, versions and the recommended precision policy")
    add_json(p)
    parsers["env"] = p

    p = sub.add_parser("audit", help="static findings on the model and dataset")
    add_workload(p)
    add_policy(p)
    add_jit(p)
    add_json(p)
    parsers["audit"] = p

    p = sub.add_parser("probe-input", help="is the job input-bound or compute-bound?")
    add_workload(p)
    p.add_argument("--steps", type=positive_int, default=60, help="steps measured per probe (default 60)")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED)
    add_json(p)
    parsers["probe-input"] = p

    p = sub.add_parser("run", help="one measured training run")
    add_workload(p)
    p.add_argument("--out", required=True, metavar="RUN_DIR", help="run directory to create")
    add_policy(p)
    add_jit(p)
    p.add_argument("--steps", type=positive_int, default=DEFAULT_STEPS, help=f"training steps (default {DEFAULT_STEPS})")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED, help="seed for data order and initial weights")
    p.add_argument("--profile", type=_profile, default=None, metavar="START:STOP",
                   help="profiler window in steps (default: 20 steps after warm-up; 0:0 disables)")
    p.add_argument("--strategy", choices=STRATEGIES, default="default", help="tf.distribute strategy")
    p.add_argument("--val-every", type=positive_int, default=None, help="validate every N steps (default steps/5)")
    p.add_argument("--val-steps", type=positive_int, default=20, help="validation batches per evaluation")
    p.add_argument("--lr-scale", type=positive, default=1.0, help="multiply the learning rate (linear scaling rule)")
    p.add_argument("--until-ci", type=fraction, default=None, metavar="FRACTION",
                   help="stop at a validation point once the step-time 95%% CI is within ±FRACTION (e.g. 0.02)")
    p.add_argument("--min-steps", type=int, default=0, help="with --until-ci: never stop before this step")
    add_fixes(p)
    add_json(p)
    parsers["run"] = p
    return parsers


def build_backend_parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description="tfturbo training backend (speaks JSON-lines events)")
    sub = parser.add_subparsers(dest="command", required=True)
    add_backend_commands(sub)
    return parser


def settings_from_args(args: argparse.Namespace) -> RunSettings:
    """RunSettings from parsed `run` (or audit/probe) arguments; raises UserError when inconsistent."""
    return RunSettings(
        workload=args.workload,
        policy=getattr(args, "policy", None) or "float32",
        jit_compile=bool(getattr(args, "jit", False)),
        batch_size=getattr(args, "batch_size", None),
        steps=getattr(args, "steps", DEFAULT_STEPS),
        seed=getattr(args, "seed", DEFAULT_SEED),
        strategy=getattr(args, "strategy", "default"),
        profile=getattr(args, "profile", None),
        val_every=getattr(args, "val_every", None),
        val_steps=getattr(args, "val_steps", 20),
        fix_head=bool(getattr(args, "fix_head", False)),
        drop_remainder=bool(getattr(args, "drop_remainder", False)),
        lr_scale=getattr(args, "lr_scale", 1.0),
        until_ci=getattr(args, "until_ci", None),
        min_steps=getattr(args, "min_steps", 0),
    )


def run_argv(settings: RunSettings, out: str) -> list[str]:
    """`run` arguments (after the sub-command) that reproduce `settings` into `out`."""
    argv = [settings.workload, "--out", str(out), "--policy", settings.policy,
            "--jit" if settings.jit_compile else "--no-jit",
            "--steps", str(settings.steps), "--seed", str(settings.seed), "--strategy", settings.strategy,
            "--val-steps", str(settings.val_steps), "--lr-scale", repr(float(settings.lr_scale))]
    if settings.batch_size:
        argv += ["--batch-size", str(settings.batch_size)]
    if settings.profile is not None:
        argv += ["--profile", f"{settings.profile[0]}:{settings.profile[1]}"]
    if settings.val_every:
        argv += ["--val-every", str(settings.val_every)]
    if settings.until_ci is not None:
        argv += ["--until-ci", repr(float(settings.until_ci)), "--min-steps", str(settings.min_steps)]
    if settings.fix_head:
        argv.append("--fix-head")
    if settings.drop_remainder:
        argv.append("--drop-remainder")
    return argv


def parse_run_settings(argv: list[str]) -> RunSettings:
    """Round-trip helper: parse `run` arguments back into RunSettings (tests, tune)."""
    parser = build_backend_parser("trainer_backend")
    args = parser.parse_args(["run", *argv])
    return settings_from_args(args)


def as_dict(args: argparse.Namespace) -> dict[str, Any]:
    return {k: v for k, v in vars(args).items() if k != "func"}
