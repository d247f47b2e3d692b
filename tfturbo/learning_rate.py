"""A learning rate as a workload sets it — a constant, or a Keras schedule — scaled, and in words.

A training script often gives its optimizer a schedule (CosineDecay,
ExponentialDecay, PiecewiseConstantDecay, …), not a number: showing "learning
rate 0.001" for it hides what the run trained with, and a larger batch that
"scales the learning rate" must say what it does to the schedule. So a run
records its schedule as `{"class", "config"}` (`learning_rate_schedule` in
summary.json and the checkpoint's tfturbo-settings.yaml, the schedule as it
ran, after `--lr-scale`), and every front end shows a run's learning rate
through `learning_rate_text` (the run record, compare's table and CSV, the
wizard's Record page, the PDF).

Scaling a schedule multiplies its rates — the config keys in `RATE_KEYS`
(`initial_learning_rate`, CosineDecay's `warmup_target`, PolynomialDecay's
`end_learning_rate`, PiecewiseConstantDecay's `values`) — and leaves its step
counts (`decay_steps`, `boundaries`, …) as written: the backend scales the
same keys (`scaled_config`), and the words say so (`scaling_words`).
"""

from __future__ import annotations

from typing import Any, TypedDict, cast

from .numbers import finite

# A learning-rate schedule as a run records it: its Keras class and its get_config() (summary.json's
# `learning_rate_schedule`, checkpoint/tfturbo-settings.yaml's, the as-written record's).
Schedule = TypedDict("Schedule", {"class": str | None, "config": dict[str, Any]}, total=False)
# How the workload wrote its optimizer (summary.json's `optimizer`, trainer_backend/optimizer_code.py's
# `legacy_record`): what the code changes and their words are made from.
OptimizerDoc = TypedDict("OptimizerDoc", {
    "class": str | None, "module": str | None, "given_as": str | None,  # given_as: the string compile() got
    "learning_rate": float | None,  # its own rate (a schedule's initial rate), before --lr-scale
    "default_learning_rate": float | None,  # Keras' default for its class
    "schedule": str | None, "schedule_config": dict[str, Any] | None,  # a schedule's class and parameters
}, total=False)
# One optimizer the training step applies (summary.json's `optimizers`): `learning_rate` a number, or
# {"schedule": its class, "config": its parameters}, or None (a callable Keras cannot read).
OptimizerRecord = TypedDict("OptimizerRecord", {
    "attribute": str, "class": str, "module": str, "given_as": str | None,
    "learning_rate": float | dict[str, Any] | None, "default_learning_rate": float | None,
}, total=False)

RATE_KEYS = ("initial_learning_rate", "end_learning_rate", "warmup_target", "values")
STEP_KEYS = ("decay_steps", "boundaries", "warmup_steps", "first_decay_steps")
SHOWN_SKIPPED = ("name",)


def rate_text(value: float) -> str:
    """A rate as a script would write it: four significant digits ("0.001414", "3e-05")."""
    return f"{value:.4g}"


def scaled_config(config: dict[str, Any], factor: float) -> dict[str, Any]:
    """A schedule's config with its rates (`RATE_KEYS`) times `factor`; step counts and the rest unchanged."""
    out = dict(config)
    for key in RATE_KEYS:
        value = out.get(key)
        if isinstance(value, (list, tuple)):
            out[key] = [v * factor if finite(v) else v for v in value]
        elif finite(value):
            out[key] = value * factor
    return out


def scales(config: dict[str, Any]) -> bool:
    """True when the schedule has a rate `scaled_config` can scale."""
    return any(key in config and config[key] is not None for key in RATE_KEYS)


def _value_text(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, (int, float)):
        return rate_text(value) if isinstance(value, float) else str(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value_text(v) for v in value) + "]"
    return repr(value)


def schedule_of(value: object) -> Schedule | None:
    """A schedule as read from a file or a document: a mapping that names its class, else None (a constant rate)."""
    return cast(Schedule, value) if isinstance(value, dict) and value.get("class") else None


