"""The settings of one measured run: what differs between the rungs of the ladder.

Each setting is declared once, here: its name, type and default (the dataclass
field) and, in the field's metadata (`Setting`), its command-line option, its
help, and how it is shown when it is an automatic fix. The CLI arguments
(`cli_args`), the arguments a ladder passes to the backend (`cli_args.run_argv`),
the findings panel's fix checkboxes, the wizard's record and the report's
settings rows are all derived from these declarations, so a new setting is one
field here plus the code that acts on it (docs/ARCHITECTURE.md, "Adding a setting"). So are the lists
that once drifted from them: which settings make runs replicates of one configuration
(`compare.replicate_key`), the `tfturbo ab` keys (`trials.spec`), the audit fixes the
tuning policy switches on (`with_audit_fixes`) and what the app says when one fails
(`tfturbo_gui.failures`).
"""

from __future__ import annotations

from dataclasses import MISSING, Field, asdict, dataclass, field, fields, replace
from typing import Any, Callable, Iterable, Mapping

from .findings import FindingDoc
from . import findings as F
from .arg_types import fraction, positive, positive_int, step_window
from .errors import UserError

POLICIES = ("float32", "mixed_float16", "mixed_bfloat16")
STRATEGIES = ("default", "mirrored", "multiworker", "tpu")
DEFAULT_STEPS = 300
DEFAULT_SEED = 1234
# the settings that may be None, "as the script wrote it" (the command line's default, a study's baseline): the
# backend reads them from the script's own compile() and policy (trainer_backend/as_written.py)
AS_WRITTEN = ("policy", "jit_compile", "steps_per_execution")
# what they resolve to for a script that sets none of them, on a CPU (Keras' defaults; "auto" XLA is off there)
UNSAID = {"policy": "float32", "jit_compile": False, "steps_per_execution": 1}
NO_PROFILE = (0, 0)  # a `profile` window that turns the profiler off
# TF_XLA_FLAGS flag without which TensorFlow's auto-clustering clusters nothing placed on a CPU (its default: GPU
# only); the backend sets it for an auto-clustering run, the recommended code carries it
XLA_CPU_AUTOCLUSTERING_FLAG = "--tf_xla_cpu_global_jit"


@dataclass(frozen=True)
class FixFailure:
    """What the app says when an automatic fix fails: the way out is to run without it or make it by hand."""

    tried: str  # what tfturbo tried ("apply the float32 head to this model")
    code_at: str  # a name of the backend code that applies it, as a traceback shows it ("float32_head")
    by_hand: str  # the same change made in the user's code


@dataclass(frozen=True)
class Setting:
    """How one RunSettings field is given on the command line and shown to the user."""

    help: str = ""
    flag: str | None = None  # the `run` option ("--policy"); None: not a command-line option
    positional: bool = False  # a positional argument (the workload)
    parse: Callable[[str], Any] | None = None  # the argparse type; None on a bool field: an on/off switch
    choices: tuple[str, ...] | None = None
    metavar: str | None = None
    dest: str | None = None  # the argparse destination, when it is not the field name
    off: tuple[str, str] | None = None  # (option, help) of an explicit off switch ("--no-jit")
    always: bool = False  # run_argv writes it even at its default (the command line says it outright)
    requires: str | None = None  # run_argv writes it only when this other setting is given
    to_arg: Callable[[Any], str] = str  # the value as run_argv writes it
    fixes: str | None = None  # the finding code this switch fixes by itself (offered on that finding)
    offer: str = ""  # the fix as the checkbox on that finding names it ("float32 output layer": `automatic_fixes`)
    shown_as: str = ""  # the switched-on fix as the wizard's record names it
    report: tuple[str, str] | None = None  # (row, value) in the report's settings to apply, when on
    # with auto_fix, the tuning policy switches this fix on for a candidate where this holds and the audit
    # raised `fixes` (None: the fix is not an audit fix; input_fixes has a stage of its own)
    auto_when: Callable[[RunSettings], bool] | None = None
    failure: FixFailure | None = None  # how the app explains a run this fix made fail
    ab: str | None = None  # its key in `tfturbo ab` SETTINGS ("batch=128"); None: not one
    # how a run is measured (profiler window, validation cadence, adaptive stop), not what is run: runs that
    # differ only in such settings are replicates of one configuration (compare.replicate_key)
    measurement: bool = False
    # read once per process (the environment, TensorFlow's global config, the strategy, the cluster): two runs
    # that differ in it cannot share one process (`can_share_process`)
    process_global: bool = False


