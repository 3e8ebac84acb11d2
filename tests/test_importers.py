"""Importers: placement decomposition, sceneState and glTF/GLB round trips, typed failures.

Round trips start from a known scene-model layout, encode it the way the source format does
(column-major 4x4 for sceneState, y-up TRS nodes for glTF), import it, and compare.
"""

from __future__ import annotations

import base64
import contextlib
import json
import math
import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.errors import ImportError_, SceneError
from harness.scenes import SceneSet, build_manifest, load_scene, write_manifest
from harness.scenes.importers import import_gltf, import_scenestate, write_scene_file
from harness.scenes.importers.common import Y_UP_TO_Z_UP, decompose, sanitize_id, unique_ids
from harness.scenes.importers.gltf_io import dependencies, read_gltf
from tests._extras import need, needs
from tests._scenestate import (
    BED_BOX,
    TRUTH,
    Y_TO_Z,
    obj_text,
    rot_z,
    scale,
    transformed_corners,
    translate,
    write_scenestate,
)

# --------------------------------------------------------------------------- helpers


# local y-up -> local z-up turn (+90° about x), as a 4x4
Y_TO_Z[:3, :3] = Y_UP_TO_Z_UP


def box_corners(position, yaw_deg, size) -> np.ndarray:
    """World corners (8 x 3) of a scene-model object box."""
    hx, hy = size[0] / 2, size[1] / 2
    local = np.array(
        [[x, y, z] for x in (-hx, hx) for y in (-hy, hy) for z in (0.0, size[2])], dtype=float
    )
    m = translate(position) @ rot_z(yaw_deg)
    return local @ m[:3, :3].T + m[:3, 3]


def same_points(a: np.ndarray, b: np.ndarray, tol: float = 1e-6) -> bool:
    """Whether the point sets (N, 3) match one to one within ``tol`` per coordinate.

    (Rounding both to a ``tol`` grid is not enough: a coordinate on a half-step, such as
    1.984375 / 1e-5, rounds either way under a last-bit difference.)"""
    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.shape != b.shape:
        return False
    close = np.abs(a[:, None, :] - b[None, :, :]).max(axis=-1) <= tol
    used: set[int] = set()
    for row in close:
        free = [j for j in np.flatnonzero(row) if j not in used]
        if not free:
            return False
        used.add(int(free[0]))
    return True


def obj_bounds(path: Path) -> tuple[np.ndarray, np.ndarray]:
    pts = np.array(
        [
            [float(v) for v in line.split()[1:4]]
            for line in path.read_text().splitlines()
            if line.startswith("v ")
        ]
    )
    return pts.min(axis=0), pts.max(axis=0)


# --------------------------------------------------------------------------- decompose


def test_decompose_identity() -> None:
    p = decompose(
        np.eye(4), np.array([-0.5, -0.25, 0]), np.array([0.5, 0.25, 1.0]), path="x", pointer=""
    )
    assert p.position == (0.0, 0.0, 0.0) and p.yaw_deg == 0.0 and p.size == (1.0, 0.5, 1.0)
    assert p.is_identity and p.tag == "xyz"


def test_decompose_hand_computed() -> None:
    # local box x [0, 2], y [-1, 1], z [0.5, 1.5]; scale x2 on x; yaw 90; move to (2, 3, 0)
    m = translate([2.0, 3.0, 0.0]) @ rot_z(90) @ scale([2.0, 1.0, 1.0])
    p = decompose(
        m, np.array([0.0, -1.0, 0.5]), np.array([2.0, 1.0, 1.5]), unit=0.5, path="x", pointer=""
    )
    assert p.size == (2.0, 1.0, 0.5)  # (4, 2, 1) units x 0.5 m
    assert p.yaw_deg == 90.0
    # bottom centre local (1, 0, 0.5) -> scaled (2, 0, 0.5) -> rotated (0, 2, 0.5) -> (2, 5, 0.5)
    assert p.position == (1.0, 2.5, 0.25)


def test_decompose_y_up_asset() -> None:
    # asset is y-up: height along local y in [0, 2]; the transform turns local y to world z
    p = decompose(
        Y_TO_Z, np.array([-0.5, 0.0, -0.25]), np.array([0.5, 2.0, 0.25]), path="x", pointer=""
    )
    assert p.size[2] == 2.0
    assert p.tag == "zxy"  # new x = old z, new y = old x, new z = old y
    assert same_points(
        box_corners(p.position, p.yaw_deg, p.size),
        transformed_corners(Y_TO_Z, [-0.5, 0.0, -0.25], [0.5, 2.0, 0.25]),
    )


def test_decompose_upside_down_object_is_rebased() -> None:
    flip = np.diag([1.0, -1.0, -1.0, 1.0])  # 180° about x: local z points down
    m = translate([0, 0, 1.0]) @ flip
    p = decompose(m, np.array([-1, -1, 0.0]), np.array([1, 1, 1.0]), path="x", pointer="")
    assert p.position == (0.0, 0.0, 0.0) and p.size == (2.0, 2.0, 1.0)
    assert np.linalg.det(np.asarray(p.axes)) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("matrix", "words"),
    [
        (np.diag([1.0, 1.0, -1.0, 1.0]), "mirrors"),
        (np.array([[1, 0.5, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]]), "shears"),
        (np.diag([1.0, 0.0, 1.0, 1.0]), "zero scale"),
        (np.diag([1e200, 1.0, 1.0, 1.0]), "scale overflows"),
        (np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 1, 1.0]]), "projective"),
    ],
)
def test_decompose_rejects(matrix, words: str) -> None:
    with pytest.raises(ImportError_, match=words):
        decompose(matrix, np.zeros(3), np.ones(3), path="x", pointer="/t")


