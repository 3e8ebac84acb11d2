"""The renderer's presentation settings: normal-map pass, texture off, uniform
ambient light. Tiny renders (48 px, 2 samples) of the three-box test room. Marked slow."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from harness.protocol.configurations import RenderConfig
from harness.render.failures import RenderFailed
from harness.scenes.model import scene_identity
from tests._render_helpers import box_scene, write_box_assets

pytestmark = pytest.mark.slow

TOP_DOWN = RenderConfig(resolution_px=48, samples=2)  # pitch 0: the camera looks straight down


@pytest.fixture(scope="module")
def scene_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("presentation")
    write_box_assets(root)
    return root


@pytest.fixture(scope="module")
def render(scene_root):
    pytest.importorskip("bpy")
    from harness.render.blender import get_renderer

    renderer = get_renderer()
    scene = box_scene()
    identity = scene_identity(scene, scene_root)
    return lambda cfg: renderer.render(scene, scene_root, identity, cfg)


def test_normal_pass_colours_upward_faces_blue_and_default_render_is_unchanged(render):
    before = render(TOP_DOWN)
    normal = render(replace(TOP_DOWN, render_pass="normal"))
    # seen from above every visible face (floor, box tops) faces +z: colour 0.5·(0, 0, 1) + 0.5
    centre = normal[20:28, 20:28, :3].reshape(-1, 3).astype(int)
    assert np.all(np.abs(centre - (128, 128, 255)) <= 3), centre[:3]
    after = render(TOP_DOWN)  # switching back restores the shaded render exactly
    assert np.array_equal(before, after)


def test_texture_off_greys_the_red_box(render):
    shaded = render(TOP_DOWN)
    grey = render(replace(TOP_DOWN, texture=False))

    def reds(rgba):
        r, g, b = (rgba[..., i].astype(int) for i in range(3))
        return int(np.sum((r > 2 * g + 10) & (r > 2 * b + 10)))

    assert reds(shaded) >= 10 and reds(grey) == 0


def test_ambient_level_changes_brightness_monotonically(render):
    dim = render(replace(TOP_DOWN, ambient=0.3))[..., :3].astype(float).mean()
    bright = render(replace(TOP_DOWN, ambient=1.0))[..., :3].astype(float).mean()
    assert bright > dim + 5


def test_bad_presentation_values_fail_with_the_reason(render):
    with pytest.raises(RenderFailed, match="unknown render pass 'depth'"):
        render(replace(TOP_DOWN, render_pass="depth"))
    with pytest.raises(RenderFailed, match="ambient level"):
        render(replace(TOP_DOWN, ambient=-1.0))
    with pytest.raises(RenderFailed, match="camera distance"):
        render(replace(TOP_DOWN, camera_distance=2.0, distance_unit="metres"))
    with pytest.raises(RenderFailed, match="unknown normal frame 'z-down'"):
        render(replace(TOP_DOWN, render_pass="normal", normal_frame="z-down"))


def test_points_geometry_keeps_colour_changes_pixels_and_switches_back(render):
    mesh = render(TOP_DOWN)
    points = render(replace(TOP_DOWN, geometry="points"))
    assert not np.array_equal(mesh, points)

    def reds(rgba):
        r, g, b = (rgba[..., i].astype(int) for i in range(3))
        return int(np.sum((r > 2 * g + 10) & (r > 2 * b + 10)))

    assert reds(points) >= 5  # the red box's points carry its material
    assert np.array_equal(render(TOP_DOWN), mesh)  # points hidden again: the mesh render exactly
    with pytest.raises(RenderFailed, match="unknown geometry 'voxels'"):
        render(replace(TOP_DOWN, geometry="voxels"))
