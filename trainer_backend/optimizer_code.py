"""How the workload wrote its optimizer, so the recommended code changes its learning rate in the workload's
own terms (`tfturbo.tune.levers.batch_size`).

`model.compile(optimizer="adam")` and `model.compile(optimizer=keras.optimizers.Adam(learning_rate=3e-4))`
need different lines: a string has no learning rate to multiply, so the change is the optimizer's class at
Keras' own default rate times the factor. The default is read from the class's signature (Keras' value, not
one written here). Keras keeps only the optimizer object it made from a string, so `recording_compile` notes
the argument while the workload builds its model; the rate is read before `--lr-scale` scales it.
"""

from __future__ import annotations

import contextlib
import inspect
from typing import Any, Iterator

from .measure import finite_or_none

GIVEN = "_tfturbo_optimizer_given"  # the attribute `recording_compile` leaves on a compiled model


@contextlib.contextmanager
def recording_compile() -> Iterator[None]:
    """While the workload builds and compiles its model: each compile() notes the optimizer argument it got
    (compile()'s own default, "rmsprop", when none was given)."""
    import keras

    original, own = keras.Model.compile, "compile" in vars(keras.Model)  # else inherited from the Trainer

    def compile(model, *args, **kwargs):  # noqa: A001 - it is keras.Model.compile, recorded
        given = kwargs.get("optimizer", args[0] if args else "rmsprop")
        object.__setattr__(model, GIVEN, given if isinstance(given, str) else None)  # not a tracked attribute
        return original(model, *args, **kwargs)

    keras.Model.compile = compile
    try:
        yield
    finally:
        if own:
            keras.Model.compile = original
        else:
            del keras.Model.compile


def optimizers_of(model: Any) -> list[Any]:
    """The optimizers the model's training step may use: its compiled `optimizer`, then every optimizer it holds
    as an attribute (a GAN's own compile() keeps one per network), each once."""
    import keras

    found = [getattr(model, "optimizer", None)] + [v for v in vars(model).values()
                                                   if isinstance(v, keras.optimizers.Optimizer)]
    out: list[Any] = []
    for optimizer in found:
        if optimizer is not None and all(optimizer is not o for o in out):
            out.append(optimizer)
    return out


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


def optimizer_code(model: Any) -> dict[str, Any] | None:
    """{"class", "module", "given_as", "learning_rate", "default_learning_rate", "schedule", "schedule_config"} of
    the model's optimizer (`given_as`: the string the workload passed to compile(), else None; `schedule` its
    learning-rate schedule's class, `schedule_config` its parameters); None when not known."""
    import keras

    optimizer = getattr(model, "optimizer", None)
    if optimizer is None:
        return None
    inner = getattr(optimizer, "inner_optimizer", optimizer)  # a LossScaleOptimizer under a 16-bit policy
    given = getattr(model, GIVEN, None)
    cls = type(inner)
    schedule = schedule_of(inner)
    rate = None
    if schedule is not None:
        config = schedule_config(schedule)
        rate = finite_or_none(config.get("initial_learning_rate"))
        schedule_name = type(schedule).__name__
    else:
        config = schedule_name = None
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
    return {"class": cls.__name__, "module": "keras.optimizers" if builtin else cls.__module__,
            "given_as": given if isinstance(given, str) else None, "learning_rate": rate,
            "default_learning_rate": default, "schedule": schedule_name, "schedule_config": config}