def test_decompose_keeps_tilt_and_snaps_noise() -> None:
    """A part turned 10° about its axle keeps the tilt (it was rejected before); 1e-7 rad of
    float noise is snapped upright."""
    c, s = math.cos(math.radians(10)), math.sin(math.radians(10))
    tilt = np.array([[1, 0, 0, 0], [0, c, -s, 0], [0, s, c, 0], [0, 0, 0, 1.0]])
    p = decompose(tilt, np.zeros(3), np.ones(3), path="x", pointer="")
    assert p.tilt is not None and p.yaw_deg == 0.0
    # quaternion of a 10° turn about x: (cos 5°, sin 5°, 0, 0)
    assert p.tilt == pytest.approx((math.cos(math.radians(5)), math.sin(math.radians(5)), 0, 0))
    c, s = math.cos(1e-7), math.sin(1e-7)
    nearly = np.array([[1, 0, 0, 0], [0, c, -s, 0], [0, s, c, 0], [0, 0, 0, 1.0]])
    q = decompose(nearly, np.zeros(3), np.ones(3), path="x", pointer="")
    assert q.tilt is None and q.size[2] == pytest.approx(1.0, abs=1e-6)


def test_decompose_flat_mesh_gets_the_smallest_size() -> None:
    """A ground plane (zero height) is valid: its flat axis becomes FLAT_SIZE (it was rejected)."""
    p = decompose(np.eye(4), np.array([-2.0, -1.0, 0.0]), np.array([2.0, 1.0, 0.0]), path="x", pointer="")
    assert p.size == (4.0, 2.0, 0.001) and p.position == (0.0, 0.0, 0.0)


def _model_corners(p) -> np.ndarray:
    from harness.scenes.model import SceneObject

    return SceneObject("o", "o", "o", p.position, p.yaw_deg, p.size, tilt=p.tilt).corners()


@settings(max_examples=150, deadline=None)
@given(
    quat=st.tuples(*[st.floats(-1, 1)] * 4).filter(lambda q: sum(v * v for v in q) > 0.05),
    sizes=st.tuples(*[st.floats(0.1, 5)] * 3),
    t=st.tuples(*[st.floats(-10, 10)] * 3),
    lo=st.tuples(*[st.floats(-2, 0)] * 3),
    ext=st.tuples(*[st.floats(0.05, 3)] * 3),
    rebase=st.booleans(),
)
def test_decompose_any_rotation_matches_transformed_box(quat, sizes, t, lo, ext, rebase) -> None:
    """Property: for any rotation and non-uniform scale, the scene model's (tilted) box has
    exactly the corners of the transformed mesh box."""
    from harness.scenes.model import quat_matrix

    m = np.eye(4)
    m[:3, :3] = quat_matrix(quat) @ np.diag(sizes)
    m[:3, 3] = t
    lo_a = np.array(lo)
    hi_a = lo_a + np.array(ext)
    p = decompose(m, lo_a, hi_a, rebase=rebase, path="x", pointer="")
    assert same_points(_model_corners(p), transformed_corners(m, lo_a, hi_a), 1e-5)


@settings(max_examples=150, deadline=None)
@given(
    yaw=st.floats(-360, 360),
    sx=st.floats(0.1, 5),
    sy=st.floats(0.1, 5),
    sz=st.floats(0.1, 5),
    t=st.tuples(*[st.floats(-10, 10)] * 3),
    lo=st.tuples(*[st.floats(-2, 0)] * 3),
    ext=st.tuples(*[st.floats(0.05, 3)] * 3),
    turn=st.sampled_from(["none", "y_up", "upside_down", "x_up"]),
)
def test_decompose_box_matches_transformed_box(yaw, sx, sy, sz, t, lo, ext, turn) -> None:
    """Property: the placement's box has exactly the corners of the transformed mesh box."""
    turns = {
        "none": np.eye(4),
        "y_up": Y_TO_Z,
        "upside_down": np.diag([1.0, -1.0, -1.0, 1.0]),
        "x_up": np.array([[0, 0, 1, 0], [0, 1, 0, 0], [-1, 0, 0, 0], [0, 0, 0, 1.0]]),
    }
    m = translate(t) @ rot_z(yaw) @ scale([sx, sy, sz]) @ turns[turn]
    lo_a = np.array(lo)
    hi_a = lo_a + np.array(ext)
    p = decompose(m, lo_a, hi_a, path="x", pointer="")
    assert same_points(
        box_corners(p.position, p.yaw_deg, p.size), transformed_corners(m, lo_a, hi_a), 1e-5
    )


def test_ids() -> None:
    assert sanitize_id("Chair #2 (left)", "obj0") == "Chair_2_left"
    assert sanitize_id("__", "obj7") == "obj7"
    assert sanitize_id(None, "obj1") == "obj1"
    assert unique_ids(["a", "a", "b", "a"]) == ["a", "a-2", "b", "a-3"]


# --------------------------------------------------------------------------- sceneState

