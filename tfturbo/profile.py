"""profile.json: where a run's step time went, read from its profiler capture (docs/MEASUREMENT.md, "Profiles").

The backend reads the capture once the profiler has stopped and training is
over (`trainer_backend/profile_capture_read.py`, in a child process) and
writes this document into the run directory; the wizard, `compare` and the
report read it through `Profile.load` and never see xprof. So the keys, the
op categories (`categorize`) and the comparison of two profiles
(`compare`) live here only.

Times are op *self* times per profiled step, summed over the threads (CPU) or
the device streams that ran them: on a CPU several ops run at once, so the op
time can exceed the wall time of a step (`wall_ms_per_step`). Shares are of
the op time; a change between two runs is given relative to the category's
own time and in points of the reference run's op time, so the points of all
categories add up to the whole change.

Anything the capture cannot answer is "not available" with the reason
(`available=False`, `reason`), per part, never an error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence, TypedDict, cast

from .formats import FormatVersionError, check_version
from .numbers import finite, num

FORMAT = "tfturbo.profile"
VERSION = 1
FILE = "profile.json"

MATMUL, ATTENTION, NORMALIZATION, ELEMENTWISE, CASTS, DATA_MOVEMENT, XLA_CLUSTERS, INPUT, OTHER = (
    "matmul_conv", "attention", "normalization", "elementwise", "casts", "data_movement", "xla_clusters", "input",
    "other")
CATEGORIES = (MATMUL, ATTENTION, NORMALIZATION, ELEMENTWISE, CASTS, DATA_MOVEMENT, XLA_CLUSTERS, INPUT, OTHER)
LABELS = {MATMUL: "matmul/conv", ATTENTION: "attention", NORMALIZATION: "normalization",
          ELEMENTWISE: "elementwise", CASTS: "casts", DATA_MOVEMENT: "data movement",
          XLA_CLUSTERS: "XLA clusters (compute)", INPUT: "input", OTHER: "other"}
HEAVY = (MATMUL, ATTENTION)  # the math a 16-bit policy is meant to speed up
INPUT_NOTE_SHARE = 0.01  # an input share below 1% needs no word beside the probe's
# the step's own math: a table of TensorFlow ops without any holds only the input and the runtime around XLA
STEP_MATH = (MATMUL, ATTENTION, NORMALIZATION, ELEMENTWISE, CASTS, DATA_MOVEMENT)

SOURCE_OP_STATS = "framework_op_stats"  # TensorFlow ops (graph mode)
# below this share of the measured step time, a CPU's op rows miss the step's compute: a jit_compile=True step run
# by the eager runtime appears in no op row at all (issue-42 walk: 0.17 ms of op time in a 4.16 ms step)
OP_TIME_FLOOR = 0.25
# the ops that compile and run XLA's clusters (_XlaCompile/_XlaRun of auto-clustering, XlaLaunch/XlaLaunchV2 of a
# jit_compile=True function): their time is the compiled step's compute, never input (issue 42: under XLA the
# compiled time was read as "input 97%")
XLA_LAUNCH = re.compile(r"Xla(Run|Launch|Compile)")
SOURCE_XLA_TRACE = "xla_trace"  # XLA-compiled code: the HLO ops of the trace (the op stats hold no XLA ops on a CPU)

# ---------------------------------------------------------------- the categories (one rule)

_PREFIX = re.compile(r"^_(MklNative|MklFused|MklQuantized|Mkl|Fused)?")
_MATMUL_TYPES = re.compile(r"^(Fused)?(Batch)?MatMul|^Einsum|^(Fused)?Conv|^DepthwiseConv|^Conv\dD|Gemm|^Dot")
_ATTENTION_TYPES = re.compile(r"Attention|^Einsum|^(Batch)?MatMul|^Softmax")
_PROJECTION = re.compile(r"^(query|key|value|attention_output|output_dense|out_proj|q_proj|k_proj|v_proj)(_\d+)?$")
_NORM_TYPES = re.compile(r"BatchNorm|LayerNorm|GroupNorm|InstanceNorm|Rsqrt")
_NORM_SCOPE = re.compile(r"normali[sz]ation|(^|_)norm(_|$)|layernorm|batchnorm|rmsnorm")
_CAST_TYPES = re.compile(r"^Cast$|^convert$")
_INPUT_TYPES = re.compile(r"^Dataset|^Iterator|^IteratorGetNext|^OptionalFromValue|^OptionalGetValue|Infeed|"
                          r"^MultiDeviceIterator|^PrefetchDataset|^MemcpyHToD$")
_MOVEMENT_TYPES = re.compile(r"^(Transpose|Reshape|Tile|Concat|Split|Slice|StridedSlice|Gather|Pad|MirrorPad|Pack|"
                             r"Unpack|Identity|Copy|Bitcast|ExpandDims|Squeeze|Fill|BroadcastTo|Scatter|"
                             r"TensorScatter|UnsortedSegmentSum|ResourceGather|Send|Recv|_Send|_Recv|Memcpy|"
                             r"ZerosLike|OnesLike|Shape|Reverse|OneHot|Where|Range)")
_ELEMENTWISE_TYPES = re.compile(r"^(Add|AddV2|AddN|Sub|Mul|Div|RealDiv|DivNoNan|FloorDiv|FloorMod|Mod|Neg|Abs|"
                                r"Square|SquaredDifference|Sqrt|Pow|Exp|Log|Log1p|Tanh|Sigmoid|Relu|Relu6|Elu|"
                                r"Selu|Gelu|LeakyRelu|Softplus|Softsign|Erf|Maximum|Minimum|Select|SelectV2|"
                                r"BiasAdd|Sum|Mean|Max|Min|Prod|All|Any|ArgMax|ArgMin|Softmax|LogSoftmax|"
                                r"SparseSoftmaxCrossEntropyWithLogits|SoftmaxCrossEntropyWithLogits|Equal|"
                                r"NotEqual|Less|LessEqual|Greater|GreaterEqual|Logical|Sign|Reciprocal|Inv|"
                                r"Round|Floor|Ceil|ClipByValue|Bitwise|Cumsum|L2Loss|Dropout)")
# HLO op names of XLA code, as the trace names them ("dot.3", "MatMul.36", "transpose_copy_fusion.8")
_HLO_MATMUL = {"dot", "convolution", "matmul", "batchmatmul", "einsum", "conv", "gemm", "cublas", "ynn"}
_HLO_MOVEMENT = {"transpose", "copy", "bitcast", "broadcast", "gather", "concatenate", "slice", "dynamic", "pad",
                 "reshape", "iota", "scatter", "reverse", "tuple", "get", "element", "update", "parameter"}
_HLO_CAST = {"convert"}


def base_type(op_type: str) -> str:
    """'_MklNativeFusedMatMul' → 'MatMul', '_MklEinsum' → 'Einsum': the op as TensorFlow users know it."""
    t = _PREFIX.sub("", op_type or "")
    return re.sub(r"^Fused(?=MatMul|Conv|BatchMatMul)", "", t)


def short_name(name: str) -> str:
    """An op's name without the callers the profile puts in front: 'StatefulPartitionedCall/gradient_tape/…/MatMul'
    → 'gradient_tape/…/MatMul'."""
    return "/".join(p for p in (name or "").split("/") if p != "StatefulPartitionedCall")


def _scopes(name: str) -> list[str]:
    return [s.lower() for s in (name or "").split("/")[:-1]]


def categorize(op_type: str, name: str = "", source: str = SOURCE_OP_STATS) -> str:
    """The category a user understands for one op: its type first, then the layer scope in its name (an op under
    `multi_head_attention/` that is not a projection is attention; one under `layer_normalization/` is
    normalization)."""
    if source == SOURCE_XLA_TRACE:
        return _categorize_hlo(name or op_type)
    t = base_type(op_type)
    if XLA_LAUNCH.search(op_type or ""):  # a compiled cluster's time, whatever it computes inside
        return XLA_CLUSTERS
    if _INPUT_TYPES.search(t):
        return INPUT
    if _CAST_TYPES.search(t):
        return CASTS
    scopes = _scopes(name)
    in_attention = any("attention" in s for s in scopes) and not any(_PROJECTION.match(s) for s in scopes)
    if "Attention" in t or (in_attention and _ATTENTION_TYPES.search(t)):
        return ATTENTION
    if _MATMUL_TYPES.search(t):
        return MATMUL
    if _NORM_TYPES.search(t) or any(_NORM_SCOPE.search(s) for s in scopes):
        return NORMALIZATION
    if _MOVEMENT_TYPES.search(t):
        return DATA_MOVEMENT
    if _ELEMENTWISE_TYPES.search(t):
        return ELEMENTWISE
    return OTHER


def _categorize_hlo(name: str) -> str:
    if _INPUT_TYPES.search(name):  # the input ops beside the compiled code ("Iterator::Root::Prefetch")
        return INPUT
    parts = set(re.split(r"[_\-.]", re.sub(r"\.\d+$", "", name).lower())) - {"fusion", "", "1", "2", "3"}
    parts = {re.sub(r"\d+$", "", p) for p in parts}
    if parts & _HLO_MATMUL:
        return MATMUL
    if parts & _HLO_CAST and parts <= _HLO_MOVEMENT | _HLO_CAST | {"compare"}:
        return CASTS
    if parts and parts <= _HLO_MOVEMENT:
        return DATA_MOVEMENT
    return ELEMENTWISE if parts else OTHER


# ---------------------------------------------------------------- the document

class ProfilePart(TypedDict, total=False):
    """A part of profile.json read from one xprof tool (`sixteen_bit`, `step_breakdown`, `compile`): available with
    its figures, or not with the reason."""

    available: bool
    reason: str  # why it is not available
    note: str  # what its figures are, when xprof's own (`verified` False: not checked against the step's timing)
    verified: bool
    source: str  # how it was read
    # sixteen_bit: the share of matmul/conv and attention time in 16-bit, and the float32 ops that took the most
    share: float
    float32_ops: list[str]
    float32_share_by_op: list[list[str | float]]  # [op, share]
    tensor_core_share: float  # a GPU's: xprof's Tensor Core guess from kernel names
    tensor_core_source: str
    # step_breakdown: xprof's overview page, ms per step by where the time went
    step_ms: float
    ms: dict[str, float | None]
    statements: dict[str, str]
    # compile: compilation inside the profiler window
    ms_per_step: float | None


def not_available(reason: str) -> ProfilePart:
    """A part of the profile the capture cannot answer, with the reason."""
    return {"available": False, "reason": reason}


def _part(value: Any, name: str) -> ProfilePart:
    """A part as profile.json holds it, when it says whether it is available (the one reader of a part)."""
    if isinstance(value, dict) and isinstance(value.get("available"), bool):
        return cast(ProfilePart, value)
    return not_available(f"{FILE} has no valid {name}")


@dataclass
class OpRow:
    """One op (or op type when `name` is empty) with its self time per profiled step."""

    type: str
    category: str
    ms_per_step: float
    share: float  # of the profile's op time
    name: str = ""
    occurrences: int | None = None
    sixteen_bit: bool | None = None  # None: not known (not a matmul/attention op, or no layer found)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"type": self.type, "category": self.category, "ms_per_step": self.ms_per_step,
                             "share": self.share}
        if self.name:
            d["name"] = self.name
        if self.occurrences is not None:
            d["occurrences"] = self.occurrences
        if self.sixteen_bit is not None:
            d["sixteen_bit"] = self.sixteen_bit
        return d

    @classmethod
    def from_dict(cls, d: Any) -> OpRow | None:
        if not isinstance(d, dict) or not finite(d.get("ms_per_step")):
            return None
        category = d.get("category")
        category = category if category in CATEGORIES else OTHER
        occ = d.get("occurrences")
        return cls(str(d.get("type", "")), category, float(d["ms_per_step"]), num(d.get("share")) or 0.0,
                   str(d.get("name", "")), int(occ) if finite(occ) else None,
                   d["sixteen_bit"] if isinstance(d.get("sixteen_bit"), bool) else None)


@dataclass
class Profile:
    """A run's profile.json. `available=False` with `reason` when the capture could not be read at all."""

    available: bool
    reason: str = ""
    device: str = ""  # xprof's hardware type: CPU_ONLY, GPU, TPU
    source: str = SOURCE_OP_STATS
    steps: int | None = None  # profiled steps
    window: list[int] | None = None  # [first step, stop step) of the profiler window
    wall_ms_per_step: float | None = None  # the median step time measured inside the window
    op_ms_per_step: float | None = None  # the sum of the categories
    coverage: float | None = None  # share of the capture's op time in the rows xprof returned
    categories: dict[str, float] = field(default_factory=dict)  # category → ms per step
    top_types: list[OpRow] = field(default_factory=list)
    top_ops: list[OpRow] = field(default_factory=list)
    sixteen_bit: ProfilePart = field(default_factory=lambda: not_available("not read"))
    step_breakdown: ProfilePart = field(default_factory=lambda: not_available("not read"))
    compile: ProfilePart = field(default_factory=lambda: not_available("not read"))
    tools: dict[str, str] = field(default_factory=dict)  # xprof tool → "ok" or "not available: why"
    read_s: float | None = None  # what reading the capture cost (after training: never in the measurement)
    problems: list[str] = field(default_factory=list)  # what was wrong in the file (not written)

    @classmethod
    def unavailable(cls, reason: str, **kwargs: Any) -> Profile:
        return cls(available=False, reason=reason, **kwargs)

    # -- derived figures (one place each) ------------------------------------------------------

    def share(self, category: str) -> float:
        total = self.op_ms_per_step or 0.0
        return self.categories.get(category, 0.0) / total if total > 0 else 0.0

    def ranked_categories(self) -> list[tuple[str, float]]:
        """(category, ms per step), largest first, the empty ones left out."""
        return sorted(((c, ms) for c, ms in self.categories.items() if ms > 0), key=lambda kv: -kv[1])

    def sixteen_bit_share(self) -> float | None:
        return num(self.sixteen_bit.get("share")) if self.sixteen_bit.get("available") else None

    @property
    def xla_compiled(self) -> bool:
        """The profiled step ran XLA-compiled code (jit_compile's HLO ops, or auto-clustering's launches)."""
        return self.source == SOURCE_XLA_TRACE or any(XLA_LAUNCH.search(r.type or "") for r in self.top_types)

    @property
    def misses_compute(self) -> bool:
        """A CPU profile of TensorFlow ops whose op time is a small part of its measured step: the step's compiled
        (XLA) code ran outside the op rows, so its categories are the tf.data ops beside it, not where the step's
        time went. Profiles read before the reader looked at XLA's trace for such a step (issue-42 walk: "input
        83%, matmul 0%" in 0.17 ms of a 4.16 ms step) are shown with this said, and compared on totals only."""
        math = sum(self.categories.get(c, 0.0) for c in STEP_MATH if c != DATA_MOVEMENT)  # tf.data's GatherV2 aside
        return (self.available and self.source == SOURCE_OP_STATS and self.device == "CPU_ONLY" and math == 0
                and bool(self.wall_ms_per_step) and (self.op_ms_per_step or 0.0) < OP_TIME_FLOOR
                * (self.wall_ms_per_step or 0.0))

    def source_note(self) -> str:
        """What the op times leave out, for a profile read from XLA's compiled ops ('' otherwise)."""
        if self.source == SOURCE_XLA_TRACE:
            return ("XLA-compiled code, read op by op from the trace: the XLA runtime's time between its ops is not "
                    "in the categories")
        if self.misses_compute:
            return (f"the op rows hold {_ms(self.op_ms_per_step or 0.0)} ms of the {_ms(self.wall_ms_per_step or 0.0)}"
                    " ms step: the rest is compiled (XLA) code that ran outside them, which is compute, not input; "
                    "these categories are only the ops beside it")
        return ""

    def input_note(self) -> str:
        """What the input category is, for a profile that has some ('' otherwise). Its share is the tf.data ops' own
        work summed over the pipeline's threads, which run while the step computes when the pipeline prefetches:
        not the time a step waited for data, which the input probe measures. Issue 42: "input 57%" here beside the
        probe's "0% waiting for input" read as a contradiction; both were right about different things."""
        if not self.available or self.share(INPUT) < INPUT_NOTE_SHARE:
            return ""
        return ("input is the tf.data pipeline's own work, summed over its threads: with prefetch it runs while the "
                "step computes, so its share is not time the step waited for data (the input probe measures that "
                "wait)")

    def headline(self) -> str:
        """'matmul/conv 41%, attention 22%, elementwise 18%' (top three), or 'not available: why'."""
        if not self.available:
            return f"not available: {self.reason}"
        return ", ".join(f"{LABELS[c]} {100 * self.share(c):.0f}%" for c, _ in self.ranked_categories()[:3])

    # -- the file ------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT, "v": VERSION, "available": self.available, "reason": self.reason,
            "device": self.device, "source": self.source, "steps": self.steps, "window": self.window,
            "wall_ms_per_step": self.wall_ms_per_step, "op_ms_per_step": self.op_ms_per_step,
            "coverage": self.coverage, "categories": dict(self.categories),
            "top_types": [r.to_dict() for r in self.top_types], "top_ops": [r.to_dict() for r in self.top_ops],
            "sixteen_bit": self.sixteen_bit, "step_breakdown": self.step_breakdown, "compile": self.compile,
            "tools": dict(self.tools), "read_s": self.read_s,
        }

    @classmethod
    def from_dict(cls, d: Any) -> Profile:
        """Lenient: a wrong or missing key is dropped with a problem; a newer version is read as far as it goes."""
        if not isinstance(d, dict):
            return cls.unavailable(f"{FILE} is not a JSON object")
        problems: list[str] = []
        if d.get("format") != FORMAT:
            return cls.unavailable(f"{FILE} is not a tfturbo profile")
        try:
            check_version(d.get("v"), VERSION, FILE)  # the one rule: older read, a newer major refused
        except FormatVersionError as exc:
            return cls.unavailable(str(exc))
        categories: dict[str, float] = {}
        for c, ms in (d.get("categories") or {}).items() if isinstance(d.get("categories"), dict) else ():
            if c in CATEGORIES and finite(ms):
                categories[c] = float(ms)
            else:
                problems.append(f"{FILE}: category {c!r} ignored")
        window = d.get("window")
        steps = d.get("steps")
        tools = d.get("tools")
        tools = tools if isinstance(tools, dict) else {}
        return cls(
            available=d.get("available") is True and bool(categories),
            reason=str(d.get("reason") or ("" if categories else "no op times in the profile")),
            device=str(d.get("device") or ""),
            source=str(d.get("source") or SOURCE_OP_STATS),
            steps=int(steps) if finite(steps) else None,
            window=[int(v) for v in window] if isinstance(window, list) and len(window) == 2
            and all(finite(v) for v in window) else None,
            wall_ms_per_step=num(d.get("wall_ms_per_step")),
            op_ms_per_step=num(d.get("op_ms_per_step")) if categories else None,
            coverage=num(d.get("coverage")),
            categories=categories,
            top_types=[r for r in map(OpRow.from_dict, d.get("top_types") or []) if r is not None],
            top_ops=[r for r in map(OpRow.from_dict, d.get("top_ops") or []) if r is not None],
            sixteen_bit=_part(d.get("sixteen_bit"), "sixteen_bit"),
            step_breakdown=_part(d.get("step_breakdown"), "step_breakdown"),
            compile=_part(d.get("compile"), "compile"),
            tools={str(k): str(v) for k, v in tools.items()},
            read_s=num(d.get("read_s")),
            problems=problems,
        )

    def save(self, run_dir: Path) -> None:
        from .runfiles import write_json_atomic

        write_json_atomic(Path(run_dir) / FILE, self.to_dict())

    @classmethod
    def load(cls, run_dir: Path | str | None) -> Profile:
        """The run's profile.json; not available (with the reason) when there is none or it is unreadable."""
        if run_dir is None:
            return cls.unavailable("no run")
        from .runfiles import read_json

        path = Path(run_dir) / FILE
        try:
            found = path.exists()
        except OSError:  # a name no folder can have (too long): no such run
            found = False
        if not found:
            return cls.unavailable("this run captured no profile (trial replicates run without the profiler, "
                                   "or the window was turned off)")
        warnings: list[str] = []
        data = read_json(path, warnings)
        if data is None:
            return cls.unavailable("; ".join(warnings) or f"{FILE} could not be read")
        return cls.from_dict(data)