def schedule_text(schedule: Schedule) -> str:
    """"CosineDecay(initial_learning_rate=0.001, decay_steps=1000, alpha=0)": the class and its parameters."""
    config = schedule.get("config")
    config = config if isinstance(config, dict) else {}
    args = ", ".join(f"{k}={_value_text(v)}" for k, v in config.items() if k not in SHOWN_SKIPPED and v is not None)
    return f"{schedule.get('class') or 'schedule'}({args})"


def learning_rate_text(doc: dict[str, Any] | None) -> str:
    """A run's learning rate as it trained, from its summary or its checkpoint settings record: the schedule as a
    schedule, else the constant rate, else "n/a"."""
    doc = doc or {}
    schedule = schedule_of(doc.get("learning_rate_schedule"))
    if schedule is not None:
        return schedule_text(schedule)
    rate = doc.get("learning_rate")
    return rate_text(rate) if finite(rate) else "n/a"


def scaling_words(optimizer: OptimizerDoc | None, factor: float) -> str:
    """What multiplying a workload's learning rate by `factor` does, in its terms: "CosineDecay: initial_learning_rate
    0.001 → 0.001414 (×1.41); its decay_steps unchanged" for a schedule, "" for a constant (the rate says it)."""
    opt = optimizer or {}
    name, config = opt.get("schedule"), opt.get("schedule_config")
    if not name or not isinstance(config, dict) or abs(factor - 1.0) < 1e-9:
        return ""
    after = scaled_config(config, factor)
    changed = [f"{k} {_value_text(config[k])} → {_value_text(after[k])}" for k in RATE_KEYS
               if k in config and config[k] is not None]
    steps = [k for k in STEP_KEYS if config.get(k) is not None]
    kept = f"; its {' and '.join(steps)} unchanged (steps, not samples)" if steps else ""
    return f"{name}: {', '.join(changed) or 'no rate to scale'} (×{factor:.2f}){kept}"


def learning_rate_lines(factor: float, optimizer: OptimizerDoc | None) -> list[str]:
    """The learning rate times `factor`, written as the new value the way the workload wrote its optimizer
    (`trainer_backend/optimizer_code.py`; the `-`/`+` lines of the change, `patch.changes.LearningRate.by_hand`), never as arithmetic on it: a string given to compile() becomes its class
    at Keras' default rate times the factor (`optimizer="adam"` → `keras.optimizers.Adam(learning_rate=0.001414)`);
    an object keeps its class and gets the new rate; a schedule keeps its class and parameters with its rates
    scaled (`learning_rate.scaled_config`: initial rate, warm-up target, piecewise values; its step counts as
    they are); unknown (an older run), a generic line on the workload's own rate."""
    opt = optimizer or {}
    cls, given = opt.get("class"), opt.get("given_as")
    name = f"keras.optimizers.{cls}" if opt.get("module") == "keras.optimizers" else cls
    rate, default = opt.get("learning_rate"), opt.get("default_learning_rate")
    times = f"×{factor:.3g}"
    schedule, config = opt.get("schedule"), opt.get("schedule_config")
    if cls and schedule and isinstance(config, dict) and scales(config):
        written = Schedule({"class": f"keras.optimizers.schedules.{schedule}", "config": config})
        scaled = Schedule({"class": written["class"], "config": scaled_config(config, factor)})
        return [f"-schedule = {schedule_text(written)}", f"+schedule = {schedule_text(scaled)}  # its rates {times}"]
    if cls and given and isinstance(default, (int, float)):
        return [f'-model.compile(optimizer="{given}", ...)',
                f'+model.compile(optimizer={name}(learning_rate={rate_text(default * factor)}), ...)'
                f'  # "{given}" is {cls} at Keras\' default learning rate {rate_text(default)}; {times}']
    if cls and isinstance(rate, (int, float)):
        return [f"-optimizer = {name}(learning_rate={rate_text(rate)}, ...)",
                f"+optimizer = {name}(learning_rate={rate_text(rate * factor)}, ...)  # {times}"]
    return ["-optimizer = keras.optimizers.Adam(learning_rate=LEARNING_RATE)",
            f"+optimizer = keras.optimizers.Adam(learning_rate=LEARNING_RATE * {factor:.4g})  # your rate {times}"]
