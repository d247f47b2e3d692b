"""Where a training script says each thing, read from its source with libcst (never run).

The patch changes the script where the script says each thing: the dtype
policy before the model is built, the compile() call the fitted model was
compiled with, the batch size where it is defined (a constant, an argparse
default, a fit() argument, a `.batch()` call), the output layer, the Input,
the optimizer or its schedule. `Script` finds those places. It follows a name
back to the value it was given (`value_of`): a module constant, a local
assignment, a function's parameter to the argument its one caller passes (or
its default), `args.X` to argparse's `add_argument(..., default=...)`,
`config["x"]` to a dict literal. A place it cannot find for sure is None, and
the caller says why the change is left to the user: a wrong place is worse
than none.

`fit_line` (the line of the first fit() call, which the backend saw when it
ran the script) picks the fit() call when the script has several; without it
the first call that looks like Keras' fit (its keywords) is taken.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, TypeGuard, TypeVar

import libcst as cst
from libcst.helpers import get_full_name_for_node
from libcst.metadata import (Assignment, MetadataWrapper, ParentNodeProvider, PositionProvider,
                             QualifiedNameProvider, QualifiedNameSource, ScopeProvider)

# how Keras is reached besides `keras`: `from tensorflow import keras`, tf.keras, the tf-keras package
_KERAS_ALIASES = ("tensorflow.keras.", "tensorflow.python.keras.", "tf_keras.")
_FIT_KEYWORDS = {"epochs", "batch_size", "validation_data", "validation_split", "callbacks", "steps_per_epoch",
                 "verbose", "shuffle", "class_weight", "initial_epoch"}
_MODEL_CLASSES = ("keras.Model", "keras.models.Model", "keras.Sequential", "keras.models.Sequential")
_INPUTS = ("keras.Input", "keras.layers.Input", "keras.layers.InputLayer")
_DATASET_UTILS = ("image_dataset_from_directory", "text_dataset_from_directory", "audio_dataset_from_directory",
                  "timeseries_dataset_from_array")
_BATCH_METHODS = ("batch", "padded_batch")
_Node = TypeVar("_Node", bound=cst.CSTNode)


def keras_name(name: str) -> str:
    """A qualified name with Keras reached through TensorFlow written as plain `keras.`."""
    for alias in _KERAS_ALIASES:
        if name.startswith(alias):
            return "keras." + name[len(alias):]
    return name


def _matches(name: str, dotted: str) -> bool:
    """`name` is `dotted`, or ends with it at a dot (keras.layers.Dense matches "layers.Dense" and "Dense")."""
    return name == dotted or name.endswith("." + dotted)


@dataclass(frozen=True)
class Assigned:
    """Where a name got its value: `value` (an expression), or `param` (a function parameter) in `function`."""

    target: cst.CSTNode
    value: cst.BaseExpression | None = None
    param: cst.Param | None = None
    function: cst.FunctionDef | None = None


class Script:
    """One script's source, parsed once (raises `libcst.ParserSyntaxError` when it does not parse)."""

    def __init__(self, text: str, fit_line: int | None = None):
        self.text = text
        self.fit_line = fit_line
        self.wrapper = MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)  # parsed here, owned here
        self.module = self.wrapper.module
        self.wrapper.resolve_many([PositionProvider, ParentNodeProvider, ScopeProvider,
                                   QualifiedNameProvider])  # one pass over the tree for all four
        self._position = self.wrapper.resolve(PositionProvider)  # each read back typed, not computed again
        self._parent = self.wrapper.resolve(ParentNodeProvider)
        self._scope = self.wrapper.resolve(ScopeProvider)
        self._qualified = self.wrapper.resolve(QualifiedNameProvider)
        self.calls: list[cst.Call] = []
        self.bound: dict[int, cst.BaseExpression] = {}  # id(Param) -> what the call being followed passes
        self.functions: dict[str, cst.FunctionDef] = {}
        self.classes: dict[str, cst.ClassDef] = {}
        self.module.visit(_Collect(self))

    # ------------------------------------------------------------ reading nodes

    def line(self, node: cst.CSTNode) -> int:
        return self._position[node].start.line

    def end_line(self, node: cst.CSTNode) -> int:
        return self._position[node].end.line

    def column(self, node: cst.CSTNode) -> int:
        return self._position[node].start.column

    def code(self, node: cst.CSTNode) -> str:
        """The node's source as the script writes it (one line: its whitespace collapsed)."""
        return " ".join(self.module.code_for_node(node).split())

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self._parent.get(node)

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        parent = self._parent.get(node)
        while parent is not None:
            yield parent
            parent = self._parent.get(parent)

    def statement_of(self, node: cst.CSTNode) -> cst.CSTNode:
        """The top-level statement holding `node`."""
        top = node
        for parent in self.ancestors(node):
            if isinstance(parent, cst.Module):
                return top
            top = parent
        return top

    def function_of(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        return next((a for a in self.ancestors(node) if isinstance(a, cst.FunctionDef)), None)

    def names(self, node: cst.CSTNode) -> set[str]:
        """The qualified names of a name, attribute or call (its function), Keras reached through TensorFlow as
        `keras.` (`tf.keras.layers.Dense` -> keras.layers.Dense)."""
        if isinstance(node, cst.Call):
            node = node.func
        found = self._qualified.get(node)
        found = found() if callable(found) else found
        out = {keras_name(q.name) for q in found or ()}
        if not out:
            full = get_full_name_for_node(node)
            if full:
                out.add(keras_name(full))
        return out

    def is_(self, node: cst.CSTNode, *dotted: str) -> bool:
        return any(_matches(n, d) for n in self.names(node) for d in dotted)

    def imported_module(self, node: cst.CSTNode) -> bool:
        """`node` names a module or something imported (re, np, tf, sklearn's scaler class), not a variable."""
        found = self._qualified.get(node)
        found = found() if callable(found) else found
        return any(q.source == QualifiedNameSource.IMPORT for q in found or ())

    def bound_at_top(self, name: str) -> bool:
        """A module-level import binds `name` (keras, tf, os)."""
        scope = self._scope.get(self.module)
        return scope is not None and any(isinstance(a, Assignment) and isinstance(a.node, (cst.Import, cst.ImportFrom))
                                         for a in scope[name])

    def module_binding(self, module: str) -> str | None:
        """The name the module level binds to `module` ("keras" for `import keras` or `from tensorflow import
        keras`, "tf" for `import tensorflow as tf`), or None."""
        for stmt in self.module.body:
            for small in getattr(stmt, "body", ()) if isinstance(stmt, cst.SimpleStatementLine) else ():
                if isinstance(small, cst.Import):
                    for alias in small.names:
                        full = get_full_name_for_node(alias.name)
                        if full is not None and keras_name(full + ".").rstrip(".") == module:
                            return _bound_name(alias) or full
                elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                    base = get_full_name_for_node(small.module) if small.module else ""
                    for alias in small.names:
                        full = f"{base}.{get_full_name_for_node(alias.name)}"
                        if keras_name(full + ".").rstrip(".") == module:
                            return _bound_name(alias) or get_full_name_for_node(alias.name)
        return None

    # ------------------------------------------------------------ following names

    def assignments(self, name: cst.Name) -> list[Assigned]:
        """Where `name` (a use of it) may have got its value, in its scope or an enclosing one."""
        scope = self._scope.get(name)
        if scope is None:
            return []
        out = []
        for a in scope[name.value]:
            node = getattr(a, "node", None)  # a builtin (len, True) has none
            if node is None:
                continue
            if isinstance(node, cst.Param):
                out.append(Assigned(node, param=node, function=self.function_of(node)))
                continue
            parent = self._parent.get(node)
            if isinstance(parent, cst.AssignTarget):
                stmt = self._parent.get(parent)
                if isinstance(stmt, cst.Assign) and len(stmt.targets) == 1:
                    out.append(Assigned(node, value=stmt.value))
                    continue
            if isinstance(parent, cst.AnnAssign) and parent.target is node and parent.value is not None:
                out.append(Assigned(node, value=parent.value))
                continue
            out.append(Assigned(node))  # a tuple target, a loop variable, an import: no single value
        return out

    def value_of(self, expr: cst.BaseExpression, depth: int = 0) -> cst.BaseExpression | None:
        """The expression `expr` stands for, followed back through names, parameters, argparse options and dict
        literals to where it is written (a literal, a call); None when that is not one place for sure."""
        if depth > 8:
            return None
        if isinstance(expr, cst.Name):
            if expr.value in ("True", "False", "None"):
                return expr
            found = self.assignments(expr)
            if len(found) != 1:
                return None
            a = found[0]
            if a.param is not None:
                passed = self.argument_for(a.function, a.param)
                return self.value_of(passed, depth + 1) if passed is not None else None
            return self.value_of(a.value, depth + 1) if a.value is not None else None
        if isinstance(expr, cst.Attribute):
            option = self.option_default(expr)
            return self.value_of(option, depth + 1) if option is not None else expr
        if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Name):
            key = _subscript_key(expr)
            table = self.value_of(expr.value, depth + 1)
            if key is not None and isinstance(table, cst.Dict):
                for element in table.elements:
                    if isinstance(element, cst.DictElement) and _string(element.key) == key:
                        return self.value_of(element.value, depth + 1)
            return None
        return expr

    def argument_for(self, function: cst.FunctionDef | None, param: cst.Param) -> cst.BaseExpression | None:
        """What `param` of `function` is given: by the call that led here (`bound`: the training data's own
        call of a function that makes datasets), else by its one call in the script, else its default."""
        if function is None:
            return None
        if id(param) in self.bound:
            return self.bound[id(param)]
        calls = [c for c in self.calls if isinstance(c.func, cst.Name) and c.func.value == function.name.value]
        if len(calls) > 1:
            return None
        return self._passed(function, param, calls[0]) if calls else param.default

    def _passed(self, function: cst.FunctionDef, param: cst.Param, call: cst.Call) -> cst.BaseExpression | None:
        """What `call` passes for `param` of `function` (its default when it passes nothing)."""
        params = list(function.params.params)
        index = params.index(param) if param in params else None
        for i, arg in enumerate(call.args):
            if arg.keyword is not None and arg.keyword.value == param.name.value:
                return arg.value
            if arg.keyword is None and not arg.star and i == index:
                return arg.value
        return param.default

    def option_call(self, attr: str) -> cst.Call | None:
        """The argparse `add_argument(...)` (or absl `flags.DEFINE_*(...)`) call that sets `args.<attr>`."""
        for call in self.calls:
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value == "add_argument":
                dest = next((_string(a.value) for a in call.args if a.keyword and a.keyword.value == "dest"), None)
                options = [o for o in (_string(a.value) for a in call.args if a.keyword is None) if o]
                longs = [o for o in options if o.startswith("--")]
                guess = (longs[0] if longs else options[0] if options else "").lstrip("-").replace("-", "_")
                if (dest or guess) == attr:
                    return call
            elif self.is_(call, "flags.DEFINE_integer", "flags.DEFINE_float", "flags.DEFINE_string") \
                    and call.args and _string(call.args[0].value) == attr:
                return call
        return None

    def option_default(self, expr: cst.Attribute) -> cst.BaseExpression | None:
        """`args.batch_size` -> the default of the argparse option (or absl flag) that sets it."""
        call = self.option_call(expr.attr.value)
        if call is None:
            return None
        default = next((a.value for a in call.args if a.keyword and a.keyword.value == "default"), None)
        if default is None and not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "add_argument"):
            default = call.args[1].value if len(call.args) > 1 else None  # flags.DEFINE_integer(name, default, ...)
        return default

    def option_strings(self, expr: cst.Attribute) -> list[str]:
        """The command-line option strings of the argparse option behind `args.X` ([] when there is none)."""
        call = self.option_call(expr.attr.value)
        if call is None or not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "add_argument"):
            return []
        return [o for o in (_string(a.value) for a in call.args if a.keyword is None) if o]

    # ------------------------------------------------------------ what the script does

    def keyword(self, call: cst.Call, name: str, position: int | None = None) -> cst.Arg | None:
        """The argument `name` of `call`, given by keyword or at `position`."""
        for i, arg in enumerate(call.args):
            if arg.keyword is not None and arg.keyword.value == name:
                return arg
            if arg.keyword is None and not arg.star and position is not None and i == position:
                return arg
        return None

    def method_calls(self, method: str) -> list[cst.Call]:
        """`X.method(...)` calls whose X is a variable (not an imported module: `re.compile` is not Keras'),
        outside a method of that name (a model's own compile() calling super().compile())."""
        out = []
        for call in self.calls:
            func = call.func
            if not (isinstance(func, cst.Attribute) and func.attr.value == method):
                continue
            if self.imported_module(func.value):
                continue
            own = self.function_of(call)
            if own is not None and own.name.value == method:
                continue
            out.append(call)
        return out

    def fit_call(self) -> cst.Call | None:
        """The fit() call the backend measured (at `fit_line`), else the first that looks like Keras' fit."""
        calls = self.method_calls("fit")
        if self.fit_line:
            at = [c for c in calls if self.line(c) <= self.fit_line <= self.end_line(c)]
            if at:
                return at[0]
        keras_like = [c for c in calls if any(a.keyword is not None and a.keyword.value in _FIT_KEYWORDS
                                              for a in c.args)]
        found = keras_like or calls
        return found[0] if found else None

    def receiver(self, call: cst.Call) -> cst.BaseExpression | None:
        return call.func.value if isinstance(call.func, cst.Attribute) else None

    def compile_calls(self) -> list[cst.Call]:
        """The compile() calls of the model the script fits: those on the same variable as its fit(), else
        those in the function that builds it, else the one compile() of the script (a workload file's
        build_model() has no fit())."""
        calls = self.method_calls("compile")
        fit = self.fit_call()
        if fit is not None and calls:
            receiver = self.receiver(fit)
            assert receiver is not None, "method_calls finds X.fit(...) calls: each has its X"
            model = self.code(receiver)
            same = [c for c in calls if (r := self.receiver(c)) is not None and self.code(r) == model]
            if same:
                return same
            builder = self.model_builder(receiver)
            inside = [c for c in calls if builder is not None and self.function_of(c) is builder]
            if inside:
                return inside
        if "build_model" in self.functions:
            inside = [c for c in calls if self.function_of(c) is self.functions["build_model"]]
            if inside:
                return inside
        return calls if len(calls) == 1 else []

    def model_builder(self, model: cst.BaseExpression | None) -> cst.FunctionDef | None:
        """The script's own function whose return value is the fitted model (`model = build_model()`)."""
        value = self.value_of(model) if model is not None else None
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name):
            return self.functions.get(value.func.value)
        return None

    def policy_calls(self) -> list[cst.Call]:
        return [c for c in self.calls if self.is_(c, "mixed_precision.set_global_policy", "config.set_dtype_policy")]

    def dataset_utility(self, call: cst.Call) -> bool:
        return self.is_(call, *_DATASET_UTILS)

    def batch_calls_in(self, expr: cst.BaseExpression) -> list[cst.Call]:
        """The `.batch()`/`.padded_batch()` calls (and Keras' *_dataset_from_* utilities) in a method chain."""
        out = []
        node: cst.BaseExpression | None = expr
        while isinstance(node, cst.Call):
            if isinstance(node.func, cst.Attribute) and node.func.attr.value in _BATCH_METHODS:
                out.append(node)
            elif self.dataset_utility(node):
                out.append(node)
            node = node.func.value if isinstance(node.func, cst.Attribute) else None
        return out

    def chain_root(self, expr: cst.BaseExpression) -> cst.BaseExpression:
        node = expr
        while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            node = node.func.value
        return node

    def dataset_batch_calls(self, data: cst.BaseExpression, depth: int = 0) -> list[cst.Call]:
        """Every call that batches the dataset `data` stands for: along its method chain, through the names it
        was assigned from (all assignments of a name in its scope: `ds = ds.batch(B)` after `ds = ...`) and the
        script's own functions that return it."""
        if depth > 6:
            return []
        found: list[cst.Call] = []
        if isinstance(data, cst.Name):
            for a in self.assignments(data):
                if a.value is not None:
                    found += self.dataset_batch_calls(a.value, depth + 1)
                elif a.param is not None:
                    passed = self.argument_for(a.function, a.param)
                    if passed is not None:
                        found += self.dataset_batch_calls(passed, depth + 1)
            return _unique(found)
        if isinstance(data, cst.Tuple):  # (x, y) given as one argument: arrays, nothing batched here
            return []
        found += self.batch_calls_in(data)
        root = self.chain_root(data)
        if isinstance(root, cst.Call) and isinstance(root.func, cst.Name) and root.func.value in self.functions:
            function = self.functions[root.func.value]
            for param in function.params.params:  # its parameters are what this call passes
                passed = self._passed(function, param, root)
                if passed is not None:
                    self.bound[id(param)] = passed
            for ret in _returns(function):
                found += self.dataset_batch_calls(ret, depth + 1)
        elif root is not data and isinstance(root, cst.Name):
            found += self.dataset_batch_calls(root, depth + 1)
        return _unique(found)

    # ------------------------------------------------------------ the model

    def output_layers(self) -> list[cst.Call]:
        """The layer constructor calls of the fitted model's outputs (the workload's build_model()'s for a
        workload file): the last layer of a Sequential (its list, or its last add()), the layers whose calls
        make a Functional model's outputs, a subclassed model's layer that its call() returns."""
        fit = self.fit_call()
        model = self.receiver(fit) if fit is not None else None
        if model is None and "build_model" in self.functions:
            rets = _returns(self.functions["build_model"])
            model = rets[-1] if rets else None
        return self._heads_of(model, 0) if model is not None else []

    def _heads_of(self, expr: cst.BaseExpression, depth: int) -> list[cst.Call]:
        if depth > 6 or expr is None:
            return []
        if isinstance(expr, cst.Name):
            adds = [c for c in self.method_calls("add") if isinstance(r := self.receiver(c), cst.Name)
                    and r.value == expr.value and c.args]
            if adds:  # model.add(...) calls: the last one added is the output layer
                layer = adds[-1].args[0].value
                return [layer] if self._is_layer(layer) else []
            found = self.assignments(expr)
            values = [a.value for a in found if a.value is not None]
            if len(found) != 1 or not values:
                return []
            return self._heads_of(values[0], depth + 1)
        if not isinstance(expr, cst.Call):
            return []
        if self.is_(expr, "keras.Sequential", "keras.models.Sequential"):
            layers = self.keyword(expr, "layers", 0)
            value = layers.value if layers is not None else None
            if isinstance(value, cst.Name):
                value = self.value_of(value)
            if isinstance(value, (cst.List, cst.Tuple)) and value.elements:
                last = value.elements[-1].value
                return [last] if self._is_layer(last) else []
            return []
        if self.is_(expr, "keras.Model", "keras.models.Model"):
            outputs = self.keyword(expr, "outputs", 1)
            return self._tensor_layers(outputs.value, depth + 1) if outputs is not None else []
        if isinstance(expr.func, cst.Name) and expr.func.value in self.functions:
            rets = _returns(self.functions[expr.func.value])
            return self._heads_of(rets[-1], depth + 1) if rets else []
        if isinstance(expr.func, cst.Name) and expr.func.value in self.classes:
            cls = self.classes[expr.func.value]
            if any(isinstance(s, cst.FunctionDef) and s.name.value == "call" for s in cls.body.body):
                return self._subclassed_head(cls)
            outputs = self.keyword(expr, "outputs", 1)  # a Model subclass built as a graph (its own train_step)
            return self._tensor_layers(outputs.value, depth + 1) if outputs is not None else []
        return []

    def _tensor_layers(self, expr: cst.BaseExpression, depth: int) -> list[cst.Call]:
        """The layers whose calls produce the tensor(s) `expr` (`outputs = layers.Dense(1)(x)`)."""
        if depth > 8:
            return []
        if isinstance(expr, (cst.List, cst.Tuple)):
            return [h for e in expr.elements for h in self._tensor_layers(e.value, depth + 1)]
        if isinstance(expr, cst.Dict):
            return [h for e in expr.elements if isinstance(e, cst.DictElement)
                    for h in self._tensor_layers(e.value, depth + 1)]
        if isinstance(expr, cst.Name):
            found = self.assignments(expr)
            return self._tensor_layers(found[0].value, depth + 1) if len(found) == 1 and found[0].value else []
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Call) and self._is_layer(expr.func):
            return [expr.func]
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name):  # a layer made earlier: head(x)
            found = self.assignments(expr.func)
            if len(found) == 1 and found[0].value is not None and self._is_layer(found[0].value):
                return [found[0].value]
        return []

    def _subclassed_head(self, cls: cst.ClassDef) -> list[cst.Call]:
        call = next((s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "call"), None)
        rets = _returns(call) if call is not None else []
        if not rets:
            return []
        ret = rets[-1]
        if isinstance(ret, cst.Call) and isinstance(ret.func, cst.Attribute) and \
                isinstance(ret.func.value, cst.Name) and ret.func.value.value == "self":
            attr = ret.func.attr.value
            for node in _walk(cls):
                if isinstance(node, cst.Assign) and len(node.targets) == 1:
                    target = node.targets[0].target
                    if isinstance(target, cst.Attribute) and target.attr.value == attr and \
                            isinstance(target.value, cst.Name) and target.value.value == "self" and \
                            self._is_layer(node.value):
                        return [node.value]
        return []

    def _is_layer(self, node: cst.CSTNode) -> TypeGuard[cst.Call]:
        """A Keras layer made here: `keras.layers.X(...)`, or a layer class of the script's own whose constructor
        passes keyword arguments (dtype) on to keras.layers.Layer."""
        if not isinstance(node, cst.Call):
            return False
        if any(n.startswith("keras.layers.") for n in self.names(node)):
            return True
        cls = self.classes.get(node.func.value) if isinstance(node.func, cst.Name) else None
        if cls is None or not any(self.is_(b.value, "keras.layers.Layer", "keras.Layer") for b in cls.bases):
            return False
        init = next((s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"),
                    None)
        return init is None or init.params.star_kwarg is not None

    def input_calls(self) -> list[cst.Call]:
        return [c for c in self.calls if self.is_(c, *_INPUTS)]

    def layer_class(self, call: cst.Call) -> str:
        full = get_full_name_for_node(call.func)
        return full.rsplit(".", 1)[-1] if full else ""

    # ------------------------------------------------------------ where new lines go

    def last_import_before_model(self) -> cst.CSTNode | None:
        """The last top-level import before the first top-level statement that may build a model (one that calls
        Keras or TensorFlow, or a function or class of the script: `main()`, `if __name__ == "__main__":`): a
        line inserted after it runs after the imports and before any layer is created."""
        last = None
        for stmt in self.module.body:
            if _is_import(stmt):
                last = stmt
            elif self.may_build(stmt):
                break
        return last

    def may_build(self, stmt: cst.CSTNode) -> bool:
        """A top-level statement that may create layers (see `last_import_before_model`)."""
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            return False
        for node in _walk(stmt):
            if isinstance(node, cst.Call):
                if isinstance(node.func, cst.Name) and (node.func.value in self.functions
                                                        or node.func.value in self.classes):
                    return True
                if any(n.startswith(("keras.", "tensorflow.")) for n in self.names(node)):
                    return True
        return False

    def first_import_of(self, *modules: str) -> cst.CSTNode | None:
        """The first top-level statement importing one of `modules` (tensorflow, keras)."""
        for stmt in self.module.body:
            if _is_import(stmt):
                for small in stmt.body:
                    names = [get_full_name_for_node(a.name) for a in small.names] if isinstance(small, cst.Import) \
                        else [get_full_name_for_node(small.module) if isinstance(small, cst.ImportFrom)
                              and small.module else ""]
                    if any(n.split(".")[0] in modules for n in names if n):
                        return stmt
        return None


class _Collect(cst.CSTVisitor):
    def __init__(self, script: Script):
        self.script = script

    def visit_Call(self, node: cst.Call) -> None:
        self.script.calls.append(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.script.functions.setdefault(node.name.value, node)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.script.classes.setdefault(node.name.value, node)


def _walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    yield node
    for child in node.children:
        yield from _walk(child)


def _returns(function: cst.FunctionDef) -> list[cst.BaseExpression]:
    """The values its return statements return (not those of functions nested in it)."""
    out = []

    def visit(node: cst.CSTNode) -> None:
        for child in node.children:
            if isinstance(child, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                continue
            if isinstance(child, cst.Return) and child.value is not None:
                out.append(child.value)
            visit(child)

    visit(function.body)
    return out


def _unique(nodes: list[_Node]) -> list[_Node]:
    seen: set[int] = set()
    out: list[_Node] = []
    for n in nodes:
        if id(n) not in seen:
            seen.add(id(n))
            out.append(n)
    return out


def _string(node: cst.CSTNode | None) -> str | None:
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value if isinstance(node.evaluated_value, str) else None
    return None


def _subscript_key(expr: cst.Subscript) -> str | None:
    if len(expr.slice) != 1 or not isinstance(expr.slice[0].slice, cst.Index):
        return None
    return _string(expr.slice[0].slice.value)


def _bound_name(alias: cst.ImportAlias) -> str | None:
    """The name `import X as NAME` binds (None without `as`)."""
    return alias.asname.name.value if alias.asname and isinstance(alias.asname.name, cst.Name) else None


def _is_import(stmt: cst.CSTNode) -> TypeGuard[cst.SimpleStatementLine]:
    return isinstance(stmt, cst.SimpleStatementLine) and all(isinstance(s, (cst.Import, cst.ImportFrom))
                                                            for s in stmt.body)
