"""Validated loading of scene files (``fixtures/schemas/scene-v1.json``, ``scene-v2.json``).

A document whose ``schema`` field is ``"t3d-scene/2"`` is checked against scene-v2.json, any
other against scene-v1.json (so a wrong value is reported against version 1).

Every problem with an untrusted scene file raises :class:`harness.core.errors.SceneError` naming the
file, a JSON pointer (RFC 6901) into it and the reason; no other exception escapes
:func:`parse_scene`. Checks, in order:

1. bytes are UTF-8 (strict; a BOM is malformed JSON), the text is JSON;
2. no duplicate keys, no non-finite numbers (Python's ``json`` accepts ``NaN``/``Infinity`` and
   turns ``1e999`` into ``inf``; all are rejected), no lone surrogates in strings;
3. JSON Schema (Draft 2020-12): missing/unknown fields, wrong types, non-positive sizes, empty
   object list, id syntax. A yes/no checker compiled once from the same file
   (``harness.scenes.fastschema``) accepts valid scenes fast; only a rejected document goes to
   jsonschema, which names the most relevant violation;
4. physical limits (``harness.scenes.limits``): lengths in [1 mm, 100 m], ``|yaw_deg| <= 360``,
   every object's box within the room grown by a 1 m margin;
5. semantics: ids match their pattern in full (Python's ``$`` also matches before a final
   newline); ``prompt``, ``prompt_source`` and object labels hold no NUL or other C0 control
   character (tab, line feed and carriage return allowed); duplicate object ids; asset paths
   (objects and retrieval candidates) must be relative POSIX paths without ``.``/``..``/empty
   segments, must stay inside the scene-set root after resolving symlinks, and must name an
   existing file.
"""

from __future__ import annotations

import json
import math
import re
from functools import cache
from pathlib import Path, PurePosixPath

from harness.core import bounded_input
from harness.core.errors import SceneError
from harness.core.paths import SCHEMAS
from harness.scenes.fastschema import compile_schema
from harness.scenes.limits import check_limits
from harness.scenes.model import KIND_OBJECT, KIND_ROOM, SCENE_SCHEMA, SCENE_SCHEMA_V2, Scene

SCHEMA_PATH = SCHEMAS / "scene-v1.json"
SCHEMA_PATHS = {SCENE_SCHEMA: SCHEMA_PATH, SCENE_SCHEMA_V2: SCHEMAS / "scene-v2.json"}

# Largest magnitude an int may have and still convert to a finite float.
_FLOAT_MAX = 1.7976931348623157e308
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._~+-]*")
# C0 controls but tab, line feed and carriage return: never in prompts or labels
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


class _NonFinite:
    """Placeholder for a ``NaN``/``Infinity``/``-Infinity`` literal found while parsing."""

    __slots__ = ("literal",)

    def __init__(self, literal: str):
        self.literal = literal


class _DupKeyDict(dict):
    """A JSON object that repeated a key; ``dup`` is the first repeated key."""

    dup: str = ""


def _dup_dict(pairs: list[tuple[str, object]]) -> _DupKeyDict:
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            break
        seen.add(key)
    bad = _DupKeyDict(pairs)
    bad.dup = key
    return bad


# A \u escape of a UTF-16 surrogate: the only way a valid UTF-8 file yields an unencodable str.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _escape(token: str | int) -> str:
    return str(token).replace("~", "~0").replace("/", "~1")


def pointer(parts: object) -> str:
    """JSON pointer (RFC 6901) for a sequence of keys/indices; ``""`` is the whole document."""
    return "".join("/" + _escape(p) for p in parts)


def _version(doc: object) -> str:
    """The schema version a document is checked against (see the module docstring)."""
    if isinstance(doc, dict) and doc.get("schema") == SCENE_SCHEMA_V2:
        return SCENE_SCHEMA_V2
    return SCENE_SCHEMA


@cache
def _schema(version: str = SCENE_SCHEMA) -> dict[str, object]:
    return json.loads(SCHEMA_PATHS[version].read_text(encoding="utf-8"))


@cache
def _validator(version: str = SCENE_SCHEMA) -> object:
    """The Draft 2020-12 validator for one scene schema file (built once per process)."""
    from jsonschema import Draft202012Validator

    Draft202012Validator.check_schema(_schema(version))
    return Draft202012Validator(_schema(version))


@cache
def _fast_check(version: str = SCENE_SCHEMA) -> object:
    """Yes/no predicate compiled from the same schema file (see ``fastschema``)."""
    return compile_schema(_schema(version))


