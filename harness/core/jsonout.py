"""Strict JSON on stdout: what every ``--json`` option of the CLI prints.

``json.dump`` writes ``NaN`` and ``Infinity`` for non-finite floats by default, tokens that are
not JSON (``jq``, JavaScript's ``JSON.parse`` and most other readers refuse the document).
:func:`strict` is the one conversion of an in-memory record into a JSON value: a frozen
dataclass becomes an object of its fields in declaration order, mappings and sequences of them
are walked, a non-finite float is stated as ``null`` (a missing number: a failed scene's mean,
an undefined correlation) and numpy scalars and arrays become Python values.
:func:`print_json` prints the result with ``allow_nan=False``, the policy of the files
:mod:`harness.core.fileio` writes. :data:`JSONValue` and :data:`JSONObject` name the shapes a
JSON document holds, for annotations. A leaf module: it imports nothing from the harness.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Mapping
from dataclasses import fields, is_dataclass
from typing import TextIO, TypeAlias

#: A JSON scalar as :func:`json.loads` returns it.
JSONScalar: TypeAlias = bool | int | float | str | None
#: Any JSON value: a scalar, an array or an object, nested to any depth.
JSONValue: TypeAlias = JSONScalar | list["JSONValue"] | dict[str, "JSONValue"]
#: A JSON object: what a summary, manifest, card or records line is at the top level.
JSONObject: TypeAlias = dict[str, JSONValue]


def strict(value: object) -> JSONValue:
    """``value`` (dataclass instances, nested mappings, lists, tuples, numbers, strings) as a
    JSON value: a dataclass instance becomes a dict of its fields in declaration order, every
    non-finite float (NaN, ±inf, numpy's too) becomes ``None`` and numpy scalars and arrays
    become Python values. Mapping keys are kept as given (the caller's key order is kept)."""
    if type(value).__module__ == "numpy" and hasattr(value, "tolist"):
        value = value.tolist()
    if is_dataclass(value) and not isinstance(value, type):
        return {field.name: strict(getattr(value, field.name)) for field in fields(value)}
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {key: strict(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict(item) for item in value]
    return value


def print_json(value: object, *, stream: TextIO | None = None, indent: int | None = 1,
               ensure_ascii: bool = False) -> None:
    """``value`` as strict JSON (:func:`strict`) and a newline on ``stream`` (default stdout)."""
    out = sys.stdout if stream is None else stream
    json.dump(strict(value), out, indent=indent, ensure_ascii=ensure_ascii, allow_nan=False)
    out.write("\n")
