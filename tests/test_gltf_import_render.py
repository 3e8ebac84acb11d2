"""Generator outputs as glTF: built by Blender's exporter, imported, measured and rendered.

Fixtures come from ``tests/_gltf_fixtures.py`` (Blender's glTF exporter, in a child process):
textured, Draco-compressed, separate-file, vertex-coloured, hierarchical with a tilted part,
flat, tiny (6 cm) and huge (60 m) objects, an upright sign, and a room with an upright
picture. Checks: the imported boxes match Blender's own, the colour survives the render (mean
hue of the object's pixels), object scenes fill the frame alike at any size, and an object
scene's c0 shows the front of an upright flat asset. Renders are 64 px, 2 samples.
"""

from __future__ import annotations

import colorsys
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from harness.protocol.configurations import RenderConfig
from harness.scenes import SceneSet, build_manifest, write_manifest
from harness.scenes.importers import import_gltf, write_scene_file
from harness.scenes.model import scene_identity

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gltf")
    proc = subprocess.run(
        [sys.executable, str(HERE / "_gltf_fixtures.py"), str(out)],
        capture_output=True,
        text=True,
        cwd=HERE.parent,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return out


def _truth(fixtures: Path) -> dict:
    return json.loads((fixtures / "truth.json").read_text())


def _import(fixtures: Path, name: str, out: Path, **kw):
    scene = import_gltf(
        fixtures / name, out_root=out, generator="gen", prompt_id=Path(name).stem.replace("_", "-"),
        prompt=f"a {Path(name).stem}", **kw,
    )
    write_scene_file(scene, out)
    return scene


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("red_textured.glb", "red_textured"),
        ("red_draco.glb", "red_textured"),
        ("red_textured.gltf", "red_textured"),
        ("green_vcol.glb", "green_vcol"),
        ("truck.glb", "truck"),
        ("plane.glb", "plane"),
        ("tiny.glb", "tiny"),
        ("huge.glb", "huge"),
        ("skinned.glb", "skinned"),  # regression: the importer's bone-shape sphere was counted
    ],
)
def test_object_box_matches_blenders(fixtures: Path, tmp_path: Path, name: str, key: str) -> None:
    """One object per file; its box is Blender's world box of the exported meshes (a tilted
    wheel stays tilted inside the asset; a flat plane gets 1 mm of height, not an error)."""
    scene = _import(fixtures, name, tmp_path)
    lo, hi = (np.asarray(v) for v in _truth(fixtures)[key])
    (obj,) = scene.objects
    assert scene.kind == "object" and obj.tilt is None
    assert obj.size == pytest.approx(tuple(np.maximum(hi - lo, 1e-3)), rel=1e-5, abs=1e-6)
    assert (tmp_path / obj.asset).read_bytes() == (fixtures / name).read_bytes()


def test_gltf_dependencies_are_part_of_the_identity(fixtures: Path, tmp_path: Path) -> None:
    scene = _import(fixtures, "red_textured.gltf", tmp_path)
    before = scene_identity(scene, tmp_path)
    assert (tmp_path / "assets/red_textured/red_textured.bin").is_file()
    assert (tmp_path / "assets/red_textured/red.png").is_file()
    png = tmp_path / "assets/red_textured/red.png"
    png.write_bytes(png.read_bytes() + b"\0")
    assert scene_identity(scene, tmp_path) != before


def test_room_keeps_an_upright_picture(fixtures: Path, tmp_path: Path) -> None:
    """A picture (flat plane) standing upright in a room: a tilted object, not an error; its
    box's corners span Blender's world box of the picture."""
    scene = _import(fixtures, "picture_room.glb", tmp_path)
    assert scene.kind == "room" and scene.room.size == pytest.approx((4.0, 3.0))
    (pic,) = scene.objects
    assert pic.label == "picture" and pic.tilt is not None
    corners = pic.corners()
    lo, hi = (np.asarray(v) for v in _truth(fixtures)["picture_room"]["picture"])
    assert corners.min(0) == pytest.approx(lo, abs=1.5e-3)  # the 1 mm flat axis
    assert corners.max(0) == pytest.approx(hi, abs=1.5e-3)
    write_manifest(tmp_path, build_manifest(tmp_path, [tmp_path / "scenes/gen/picture-room.json"]))
    assert SceneSet.load(tmp_path).scenes == (scene,)


