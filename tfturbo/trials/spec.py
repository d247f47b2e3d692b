"""SETTINGS for `tfturbo ab`: `key=value` pairs joined by commas, e.g. `policy=mixed_bfloat16,jit=on,batch=128`.

The keys are the settings declared with `ab=` in tfturbo/settings.py; what
each takes and how it is parsed come from the same declaration (its choices,
its command-line type, or on|off for a switch).
"""

from __future__ import annotations

import argparse
import functools
from dataclasses import dataclass
from typing import Any, Callable

from ..errors import UserError
from ..settings import RunSettings, declared

ON_OFF = {"on": True, "off": False, "true": True, "false": False, "1": True, "0": False, "yes": True, "no": False}


@dataclass(frozen=True)
class Key:
    """One SETTINGS key: the RunSettings field it sets, its parser (None for a value it refuses), what it takes."""

    field: str
    parse: Callable[[str], Any]
    takes: str


def keys() -> dict[str, Key]:
    """key -> Key for every setting declared with `ab=`, in declaration order."""
    out: dict[str, Key] = {}
    for f, s in declared():
        if not s.ab:
            continue
        if s.choices:
            out[s.ab] = Key(f.name, functools.partial(_one_of, s.choices), "|".join(s.choices))
        elif s.parse is None:  # an on/off switch
            out[s.ab] = Key(f.name, lambda v: ON_OFF.get(v.lower()), "on|off")
        else:
            out[s.ab] = Key(f.name, functools.partial(_checked, s.parse),
                            getattr(s.parse, "takes", None) or s.metavar or "a value")
    return out


def _one_of(choices: tuple[str, ...], value: str) -> str | None:
    return value if value in choices else None


def _checked(parse: Callable[[str], Any], value: str) -> Any:
    try:
        return parse(value)
    except (argparse.ArgumentTypeError, ValueError, TypeError):
        return None


def parse_settings(text: str, base: RunSettings, flag: str) -> RunSettings:
    """`base` with the changes `text` names; a one-line UserError that names the bad pair otherwise."""
    known = keys()
    changes: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in (text or "").split(","))):
        key, sep, value = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or key not in known:
            raise UserError(f"{flag} {text!r}: {item!r} is not key=value with a known key",
                            f"use {', '.join(f'{k}=…' for k in known)}, e.g. {flag} policy=mixed_bfloat16,jit=on")
        parsed = known[key].parse(value.strip())
        if parsed is None:
            raise UserError(f"{flag}: {key}={value.strip()!r} is not valid", f"{key} takes {known[key].takes}")
        changes[known[key].field] = parsed
    return base.with_(**changes)


def describe(settings: RunSettings) -> dict[str, Any]:
    """The SETTINGS keys of a run's settings (what `ab --json` prints as `a` and `b`), plus steps and seed."""
    return {**{key: getattr(settings, k.field) for key, k in keys().items()},
            "steps": settings.steps, "seed": settings.seed}