def build(rows: list[tuple[str, str, float, int | None, bool | None]], steps: int, source: str, *,
          coverage: float | None = None, top: int = 12, **kwargs: Any) -> Profile:
    """A Profile from (type, name, self µs over the window, occurrences, 16-bit) rows: categories, top types and
    top ops per step. The backend's reader calls this with the rows it read from xprof."""
    steps = max(1, int(steps))
    categories = {c: 0.0 for c in CATEGORIES}
    by_type: dict[tuple[str, str], float] = {}
    ops: list[OpRow] = []
    for op_type, name, self_us, occurrences, sixteen in rows:
        if not finite(self_us) or self_us <= 0:
            continue
        category = categorize(op_type, name, source)
        ms = self_us / 1000.0 / steps
        categories[category] += ms
        key = (base_type(op_type) if source == SOURCE_OP_STATS else re.sub(r"\.\d+$", "", op_type), category)
        by_type[key] = by_type.get(key, 0.0) + ms
        ops.append(OpRow(op_type, category, ms, 0.0, name, occurrences,
                         sixteen if category in HEAVY else None))
    total = sum(categories.values())
    if total <= 0:
        return Profile.unavailable("the profiler recorded no op time in its window", source=source, steps=steps,
                                   **kwargs)
    for r in ops:
        r.share = r.ms_per_step / total
    types = [OpRow(t, c, ms, ms / total) for (t, c), ms in by_type.items()]
    return Profile(available=True, source=source, steps=steps, op_ms_per_step=total, coverage=coverage,
                   categories={c: ms for c, ms in categories.items()},
                   top_types=sorted(types, key=lambda r: -r.ms_per_step)[:top],
                   top_ops=sorted(ops, key=lambda r: -r.ms_per_step)[:top], **kwargs)


