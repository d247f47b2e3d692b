"""Plain-number checks shared by every reader of measured values."""

from __future__ import annotations

import math
from typing import Any


def finite(v: Any) -> bool:
    """True for a real, finite int or float (not a bool, not NaN/inf)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
