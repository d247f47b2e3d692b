"""How the workload wrote its optimizer, so the recommended code changes its learning rate in the workload's
own terms (`tfturbo.tune.levers.batch_size`).

`model.compile(optimizer="adam")` and `model.compile(optimizer=keras.optimizers.Adam(learning_rate=3e-4))`
need different lines: a string has no learning rate to multiply, so the change is the optimizer's class at
Keras' own default rate times the factor. The default is read from the class's signature (Keras' value, not
one written here). Keras keeps only the optimizer object it made from a string, so `recording_compile` notes
the argument while the workload builds its model; the rate is read before `--lr-scale` scales it.

A custom training step may apply other optimizers than `model.optimizer`: a GAN's `d_optimizer` and
`g_optimizer`, set in its own compile() after `super().compile()` — which, given no optimizer, sets Keras'
default RMSprop that the step never applies. So every optimizer the model holds is found
(`find_optimizers`) and, once the step is traced, kept only if the step applies it (`FoundOptimizers.used_by`);
a model whose step applies none found says so (`optimizer_not_found`) instead of naming the placeholder.
"""

from __future__ import annotations

import contextlib
import inspect
from dataclasses import dataclass
from typing import Any, Iterator

from tfturbo.learning_rate import OptimizerDoc, OptimizerRecord

from .measure import finite_or_none

GIVEN = "_tfturbo_optimizer_given"  # the attribute `recording_compile` leaves on a compiled model
DEFAULTED = "_tfturbo_optimizer_defaulted"  # True: compile() got no optimizer and made Keras' own default


@contextlib.contextmanager
def recording_compile() -> Iterator[None]:
    """While the workload builds and compiles its model: each compile() notes the optimizer argument it got
    (compile()'s own default, "rmsprop", when none was given, and that none was given)."""
    import keras

    from .as_written import record_compile_arguments

    original, own = keras.Model.compile, "compile" in vars(keras.Model)  # else inherited from the Trainer

    def compile(model, *args, **kwargs):  # noqa: A001 - it is keras.Model.compile, recorded
        defaulted = "optimizer" not in kwargs and not args
        given = kwargs.get("optimizer", args[0] if args else "rmsprop")
        object.__setattr__(model, GIVEN, given if isinstance(given, str) else None)  # not a tracked attribute
        object.__setattr__(model, DEFAULTED, defaulted)
        record_compile_arguments(original, model, args, kwargs)  # jit_compile, steps_per_execution as given (as_written)
        return original(model, *args, **kwargs)

    keras.Model.compile = compile
    try:
        yield
    finally:
        if own:
            keras.Model.compile = original
        else:
            del keras.Model.compile


@dataclass
class FoundOptimizers:
    """The optimizers a model holds that its training step may apply, each with its record; `missing` says why
    there is none."""

    objects: list[Any]  # the optimizer objects (as the model holds them: a LossScaleOptimizer stays wrapped)
    records: list[OptimizerRecord]  # `record()` of each, in the same order
    missing: str | None = None
    placeholder: bool = False  # `model.optimizer` is the one compile() made by itself, given none

    def used_by(self, captured: set[int]) -> FoundOptimizers:
        """Only those whose step counter the traced training step reads or writes (`captured`: the ids of the
        variable handles the step's graph captures), so a placeholder the step never applies is dropped."""
        keep = [i for i, opt in enumerate(self.objects) if _handle_id(opt) in captured]
        if len(keep) == len(self.objects):
            return self
        if keep:
            missing = None
        elif self.placeholder and len(self.records) == 1:
            missing = (f"no optimizer found on the model: its compile() got none, and its training step never "
                       f"applies the {self.records[0]['class']} Keras then sets")
        else:
            missing = "the training step applies none of the optimizers found on the model (" + \
                ", ".join(r["attribute"] for r in self.records) + ")" if self.records else self.missing
        return FoundOptimizers([self.objects[i] for i in keep], [self.records[i] for i in keep], missing,
                               self.placeholder)

    def summary_fields(self) -> dict[str, Any]:
        """summary.json's `optimizers` (every one the step uses), `optimizer` (the one, in the older record's
        shape; None for none or several) and `optimizer_not_found` (why there is none)."""
        return {"optimizers": self.records, "optimizer_not_found": self.missing,
                "optimizer": legacy_record(self.records[0]) if len(self.records) == 1 else None}