# Truth in scene-model terms (room 4 x 6 m centred at the origin, floor z = 0).


def _check_truth(scene) -> None:
    assert scene.room.size == (4.0, 6.0) and scene.room.wall_height == 2.8
    assert [o.id for o in scene.objects] == ["bed", "lamp", "chair"]
    for obj, (_oid, _label, _model, pos, yaw, size, _y) in zip(scene.objects, TRUTH, strict=True):
        # compare boxes, not representations: (size, yaw) and (swapped size, yaw ± 90) are one box
        assert same_points(
            box_corners(obj.position, obj.yaw_deg, obj.size), box_corners(pos, yaw, size), 1e-6
        )


@pytest.mark.parametrize("up_y", [False, True])
def test_scenestate_round_trip(tmp_path: Path, up_y: bool) -> None:
    path, assets = write_scenestate(tmp_path, up_y=up_y)
    out = tmp_path / "set"
    scene = import_scenestate(
        path,
        asset_root=assets,
        out_root=out,
        generator="SceneEvalGen",
        prompt_id="p106",
        prompt="a bedroom",
    )
    _check_truth(scene)
    assert scene.id == "SceneEvalGen__p106" and scene.prompt_source == "sceneState"
    bed, lamp, chair = scene.objects
    assert bed.label == "bed01"  # no labels given: the asset id
    assert bed.asset == chair.asset == "assets/test/bed01.obj"
    # z-up OBJ assets are copied byte for byte, with their material and texture
    assert (out / bed.asset).read_bytes() == (assets / "test" / "bed01.obj").read_bytes()
    assert (out / "assets/test/box.mtl").is_file() and (out / "assets/test/wood.png").is_file()
    # the y-up lamp is re-based to z-up: its OBJ's height is now along z
    assert lamp.asset == "assets/objaverse/lamp02/lamp02.zxy.obj"  # a folder per asset
    lo, hi = obj_bounds(out / lamp.asset)
    assert hi[2] - lo[2] == pytest.approx(1.0) and lo[2] == pytest.approx(0.0)
    assert "usemtl wood" in (out / lamp.asset).read_text()


def test_scenestate_output_is_a_valid_scene_set(tmp_path: Path) -> None:
    path, assets = write_scenestate(tmp_path)
    out = tmp_path / "set"
    scene = import_scenestate(
        path,
        asset_root=assets,
        out_root=out,
        generator="g",
        prompt_id="p1",
        prompt="a bedroom",
        labels={"test.bed01": "bed", "objaverse.lamp02": "floor lamp"},
    )
    assert [o.label for o in scene.objects] == ["bed", "floor lamp", "bed"]
    scene_file = write_scene_file(scene, out)
    assert scene_file == out / "scenes/g/p1.json"
    assert load_scene(scene_file, out) == scene
    write_manifest(out, build_manifest(out, [scene_file]))
    loaded = SceneSet.load(out)
    assert loaded.scenes == (scene,)
    assert SceneSet.from_scenes(out, [scene]).identity(scene.id) == loaded.identity(scene.id)


def test_scenestate_metadata_from_file_and_override(tmp_path: Path) -> None:
    meta = {
        "generator": "Holodeck",
        "prompt_id": "p7",
        "prompt": "a study",
        "prompt_source": "SceneEval-100",
    }
    path, assets = write_scenestate(tmp_path, metadata=meta)
    scene = import_scenestate(path, asset_root=assets, out_root=tmp_path / "o")
    assert (scene.generator, scene.prompt_id, scene.prompt, scene.prompt_source) == (
        "Holodeck",
        "p7",
        "a study",
        "SceneEval-100",
    )
    scene = import_scenestate(
        path, asset_root=assets, out_root=tmp_path / "o", prompt_id="p8", scene_id="x1"
    )
    assert (scene.prompt_id, scene.id) == ("p8", "x1")


def test_scenestate_real_template_transform(tmp_path: Path) -> None:
    """SceneEval's template object 0: a y-up asset turned upright, 2.98/2.7 in the room."""
    data = [
        2.22e-16,
        -1.0,
        0.0,
        0.0,
        0.0,
        0.0,
        1.0,
        0.0,
        -1.0,
        -2.22e-16,
        0.0,
        0.0,
        2.98,
        2.7,
        0.3,
        1.0,
    ]
    assets = tmp_path / "a"
    (assets / "objaverse").mkdir(parents=True)
    (assets / "objaverse" / "ca19.obj").write_text(obj_text((-0.4, -0.3, -0.2), (0.4, 0.3, 0.2)))
    doc = {
        "format": "sceneState",
        "scene": {
            "version": "scene@1.0.2",
            "object": [{"index": 0, "modelId": "objaverse.ca19", "transform": {"data": data}}],
        },
    }
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    scene = import_scenestate(
        path, asset_root=assets, out_root=tmp_path / "o", generator="g", prompt_id="p", prompt="x"
    )
    (obj,) = scene.objects
    assert obj.size == pytest.approx((0.4, 0.8, 0.6))  # local z, local x, local y (up)
    assert obj.yaw_deg == pytest.approx(180.0) or obj.yaw_deg == pytest.approx(-180.0)
    assert obj.id == "obj0" and obj.label == "ca19"
    # no arch: the room is the footprint, floor at the object's bottom
    assert obj.position == pytest.approx((0.0, 0.0, 0.0))
    assert scene.room.size == pytest.approx((0.4, 0.8)) and scene.room.wall_height == 2.5


