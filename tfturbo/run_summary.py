"""summary.json: the one class that writes and reads a run's measured results.

The backend builds a `RunSummary` at the end of a run and writes `to_dict()`;
every reader gets the document through `RunSummary.from_dict()` (runfiles
does it when it loads a run), and a run that wrote no summary is rebuilt
from its events into the same class (`compare.effective_summary`). So the
keys, their types and the version live here only.

Reading is tolerant where it should be and strict where it must be: keys
this version does not know are kept as they are (a newer tfturbo wrote
them); a known key of the wrong type is dropped with a one-line problem
("summary.json: steps_per_s is a str, not a number; ignored"), so a corrupt
file still loads as far as it is valid.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any

from .as_written import AsWritten
from .errors import UserError
from .findings import FindingDoc, findings_in
from .learning_rate import OptimizerDoc, OptimizerRecord, Schedule
from .protocol import ErrorDoc, error_of
from .numbers import finite, num
from .settings import RunSettings
from .workload_kind import WorkloadDoc
from .stats import median_ci
from .summary import MIN_HAND_OVERS, MIN_INTERVAL_WINDOWS, interval_around, middle, preferred_metric

VERSION = 1

NUMBER, INT, STR, BOOL, LIST, DICT = "number", "whole number", "text", "true/false", "list", "mapping"
_CHECKS = {
    NUMBER: lambda v: finite(v),
    INT: lambda v: isinstance(v, int) and not isinstance(v, bool),
    STR: lambda v: isinstance(v, str),
    BOOL: lambda v: isinstance(v, bool),
    LIST: lambda v: isinstance(v, list),
    DICT: lambda v: isinstance(v, dict),
}


def _kind(name: str, kind: str):
    return field(default=None, metadata={"kind": kind})


@dataclass
class RunSummary:
    """A run's results. Every field may be None (not measured); `extra` holds keys this version does not know."""

    status: str | None = _kind("status", STR)
    settings: RunSettings | None = _kind("settings", DICT)  # the settings the run trained with, as it resolved them
    error: ErrorDoc | None = _kind("error", DICT)  # {kind, message, fix} of a failed run
    # step time: one run's own noise, for plots and the run's own table
    step_ms: dict | None = _kind("step_ms", DICT)  # {median, ci95, n, n_steady}
    steps_per_s: float | None = _kind("steps_per_s", NUMBER)
    step_ms_samples: list | None = _kind("step_ms_samples", LIST)
    steps_per_sample: int | None = _kind("steps_per_sample", INT)  # steps per call (steps_per_execution)
    # warm-up and the steady state (tfturbo.steady's final decision)
    warmup_s: float | None = _kind("warmup_s", NUMBER)
    warmup_steps: int | None = _kind("warmup_steps", INT)
    first_steady_step: int | None = _kind("first_steady_step", INT)
    # what verdicts use: steady samples over the wall time of the device-drained windows
    throughput: dict | None = _kind("throughput", DICT)  # {samples_per_s, steps, seconds, windows}
    windows: list | None = _kind("windows", LIST)  # [first step, last step, seconds]
    # [first step, seconds] of each call after warm-up that compiled an input shape seen once (a pass's partial
    # last batch): its window is in no figure (`trainer_backend.instrument.Instrument._one_off`); the seconds are
    # what that compilation cost the run
    one_off_compiles: list | None = _kind("one_off_compiles", LIST)
    replicas: int | None = _kind("replicas", INT)  # model replicas in sync (devices x workers)
    per_replica_batch_size: int | None = _kind("per_replica_batch_size", INT)
    paired_validation: dict | None = _kind("paired_validation", DICT)  # the accuracy gate's per-example file
    # False: the training data had no labels (a model with its own train_step trained on fit(x): an autoencoder,
    # a GAN); its gate judges its own loss (`tfturbo.trials.label_free`), from `batch_validation` or `training`
    labels: bool | None = _kind("labels", BOOL)
    batch_validation: dict | None = _kind("batch_validation", DICT)  # a label-free gate's per-batch loss file
    # a run-pair arm: [its samples/s, the other arm's] of the windows either side of each hand-over of the process
    # (`tfturbo.summary.hand_over_ratio`, the pair's speed ratio)
    hand_overs: list | None = _kind("hand_overs", LIST)
    steps_completed: int | None = _kind("steps_completed", INT)
    stopped_early: bool | None = _kind("stopped_early", BOOL)
    steps_saved: int | None = _kind("steps_saved", INT)
    wall_s: float | None = _kind("wall_s", NUMBER)
    # from the backend process's start to this summary: start-up, imports, build, warm-up, training (a run-pair
    # process's runs: the shared process so far); what a paired replicate's steady seconds are sized on
    process_s: float | None = _kind("process_s", NUMBER)
    # from the backend process's start to this run's fit(): start-up, the script up to its fit(), build; with
    # `warmup_s`, what a paired process spends per arm before it measures (`Trial.paired_overhead_s`)
    fit_start_s: float | None = _kind("fit_start_s", NUMBER)
    peak_memory_bytes: int | None = _kind("peak_memory_bytes", INT)
    memory_kind: str | None = _kind("memory_kind", STR)  # "device" | "host"
    # what the peak is when it is not this run's alone (a paired process: both arms share one allocator)
    memory_note: str | None = _kind("memory_note", STR)
    metrics: dict | None = _kind("metrics", DICT)  # the last training and validation metrics
    validation: list | None = _kind("validation", LIST)  # [{step, metrics}]
    # [{step, metrics}]: the training metrics as fit() reported them at the end of each validation interval (the
    # interval's mean where the model's metrics are, as Keras' are, reset each interval)
    training: list | None = _kind("training", LIST)
    learning_rate: float | None = _kind("learning_rate", NUMBER)  # the rate it starts at (a schedule's initial)
    # the schedule as the run trained it (after --lr-scale): {"class", "config"}; None for a constant rate
    # (`tfturbo.learning_rate`: every front end shows a run's rate through `learning_rate_text`)
    learning_rate_schedule: Schedule | None = _kind("learning_rate_schedule", DICT)
    # the script's own configuration, read before tfturbo changed anything (trainer_backend/as_written.py):
    # {"policy", "jit_compile" (as Keras resolved it), "jit_compile_given" ("auto", True, False),
    #  "steps_per_execution", "tf32", "callbacks" (passed to fit(), not run), "optimizer", "learning_rate" (a
    #  number, or a schedule in words), "learning_rate_schedule" ({"class", "config"})}; the settings left unset
    # (None) took these values
    as_written: AsWritten | None = _kind("as_written", DICT)
    # how the workload wrote its optimizer: {"class", "module", "given_as" (a compile() string), "learning_rate"
    # (its own, before --lr-scale), "default_learning_rate" (Keras'), "schedule" (its class), "schedule_config"
    # (its parameters, as written)}; the snippet's words. None when the step applies none found or several (then
    # `optimizers` lists them)
    optimizer: OptimizerDoc | None = _kind("optimizer", DICT)
    # every optimizer the training step applies, found on the model (trainer_backend/optimizer_code.py):
    # [{"attribute", "class", "module", "given_as", "learning_rate": number | {"schedule", "config"} | None,
    #   "default_learning_rate"}]; [] with `optimizer_not_found` saying why
    optimizers: list[OptimizerRecord] | None = _kind("optimizers", LIST)
    optimizer_not_found: str | None = _kind("optimizer_not_found", STR)
    loss_scale: dict | None = _kind("loss_scale", DICT)
    xla_active: bool | None = _kind("xla_active", BOOL)  # the run trained under XLA (jit_compile, or clusters)
    xla_clusters: int | None = _kind("xla_clusters", INT)  # auto-clustering: XLA cluster launches in the step
    output_dtypes: list | None = _kind("output_dtypes", LIST)  # compute dtypes of the model's outputs (its head)
    retries: list | None = _kind("retries", LIST)  # a multi-worker run retried once: [{attempt, reason, dir}]
    profile: dict | None = _kind("profile", DICT)
    checkpoint: str | None = _kind("checkpoint", STR)
    findings: list[FindingDoc] | None = _kind("findings", LIST)  # each a mapping (`findings.findings_in`)
    # compute used: FLOPs per step and the share of the measured matmul ceiling
    flops_per_step: float | None = _kind("flops_per_step", NUMBER)
    flops_source: str | None = _kind("flops_source", STR)
    mfu: float | None = _kind("mfu", NUMBER)  # one device's achieved FLOP/s over its ceiling (never capped)
    mfu_note: str | None = _kind("mfu_note", STR)  # why an MFU above 100% cannot be right
    mfu_unknown: str | None = _kind("mfu_unknown", STR)  # why there is no MFU (e.g. a loop of unknown length)
    ceiling_dtype: str | None = _kind("ceiling_dtype", STR)
    ceiling_flops: float | None = _kind("ceiling_flops", NUMBER)
    achieved_flops: float | None = _kind("achieved_flops", NUMBER)
    # float32 matmuls ran as TF32 on Tensor Cores (an Ampere or later GPU with TensorFlow's TF32 on); False: TF32
    # off on such a GPU; None: no TF32 on this device
    tf32: bool | None = _kind("tf32", BOOL)
    versions: dict | None = _kind("versions", DICT)
    device: str | None = _kind("device", STR)
    workload: WorkloadDoc | None = _kind("workload", DICT)
    extra: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list, repr=False, compare=False)  # what from_dict dropped

    def to_dict(self) -> dict[str, Any]:
        """The summary.json document: version first, then every known field, then the unknown ones as read."""
        doc: dict[str, Any] = {"v": VERSION}
        for f in _known():
            doc[f.name] = getattr(self, f.name)
        if self.settings is not None:
            doc["settings"] = self.settings.to_dict()
        return with_extra(doc, self.extra)

    @classmethod
    def from_dict(cls, doc: dict[str, Any] | None, source: str = "summary.json") -> RunSummary:
        """The summary in `doc`; a known key of the wrong type is dropped and named in `problems`."""
        out = cls()
        kinds = {f.name: f.metadata["kind"] for f in _known()}
        known = read_into(out, {k: v for k, v in doc.items() if k != "v"} if isinstance(doc, dict) else doc, kinds,
                          source)
        settings = known.pop("settings", None)
        if known.get("findings") is not None:
            known["findings"] = findings_in(known["findings"])
        if known.get("error") is not None:  # an older run's error is read as its words say (`error_of`)
            known["error"] = error_of(known["error"])
        for key, value in known.items():
            setattr(out, key, value)
        if settings is not None:
            try:
                out.settings = RunSettings.from_dict(settings)
            except (UserError, TypeError, ValueError) as e:
                out.problems.append(f"{source}: its settings are not valid ({e}); ignored")
        return out

    # ---- the numbers every front end and verdict reads from a summary (the rules beside them: tfturbo.summary)

    @property
    def batch_size(self) -> int:
        """The global batch the run trained with (1 when not known)."""
        return int((self.settings.batch_size if self.settings else None) or 1)

    @property
    def steady_samples(self) -> list[float]:
        """The steady step times in ms (`step_ms_samples`), the finite ones."""
        return [float(s) for s in self.step_ms_samples or [] if finite(s)]

    @property
    def samples_per_s(self) -> float | None:
        """The run's throughput in samples/s, the one figure every front end shows and every verdict compares.

        The steady-window statistic the backend wrote (`throughput.samples_per_s`,
        `summary.window_throughput`); for older runs without windows, the median
        step rate × batch.
        """
        tp = self.throughput
        if isinstance(tp, dict) and finite(tp.get("samples_per_s")) and tp["samples_per_s"] > 0:
            return float(tp["samples_per_s"])
        sps = self.steps_per_s
        return float(sps) * self.batch_size if finite(sps) and sps > 0 else None

    @property
    def step_rate(self) -> float | None:
        """The same throughput in steps/s (`samples_per_s` / batch): never a second figure."""
        rate = self.samples_per_s
        return rate / self.batch_size if rate else None

    @property
    def throughput_ci(self) -> tuple[float, float] | None:
        """The run's own throughput interval in samples/s by the one rule (`summary.MIN_INTERVAL_WINDOWS`,
        `summary.interval_around`), from `throughput`: what `window_throughput` writes, and for a summary
        written before the rule (an interval from 3 windows) the same rule on read. None: no interval to show."""
        tp = self.throughput
        if not isinstance(tp, dict):
            return None
        windows = tp.get("windows")
        if not isinstance(windows, int) or windows < MIN_INTERVAL_WINDOWS:
            return None
        return interval_around(num(tp.get("samples_per_s")), tp.get("ci95"))

    def step_time(self) -> tuple[float, tuple[float, float]]:
        """Median step time in ms with its 95% interval (from `step_ms`, else recomputed from the samples)."""
        st = self.step_ms or {}
        if isinstance(st.get("median"), (int, float)) and isinstance(st.get("ci95"), (list, tuple)):
            return float(st["median"]), (float(st["ci95"][0]), float(st["ci95"][1]))
        return median_ci(self.steady_samples)

    @property
    def median_step_ms(self) -> float | None:
        """`step_ms.median` as written, None when the run wrote none."""
        return num((self.step_ms or {}).get("median"))

    @property
    def hand_over_ratio(self) -> float | None:
        """A run's speed over the other arm of its `run-pair` process, from the windows either side of each
        hand-over.

        Each hand-over (`hand_overs`: [this run's samples/s, the other's] of the
        last steady window before the baton changed hands and the first after)
        compares two windows a moment apart, which the machine's speed at that
        moment moves alike; the median over the hand-overs (in log) keeps one odd
        hand-over from deciding. The arms' own median rates can sit in different
        stretches of a machine whose speed changes mid-process: on this stack that
        made one process's ratio 0.95 where its hand-overs and the trial's other
        pairs said 1.23–1.30, and it halved the spread of a trial's pair ratios
        (benchmarks/RESULTS.md, Trial efficiency). None: not a paired run, or fewer than
        `summary.MIN_HAND_OVERS` hand-overs with a steady window on both sides.
        """
        logs = self._hand_over_logs()
        return math.exp(middle(logs)) if len(logs) >= MIN_HAND_OVERS else None

    @property
    def hand_over_error(self) -> float | None:
        """The standard error, in log, of `hand_over_ratio`: the hand-overs' SD / √count, the pair's own
        measurement error (the floor of a trial's spread, `stats.replicate_ratio_ci`); None without
        `hand_over_ratio`.

        The plain mean's error, not the median's larger asymptotic one (√(π/2)
        times it): the hand-overs are heavy-tailed, their SD is inflated by the
        odd one the median ignores, and over the 54 paired processes of two
        default transformer tunes this error's root mean square (3.5%) matched
        the spread of the pairs' ratios within a trial (3.6%), where the median's
        formula said 4.4% (benchmarks/RESULTS.md, Trial efficiency).
        """
        logs = self._hand_over_logs()
        if len(logs) < MIN_HAND_OVERS:
            return None
        mean = sum(logs) / len(logs)
        return math.sqrt(sum((v - mean) ** 2 for v in logs) / (len(logs) - 1) / len(logs))

    def _hand_over_logs(self) -> list[float]:
        rows = [r for r in self.hand_overs or [] if isinstance(r, (list, tuple)) and len(r) == 2]
        return [math.log(own / other) for own, other in rows
                if finite(own) and finite(other) and own > 0 and other > 0]

    def primary_metric(self, prefer: str | None = None) -> tuple[str, float, bool] | None:
        """(name, value, higher_is_better) of the metric the accuracy gate uses (`summary.preferred_metric`),
        or None."""
        metrics = self.metrics or {}
        found = preferred_metric([name for name, value in metrics.items() if finite(value)], prefer)
        if found is None:
            return None
        return found[0], float(metrics[found[0]]), found[1]

    def val_delta(self, candidate: RunSummary) -> tuple[str, float] | None:
        """(metric, candidate - this run) on this (baseline) run's primary metric; None if either lacks it.

        The sign is raw (for accuracy, negative is worse; for loss, positive is worse).
        """
        base = self.primary_metric()
        if base is None:
            return None
        value = (candidate.metrics or {}).get(base[0])
        if not finite(value):
            return None
        return base[0], float(value) - base[1]

    def memory_ratio(self, candidate: RunSummary) -> float | None:
        """The candidate's peak memory over this (baseline) run's; None when either has none."""
        a, b = self.peak_memory_bytes, candidate.peak_memory_bytes
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and a > 0:
            return float(b) / float(a)
        return None


