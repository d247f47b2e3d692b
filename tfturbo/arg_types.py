"""Command-line value types: each turns one argument string into a value or says what was expected.

argparse reports an `ArgumentTypeError` as a one-line usage error with exit 2,
so a bad value never reaches the settings' own checks as a traceback. Each
type also says what it takes (`takes`), for messages outside argparse
(`tfturbo ab`'s SETTINGS).
"""

from __future__ import annotations

import argparse
from typing import Any, Callable, TypeVar

T = TypeVar("T", bound=Callable[..., Any])


def takes(text: str) -> Callable[[T], T]:
    """Mark an argument type with what it takes, in words ("a whole number >= 1")."""
    def mark(parse: T) -> T:
        parse.takes = text  # type: ignore[attr-defined]
        return parse
    return mark


@takes("a whole number >= 1")
def positive_int(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a number >= 1, got {n}")
    return n


def _checked_float(value: str, ok: Callable[[float], bool], expectation: str) -> float:
    try:
        v = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {value!r}") from None
    if not ok(v):
        raise argparse.ArgumentTypeError(f"expected {expectation}, got {v}")
    return v


@takes("a fraction between 0 and 1 (e.g. 0.02)")
def fraction(value: str) -> float:
    return _checked_float(value, lambda v: 0 < v < 1, "a fraction between 0 and 1 (e.g. 0.02)")


@takes("a number >= 0")
def non_negative(value: str) -> float:
    return _checked_float(value, lambda v: v >= 0, "a number >= 0")


@takes("a number > 0")
def positive(value: str) -> float:
    return _checked_float(value, lambda v: v > 0, "a number > 0")


@takes("START:STOP in steps (e.g. 20:40)")
def step_window(value: str) -> tuple[int, int]:
    """`START:STOP` in steps."""
    try:
        start, stop = value.split(":")
        return int(start), int(stop)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected START:STOP (e.g. 20:40), got {value!r}") from None
