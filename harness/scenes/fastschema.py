"""A fast yes/no JSON Schema checker for the small keyword subset scene-v1.json uses.

jsonschema (the reference implementation) needs ~15 ms per scene, too slow for loading 300
scenes on every test session. This module compiles a schema once into nested closures that
answer only "valid or not" (~0.1 ms per scene); when the answer is "not valid", the loader asks
jsonschema for the precise error. Semantics follow Draft 2020-12 for the supported keywords:
each keyword applies only to instances of its type (``minLength`` ignores numbers, ...), and
booleans are never numbers. An unsupported keyword raises ``ValueError`` at compile time, so
the schema file cannot silently outgrow this checker. ``tests/test_scene_fuzz.py`` checks that
it agrees with jsonschema on fuzzed documents.
"""

from __future__ import annotations

import re
from collections.abc import Callable

Check = Callable[[object], bool]

_ANNOTATIONS = {"$schema", "$id", "$comment", "$defs", "title", "description", "examples"}
_SUPPORTED = {
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "pattern",
    "const",
    "exclusiveMinimum",
    "minimum",
    "$ref",
}


def _is_number(value: object) -> bool:
    cls = type(value)
    return cls is float or cls is int or (isinstance(value, int | float) and cls is not bool)


_TYPES: dict[str, Check] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "number": _is_number,
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, float) and v.is_integer())
    ),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def _json_equal(a: object, b: object) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if _is_number(a) and _is_number(b):
        return a == b
    return type(a) is type(b) and a == b


def compile_schema(schema: dict[str, object]) -> Check:
    """Compile ``schema`` (local ``#/$defs/...`` refs only) into a predicate ``doc -> bool``."""
    defs: dict[str, Check] = {}

    def ref(target: str) -> Check:
        prefix = "#/$defs/"
        if not target.startswith(prefix):
            raise ValueError(f"unsupported $ref {target!r}")
        name = target[len(prefix) :]
        if name not in defs:
            defs[name] = lambda v: False  # placeholder; schemas here are not recursive
            defs[name] = build(schema["$defs"][name])
        return defs[name]

    def build(node: object) -> Check:
        if node is True:
            return lambda v: True
        if node is False:
            return lambda v: False
        unknown = set(node) - _SUPPORTED - _ANNOTATIONS
        if unknown:
            raise ValueError(f"unsupported schema keywords {sorted(unknown)}")
        checks: list[Check] = []
        if "$ref" in node:
            checks.append(ref(node["$ref"]))
        if "type" in node:
            names = node["type"] if isinstance(node["type"], list) else [node["type"]]
            preds = tuple(_TYPES[n] for n in names)
            if len(preds) == 1:
                checks.append(preds[0])
            else:
                checks.append(lambda v, preds=preds: any(p(v) for p in preds))
        if "const" in node:
            const = node["const"]
            checks.append(lambda v, c=const: _json_equal(v, c))
        checks.extend(_object_checks(node, build))
        checks.extend(_array_checks(node, build))
        checks.extend(_string_checks(node))
        checks.extend(_number_checks(node))
        if not checks:
            return lambda v: True
        if len(checks) == 1:
            return checks[0]
        frozen = tuple(checks)

        def check_all(v: object) -> bool:
            for c in frozen:  # noqa: SIM110 - a plain loop is ~2x faster than all(genexpr)
                if not c(v):
                    return False
            return True

        return check_all

    return build(schema)


def _object_checks(node: dict[str, object], build: Callable[[object], Check]) -> list[Check]:
    out: list[Check] = []
    required = tuple(node.get("required", ()))
    if required:
        out.append(lambda v: not isinstance(v, dict) or all(k in v for k in required))
    props = {k: build(s) for k, s in node.get("properties", {}).items()}
    extra = node.get("additionalProperties", True)
    extra_check = None if extra is True else build(extra)

    if props or extra_check is not None:

        def check_props(v: object) -> bool:
            if not isinstance(v, dict):
                return True
            for key, value in v.items():
                pred = props.get(key)
                if pred is not None:
                    if not pred(value):
                        return False
                elif extra_check is not None and not extra_check(value):
                    return False
            return True

        out.append(check_props)
    return out


def _length_checks(kind: type, lo: int | None, hi: int | None) -> list[Check]:
    """Bounds on ``len(v)`` for values of type ``kind`` (other types pass)."""
    out: list[Check] = []
    if lo is not None:
        out.append(lambda v: not isinstance(v, kind) or len(v) >= lo)
    if hi is not None:
        out.append(lambda v: not isinstance(v, kind) or len(v) <= hi)
    return out


def _array_checks(node: dict[str, object], build: Callable[[object], Check]) -> list[Check]:
    out = _length_checks(list, node.get("minItems"), node.get("maxItems"))
    if "items" in node:
        item = build(node["items"])

        def check_items(v: object) -> bool:
            if isinstance(v, list):
                for x in v:
                    if not item(x):
                        return False
            return True

        out.append(check_items)
    return out


def _string_checks(node: dict[str, object]) -> list[Check]:
    out = _length_checks(str, node.get("minLength"), node.get("maxLength"))
    if "pattern" in node:
        regex = re.compile(node["pattern"])
        out.append(lambda v: not isinstance(v, str) or regex.search(v) is not None)
    return out


def _number_checks(node: dict[str, object]) -> list[Check]:
    out: list[Check] = []
    if "exclusiveMinimum" in node:
        lo = node["exclusiveMinimum"]
        out.append(lambda v: not _is_number(v) or not v <= lo)  # NaN passes, as in jsonschema
    if "minimum" in node:
        lo2 = node["minimum"]
        out.append(lambda v: not _is_number(v) or not v < lo2)
    return out
