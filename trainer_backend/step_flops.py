"""The FLOPs of one training step, counted on the step that really runs: the numerator of MFU.

What is counted: the model's own `train_step`, traced as Keras runs it (under
the model's distribution strategy), so a custom step is counted as written — a
distiller's teacher forward pass, a GAN's two models, the backward pass as
TensorFlow builds it (no "forward × 3" rule: the first layer's input gradient,
which is never computed, is not counted either). Every matmul-like op has a
rule (MatMul, BatchMatMul, Einsum, every convolution and its two gradients,
depthwise and transposed ones included, cuDNN's RNN ops): two FLOPs per
multiply-add, read from the traced shapes. Elementwise ops, reductions and
data movement are not counted: MFU's ceiling is a matmul's rate, and the
usual MFU (PaLM's, for one) counts matmuls only.

Loops are counted per iteration: a `While` (an RNN over time, `keras.ops.scan`,
`tf.while_loop`, autograph's `for i in tf.range(n)`) multiplies its body by its
trip count, found as XLA finds it: the condition compares an induction variable
(a constant start, a constant step) with a bound known before the loop runs;
the gradient loop's bound is the forward loop's own count. Calls and
conditionals are followed into their functions (a conditional counts its
costliest branch). Ops that never reach the step's outputs (Keras' RNN traces
one step outside its loop to learn shapes) are not counted.

Why this and not XLA's compiled program: TensorFlow 2.21 offers no cost
analysis from Python, the optimized HLO gives the forward RNN loop a known trip
count but not its gradient loop (counted once: low by the sequence length), a
compile costs seconds where a trace costs a fraction of one, and a model XLA
refuses would have no count at all (benchmarks/RESULTS.md, "FLOPs of a training step").

A count that cannot be trusted is not given: a loop whose length is not known
before it runs, a matmul whose shapes are not known (inputs whose length varies
from batch to batch), or an op with no rule that works on tensors large enough
to matter (a sparse or Python op) makes the count None, with the reason —
never a number known to be low.
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

SOURCE = "train step graph: matmul, einsum and convolution FLOPs, loops × trip count"

_WHILE = ("While", "StatelessWhile")
_IF = ("If", "StatelessIf")
_CASE = ("Case", "StatelessCase")
_CALL = ("PartitionedCall", "StatefulPartitionedCall")
_COMPARE = ("Less", "LessEqual", "Greater", "GreaterEqual")
# ops with no rule whose work can be matmul-sized: on large tensors they make the count unknown
_HEAVY_WORDS = ("MatMul", "Conv", "Einsum", "Dot", "FFT", "Solve", "Cholesky", "Qr", "Svd", "Inverse", "Determinant",
                "Cudnn", "PyFunc", "NumpyFunction")
# the share of the counted FLOPs an op with no rule may touch (in elements) before the count is not trusted
_NEGLIGIBLE = 0.01


@dataclass
class StepFlops:
    """FLOPs of one training step of the global batch, or None with `unknown` saying why."""

    flops: float | None
    unknown: str | None = None
    by_op: dict[str, float] = field(default_factory=dict)  # FLOPs per op type (what the count is made of)
    source: str = SOURCE


@dataclass
class TracedStep:
    """The model's training step traced once on a batch's shapes: its FLOPs, and what it captures (which of the
    model's optimizers it applies, `optimizer_code.FoundOptimizers.used_by`)."""

    graph: Any | None
    repeat: int = 1  # how many times the graph's work runs per global step (a multi-worker strategy's workers)
    replicated: bool = False  # traced under a distribution strategy (each replica's copy in the graph)
    error: str | None = None  # why it could not be traced
    varying: bool = False  # the training data's shapes vary from batch to batch (a None beyond the batch)

    def flops(self) -> StepFlops:
        if self.graph is None:
            return StepFlops(None, f"the training step could not be traced ({self.error})")
        result = count_graph(self.graph)
        if result.flops is None and self.varying:
            result.unknown = f"the training data's shapes vary from batch to batch: {result.unknown}"
        if result.flops is not None:
            result.flops *= self.repeat
            result.by_op = {k: v * self.repeat for k, v in result.by_op.items()}
        return result

    def captured(self) -> set[int]:
        """The ids of the outside tensors (variable handles) the step reads or writes."""
        return {id(outside) for outside, _ in self.graph.captures} if self.graph is not None else set()


def count_train_step(model: Any, element_spec: Any, batch_size: int) -> StepFlops:
    """The FLOPs of `model`'s training step on one batch of `batch_size` examples shaped like `element_spec`."""
    return trace_train_step(model, element_spec, batch_size).flops()


def trace_train_step(model: Any, element_spec: Any, batch_size: int) -> TracedStep:
    """`model.train_step` traced as Keras runs it, under the model's distribution strategy, on one batch of
    `batch_size` examples shaped like `element_spec` (the training dataset's element). Each replica's step
    sees its share of the batch; a multi-worker strategy's graph holds this worker's replicas only. Tracing
    runs the step's Python, never the step: nothing trains, no variable changes."""
    import tensorflow as tf

    try:
        strategy = model.distribute_strategy
        in_sync = int(getattr(strategy, "num_replicas_in_sync", 1) or 1)
        try:
            local = len(strategy.extended.worker_devices) or 1
        except (RuntimeError, AttributeError):  # the default strategy: one device
            local = 1
        per_replica = max(1, batch_size // in_sync)

        def fixed(spec):
            return tf.TensorSpec([per_replica, *spec.shape[1:]], spec.dtype) if spec.shape.rank else spec

        spec = tf.nest.map_structure(fixed, element_spec)
        step = tf.function(lambda data: strategy.run(model.train_step, args=(data,)), autograph=False)
        graph = step.get_concrete_function(spec).graph
    except Exception as exc:  # noqa: BLE001 - no count is not a failed run
        print(f"trainer_backend: the training step was not traced ({type(exc).__name__}: {exc})", file=sys.stderr)
        return TracedStep(None, error=type(exc).__name__)
    varying = any(None in s.shape.as_list()[1:] for s in tf.nest.flatten(spec) if s.shape.rank)
    return TracedStep(graph, max(1, in_sync // local), strategy is not tf.distribute.get_strategy(),
                      varying=varying)


def count_graph(graph: Any) -> StepFlops:
    """The FLOPs of everything in `graph` that reaches its outputs (loops and calls followed)."""
    walk = _Walk()
    flops, by_op = walk.graph(graph, None)
    if walk.problems:
        return StepFlops(None, walk.problems[0], dict(by_op))
    heavy = [(name, elements) for name, elements in walk.unruled if elements >= _NEGLIGIBLE * max(flops, 1.0)]
    if heavy:
        name, elements = max(heavy, key=lambda item: item[1])
        return StepFlops(None, f"{name} has no FLOP rule and works on {elements:,.0f} elements per step",
                         dict(by_op))
    if flops <= 0:
        return StepFlops(None, "the training step has no matmul or convolution", dict(by_op))
    return StepFlops(float(flops), None, dict(by_op))


# ------------------------------------------------------------------------------ rules per op

def _dims(shape) -> list[int] | None:
    if shape.rank is None or any(d is None for d in shape.as_list()):
        return None
    return shape.as_list()


def _prod(values) -> int:
    return math.prod(int(v) for v in values)


def _matmul(op) -> float | None:
    a, out = _dims(op.inputs[0].shape), _dims(op.outputs[0].shape)
    if a is None or out is None:
        return None
    transposed = op.get_attr("transpose_a") if op.type == "MatMul" else op.get_attr("adj_x")
    k = a[-2] if transposed else a[-1]
    return 2.0 * _prod(out) * k


def _einsum(op) -> float | None:
    """2 × the product of every index's size (a multiply-add over the whole index space, the dimensions an
    ellipsis stands for included) per pair of operands; one operand is a transpose or a sum, no matmul."""
    import numpy as np

    if len(op.inputs) < 2:
        return 0.0
    equation = op.get_attr("equation")
    equation = equation.decode() if isinstance(equation, bytes) else equation
    sizes: dict[str, int] = {}
    spans: list[tuple[int, ...]] = []
    for term, tensor in zip(equation.split("->")[0].split(","), op.inputs):
        dims = _dims(tensor.shape)
        if dims is None:
            return None
        if "..." in term:
            before, after = term.split("...")
            cut = len(dims) - len(after)
            spans.append(tuple(dims[len(before):cut]))
            letters, dims = before + after, dims[:len(before)] + dims[cut:]
        else:
            letters = term
        for letter, size in zip(letters, dims):
            sizes[letter] = max(sizes.get(letter, 1), int(size))
    broadcast = np.broadcast_shapes(*spans) if spans else ()
    return 2.0 * _prod(sizes.values()) * _prod(broadcast) * (len(op.inputs) - 1)


def _conv(op) -> float | None:
    """2 × output elements × the filter's taps and input channels per group (forward and input gradient:
    the forward's output is the gradient's `out_backprop`)."""
    if op.type.endswith("BackpropInput") or op.type.endswith("BackpropInputV2"):
        grad, filt = op.inputs[2], _dims(op.inputs[1].shape)
        out = _dims(grad.shape)
    elif op.type.endswith("BackpropFilter") or op.type.endswith("BackpropFilterV2"):
        out, filt = _dims(op.inputs[2].shape), _dims(op.outputs[0].shape)
    else:
        out, filt = _dims(op.outputs[0].shape), _dims(op.inputs[1].shape)
    if out is None or filt is None:
        return None
    if op.type.startswith("DepthwiseConv2dNative"):  # filter [h, w, in, multiplier]: one input channel per output
        return 2.0 * _prod(out) * _prod(filt[:2])
    return 2.0 * _prod(out) * _prod(filt[:-1])


def _cudnn_rnn(op) -> float | None:
    """cuDNN's fused RNN (Keras' LSTM/GRU on a GPU): gates × units × (input + units) multiply-adds per example
    and time step, per direction; its gradient op twice that."""
    x, h = _dims(op.inputs[0].shape), _dims(op.inputs[1].shape)
    if x is None or h is None:
        return None
    mode = op.get_attr("rnn_mode")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    gates = {"lstm": 4, "gru": 3}.get(mode, 1)
    direction = op.get_attr("direction")
    directions = 2 if (direction.decode() if isinstance(direction, bytes) else direction) == "bidirectional" else 1
    time_major = op.get_attr("time_major") if "time_major" in op.node_def.attr else True
    steps, batch = (x[0], x[1]) if time_major else (x[1], x[0])
    units, layers = h[-1], max(1, h[0] // directions)
    width = x[-1]
    total = 0.0
    for _ in range(layers):
        total += 2.0 * steps * batch * gates * units * (width + units) * directions
        width = units * directions
    return total * (2 if "Backprop" in op.type else 1)


_RULES = {
    "MatMul": _matmul, "BatchMatMul": _matmul, "BatchMatMulV2": _matmul, "BatchMatMulV3": _matmul,
    "Einsum": _einsum,
    **{name: _conv for name in (
        "Conv", "Conv2D", "Conv3D", "Conv2DBackpropInput", "Conv2DBackpropInputV2", "Conv2DBackpropFilter",
        "Conv3DBackpropInputV2", "Conv3DBackpropFilterV2", "Conv3DBackpropInput", "Conv3DBackpropFilter",
        "DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropInput", "DepthwiseConv2dNativeBackpropFilter")},
    **{name: _cudnn_rnn for name in ("CudnnRNN", "CudnnRNNV2", "CudnnRNNV3", "CudnnRNNBackprop",
                                     "CudnnRNNBackpropV2", "CudnnRNNBackpropV3")},
}


# ------------------------------------------------------------------------------ the walk

@dataclass
class _Frame:
    """Where a function graph was entered: its caller op, the caller's graph and frame, and for a loop the
    body (whose outputs say which loop variables never change)."""

    op: Any
    graph: Any
    parent: _Frame | None
    offset: int = 0  # caller inputs before the function's own (an If's predicate, a Case's index)
    body: Any = None  # a While's body graph


class _Walk:
    def __init__(self) -> None:
        self.problems: list[str] = []
        self.unruled: list[tuple[str, float]] = []  # (op, elements it touches per step) for ops with no rule
        self._functions: dict[str, Any] = {}
        self._trips: dict[int, int | None] = {}

    def graph(self, graph, frame: _Frame | None, times: float = 1.0) -> tuple[float, Counter]:
        total = 0.0
        by_op: Counter[str] = Counter()
        for op in _live_ops(graph):
            kind = op.type
            if kind in _WHILE:
                body = self.function(graph, op.get_attr("body").name)
                trip = self.trip_count(op, graph, frame)
                if trip is None:
                    self.note(f"the loop {op.name!r} has no length known before it runs")
                    trip = 1
                if body is not None:
                    flops, ops = self.graph(body, _Frame(op, graph, frame, 0, body), times * trip)
                    total, by_op = total + flops, by_op + ops
            elif kind in _IF or kind in _CASE:
                names = [op.get_attr("then_branch").name, op.get_attr("else_branch").name] if kind in _IF \
                    else [f.name for f in op.get_attr("branches")]
                branches = [self.graph(g, _Frame(op, graph, frame, 1), times)
                            for g in (self.function(graph, n) for n in names) if g is not None]
                if branches:
                    flops, ops = max(branches, key=lambda b: b[0])
                    total, by_op = total + flops, by_op + ops
            elif kind in _RULES:
                counted = _RULES[kind](op)
                if counted is None:
                    self.note(f"{kind} {op.name!r} works on shapes not known before the step runs "
                              "(inputs whose size varies from batch to batch)")
                    continue
                total += counted * times
                by_op[kind] += counted * times  # type: ignore[assignment]  # FLOPs: a Counter of floats
            elif kind in _CALL or self.function(graph, kind, quiet=True) is not None:
                name = op.get_attr("f").name if kind in _CALL else kind
                called = self.function(graph, name)
                if called is not None:
                    flops, ops = self.graph(called, _Frame(op, graph, frame), times)
                    total, by_op = total + flops, by_op + ops
            elif any(word in kind for word in _HEAVY_WORDS):
                self.unruled.append((f"{kind} {op.name!r}", _elements(op) * times))
        return total, by_op

    def note(self, problem: str) -> None:
        if problem not in self.problems:
            self.problems.append(problem)

    def function(self, graph, name: str, quiet: bool = False):
        """The graph of the function `name` called from `graph` (None when not found)."""
        if name in self._functions:
            return self._functions[name]
        found, g = None, graph
        while g is not None and found is None:
            getter = getattr(g, "_get_function", None)
            found = getter(name) if getter is not None else None
            g = getattr(g, "outer_graph", None)
        body = None
        if found is not None:
            body = getattr(found, "graph", None)
            if body is None and getattr(found, "definition", None) is not None:
                from tensorflow.python.framework.function_def_to_graph import function_def_to_graph

                body = function_def_to_graph(found.definition)
        elif not quiet:
            self.note(f"the function {name!r} the step calls was not found")
        if found is not None or not quiet:
            self._functions[name] = body
        return body

    # -- loop trip counts ----------------------------------------------------------------------

    def trip_count(self, op, graph, frame: _Frame | None) -> int | None:
        """How many times the While `op` runs its body: every condition it ANDs must bound it."""
        key = id(op)
        if key not in self._trips:
            self._trips[key] = None  # a loop depending on itself is not known
            cond = self.function(graph, op.get_attr("cond").name)
            body = self.function(graph, op.get_attr("body").name)
            trips = None
            if cond is not None and body is not None:
                inner = _Frame(op, graph, frame, 0, body)
                found = [self._bound(c, op, cond, body, inner) for c in _conjuncts(cond.outputs[0])]
                known = [t for t in found if t is not None]
                trips = min(known) if found and len(known) == len(found) else None
            self._trips[key] = trips
        return self._trips[key]

    def _bound(self, compare, op, cond, body, frame: _Frame) -> int | None:
        if compare.op.type not in _COMPARE:
            return None
        kind = compare.op.type
        left, right = compare.op.inputs
        var = self._induction(left, op, cond, body, frame)
        bound_tensor = right
        if var is None:  # `n > i` is `i < n`
            var = self._induction(right, op, cond, body, frame)
            bound_tensor = left
            kind = {"Less": "Greater", "LessEqual": "GreaterEqual", "Greater": "Less",
                    "GreaterEqual": "LessEqual"}[kind]
        if var is None:
            return None
        start, step = var
        bound = self.value(bound_tensor, cond, frame)
        if bound is None or step == 0:
            return None
        bound = float(bound)
        if kind == "Less" and step > 0:
            return max(0, math.ceil((bound - start) / step))
        if kind == "LessEqual" and step > 0:
            return max(0, math.floor((bound - start) / step) + 1)
        if kind == "Greater" and step < 0:
            return max(0, math.ceil((start - bound) / -step))
        if kind == "GreaterEqual" and step < 0:
            return max(0, math.floor((start - bound) / -step) + 1)
        return None

    def _induction(self, tensor, op, cond, body, frame: _Frame) -> tuple[float, float] | None:
        """(start, step) when `tensor` is a loop variable that starts at a known value and changes by a constant
        each iteration."""
        index = _input_index(_through_identity(tensor), cond)
        if index is None or index >= len(body.outputs):
            return None
        out = _through_identity(body.outputs[index])
        if out.op.type not in ("AddV2", "Add", "Sub"):
            return None
        a, b = out.op.inputs
        sign = -1.0 if out.op.type == "Sub" else 1.0
        if _input_index(_through_identity(a), body) == index:
            step = self.value(b, body, frame)
        elif out.op.type != "Sub" and _input_index(_through_identity(b), body) == index:
            step = self.value(a, body, frame)
        else:
            return None
        start = self.value(op.inputs[index], frame.graph, frame.parent)
        if step is None or start is None:
            return None
        return float(start), sign * float(step)

    # -- values known before the step runs -----------------------------------------------------

    def value(self, tensor, graph, frame: _Frame | None):
        """The value of a scalar-ish `tensor` of `graph` when it is known before the step runs, else None."""
        import numpy as np
        import tensorflow as tf

        op = tensor.op
        kind = op.type
        if kind in ("Identity", "StopGradient", "Snapshot"):
            return self.value(op.inputs[0], graph, frame)
        if kind == "Placeholder":
            return self._argument(tensor, graph, frame)
        if kind in _WHILE:
            return self._loop_output(tensor, graph, frame)
        try:
            static = tf.get_static_value(tensor)
        except Exception:  # noqa: BLE001 - not foldable
            static = None
        if static is not None:
            return static
        unary: dict[str, Callable[[Any], Any]] = {"Neg": np.negative, "Cast": lambda v: v}
        binary: dict[str, Callable[[Any, Any], Any]] = {"AddV2": np.add, "Add": np.add, "Sub": np.subtract, "Mul": np.multiply,
                  "Maximum": np.maximum, "Minimum": np.minimum, "FloorDiv": np.floor_divide}
        reduce: dict[str, Callable[..., Any]] = {"Max": np.max, "Min": np.min, "Sum": np.sum, "Prod": np.prod}
        if kind in unary:
            v = self.value(op.inputs[0], graph, frame)
            return None if v is None else unary[kind](np.asarray(v))
        if kind in binary:
            a, b = (self.value(t, graph, frame) for t in op.inputs)
            return None if a is None or b is None else binary[kind](np.asarray(a), np.asarray(b))
        if kind == "StridedSlice":
            return self._strided_slice(op, graph, frame)
        if kind in reduce:
            v, axis = (self.value(t, graph, frame) for t in op.inputs)
            if v is None or axis is None:
                return None
            return reduce[kind](np.asarray(v), axis=tuple(np.atleast_1d(axis).astype(int)),
                                keepdims=bool(op.get_attr("keep_dims")))
        return None

    def _strided_slice(self, op, graph, frame: _Frame | None):
        """`tf.shape(x)[0]` and its kin: a 1-D slice of a known vector (Keras' scan takes its length so)."""
        import numpy as np

        v, begin, end, strides = (self.value(t, graph, frame) for t in op.inputs)
        if v is None or begin is None or end is None or strides is None or np.ndim(v) != 1 or \
                any(op.get_attr(m) for m in ("ellipsis_mask", "new_axis_mask")):
            return None
        b = None if op.get_attr("begin_mask") & 1 else int(np.atleast_1d(begin)[0])
        e = None if op.get_attr("end_mask") & 1 else int(np.atleast_1d(end)[0])
        if op.get_attr("shrink_axis_mask") & 1:
            return np.asarray(v)[b]
        return np.asarray(v)[b:e:int(np.atleast_1d(strides)[0])]

    def _argument(self, tensor, graph, frame: _Frame | None):
        """A function's argument: its caller's input (a loop variable only when the loop never changes it)."""
        if frame is None:
            return None
        index = _input_index(tensor, graph)
        if index is None:
            return None
        if frame.body is not None:
            if index >= len(frame.body.outputs) or \
                    _input_index(_through_identity(frame.body.outputs[index]), frame.body) != index:
                return None
        position = index + frame.offset
        if position >= len(frame.op.inputs):
            return None
        return self.value(frame.op.inputs[position], frame.graph, frame.parent)

    def _loop_output(self, tensor, graph, frame: _Frame | None):
        """A loop's output: an induction variable's last value, or a variable the loop never changes."""
        op, index = tensor.op, tensor.value_index
        body = self.function(graph, op.get_attr("body").name)
        cond = self.function(graph, op.get_attr("cond").name)
        if body is None or cond is None or index >= len(body.outputs):
            return None
        inner = _Frame(op, graph, frame, 0, body)
        if _input_index(_through_identity(body.outputs[index]), body) == index:
            return self.value(op.inputs[index], graph, frame)
        var = self._induction(cond.inputs[index], op, cond, body, inner) if index < len(cond.inputs) else None
        trip = self.trip_count(op, graph, frame)
        if var is None or trip is None:
            return None
        return var[0] + var[1] * trip


def _through_identity(tensor):
    while tensor.op.type in ("Identity", "StopGradient", "Snapshot"):
        tensor = tensor.op.inputs[0]
    return tensor


def _input_index(tensor, graph) -> int | None:
    for i, t in enumerate(graph.inputs):
        if t is tensor:
            return i
    return None


def _conjuncts(tensor) -> list:
    tensor = _through_identity(tensor)
    if tensor.op.type == "LogicalAnd":
        return [c for t in tensor.op.inputs for c in _conjuncts(t)]
    return [tensor]


def _elements(op) -> float:
    """The elements an op reads and writes (an unknown dimension counts as huge)."""
    total = 0.0
    for t in list(op.inputs) + list(op.outputs):
        shape = t.shape
        if shape.rank is None or any(d is None for d in shape.as_list()):
            return math.inf
        total += _prod(shape.as_list()) if shape.rank else 1
    return total


def _live_ops(graph) -> list:
    """The ops of `graph` that reach its outputs, its control outputs or a stateful op (what TensorFlow runs;
    the rest is pruned before the step executes)."""
    seeds = [t.op for t in graph.outputs] + list(getattr(graph, "control_outputs", []) or [])
    seeds += [op for op in graph.get_operations() if op._is_stateful]
    seen: set[int] = set()
    stack = list(seeds)
    while stack:
        op = stack.pop()
        if id(op) in seen:
            continue
        seen.add(id(op))
        stack.extend(t.op for t in op.inputs)
        stack.extend(op.control_inputs)
    return [op for op in graph.get_operations() if id(op) in seen]