def sixteen_bit_from_ops(rows: list[tuple[str, str, float, int | None, bool | None]], source: str,
                         how: str, heavy: set[str] | None = None) -> ProfilePart:
    """The share of matmul/conv and attention time computed in 16-bit, from rows whose `sixteen_bit` is known,
    with the float32 ops that took the most of it. `heavy`: the names of the heavy ops when something better
    than the op's category knows them (XLA's HLO: a fusion named `loop_fusion.3` may hold the dot)."""
    known = [(t, n, us, s) for t, n, us, _o, s in rows
             if (n in heavy if heavy is not None else categorize(t, n, source) in HEAVY)
             and s is not None and finite(us) and us > 0]
    total = sum(us for *_x, us, _s in known)
    if total <= 0:
        return not_available("no matmul/conv or attention op could be matched to a compute dtype")
    float32 = sorted(((n or t, us) for t, n, us, s in known if not s), key=lambda kv: -kv[1])
    return {"available": True, "share": sum(us for *_x, us, s in known if s) / total, "source": how,
            "float32_ops": [n for n, _us in float32[:8]],
            "float32_share_by_op": [[n, us / total] for n, us in float32[:8]]}


# ---------------------------------------------------------------- two profiles compared

@dataclass
class CategoryChange:
    category: str
    base_ms: float
    run_ms: float

    @property
    def relative(self) -> float | None:
        """Change of the category's own time: −0.45 is 45% less; None when the reference had none to speak of."""
        return self.run_ms / self.base_ms - 1 if self.base_ms > 0 else None


