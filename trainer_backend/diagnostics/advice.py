"""Fixes written in the workload's own terms: where the change goes and what the code there looks like.

A finding's fix is code the user pastes. The same change reads differently in
a contract file (`make_datasets()`, `build_model()`) and in a training script
(the line that calls `fit()`), for NumPy arrays given to `fit()` and for a
tf.data pipeline, and for a Sequential list, a Functional graph and a
subclassed model's `__init__`/`call()`. `WorkloadShape` says which; each
`*_fix` function writes one change for that shape. The audit and the run build
one shape per workload (`shape_of`) and pass it to every check that writes code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

CONTRACT, SCRIPT = "contract", "script"
NUMPY, TF_DATA = "numpy", "tf.data"
SEQUENTIAL, FUNCTIONAL, SUBCLASSED = "sequential", "functional", "subclassed"


@dataclass(frozen=True)
class WorkloadShape:
    source: str = CONTRACT  # a contract file or a training script
    data: str = TF_DATA  # what the training data is given as: NumPy arrays or a tf.data pipeline (or generator)
    model: str = FUNCTIONAL  # Sequential, Functional or subclassed
    fit_where: str = ""  # a script's fit() call ("train.py line 17")
    validation_split: float = 0.0  # a script's fit(validation_split=...): arrays in a dataset cannot be split by fit()

    @property
    def data_place(self) -> str:
        """Where the training data is made, in the user's terms."""
        if self.source == SCRIPT:
            return f"where the script makes it (before fit() at {self.fit_where})" if self.fit_where \
                else "where the script makes it"
        return "in make_datasets()"

    @property
    def model_place(self) -> str:
        return "where the script builds the model" if self.source == SCRIPT else "in build_model()"


def shape_of(workload: Any, model: Any) -> WorkloadShape:
    """The shape of a loaded workload whose model is built (`workload.build_model()` ran)."""
    import keras

    source = SCRIPT if hasattr(workload, "call") and hasattr(workload, "script_args") else CONTRACT
    data = NUMPY if getattr(workload, "array_data", False) else TF_DATA
    if isinstance(model, keras.Sequential):
        kind = SEQUENTIAL
    elif getattr(model, "_is_graph_network", False) or type(model).__name__ == "Functional":
        kind = FUNCTIONAL
    else:
        kind = SUBCLASSED
    call = getattr(workload, "call", None) if source == SCRIPT else None
    split = float(getattr(call, "validation_split", 0.0) or 0.0)
    return WorkloadShape(source, data, kind, getattr(workload, "fit_where", "") if source == SCRIPT else "", split)


def layer_call(cls: str, args: str, shape: WorkloadShape, var: str = "outputs", arg: str = "x") -> str:
    """`keras.layers.CLS(ARGS)` as this model kind writes a layer."""
    layer = f"keras.layers.{cls}({args})"
    if shape.model == SEQUENTIAL:
        return f"{layer},  # in the keras.Sequential([...]) list"
    if shape.model == SUBCLASSED:
        return f"self.head = {layer}  # in __init__; call() returns self.head(...)"
    return f"{var} = {layer}({arg})"


def head_fix(cls: str, args: str, decision: Any, shape: WorkloadShape) -> str:
    """The output layer in float32, for this model kind; for a head without its own activation, the other way:
    a float32 final activation after it, the one `decision` (`model_audit.HeadDecision`, from this output's own
    loss) chose — a logits or regression head keeps its values (linear), never a softmax its loss does not
    expect."""
    lines = [layer_call(cls, f'{args}, dtype="float32"' if args else 'dtype="float32"', shape)]
    if decision.final is not None and shape.model != SUBCLASSED:
        lines.append(f"# or keep the layer 16-bit and add a float32 final activation ({decision.why}):")
        lines.append("# " + layer_call("Activation", f'"{decision.final}", dtype="float32"', shape, arg="logits"))
    lines.append("# or let tfturbo do it (any model): tfturbo run ... --fix-head (ab/tune settings: fix_head=on)")
    return "\n".join(lines)