def _minimal(tmp_path: Path, **scene_overrides) -> Path:
    assets = tmp_path / "a" / "test"
    assets.mkdir(parents=True, exist_ok=True)
    (assets / "bed01.obj").write_text(obj_text(*BED_BOX))
    scene = {
        "version": "scene@1.0.2",
        "object": [
            {"modelId": "test.bed01", "transform": {"data": np.eye(4).reshape(-1).tolist()}}
        ],
    }
    scene.update(scene_overrides)
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"format": "sceneState", "scene": scene}))
    return path


@pytest.mark.parametrize(
    ("overrides", "words", "pointer"),
    [
        ({"version": "scene@2.0.0"}, "unsupported scene version", "/scene/version"),
        ({"up": [1, 0, 0]}, "unsupported up axis", "/scene/up"),
        ({"unit": 0}, "positive number", "/scene/unit"),
        ({"object": []}, "non-empty array", "/scene/object"),
        (
            {"object": [{"modelId": "noseparator", "transform": {"data": [0] * 16}}]},
            "invalid modelId",
            "/scene/object/0/modelId",
        ),
        (
            {"object": [{"modelId": "test.../x", "transform": {"data": [0] * 16}}]},
            "invalid modelId",
            "/scene/object/0/modelId",
        ),
        (
            {
                "object": [
                    {
                        "modelId": "test.missing",
                        "transform": {"data": np.eye(4).reshape(-1).tolist()},
                    }
                ]
            },
            "not found",
            "/scene/object/0/modelId",
        ),
        (
            {"object": [{"modelId": "test.bed01", "transform": {"data": [1] * 15}}]},
            "16 numbers",
            "/scene/object/0/transform/data",
        ),
        (
            {"object": [{"modelId": "test.bed01", "transform": {"data": ["1"] * 16}}]},
            "finite number",
            "/scene/object/0/transform/data/0",
        ),
        (
            {
                "object": [
                    {
                        "modelId": "test.bed01",
                        "transform": {"data": np.diag([1, 1, -1, 1.0]).reshape(-1).tolist()},
                    }
                ]
            },
            "mirrors",
            "/scene/object/0/transform",
        ),
        (
            {"arch": {"elements": [{"type": "Floor", "points": [[0, 0]]}]}},
            "[x, y, z]",
            "/scene/arch/elements/0/points/0",
        ),
    ],
)
def test_scenestate_errors(tmp_path: Path, overrides, words: str, pointer: str) -> None:
    path = _minimal(tmp_path, **overrides)
    with pytest.raises(ImportError_) as info:
        import_scenestate(
            path,
            asset_root=tmp_path / "a",
            out_root=tmp_path / "o",
            generator="g",
            prompt_id="p",
            prompt="x",
        )
    assert words in info.value.what
    assert info.value.pointer == pointer


def test_scenestate_object_far_outside_its_floor_is_rejected(tmp_path: Path) -> None:
    """An imported scene goes through the loader's physical limits: a bed 1 km east of a
    4 x 6 m floor is a SceneError naming the object's x position, not a scene."""
    far = (translate([1000.0, 0.0, 0.0])).T.reshape(-1).tolist()
    floor = {"type": "Floor", "points": [[-2, -3, 0], [2, -3, 0], [2, 3, 0], [-2, 3, 0]]}
    path = _minimal(
        tmp_path,
        object=[{"modelId": "test.bed01", "transform": {"data": far}}],
        arch={"elements": [floor]},
    )
    with pytest.raises(SceneError) as info:
        import_scenestate(
            path,
            asset_root=tmp_path / "a",
            out_root=tmp_path / "o",
            generator="g",
            prompt_id="p",
            prompt="x",
        )
    assert info.value.pointer == "/objects/0/position/0"
    assert "outside the room" in info.value.what and info.value.path == str(path)


def test_scenestate_file_level_errors(tmp_path: Path) -> None:
    path = _minimal(tmp_path)
    kwargs = {"asset_root": tmp_path / "a", "out_root": tmp_path / "o"}
    with pytest.raises(ImportError_, match="missing scene metadata: generator, prompt_id, prompt"):
        import_scenestate(path, **kwargs)
    path.write_text('{"format": "other"}')
    with pytest.raises(ImportError_, match="not a sceneState file"):
        import_scenestate(path, generator="g", prompt_id="p", prompt="x", **kwargs)
    path.write_text('{"format": "sceneState", "scene": {"unit": NaN}}')
    with pytest.raises(ImportError_, match="malformed"):
        import_scenestate(path, generator="g", prompt_id="p", prompt="x", **kwargs)
    with pytest.raises(SceneError, match="invalid string"):  # bad generator name reaches validation
        import_scenestate(
            _minimal(tmp_path), generator="bad name", prompt_id="p", prompt="x", **kwargs
        )


# --------------------------------------------------------------------------- glTF / GLB


def _glb(doc: dict, binary: bytes) -> bytes:
    js = json.dumps(doc).encode()
    js += b" " * (-len(js) % 4)
    binary += b"\0" * (-len(binary) % 4)
    chunks = (
        struct.pack("<II", len(js), 0x4E4F534A)
        + js
        + struct.pack("<II", len(binary), 0x004E4942)
        + binary
    )
    return struct.pack("<III", 0x46546C67, 2, 12 + len(chunks)) + chunks


