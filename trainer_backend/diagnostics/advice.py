"""Fixes written in the workload's own terms: where the change goes and what the code there looks like.

A finding's fix is code the user pastes. The same change reads differently in
a contract file (`make_datasets()`, `build_model()`) and in a training script
(the line that calls `fit()`), for NumPy arrays given to `fit()` and for a
tf.data pipeline, and for a Sequential list, a Functional graph and a
subclassed model's `__init__`/`call()`. `WorkloadShape` says which; each
`*_fix` function writes one change for that shape. The audit and the run build
one shape per workload (`shape_of`) and pass it to every check that writes code.

A script's own words come first: the core reads its file
(`tfturbo.patch.advice`) for the fit() call the run measured — what it is
given as x and y (`model.fit(X, y)` is told about `X`, never `x_train`), the
model's variable, its other arguments — and
writes a change as the script's own lines after the edit, placed where the
patch places it (the batch size at `BATCH = 100`, drop_remainder on the
`.batch()` the script already calls). Only where that reader is not certain
does a fix fall back to a template, which then names the place, not a
variable the script may not have.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from tfturbo.patch import changes as C

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
    path: str = ""  # the workload's file (the fixes quote and edit its own lines)
    fit_line: int | None = None  # a script's fit() line, as the run saw it
    given: Any = None  # tfturbo.patch.advice.FitFacts when the caller has them (else read on first use: `facts`)

    @cached_property
    def facts(self) -> Any:
        """The script's fit() call as it reads (`tfturbo.patch.advice.FitFacts`), read from its file the first
        time a fix needs it (never for a run that writes no fix); None for a workload file or a script not read."""
        if self.given is not None or self.source != SCRIPT or not self.path:
            return self.given
        from tfturbo.patch.advice import fit_facts

        return fit_facts(self.path, self.fit_line, self.data)

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

    @property
    def x(self) -> str:
        """The training features as the script names them in fit() (x_train in a template)."""
        return _operand(self.facts.x) if self.facts is not None and self.facts.x else "x_train"

    @property
    def y(self) -> str | None:
        """The labels as the script names them in fit(); None when fit() gets none (the model's own train_step)."""
        if self.facts is not None:
            return _operand(self.facts.y) if self.facts.y else None
        return "y_train"

    @property
    def fitted(self) -> str:
        return self.facts.model if self.facts is not None else "model"

    @property
    def dataset(self) -> str:
        """The training dataset's variable in the script (train_ds in a template)."""
        return self.facts.x_name if self.facts is not None and self.facts.x_name else "train_ds"

    def edited(self, change: C.Change) -> str | None:
        """`change` as the workload file's own lines after it (`tfturbo.patch.advice.edited_lines`), or None."""
        if not self.path:
            return None
        from tfturbo.patch.advice import edited_lines
        from tfturbo.patch.place import Target

        return edited_lines(self.path, change, Target(contract=self.source == CONTRACT, fit_line=self.fit_line,
                                                      data=self.data))


def _operand(code: str) -> str:
    """An expression as the operand of `[...]`, `.astype()`, `len()`: parenthesized unless it is a name."""
    return code if code.replace(".", "").replace("_", "").isalnum() else f"({code})"


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
    line = getattr(call, "line", None)
    path = str(getattr(workload, "path", "") or "")
    return WorkloadShape(source, data, kind, getattr(workload, "fit_where", "") if source == SCRIPT else "", split,
                         path, line)


def layer_call(cls: str, args: str, shape: WorkloadShape, var: str = "outputs", arg: str = "x") -> str:
    """`keras.layers.CLS(ARGS)` as this model kind writes a layer."""
    layer = f"keras.layers.{cls}({args})"
    if shape.model == SEQUENTIAL:
        return f"{layer},  # in the keras.Sequential([...]) list"
    if shape.model == SUBCLASSED:
        return f"self.head = {layer}  # in __init__; call() returns self.head(...)"
    return f"{var} = {layer}({arg})"


def head_fix(cls: str, args: str, decision: Any, shape: WorkloadShape, layer: str = "", activation: str | None = None,
             units: int | None = None) -> str:
    """The output layer in float32: the script's own layer line with dtype="float32" where its source says it,
    else the layer as this model kind writes it; the alternative follows the head, as `decision`
    (`model_audit.HeadDecision`, from this output's own loss) chose it: a head with its own softmax or sigmoid
    keeps that function (the layer 16-bit without it, then a float32 one — never a second one, never a softmax
    over one unit); a head without one gets a float32 final activation after it — linear for logits or a
    regression output (it keeps its values), the softmax/sigmoid only where its crossentropy takes
    probabilities."""
    own = shape.edited(C.Float32Head(why="", layers=((layer, cls),)))
    lines = [own] if own else [layer_call(cls, f'{args}, dtype="float32"' if args else 'dtype="float32"', shape)]
    if shape.model != SUBCLASSED:
        if decision.final is None and activation in ("softmax", "sigmoid", "log_softmax") and \
                not (activation != "sigmoid" and units == 1):
            lines.append(f"# or keep the layer 16-bit without its {activation} and end with a float32 {activation}:")
            lines.append("# " + layer_call("Activation", f'"{activation}", dtype="float32"', shape, arg="logits"))
        elif decision.final is not None and not (decision.final == "softmax" and units == 1):
            lines.append(f"# or keep the layer 16-bit and add a float32 final activation ({decision.why}):")
            lines.append("# " + layer_call("Activation", f'"{decision.final}", dtype="float32"', shape,
                                           arg="logits" if decision.final != "linear" else "outputs"))
    lines.append("# or let tfturbo do it (any model): tfturbo run ... --fix-head (ab/tune settings: fix_head=on)")
    return "\n".join(lines)


def partial_batch_fix(batch_size: int, shape: WorkloadShape) -> str:
    """Drop the partial last batch, where the training data is made: the arrays sliced to whole batches in the
    script's own fit() (Keras batches arrays itself), or drop_remainder=True on the batch() call the pipeline
    already makes (never a second batch() of batches)."""
    if shape.data == NUMPY:
        x, y = shape.x, shape.y
        if shape.source == SCRIPT:
            given = f"{x}[:n]" + (f", {y}[:n]" if y else "")
            where = f"  # at {shape.fit_where}" if shape.fit_where else ""
            call = shape.facts.call_with(given) if shape.facts is not None else \
                f"{shape.fitted}.fit({given}, batch_size={batch_size})"  # its own call, given whole batches
            lines = [f"n = len({x}) // {batch_size} * {batch_size}  # a whole number of batches"
                     + (" (of what validation_split leaves)" if shape.validation_split else ""), f"{call}{where}"]
        else:
            lines = [f"n = len(x_train) // {batch_size} * {batch_size}  # a whole number of batches",
                     "x_train, y_train = x_train[:n], y_train[:n]  # in make_datasets()"]
    else:
        own = shape.edited(C.DropRemainder(why=""))
        lines = [own] if own else [
            f"# add drop_remainder=True to the batch() call that batches the training data ({shape.data_place}):",
            f"{shape.dataset}.batch({batch_size}, drop_remainder=True)" if shape.source == SCRIPT else
            f"train_ds = train_ds.batch({batch_size}, drop_remainder=True)  # {shape.data_place}"]
    lines.append("# or let tfturbo drop the partial batch: tfturbo run ... --drop-remainder")
    return "\n".join(lines)


def integer_input_fix(input_shape: tuple, shape: WorkloadShape) -> str:
    """Integer ids declared as integers: the Input's dtype (Sequential/Functional: the script's own Input line
    where it has one), or a cast in the data (a subclassed model, whose layers never autocast integer
    tensors)."""
    dims = ", ".join(str(d) for d in input_shape)
    dims = f"({dims},)" if len(input_shape) == 1 else f"({dims})"
    own = shape.edited(C.IntegerInput(why="")) if shape.model in (SEQUENTIAL, FUNCTIONAL) else None
    if own:
        line = own
    elif shape.model in (SEQUENTIAL, FUNCTIONAL):
        call = f'keras.Input(shape={dims}, dtype="int32")'
        line = f"{call},  # first in the keras.Sequential([...]) list" if shape.model == SEQUENTIAL \
            else f"inputs = {call}  # {shape.model_place}"
    elif shape.data == NUMPY:
        x = shape.x
        line = f'{x} = {x}.astype("int32")  # and the validation arrays; {shape.data_place}'
    else:
        ds = shape.dataset
        line = f"{ds} = {ds}.map(lambda x, y: (tf.cast(x, tf.int32), y))  # and the validation data; " \
               f"{shape.data_place}"
    return line + "\n# or let tfturbo keep the ids exact: tfturbo run ... --fix-int-inputs (ab/tune: fix_int_inputs=on)"


def batch_size_fix(batch_size: int, shape: WorkloadShape | None = None) -> str:
    """Where this workload sets its batch size, edited: BATCH_SIZE, the script's constant or argparse default,
    its fit(batch_size=...) or its own batch() call."""
    shape = shape or WorkloadShape()
    own = shape.edited(C.BatchSize(why="", size=batch_size))
    if own:
        line = own
    elif shape.source == CONTRACT:
        line = f"BATCH_SIZE = {batch_size}  # in the workload file"
    elif shape.data == NUMPY:
        given = shape.x + (f", {shape.y}" if shape.y else "")
        line = f"{shape.fitted}.fit({given}, batch_size={batch_size}, ...)  # at {shape.fit_where or 'the fit() call'}"
    else:
        line = f"# the batch size where the training data is batched ({shape.data_place}): .batch({batch_size})"
    return f"{line}\n# or: tfturbo run ... --batch-size {batch_size}"


def array_input_fix(batch_size: int | str, shape: WorkloadShape) -> str:
    """NumPy arrays given to fit() (or returned by make_datasets()) as a tf.data pipeline that prefetches the
    next batches while the step runs: the change from the fit() call the workload makes now, in its names."""
    script = shape.source == SCRIPT
    x, y = (shape.x, shape.y) if script else ("x_train", "y_train")
    split = shape.validation_split
    lines = []
    if script:
        where = f" at {shape.fit_where}" if shape.fit_where else ""
        said = shape.facts.call if shape.facts is not None else \
            f"{shape.fitted}.fit({x}, {y}, batch_size={batch_size}{f', validation_split={split:g}' if split else ''}, ...)"
        lines.append(f"# was{where}: {said}")
    else:
        lines.append("# in make_datasets(), instead of returning (x_train, y_train):")
    named = shape.facts is None or (shape.facts.x_name and (y is None or shape.facts.y_name))
    vx, vy = (f"{x}_val", f"{y}_val" if y else None) if named else ("x_val", "y_val" if y else None)
    if split:  # fit() splits arrays only: split them first, as Keras does (the last fraction, unshuffled)
        lines += [f"n_val = int(len({x}) * {split:g})  # validation_split={split:g}: the last {split:.0%}, as Keras "
                  "takes it",
                  f"{vx}, {vy} = {x}[-n_val:], {y}[-n_val:]" if y else f"{vx} = {x}[-n_val:]",
                  f"{x}, {y} = {x}[:-n_val], {y}[:-n_val]" if y else f"{x} = {x}[:-n_val]"]
    train = f"({x}, {y})" if y else x
    lines += [f"train_ds = (tf.data.Dataset.from_tensor_slices({train})",
              f"    .shuffle(len({x}))   # fit() shuffled the arrays each epoch",
              f"    .batch({batch_size})",
              "    .prefetch(tf.data.AUTOTUNE))   # overlap input with the training step"]
    if script:
        validation = (("validation_data", f"({vx}, {vy})" if y else vx),) if split else ()
        dropped = ("batch_size", "validation_split", "shuffle")
        call = shape.facts.call_with("train_ds", dropped, validation) if shape.facts is not None else \
            f"{shape.fitted}.fit(train_ds{''.join(f', {k}={v}' for k, v in validation)})"
        lines.append(f"{call}  # no batch_size: the dataset is batched")
    else:
        lines.append("return train_ds, val_ds  # val_ds: the validation arrays as before, or a dataset like train_ds")
    return "\n".join(lines)
