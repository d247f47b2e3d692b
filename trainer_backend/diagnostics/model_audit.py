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

from dataclasses import dataclass
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
    return list(dict.fromkeys(layer for layer, _ in output_heads(model)))


def output_heads(model: Any) -> list[tuple[Any, int]]:
    """(the layer producing it, the output's index among the model's outputs) for each output, the layers of
    nested models followed; [] for a subclassed model."""
    import keras

    try:
        outputs = keras.tree.flatten(model.outputs)
    except (AttributeError, ValueError, TypeError):
        return []
    heads: list[tuple[Any, int]] = []
    for index, tensor in enumerate(outputs):
        history = getattr(tensor, "_keras_history", None)
        layer = getattr(history, "operation", None)
        if layer is None:
            continue
        if isinstance(layer, keras.Model) and layer is not model:
            heads.extend((inner, index) for inner in (output_layers(layer) or [layer]))
        else:
            heads.append((layer, index))
    return heads


def _activation_name(layer: Any) -> str | None:
    activation = getattr(layer, "activation", None)
    name = getattr(activation, "__name__", None) or (activation if isinstance(activation, str) else None)
    if name is None and type(layer).__name__ in ("Softmax", "ReLU"):
        name = type(layer).__name__.lower()
    return name


def _head_fix(layer: Any, decision: HeadDecision, shape: Any = None) -> str:
    """The head with dtype="float32", written as the user's own layer line where the script shows it (else for
    this model kind), its alternative following the head (`decision`, from this output's own loss)."""
    from .advice import WorkloadShape, head_fix

    cls = type(layer).__name__
    config = layer.get_config() if hasattr(layer, "get_config") else {}
    activation = _activation_name(layer)
    units = config.get("units") if isinstance(config.get("units"), int) else None
    if cls == "Dense":
        args = f'{config.get("units")}' + (f', activation="{activation}"' if activation not in (None, "linear") else "")
    elif cls == "Activation":
        args = f'"{activation}"'
    elif cls == "Softmax":
        args = ""
    else:
        args = f"...  # was {layer.name!r}"
    return head_fix(cls, args, decision, shape or WorkloadShape(), layer=layer_path(layer), activation=activation,
                    units=units)


@dataclass(frozen=True)
class OutputLoss:
    """What one output is trained with: its loss's name ("" when none is compiled for it), its kind
    ("categorical", "binary", "regression" or "other") and whether it takes logits."""

    name: str
    kind: str
    from_logits: bool


@dataclass(frozen=True)
class HeadDecision:
    """Which float32 fix fits a head: `final`, the float32 activation a head without its own may take after it
    (None: the head keeps its own activation), and `why`, in words."""

    final: str | None
    why: str


def head_decision(activation: str | None, loss: OutputLoss) -> HeadDecision:
    """The one rule for a 16-bit head's fix, from that output's own loss: a head with its softmax or sigmoid
    keeps it (never a second one); a logits head (from_logits=True), a regression head and one whose loss is
    unknown keep their values (a float32 linear activation: a cast, nothing else); only a head without an
    activation whose crossentropy takes probabilities gets the softmax or sigmoid that loss expects."""
    if activation in _PROBABILITY_ACTIVATIONS:
        return HeadDecision(None, f"it has its {activation}")
    if loss.from_logits:
        return HeadDecision("linear", "the loss takes logits (from_logits=True): keep them")
    if loss.kind == "categorical":
        return HeadDecision("softmax", f"{loss.name} takes probabilities")
    if loss.kind == "binary":
        return HeadDecision("sigmoid", f"{loss.name} takes probabilities")
    if loss.kind == "regression":
        return HeadDecision("linear", "a regression output: keep its values")
    return HeadDecision("linear", "keep its values")


_REGRESSION = ("meansquarederror", "mse", "meanabsoluteerror", "mae", "meanabsolutepercentageerror", "mape",
               "meansquaredlogarithmicerror", "msle", "huber", "logcosh", "cosinesimilarity", "poisson",
               "tweedie")


def output_loss(model: Any, index: int, name: str | None = None) -> OutputLoss:
    """The loss compiled for the model's output `index` (its name `name`): `model.loss` as compile() got it —
    one loss for every output, a list by position, a dict by output name."""
    loss = getattr(model, "loss", None)
    if isinstance(loss, dict):
        keys = [k for k in (name, *_output_keys(model, index)) if k is not None]
        loss = next((loss[k] for k in keys if k in loss), None)
    elif isinstance(loss, (list, tuple)):
        loss = loss[index] if index < len(loss) else None
    if loss is None:
        return OutputLoss("", "other", False)
    label = loss if isinstance(loss, str) else (getattr(loss, "__name__", None) or type(loss).__name__)
    if not isinstance(loss, str) and type(loss).__name__ == "LossFunctionWrapper":
        label = getattr(getattr(loss, "fn", None), "__name__", label)
    try:
        config = loss.get_config() if hasattr(loss, "get_config") else {}
    except Exception:  # noqa: BLE001 - a loss without a readable config
        config = {}
    flat = str(label).lower().replace("_", "")
    kind = ("binary" if "binary" in flat else "categorical" if "categorical" in flat or flat == "crossentropy"
            else "regression" if flat in _REGRESSION or flat.startswith(_REGRESSION) else "other")
    return OutputLoss(str(label), kind, bool((config or {}).get("from_logits")))