def _render(scene, root: Path, cache: Path, **cfg) -> np.ndarray:
    from harness.render.service import RenderService

    config = RenderConfig(resolution_px=64, samples=2, **cfg)
    return RenderService(cache).render(scene, root, scene_identity(scene, root), config)


def _mean_hue_deg(rgba: np.ndarray) -> tuple[float, float]:
    """(hue in degrees, saturation) of the mean colour of the visible pixels."""
    mask = rgba[..., 3] > 200
    r, g, b = (rgba[..., :3][mask].astype(float) / 255).mean(0)
    h, _, s = colorsys.rgb_to_hls(r, g, b)
    return h * 360, s


@pytest.mark.parametrize(
    ("name", "hue"),
    [
        ("red_textured.glb", 0.0),
        ("red_draco.glb", 0.0),
        ("red_textured.gltf", 0.0),
        ("green_vcol.glb", 120.0),
        ("truck.glb", 230.0),
        ("skinned.glb", 120.0),  # regression: a grey bone-shape sphere rendered with it
    ],
)
def test_colour_survives(fixtures: Path, tmp_path: Path, name: str, hue: float) -> None:
    """Textures, Draco meshes, separate files and vertex colours render in their colour (the
    old OBJ rewrite rendered all of them uniformly grey)."""
    scene = _import(fixtures, name, tmp_path / "set", ground=False)
    rgba = _render(scene, tmp_path / "set", tmp_path / "cache", pitch_deg=45.0)
    got, sat = _mean_hue_deg(rgba)
    assert sat > 0.3, f"{name}: grey render (saturation {sat:.2f})"
    assert min(abs(got - hue), 360 - abs(got - hue)) < 25, f"{name}: hue {got:.0f}°"


def test_tiny_and_huge_objects_fill_the_frame_alike(fixtures: Path, tmp_path: Path) -> None:
    """A 6 cm and a 60 m cube: the object scene frames the object, so each covers the same
    share of the image (a 6 cm object in a 2.5 m-walled room used to vanish)."""
    shares = []
    for name in ("tiny.glb", "huge.glb"):
        scene = _import(fixtures, name, tmp_path / "set", ground=False)
        for pitch in (0.0, 60.0):
            rgba = _render(scene, tmp_path / "set", tmp_path / "cache", pitch_deg=pitch)
            shares.append((rgba[..., 3] > 128).mean())
    tiny0, tiny60, huge0, huge60 = shares
    assert tiny0 > 0.3 and tiny60 > 0.3
    assert tiny0 == pytest.approx(huge0, rel=0.05) and tiny60 == pytest.approx(huge60, rel=0.05)


def test_object_c0_shows_an_upright_flat_asset(fixtures: Path, tmp_path: Path) -> None:
    """An upright sign as a single-object scene: top-down (the room c0) sees only its 1 mm
    edge; the object c0 (front, 30° above the horizon) sees its face, in its colour."""
    from harness.protocol.profiles import get_profile
    from harness.render.failures import NothingVisible

    scene = _import(fixtures, "standee.glb", tmp_path / "set", ground=False)
    assert scene.kind == "object"
    c0 = get_profile("smoke").for_scene_kind(scene.kind).c0
    front = _render(scene, tmp_path / "set", tmp_path / "cache", pitch_deg=c0.pitch_deg)
    assert (front[..., 3] > 128).mean() > 0.2
    with pytest.raises(NothingVisible):  # a failed measurement, never an empty-image score
        _render(scene, tmp_path / "set", tmp_path / "cache", pitch_deg=0.0)
    hue, sat = _mean_hue_deg(front)
    assert sat > 0.3 and min(hue, 360 - hue) < 25, (hue, sat)
