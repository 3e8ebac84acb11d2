"""Scene file validation: each failure class gives SceneError with the right pointer."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from harness.core.errors import SceneError
from harness.core.hashing import canonical_json
from harness.scenes import Scene, load_scene, parse_scene, validate_scene
from harness.scenes.load import SCHEMA_PATH, pointer
from tests._scene_helpers import ASSETS, dumps, scene_doc, write_assets


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    write_assets(tmp_path)
    return tmp_path


def _err(root: Path, doc_or_bytes) -> SceneError:
    data = doc_or_bytes if isinstance(doc_or_bytes, bytes) else dumps(doc_or_bytes)
    with pytest.raises(SceneError) as info:
        parse_scene(data, path="s.json", root=root)
    return info.value


def test_valid_scene_loads_with_values(root: Path) -> None:
    scene = parse_scene(dumps(scene_doc()), path="s.json", root=root)
    assert isinstance(scene, Scene)
    assert scene.id == "gen-a__p01"
    assert scene.room.size == (4.0, 5.0)
    assert scene.objects[1].position == (-0.5, 0.25, 0.0)
    assert scene.objects[0].candidates[1].asset == ASSETS[1]
    assert scene.objects[1].candidates is None
    assert scene.used_assets == ("assets/bed/a.obj", "assets/chair/a.obj", "assets/table/a.obj")


def test_round_trip_through_canonical_json(root: Path) -> None:
    scene = parse_scene(dumps(scene_doc(n_objects=5)), path="s.json", root=root)
    again = parse_scene(canonical_json(scene.to_dict()), path="t.json", root=root)
    assert again == scene


def test_integers_are_accepted_as_numbers(root: Path) -> None:
    doc = scene_doc()
    doc["room"]["size"] = [4, 5]
    doc["objects"][0]["yaw_deg"] = 90
    scene = parse_scene(dumps(doc), path="s.json", root=root)
    assert scene.room.size == (4.0, 5.0) and isinstance(scene.room.size[0], float)


@pytest.mark.parametrize(
    ("mutate", "pointer_", "words"),
    [
        (lambda d: d.pop("room"), "/room", "missing required field 'room'"),
        (lambda d: d["objects"][1].pop("size"), "/objects/1/size", "missing required field"),
        (lambda d: d.update(colour="red"), "/colour", "unknown field 'colour'"),
        (lambda d: d["objects"][2].update(mass=3), "/objects/2/mass", "unknown field 'mass'"),
        (lambda d: d["room"].update(size="4x5"), "/room/size", "wrong type"),
        (lambda d: d["objects"][0].update(yaw_deg="90"), "/objects/0/yaw_deg", "expected a number"),
        (lambda d: d["objects"][0].update(yaw_deg=True), "/objects/0/yaw_deg", "got a boolean"),
        (lambda d: d.update(prompt=None), "/prompt", "got null"),
        (lambda d: d["objects"][2]["size"].__setitem__(1, 0), "/objects/2/size/1", "non-positive"),
        (
            lambda d: d["objects"][2]["size"].__setitem__(0, -1.5),
            "/objects/2/size/0",
            "non-positive",
        ),
        (lambda d: d["room"].update(wall_height=0), "/room/wall_height", "non-positive"),
        (lambda d: d["objects"][0]["position"].pop(), "/objects/0/position", "wrong length 2"),
        (lambda d: d.update(objects=[]), "/objects", "empty object list"),
        (lambda d: d["objects"][2].update(id="obj0"), "/objects/2/id", "duplicate object id"),
        (lambda d: d.update(schema="t3d-scene/9"), "/schema", "unsupported value"),
        (lambda d: d.update(id="has space"), "/id", "invalid string"),
        (lambda d: d.update(generator=""), "/generator", "invalid string"),
        (lambda d: d.update(id="abc\n"), "/id", "invalid id"),
        (lambda d: d["objects"][0].update(asset="/etc/passwd"), "/objects/0/asset", "absolute"),
        (lambda d: d["objects"][0].update(asset="C:/x.obj"), "/objects/0/asset", "absolute"),
        (lambda d: d["objects"][0].update(asset="../x.obj"), "/objects/0/asset", "leaves"),
        (lambda d: d["objects"][0].update(asset="assets/../../x"), "/objects/0/asset", "leaves"),
        (
            lambda d: d["objects"][0].update(asset="assets\\chair\\a.obj"),
            "/objects/0/asset",
            "backslash",
        ),
        (
            lambda d: d["objects"][0].update(asset="assets//chair/a.obj"),
            "/objects/0/asset",
            "normalised",
        ),
        (
            lambda d: d["objects"][0].update(asset="./assets/chair/a.obj"),
            "/objects/0/asset",
            "normalised",
        ),
        (
            lambda d: d["objects"][0].update(asset="assets/none.obj"),
            "/objects/0/asset",
            "missing asset",
        ),
        (lambda d: d["objects"][0].update(asset="assets"), "/objects/0/asset", "missing asset"),
        (
            lambda d: d["objects"][0]["candidates"][1].update(asset="assets/gone.obj"),
            "/objects/0/candidates/1/asset",
            "missing asset",
        ),
        (
            lambda d: d["objects"][0]["candidates"][0].update(retrieval_score=float("nan")),
            "/objects/0/candidates/0/retrieval_score",
            "non-finite number NaN",
        ),
        (lambda d: d["objects"][1].update(yaw_deg=float("inf")), "/objects/1/yaw_deg", "Infinity"),
        (lambda d: d["room"]["size"].__setitem__(0, float("-inf")), "/room/size/0", "-Infinity"),
    ],
)
def test_invalid_documents(root: Path, mutate, pointer_: str, words: str) -> None:
    doc = scene_doc()
    mutate(doc)
    err = _err(root, doc)
    assert err.pointer == pointer_
    assert words in err.what
    assert err.path == "s.json"
    assert str(err).startswith(f"s.json#{pointer_}: ")


def _set(path: tuple, value):
    def mutate(doc: dict) -> None:
        target = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return mutate


@pytest.mark.parametrize(
    ("path", "value", "pointer_", "words"),
    [
        # the reported cases: 1 km outside, 500 m below the floor, 1e-320 / 1e300 m, yaw 1e300
        (("objects", 0, "position", 0), 1000.0, "/objects/0/position/0", "outside the room"),
        (("objects", 1, "position", 2), -500.0, "/objects/1/position/2", "outside the room"),
        (
            ("objects", 2, "size", 1),
            1e-320,
            "/objects/2/size/1",
            "object size 1e-320 m out of range",
        ),
        (("objects", 2, "size", 2), 1e300, "/objects/2/size/2", "out of range"),
        (("objects", 0, "yaw_deg"), 1e300, "/objects/0/yaw_deg", "yaw 1e+300 degrees out of range"),
        (("objects", 0, "yaw_deg"), -360.5, "/objects/0/yaw_deg", "out of range"),
        (("room", "size", 1), 1e300, "/room/size/1", "room size"),
        (("room", "wall_height"), 0.0009, "/room/wall_height", "wall height"),
        # object 0: size 0.5 x 0.6 at yaw 0 in a 4 x 5 m room; 1 m margin -> |x| <= 3 - 0.25
        (("objects", 0, "position", 0), -2.7501, "/objects/0/position/0", "x = ±3.0001 m"),
        # object 1: 0.5 x 0.6 at yaw 30 -> y half extent (0.5 sin 30 + 0.6 cos 30) / 2 = 0.38481
        (("objects", 1, "position", 1), 3.5 - 0.3848, "/objects/1/position/1", "y = ±3.50001 m"),
        # object 2 is 1.1 m tall; walls 2.6 m + 1 m margin -> bottom z <= 2.5
        (("objects", 2, "position", 2), 2.5001, "/objects/2/position/2", "outside the room"),
        (("objects", 2, "position", 2), -1.0001, "/objects/2/position/2", "spans z -1.0001"),
    ],
)
def test_physically_implausible_values(root: Path, path, value, pointer_, words) -> None:
    doc = scene_doc()
    _set(path, value)(doc)
    err = _err(root, doc)
    assert (err.pointer, err.path) == (pointer_, "s.json")
    assert words in err.what, err.what
    assert err.hint


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("objects", 0, "position", 0), -2.75),  # footprint exactly on the grown floor edge
        (("objects", 2, "position", 2), 2.5),  # top exactly at wall height + margin
        (("objects", 2, "position", 2), -1.0),
        (("objects", 0, "yaw_deg"), -360.0),
        (("objects", 0, "yaw_deg"), 360),
        (("objects", 2, "size", 0), 0.001),
        (("room", "size", 0), 100),
    ],
)
def test_physical_limits_are_inclusive(root: Path, path, value) -> None:
    doc = scene_doc()
    _set(path, value)(doc)
    assert isinstance(parse_scene(dumps(doc), path="s.json", root=root), Scene)


@pytest.mark.parametrize(
    ("data", "words", "pointer_"),
    [
        (b"", "malformed JSON", ""),
        (b"{", "malformed JSON", ""),
        (b"\xef\xbb\xbf{}", "malformed JSON", ""),  # a BOM is not JSON
        (b'{"id": "caf\xe9"}', "not UTF-8", ""),
        (b"[]", "wrong type: expected an object", ""),
        (b"null", "wrong type", ""),
        (
            b'{"schema": "t3d-scene/1", "schema": "t3d-scene/1"}',
            "duplicate key 'schema'",
            "/schema",
        ),
        (b'{"room": {"size": [1e999, 1]}}', "non-finite", "/room/size/0"),
        (b'{"room": {"size": [NaN, 1]}}', "non-finite number NaN", "/room/size/0"),
        (b'{"room": {"wall_height": ' + b"9" * 400 + b"}}", "too large", "/room/wall_height"),
        (b'{"prompt": "\\ud800"}', "lone surrogate", "/prompt"),
        (b'{"a/b~": {"\\udfff": 1}}', "lone surrogate", "/a~1b~0"),
        (b"[" * 50_000 + b"]" * 50_000, "nested too deeply", ""),
    ],
)
def test_invalid_bytes(root: Path, data: bytes, words: str, pointer_: str) -> None:
    err = _err(root, data)
    assert words in err.what
    assert err.pointer == pointer_


def test_non_utf8_reports_offset(root: Path) -> None:
    data = dumps(scene_doc()).replace(b"bedroom", b"bed\xffroom")
    err = _err(root, data)
    assert "offset" in err.what and err.hint


def test_symlink_escaping_root_is_rejected(root: Path, tmp_path_factory) -> None:
    outside = tmp_path_factory.mktemp("outside")
    (outside / "evil.obj").write_text("v 0 0 0\n")
    os.symlink(outside, root / "assets" / "link")
    doc = scene_doc()
    doc["objects"][1]["asset"] = "assets/link/evil.obj"
    err = _err(root, doc)
    assert err.pointer == "/objects/1/asset" and "symlink" in err.what


def test_symlink_inside_root_is_allowed(root: Path) -> None:
    os.symlink(root / "assets" / "chair", root / "assets" / "seat")
    doc = scene_doc()
    doc["objects"][1]["asset"] = "assets/seat/a.obj"
    assert parse_scene(dumps(doc), path="s.json", root=root).objects[1].asset == "assets/seat/a.obj"


def test_load_scene_reads_file_and_reports_missing(root: Path) -> None:
    target = root / "scene.json"
    target.write_bytes(dumps(scene_doc()))
    assert load_scene(target, root).id == "gen-a__p01"
    with pytest.raises(SceneError, match="cannot read scene file") as info:
        load_scene(root / "nope.json", root)
    assert info.value.path.endswith("nope.json")


def test_root_must_be_a_directory(root: Path) -> None:
    with pytest.raises(SceneError, match="not a directory"):
        parse_scene(dumps(scene_doc()), path="s.json", root=root / "missing")


def test_non_bytes_input_is_a_scene_error(root: Path) -> None:
    with pytest.raises(SceneError, match="must be bytes"):
        parse_scene("{}", path="s.json", root=root)  # type: ignore[arg-type]


def test_validate_scene_checks_in_memory_scenes(root: Path) -> None:
    scene = Scene.from_dict(scene_doc())
    assert validate_scene(scene, root) == scene
    bad = Scene.from_dict({**scene_doc(), "room": {"size": [float("nan"), 1.0], "wall_height": 2}})
    with pytest.raises(SceneError) as info:
        validate_scene(bad, root)
    assert info.value.pointer == "/room/size/0"


def test_checked_assets_memo_is_filled(root: Path) -> None:
    memo: set[str] = set()
    parse_scene(dumps(scene_doc()), path="s.json", root=root, checked_assets=memo)
    assert memo == set(ASSETS)


def test_pointer_escaping() -> None:
    assert pointer(["a/b", "c~d", 3]) == "/a~1b/c~0d/3"
    assert pointer([]) == ""


def test_schema_file_is_draft_2020_12() -> None:
    schema = json.loads(SCHEMA_PATH.read_text())
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["properties"]["schema"] == {"const": "t3d-scene/1"}


def test_loading_valid_scenes_imports_neither_jsonschema_nor_numpy(tmp_path: Path) -> None:
    """Valid scenes take the compiled fast path; jsonschema is imported only to explain errors."""
    import subprocess
    import sys

    write_assets(tmp_path)
    (tmp_path / "s.json").write_bytes(dumps(scene_doc()))
    code = (
        "import sys; from pathlib import Path; from harness.scenes import load_scene;"
        f"load_scene(Path({str(tmp_path / 's.json')!r}), Path({str(tmp_path)!r}));"
        "print('jsonschema' in sys.modules, 'numpy' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
