"""FLOPs counted for one training step, over a hand count, per layer (issue 47; trainer_backend/step_flops.py).

For each model built around one layer kind (batch 32), prints the hand count of the step TensorFlow runs
(two FLOPs per multiply-add of every matmul and convolution, forward and backward, the layer that reads the
model's input taking no input gradient), and three counts over it:

- `step`: tfturbo's count, the traced train_step walked with per-op rules and loop trip counts;
- `old`: what tfturbo counted before, TensorFlow's graph profiler on the forward pass × 3;
- `xla`: XLA's compiled program (the train step with jit_compile, its optimized HLO), dots and convolutions,
  each while loop's body × the trip count XLA annotates (`known_trip_count`; a loop without one counted once),

and the seconds each took (the trace is shared by nothing: each count traces afresh).

    .venv/bin/python benchmarks/flops_check.py [NAME]     # ~1–2 min on 2 cores; NAME: only the layers named so
"""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

B = 32


def cases(keras):
    """(name, model, x shape, x dtype, hand count)."""
    L = keras.layers

    def rnn(gates, steps, features, units, directions=1):
        per_step = 2 * B * gates * units * (features + units) + 2 * B * gates * units * (features + 2 * units)
        return steps * directions * per_step + 6 * B * units * directions

    out = [("Dense 256→512→10", keras.Sequential([keras.Input((256,)), L.Dense(512, activation="relu"),
                                                     L.Dense(10)]), (256,), "float32",
            4 * B * 256 * 512 + 6 * B * 512 * 10),
           ("Conv2D 3→32→64, 32×32", keras.Sequential([keras.Input((32, 32, 3)), L.Conv2D(32, 3, padding="same"),
                                                       L.Conv2D(64, 3, padding="same"), L.GlobalAveragePooling2D(),
                                                       L.Dense(1)]), (32, 32, 3), "float32",
            2 * (2 * B * 32 * 32 * 32 * 27) + 3 * (2 * B * 32 * 32 * 64 * 9 * 32) + 6 * B * 64),
           ("Conv2DTranspose+Depthwise", keras.Sequential([
               keras.Input((16, 16, 16)), L.Conv2DTranspose(32, 3, strides=2, padding="same"),
               L.DepthwiseConv2D(3, padding="same"), L.GlobalAveragePooling2D(), L.Dense(1)]), (16, 16, 16),
            "float32", 2 * (2 * B * 16 * 16 * 16 * 9 * 32) + 3 * (2 * B * 32 * 32 * 32 * 9) + 6 * B * 32)]
    for steps in (16, 64):
        for name, layer, gates in (("LSTM", L.LSTM, 4), ("GRU", L.GRU, 3), ("SimpleRNN", L.SimpleRNN, 1)):
            out.append((f"{name}(64), {steps} steps", keras.Sequential([keras.Input((steps, 32)), layer(64), L.Dense(1)]),
                        (steps, 32), "float32", rnn(gates, steps, 32, 64)))
        out.append((f"Bidirectional(LSTM(64)), {steps} steps", keras.Sequential([
            keras.Input((steps, 32)), L.Bidirectional(L.LSTM(64)), L.Dense(1)]), (steps, 32), "float32",
            rnn(4, steps, 32, 64, 2)))
    inputs = keras.Input((128, 128))
    attended = L.MultiHeadAttention(4, 32)(inputs, inputs)
    qkv, proj, attention = 3 * 2 * B * 128 * 128 * 128, 2 * B * 128 * 128 * 128, 2 * 2 * B * 4 * 128 * 128 * 32
    out.append(("MultiHeadAttention(4, 32), 128×128", keras.Model(inputs, L.Dense(1)(L.GlobalAveragePooling1D()(attended))),
                (128, 128), "float32", 2 * qkv + 3 * proj + 3 * attention + 6 * B * 128))
    out.append(("Embedding(10000, 64) + Dense(10)", keras.Sequential([
        keras.Input((50,), dtype="int32"), L.Embedding(10000, 64), L.GlobalAveragePooling1D(), L.Dense(10)]),
        (50,), "int32", 6 * B * 64 * 10))
    return out


def old_count(model, spec):
    """tfturbo before issue 47: the graph profiler on `model(x)`, × 3."""
    import tensorflow as tf
    from tensorflow.python.profiler import model_analyzer, option_builder

    graph = tf.function(lambda x: model(x, training=False)).get_concrete_function(spec[0]).graph
    options = option_builder.ProfileOptionBuilder.float_operation()
    options["output"] = "none"
    return 3.0 * model_analyzer.profile(graph, options=options).total_float_ops