def _output_keys(model: Any, index: int) -> list[str]:
    """The names `model.loss` may key output `index` by: its output name and, for dict outputs, its key."""
    import keras

    keys = []
    names = list(getattr(model, "output_names", None) or [])
    if index < len(names):
        keys.append(names[index])
    structure = getattr(model, "_outputs_struct", None)
    if isinstance(structure, dict):
        flat_keys = [path[0] for path, _ in keras.tree.flatten_with_path(structure)]
        if index < len(flat_keys):
            keys.append(str(flat_keys[index]))
    return keys


def head_findings(model: Any, sample_x: Any = None, sample_y: Any = None, shape: Any = None) -> list[Finding]:
    """HEAD_NOT_FLOAT32 for each output layer computing in 16-bit, with what is at risk for that head.

    Sequential and Functional models are checked from their graph. A subclassed
    model has no graph to read: if `sample_x` (one input batch) is given, the
    dtype of what the model actually returns is checked instead. With
    `sample_y` (its labels) too, each compiled metric is tried on the model's
    own 16-bit predictions: one that refuses them (a top-k metric's InTopKV2
    takes float32 only) would fail every training step. `shape`
    (`advice.WorkloadShape`) writes the fix for this kind of workload.
    """
    heads = output_heads(model)
    refusing = metrics_refusing_16bit(model, sample_x, sample_y) if sample_x is not None else []
    findings = []
    first: dict[int, tuple[Any, int]] = {}  # a layer that produces several outputs: its first one's loss
    for layer, index in heads:
        first.setdefault(id(layer), (layer, index))
    for layer, index in first.values():
        dtype = compute_dtype(layer)
        if dtype not in SIXTEEN_BIT:
            continue
        activation = _activation_name(layer)
        loss = output_loss(model, index, getattr(layer, "name", None))
        decision = head_decision(activation, loss)
        risks = head_risks(model, dtype, activation, refusing)
        how = f"computes its {activation} in {dtype}" if activation in _PROBABILITY_ACTIVATIONS \
            else f"computes in {dtype}"
        findings.append(Finding(
            HEAD_NOT_FLOAT32, f"output layer {layer_path(layer)!r} {how}: {'; '.join(risks)}",
            fix=_head_fix(layer, decision, shape), where=layer_path(layer),
            severity=_severity(activation, dtype, refusing, model),
            data={"layer": layer_path(layer), "class": type(layer).__name__, "compute_dtype": dtype,
                  "activation": activation, "risks": risks, "output": index,
                  "loss": {"name": loss.name, "kind": loss.kind, "from_logits": loss.from_logits},
                  "final_activation": decision.final,
                  "metrics_refusing": [name for name, _ in refusing]}))
    if not heads and sample_x is not None:
        findings.extend(_subclassed_head_findings(model, sample_x, refusing, shape))
    return findings


def head_risks(model: Any, dtype: str, activation: str | None, refusing: list[tuple[str, str]]) -> list[str]:
    """What a 16-bit head actually puts at risk, most serious first. Keras 3 losses convert their inputs to
    float32 themselves, so a logits head's loss is safe; its softmax, its metrics and code outside Keras'
    losses are not."""
    risks = []
    if refusing:
        names = ", ".join(name for name, _ in refusing)
        which = "metric" if len(refusing) == 1 else "metrics"
        risks.append(f"{which} {names} cannot take {dtype} predictions ({refusing[0][1]}): every training "
                     "step fails")
    if activation in ("softmax", "log_softmax"):
        risks.append(f"a float16 {activation} overflows (NaN loss)" if dtype == "float16" else
                     f"a bfloat16 {activation} keeps 3 significant digits: probabilities saturate and accuracy "
                     "can be lost")
    elif activation == "sigmoid":
        risks.append(f"a {dtype} sigmoid saturates near 0 and 1 (the loss sees rounded probabilities)")
    if type(model).train_step is not _keras_train_step() or type(model).compute_loss is not _keras_compute_loss():
        risks.append(f"the model's own train_step/compute_loss computes its loss on {dtype} outputs")
    if not risks:
        risks.append(f"Keras 3 losses convert outputs to float32, so the loss itself is safe; the outputs are "
                     f"rounded to {dtype}, and any loss, metric or post-processing outside Keras' sees {dtype}")
    return risks


