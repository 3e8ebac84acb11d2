"""Hypothesis fuzzing of scene files: malformed input raises SceneError and nothing else.

Properties:
* any mutation of a valid document (dropped/added fields, wrong types, NaN/inf, bad sizes, bad
  asset paths) either loads or raises SceneError; mutations known to be invalid always raise;
* arbitrary bytes, byte-level edits of a valid file and injected invalid UTF-8 raise SceneError
  (or load, for edits that happen to stay valid);
* generated valid scenes load and survive a canonical-JSON round trip;
* the fast schema checker agrees with jsonschema on every mutated document.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from harness.core.errors import SceneError
from harness.core.hashing import canonical_json
from harness.scenes import Scene, parse_scene
from harness.scenes.limits import LENGTH_MAX, LENGTH_MIN, ROOM_MARGIN, YAW_MAX
from harness.scenes.load import _fast_check, _validator
from tests._scene_helpers import ASSETS, dumps, scene_doc, write_assets

FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("fuzzroot")
    write_assets(base)
    outside = tmp_path_factory.mktemp("outside")
    (outside / "x.obj").write_text("v 0 0 0\n")
    (base / "assets" / "escape").symlink_to(outside)
    return base


def _parse(root: Path, data: bytes) -> Scene | SceneError:
    try:
        return parse_scene(data, path="fuzz.json", root=root)
    except SceneError as exc:  # any other exception fails the test
        assert exc.path == "fuzz.json"
        assert exc.pointer == "" or exc.pointer.startswith("/")
        return exc


json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**6), max_value=10**6),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=8,
)

BAD_ASSETS = [
    "/abs/path.obj",
    "../up.obj",
    "assets/../../up.obj",
    "assets\\chair\\a.obj",
    "assets//chair/a.obj",
    "./assets/chair/a.obj",
    "assets/chair/a.obj\x00",
    "assets/escape/x.obj",
    "assets/missing.obj",
    "assets/" + "x" * 300 + ".obj",
    "C:/x.obj",
    "assets",
]


def _paths(doc: Any, prefix: tuple = ()) -> list[tuple]:
    """Every container path in ``doc`` (dicts and lists), the root included."""
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            if isinstance(v, dict | list):
                out.extend(_paths(v, (*prefix, k)))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            if isinstance(v, dict | list):
                out.extend(_paths(v, (*prefix, i)))
    return out


def _leaf_paths(doc: Any, prefix: tuple = ()) -> list[tuple]:
    out = []
    items = doc.items() if isinstance(doc, dict) else enumerate(doc)
    for k, v in items:
        out.append((*prefix, k))
        if isinstance(v, dict | list):
            out.extend(_leaf_paths(v, (*prefix, k)))
    return out


def _get(doc: Any, path: tuple) -> Any:
    for p in path:
        doc = doc[p]
    return doc


@st.composite
def mutated(draw) -> tuple[dict, bool]:
    """(mutated document, known_invalid)."""
    doc = scene_doc(n_objects=draw(st.integers(1, 4)))
    kind = draw(
        st.sampled_from(["drop", "add", "replace", "nonfinite", "size", "asset", "dup_id", "none"])
    )
    leaves = _leaf_paths(doc)
    if kind == "drop":
        path = draw(st.sampled_from(leaves))
        parent = _get(doc, path[:-1])
        del parent[path[-1]]
        # dropping "candidates" (optional), a candidate or one of several objects may stay valid
        optional = path[-1] == "candidates" or (
            len(path) >= 2 and path[-2] in ("candidates", "objects")
        )
        invalid = not optional
        return doc, invalid
    if kind == "add":
        container = _get(doc, draw(st.sampled_from(_paths(doc))))
        if isinstance(container, dict):
            key = draw(st.text(min_size=1, max_size=8))
            assume(key not in container and key != "candidates")
            container[key] = draw(json_values)
        else:
            container.append(draw(json_values))
        return doc, True  # unknown key, or an array item that breaks its length or shape
    if kind == "replace":
        path = draw(st.sampled_from(leaves))
        _get(doc, path[:-1])[path[-1]] = draw(json_values)
        return doc, False
    if kind == "nonfinite":
        numeric = [p for p in leaves if isinstance(_get(doc, p), int | float)]
        path = draw(st.sampled_from(numeric))
        _get(doc, path[:-1])[path[-1]] = draw(st.sampled_from([math.nan, math.inf, -math.inf]))
        return doc, True
    if kind == "size":
        i = draw(st.integers(0, len(doc["objects"]) - 1))
        axis = draw(st.integers(0, 2))
        doc["objects"][i]["size"][axis] = draw(st.floats(max_value=0.0, allow_nan=False))
        return doc, True
    if kind == "asset":
        i = draw(st.integers(0, len(doc["objects"]) - 1))
        doc["objects"][i]["asset"] = draw(st.sampled_from(BAD_ASSETS))
        return doc, True
    if kind == "dup_id" and len(doc["objects"]) > 1:
        doc["objects"][-1]["id"] = doc["objects"][0]["id"]
        return doc, True
    return doc, False


@FUZZ
@given(case=mutated())
def test_mutated_documents_raise_only_scene_error(root: Path, case: tuple[dict, bool]) -> None:
    doc, known_invalid = case
    result = _parse(root, dumps(doc))
    if known_invalid:
        assert isinstance(result, SceneError), f"accepted an invalid document: {doc}"


@FUZZ
@given(case=mutated())
def test_fast_checker_agrees_with_jsonschema(case: tuple[dict, bool]) -> None:
    doc, _ = case
    assert _fast_check()(doc) == _validator().is_valid(doc)


@FUZZ
@given(data=st.binary(max_size=300))
def test_random_bytes(root: Path, data: bytes) -> None:
    assert isinstance(_parse(root, data), SceneError)  # never a valid scene by chance


@FUZZ
@given(
    edits=st.lists(
        st.tuples(
            st.sampled_from(["flip", "insert", "delete"]),
            st.integers(0, 10**6),
            st.binary(min_size=1, max_size=3),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_byte_edits_of_a_valid_file(root: Path, edits: list) -> None:
    data = bytearray(dumps(scene_doc()))
    for op, pos, payload in edits:
        pos %= len(data)
        if op == "flip":
            data[pos] ^= payload[0] or 1
        elif op == "insert":
            data[pos:pos] = payload
        elif len(data) > 1:
            del data[pos]
    _parse(root, bytes(data))


@FUZZ
@given(
    pos=st.integers(0, 10**6),
    bad=st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80", b"\x80"]),
)
def test_invalid_utf8_is_rejected(root: Path, pos: int, bad: bytes) -> None:
    data = dumps(scene_doc())
    pos %= len(data)
    err = _parse(root, data[:pos] + bad + data[pos:])
    assert isinstance(err, SceneError) and "not UTF-8" in err.what


_ALNUM = "ABCXYZabcxyz0189"
ids = st.builds(
    lambda head, tail: head + tail,
    st.sampled_from(_ALNUM),
    st.text(alphabet=_ALNUM + "._~+-", max_size=12),
)
words = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Zs", "Cc")), min_size=1, max_size=12
)
_prompt_chars = st.characters(
    blacklist_categories=("Cs",),
    blacklist_characters="".join(chr(c) for c in range(32) if chr(c) not in "\t\n\r"),
)
finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6)
length = st.floats(min_value=LENGTH_MIN, max_value=LENGTH_MAX)
unit = st.floats(min_value=0.0, max_value=1.0)


@st.composite
def valid_docs(draw) -> dict:
    """Valid scenes: lengths in range, every object's rotated box inside the room."""
    room = draw(st.lists(length, min_size=2, max_size=2))
    wall = draw(length)
    n = draw(st.integers(1, 6))
    object_ids = draw(st.lists(ids, min_size=n, max_size=n, unique=True))
    objects = []
    for oid in object_ids:
        # footprint sides <= min(room)/2 so the rotated box always fits somewhere on the floor
        size = [max(LENGTH_MIN, draw(unit) * min(room) / 2) for _ in range(2)]
        size.append(max(LENGTH_MIN, draw(unit) * wall))
        yaw = draw(st.floats(min_value=-YAW_MAX, max_value=YAW_MAX))
        free = [room[k] / 2 - (size[0] + size[1]) / 2 for k in (0, 1)]
        position = [(2 * draw(unit) - 1) * max(0.0, free[k]) for k in (0, 1)]
        position.append(draw(unit) * (wall - size[2]))
        obj = {
            "id": oid,
            "label": draw(words),
            "asset": draw(st.sampled_from(ASSETS)),
            "position": position,
            "yaw_deg": yaw,
            "size": size,
        }
        if draw(st.booleans()):
            obj["candidates"] = [
                {"asset": draw(st.sampled_from(ASSETS)), "retrieval_score": draw(finite)}
                for _ in range(draw(st.integers(0, 3)))
            ]
        objects.append(obj)
    return {
        "schema": "t3d-scene/1",
        "id": draw(ids),
        "generator": draw(ids),
        "prompt_id": draw(ids),
        # any text but C0 controls other than tab and line breaks (harness.scenes.load)
        "prompt": draw(words) + " " + draw(st.text(_prompt_chars, max_size=20)),
        "prompt_source": "fuzz",
        "room": {"size": room, "wall_height": wall},
        "objects": objects,
    }