def _known():
    return [f for f in fields(RunSummary) if "kind" in f.metadata]


def read_into(out: Any, doc: Any, kinds: dict[str, str], source: str) -> dict[str, Any]:
    """The known keys of `doc` (`read_typed`) for the document object `out`, whose `extra` takes the unknown
    ones and `problems` what was dropped; {} when `doc` is not a mapping, said in `problems`. Where every
    tolerant reader of a tfturbo document starts (`RunSummary`, `Environment`, `InputProbe`)."""
    if not isinstance(doc, dict):
        out.problems.append(f"{source} is not a mapping; nothing in it was read")
        return {}
    known, out.extra = read_typed(doc, kinds, source, out.problems)
    return known


def with_extra(doc: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """`doc` with the keys a newer version wrote and this one does not know, as read (never over a known one)."""
    for key, value in extra.items():
        doc.setdefault(key, value)
    return doc


def read_typed(doc: dict[str, Any], kinds: dict[str, str], source: str, problems: list[str]
               ) -> tuple[dict[str, Any], dict[str, Any]]:
    """(known, unknown): the keys of `doc` that `kinds` names, each of its kind or None, and the rest as read.

    The one rule for every tfturbo file read back into a class: a newer
    version's keys survive untouched, and a known key of the wrong type is
    dropped with one line in `problems`, so the rest of the file still loads.
    """
    known: dict[str, Any] = {}
    unknown: dict[str, Any] = {}
    for key, value in doc.items():
        kind = kinds.get(key)
        if kind is None:
            unknown[key] = value
        elif value is None or _CHECKS[kind](value):
            known[key] = value
        else:
            problems.append(f"{source}: {key} is {type(value).__name__} {value!r:.40}, not a {kind}; ignored")
    return known, unknown
