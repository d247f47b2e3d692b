"""What counts as a number in a document read back from disk or an event.

Run files and events are JSON: a value may be missing, null, a string from a
hand-edited file, a bool (which Python treats as an int), or a NaN the backend
measured. Every reader asks the same question through `finite`, and every
writer turns non-finite floats into null through `json_safe`, so a NaN never
becomes invalid JSON and a `true` never becomes a step time.
"""

from __future__ import annotations

import math
from typing import Any, TypeGuard


def finite(v: Any) -> TypeGuard[int | float]:
    """True for an int or float (not a bool) that is neither NaN nor infinite (a type check's narrowing too)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def num(v: Any) -> float | None:
    """`v` as a float when it is a finite number, else None."""
    return float(v) if finite(v) else None


def json_safe(value: Any) -> Any:
    """`value` with every NaN/Infinity float, at any depth, replaced by None (strict JSON for any reader)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def digits_for(value: float) -> int:
    """Decimals that keep about three significant figures of a rate without crowding a cell (the report's and
    the app's compare tables print steps/s with it)."""
    return 2 if abs(value) < 100 else 1 if abs(value) < 1000 else 0


def duration_text(seconds: float) -> str:
    """A time left as a person says it: "40 s", "1 min 40 s", "1 h 05 min"."""
    seconds = int(round(max(0.0, seconds)))
    if seconds < 60:
        return f"{seconds} s"
    minutes, sec = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {sec:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def counted(n: int, word: str, plural: str | None = None) -> str:
    """'1 pair', '6 pairs', '0 runs': a count with its noun in the right number (never "pair(s)": every text a
    user reads says its counts through here)."""
    return f"{n} {word if n == 1 else plural or word + 's'}"


def ordinal(n: int) -> str:
    """'1st', '2nd', '3rd', '11th', '22nd'."""
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"
