"""Scene schema 2: object scenes and tilted objects (model, loader, layout, framing, probes)."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from harness.core.errors import SceneError
from harness.render import framing
from harness.scenes import footprints as geometry
from harness.scenes.load import load_scene, parse_scene
from harness.scenes.model import SceneObject
from tests._scene_helpers import scene_doc, write_assets

S = math.sqrt(0.5)


def _v2(root: Path, **changes) -> dict:
    doc = scene_doc()
    doc.update({"schema": "t3d-scene/2", "kind": "room", **changes})
    return doc


def _root(tmp_path: Path) -> Path:
    write_assets(tmp_path)
    return tmp_path


def test_v2_round_trip_and_v1_unchanged(tmp_path: Path) -> None:
    root = _root(tmp_path)
    doc = _v2(root)
    doc["objects"][0]["tilt"] = [S, S, 0.0, 0.0]
    (root / "s.json").write_text(json.dumps(doc))
    scene = load_scene(root / "s.json", root)
    assert scene.objects[0].tilt == (S, S, 0.0, 0.0) and scene.to_dict() == doc
    v1 = scene_doc()
    assert parse_scene(json.dumps(v1).encode(), path="v1", root=root).to_dict() == v1


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda d: d.update(kind="hall"), "invalid string 'hall'"),
        (lambda d: d.update(kind="room\n"), "invalid scene kind"),
        (lambda d: d["objects"][0].update(tilt=[0, 0, 0, 0]), "tilt quaternion is zero"),
        (lambda d: d.pop("kind"), "missing required field 'kind'"),
        (lambda d: d.update(schema="t3d-scene/1"), "unknown field 'kind'"),
    ],
)
def test_v2_errors(tmp_path: Path, change, words: str) -> None:
    doc = _v2(_root(tmp_path))
    change(doc)
    with pytest.raises(SceneError, match=words):
        parse_scene(json.dumps(doc).encode(), path="x", root=tmp_path)


def test_layout_box_of_a_tilted_object() -> None:
    """A 2 x 0.1 x 1 m picture lying flat (tilted 90° about x) has a 2 x 1 m footprint and is
    0.1 m high; its untilted twin has the 2 x 0.1 m footprint, bit for bit as in schema 1."""
    upright = SceneObject("p", "picture", "a.obj", (1.0, 2.0, 0.0), 30.0, (2.0, 0.1, 1.0))
    assert upright.layout() == (upright.position, upright.size)
    lying = replace(upright, tilt=(S, -S, 0.0, 0.0))
    pos, size = lying.layout()
    assert size == pytest.approx((2.0, 1.0, 0.1))
    corners = lying.corners()
    assert corners[:, 2].min() == pytest.approx(-0.05) and corners[:, 2].max() == pytest.approx(0.05)
    assert pos[2] == pytest.approx(-0.05)
    # footprints, overlap and containment use the layout box
    foot = geometry.object_footprint(lying)
    xs = [p[0] for p in foot]
    assert max(xs) - min(xs) == pytest.approx(2 * math.cos(math.radians(30)) + math.sin(math.radians(30)))


def test_object_scene_frames_the_object_only(tmp_path: Path) -> None:
    doc = _v2(_root(tmp_path), kind="object", ground=True)
    scene = parse_scene(json.dumps(doc).encode(), path="x", root=tmp_path)
    box = framing.scene_box(scene)
    objs = [o.corners() for o in scene.objects]
    assert box.lo[2] == pytest.approx(min(c[:, 2].min() for c in objs))
    room = framing.scene_box(replace(scene, kind="room"))
    assert room.hi[2] >= scene.room.wall_height  # a room frames its walls


def test_multi_object_probes_do_not_apply_to_object_scenes(tmp_path: Path) -> None:
    from harness.scenes import probe_edits as probes
    doc = _v2(_root(tmp_path), kind="object", ground=True)
    scene = parse_scene(json.dumps(doc).encode(), path="x", root=tmp_path)
    for probe in ("keep_half", "biggest_only", "scrambled"):
        with pytest.raises(probes.ProbeNotApplicable, match="not applicable to an object scene"):
            probes.apply(scene, probe)
    room = replace(scene, kind="room")
    assert probes.apply(room, "keep_half").objects  # rooms are unchanged