def find_optimizers(model: Any) -> FoundOptimizers:
    """The optimizers found on the model: `model.optimizer` and every other attribute that holds one (a GAN's
    `d_optimizer` and `g_optimizer` set in its own compile(), a list of them), read before `--lr-scale` scales
    any rate. Keras' placeholder — the RMSprop compile() makes when `super().compile()` gets no optimizer — is
    left out when the model holds others: its step applies those."""
    import keras

    found: list[tuple[str, Any]] = []
    seen: set[int] = set()

    def add(name: str, value: Any) -> None:
        if isinstance(value, keras.optimizers.Optimizer) and id(value) not in seen:
            seen.add(id(value))
            found.append((name, value))

    add("optimizer", getattr(model, "optimizer", None))
    for name, value in vars(model).items():
        if name.startswith("_"):
            continue
        if isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                add(f"{name}[{i}]", item)
        elif isinstance(value, dict):
            for key, item in value.items():
                add(f"{name}[{key!r}]", item)
        else:
            add(name, value)
    placeholder = bool(getattr(model, DEFAULTED, False)) and bool(found) and found[0][0] == "optimizer"
    if placeholder and len(found) > 1:
        found, placeholder = found[1:], False
    records = [record(name, opt, getattr(model, GIVEN, None) if name == "optimizer" else None) for name, opt in found]
    missing = None if found else "the model holds no optimizer"
    return FoundOptimizers([opt for _, opt in found], records, missing, placeholder)


def schedule_of(optimizer: Any) -> Any:
    """The optimizer's learning-rate schedule (a keras LearningRateSchedule), None for a constant rate."""
    import keras

    inner = getattr(optimizer, "inner_optimizer", optimizer)  # a LossScaleOptimizer under a 16-bit policy
    schedule = getattr(inner, "_learning_rate", None)
    return schedule if isinstance(schedule, keras.optimizers.schedules.LearningRateSchedule) else None


def schedule_config(schedule: Any) -> dict[str, Any]:
    """A schedule's parameters as its get_config() gives them, JSON-safe (numbers, text, lists of numbers)."""
    def plain(value):
        if isinstance(value, (bool, int, float, str)) or value is None:
            return value
        if isinstance(value, (list, tuple)):
            return [plain(v) for v in value]
        item = getattr(value, "item", None)  # a NumPy scalar
        return item() if callable(item) else str(value)
    return {k: plain(v) for k, v in schedule.get_config().items()}


def record(attribute: str, optimizer: Any, given: str | None = None) -> OptimizerRecord:
    """{"attribute", "class", "module", "given_as", "learning_rate", "default_learning_rate"} of one optimizer:
    `learning_rate` a number, or {"schedule": its class, "config": its config} for a schedule, or None (a
    callable Keras cannot read); `given_as` the string compile() got, else None."""
    import keras

    inner = getattr(optimizer, "inner_optimizer", optimizer)  # a LossScaleOptimizer under a 16-bit policy
    cls = type(inner)
    schedule = schedule_of(inner)
    if schedule is not None:
        try:
            config = schedule_config(schedule)
        except Exception:  # noqa: BLE001 - a schedule without a readable config
            config = {}
        rate: Any = {"schedule": type(schedule).__name__, "config": config}
    else:
        try:
            rate = finite_or_none(float(inner.learning_rate))
        except (TypeError, ValueError):
            rate = None
    default = None
    try:
        parameter = inspect.signature(cls.__init__).parameters.get("learning_rate")
        if parameter is not None and isinstance(parameter.default, (int, float)):
            default = float(parameter.default)
    except (TypeError, ValueError):
        default = None
    builtin = getattr(keras.optimizers, cls.__name__, None) is cls
    return {"attribute": attribute, "class": cls.__name__, "module": "keras.optimizers" if builtin else cls.__module__,
            "given_as": given if isinstance(given, str) else None, "learning_rate": rate,
            "default_learning_rate": default}


def legacy_record(rec: OptimizerRecord) -> OptimizerDoc:
    """The summary's `optimizer` as it always read: {"class", "module", "given_as", "learning_rate" (a schedule's
    initial rate), "default_learning_rate", "schedule" (its class name), "schedule_config" (its parameters)}."""
    rate = rec.get("learning_rate")
    schedule = rate if isinstance(rate, dict) else None
    return {"class": rec["class"], "module": rec["module"], "given_as": rec["given_as"],
            "learning_rate": finite_or_none((schedule.get("config") or {}).get("initial_learning_rate"))
            if schedule else rate if not isinstance(rate, dict) else None,
            "default_learning_rate": rec["default_learning_rate"],
            "schedule": schedule["schedule"] if schedule else None,
            "schedule_config": schedule["config"] if schedule else None}


def _handle_id(optimizer: Any) -> int | None:
    """The id of the resource handle of the optimizer's step counter (what a step that applies it captures)."""
    try:
        return id(optimizer.iterations.value.handle)
    except AttributeError:
        return None
