"""SETTINGS for `tfturbo ab`: `key=value` pairs joined by commas, e.g. `policy=mixed_bfloat16,jit=on,batch=128`."""

from __future__ import annotations

from typing import Any

from ..errors import UserError
from ..settings import POLICIES, RunSettings

ON_OFF = {"on": True, "off": False, "true": True, "false": False, "1": True, "0": False, "yes": True, "no": False}
KEYS = {  # key -> (RunSettings field, parser, what it takes)
    "policy": ("policy", lambda v: v if v in POLICIES else None, "|".join(POLICIES)),
    "jit": ("jit_compile", lambda v: ON_OFF.get(v.lower()), "on|off"),
    "batch": ("batch_size", lambda v: int(v) if v.isdigit() and int(v) > 0 else None, "a positive whole number"),
    "fix_head": ("fix_head", lambda v: ON_OFF.get(v.lower()), "on|off"),
    "fix_int_inputs": ("fix_int_inputs", lambda v: ON_OFF.get(v.lower()), "on|off"),
    "drop_remainder": ("drop_remainder", lambda v: ON_OFF.get(v.lower()), "on|off"),
    "input_fixes": ("input_fixes", lambda v: ON_OFF.get(v.lower()), "on|off"),
}


def parse_settings(text: str, base: RunSettings, flag: str) -> RunSettings:
    """`base` with the changes `text` names; a one-line UserError that names the bad pair otherwise."""
    changes: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in (text or "").split(","))):
        key, sep, value = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or key not in KEYS:
            raise UserError(f"{flag} {text!r}: {item!r} is not key=value with a known key",
                            f"use {', '.join(f'{k}=…' for k in KEYS)}, e.g. {flag} policy=mixed_bfloat16,jit=on")
        field, parse, takes = KEYS[key]
        parsed = parse(value.strip())
        if parsed is None:
            raise UserError(f"{flag}: {key}={value.strip()!r} is not valid", f"{key} takes {takes}")
        changes[field] = parsed
    return base.with_(**changes)


def describe(settings: RunSettings) -> dict[str, Any]:
    """The SETTINGS keys of a run's settings (what `ab --json` prints as `a` and `b`), plus the rest."""
    return {"policy": settings.policy, "jit": settings.jit_compile, "batch": settings.batch_size,
            "fix_head": settings.fix_head, "fix_int_inputs": settings.fix_int_inputs,
            "drop_remainder": settings.drop_remainder,
            "input_fixes": settings.input_fixes, "steps": settings.steps,
            "seed": settings.seed}