@dataclass
class ProfileChange:
    """A run's profile against a reference's: per category, in ms per step and in points of the reference's op
    time (the points of all categories add up to the whole change)."""

    base: Profile
    run: Profile
    changes: list[CategoryChange]
    note: str = ""  # how the categories were compared, when not one to one
    comparable: bool = True  # False: one run is XLA-compiled and the other not; only the totals compare

    def points(self, change: CategoryChange) -> float:
        total = self.base.op_ms_per_step or 0.0
        return 100 * (change.run_ms - change.base_ms) / total if total > 0 else 0.0

    def share_points(self, change: CategoryChange) -> float:
        """How many points the category's share of op time moved: robust to a machine that was busier during
        one run (every category slower alike moves no share)."""
        b, r = self.base.op_ms_per_step or 0.0, self.run.op_ms_per_step or 0.0
        return 100 * (change.run_ms / r - change.base_ms / b) if b > 0 and r > 0 else 0.0

    @property
    def total_relative(self) -> float | None:
        b, r = self.base.op_ms_per_step, self.run.op_ms_per_step
        return r / b - 1 if b and r is not None else None

    def notable(self, min_points: float = 2.0) -> list[CategoryChange]:
        """The categories whose change moved at least `min_points` of the reference's op time, largest first."""
        return sorted((c for c in self.changes if abs(self.points(c)) >= min_points),
                      key=lambda c: -abs(self.points(c)))

    def describe_change(self, c: CategoryChange) -> str:
        """'matmul/conv −45%' for a category the reference had a real share of, else 'casts +6% of step'."""
        rel = c.relative
        if rel is not None and c.base_ms >= 0.05 * (self.base.op_ms_per_step or 0.0):
            return f"{LABELS[c.category]} {_signed(100 * rel)}%"
        return f"{LABELS[c.category]} {_signed(self.points(c))}% of step"

    def totals(self) -> str:
        """'op time 3.20 → 1.10 ms per step (−66%); the profiled steps took 2.10 → 0.90 ms': what compares
        whatever the categories."""
        b, r = self.base.op_ms_per_step or 0.0, self.run.op_ms_per_step or 0.0
        text = f"op time {_ms(b)} → {_ms(r)} ms per step ({_signed(100 * (r / b - 1))}%)" if b > 0 else \
            f"op time {_ms(r)} ms per step"
        bw, rw = self.base.wall_ms_per_step, self.run.wall_ms_per_step
        walls = f"the profiled steps took {_ms(bw)} → {_ms(rw)} ms ({_signed(100 * (rw / bw - 1))}%)" \
            if bw and rw else ""
        if self.base.misses_compute or self.run.misses_compute:  # an op time without the compiled step's
            return walls or "the op times do not hold the compiled step's compute"
        return f"{text}; {walls}" if walls else text

    def sentence(self, limit: int = 3) -> str:
        """'matmul/conv −45%, casts +6% of step' (the largest changes), or why there is nothing to compare; for
        an XLA run against one without XLA, the totals only (its categories are not comparable)."""
        if not self.comparable:
            return self.totals()
        parts = [self.describe_change(c) for c in self.notable()[:limit]]
        return ", ".join(parts) if parts else "no category changed by 2% of the step or more"


