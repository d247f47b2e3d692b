"""Argument definitions shared by `tfturbo` and `python -m trainer_backend`.

The backend takes the same sub-commands and arguments as the tfturbo commands
it serves (docs/ARCHITECTURE.md, "Processes"), so both parsers are built here, and the tune
ladder turns a RunSettings back into the same arguments.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from .arg_types import positive, positive_int
from .errors import UserError
from .settings import AS_WRITTEN, RunSettings, declared

BACKEND_COMMANDS = ("env", "audit", "probe-input", "run")
# the backend commands that train (their progress counts steps, their events are a run's): `run`, and `run-pair`,
# a trial's paired speed replicate (internal, `build_backend_parser`)
TRAINING_COMMANDS = ("run", "run-pair")
_DECLARED = {f.name: (f, s) for f, s in declared()}
WORKLOAD_HELP = _DECLARED["workload"][1].help


def split_script_args(argv: list[str]) -> tuple[list[str], list[str]]:
    """(tfturbo's own arguments, the script's options): everything after the first `--` is the script's."""
    argv = list(argv)
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1:]
    return argv, []


def parse_args(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """`parser.parse_args` where `-- ARGS...` are the training script's own options (`args.script_args`).

    Splitting before argparse sees them keeps a script option such as `--epochs` or `--json` from being
    read as one of tfturbo's. A command without a WORKLOAD refuses them.
    """
    own, script_args = split_script_args(argv)
    args = parser.parse_args(own)
    if script_args:
        if not hasattr(args, "script_args"):
            parser.error(f"options after `--` are for a training script; {args.command or 'this command'} "
                         "takes no WORKLOAD")
        args.script_args = script_args
    return args


def script_argv(script_args: list[str]) -> list[str]:
    """`-- ARGS...` for a command line, or nothing when the script has no options."""
    return ["--", *script_args] if script_args else []


def add_json(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print one machine-readable JSON document")


def add_settings(p: argparse.ArgumentParser, names: list[str], **overrides: dict[str, Any]) -> None:
    """The arguments of the named RunSettings fields, as `tfturbo.settings` declares them.

    `overrides` changes what one command says about a setting (`steps={"default": 60, "help": ...}`).
    """
    for name in names:
        f, s = _DECLARED[name]
        own = overrides.get(name, {})
        if name in AS_WRITTEN:  # not given: as the script writes it (None), whatever the dataclass default
            own = {"default": None, **own}
        help_text = own.get("help", s.help).replace("%", "%%")
        if s.positional:
            p.add_argument(name, metavar=s.metavar, help=help_text)
            if name == "workload":
                p.set_defaults(script_args=[])  # filled by parse_args() from what follows `--`
        elif s.flag is None:
            raise ValueError(f"{name} is not a command-line setting")
        elif s.parse is None:  # an on/off switch
            dest = s.dest or name
            p.add_argument(s.flag, dest=dest, action="store_true", default=own.get("default", f.default),
                           help=help_text)
            if s.off:
                p.add_argument(s.off[0], dest=dest, action="store_false", help=s.off[1])
        else:
            p.add_argument(s.flag, dest=s.dest or name, type=s.parse, choices=s.choices, metavar=s.metavar,
                           default=own.get("default", f.default), help=help_text)


HOST_OPTIONS = ("--host", "--remote-python")  # tfturbo's, never the backend's: they say where it runs


def add_host(p: argparse.ArgumentParser) -> None:
    """`--host [user@]HOST [--remote-python PATH]`: run the backend there over ssh (`tfturbo.remote`)."""
    p.add_argument("--host", metavar="[USER@]HOST", default=None,
                   help="run the backend on this ssh host (the ssh command from TFTURBO_SSH, default ssh); "
                        "the workload's folder is copied there and the run files come back")
    p.add_argument("--remote-python", metavar="PATH", default=None,
                   help="with --host: the Python on the host that has tfturbo installed (default python3)")


def without_host(argv: list[str]) -> list[str]:
    """`argv` minus --host/--remote-python and their values (before a script's `--`)."""
    own, script_args = split_script_args(argv)
    kept: list[str] = []
    skip = False
    for arg in own:
        if skip:
            skip = False
        elif arg in HOST_OPTIONS:
            skip = True
        elif not arg.startswith(tuple(f"{o}=" for o in HOST_OPTIONS)):
            kept.append(arg)
    return kept + script_argv(script_args)


def add_backend_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> dict[str, argparse.ArgumentParser]:
    """The four commands the backend serves, with identical arguments in both programs."""
    parsers = {}
    p = sub.add_parser("env", help="devices, versions and the recommended precision policy")
    add_json(p)
    parsers["env"] = p

    p = sub.add_parser("audit", help="static findings on the model and dataset")
    add_settings(p, ["workload", "batch_size", "policy", "jit_compile", "fit_call"])
    add_json(p)
    parsers["audit"] = p

    p = sub.add_parser("probe-input", help="is the job input-bound or compute-bound?")
    add_settings(p, ["workload", "batch_size", "steps", "seed", "input_fixes", "fit_call"],
                 steps={"default": 60, "help": "steps measured per probe (default 60)"})
    add_json(p)
    parsers["probe-input"] = p

    p = sub.add_parser("run", help="one measured training run")
    add_settings(p, ["workload"])
    p.add_argument("--out", required=True, metavar="RUN_DIR", help="run directory to create")
    add_settings(p, [f.name for f, s in declared() if s.flag])
    add_json(p)
    parsers["run"] = p
    return parsers


def build_backend_parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description="tfturbo training backend (speaks JSON-lines events)")
    sub = parser.add_subparsers(dest="command", required=True)
    add_backend_commands(sub)
    p = sub.add_parser("run-pair", help="internal: a trial's paired speed replicate, both arms in one process "
                                        "measured in interleaved blocks (tfturbo.trials.runs.PlannedPair)")
    p.add_argument("--arm", action="append", required=True, metavar="RUN_ARGV_JSON",
                   help="one arm's `run` arguments as a JSON list (twice; the first given trains first)")
    p.add_argument("--steady-s", type=positive, required=True, metavar="SECONDS",
                   help="steady-state seconds each arm measures, over its interleaved blocks")
    p.add_argument("--blocks", type=positive_int, default=None, metavar="N",
                   help="blocks per arm (default trainer_backend.blocks.BLOCKS_PER_ARM; benchmarks/pair_blocks.py "
                        "compares block counts)")
    add_json(p)
    return parser


def pair_argv(first: tuple[RunSettings, str], second: tuple[RunSettings, str], steady_s: float) -> list[str]:
    """`run-pair` arguments: two (settings, run directory) arms, the first trained first, each measuring
    `steady_s` seconds of steady state."""
    return ["--arm", json.dumps(run_argv(*first)), "--arm", json.dumps(run_argv(*second)),
            "--steady-s", repr(float(steady_s))]


def pair_arms(args: argparse.Namespace) -> list[tuple[RunSettings, str]]:
    """(settings, run directory) of each arm of parsed `run-pair` arguments."""
    arms = []
    for text in args.arm:
        argv = json.loads(text)
        parsed = parse_args(build_backend_parser("trainer_backend"), ["run", *argv])
        arms.append((settings_from_args(parsed), parsed.out))
    if len(arms) != 2:
        raise UserError(f"run-pair takes two arms, got {len(arms)}", "pass --arm twice")
    return arms


def settings_from_args(args: argparse.Namespace) -> RunSettings:
    """RunSettings from parsed `run` (or audit/probe) arguments; raises UserError when inconsistent.

    A setting the command does not take (or leaves unset) keeps its declared default.
    """
    values: dict[str, Any] = {}
    for f, s in declared():
        if not (s.flag or s.positional):
            continue
        value = getattr(args, s.dest or f.name, None)
        if value is None and f.name in AS_WRITTEN:
            values[f.name] = None  # not given: as the script writes it
            continue
        values[f.name] = f.default if value is None else bool(value) if s.parse is None and not s.positional else value
    return RunSettings(**values, script_args=list(getattr(args, "script_args", None) or []))


def run_argv(settings: RunSettings, out: str) -> list[str]:
    """`run` arguments (after the sub-command) that reproduce `settings` into `out`.

    The settings marked `always` first (so a command line reads the same for every run), then the
    ones given, each in declaration order.
    """
    always: list[str] = []
    given: list[str] = []
    for f, s in declared():
        if not s.flag or (s.requires and getattr(settings, s.requires) is None):
            continue
        value = getattr(settings, f.name)
        into = always if s.always else given
        if s.parse is None:
            if value:
                into.append(s.flag)
            elif s.off and value is not None:  # None: as written, neither switch
                into.append(s.off[0])
        elif value is not None and (value or s.always or s.requires):
            into += [s.flag, s.to_arg(value)]
    return [settings.workload, "--out", str(out), *always, *given, *script_argv(settings.script_args)]


def parse_run_settings(argv: list[str]) -> RunSettings:
    """Round-trip helper: parse `run` arguments back into RunSettings (tests, tune)."""
    parser = build_backend_parser("trainer_backend")
    return settings_from_args(parse_args(parser, ["run", *argv]))


def as_dict(args: argparse.Namespace) -> dict[str, Any]:
    return {k: v for k, v in vars(args).items() if k != "func"}
