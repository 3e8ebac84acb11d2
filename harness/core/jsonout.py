"""Strict JSON on stdout: what every ``--json`` option of the CLI prints.

``json.dump`` writes ``NaN`` and ``Infinity`` for non-finite floats by default, tokens that are
not JSON (``jq``, JavaScript's ``JSON.parse`` and most other readers refuse the document).
:func:`strict` states such a value as ``null`` (a missing number: a failed scene's mean, an
undefined correlation) and turns numpy scalars into Python numbers; :func:`print_json` prints
the result with ``allow_nan=False``, the policy of the files :mod:`harness.core.fileio` writes.
A leaf module: it imports nothing from the harness.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Mapping
from typing import Any, TextIO


def strict(value: Any) -> Any:
    """``value`` (nested dicts, lists, tuples, numbers, strings) with every non-finite float
    (NaN, ±inf, numpy's too) replaced by ``None`` and numpy scalars and arrays as Python values."""
    if type(value).__module__ == "numpy" and hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {key: strict(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict(item) for item in value]
    return value


def print_json(value: Any, *, stream: TextIO | None = None, indent: int | None = 1,
               ensure_ascii: bool = False) -> None:
    """``value`` as strict JSON (:func:`strict`) and a newline on ``stream`` (default stdout)."""
    out = sys.stdout if stream is None else stream
    json.dump(strict(value), out, indent=indent, ensure_ascii=ensure_ascii, allow_nan=False)
    out.write("\n")