def _ms(v: float) -> str:
    """Milliseconds with two decimals, or three significant digits below 0.1 ms (a 2 µs step is not "0.00")."""
    return f"{v:.2f}" if v >= 0.1 or v == 0 else f"{v:.3g}"


def _signed(v: float) -> str:
    return f"{'+' if v >= 0 else '−'}{abs(v):.0f}"


# XLA's compiled ops are named by HLO instruction, without the layer scopes that tell attention from a matmul
# or a normalization from other elementwise math: against a profile of TensorFlow ops, those are compared folded
NOT_COMPARABLE_NOTE = ("XLA fuses ops into clusters, so the op categories of an XLA run are not comparable with "
                       "those of a run without XLA: the time per step is compared, and each run's categories are its "
                       "own breakdown")
FOLDED_ACROSS_SOURCES = {ATTENTION: MATMUL, NORMALIZATION: ELEMENTWISE}
FOLDED_NOTE = ("XLA's compiled ops carry no layer names: attention is counted with matmul/conv and normalization "
               "with elementwise in this comparison")


def _folded(p: Profile) -> dict[str, float]:
    out: dict[str, float] = {}
    for c, ms in p.categories.items():
        key = FOLDED_ACROSS_SOURCES.get(c, c)
        out[key] = out.get(key, 0.0) + ms
    return out


