"""The options of a study, each declared once: `TuneOptions`.

Like the run settings (`tfturbo.settings`), each option is a dataclass field
whose metadata (`StudyOption`) says how it is given and written: its
`tfturbo tune` flag (and whether `tfturbo ab` takes it too), its help, and its
key in study.yaml's `options`. From these declarations come both commands'
flags (`add_options`, `values_from_args`), study.yaml's `options` and the
reading of an older one (`TuneOptions.to_dict` / `from_dict`), the report's
command that measures the study again (`rerun_argv`), and the wizard's
defaults (`TuneOptions` itself). So a new study option is one field here plus
the code that uses it (tests/tune/test_options.py adds one).

The study.yaml keys stay those older studies were written with
(`replicates.min`, `tolerance.accuracy_pp`), so every study still reads.
"""

from __future__ import annotations

import argparse
from dataclasses import MISSING, Field, dataclass, field, fields
from pathlib import Path
from typing import Any, Callable

from ..arg_types import non_negative, positive_int
from ..runfiles import VALIDATION_DIR
from ..settings import DEFAULT_SEED, DEFAULT_STEPS, RunSettings
from ..trials.speed import SpeedRule
from ..trials.sizing import MIN_STEADY_STEPS
from ..trials.verdict import JUDGE_ON, Tolerance
from . import levers
from .batch import DEFAULT_MAX_SCALE
from .levers import Lever

TUNE, AB = "tune", "ab"  # the commands that take study options
FIELD_DEFAULT = object()  # a flag's default is its field's