def _box_mesh(lo, hi) -> tuple[np.ndarray, np.ndarray]:
    verts = np.array(
        [[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])],
        dtype=np.float32,
    )
    faces = np.array(
        [
            (0, 1, 3),
            (0, 3, 2),
            (4, 6, 7),
            (4, 7, 5),
            (0, 4, 5),
            (0, 5, 1),
            (2, 3, 7),
            (2, 7, 6),
            (0, 2, 6),
            (0, 6, 4),
            (1, 5, 7),
            (1, 7, 3),
        ],
        dtype=np.uint16,
    )
    return verts, faces


def _quat_y(deg: float) -> list[float]:
    """glTF quaternion [x, y, z, w] for a rotation about +y (the glTF up axis)."""
    h = math.radians(deg) / 2
    return [0.0, math.sin(h), 0.0, math.cos(h)]


def build_gltf_doc(meshes: list[tuple[str, tuple, tuple]], nodes: list[dict], extras=None):
    """glTF JSON + one binary buffer; meshes are (name, lo, hi) boxes in glTF (y-up) units."""
    binary = b""
    doc = {
        "asset": {"version": "2.0"},
        "buffers": [],
        "bufferViews": [],
        "accessors": [],
        "meshes": [],
        "nodes": nodes,
    }
    if extras is not None:
        doc["asset"]["extras"] = extras
    for name, lo, hi in meshes:
        verts, faces = _box_mesh(lo, hi)
        for arr, target, comp, kind in (
            (verts, 34962, 5126, "VEC3"),
            (faces.reshape(-1), 34963, 5123, "SCALAR"),
        ):
            binary += b"\0" * (-len(binary) % 4)
            doc["bufferViews"].append(
                {"buffer": 0, "byteOffset": len(binary), "byteLength": arr.nbytes, "target": target}
            )
            acc = {
                "bufferView": len(doc["bufferViews"]) - 1,
                "componentType": comp,
                "count": len(arr),
                "type": kind,
            }
            if kind == "VEC3":
                acc["min"], acc["max"] = verts.min(axis=0).tolist(), verts.max(axis=0).tolist()
            doc["accessors"].append(acc)
            binary += arr.tobytes()
        n = len(doc["accessors"])
        doc["meshes"].append(
            {"name": name, "primitives": [{"attributes": {"POSITION": n - 2}, "indices": n - 1}]}
        )
    doc["buffers"].append({"byteLength": len(binary)})
    doc["scenes"] = [{"nodes": [i for i, nd in enumerate(nodes) if not nd.get("_child")]}]
    for nd in nodes:
        nd.pop("_child", None)
    return doc, binary


def _gltf_fixture(extras=None):
    meshes = [
        ("chair_mesh", (-0.25, 0.0, -0.25), (0.25, 1.0, 0.25)),  # y-up: height 1 along +y
        ("table_mesh", (-0.5, 0.0, -0.4), (0.5, 0.75, 0.4)),
        ("floor_mesh", (-2.0, -0.05, -3.0), (2.0, 0.0, 3.0)),
        ("wall_mesh", (-2.0, 0.0, -0.05), (2.0, 2.7, 0.05)),
    ]
    # glTF world (y-up) -> z-up: (x, y, z) -> (x, -z, y); offset the room by (+1, +0.5) in z-up
    # i.e. glTF translation (1, 0, -0.5)
    nodes = [
        {"name": "Chair.001", "mesh": 0, "translation": [1.5, 0.0, -1.5], "rotation": _quat_y(90)},
        {"name": "Chair.002", "mesh": 0, "translation": [0.5, 0.0, -1.5], "scale": [1.0, 1.2, 1.0]},
        {"name": "group", "translation": [1.0, 0.0, -0.5], "children": [3]},
        {
            "name": "table",
            "mesh": 1,
            "translation": [0.0, 0.0, 1.0],
            "extras": {"label": "dining table"},
            "_child": True,
        },
        {"name": "Floor", "mesh": 2, "translation": [1.0, 0.0, -0.5]},
        {"name": "Wall_north", "mesh": 3, "translation": [1.0, 0.0, -3.5]},
    ]
    return build_gltf_doc(meshes, nodes, extras)


def _check_gltf_scene(scene) -> None:
    assert scene.room.size == pytest.approx((4.0, 6.0)) and scene.room.wall_height == pytest.approx(
        2.7
    )
    by_id = {o.id: o for o in scene.objects}
    assert sorted(by_id) == ["Chair.001", "Chair.002", "table"]
    assert by_id["Chair.001"].label == "Chair" and by_id["table"].label == "dining table"
    # chair 1: glTF (1.5, 0, -1.5) -> z-up (1.5, 1.5, 0) -> minus room centre (1, 0.5) -> (0.5, 1)
    c1 = by_id["Chair.001"]
    assert c1.position == pytest.approx((0.5, 1.0, 0.0))
    assert c1.size[2] == pytest.approx(1.0)
    assert same_points(
        box_corners(c1.position, c1.yaw_deg, c1.size),
        box_corners((0.5, 1.0, 0.0), 90.0, (0.5, 0.5, 1.0)),
    )
    c2 = by_id["Chair.002"]
    assert c2.position == pytest.approx((-0.5, 1.0, 0.0)) and c2.size[2] == pytest.approx(1.2)
    # table: parent (1, 0, -0.5) + child (0, 0, 1) = glTF (1, 0, 0.5)
    # -> z-up (1, -0.5, 0) -> minus room centre -> (0, -1, 0)
    table = by_id["table"]
    assert table.position == pytest.approx((0.0, -1.0, 0.0))
    assert same_points(
        box_corners(table.position, table.yaw_deg, table.size),
        box_corners((0, -1, 0), 0.0, (1.0, 0.8, 0.75)),
    )