def compare(base: Profile, run: Profile) -> ProfileChange | None:
    """The per-category change of `run` against `base`; None when either has no op times. An XLA-compiled run
    against one without XLA compares on its totals only (`comparable` False): XLA fuses ops into clusters, so
    elementwise work inside a matmul's fusion leaves its category (the issue 22 walk read "elementwise −100%,
    other +1473%"). Two XLA profiles read from different sources (TensorFlow ops, XLA's HLO ops) are compared
    on the categories both can tell apart."""
    if not (base.available and run.available and base.op_ms_per_step and run.op_ms_per_step):
        return None
    if base.xla_compiled != run.xla_compiled or base.misses_compute or run.misses_compute:
        return ProfileChange(base, run, [], NOT_COMPARABLE_NOTE, comparable=False)
    folded = base.source != run.source
    b, r = (_folded(base), _folded(run)) if folded else (base.categories, run.categories)
    cats = [c for c in CATEGORIES if b.get(c, 0) > 0 or r.get(c, 0) > 0]
    return ProfileChange(base, run, [CategoryChange(c, b.get(c, 0.0), r.get(c, 0.0)) for c in cats],
                         FOLDED_NOTE if folded else "")


def reference_dir(rung_dir: Path) -> Path:
    """The run measured beside a trial's first candidate run: its pair-1 reference (`NN-slug.a1`), profiled in the
    same minutes, so a busier machine weighs on both alike."""
    return rung_dir.with_name(rung_dir.name + ".a1")


