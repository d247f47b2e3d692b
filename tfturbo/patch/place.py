"""Each change placed where the script says that thing, as a rewrite of its concrete syntax tree.

One function per kind of change (`PLACE`), each given the script's source
(`source.Script`) and what the backend knows of it (`Target`), returning the
new source text, or `NotPlaced` with why when the place is not certain. The
edits themselves (`rewrite`) keep everything else byte for byte.

An edit that would set what the script already says changes nothing: the
code to apply never adds what the script has.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import libcst as cst

from ..learning_rate import rate_text

from . import changes as C
from .rewrite import NOT_LITERAL, Edits, expression, keyword_edit, literal, times
from .source import Script

NUMPY, TF_DATA = "numpy", "tf.data"


@dataclass(frozen=True)
class Target:
    """What the backend learned of the file when it ran it (the baseline run's summary "workload"): the line of
    the fit() it measured, whether fit() got NumPy arrays or a dataset, the options after `--`."""

    contract: bool = False  # a workload file (build_model() / make_datasets()), not a training script
    fit_line: int | None = None
    data: str | None = None  # NUMPY | TF_DATA | None (unknown: read from the source)
    script_args: tuple[str, ...] = ()


@dataclass(frozen=True)
class NotPlaced:
    why: str


Placed = str | NotPlaced


def keras_prefix(script: Script, edits: Edits, anchor: cst.CSTNode | None) -> str:
    """How the script reaches Keras at module level ("keras", "tf.keras"); `import keras` is added (after
    `anchor`, or at the top) when it does not."""
    name = script.module_binding("keras")
    if name:
        return name
    tf = script.module_binding("tensorflow")
    if tf:
        return f"{tf}.keras"
    if anchor is not None:
        edits.insert_after(anchor, ["import keras"], blank=False)
    else:
        edits.insert_at_start(["import keras"])
    return "keras"


# ------------------------------------------------------------------------------ one function per change


def place_policy(script: Script, change: C.Policy, target: Target) -> Placed:
    calls = script.policy_calls()
    edits = Edits(script)
    if calls:  # the script sets a policy itself: that call says the new one
        for call in calls:
            if not call.args:
                return NotPlaced(f"its set_global_policy() call at line {script.line(call)} has no argument")
            value = call.args[0].value
            named = script.value_of(value)
            if isinstance(named, cst.Call) and named.args:  # keras.mixed_precision.Policy("mixed_float16")
                named = named.args[0].value
            if not isinstance(named, cst.SimpleString):
                return NotPlaced(f"the script sets its policy from {script.code(value)} (line {script.line(call)})")
            if literal(named) != change.name:
                edits.replace(named, named.with_changes(value=_quoted(named, change.name)))
        return edits.apply() if not edits.empty() else script.text
    if change.name == "float32":
        return script.text  # Keras' default: nothing to say
    line = f'mixed_precision.set_global_policy("{change.name}")  # before the model is built'
    if target.contract and "build_model" in script.functions:  # tfturbo calls build_model() after the imports
        prefix = keras_prefix(script, edits, script.last_import_before_model())
        edits.insert_first_in(script.functions["build_model"], [f"{prefix}.{line}"])
        return edits.apply()
    anchor = script.last_import_before_model()
    prefix = keras_prefix(script, edits, anchor)
    if anchor is not None:
        edits.insert_after(anchor, [f"{prefix}.{line}"])
    else:
        edits.insert_at_start([f"{prefix}.{line}"])
    return edits.apply()


def _quoted(string: cst.SimpleString, value: str) -> str:
    quote = string.quote
    return f"{string.prefix}{quote}{value}{quote}"


def place_compile_argument(script: Script, change: C.CompileArgument, target: Target) -> Placed:
    calls = script.compile_calls()
    if not calls:
        many = len(script.method_calls("compile"))
        return NotPlaced("the compile() call of the fitted model was not found" if not many else
                         f"the script has {many} compile() calls and which one compiles the fitted model is not clear")
    edits = Edits(script)
    for call in calls:
        arg = script.keyword(call, change.name)
        if arg is None:
            if change.value != change.unsaid:
                edits.replace(call, keyword_edit(script, call, change.name, expression(change.value)))
            continue
        defined = script.value_of(arg.value)
        if literal(defined) == change.value:
            continue
        where = defined if defined is not None and defined is not arg.value and \
            literal(defined) is not NOT_LITERAL else arg.value
        edits.replace(where, expression(change.value))
    return edits.apply() if not edits.empty() else script.text


def data_kind(script: Script, fit: cst.Call, target: Target) -> str:
    """NUMPY or TF_DATA: the backend's word when it has one, else read from what fit() is given."""
    if target.data in (NUMPY, TF_DATA):
        return target.data
    x = script.keyword(fit, "x", 0)
    return TF_DATA if x is not None and script.dataset_batch_calls(x.value) else NUMPY


def training_batch_call(script: Script, fit: cst.Call) -> cst.Call | NotPlaced:
    """The one call that batches the training data given to fit()."""
    x = script.keyword(fit, "x", 0)
    if x is None:
        return NotPlaced(f"fit() at line {script.line(fit)} is given no training data by name")
    found = script.dataset_batch_calls(x.value)
    if len(found) == 1:
        return found[0]
    if not found:
        return NotPlaced(f"where {script.code(x.value)} is batched was not found in the script")
    lines = ", ".join(str(script.line(c)) for c in found)
    return NotPlaced(f"{script.code(x.value)} may be batched in {len(found)} places (lines {lines})")


def place_batch_size(script: Script, change: C.BatchSize, target: Target) -> Placed:
    edits = Edits(script)
    if target.contract:  # the contract's BATCH_SIZE (tfturbo calls make_datasets(BATCH_SIZE))
        constant = _module_constant(script, "BATCH_SIZE")
        if constant is None:
            anchor = script.last_import_before_model()
            if anchor is None:
                edits.insert_at_start([f"BATCH_SIZE = {change.size}"])
            else:
                edits.insert_after(anchor, [f"BATCH_SIZE = {change.size}"])
            return edits.apply()
        return _set_integer(script, edits, constant, change.size, target)
    fit = script.fit_call()
    if fit is None:
        return NotPlaced("no model.fit() call was found in the script")
    if data_kind(script, fit, target) == NUMPY:
        arg = script.keyword(fit, "batch_size", 2)
        if arg is None:  # Keras' default, 32: said outright
            edits.replace(fit, keyword_edit(script, fit, "batch_size", expression(change.size)))
            return edits.apply()
        return _set_integer(script, edits, arg.value, change.size, target)
    call = training_batch_call(script, fit)
    if isinstance(call, NotPlaced):
        return call
    if script.dataset_utility(call):
        arg = script.keyword(call, "batch_size")
        if arg is None:
            edits.replace(call, keyword_edit(script, call, "batch_size", expression(change.size)))
            return edits.apply()
    else:
        arg = script.keyword(call, "batch_size", 0)
        if arg is None:
            return NotPlaced(f"the batch() call at line {script.line(call)} gives no batch size")
    return _set_integer(script, edits, arg.value, change.size, target)


def _module_constant(script: Script, name: str) -> cst.BaseExpression | None:
    for stmt in script.module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1 and \
                        isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value == name:
                    return small.value
    return None


def _set_integer(script: Script, edits: Edits, expr: cst.BaseExpression, value: int, target: Target) -> Placed:
    """The integer literal `expr` stands for (followed back to its definition) set to `value`."""
    defined = script.value_of(expr)
    if not isinstance(defined, cst.Integer):
        return NotPlaced(f"the batch size is {script.code(expr)}, computed rather than written as a number "
                         f"(line {script.line(expr)})")
    options = _options_behind(script, expr)
    given = [o for o in options if any(a == o or a.startswith(o + "=") for a in target.script_args)]
    if given:
        return NotPlaced(f"the options after `--` set it ({given[0]}): run the script with {given[0]} {value}")
    if literal(defined) == value:
        return script.text
    edits.replace(defined, cst.Integer(str(value)))
    return edits.apply()


def _options_behind(script: Script, expr: cst.BaseExpression) -> list[str]:
    """The argparse option strings `expr` is read from (`args.batch_size`, or a name given it), else []."""
    node: cst.BaseExpression | None = expr
    for _ in range(8):
        if isinstance(node, cst.Attribute):
            return script.option_strings(node)
        if not isinstance(node, cst.Name):
            return []
        found = script.assignments(node)
        if len(found) != 1:
            return []
        a = found[0]
        node = a.value if a.value is not None else script.argument_for(a.function, a.param) if a.param else None
    return []


def place_learning_rate(script: Script, change: C.LearningRate, target: Target) -> Placed:
    calls = script.compile_calls()
    if not calls:
        return NotPlaced("the compile() call of the fitted model was not found")
    edits = Edits(script)
    opt = change.optimizer or {}
    for call in calls:
        arg = script.keyword(call, "optimizer", 0)
        given = script.value_of(arg.value) if arg is not None else None
        if arg is None or isinstance(given, cst.SimpleString):  # a name: its class at Keras' default rate
            default, cls = opt.get("default_learning_rate"), opt.get("class")
            if not (cls and isinstance(default, (int, float)) and opt.get("module") == "keras.optimizers"):
                return NotPlaced("the optimizer is given by name and its default learning rate was not recorded")
            prefix = keras_prefix(script, edits, script.last_import_before_model())
            new = cst.parse_expression(f"{prefix}.optimizers.{cls}(learning_rate={rate_text(default * change.factor)})")
            if arg is None:
                edits.replace(call, keyword_edit(script, call, "optimizer", new))
            else:
                edits.replace(arg.value, new)
            continue
        if not isinstance(given, cst.Call):
            return NotPlaced(f"the optimizer is {script.code(arg.value)}, made where the script does not say")
        rate = script.keyword(given, "learning_rate", 0)
        if rate is None:
            default = opt.get("default_learning_rate")
            if not isinstance(default, (int, float)):
                return NotPlaced(f"{script.code(given)} takes its default learning rate, which was not recorded")
            edits.replace(given, keyword_edit(script, given, "learning_rate",
                                              cst.parse_expression(rate_text(default * change.factor))))
            continue
        schedule = script.value_of(rate.value)
        if isinstance(schedule, cst.Call):
            initial = script.keyword(schedule, "initial_learning_rate", 0)
            if initial is None or not script.is_(schedule, "optimizers.schedules." + script.layer_class(schedule)):
                return NotPlaced(f"the learning rate is {script.code(rate.value)}: its schedule is the script's own")
            edits.replace(initial.value, times(initial.value, change.factor_text))
            continue
        edits.replace(rate.value, times(rate.value, change.factor_text))
    return edits.apply() if not edits.empty() else script.text


def place_float32_head(script: Script, change: C.Float32Head, target: Target) -> Placed:
    heads = script.output_layers()
    if not heads:
        return NotPlaced("the output layer was not found in the script")
    classes = {cls for _, cls in change.layers if cls}
    names = {name for name, _ in change.layers}
    edits = Edits(script)
    for head in heads:
        named = script.keyword(head, "name")
        if named is not None and isinstance(named.value, cst.SimpleString) and names and \
                literal(named.value) not in names:
            continue  # another output: the audit found this one in float32 already
        if classes and script.layer_class(head) not in classes:
            return NotPlaced(f"the script's output layer at line {script.line(head)} is "
                             f"{script.layer_class(head)}, where the model reports {', '.join(sorted(classes))}")
        dtype = script.keyword(head, "dtype")
        if dtype is not None and literal(dtype.value) == "float32":
            continue
        edits.replace(head, keyword_edit(script, head, "dtype", expression("float32")))
    return edits.apply() if not edits.empty() else script.text


def place_integer_input(script: Script, change: C.IntegerInput, target: Target) -> Placed:
    inputs = script.input_calls()
    if len(inputs) != 1:
        return NotPlaced("the model declares no keras.Input" if not inputs else
                         f"the script declares {len(inputs)} inputs and which one holds the ids is not certain")
    call = inputs[0]
    dtype = script.keyword(call, "dtype")
    if dtype is not None and literal(dtype.value) in ("int32", "int64"):
        return script.text
    edits = Edits(script)
    edits.replace(call, keyword_edit(script, call, "dtype", expression("int32")))
    return edits.apply()


def place_drop_remainder(script: Script, change: C.DropRemainder, target: Target) -> Placed:
    if target.contract:
        return NotPlaced("make_datasets() batches the data where tfturbo does not rewrite it")
    fit = script.fit_call()
    if fit is None:
        return NotPlaced("no model.fit() call was found in the script")
    if data_kind(script, fit, target) == NUMPY:
        return NotPlaced("fit() is given arrays, which Keras batches itself: drop the last partial batch by "
                         "slicing them")
    call = training_batch_call(script, fit)
    if isinstance(call, NotPlaced):
        return call
    if script.dataset_utility(call):
        return NotPlaced(f"{script.layer_class(call)}() at line {script.line(call)} has no drop_remainder")
    if literal(getattr(script.keyword(call, "drop_remainder", 1), "value", None)) is True:
        return script.text
    edits = Edits(script)
    edits.replace(call, keyword_edit(script, call, "drop_remainder", expression(True)))
    return edits.apply()


def place_autoclustering(script: Script, change: C.AutoClustering, target: Target) -> Placed:
    first = script.first_import_of("tensorflow", "keras")
    if first is None:
        return NotPlaced("the script imports neither TensorFlow nor Keras at module level")
    edits = Edits(script)
    if change.cpu_flag:
        edits.insert_before(first, ([] if script.bound_at_top("os") else ["import os"]) + change.flag_lines())
    tf = script.module_binding("tensorflow")
    anchor = script.last_import_before_model() or first
    lines = ([] if tf else ["import tensorflow as tf"]) + [f'{tf or "tf"}.config.optimizer.set_jit("autoclustering")']
    edits.insert_after(anchor, lines)
    return edits.apply()


def place_by_hand(script: Script, change: C.ByHand, target: Target) -> Placed:
    return NotPlaced(change.reason)


PLACE: dict[type, Callable[[Script, Any, Target], Placed]] = {
    C.Policy: place_policy, C.CompileArgument: place_compile_argument, C.BatchSize: place_batch_size,
    C.LearningRate: place_learning_rate, C.Float32Head: place_float32_head, C.IntegerInput: place_integer_input,
    C.DropRemainder: place_drop_remainder, C.AutoClustering: place_autoclustering, C.ByHand: place_by_hand,
}


def place(text: str | Script, change: C.Change, target: Target) -> Placed:
    """The script's text with `change` made where it says that thing, or NotPlaced with why (`text` may be the
    `Script` already read from it)."""
    script = text if isinstance(text, Script) else Script(text, target.fit_line)
    return PLACE[type(change)](script, change, target)
