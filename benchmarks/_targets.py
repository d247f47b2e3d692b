"""The table the benchmarks end with: each measure, its value, its target and whether it was met."""

from __future__ import annotations


def print_targets(rows: list[tuple[str, str, str, bool | None]]) -> None:
    """One line per (measure, value, target, passed); `passed` None: a measure without a target."""
    widths = [max(len(r[i]) for r in rows) + 2 for i in range(3)]
    print(f"{'measure':<{widths[0]}}{'value':<{widths[1]}}{'target':<{widths[2]}}result")
    print("-" * (sum(widths) + 6))
    for name, value, target, passed in rows:
        result = "" if passed is None else "met" if passed else "MISSED"
        print(f"{name:<{widths[0]}}{value:<{widths[1]}}{target:<{widths[2]}}{result}")