def rung_profile_dirs(runs_dir: Path, rung: str, profiled_in: dict[str, str] | None = None,
                      compared_with: str | None = None) -> tuple[Path, list[Path]]:
    """(the run folder holding rung `rung`'s profile, the folders of what to compare it with, best first).

    From the rung's design record (`profiled_in`, arm -> run): a configuration is profiled once per study, so
    either arm's profile may be an earlier rung's run. A study from before the record kept both where they
    were: the rung's own run, against its trial's pair-1 reference (`reference_dir`, profiled in the same
    minutes), else the run of the configuration it was measured against (`compared_with`)."""
    runs_dir, where = Path(runs_dir), profiled_in or {}
    own = runs_dir / where.get("b", rung)
    if "a" in where:
        return own, [runs_dir / where["a"]]
    return own, [reference_dir(runs_dir / rung)] + ([runs_dir / compared_with] if compared_with else [])


def find(run_dirs: Sequence[Path | str | None]) -> tuple[Profile, Path | None]:
    """The first available profile among `run_dirs` (a rung's runs: the profiled replicate), with its folder."""
    first: Profile | None = None
    for d in run_dirs:
        if d is None:
            continue
        p = Profile.load(d)
        if p.available:
            return p, Path(d)
        first = first or p
    return first or Profile.unavailable("no run of this step captured a profile"), None
