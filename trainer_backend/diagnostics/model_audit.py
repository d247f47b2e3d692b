"""Static checks of a built Keras model under a precision policy.

Two checklist steps are about the model itself:
- step 4, the head: under a mixed policy the output layer (and its softmax)
  must compute in float32 — a 16-bit softmax or loss overflows or saturates,
  the most common mixed-precision bug;
- step 6, sizing: matmuls and convolutions only use Tensor Cores fully when
  their sizes are multiples of 8 in 16-bit.

Everything here reads layer attributes and dtype policies; nothing trains.
"""

from __future__ import annotations

from typing import Any

from tfturbo.findings import DIM_NOT_MULTIPLE_OF_8, HEAD_NOT_FLOAT32, Finding

SIXTEEN_BIT = ("float16", "bfloat16")
ALIGN = 8
_PROBABILITY_ACTIVATIONS = ("softmax", "sigmoid", "log_softmax")


def round_up(n: int, multiple: int = ALIGN) -> int:
    return -(-int(n) // multiple) * multiple


def compute_dtype(layer: Any) -> str:
    policy = getattr(layer, "dtype_policy", None)
    return str(getattr(policy, "compute_dtype", None) or getattr(layer, "compute_dtype", "float32"))


def layer_path(layer: Any) -> str:
    """The name a user finds in model.summary() (Keras 3 `path` for nested layers)."""
    return str(getattr(layer, "path", None) or layer.name)


def all_layers(model: Any) -> list[Any]:
    """Every layer, nested models and custom layers' sub-layers included, in build order."""
    flatten = getattr(model, "_flatten_layers", None)
    if flatten is not None:
        return list(flatten(include_self=False, recursive=True))
    return list(getattr(model, "layers", []))


def output_layers(model: Any) -> list[Any]:
    """The layers producing the model's outputs (inside nested models), or [] for subclassed models."""
    import keras

    try:
        outputs = keras.tree.flatten(model.outputs)
    except (AttributeError, ValueError, TypeError):
        return []
    layers = []
    for tensor in outputs:
        history = getattr(tensor, "_keras_history", None)
        layer = getattr(history, "operation", None)
        if layer is None:
            continue
        if isinstance(layer, keras.Model) and layer is not model:
            layers.extend(output_layers(layer) or [layer])
        else:
            layers.append(layer)
    return list(dict.fromkeys(layers))


def _activation_name(layer: Any) -> str | None:
    activation = getattr(layer, "activation", None)
    name = getattr(activation, "__name__", None) or (activation if isinstance(activation, str) else None)
    if name is None and type(layer).__name__ in ("Softmax", "ReLU"):
        name = type(layer).__name__.lower()
    return name


def _head_fix(layer: Any) -> str:
    """The head with dtype="float32", written as the user's own layer call."""
    cls = type(layer).__name__
    config = layer.get_config() if hasattr(layer, "get_config") else {}
    activation = _activation_name(layer)
    if cls == "Dense":
        act = f', activation="{activation}"' if activation not in (None, "linear") else ""
        line = f'outputs = keras.layers.Dense({config.get("units")}{act}, dtype="float32")(x)'
    elif cls == "Activation":
        line = f'outputs = keras.layers.Activation("{activation}", dtype="float32")(x)'
    elif cls == "Softmax":
        line = 'outputs = keras.layers.Softmax(dtype="float32")(x)'
    else:
        line = f'outputs = keras.layers.{cls}(..., dtype="float32")(x)  # was {layer.name!r}'
    return (f"{line}\n"
            "# or keep the logits 16-bit and add a float32 final activation:\n"
            "# outputs = keras.layers.Activation(\"softmax\", dtype=\"float32\")(logits)\n"
            "# or let tfturbo do it (any model): tfturbo run ... --fix-head")


def head_findings(model: Any, sample_x: Any = None) -> list[Finding]:
    """HEAD_NOT_FLOAT32 for each output layer computing in 16-bit.

    Sequential and Functional models are checked from their graph. A subclassed
    model has no graph to read: if `sample_x` (one input batch) is given, the
    dtype of what the model actually returns is checked instead.
    """
    heads = output_layers(model)
    findings = []
    for layer in heads:
        dtype = compute_dtype(layer)
        if dtype not in SIXTEEN_BIT:
            continue
        activation = _activation_name(layer)
        if activation in _PROBABILITY_ACTIVATIONS:
            what = f"output layer {layer_path(layer)!r} computes its {activation} in {dtype}"
        else:
            what = f"output layer {layer_path(layer)!r} computes in {dtype}, so the loss sees {dtype} outputs"
        findings.append(Finding(
            HEAD_NOT_FLOAT32,
            f"{what}: a 16-bit softmax/loss overflows or saturates (NaN loss, lost accuracy)",
            fix=_head_fix(layer), where=layer_path(layer),
            data={"layer": layer_path(layer), "class": type(layer).__name__, "compute_dtype": dtype,
                  "activation": activation}))
    if not heads and sample_x is not None:
        findings.extend(_subclassed_head_findings(model, sample_x))
    return findings


def _subclassed_head_findings(model: Any, sample_x: Any) -> list[Finding]:
    import keras

    outputs = keras.tree.flatten(model(sample_x, training=False))
    dtypes = sorted({str(keras.backend.standardize_dtype(o.dtype)) for o in outputs})
    sixteen = [d for d in dtypes if d in SIXTEEN_BIT]
    if not sixteen:
        return []
    where = f"{model.name} (output of call())"
    return [Finding(
        HEAD_NOT_FLOAT32,
        f"model {model.name!r} returns {', '.join(sixteen)} outputs: its last layer or final activation "
        "computes in 16-bit, which overflows or saturates the softmax/loss",
        fix=('# in __init__, create the last layer (or the final activation) in float32:\n'
             'self.head = keras.layers.Dense(num_classes, activation="softmax", dtype="float32")'),
        where=where, data={"output_dtypes": dtypes})]


def _unaligned_sizes(layer: Any) -> list[tuple[str, int, int, str]]:
    """(what, size, proposed size, the layer call with it) for each size of `layer` that reaches a
    matmul or convolution and is not a multiple of 8."""
    import keras

    layers = keras.layers
    cls = type(layer).__name__
    sizes = []
    if isinstance(layer, layers.Dense):
        n = int(layer.units)
        sizes.append(("units", n, round_up(n), f"keras.layers.{cls}({round_up(n)}, ...)"))
    elif isinstance(layer, layers.Embedding):
        vocab, width = int(layer.input_dim), int(layer.output_dim)
        call = f"keras.layers.{cls}(input_dim={round_up(vocab)}, output_dim={round_up(width)}, ...)"
        sizes.append(("vocabulary (input_dim)", vocab, round_up(vocab), call))
        sizes.append(("width (output_dim)", width, round_up(width), call))
    elif isinstance(layer, layers.MultiHeadAttention):
        # The projections are heads × key_dim wide and each head's attention logits contract over
        # key_dim: both must be multiples of 8, so the per-head size is what gets rounded.
        heads = int(layer.num_heads)
        for arg in ("key_dim", "value_dim"):
            per_head = int(getattr(layer, arg))
            if (arg == "value_dim" and per_head == int(layer.key_dim)) or per_head % ALIGN == 0:
                continue
            sizes.append((f"num_heads × {arg} ({heads} × {per_head})", heads * per_head,
                          heads * round_up(per_head),
                          f"keras.layers.{cls}(num_heads={heads}, {arg}={round_up(per_head)}, ...)"))
        return sizes
    else:
        filters = getattr(layer, "filters", None)
        if isinstance(filters, int) and "conv" in cls.lower():
            sizes.append(("filters", filters, round_up(filters), f"keras.layers.{cls}({round_up(filters)}, ...)"))
    return [entry for entry in sizes if entry[1] % ALIGN]


def dim_findings(model: Any) -> list[Finding]:
    """DIM_NOT_MULTIPLE_OF_8 for each 16-bit layer with a matmul/conv size that is not a multiple of 8.

    Output layers are skipped: their width is the number of classes or targets,
    fixed by the task, and they compute in float32 anyway when the head is right.
    """
    heads = set(map(id, output_layers(model)))
    findings = []
    for layer in all_layers(model):
        if id(layer) in heads or compute_dtype(layer) not in SIXTEEN_BIT:
            continue
        bad = _unaligned_sizes(layer)
        if not bad:
            continue
        parts = "; ".join(f"{what} = {size} → {proposed}" for what, size, proposed, _ in bad)
        findings.append(Finding(
            DIM_NOT_MULTIPLE_OF_8,
            f"{type(layer).__name__} {layer_path(layer)!r}: {parts} "
            f"(16-bit matmuls and convolutions use Tensor Cores fully only at multiples of {ALIGN})",
            fix="\n".join(dict.fromkeys(call for *_, call in bad)) +
                "  # was " + ", ".join(f"{what} = {size}" for what, size, *_ in bad),
            where=layer_path(layer),
            data={"layer": layer_path(layer), "class": type(layer).__name__,
                  "sizes": [{"what": w, "size": s, "proposed": p} for w, s, p, _ in bad]}))
    return findings


def layer_table(model: Any) -> list[dict[str, Any]]:
    """One row per layer: name, class, compute and variable dtypes, parameters — for the audit document."""
    heads = set(map(id, output_layers(model)))
    rows = []
    for layer in all_layers(model):
        policy = getattr(layer, "dtype_policy", None)
        try:
            params = int(layer.count_params()) if getattr(layer, "built", False) else None
        except ValueError:
            params = None
        rows.append({"name": layer_path(layer), "class": type(layer).__name__,
                     "compute_dtype": compute_dtype(layer),
                     "variable_dtype": str(getattr(policy, "variable_dtype", "") or ""),
                     "params": params, "output": id(layer) in heads})
    return rows