def setting(default: Any = None, *, default_factory: Callable[[], Any] | None = None, **meta: Any) -> Any:
    """A RunSettings field with its `Setting` declaration."""
    if default_factory is not None:
        return field(default_factory=default_factory, metadata={"setting": Setting(**meta)})
    return field(default=default, metadata={"setting": Setting(**meta)})


@dataclass
class RunSettings:
    workload: str = setting("", positional=True, metavar="WORKLOAD",
                            help="a training script (.py), a workload .py file defining build_model() and "
                                 "make_datasets(), or builtin:NAME; options for the script follow `--`")
    # None ("as written": the command line's default for policy, jit_compile and steps_per_execution, and a
    # study's baseline): what the script's own compile() and policy say, read by the backend before anything
    # changes them and recorded as the run's `as_written`; the run's summary settings hold the values it trained
    # with (`AS_WRITTEN`, `resolved`). The dataclass defaults are Keras' (`UNSAID`) for code that builds settings.
    policy: str | None = setting("float32", flag="--policy", choices=POLICIES, parse=str, always=True, ab="policy",
                                 help="Keras dtype policy (default: the script's own, as written)")
    jit_compile: bool | None = setting(False, flag="--jit", dest="jit", off=("--no-jit", "no XLA"), always=True,
                                       ab="jit",
                                       help="compile with XLA (jit_compile=True; default: as the script's "
                                            "compile() says, Keras' \"auto\" resolved)")
    # None: the workload's BATCH_SIZE (or 32)
    batch_size: int | None = setting(None, flag="--batch-size", parse=positive_int, ab="batch",
                                     help="batch size (default: the workload's)")
    steps: int = setting(DEFAULT_STEPS, flag="--steps", parse=positive_int, always=True, measurement=True,
                         help=f"training steps (default {DEFAULT_STEPS})")
    # ab: B trains the same configuration from another seed (an A/A′ trial: what training noise alone does).
    # A measurement setting: runs from other seeds are replicates of one configuration (the accuracy gate's seed
    # replicates of the reference count with the baseline's runs in compare, issue 39)
    seed: int = setting(DEFAULT_SEED, flag="--seed", parse=int, always=True, ab="seed", measurement=True,
                        help="seed for data order and initial weights")
    strategy: str = setting("default", flag="--strategy", choices=STRATEGIES, parse=str, always=True,
                            process_global=True,
                            help="tf.distribute strategy: mirrored (the devices of this machine), multiworker "
                                 "(MultiWorkerMirroredStrategy: --workers local processes, or a cluster from "
                                 "--tf-config / TF_CONFIG), tpu (TPUStrategy)")
    # None: every device MirroredStrategy finds
    devices: int | None = setting(None, flag="--devices", parse=positive_int, metavar="N", process_global=True,
                                  help="with --strategy mirrored: replicate over the first N devices (default all)")
    workers: int = setting(1, flag="--workers", parse=positive_int, metavar="N", process_global=True,
                           help="with --strategy multiworker: start N local worker processes (default 1)")
    # a cluster this process joins as one member (instead of starting local workers)
    tf_config: str | None = setting(None, flag="--tf-config", parse=str, metavar="FILE", process_global=True,
                                    help="with --strategy multiworker: join the cluster this TF_CONFIG JSON file "
                                         "describes (default: the TF_CONFIG environment variable, else local "
                                         "workers)")
    # Profiler window [start, stop) in steps; None picks one after warm-up; NO_PROFILE disables.
    profile: tuple[int, int] | None = setting(None, flag="--profile", parse=step_window, metavar="START:STOP",
                                              to_arg=lambda w: f"{w[0]}:{w[1]}", measurement=True,
                                              help="profiler window in steps (default: 20 steps after warm-up; "
                                                   "0:0 disables)")
    # None: about steps // 5 (five points on the validation curve; `effective_val_every`)
    val_every: int | None = setting(None, flag="--val-every", parse=positive_int, measurement=True,
                                    help="validate every N steps (default steps/5)")
    # None: whole batches up to val_examples (every example the workload has, up to that cap)
    val_steps: int | None = setting(None, flag="--val-steps", parse=positive_int, always=True, measurement=True,
                                    help="at most N validation batches when the examples cannot be re-batched "
                                         "(a dimension varies between batches; default: whole batches up to "
                                         "--val-examples)")
    # the first N validation examples, the same for every batch size: the paired accuracy gate compares them (every
    # example the workload has, up to this cap; the verdict says when the cap left some out)
    val_examples: int = setting(10000, flag="--val-examples", parse=positive_int,
                                to_arg=str, measurement=True,
                                help="validation examples the accuracy gate compares pairwise: every example the "
                                     "workload has, up to N (default 10000)")
    # The accuracy gate's per-example results (paired_validation.npz) only at validation points from this step on: a
    # candidate's full-length run is compared at its last points only (`trials.trial.Trial.gate_from`), so a pass
    # over the examples at each earlier point would serve nothing; Keras' own validation (the curve the plots
    # show) still runs at every point. None: every point (a reference run, which a later candidate may meet at
    # any of its points)
    paired_from: int | None = setting(None, flag="--paired-from", parse=positive_int, metavar="STEP",
                                      measurement=True,
                                      help="record each validation example's result for the accuracy gate only at "
                                           "validation points from STEP on (default: every point)")
    # The fixed validation set shared by a study's runs (trainer_backend/validation_set.py): the first run that
    # validates writes its examples here, every later run reads them, so every arm validates on the same examples.
    val_set: str | None = setting(None, flag="--val-set", parse=str, metavar="DIR", measurement=True,
                                  help="keep the fixed validation examples in DIR and read them back: runs given the "
                                       "same DIR validate on the same examples (a study's runs share one)")
    fix_head: bool = setting(False, flag="--fix-head", help="compute the output layer in float32 (automatic fix)",
                             fixes=F.HEAD_NOT_FLOAT32, offer="float32 output layer",
                             shown_as="float32 output layer", ab="fix_head", auto_when=lambda s: s.sixteen_bit,
                             failure=FixFailure("apply the float32 head to this model", "float32_head",
                                                'add dtype="float32" to the output layer in build_model()'),
                             report=("Output layer", "dtype='float32' (float32 head)"))
    fix_int_inputs: bool = setting(False, flag="--fix-int-inputs",
                                   help="compute in float32 the layers that would round integer-valued float "
                                        "inputs (token ids) to 16-bit before their lookup (automatic fix)",
                                   fixes=F.INTEGER_INPUT_16BIT,
                                   offer="keep the ids exact (float32 input layers)",
                                   shown_as="integer inputs kept exact (float32 input layers)",
                                   ab="fix_int_inputs", auto_when=lambda s: s.sixteen_bit,
                                   failure=FixFailure("keep this model's integer inputs exact",
                                                      "apply_fix_int_inputs",
                                                      'declare the id input as keras.Input(..., dtype="int32") '
                                                      "in your model"),
                                   report=("Integer inputs", 'keras.Input(..., dtype="int32") (ids kept exact)'))
    drop_remainder: bool = setting(False, flag="--drop-remainder",
                                   help="drop the partial last batch of the training data (automatic fix)",
                                   fixes=F.PARTIAL_LAST_BATCH, offer="drop the partial batch",
                                   shown_as="drop the partial last batch", ab="drop_remainder",
                                   auto_when=lambda s: s.jit_compile,  # XLA recompiles for the odd last shape
                                   failure=FixFailure("drop the partial last batch of this dataset",
                                                      "drop_partial_batches", "batch the training dataset with "
                                                      "drop_remainder=True in make_datasets()"),
                                   report=("Training data", "batch(..., drop_remainder=True)"))
    # tf.data fixes applied to the training dataset without editing the workload (trainer_backend/input_fixes.py):
    # Options (autotune, map_parallelization, parallel_batch), prefetch(AUTOTUNE) at the end when missing, and
    # cache() when the data fit in memory with no randomness upstream. The data order is kept (deterministic).
    input_fixes: bool = setting(False, flag="--input-fixes",
                                help="apply tf.data fixes to the training data: autotune, parallel map and "
                                     "batch, prefetch, and cache() when it fits in memory with no shuffle or "
                                     "random map upstream (automatic fix; the data order is kept)",
                                fixes=F.INPUT_BOUND, offer="automatic tf.data fixes",
                                shown_as="tf.data input fixes", ab="input_fixes",
                                failure=FixFailure("apply the automatic tf.data fixes to this dataset",
                                                   "fix_training_data", "make the input pipeline changes of "
                                                   "the INPUT_BOUND finding in make_datasets()"),
                                report=("Input pipeline", "tf.data.Options (autotune, parallel map and batch), "
                                        "prefetch(tf.data.AUTOTUNE); cache() where safe (INPUT_FIXES_APPLIED)"))
    # learning-rate multiplier: the batch lever sets it by the optimizer's rule (tune.batch.rule_for: ×k for SGD,
    # ×√k for Adam-family); it multiplies every optimizer's rate, a schedule's rates (tfturbo.learning_rate)
    lr_scale: float = setting(1.0, flag="--lr-scale", parse=positive, always=True, to_arg=lambda v: repr(float(v)),
                              ab="lr_scale",
                              help="multiply the learning rate (a schedule's rates, every optimizer's) by this")
    # TensorFlow's XLA auto-clustering (tf.config.optimizer.set_jit("autoclustering")): XLA compiles the clusters
    # of ops it supports and leaves the rest to TensorFlow, where jit_compile=True needs the whole step.
    xla_autoclustering: bool = setting(False, flag="--xla-autoclustering", ab="xla_autoclustering",
                                       process_global=True,
                                       help="let XLA compile the parts of the step it supports "
                                            "(tf.config.optimizer.set_jit('autoclustering'))",
                                       report=("XLA", "tf.config.optimizer.set_jit('autoclustering')"))
    # Steps run by one call of the compiled train function (Keras' compile(steps_per_execution=N)): fewer
    # Python round trips when a step is short. Must divide the validation interval.
    steps_per_execution: int | None = setting(1, flag="--steps-per-execution", parse=positive_int, metavar="N",
                                              ab="steps_per_execution",
                                              help="training steps per call of the compiled step function "
                                                   "(compile(steps_per_execution=N); default: as the script's "
                                                   "compile() says)",
                                              report=("compile()", "steps_per_execution={}"))
    # Adaptive measurement: stop at the first validation point where the step-time 95% interval is
    # within ±until_ci of the median (e.g. 0.02) and at least min_steps have run. None: run all steps.
    until_ci: float | None = setting(None, flag="--until-ci", parse=fraction, metavar="FRACTION",
                                     to_arg=lambda v: repr(float(v)), measurement=True,
                                     help="stop at a validation point once the step-time 95% CI is within "
                                          "±FRACTION (e.g. 0.02)")
    min_steps: int = setting(0, flag="--min-steps", parse=int, requires="until_ci", measurement=True,
                             help="with --until-ci: never stop before this step")
    # A replicate that measures speed only (a trial's pairs after the first, docs/MEASUREMENT.md "Replicates
    # and their length"): no validation and no saved model, so all its time after warm-up is steady measurement.
    speed_only: bool = setting(False, flag="--speed-only", measurement=True,
                               help="measure speed only: no validation, no saved model (checkpoint/model.keras); "
                                    "the settings beside it are still written")
    # A run whose model nobody uses writes none (a trial's reference replicates: their configuration's model is
    # its own rung's run, docs/ARCHITECTURE.md "Run and study directories"); the settings beside it are written.
    no_model: bool = setting(False, flag="--no-model", measurement=True,
                             help="save no model (checkpoint/model.keras); the settings beside it are still written")
    # XLA's persistent compilation cache (TF_XLA_FLAGS=--tf_xla_persistent_cache_directory): a study's runs share
    # one folder, so a configuration compiled by one replicate loads in the next instead of compiling again.
    xla_cache: str | None = setting(None, flag="--xla-cache", parse=str, metavar="DIR", measurement=True,
                                    process_global=True,
                                    help="keep XLA's compiled programs in DIR and reuse them (a folder shared by "
                                         "runs of the same model; TF_XLA_FLAGS=--tf_xla_persistent_cache_directory)")
    # Which of a training script's fit() calls is measured (a teacher's, then its distiller's; None: the first).
    # The calls before it return at once, untrained (trainer_backend/script.py).
    fit_call: int | None = setting(None, flag="--fit-call", parse=positive_int, metavar="N", ab="fit_call",
                                   help="with a training script that calls fit() more than once: measure its Nth "
                                        "call (default the first; the calls before it return without training)")
    # A training script's own options (what follows `--` on the command line): its sys.argv[1:].
    script_args: list[str] = setting(default_factory=list)
    extra: dict[str, Any] = setting(default_factory=dict)

    def __post_init__(self) -> None:
        self.script_args = [str(a) for a in self.script_args]  # a tuple or list given: one shape, equal after a round trip
        if self.policy is not None and self.policy not in POLICIES:
            raise UserError(f"unknown precision policy {self.policy!r}", f"use one of {', '.join(POLICIES)}")
        if self.strategy not in STRATEGIES:
            raise UserError(f"unknown strategy {self.strategy!r}", f"use one of {', '.join(STRATEGIES)}")
        if self.workers > 1 and self.strategy != "multiworker":
            raise UserError(f"--workers {self.workers} needs --strategy multiworker", "add --strategy multiworker")
        if self.tf_config and self.strategy != "multiworker":
            raise UserError("--tf-config needs --strategy multiworker", "add --strategy multiworker")
        if self.devices is not None and self.strategy != "mirrored":
            raise UserError(f"--devices {self.devices} needs --strategy mirrored", "add --strategy mirrored")
        if self.batch_size is not None and self.batch_size < 1:
            raise UserError(f"batch size must be positive, got {self.batch_size}", "pass --batch-size N with N >= 1")
        if self.steps < 1:
            raise UserError(f"steps must be positive, got {self.steps}", "pass --steps N with N >= 1")
        if self.profile is not None:
            start, stop = (int(v) for v in self.profile)
            if (start, stop) != NO_PROFILE and not (0 < start < stop):
                raise UserError(f"profile window {start}:{stop} is not START < STOP with START >= 1",
                                "pass --profile START:STOP, e.g. --profile 20:40, or --profile 0:0 to disable")
            self.profile = (start, stop)
        if self.until_ci is not None and not 0 < self.until_ci < 1:
            raise UserError(f"--until-ci must be a fraction between 0 and 1, got {self.until_ci}",
                            "pass e.g. --until-ci 0.02 for ±2%")
        if self.lr_scale <= 0:
            raise UserError(f"learning-rate scale must be positive, got {self.lr_scale}")
        if self.steps_per_execution is not None and self.steps_per_execution < 1:
            raise UserError(f"steps per execution must be positive, got {self.steps_per_execution}",
                            "pass --steps-per-execution N with N >= 1")
        if self.val_examples < 1:
            raise UserError(f"validation examples must be positive, got {self.val_examples}",
                            "pass --val-examples N with N >= 1")

    @property
    def sixteen_bit(self) -> bool:
        """A 16-bit policy is set (False as written: the backend resolves it, `resolved`)."""
        return self.policy is not None and self.policy != "float32"

    @property
    def calls(self) -> int:
        """Steps per call of the compiled step (1 as written until resolved: Keras' default)."""
        return self.steps_per_execution or 1

    def resolved(self, ran: Mapping[str, object] | None) -> RunSettings:
        """These settings with each one left as written (`AS_WRITTEN`, None) set to what a run of them trained
        with (`ran`: its summary's settings), so what follows measures a change from the script as written."""
        ran = ran or {}
        changes = {name: ran[name] for name in AS_WRITTEN if getattr(self, name) is None and ran.get(name) is not None}
        return self.with_(**changes) if changes else self

    def effective_val_every(self) -> int:
        """The given interval, else about a fifth of the run, rounded down to a multiple of 4 from 8 steps on: a
        script's own length gives odd fifths (96 steps: 19, 116: 23, primes), and no N steps per call fits a
        prime interval (a call never spans a validation point), so the steps_per_execution lever had nothing to
        try; 300 steps keep 60, 60 keep 12."""
        if self.val_every:
            return max(1, self.val_every)
        fifth = self.steps // 5
        return max(1, fifth - fifth % 4 if fifth >= 8 else fifth)

    def effective_profile(self, warmup_guess: int = 10) -> tuple[int, int] | None:
        """The profiler window: user's, or 20 steady steps after a warm-up guess, or None."""
        if self.profile == NO_PROFILE:
            return None
        if self.profile is not None:
            return self.profile
        start = min(warmup_guess + 5, self.steps // 3)
        stop = min(start + 20, self.steps * 2 // 3)
        return (start, stop) if 0 < start < stop else None

    def label(self) -> str:
        """Short human name: 'mixed_bfloat16 + XLA, batch 128' (a TPU's runs always say XLA: it compiles every step)."""
        parts = [(self.policy or "as written") + (" + XLA" if self.jit_compile or self.strategy == "tpu" else
                                                  " + XLA auto-clustering" if self.xla_autoclustering else "")]
        if self.batch_size:
            parts.append(f"batch {self.batch_size}")
        if self.steps_per_execution and self.steps_per_execution > 1:
            parts.append(f"{self.steps_per_execution} steps/call")
        if self.input_fixes:
            parts.append("tf.data fixes")
        return ", ".join(parts)

    def name_against(self, baseline: RunSettings | None) -> str:
        """What this configuration is, named by how it differs from the study's `baseline`: "20 steps per call",
        "mixed_bfloat16 + XLA", "XLA + batch 128 + learning rate x2"; the baseline's own configuration is
        "baseline: float32, batch 64". The one name of a configuration in every list of them (the compare view's
        table and legend, its CSV, the report's tables and chart, the wizard): a user reads what was tried, not a
        run folder ("04-spe20"), which stays a secondary detail. Without a baseline: `label()`."""
        if baseline is None:
            return self.label()
        changes = self.changes_from(baseline)
        return " + ".join(changes) if changes else f"baseline: {baseline.label()}"

    def changes_from(self, baseline: RunSettings) -> list[str]:
        """How this configuration differs from `baseline`, each change in words, in the checklist's order:
        precision, XLA, batch size and learning rate, steps per call, the automatic fixes, distribution.
        Measurement settings (steps, seed, validation) change no configuration and are never named."""
        out = []
        if (self.policy or "as written") != (baseline.policy or "as written"):
            out.append(self.policy or "the script's own policy")
        xla, was = self.jit_compile or self.strategy == "tpu", baseline.jit_compile or baseline.strategy == "tpu"
        if bool(xla) != bool(was):
            out.append("XLA" if xla else "no XLA")
        if bool(self.xla_autoclustering) != bool(baseline.xla_autoclustering):
            out.append("XLA auto-clustering" if self.xla_autoclustering else "no XLA auto-clustering")
        if self.batch_size != baseline.batch_size:
            out.append(f"batch {self.batch_size}" if self.batch_size else "the workload's batch size")
        if self.lr_scale != baseline.lr_scale:
            out.append(f"learning rate x{self.lr_scale:.3g}")  # x1.41 as the cards say it, not x1.41421
        calls, were = self.steps_per_execution or 1, baseline.steps_per_execution or 1
        if calls != were:
            out.append(f"{calls} steps per call" if calls > 1 else "1 step per call")
        for f, meta in declared():  # the automatic fixes, in the words the wizard's record uses
            if meta.shown_as and bool(getattr(self, f.name)) != bool(getattr(baseline, f.name)):
                out.append(meta.shown_as if getattr(self, f.name) else f"without {meta.shown_as}")
        if (self.strategy, self.devices, self.workers) != (baseline.strategy, baseline.devices, baseline.workers):
            out.append(f"{self.strategy} strategy" + (f", {self.devices} devices" if self.devices else "")
                       + (f", {self.workers} workers" if self.workers > 1 else ""))
        return out

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["profile"] = list(self.profile) if self.profile is not None else None
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RunSettings:
        """Tolerant of unknown keys (files written by newer versions)."""
        known = {f.name for f in fields(cls)}
        kwargs = {k: v for k, v in (d or {}).items() if k in known}
        if kwargs.get("profile") is not None:
            kwargs["profile"] = tuple(kwargs["profile"])
        return cls(**kwargs)

    def with_(self, **changes: Any) -> RunSettings:
        return replace(self, **changes)

    def as_written(self) -> RunSettings:
        """These settings with policy, XLA and steps per call left as the script writes them (`AS_WRITTEN`)."""
        return self.with_(**dict.fromkeys(AS_WRITTEN))


def declared() -> list[tuple[Field, Setting]]:
    """Every RunSettings field with its declaration, in declaration order."""
    return [(f, f.metadata["setting"]) for f in fields(RunSettings)]


def default_of(f: Field) -> Any:
    """A declared field's default value (a fresh one for a list or dict)."""
    return f.default_factory() if f.default_factory is not MISSING else f.default


def configuration_defaults() -> dict[str, Any]:
    """field -> default of every setting that makes a configuration (all but the `measurement` ones): runs
    equal in all of these are replicates of one configuration, whatever differs in how they were measured."""
    return {f.name: default_of(f) for f, s in declared() if not s.measurement}


def replicate_key(settings: RunSettings | Mapping[str, Any]) -> tuple[str, ...]:
    """Runs with equal keys are replicates of one configuration (what differs between them is only noise).

    Every declared setting counts but those that only say how a run is measured (`Setting.measurement`:
    the profiler window, validation cadence, how long it trains and whether it validates, so a trial's
    speed-only replicates measure the same configuration as its first, full-length pair); a key missing from
    an older file is its default.
    """
    doc = settings.to_dict() if isinstance(settings, RunSettings) else settings
    return tuple(str(doc.get(name, default)) for name, default in configuration_defaults().items())


def configuration_key(settings: RunSettings, batch_size: int | None = None) -> tuple[str, ...]:
    """`replicate_key` of run settings; `batch_size`: the batch the run trained at, when its settings left it to
    the workload (None). What a study indexes its profiles by: a configuration is profiled once
    (`trials.trial.Trial.profiled`)."""
    return replicate_key(settings.with_(batch_size=settings.batch_size or batch_size).to_dict())


# measurement settings that change neither what a run trains nor where it validates: the profiler window (its
# steps stay out of the throughput), whether the model is saved, the XLA cache folder (compile time only), and
# from which point the per-example results are kept (a run re-used as an accuracy reference needs them all:
# `Trial.reused_run`)
NOT_TRAINING = ("profile", "no_model", "xla_cache", "paired_from")


def training_key(settings: RunSettings, batch_size: int | None = None) -> tuple[tuple[str, str], ...]:
    """Runs with equal keys were trained the same way: the same configuration, seed, length, validation points
    and validation examples, so one stands for the other wherever a full-length run's curve and its samples
    are what is used (a trial's reference run that a study already trained: `Trial.finished`). Stricter than
    `compare.replicate_key`, which ignores how long a run trained and where it validated. `batch_size`: the
    batch the run trained at, when its settings left it to the workload (None)."""
    s = settings.with_(batch_size=settings.batch_size or batch_size, val_every=settings.effective_val_every())
    return tuple((f.name, repr(getattr(s, f.name))) for f, _ in declared() if f.name not in NOT_TRAINING)


def can_share_process(a: RunSettings, b: RunSettings, accelerator: bool = False) -> bool:
    """True when runs of `a` and `b` can be built and measured in one backend process (a trial's paired speed
    replicates, docs/MEASUREMENT.md "Paired speed replicates").

    Not when they differ in a `process_global` setting (auto-clustering and TF_XLA_FLAGS are TensorFlow's
    process-wide config; a strategy or cluster is made once per process), nor with a distribution strategy at
    all (its devices and workers belong to the process), nor for a training script run top-level (it can run
    only once per process), nor on an `accelerator` (a GPU or TPU trains them) when they differ in batch size: a paired process holds both arms in
    one device allocator, which keeps what it grew, so each arm's peak is the pair's and a larger batch could
    fail, or slow down near the limit, only because of its partner. The front ends that run elsewhere (a remote
    host) never ask.
    """
    from .workload_kind import is_script

    if any(getattr(a, f.name) != getattr(b, f.name) for f, s in declared() if s.process_global):
        return False
    if accelerator and a.batch_size != b.batch_size:
        return False
    if a.strategy != "default" or b.strategy != "default":
        return False
    return not (is_script(a.workload) or is_script(b.workload))


def with_audit_fixes(settings: RunSettings, raised: Iterable[str]) -> RunSettings:
    """`settings` with each audit fix switched on that applies to them (`auto_when`) and whose finding was
    raised: the automatic fixes the tuning policy adds to a candidate."""
    codes = set(raised)
    changes = {f.name: True for f, s in declared()
               if s.auto_when is not None and s.fixes in codes and not getattr(settings, f.name)
               and s.auto_when(settings)}
    return settings.with_(**changes) if changes else settings


def steps_trained(steps: int, per_call: int | None) -> int:
    """The steps a run asked for `steps` really trains at `per_call` steps per call (steps_per_execution): whole
    calls, so `steps` rounded up to a multiple of the call (450 steps at 22 a call train 462). What a run's
    progress counts to and what its card says it was to train (it read "step 462 / 450")."""
    n = max(1, per_call or 1)
    return -(-steps // n) * n


def fix_failures() -> dict[str, FixFailure]:
    """RunSettings field -> how a failure of that automatic fix is explained."""
    return {f.name: s.failure for f, s in declared() if s.failure is not None}


def automatic_fixes() -> dict[str, tuple[str, str]]:
    """finding code -> (RunSettings field, checkbox text) for each switch that fixes that finding by itself."""
    return {s.fixes: (f.name, f"Fix it in the next run: {s.offer}") for f, s in declared() if s.fixes}


def fixes_on(settings: RunSettings, not_applied: Iterable[str] = ()) -> list[str]:
    """The automatic fixes switched on in `settings`, as the user reads them; those in `not_applied` (fields,
    see `fixes_not_applied`) say the run went without them."""
    skipped = set(not_applied)
    return [s.shown_as + (": not applied" if f.name in skipped else "")
            for f, s in declared() if s.shown_as and getattr(settings, f.name)]


def fixes_not_applied(findings: Iterable[FindingDoc]) -> set[str]:
    """The RunSettings fields of the automatic fixes a run switched on but went without.

    The backend never fails a run over its own fix: it trains without it and
    says so in a FIX_NOT_APPLIED finding naming the fix's option ("--fix-head")
    and why. What a run really used is therefore its settings less these.
    """
    by_flag = {s.flag: f.name for f, s in declared() if s.fixes and s.flag}
    return {by_flag[flag] for flag in (str((f.get("data") or {}).get("fix") or f.get("where") or "")
                                       for f in findings if f.get("code") == F.FIX_NOT_APPLIED) if flag in by_flag}


def switched_on_rows(settings: RunSettings) -> list[tuple[str, str]]:
    """(row, value) for each setting away from its default that the report lists; "{}" in the value is the
    setting's value."""
    return [(s.report[0], s.report[1].format(value)) for f, s in declared()
            if s.report and (value := getattr(settings, f.name)) and value != f.default]


def overlaid(base: RunSettings | None, over: RunSettings | None) -> RunSettings | None:
    """`base` with every setting `over` gives (all but those it leaves None) in its place: a rung's settings
    under the study's recommendation (the report's settings to apply and changes)."""
    if base is None or over is None:
        return over or base
    return base.with_(**{f.name: value for f in fields(over) if (value := getattr(over, f.name)) is not None})