def test_glb_round_trip(tmp_path: Path) -> None:
    need("bpy")  # Blender reads the glTF
    doc, binary = _gltf_fixture()
    glb = tmp_path / "room.glb"
    glb.write_bytes(_glb(doc, binary))
    out = tmp_path / "set"
    scene = import_gltf(
        glb, out_root=out, generator="gltf-gen", prompt_id="p3", prompt="a dining room"
    )
    _check_gltf_scene(scene)
    assert scene.prompt_source == "glTF" and scene.kind == "room"
    assert scene.schema == "t3d-scene/2"
    # each object's subtree is its own GLB, exported by Blender with the node at the origin
    assets = sorted(o.asset for o in scene.objects)
    assert assets == ["assets/room/Chair-2.glb", "assets/room/Chair.glb", "assets/room/table.glb"]
    assert all((out / a).read_bytes()[:4] == b"glTF" for a in assets)
    scene_file = write_scene_file(scene, out)
    write_manifest(out, build_manifest(out, [scene_file]))
    assert SceneSet.load(out).scenes == (scene,)


def test_gltf_json_with_data_uri_and_metadata(tmp_path: Path) -> None:
    need("bpy")  # Blender reads the glTF
    doc, binary = _gltf_fixture(
        extras={"generator": "LayoutGPT", "prompt_id": "p9", "prompt": "a den"}
    )
    doc["buffers"][0]["uri"] = (
        "data:application/octet-stream;base64," + base64.b64encode(binary).decode()
    )
    path = tmp_path / "room.gltf"
    path.write_text(json.dumps(doc))
    scene = import_gltf(path, out_root=tmp_path / "set", asset_dir="den")
    _check_gltf_scene(scene)
    assert (scene.generator, scene.prompt_id, scene.prompt) == ("LayoutGPT", "p9", "a den")
    assert all(o.asset.startswith("assets/den/") for o in scene.objects)


def test_gltf_external_buffer_must_stay_in_folder(tmp_path: Path) -> None:
    doc, binary = _gltf_fixture()
    (tmp_path / "room.bin").write_bytes(binary)
    path = tmp_path / "room.gltf"
    doc["buffers"][0]["uri"] = "../escape.bin"  # refused before Blender reads it
    path.write_text(json.dumps(doc))
    with pytest.raises(ImportError_, match="leaves the glTF folder"):
        import_gltf(path, out_root=tmp_path / "set", generator="g", prompt_id="p", prompt="x")
    need("bpy")  # Blender reads the glTF
    doc["buffers"][0]["uri"] = "room.bin"
    path.write_text(json.dumps(doc))
    _check_gltf_scene(
        import_gltf(path, out_root=tmp_path / "set", generator="g", prompt_id="p", prompt="x")
    )


def test_gltf_without_architecture_is_one_object(tmp_path: Path) -> None:
    """A file without floor/wall nodes is a generated object: one object, the whole file."""
    need("bpy")  # Blender reads the glTF
    doc, binary = build_gltf_doc(
        [("LOD3spShape", (-0.5, 0.0, -0.5), (0.5, 3.0, 0.5))],
        [{"name": "tall", "mesh": 0, "translation": [5, 1, 5]}],
    )
    glb = tmp_path / "x.glb"
    glb.write_bytes(_glb(doc, binary))
    scene = import_gltf(glb, out_root=tmp_path / "o", generator="g", prompt_id="p", prompt="a tower")
    (obj,) = scene.objects
    assert scene.kind == "object" and obj.label == "a tower"  # the prompt, not the mesh name
    assert obj.position == pytest.approx((0.0, 0.0, 0.0)) and obj.size == pytest.approx((1, 1, 3))
    assert (tmp_path / "o" / obj.asset).read_bytes() == glb.read_bytes()  # kept byte for byte
    # the ground is the footprint grown by half per side; no walls, height = the object's
    assert scene.room.size == pytest.approx((2.0, 2.0)) and scene.room.wall_height == pytest.approx(3.0)
    room = import_gltf(
        glb, out_root=tmp_path / "r", kind="room", generator="g", prompt_id="p", prompt="x"
    )
    assert room.kind == "room" and room.objects[0].label == "tall"


@pytest.mark.parametrize(
    ("mutate", "words"),
    [
        (lambda raw: raw[:10], "truncated GLB header"),
        (lambda raw: raw[:-4], "length field"),
        (lambda raw: raw[:4] + struct.pack("<I", 1) + raw[8:], "container version 1"),
        (lambda raw: raw[:12] + struct.pack("<I", 10**6) + raw[16:], "runs past the end"),
    ],
)
def test_glb_container_errors(tmp_path: Path, mutate, words: str) -> None:
    doc, binary = _gltf_fixture()
    glb = tmp_path / "bad.glb"
    glb.write_bytes(mutate(_glb(doc, binary)))
    with pytest.raises(ImportError_, match=words):
        import_gltf(glb, out_root=tmp_path / "o", generator="g", prompt_id="p", prompt="x")