_INSTRUCTION = re.compile(r"^\s*(?:ROOT )?%?([\w.\-]+) = ")
_SHAPE = re.compile(r"^\s*(?:ROOT )?%?([\w.\-]+) = (\w+)\[([\d,]*)\]")
_COMPUTATION = re.compile(r"^(?:ENTRY )?%?([\w.\-]+) .*\{$")


def xla_count(model, spec):
    """Dots and convolutions of the optimized HLO of the train step, loops × XLA's known trip count."""
    import tensorflow as tf

    flat = tf.nest.flatten(spec)

    def step(*tensors):
        return model.train_step(tf.nest.pack_sequence_as(spec, list(tensors)))

    text = tf.function(step, jit_compile=True).experimental_get_compiler_ir(*flat)(stage="optimized_hlo")
    shapes, bodies, current, entry = {}, {}, None, None
    for line in text.splitlines():
        m = _COMPUTATION.match(line.strip())
        if m and not _INSTRUCTION.match(line):
            current = m.group(1)
            bodies[current] = []
            entry = current if line.startswith("ENTRY") else entry
            continue
        s = _SHAPE.match(line)
        if s:
            shapes[s.group(1)] = [int(d) for d in s.group(3).split(",") if d]
        if current and _INSTRUCTION.match(line):
            bodies[current].append(line)

    def dims(name):
        return shapes.get(name.lstrip("%"), [])

    def prod(values):
        out = 1
        for v in values:
            out *= v
        return out

    memo = {}

    def cost(comp):
        if comp in memo:
            return memo[comp]
        memo[comp] = 0.0
        total = 0.0
        for line in bodies.get(comp, []):
            name = _INSTRUCTION.match(line).group(1)
            operands = re.search(r" (dot|convolution)\((%[\w.\-]+), (%[\w.\-]+)\)", line)
            if operands:
                kind, lhs, rhs = operands.groups()
                if kind == "dot":
                    contracting = re.search(r"lhs_contracting_dims=\{([\d,]*)\}", line).group(1)
                    k = prod(dims(lhs)[int(i)] for i in contracting.split(",") if i)
                    total += 2.0 * prod(shapes[name]) * k
                else:  # output elements × the kernel's elements per output feature
                    labels = re.search(r"dim_labels=\w+_(\w+)->", line).group(1)
                    kernel = dims(rhs)
                    o = kernel[labels.index("o")] if "o" in labels else 1
                    total += 2.0 * prod(shapes[name]) * prod(kernel) / max(o, 1)
            for called in re.findall(r"(?:calls|to_apply|body|true_computation|false_computation)=%?([\w.\-]+)", line):
                trips = re.search(r'"known_trip_count":\{"n":"(\d+)"', line) if "body=" in line else None
                total += cost(called) * (int(trips.group(1)) if trips else 1)
        memo[comp] = total
        return total

    return cost(entry)


def main() -> None:
    import keras
    import tensorflow as tf

    from trainer_backend.step_flops import count_train_step

    print(f"FLOPs of one training step (batch {B}) over the hand count; seconds to count\n")
    header = f"{'layer':36} {'hand':>10}  {'step':>6} {'s':>5}  {'old':>6} {'s':>5}  {'xla':>6} {'s':>5}"
    print(header)
    print("-" * len(header))
    only = sys.argv[1] if len(sys.argv) > 1 else ""
    for name, model, shape, dtype, hand in cases(keras):
        if only not in name:
            continue
        model.compile(optimizer="adam", loss="mse")
        spec = (tf.TensorSpec((B, *shape), dtype), tf.TensorSpec((B, 1 if "Embedding" not in name else 10)))
        if "Dense 256" in name:
            spec = (spec[0], tf.TensorSpec((B, 10)))
        row = []
        for count in (lambda: count_train_step(model, spec, B).flops,  # noqa: B023 - each is called in this iteration
                      lambda: old_count(model, spec), lambda: xla_count(model, spec)):  # noqa: B023
            start = time.perf_counter()
            try:
                flops = count()
            except Exception as exc:  # noqa: BLE001 - a method that fails on this model is a result too
                print(f"  ({name}: {type(exc).__name__}: {str(exc)[:120]})", file=sys.stderr)
                flops = None
            row += [f"{flops / hand:6.3f}" if flops else "   n/a", f"{time.perf_counter() - start:5.2f}"]
        print(f"{name:36} {hand:10.3e}  {row[0]} {row[1]}  {row[2]} {row[3]}  {row[4]} {row[5]}")


if __name__ == "__main__":
    main()
