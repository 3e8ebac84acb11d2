"""Each preset's first view shows the side of an asset its source's first view shows.

One asymmetric object (a grey cube with a red panel on its front, the -y face an asset faces
in the harness, a green panel on its right (+x), a blue panel on its back (+y) and a yellow
tab on its top near the front) is rendered tiny (64 px, 4 samples) under each preset's own
camera, framing and light, and the tile's pixel colours name the side it shows. Marked slow.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from harness.protocol.presets import get_preset
from harness.scenes.marked_cube import marked_cube, panel_masks, panel_shares, write_assets
from harness.scenes.model import scene_identity

pytestmark = pytest.mark.slow

SMALL = {"resolution_px": 64, "samples": 4}


@pytest.fixture(scope="module")
def render(tmp_path_factory):
    pytest.importorskip("bpy")
    from harness.render.blender import get_renderer

    root: Path = tmp_path_factory.mktemp("fronts")
    write_assets(root)
    renderer, scene = get_renderer(), marked_cube()
    identity = scene_identity(scene, root)
    return lambda cfg: renderer.render(scene, root, identity, cfg)


shares = panel_shares


def first_view(name: str, index: int = 0, render_pass: str = "shaded"):
    p = get_preset(name).scaled(**SMALL)
    return p.render_configs(render_pass)[index]


def test_gpteval3d_first_tile_is_the_front(render):
    # threestudio's azimuth 0 is the front of its assets (+x); GPTEval3D's view 0 shows it
    s = shares(render(first_view("gpteval3d")))
    assert s["red"] > 0.2 and s["green"] < 0.02 and s["blue"] == 0.0, s


def test_gpteval3d_normals_are_threestudio_axes_on_black(render):
    from harness.protocol.configurations import background_rgb
    from harness.render.composite import composite

    p = get_preset("gpteval3d").scaled(**SMALL)
    rgba = render(p.render_configs("normal")[0])
    image = composite(rgba, background_rgb(p.pass_background("normal")))
    # the front face's normal is threestudio's +x: (n + 1) / 2 = (1, 0.5, 0.5); empty pixels black
    assert np.all(np.abs(image[30:34, 30:34].reshape(-1, 3).astype(int) - (255, 128, 128)) <= 4)
    assert tuple(image[0, 0]) == (0, 0, 0)


def test_t3bench_first_view_sees_the_right_and_back_and_narrow_lenses_crop(render):
    # icosphere vertex 0 in threestudio's frame: the camera at harness azimuth 121.7, on the
    # asset's right and a little behind it; never its front
    s = shares(render(first_view("t3bench")))
    assert s["green"] > s["blue"] > 0.05 and s["red"] == 0.0, s
    # radius 2.2 half-sides at yfov 24: the object overflows the frame on every side
    alpha = render(first_view("t3bench", index=4))[..., 3] > 0
    assert alpha[0].any() and alpha[-1].any() and alpha[:, 0].any() and alpha[:, -1].any()


def test_t3bench_caption_stands_far_and_leaves_the_object_small(render):
    rgba = render(first_view("t3bench-caption"))
    s = shares(rgba)
    assert s["green"] > s["blue"] > 0.05 and s["red"] == 0.0, s
    # 4.84 half-sides at yfov 60: a half-side spans 1 / (4.84 tan 30°) = 36 % of the frame seen
    # square-on; this cube, seen 31.7° off its side, spans under half (auto-framing: 85 %)
    rows, cols = np.nonzero(rgba[..., 3] > 0)
    assert 0.3 * 64 <= max(np.ptp(rows), np.ptp(cols)) + 1 <= 0.5 * 64


def test_mate3d_first_view_is_the_front_and_its_top_view_has_the_front_up(render):
    s = shares(render(first_view("mate3d")))
    assert s["red"] > 0.2 and s["green"] == 0.0 and s["blue"] == 0.0, s
    # PyTorch3D's look_at at elev 90: image up is the asset's front, so the front tab is on top
    rows = np.nonzero(panel_masks(render(first_view("mate3d", index=4)))["yellow"])[0]
    assert rows.size and rows.mean() < 32, rows.mean() if rows.size else None


def test_3dcodebench_first_view_is_the_back_right(render):
    # frame 5 of the turntable: t = 45° from +x in Blender's frame, the +x+y quadrant
    s = shares(render(first_view("3dcodebench")))
    assert s["green"] > 0.05 and s["blue"] > 0.05 and s["red"] == 0.0, s
