"""The Blender pipeline end to end, at tiny sizes (32-64 px, 1-4 samples). Marked slow."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from harness.core.hashing import sha256_bytes
from harness.protocol.configurations import RenderConfig
from harness.render import framing
from harness.render.cache import encode_png
from harness.render.composite import composite
from harness.render.failures import (
    AssetImportFailed,
    NothingVisible,
    RenderTimeout,
    SceneInvalid,
)
from harness.render.scene_build import validate_scene
from harness.render.settings import THREADS_ENV
from harness.scenes.model import scene_identity
from tests._render_helpers import box_scene, write_box_assets

CFG = RenderConfig(resolution_px=48, samples=2)
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def scene_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("renderset")
    write_box_assets(root)
    return root


@pytest.fixture(scope="module")
def renderer():
    pytest.importorskip("bpy")
    from harness.render.blender import get_renderer

    return get_renderer()


def _render(renderer, root, cfg=CFG, scene=None):
    scene = scene or box_scene()
    return renderer.render(scene, root, scene_identity(scene, root), cfg)


def _red(rgba: np.ndarray) -> int:
    r, g, b = (rgba[..., i].astype(int) for i in range(3))
    return int(np.sum((rgba[..., 3] > 0) & (r > 2 * g + 10) & (r > 2 * b + 10)))


def test_scene_invalid_without_blender(tmp_path):
    write_box_assets(tmp_path)
    outside = box_scene(centre_asset="../escape.obj")
    with pytest.raises(SceneInvalid, match="leaves the scene-set root") as info:
        validate_scene(outside, tmp_path)
    assert info.value.scene_id == "test.room" and "scene test.room" in str(info.value)
    bad = box_scene()
    bad = replace(bad, objects=(replace(bad.objects[0], size=(1.0, 0.0, 1.0)),))
    with pytest.raises(SceneInvalid, match="non-positive size"):
        validate_scene(bad, tmp_path)


@pytest.mark.slow
def test_render_shape_alpha_and_determinism(renderer, scene_root):
    a = _render(renderer, scene_root)
    assert a.shape == (48, 48, 4) and a.dtype == np.uint8
    alpha = a[..., 3]
    assert alpha.max() == 255 and alpha.min() == 0  # room opaque, corners of the frame empty
    _render(renderer, scene_root, replace(CFG, pitch_deg=60, yaw_deg=90, lighting="night"))
    again = _render(renderer, scene_root)  # after another config: persistent data must not leak
    assert encode_png(a) == encode_png(again)
    other_seed = _render(renderer, scene_root, replace(CFG, seed=1))
    assert not np.array_equal(a, other_seed)


@pytest.mark.slow
@pytest.mark.parametrize("threads", ["", "1"], ids=["auto-threads", "one-thread"])
def test_byte_identical_in_a_fresh_process(renderer, scene_root, threads):
    """Also across thread counts: warm pins one Cycles thread per process, and thread count
    is not part of the cache key."""
    code = (
        "import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]);"
        "from tests._render_helpers import box_scene;"
        "from harness.render.blender import get_renderer;"
        "from harness.render.cache import encode_png; from harness.core.hashing import sha256_bytes;"
        "from harness.protocol.configurations import RenderConfig; from harness.scenes.model import scene_identity;"
        "root = Path(sys.argv[2]); s = box_scene();"
        "im = get_renderer().render(s, root, scene_identity(s, root), RenderConfig(resolution_px=48, samples=2));"
        "print('SHA', sha256_bytes(encode_png(im)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(REPO), str(scene_root)],
        capture_output=True, text=True, timeout=300, check=True,
        env={**os.environ, THREADS_ENV: threads},
    ).stdout
    sha = next(line.split()[1] for line in out.splitlines() if line.startswith("SHA "))
    assert sha == sha256_bytes(encode_png(_render(renderer, scene_root)))


@pytest.mark.slow
def test_auto_framing_keeps_room_size_across_focal_lengths(renderer, scene_root):
    sizes = []
    for f in (16.0, 50.0, 200.0):
        alpha = _render(renderer, scene_root, replace(CFG, resolution_px=64, focal_length_mm=f))[..., 3]
        rows, cols = np.nonzero(alpha > 127)
        sizes.append((cols.max() - cols.min() + 1, rows.max() - rows.min() + 1))
    widths = [w for w, _ in sizes]
    # the room box is 4 x 3 m (plus walls): its width fills FILL of the 64 px frame
    assert max(widths) - min(widths) <= 2
    assert abs(widths[1] - framing.FILL * 64) <= 3


@pytest.mark.slow
def test_dollhouse_front_wall_hidden_at_eye_level(renderer, scene_root, monkeypatch):
    scene = box_scene()
    ident = scene_identity(scene, scene_root)
    eye = replace(CFG, pitch_deg=90.0)
    assert renderer.hidden_walls(scene, scene_root, ident, eye) == {"wall_-y"}
    assert renderer.hidden_walls(scene, scene_root, ident, CFG) == set()
    visible = _render(renderer, scene_root, eye)
    assert _red(visible) > 20  # the red centre box is seen through the missing front wall
    monkeypatch.setattr(framing, "hidden_walls", lambda size, loc: frozenset())
    walled = _render(renderer, scene_root, eye)
    assert _red(walled) == 0  # with the front wall standing, the box is hidden


@pytest.mark.slow
def test_background_changes_only_translucent_pixels_of_a_render(renderer, scene_root):
    rgba = _render(renderer, scene_root, replace(CFG, pitch_deg=45, yaw_deg=45))
    white, red = composite(rgba, (255, 255, 255)), composite(rgba, (255, 0, 0))
    changed = np.any(white != red, axis=-1)
    assert changed.any()
    assert np.all(rgba[..., 3][changed] < 255)
    np.testing.assert_array_equal(white[rgba[..., 3] == 255], rgba[..., :3][rgba[..., 3] == 255])


@pytest.mark.slow
def test_asset_failures(renderer, scene_root, tmp_path):
    write_box_assets(tmp_path)
    missing = box_scene("test.missing", centre_asset="assets/box/nope.obj")
    with pytest.raises(AssetImportFailed, match="does not exist") as info:
        renderer.render(missing, tmp_path, "f" * 64, CFG)  # no identity: the file is missing
    assert info.value.scene_id == "test.missing"
    (tmp_path / "assets" / "box" / "empty.obj").write_text("# no geometry\no empty\n")
    empty = box_scene("test.empty", centre_asset="assets/box/empty.obj")
    with pytest.raises(AssetImportFailed, match="no mesh geometry"):
        _render(renderer, tmp_path, scene=empty)


@pytest.mark.slow
def test_nothing_visible(renderer, scene_root, monkeypatch):
    solve = framing.solve_camera

    def look_up(box, lens, pitch, yaw, fill=framing.FILL):
        pose = solve(box, lens, pitch, yaw, fill)
        return replace(pose, location=(0.0, 0.0, 50.0), rotation_euler=(np.pi, 0.0, 0.0))

    monkeypatch.setattr(framing, "solve_camera", look_up)
    with pytest.raises(NothingVisible) as info:
        _render(renderer, scene_root, replace(CFG, seed=5))
    assert "pitch=0" in str(info.value) and "48px" in str(info.value)


@pytest.mark.slow
def test_timeout(renderer, scene_root):
    scene = box_scene()
    with pytest.raises(RenderTimeout):
        renderer.render(
            scene, scene_root, scene_identity(scene, scene_root),
            replace(CFG, resolution_px=256, samples=4096), timeout_s=0.05,
        )


@pytest.mark.slow
def test_service_caches_and_builds_each_scene_once(renderer, scene_root, tmp_path):
    from harness.render.service import RenderRequest, RenderService

    scene = replace(box_scene("test.service"), objects=box_scene().objects[:2])
    ident = scene_identity(scene, scene_root)
    service = RenderService(tmp_path / "renders")
    builds = renderer.builds
    cfgs = [CFG, replace(CFG, focal_length_mm=85.0), replace(CFG, lighting="sunset")]
    images = service.render_many([RenderRequest(scene, scene_root, ident, c) for c in cfgs])
    assert renderer.builds == builds + 1 and service.rendered == 3
    again = service.render(scene, scene_root, ident, cfgs[1])
    assert service.rendered == 3
    np.testing.assert_array_equal(again, images[1])
    moved = replace(scene, objects=(replace(scene.objects[0], position=(0.5, 0.0, 0.0)), scene.objects[1]))
    assert scene_identity(moved, scene_root) != ident


@pytest.mark.slow
def test_built_scenes_are_bounded_and_share_meshes(renderer, scene_root):
    import bpy

    from harness.render import blender

    for i in range(blender.MAX_BUILT_SCENES + 2):
        scene = box_scene(f"test.lru{i}")
        renderer.built(scene, scene_root, scene_identity(scene, scene_root))
    assert len(renderer._built) == blender.MAX_BUILT_SCENES
    t3d_scenes = [s for s in bpy.data.scenes if s.name.startswith("t3d-")]
    assert len(t3d_scenes) == blender.MAX_BUILT_SCENES
    # each built scene has its own floor and four walls; the three box assets are shared
    meshes = {ob.data.name for s in t3d_scenes for ob in s.objects if ob.type == "MESH"}
    assert len(meshes) == 5 * blender.MAX_BUILT_SCENES + 3
