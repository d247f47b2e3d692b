"""The script's own configuration in words (a run's `as_written`, trainer_backend/as_written.py): what a run
measured when it was given no policy, XLA or steps per call, and what a study's baseline is."""

from __future__ import annotations

from typing import TypedDict

from .learning_rate import Schedule, rate_text, schedule_text
from .numbers import finite


class AsWritten(TypedDict, total=False):
    """The script's own configuration as a run read it (summary.json's `as_written`), before tfturbo changed
    anything: what the settings left unset (None) took."""

    policy: str | None  # the dtype policy the script set (or Keras' default)
    jit_compile: bool | None  # as Keras resolved it
    jit_compile_given: str | bool | None  # what compile() was given: "auto" (also when not given), True, False
    steps_per_execution: int | None
    tf32: bool | None
    callbacks: list[str]  # passed to fit(), not run while measuring
    optimizer: str | None  # its class
    learning_rate: float | str | None  # a number, or a schedule in words
    learning_rate_schedule: Schedule  # {"class", "config"}


def as_written_text(record: AsWritten | None) -> str:
    """"float32, XLA on (compile(jit_compile=True)), 4 steps per call, Adam at CosineDecay(...)"; "" without a
    record (an older run)."""
    if not isinstance(record, dict) or not record:
        return ""
    parts = [str(record.get("policy") or "policy unknown")]
    jit, given = record.get("jit_compile"), record.get("jit_compile_given")
    if jit is not None:
        how = ('Keras\' "auto"' if given == "auto" else f"compile(jit_compile={given!r})") if given is not None else ""
        parts.append(("XLA on" if jit else "XLA off") + (f" ({how})" if how else ""))
    n = record.get("steps_per_execution")
    if isinstance(n, int):
        parts.append(f"{n} step{'s' if n != 1 else ''} per call")
    if record.get("tf32"):
        parts.append("TF32 on")
    schedule, lr = record.get("learning_rate_schedule"), record.get("learning_rate")
    rate = schedule_text(schedule) if schedule else \
        rate_text(lr) if finite(lr) else ""
    optimizer = record.get("optimizer")
    if optimizer or rate:
        parts.append(" at ".join(str(p) for p in (optimizer, rate) if p))
    return ", ".join(parts)


def callbacks_not_run(record: AsWritten | None) -> list[str]:
    """The callbacks the script passed to fit() that the measured runs did not run."""
    names = (record or {}).get("callbacks") if isinstance(record, dict) else None
    return [str(n) for n in names] if isinstance(names, list) else []