def _decode(data: bytes, path: str) -> tuple[object, bool]:
    """Parse bytes as JSON. Returns (document, suspicious).

    ``suspicious`` is True when the document may hold a duplicate key, a non-finite or
    float-overflowing number or a lone surrogate; only then does the slower value walk run.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SceneError(
            f"not UTF-8: invalid byte at offset {exc.start}",
            path=path,
            hint="save the scene file as UTF-8",
        ) from None
    flags: list[bool] = []

    def pairs_hook(pairs: list[tuple[str, object]]) -> dict[str, object]:
        out = dict(pairs)
        if len(out) != len(pairs):
            flags.append(True)
            return _dup_dict(pairs)
        return out

    def parse_float(literal: str) -> float:
        value = float(literal)
        if not math.isfinite(value):
            flags.append(True)
        return value

    def parse_int(literal: str) -> int:
        if len(literal) > 300:  # possibly beyond the float range: let the walk decide
            flags.append(True)
        return int(literal)

    def parse_constant(literal: str) -> _NonFinite:
        flags.append(True)
        return _NonFinite(literal)

    try:
        doc = bounded_input.loads(
            text,
            object_pairs_hook=pairs_hook,
            parse_float=parse_float,
            parse_int=parse_int,
            parse_constant=parse_constant,
        )
    except bounded_input.JsonDepthError as exc:
        raise SceneError(f"malformed JSON: {exc.what}", path=path, hint=exc.hint) from None
    except json.JSONDecodeError as exc:
        raise SceneError(
            f"malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
            path=path,
            hint="fix the JSON syntax",
        ) from None
    except RecursionError:
        raise SceneError(
            "malformed JSON: nested too deeply", path=path, hint="a scene is a flat object"
        ) from None
    except ValueError as exc:  # int() digit limit (sys.set_int_max_str_digits)
        raise SceneError(f"malformed JSON: {exc}", path=path, pointer="") from None
    suspicious = bool(flags) or (_SURROGATE_ESCAPE.search(text) is not None)
    return doc, suspicious


def _check_values(doc: object, path: str) -> None:
    """Reject duplicate keys, non-finite numbers and unencodable strings (iterative walk)."""
    stack: list[tuple[object, tuple[str | int, ...]]] = [(doc, ())]
    while stack:
        value, where = stack.pop()
        if isinstance(value, dict):
            if isinstance(value, _DupKeyDict):
                raise SceneError(
                    f"duplicate key {value.dup!r}",
                    path=path,
                    pointer=pointer((*where, value.dup)),
                    hint="each field may appear once",
                )
            for key, item in value.items():
                if not _encodable(key):
                    raise SceneError(
                        "key is not valid Unicode (lone surrogate)",
                        path=path,
                        pointer=pointer(where),
                    )
                stack.append((item, (*where, key)))
        elif isinstance(value, list):
            stack.extend((item, (*where, i)) for i, item in enumerate(value))
        elif isinstance(value, _NonFinite):
            raise SceneError(
                f"non-finite number {value.literal}",
                path=path,
                pointer=pointer(where),
                hint="every number must be finite",
            )
        elif isinstance(value, float):
            if not math.isfinite(value):
                raise SceneError(
                    "non-finite number (overflows a 64-bit float)",
                    path=path,
                    pointer=pointer(where),
                    hint="every number must be finite",
                )
        elif isinstance(value, int) and not isinstance(value, bool):
            if abs(value) > _FLOAT_MAX:
                raise SceneError(
                    "number too large for a 64-bit float",
                    path=path,
                    pointer=pointer(where),
                    hint="every number must be finite",
                )
        elif isinstance(value, str) and not _encodable(value):
            raise SceneError(
                "string is not valid Unicode (lone surrogate escape)",
                path=path,
                pointer=pointer(where),
            )


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_TYPE_NAMES = {
    "object": "an object",
    "array": "an array",
    "string": "a string",
    "number": "a number",
    "integer": "an integer",
    "boolean": "a boolean",
    "null": "null",
}


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _schema_error(doc: object, path: str) -> None:
    """Raise a SceneError for the most relevant schema violation, if any."""
    version = _version(doc)
    if _fast_check(version)(doc):
        return
    from jsonschema.exceptions import best_match

    error = best_match(_validator(version).iter_errors(doc))
    if error is None:
        return
    where = list(error.absolute_path)
    kind = error.validator
    inst = error.instance
    if kind == "required":
        props = error.schema.get("properties", {})
        missing = sorted(k for k in error.validator_value if k not in inst)
        key = missing[0] if missing else "?"
        raise SceneError(
            f"missing required field {key!r}",
            path=path,
            pointer=pointer((*where, key)),
            hint="required fields here: "
            + ", ".join(k for k in props if k in error.validator_value),
        )
    if kind == "additionalProperties":
        allowed = error.schema.get("properties", {})
        extra = sorted(k for k in inst if k not in allowed)
        key = extra[0] if extra else "?"
        raise SceneError(
            f"unknown field {key!r}",
            path=path,
            pointer=pointer((*where, key)),
            hint=f"allowed fields here: {', '.join(allowed)}",
        )
    if kind == "type":
        expected = _TYPE_NAMES.get(str(error.validator_value), str(error.validator_value))
        what = f"wrong type: expected {expected}, got {_json_type(inst)}"
        raise SceneError(what, path=path, pointer=pointer(where))
    if kind == "exclusiveMinimum":
        raise SceneError(
            f"non-positive value {inst!r}",
            path=path,
            pointer=pointer(where),
            hint="sizes and heights are positive metres",
        )
    if kind == "minItems" and where == ["objects"]:
        raise SceneError(
            "empty object list", path=path, pointer="/objects", hint="a scene has >= 1 object"
        )
    if kind in ("minItems", "maxItems"):
        lo = error.schema.get("minItems")
        hi = error.schema.get("maxItems")
        n = f"exactly {lo}" if lo == hi else f"{lo}..{hi}"
        raise SceneError(
            f"wrong length {len(inst)}: expected {n} items", path=path, pointer=pointer(where)
        )
    if kind == "const":
        raise SceneError(
            f"unsupported value {inst!r}: expected {error.validator_value!r}",
            path=path,
            pointer=pointer(where),
            hint=f"scene schemas: {', '.join(SCHEMA_PATHS)}" if where == ["schema"] else None,
        )
    if kind in ("pattern", "minLength", "maxLength"):
        raise SceneError(
            f"invalid string {inst!r}",
            path=path,
            pointer=pointer(where),
            hint=error.schema.get("description") or "ids use letters, digits and ._~+- only",
        )
    raise SceneError(f"schema violation: {error.message}", path=path, pointer=pointer(where))


def check_asset_path(
    asset: str,
    root: Path,
    *,
    path: str = "",
    where: str = "",
    error: type[SceneError] = SceneError,
    kind: str = "asset",
) -> Path:
    """Resolve a relative POSIX path under ``root``; raise ``error`` if unsafe, missing or over
    the input bound (``$T3D_AUDIT_MAX_INPUT_BYTES``, checked without reading the file).

    ``root`` must already be resolved (absolute, symlinks followed). Returns the resolved file.
    ``kind`` names the file in messages ("asset", "scene file").
    """
    hint = f"{kind} paths are POSIX paths relative to the scene-set root"
    if any(ord(ch) < 32 for ch in asset) or "\\" in asset:
        raise error(
            f"{kind} path {asset!r} has a backslash or control character",
            path=path,
            pointer=where,
            hint=hint,
        )
    pure = PurePosixPath(asset)
    if asset.startswith("/") or pure.is_absolute() or (len(asset) > 1 and asset[1] == ":"):
        raise error(f"{kind} path {asset!r} is absolute", path=path, pointer=where, hint=hint)
    segments = asset.split("/")
    if ".." in segments:
        raise error(
            f"{kind} path {asset!r} leaves the scene-set root", path=path, pointer=where, hint=hint
        )
    if any(seg in ("", ".") for seg in segments):
        raise error(
            f"{kind} path {asset!r} is not normalised (empty or '.' segment)",
            path=path,
            pointer=where,
            hint=hint,
        )
    try:
        resolved = (root / asset).resolve()
    except (OSError, RuntimeError) as exc:  # RuntimeError: symlink loop on older Pythons
        raise error(
            f"{kind} path {asset!r} cannot be resolved: {exc}", path=path, pointer=where
        ) from None
    if not resolved.is_relative_to(root):
        raise error(
            f"{kind} path {asset!r} leaves the scene-set root through a symlink",
            path=path,
            pointer=where,
            hint="copy the asset into the scene set instead of linking outside it",
        )
    try:
        exists = resolved.is_file()
    except OSError:  # e.g. ENAMETOOLONG, which is_file() does not swallow
        exists = False
    if not exists:
        raise error(
            f"missing {kind if kind.endswith('file') else kind + ' file'} {asset!r}",
            path=path,
            pointer=where,
            hint=f"expected it under {root}",
        )
    try:  # sized on its opened handle: an asset over the input bound never reaches Blender
        bounded_input.checked_size(resolved, what=kind if kind.endswith("file") else f"{kind} file")
    except OSError as exc:  # InputFileError too: over the bound, or not a regular file
        raise error(f"{kind} {asset!r}: {getattr(exc, 'what', exc.strerror)}", path=path,
                    pointer=where, hint=getattr(exc, "hint", None)) from None
    return resolved


def _check_text(text: str, path: str, where: str) -> None:
    bad = _CONTROL.search(text)
    if bad is not None:
        raise SceneError(
            f"{where.rsplit('/', 1)[-1]} contains the control character "
            f"U+{ord(bad.group()):04X} at character {bad.start()}",
            path=path,
            pointer=where,
            hint="text fields may not hold NUL or other C0 control characters "
            "(tab and line breaks are allowed)",
        )


def _check_semantics(doc: dict[str, object], path: str, root: Path, checked: set[str] | None) -> None:
    # Python's "$" also matches before a final newline, so ids are re-checked in full here.
    for key in ("id", "generator", "prompt_id"):
        if not _ID.fullmatch(doc[key]):
            raise SceneError(f"invalid id {doc[key]!r}", path=path, pointer=f"/{key}")
    for key in ("prompt", "prompt_source"):
        _check_text(doc[key], path, f"/{key}")
    if doc.get("kind", KIND_ROOM) not in (KIND_ROOM, KIND_OBJECT):
        raise SceneError(
            f"invalid scene kind {doc['kind']!r}", path=path, pointer="/kind", hint="room | object"
        )
    memo = checked if checked is not None else set()
    seen: dict[str, int] = {}
    for i, obj in enumerate(doc["objects"]):
        oid = obj["id"]
        if not _ID.fullmatch(oid):
            raise SceneError(f"invalid id {oid!r}", path=path, pointer=f"/objects/{i}/id")
        if oid in seen:
            raise SceneError(
                f"duplicate object id {oid!r} (first at /objects/{seen[oid]})",
                path=path,
                pointer=f"/objects/{i}/id",
                hint="object ids are unique within a scene",
            )
        seen[oid] = i
        _check_text(obj["label"], path, f"/objects/{i}/label")
        refs = [(obj["asset"], f"/objects/{i}/asset")]
        refs += [
            (c["asset"], f"/objects/{i}/candidates/{j}/asset")
            for j, c in enumerate(obj.get("candidates") or ())
        ]
        for asset, where in refs:
            if asset not in memo:
                check_asset_path(asset, root, path=path, where=where)
                memo.add(asset)


def _resolve_root(root: Path | str, path: str) -> Path:
    try:
        resolved = Path(root).resolve()
    except (OSError, RuntimeError) as exc:
        raise SceneError(f"scene-set root {root} cannot be resolved: {exc}", path=path) from None
    if not resolved.is_dir():
        raise SceneError(f"scene-set root {root} is not a directory", path=path)
    return resolved


def validate_document(
    doc: object,
    *,
    path: Path | str,
    root: Path | str,
    checked_assets: set[str] | None = None,
    walk: bool = True,
) -> Scene:
    """Validate an already parsed JSON value (schema + semantics) and build the Scene.

    ``checked_assets``: optional set of asset paths already checked under this same ``root``
    during one pass (a scene-set load); checked paths are added to it. Omit it for one-off use.
    ``walk=False`` skips the duplicate-key/non-finite/surrogate walk; only for documents that
    :func:`_decode` found clean.
    """
    where = str(path)
    if walk:
        _check_values(doc, where)
    _schema_error(doc, where)
    check_limits(doc, where)
    _check_semantics(doc, where, _resolve_root(root, where), checked_assets)
    return Scene.from_dict(doc)


def parse_scene(
    data: bytes, *, path: Path | str, root: Path | str, checked_assets: set[str] | None = None
) -> Scene:
    """Parse and validate scene file bytes; ``path`` is only used in error messages.

    Raises :class:`SceneError` (file, JSON pointer, reason) for any invalid input.
    ``checked_assets``: see :func:`validate_document`.
    """
    where = str(path)
    if not isinstance(data, bytes | bytearray | memoryview):
        raise SceneError(f"scene data must be bytes, got {type(data).__name__}", path=where)
    doc, suspicious = _decode(bytes(data), where)
    return validate_document(
        doc, path=where, root=root, checked_assets=checked_assets, walk=suspicious
    )


def load_scene(
    path: Path | str, root: Path | str, *, checked_assets: set[str] | None = None
) -> Scene:
    """Read and validate one scene file; asset paths resolve against the scene-set ``root``."""
    try:
        data = bounded_input.read_bytes(path, what="scene file")
    except OSError as exc:
        raise SceneError(
            f"cannot read scene file: {exc.strerror or exc}",
            path=path,
            hint="check the path",
        ) from None
    return parse_scene(data, path=path, root=root, checked_assets=checked_assets)


def validate_scene(scene: Scene, root: Path | str, *, path: Path | str = "<imported>") -> Scene:
    """Run an in-memory Scene (e.g. an imported one) through the same checks as a file."""
    try:
        doc = json.loads(json.dumps(scene.to_dict(), allow_nan=True))
    except (TypeError, ValueError) as exc:
        raise SceneError(f"scene is not JSON-serialisable: {exc}", path=path) from None
    # The round trip turns NaN into float('nan'); the value walk reports it with a pointer.
    return validate_document(doc, path=path, root=root)