def partial_batch_fix(batch_size: int, shape: WorkloadShape) -> str:
    """Drop the partial last batch, where the training data is made."""
    if shape.data == NUMPY:
        lines = [f"n = len(x_train) // {batch_size} * {batch_size}  # a whole number of batches",
                 f"model.fit(x_train[:n], y_train[:n], batch_size={batch_size}, ...)"
                 if shape.source == SCRIPT else "x_train, y_train = x_train[:n], y_train[:n]  # in make_datasets()"]
    else:
        lines = [f"train_ds = train_ds.batch({batch_size}, drop_remainder=True)  # {shape.data_place}"]
    lines.append("# or let tfturbo drop the partial batch: tfturbo run ... --drop-remainder")
    return "\n".join(lines)


def integer_input_fix(input_shape: tuple, shape: WorkloadShape) -> str:
    """Integer ids declared as integers: the Input's dtype (Sequential/Functional), or a cast in the data
    (a subclassed model, whose layers never autocast integer tensors)."""
    dims = ", ".join(str(d) for d in input_shape)
    dims = f"({dims},)" if len(input_shape) == 1 else f"({dims})"
    if shape.model in (SEQUENTIAL, FUNCTIONAL):
        call = f'keras.Input(shape={dims}, dtype="int32")'
        line = f"{call},  # first in the keras.Sequential([...]) list" if shape.model == SEQUENTIAL \
            else f"inputs = {call}  # {shape.model_place}"
    elif shape.data == NUMPY:
        line = f'x_train = x_train.astype("int32")  # and x_val; {shape.data_place}'
    else:
        line = f"train_ds = train_ds.map(lambda x, y: (tf.cast(x, tf.int32), y))  # and val_ds; {shape.data_place}"
    return line + "\n# or let tfturbo keep the ids exact: tfturbo run ... --fix-int-inputs (ab/tune: fix_int_inputs=on)"


def batch_size_fix(batch_size: int, shape: WorkloadShape | None = None) -> str:
    """Where this workload sets its batch size: BATCH_SIZE, fit(batch_size=...) or the script's .batch()."""
    shape = shape or WorkloadShape()
    if shape.source == CONTRACT:
        line = f"BATCH_SIZE = {batch_size}  # in the workload file"
    elif shape.data == NUMPY:
        line = f"model.fit(x_train, y_train, batch_size={batch_size}, ...)  # at {shape.fit_where or 'the fit() call'}"
    else:
        line = f"train_ds = train_ds.batch({batch_size})  # {shape.data_place}"
    return f"{line}\n# or: tfturbo run ... --batch-size {batch_size}"


def array_input_fix(batch_size: int | str, shape: WorkloadShape) -> str:
    """NumPy arrays given to fit() (or returned by make_datasets()) as a tf.data pipeline that prefetches the
    next batches while the step runs: the change from the fit() call the workload makes now."""
    fit = f"model.fit(x_train, y_train, batch_size={batch_size}"
    split = shape.validation_split
    lines = []
    if shape.source == SCRIPT:
        where = f" at {shape.fit_where}" if shape.fit_where else ""
        lines.append(f"# was{where}: {fit}{f', validation_split={split:g}' if split else ''}, ...)")
    else:
        lines.append("# in make_datasets(), instead of returning (x_train, y_train):")
    train = "(x_train, y_train)"
    if split:  # fit() splits arrays only: split them first, as Keras does (the last fraction, unshuffled)
        lines += [f"n_val = int(len(x_train) * {split:g})  # validation_split={split:g}: the last {split:.0%}, as Keras "
                  "takes it",
                  "x_val, y_val = x_train[-n_val:], y_train[-n_val:]",
                  "x_train, y_train = x_train[:-n_val], y_train[:-n_val]"]
    lines += [f"train_ds = (tf.data.Dataset.from_tensor_slices({train})",
              "    .shuffle(len(x_train))   # fit() shuffled the arrays each epoch",
              f"    .batch({batch_size})",
              "    .prefetch(tf.data.AUTOTUNE))   # overlap input with the training step"]
    if shape.source == SCRIPT:
        lines.append("model.fit(train_ds" + (", validation_data=(x_val, y_val)" if split else "") + ", ...)"
                     "  # no batch_size: the dataset is batched")
    else:
        lines.append("return train_ds, val_ds  # val_ds: the validation arrays as before, or a dataset like train_ds")
    return "\n".join(lines)