@FUZZ
@given(doc=valid_docs())
def test_valid_documents_load_and_round_trip(root: Path, doc: dict) -> None:
    try:
        text = json.dumps(doc, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        assume(False)  # generated text with lone surrogates is not a valid file to begin with
    scene = parse_scene(text, path="fuzz.json", root=root)
    assert scene.to_dict() == doc
    assert parse_scene(canonical_json(scene.to_dict()), path="again.json", root=root) == scene


def _out_of_range(draw, field: str, doc: dict) -> tuple[tuple, Any]:
    """(path to a field of ``doc``, a finite value outside its physical range)."""
    big = st.floats(min_value=LENGTH_MAX, max_value=1e308, exclude_min=True)
    tiny = st.floats(min_value=0.0, max_value=LENGTH_MIN, exclude_min=True, exclude_max=True)
    i = draw(st.integers(0, len(doc["objects"]) - 1))
    if field == "room_size":
        return ("room", "size", draw(st.integers(0, 1))), draw(big | tiny)
    if field == "wall_height":
        return ("room", "wall_height"), draw(big | tiny)
    if field == "object_size":
        return ("objects", i, "size", draw(st.integers(0, 2))), draw(big | tiny)
    if field == "yaw":
        yaw = draw(st.floats(min_value=YAW_MAX, max_value=1e308, exclude_min=True))
        return ("objects", i, "yaw_deg"), yaw * draw(st.sampled_from([1, -1]))
    obj = doc["objects"][i]
    if field == "position_xy":
        axis = draw(st.integers(0, 1))
        # beyond the grown floor even for the object's centre
        lo = doc["room"]["size"][axis] / 2 + ROOM_MARGIN
        far = draw(st.floats(min_value=lo, max_value=1e308, exclude_min=True))
        return ("objects", i, "position", axis), far * draw(st.sampled_from([1, -1]))
    below = st.floats(min_value=-1e308, max_value=-ROOM_MARGIN, exclude_max=True)
    top = doc["room"]["wall_height"] + ROOM_MARGIN - obj["size"][2]
    above = st.floats(min_value=top, max_value=1e308, exclude_min=True)
    return ("objects", i, "position", 2), draw(below | above)


FIELDS = ["room_size", "wall_height", "object_size", "yaw", "position_xy", "position_z"]


@FUZZ
@given(field=st.sampled_from(FIELDS), data=st.data())
def test_out_of_range_values_raise_scene_error_naming_the_field(
    root: Path, field: str, data
) -> None:
    doc = scene_doc(n_objects=data.draw(st.integers(1, 4)))
    where, value = _out_of_range(data.draw, field, doc)
    _get(doc, where[:-1])[where[-1]] = value
    err = _parse(root, dumps(doc))
    assert isinstance(err, SceneError), f"accepted {field} = {value!r}"
    assert err.pointer == "/" + "/".join(map(str, where)), (err.pointer, err.what)
    assert "out of range" in err.what or "outside the room" in err.what