def _number(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


@dataclass(frozen=True)
class StudyOption:
    """How one study option is given on the command line and written in study.yaml."""

    help: str = ""  # "{each}" reads "rung" in `tune`'s help, "trial" in `ab`'s
    flag: str | None = None  # the `tfturbo tune` option; None: not one (set by the front ends or the study)
    parse: Callable[[str], Any] | None = None  # the argparse type; None on a bool: a switch
    choices: tuple[str, ...] | None = None
    metavar: str | None = None
    off: bool = False  # a bool whose flag switches it off (`--no-fixes`)
    flag_default: Any = FIELD_DEFAULT  # the flag's default when it is not the field's (None: "not given")
    ab: bool = False  # `tfturbo ab` takes the flag too
    key: str = ""  # its path in study.yaml's `options` ("replicates.min"); "" is the field's name
    omit_default: bool = False  # study.yaml leaves it out at its default (older versions still resume the study)
    to_file: Callable[[Any], Any] = lambda v: v  # the value as study.yaml writes it
    from_file: Callable[[Any], Any] = lambda v: v  # ... and as it is read back
    to_arg: Callable[[Any], str] = _number  # the value on the rerun command line
    # on a dataclass-valued option (the tolerance): its own fields' declarations, each a flag and a key of its own
    parts: dict[str, StudyOption] | None = None


def option(default: Any = MISSING, *, default_factory: Callable[[], Any] | None = None, **meta: Any) -> Any:
    """A TuneOptions field with its `StudyOption` declaration."""
    metadata = {"option": StudyOption(**meta)}
    if default_factory is not None:
        return field(default_factory=default_factory, metadata=metadata)
    return field(default=default, metadata=metadata)


def stages_list(value: str) -> tuple[str, ...]:
    """`--stages a,b`: the stages named, each one a lever's."""
    chosen = tuple(v.strip() for v in value.split(",") if v.strip())
    unknown = [v for v in chosen if v not in levers.stages()]
    if unknown or not chosen:
        stage = "stage" if len(unknown) == 1 else "stages"
        raise argparse.ArgumentTypeError(f"unknown {stage} {', '.join(unknown) or '(none)'}; "
                                         f"choose from {','.join(levers.stages())}")
    return chosen


# The tolerance's three options (a `Tolerance`'s fields): declared here, beside the others, not in the trial
# engine's class (which knows nothing of command lines).
TOLERANCE_OPTIONS: dict[str, StudyOption] = {
    "accuracy_pp": StudyOption(
        flag="--accuracy-tolerance", parse=non_negative, metavar="PP", ab=True,
        help=f"accuracy the candidate of a {{each}} may lose, in percentage points (default {Tolerance.accuracy_pp})"),
    "loss_rel": StudyOption(
        flag="--loss-tolerance", parse=non_negative, metavar="FRACTION", ab=True,
        help=f"relative loss increase the candidate of a {{each}} may cost when the gate judges a loss "
             f"(default {Tolerance.loss_rel})"),
    "judge_on": StudyOption(
        flag="--judge-on", parse=str, choices=JUDGE_ON, ab=True,
        help="what the accuracy gate judges: the validation metric (default), or the per-example validation loss "
             "(paired and continuous: far tighter on a small validation set); the rule is recorded and named in "
             "the report"),
}


@dataclass
class TuneOptions:
    """What a study measures with: study.yaml's `options` (the same for `tfturbo tune`, `tfturbo ab` where it
    takes them, and the wizard). The field order is study.yaml's (the report lists the options in it)."""

    workload: str
    out: Path
    steps: int = option(DEFAULT_STEPS, flag="--steps", parse=positive_int, flag_default=None, ab=True,
                        help="training steps of each run (in `ab`, of each A run: B trains on as many samples; "
                             "default: a training script's own length, as its audit reads it, its epochs times "
                             f"its steps per epoch, at least {MIN_STEADY_STEPS}; else {DEFAULT_STEPS})")
    seed: int = option(DEFAULT_SEED, flag="--seed", parse=int, ab=True, help="the same seed for every run")
    batch_size: int | None = option(None, flag="--batch-size", parse=positive_int,
                                    help="baseline batch size (default: the workload's)")
    val_every: int | None = option(None, flag="--val-every", parse=positive_int,  # None: about steps // 5
                                   help="validate every N steps (default steps/5)")
    val_examples: int = option(RunSettings.val_examples, flag="--val-examples", parse=positive_int, ab=True,
                               help=f"validation examples the accuracy gate pairs (default {RunSettings.val_examples})")
    min_replicates: int = option(SpeedRule.min_pairs, flag="--min-replicates", parse=positive_int, ab=True,
                                 key="replicates.min",
                                 help=f"replicate pairs per {{each}} before its verdict may stop (default "
                                      f"{SpeedRule.min_pairs}, at least 2)")
    max_replicates: int = option(SpeedRule.max_pairs, flag="--max-replicates", parse=positive_int, ab=True,
                                 key="replicates.max",
                                 help=f"replicate pairs per {{each}} at most (default {SpeedRule.max_pairs})")
    # steady-state seconds each replicate aims at (0: full-length pairs only)
    steady_s: float = option(SpeedRule.steady_s, flag="--steady-s", parse=non_negative, metavar="SECONDS", ab=True,
                             key="replicates.steady_s",
                             help=f"steady-state seconds each speed-only replicate aims at (default "
                                  f"{SpeedRule.steady_s:g}; 0: every pair trains the full length with validation, "
                                  "and any steady window counts)")
    # the 16-bit dtype policy to measure (None: the one the environment recommends); study.yaml's `policy`
    sixteen_bit_policy: str | None = option(
        None, flag="--policy", parse=str, choices=("mixed_float16", "mixed_bfloat16"), key="policy",
        help="the 16-bit policy to measure (default: the one `tfturbo env` recommends)")
    both_policies: bool = option(False, flag="--both-policies",
                                 help="measure mixed_float16 and mixed_bfloat16, not only the recommended 16-bit "
                                      "policy")
    auto_fix: bool = option(True, flag="--no-fixes", off=True,  # the audit's automatic fixes on the rungs
                            help="measure the workload as written: do not apply the audit's automatic fixes "
                                 "(float32 head, drop_remainder)")
    max_batch_scale: float = option(DEFAULT_MAX_SCALE, flag="--max-batch-scale", parse=float, metavar="X",
                                    help=f"the larger-batch rung grows the batch at most X times (default "
                                         f"{DEFAULT_MAX_SCALE:g})")
    # a training script's own options (after `--` on the command line, for every run)
    script_args: list[str] = option(default_factory=list, to_file=list, from_file=lambda v: [str(a) for a in v])
    tolerance: Tolerance = option(default_factory=Tolerance, parts=TOLERANCE_OPTIONS)
    # the stages to measure (None: every lever's; the confirmation always)
    stages: tuple[str, ...] | None = option(
        None, flag="--stages", parse=stages_list, metavar="STAGE,...", to_file=lambda v: list(v or ()),
        from_file=lambda v: tuple(v) if v else None, to_arg=",".join,
        help="the stages to measure, in their fixed order (default all: "
             f"{','.join(levers.stages())}); the recommendation is always confirmed against the baseline")
    # steps follow a training script's own length once the audit reads it (`tfturbo tune SCRIPT` without --steps)
    own_length: bool = option(False, omit_default=True)
    # which of a training script's fit() calls is measured (None: its first)
    fit_call: int | None = option(None, flag="--fit-call", parse=positive_int, metavar="N", omit_default=True,
                                  help="with a training script that calls fit() more than once: measure its Nth "
                                       "call (default the first; the calls before it return without training)")

    def __post_init__(self) -> None:
        if self.stages is None:
            self.stages = levers.stages()
        if self.max_replicates < self.min_replicates:
            self.max_replicates = self.min_replicates
        if self.max_batch_scale < 1:
            self.max_batch_scale = 1.0

    def base_settings(self) -> RunSettings:
        plain = RunSettings(self.workload, steps=self.steps, seed=self.seed, batch_size=self.batch_size,
                            val_every=self.val_every, val_examples=self.val_examples,
                            val_set=str(Path(self.out) / VALIDATION_DIR), script_args=list(self.script_args),
                            fit_call=self.fit_call).as_written()  # the baseline: the script as written
        return plain.with_(val_every=plain.effective_val_every())

    def speed_rule(self) -> SpeedRule:
        return SpeedRule(self.min_replicates, self.max_replicates, steady_s=self.steady_s)

    def to_dict(self) -> dict[str, Any]:
        """study.yaml's `options`: every declared option at its key (the validation interval as the runs use it)."""
        doc: dict[str, Any] = {}
        for opt in declared(type(self)):
            value = opt.get(self)
            if opt.decl.omit_default and value == opt.default:
                continue  # (absent otherwise: older studies still resume)
            _put(doc, opt.key, opt.decl.to_file(value))
        doc["val_every"] = self.base_settings().val_every
        return doc

    @classmethod
    def from_dict(cls, workload: str, out: Path, d: dict[str, Any]) -> TuneOptions:
        """The options a study recorded (study.yaml's `options`), to continue it with them; what the file lacks
        (an older study's) or holds out of its choices is the default."""
        options = cls(workload, Path(out))
        for opt in declared(cls):
            value = _get(d or {}, opt.key)
            if value is None or (opt.decl.choices is not None and value not in opt.decl.choices):
                continue
            opt.set(options, opt.decl.from_file(value))
        options.__post_init__()
        if options.own_length and options.val_every == RunSettings(workload, steps=options.steps).effective_val_every():
            options.val_every = None  # the default for a length the audit may still set: it follows that length
        return options

    def selected(self) -> list[Lever]:
        """The levers this study measures, in order (a confirming lever always)."""
        return [lv for lv in levers.LEVERS if lv.stage_name in (self.stages or ()) or lv.confirms]


@dataclass(frozen=True)
class Declared:
    """One declared option, a tolerance part flattened: where it lives in TuneOptions and in study.yaml."""

    path: tuple[str, ...]  # ("min_replicates",), ("tolerance", "accuracy_pp")
    key: tuple[str, ...]  # ("replicates", "min")
    decl: StudyOption
    default: Any

    @property
    def name(self) -> str:
        return self.path[-1]

    def get(self, options: Any) -> Any:
        for part in self.path:
            options = getattr(options, part)
        return options

    def set(self, options: Any, value: Any) -> None:
        for part in self.path[:-1]:
            options = getattr(options, part)
        setattr(options, self.path[-1], value)

    @property
    def dest(self) -> str:
        """Its argparse destination."""
        assert self.decl.flag is not None
        return "_".join(self.path) if not self.decl.off else self.path[-1]


def _default(f: Field[Any]) -> Any:
    return f.default_factory() if f.default_factory is not MISSING else f.default


def declared(cls: type | None = None) -> list[Declared]:
    """Every declared option of `cls` (TuneOptions), in declaration order, the parts of a `parts` option in its
    place."""
    out = []
    for f in fields(cls or TuneOptions):
        decl = f.metadata.get("option")
        if decl is None:
            continue
        key = tuple((decl.key or f.name).split("."))
        if decl.parts is not None:
            whole = _default(f)
            out += [Declared((f.name, name), (*key, name), part, getattr(whole, name))
                    for name, part in decl.parts.items()]
        else:
            out.append(Declared((f.name,), key, decl, _default(f)))
    return out


def _get(doc: dict[str, Any], key: tuple[str, ...]) -> Any:
    for part in key:
        if not isinstance(doc, dict):
            return None
        doc = doc.get(part)  # type: ignore[assignment]
    return doc


def _put(doc: dict[str, Any], key: tuple[str, ...], value: Any) -> None:
    for part in key[:-1]:
        doc = doc.setdefault(part, {})
    doc[key[-1]] = value


def add_options(parser: argparse.ArgumentParser, command: str = TUNE, cls: type | None = None) -> None:
    """The flags of every declared option `command` takes (all for `tune`, those marked `ab` for `ab`)."""
    each = "rung" if command == TUNE else "trial"
    for opt in declared(cls):
        d = opt.decl
        if d.flag is None or (command != TUNE and not d.ab):
            continue
        default = opt.default if d.flag_default is FIELD_DEFAULT else d.flag_default
        if d.parse is None:
            parser.add_argument(d.flag, dest=opt.dest, action="store_false" if d.off else "store_true",
                                help=d.help.format(each=each))
        else:
            parser.add_argument(d.flag, dest=opt.dest, type=d.parse, choices=d.choices, metavar=d.metavar,
                                default=default, help=d.help.format(each=each))


def values_from_args(args: argparse.Namespace, command: str = TUNE, cls: type | None = None) -> dict[str, Any]:
    """field -> value of the options `command` takes, from its parsed flags (a tolerance assembled); the flags
    left at None ("not given") are left out, so the field's default or the front end decides."""
    values: dict[str, Any] = {}
    parts: dict[str, dict[str, Any]] = {}
    for opt in declared(cls):
        d = opt.decl
        if d.flag is None or (command != TUNE and not d.ab):
            continue
        value = getattr(args, opt.dest)
        if value is None:
            continue
        if len(opt.path) > 1:
            parts.setdefault(opt.path[0], {})[opt.name] = value
        else:
            values[opt.name] = value
    for name, given in parts.items():
        whole = _default(next(f for f in fields(cls or TuneOptions) if f.name == name))
        values[name] = type(whole)(**given)
    return values


def rerun_argv(workload: str, options: dict[str, Any], out: str, cls: type | None = None) -> list[str]:
    """The `tfturbo tune` command line that repeats a study with the options its study.yaml recorded (an older
    study's too: what it lacks is left to the defaults)."""
    argv = ["tfturbo", "tune", workload, "--out", out]
    for opt in declared(cls):
        d = opt.decl
        value = _get(options or {}, opt.key)
        if d.flag is None or value is None or (d.choices is not None and value not in d.choices):
            continue
        if d.parse is None:  # a switch: written when it is away from its default
            if bool(value) != bool(opt.default):
                argv.append(d.flag)
        elif not (isinstance(value, (list, tuple)) and not value) and not (d.choices and value == opt.default):
            argv += [d.flag, d.to_arg(value)]
    script_args = options.get("script_args") if isinstance(options, dict) else None
    if isinstance(script_args, list) and script_args:
        argv += ["--", *map(str, script_args)]
    return argv
