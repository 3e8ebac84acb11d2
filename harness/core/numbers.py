"""Reading numbers from summaries and records: one rule for what counts as a value.

A summary, card or records file writes an undefined statistic as ``null``; in memory it is a
NaN. These helpers read any value (float, int, numpy scalar, string, ``None``) the same way
everywhere. A leaf: imports nothing from the harness.
"""

from __future__ import annotations

import math


def finite_or_none(value: object) -> float | None:
    """``value`` as a finite float, else ``None`` (NaN, ±inf, ``None``, a bool, a non-number)."""
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def finite_or_nan(value: object) -> float:
    """``value`` as a finite float, else NaN (for plotting and array code)."""
    number = finite_or_none(value)
    return math.nan if number is None else number


def count_or_none(value: object) -> int | None:
    """``value`` as an int count (a finite number truncated), else ``None``."""
    number = finite_or_none(value)
    return None if number is None else int(number)