@pytest.mark.parametrize(
    ("mutate", "words", "pointer"),
    [
        (lambda d: d["asset"].update(version="1.0"), "unsupported glTF version", "/asset/version"),
        (
            lambda d: d.update(
                extensionsUsed=["EXT_meshopt_compression"],
                extensionsRequired=["EXT_meshopt_compression"],
            ),
            "requires the glTF extension EXT_meshopt_compression",
            "/extensionsRequired/0",
        ),
        pytest.param(  # Blender reads the file to find the mirrored node
            lambda d: d["nodes"][0].update(scale=[1, 1, -1]), "mirrors", "<node Chair.001>",
            marks=needs("bpy"),
        ),
        (  # refused before Blender reads it (harness.scenes.gltf_limits)
            lambda d: d["accessors"][0].update(count=10**6),
            "accessors[0].count 1000000 × 12 bytes exceeds bufferViews[0].byteLength",
            "/accessors/0/count",
        ),
        pytest.param(  # Blender's own error still comes back as one line
            lambda d: d["meshes"][0]["primitives"][0].update(mode=99),
            "Blender's glTF importer failed",
            "",
            marks=needs("bpy"),
        ),
    ],
)
def test_gltf_content_errors(tmp_path: Path, mutate, words: str, pointer: str) -> None:
    doc, binary = _gltf_fixture()
    mutate(doc)
    glb = tmp_path / "bad.glb"
    glb.write_bytes(_glb(doc, binary))
    with pytest.raises(ImportError_) as info:
        import_gltf(glb, out_root=tmp_path / "o", generator="g", prompt_id="p", prompt="x")
    assert words in info.value.what
    assert info.value.pointer == pointer
    assert "\n" not in info.value.what  # one line, not Blender's traceback


def test_required_extension_error_says_what_to_do(tmp_path: Path) -> None:
    doc, binary = _gltf_fixture()
    doc["extensionsRequired"] = doc["extensionsUsed"] = ["EXT_meshopt_compression"]
    glb = tmp_path / "m.glb"
    glb.write_bytes(_glb(doc, binary))
    with pytest.raises(ImportError_) as info:
        import_gltf(glb, out_root=tmp_path / "o", generator="g", prompt_id="p", prompt="x")
    assert "decompress meshopt first" in (info.value.hint or "")
    doc["extensionsRequired"] = doc["extensionsUsed"] = ["KHR_draco_mesh_compression"]
    glb.write_bytes(_glb(doc, binary))
    assert read_gltf(glb).doc["extensionsRequired"] == ["KHR_draco_mesh_compression"]


def test_scenestate_glb_asset(tmp_path: Path) -> None:
    """sceneState assets may be GLBs (objaverse): measured by Blender, kept as GLB."""
    need("bpy")  # Blender reads the glTF
    doc, binary = build_gltf_doc(
        [("m", (-0.2, 0.0, -0.3), (0.2, 0.9, 0.3))], [{"name": "n", "mesh": 0}]
    )
    src = tmp_path / "a" / "objaverse" / "abc"
    src.mkdir(parents=True)
    (src / "abc.glb").write_bytes(_glb(doc, binary))
    ss = {
        "format": "sceneState",
        "scene": {
            "object": [
                {"modelId": "objaverse.abc", "transform": {"data": Y_TO_Z.T.reshape(-1).tolist()}}
            ]
        },
    }
    path = tmp_path / "s.json"
    path.write_text(json.dumps(ss))
    scene = import_scenestate(
        path,
        asset_root=tmp_path / "a",
        out_root=tmp_path / "o",
        generator="g",
        prompt_id="p",
        prompt="x",
    )
    (obj,) = scene.objects
    # kept byte for byte; the transform's y-to-z turn cancels Blender's own y-up conversion
    assert obj.asset == "assets/objaverse/abc/abc.glb" and obj.tilt is None
    assert (tmp_path / "o" / obj.asset).read_bytes() == (src / "abc.glb").read_bytes()
    assert obj.size == pytest.approx((0.4, 0.6, 0.9))


# --------------------------------------------------------------------------- CLI


def test_cli_import_scene_then_validate(tmp_path: Path, capsys) -> None:
    need("bpy")  # Blender reads the glTF
    from harness.cli import main

    out = tmp_path / "set"
    doc, binary = _gltf_fixture()
    glb = tmp_path / "room.glb"
    glb.write_bytes(_glb(doc, binary))
    argv = ["import-scene", str(glb), "--out", str(out), "--generator", "gen-a"]
    assert main([*argv, "--prompt-id", "p1", "--prompt", "a dining room"]) == 0
    assert capsys.readouterr().out.strip() == str(out / "scenes/gen-a/p1.json")
    path, assets = write_scenestate(tmp_path)
    argv = ["import-scene", str(path), "--out", str(out), "--asset-root", str(assets)]
    assert (
        main([*argv, "--generator", "gen-b", "--prompt-id", "p1", "--prompt", "a dining room"]) == 0
    )
    capsys.readouterr()
    assert main(["validate-scenes", str(out)]) == 0
    assert "2 scenes" in capsys.readouterr().out
    assert [s.generator for s in SceneSet.load(out)] == ["gen-a", "gen-b"]