def _severity(activation: str | None, dtype: str, refusing: list, model: Any) -> str:
    """An error where training fails or the numbers are wrong (a 16-bit softmax/sigmoid, a metric that refuses
    16-bit, a custom loss), a warning for a logits head whose Keras loss is already computed in float32."""
    from tfturbo.findings import ERROR, WARNING

    if refusing or activation in _PROBABILITY_ACTIVATIONS:
        return ERROR
    if type(model).train_step is not _keras_train_step() or type(model).compute_loss is not _keras_compute_loss():
        return ERROR
    return WARNING


def _keras_train_step():
    import keras

    return keras.Model.train_step


def _keras_compute_loss():
    import keras

    return keras.Model.compute_loss


def metrics_refusing_16bit(model: Any, sample_x: Any, sample_y: Any) -> list[tuple[str, str]]:
    """(metric name, its error in one line) for each compiled metric that raises on the model's own 16-bit
    predictions of `sample_x` — tried on a fresh copy of the metric, so the model's own state is untouched."""
    import keras

    if sample_y is None:
        return []
    compiled = getattr(model, "_compile_metrics", None)
    user = getattr(compiled, "_user_metrics", None) if compiled is not None else None
    if not user:
        return []
    try:
        outputs = keras.tree.flatten(model(sample_x, training=False))
        labels = keras.tree.flatten(sample_y)
    except Exception:  # noqa: BLE001 - a model that cannot be called here is checked by the run
        return []
    if not any(str(keras.backend.standardize_dtype(o.dtype)) in SIXTEEN_BIT for o in outputs):
        return []
    names = list(getattr(model, "output_names", None) or [])
    pairs: list[tuple[Any, int]] = []
    if isinstance(user, dict):
        pairs = [(m, names.index(k)) for k, ms in user.items() if k in names for m in keras.tree.flatten(ms)]
    elif len(outputs) == 1:
        pairs = [(m, 0) for m in keras.tree.flatten(user)]
    refusing = []
    for identifier, index in pairs:
        if index >= len(outputs) or index >= len(labels):
            continue
        y_true, y_pred = labels[index], outputs[index]
        if str(keras.backend.standardize_dtype(y_pred.dtype)) not in SIXTEEN_BIT:
            continue
        metric = _fresh_metric(identifier, y_true, y_pred)
        if metric is None:
            continue
        try:
            metric.update_state(y_true, y_pred)
        except Exception as exc:  # noqa: BLE001 - this is what the check looks for
            text = " ".join(str(exc).split())
            refusing.append((metric.name, f"{type(exc).__name__}: {text[:160]}"))
    return refusing


def _fresh_metric(identifier: Any, y_true: Any, y_pred: Any):
    """A new metric object like `identifier` ("accuracy" resolved by the shapes, as compile does), or None."""
    import keras
    from keras.src.trainers.compile_utils import get_metric

    try:
        if isinstance(identifier, keras.metrics.Metric):
            return type(identifier).from_config(identifier.get_config())
        return get_metric(identifier, y_true, y_pred)
    except Exception:  # noqa: BLE001 - a metric that cannot be copied is not checked
        return None


def _subclassed_head_findings(model: Any, sample_x: Any, refusing: list[tuple[str, str]],
                              shape: Any = None) -> list[Finding]:
    import keras

    if type(model).call is keras.Model.call:  # no call() of its own (a VAE, a GAN): its train_step calls its parts
        return []
    from tfturbo.patch import changes as C

    outputs = keras.tree.flatten(model(sample_x, training=False))
    dtypes = sorted({str(keras.backend.standardize_dtype(o.dtype)) for o in outputs})
    sixteen = [d for d in dtypes if d in SIXTEEN_BIT]
    if not sixteen:
        return []
    where = f"{model.name} (output of call())"
    risks = head_risks(model, sixteen[0], None, refusing)
    decision = head_decision(None, output_loss(model, 0) if len(outputs) == 1 else OutputLoss("", "other", False))
    activation = f'activation="{decision.final}", ' if decision.final in ("softmax", "sigmoid") else ""
    return [Finding(
        HEAD_NOT_FLOAT32,
        f"model {model.name!r} returns {', '.join(sixteen)} outputs (its last layer or final activation computes "
        f"in 16-bit): {'; '.join(risks)}",
        fix=(shape.edited(C.Float32Head(why="")) if shape is not None else None) or (
            '# in __init__, create the last layer (or the final activation) in float32, its other arguments as '
            'they are:\n'
            f'self.head = keras.layers.Dense(units, {activation}dtype="float32")  # {decision.why}'),
        where=where, data={"output_dtypes": dtypes, "risks": risks,
                           "metrics_refusing": [name for name, _ in refusing]})]


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