def test_cli_import_scene_errors(tmp_path: Path, capsys) -> None:
    from harness.cli import main

    path, _ = write_scenestate(tmp_path)
    assert main(["import-scene", str(path), "--out", str(tmp_path / "o")]) == 2
    assert "needs --asset-root" in capsys.readouterr().err
    argv = ["import-scene", str(path), "--out", str(tmp_path / "o"), "--asset-root", str(tmp_path)]
    assert main(argv) == 2
    assert "missing scene metadata" in capsys.readouterr().err


def test_import_scene_set_for_audit_scenes_option(tmp_path: Path, monkeypatch) -> None:
    """``--audit-scenes FILE`` path: harness.scenes.scene_source calls importers.import_scene_set(path)."""
    need("bpy")  # Blender reads the glTF
    from harness.scenes.importers import import_scene_set

    monkeypatch.setenv("T3D_AUDIT_CACHE_DIR", str(tmp_path / "cache"))
    doc, binary = _gltf_fixture(extras={"generator": "g", "prompt_id": "p1", "prompt": "a room"})
    glb = tmp_path / "room.glb"
    glb.write_bytes(_glb(doc, binary))
    first = import_scene_set(glb)
    assert first.root.parent == (tmp_path / "cache" / "imports").resolve()
    assert [s.id for s in first] == ["g__p1"]
    again = import_scene_set(glb)  # same file -> same folder, same identity
    assert again.root == first.root and again.identity("g__p1") == first.identity("g__p1")
    path, assets = write_scenestate(
        tmp_path, metadata={"generator": "h", "prompt_id": "p2", "prompt": "x"}
    )
    ss = import_scene_set(path, asset_root=assets, out_root=tmp_path / "ss")
    assert (
        ss.generators == ("h",)
        and ss.path_of("h__p2") == (tmp_path / "ss/scenes/h/p2.json").resolve()
    )
    with pytest.raises(ImportError_, match="not found"):
        import_scene_set(tmp_path / "missing.glb")


# --------------------------------------------------------------------------- fuzzing

_FUZZ = settings(max_examples=120, deadline=None)
_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 10**6) | st.floats() | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


def _leaves(doc, prefix=()):
    items = doc.items() if isinstance(doc, dict) else enumerate(doc)
    for k, v in items:
        yield (*prefix, k)
        if isinstance(v, dict | list):
            yield from _leaves(v, (*prefix, k))


def _mutate(doc, data) -> None:
    paths = list(_leaves(doc))
    path = data.draw(st.sampled_from(paths))
    parent = doc
    for p in path[:-1]:
        parent = parent[p]
    if data.draw(st.booleans()):
        parent[path[-1]] = data.draw(_json_values)
    else:
        del parent[path[-1]]


def _expect_typed(fn) -> None:
    """Run ``fn``; it may succeed or raise SceneError (ImportError_ is one), nothing else."""
    with contextlib.suppress(SceneError):
        fn()


@_FUZZ
@given(data=st.data())
def test_fuzz_gltf_json_mutations(tmp_path_factory, data) -> None:
    doc, binary = _gltf_fixture()
    _mutate(doc, data)
    tmp = tmp_path_factory.mktemp("g")
    glb = tmp / "x.glb"
    glb.write_bytes(_glb(doc, binary))
    _expect_typed(lambda: dependencies(read_gltf(glb)))


@_FUZZ
@given(
    edits=st.lists(st.tuples(st.integers(0, 10**6), st.integers(1, 255)), min_size=1, max_size=4)
)
def test_fuzz_glb_byte_edits(tmp_path_factory, edits) -> None:
    doc, binary = _gltf_fixture()
    raw = bytearray(_glb(doc, binary))
    for pos, xor in edits:
        raw[pos % len(raw)] ^= xor
    tmp = tmp_path_factory.mktemp("b")
    glb = tmp / "x.glb"
    glb.write_bytes(bytes(raw))
    _expect_typed(lambda: dependencies(read_gltf(glb)))


@_FUZZ
@given(data=st.data())
def test_fuzz_scenestate_mutations(tmp_path_factory, data) -> None:
    tmp = tmp_path_factory.mktemp("s")
    path, assets = write_scenestate(tmp)
    doc = json.loads(path.read_text())
    _mutate(doc, data)
    path.write_text(json.dumps(doc))
    _expect_typed(
        lambda: import_scenestate(
            path, asset_root=assets, out_root=tmp / "o", generator="g", prompt_id="p", prompt="x"
        )
    )


def test_scenestate_unit_scales_world_and_arch(tmp_path: Path) -> None:
    """A world stored in centimetres (unit 0.01) imports to the same metric scene."""
    path, assets = write_scenestate(tmp_path)
    doc = json.loads(path.read_text())
    spec = doc["scene"]
    spec["unit"] = 0.01
    for obj in spec["object"]:
        data = obj["transform"]["data"]
        obj["transform"]["data"] = [v if k % 4 == 3 else v * 100 for k, v in enumerate(data)]
    for element in spec["arch"]["elements"]:
        element["points"] = [[v * 100 for v in p] for p in element["points"]]
        if "height" in element:
            element["height"] *= 100
    path.write_text(json.dumps(doc))
    scene = import_scenestate(
        path, asset_root=assets, out_root=tmp_path / "o", generator="g", prompt_id="p", prompt="x"
    )
    _check_truth(scene)
