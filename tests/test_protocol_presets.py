"""Protocol presets: each preset's views against its source's camera description,
the view → render mapping, the aggregations, tiling and the `protocol --preset` command."""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.core.errors import ProtocolError
from harness.protocol.cameras import (
    View,
    direction_view,
    focal_length_mm,
    icosphere,
    render_config,
)
from harness.protocol.configurations import RenderConfig
from harness.protocol.presets import PRESETS, get_preset, parse_presets
from harness.protocol.tiling import stack, tile
from harness.protocol.view_reduce import aggregate, icosphere_max, trimmed_mean

ICOSAHEDRON_ELEVATION = math.degrees(math.atan(1 / ((1 + math.sqrt(5)) / 2)))  # 31.717°


def azimuths(views):
    return sorted(round(v.azimuth_deg, 6) for v in views)


# ---- each preset against its source -------------------------------------------------------


def test_gpteval3d_renders_120_views_and_shows_four_with_normals_in_2x2_sheets():
    # assets/data_format.md: rgb_0..rgb_119 + normal_0..normal_119; t23d_tournament.py picks
    # view_ids range(0, 120, 120 // 4) and tiles them 2 x 2, the RGB sheet above the normals
    p = get_preset("gpteval3d")
    assert len(p.views) == 120 and p.shown == (0, 30, 60, 90)
    assert {v.elevation_deg for v in p.views} == {15.0} and {v.fov_deg for v in p.views} == {70.0}
    # threestudio's test azimuths linspace(0, 360, 120) from +x, where its assets face: views
    # 0, 30, 60, 90 are 0, 90.756, 181.513, 272.269 degrees from the front, and the harness's
    # azimuth is measured from the front too (0 = the -y side an asset faces)
    step = 360.0 / 119
    assert [v.azimuth_deg for v in p.shown_views] == pytest.approx([step * k for k in (0, 30, 60, 90)])
    assert [v.azimuth_deg for v in p.shown_views] == pytest.approx([0.0, 90.756303, 181.512605, 272.268908])
    assert p.passes == ("shaded", "normal") and p.tiling == (2, 2) and p.resolution_px == 512
    # comp_normal = (n + 1) / 2 * opacity: normals on black, coloured in threestudio's axes
    assert p.pass_background("normal") == "0" and p.pass_background("shaded") == "255"
    normal = p.render_configs("normal")[0]
    assert normal.normal_frame == "threestudio" and p.render_configs("shaded")[0].normal_frame == "blender"
    assert p.camera_distance is None  # auto-framed: the generators size their assets


def test_t3bench_quality_is_162_icosphere_points_times_5_fovs_at_512_px():
    # render/meshrender.py: icosphere(subdivisions=2), yfov pi/3, pi/4, pi/5, pi/6, pi/7.5, 512 px,
    # ambient light 1, black background; run_eval_quality.py: max over lenses, 3 smoothings, max
    p = get_preset("t3bench")
    assert len(p.views) == 810
    assert Counter(v.fov_deg for v in p.views) == {f: 162 for f in (60.0, 45.0, 36.0, 30.0, 24.0)}
    assert len({(v.elevation_deg, v.azimuth_deg) for v in p.views}) == 162
    assert p.aggregation == "icosphere_max" and p.ambient == 1.0 and p.background == "0"
    assert p.resolution_px == 512
    # Radius = 2.2 with the mesh scaled to max |coordinate| 1: a fixed camera, not auto-framing
    assert (p.camera_distance, p.distance_unit) == (2.2, "half_side")
    assert {c.camera_distance for c in p.render_configs()} == {2.2}
    # vertex 0 = (-1, t, 0) / |.| in threestudio's frame (assets face +x) looks at the asset's
    # left-back side; in the harness frame (assets face -y) that camera sits at azimuth 121.7
    v0 = p.views[0]
    assert v0.elevation_deg == 0.0 and v0.azimuth_deg == pytest.approx(90 + ICOSAHEDRON_ELEVATION)
    # the poles: pyrender's look-at takes +y as up there; the harness turns its camera to match
    points, _ = icosphere(2)
    top, bottom = (int(np.argmax(points[:, 2])), int(np.argmin(points[:, 2])))
    assert p.views[top * 5] == View(90.0, 270.0, 60.0)  # image up = threestudio +y = harness +x
    assert p.views[bottom * 5] == View(-90.0, 90.0, 60.0)  # image right = threestudio -x = harness +y


def test_t3bench_caption_views_are_the_12_icosahedron_vertices():
    p = get_preset("t3bench-caption")
    elevations = Counter(round(v.elevation_deg, 3) for v in p.views)
    e1, e2 = round(ICOSAHEDRON_ELEVATION, 3), round(90 - ICOSAHEDRON_ELEVATION, 3)
    assert elevations == {0.0: 4, e1: 2, -e1: 2, e2: 2, -e2: 2}
    assert {v.fov_deg for v in p.views} == {60.0}
    # icosphere(subdivisions=0, radius=Radius) and then vertices *= Radius: 2.2 x 2.2
    assert p.camera_distance == pytest.approx(4.84) and p.distance_unit == "half_side"


def test_mate3d_six_axis_aligned_views_ambient_08_on_white():
    p = get_preset("mate3d")
    dirs = set()
    for v in p.views:
        e, a = math.radians(v.elevation_deg), math.radians(v.azimuth_deg)
        dirs.add(tuple(round(x) for x in (math.cos(e) * math.sin(a), -math.cos(e) * math.cos(a), math.sin(e))))
    assert dirs == {(1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1)}
    assert p.ambient == 0.8 and p.background == "255" and p.aggregation == "mean"
    # util_projection.py: (0, 0) first (PyTorch3D's azimuth 0 is +z, an OBJ asset's front);
    # FoVPerspectiveCameras' default fov 60; dist 2 around vertices in the unit sphere
    assert p.views[:4] == tuple(View(0.0, a, 60.0) for a in (0.0, 90.0, 180.0, 270.0))
    assert {v.fov_deg for v in p.views} == {60.0} and p.resolution_px == 512
    assert (p.camera_distance, p.distance_unit) == (2.0, "radius")
    # at the poles look_at_rotation's fallback leaves the image's right on -x, its up on the front
    assert p.views[4:] == (View(90.0, 180.0, 60.0), View(-90.0, 180.0, 60.0))


def test_defectbench_eight_views_at_5_degrees_tiled_4_by_2_on_white():
    # code/prompts_protocol.md: 8 views, 4 x 2 grid, 5 degrees above the horizon, evenly spaced
    # azimuth, 1024 x 1024 px per view, white; matte grey (materials disabled) for geometry
    for name, textured in (("3d-defectbench", True), ("3d-defectbench-geometry", False)):
        p = get_preset(name)
        assert {v.elevation_deg for v in p.views} == {5.0}
        assert azimuths(p.views) == [45.0 * i for i in range(8)]
        assert p.tiling == (4, 2) and p.background == "255" and p.images_per_scene() == 1
        assert p.resolution_px == 1024 and p.texture is textured


def test_3dcodebench_turntable_frames_5_15_25_35():
    # core/render.py: camera (1.8 cos t, 1.8 sin t, 0.6) x extent, t = 9 degrees x frame, in
    # Blender's frame (the harness's): t = 45 is the +x+y quadrant, harness azimuth 135
    p = get_preset("3dcodebench")
    assert [v.azimuth_deg for v in p.views] == [135.0, 225.0, 315.0, 45.0]
    assert {v.elevation_deg for v in p.views} == {round(math.degrees(math.atan2(0.6, 1.8)), 6)}  # 18.43
    assert {v.fov_deg for v in p.views} == {None}  # lens 50 mm: the harness's default lens
    assert p.camera_distance == pytest.approx(math.hypot(1.8, 0.6)) and p.distance_unit == "side"
    assert p.background == "0" and p.resolution_px == 512


def test_every_preset_names_its_source_and_disclosed_parameters():
    for p in PRESETS.values():
        assert p.source and p.disclosed and "views" in p.disclosed


# ---- views and render configurations ------------------------------------------------------


def test_view_to_render_config_hand_computed():
    cfg = render_config(View(0.0, 90.0, 60.0), RenderConfig())
    assert cfg.pitch_deg == 90.0 and cfg.yaw_deg == 90.0
    assert cfg.focal_length_mm == pytest.approx(18.0 / math.tan(math.radians(30.0)))  # 31.18 mm
    assert render_config(View(90.0, 0.0), RenderConfig()).pitch_deg == 0.0  # straight above = top-down
    assert render_config(View(-90.0, 0.0), RenderConfig()).pitch_deg == 180.0
    assert focal_length_mm(39.5977) == pytest.approx(50.0, abs=1e-3)


def test_direction_view_round_trip():
    assert direction_view(np.array([0.0, -1.0, 0.0])) == View(0.0, 0.0)
    assert direction_view(np.array([1.0, 0.0, 0.0])) == View(0.0, 90.0)
    assert direction_view(np.array([0.0, 0.0, 2.0])).elevation_deg == 90.0


def test_bad_view_values_are_one_line_errors():
    with pytest.raises(ProtocolError, match="elevation"):
        render_config(View(120.0, 0.0), RenderConfig())
    with pytest.raises(ProtocolError, match="field of view"):
        focal_length_mm(180.0)
    with pytest.raises(ProtocolError, match="unknown protocol preset"):
        get_preset("gpt-eval")
    with pytest.raises(ProtocolError, match="two or more"):
        parse_presets("mate3d")


def test_presets_share_render_keys_where_they_share_a_view():
    # T3Bench's caption cameras point along its quality cameras at the widest lens, but stand
    # 2.2 times farther (4.84 against 2.2): the same directions, different renders
    quality = get_preset("t3bench").render_configs()
    caption = get_preset("t3bench-caption").render_configs()
    assert {(c.pitch_deg, c.yaw_deg) for c in caption} <= {(c.pitch_deg, c.yaw_deg) for c in quality}
    assert not {c.key for c in caption} & {c.key for c in quality}
    # 3D-DefectBench's two aspects share every shaded camera key but the texture setting
    shaded = {replace(c, texture=True).key for c in get_preset("3d-defectbench-geometry").render_configs()}
    assert shaded == {c.key for c in get_preset("3d-defectbench").render_configs()}


def test_source_camera_conventions_hand_computed():
    from harness.protocol.source_cameras import blender_track_view, pytorch3d_view, threestudio_view

    # threestudio: azimuth 90 is on +y, the asset's left (it faces +x) = the harness's +x side
    assert threestudio_view(0.0, 90.0) == View(0.0, 90.0)
    assert pytorch3d_view(0.0, 90.0) == View(0.0, 90.0)  # PyTorch3D azimuth 90: camera on +x, kept by the glTF turn
    assert blender_track_view(np.array([0.0, -2.0, 0.0])) == View(0.0, 0.0)  # Blender's front view
    with pytest.raises(ProtocolError, match="unknown source frame"):
        get_preset("mate3d").__class__(**{**_fields(get_preset("mate3d")), "frame": "z-down"})
    with pytest.raises(ProtocolError, match="camera_distance"):
        get_preset("mate3d").__class__(**{**_fields(get_preset("mate3d")), "camera_distance": -1.0})


def _fields(p):
    from dataclasses import fields

    return {f.name: getattr(p, f.name) for f in fields(p)}


def test_new_render_fields_move_no_existing_key():
    base = RenderConfig()
    assert set(base.to_dict()) == {"resolution_px", "focal_length_mm", "lighting", "pitch_deg", "yaw_deg",
                                   "samples", "seed", "denoise"}
    from dataclasses import replace

    assert replace(base, texture=False).to_dict()["texture"] is False
    assert replace(base, render_pass="normal").key != base.key
    assert replace(base, ambient=0.8).key != base.key
    assert replace(base, geometry="points").to_dict()["geometry"] == "points"


def test_scaled_icosphere_preset_keeps_whole_neighbourhoods():
    small = get_preset("t3bench").scaled(max_views=60, resolution_px=64, samples=1)
    assert small.name == "t3bench@scaled" and len(small.views) == 60 and small.icosphere == (0, 5)
    assert small.resolution_px == 64 and small.samples == 1
    assert get_preset("mate3d").scaled(max_views=3).shown == (0, 2, 4)
    with pytest.raises(ProtocolError, match="keeps its grid"):
        get_preset("3d-defectbench").scaled(max_views=4)


# ---- icosphere, aggregation, tiling ------------------------------------------------------


@pytest.mark.parametrize(("sub", "n"), [(0, 12), (1, 42), (2, 162)])
def test_icosphere_counts_and_valence(sub, n):
    points, neighbours = icosphere(sub)
    assert points.shape == (n, 3)
    assert np.allclose(np.linalg.norm(points, axis=1), 1.0)
    assert Counter(len(x) for x in neighbours) == ({5: 12, 6: n - 12} if sub else {5: 12})


def test_aggregations_hand_computed():
    assert aggregate([1.0, 2.0, 3.0, 10.0], "mean") == 4.0
    assert aggregate([1.0, 2.0, 3.0, 10.0], "max") == 10.0
    assert aggregate([1.0, 2.0, 3.0, 10.0], "trimmed_mean") == 2.5  # RichDreamer: drop max and min
    assert trimmed_mean(np.array([4.0, 6.0])) == 5.0
    assert math.isnan(aggregate([1.0, math.nan], "max"))  # a failed view fails the scene


def test_icosphere_max_matches_a_matrix_form():
    _, neighbours = icosphere(0)
    values = np.zeros((12, 2))
    values[0, 1] = 6.0  # vertex 0's second lens
    adjacency = np.eye(12)
    for i, ns in enumerate(neighbours):
        adjacency[i, list(ns)] = 1.0
    smooth = adjacency / adjacency.sum(axis=1, keepdims=True)
    expected = (smooth @ smooth @ smooth @ values.max(axis=1)).max()
    assert icosphere_max(values.ravel(), neighbours, 2) == pytest.approx(expected)
    # by hand: one round gives 6/6 = 1 at vertex 0 and at its 5 neighbours
    assert (smooth @ values.max(axis=1))[0] == pytest.approx(1.0)


@given(st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=30))
def test_aggregations_lie_between_min_and_max(values):
    lo, hi = min(values), max(values)
    for how in ("mean", "max", "trimmed_mean"):
        assert lo - 1e-9 <= aggregate(values, how) <= hi + 1e-9
    assert aggregate(values, "max") == hi


def test_tile_places_views_row_major():
    views = [np.full((2, 3, 3), i, np.uint8) for i in range(8)]
    grid = tile(views, 4, 2)
    assert grid.shape == (4, 12, 3)
    assert grid[0, 0, 0] == 0 and grid[0, 3, 0] == 1 and grid[2, 0, 0] == 4 and grid[3, 11, 0] == 7
    assert stack([grid, grid]).shape == (8, 12, 3)
    with pytest.raises(ProtocolError, match="needs 8 views"):
        tile(views[:7], 4, 2)


# ---- the command ---------------------------------------------------------------------------


def test_protocol_preset_json(capsys):
    from harness.cli import main

    assert main(["protocol", "--preset", "3dcodebench", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["name"] == "3dcodebench"
    assert [(v["elevation"], v["azimuth"]) for v in data["views"]] == [(18.434949, a) for a in (135.0, 225.0, 315.0, 45.0)]
    assert (data["frame"], data["framing"]) == ("blender", {"camera_distance": 1.897366596, "unit": "side"})
    assert main(["protocol", "--preset", "t3bench", "--json"]) == 0
    assert {v["fov"] for v in json.loads(capsys.readouterr().out)["views"]} == {60.0, 45.0, 36.0, 30.0, 24.0}


def test_protocol_unknown_preset_exits_2(capsys):
    from harness.cli import main

    assert main(["protocol", "--preset", "nope"]) == 2
    assert "unknown protocol preset 'nope'" in capsys.readouterr().err


def _harness_axes(view):
    """(camera direction, image right) of a harness view, from its elevation and azimuth."""
    e, a = math.radians(view.elevation_deg), math.radians(view.azimuth_deg)
    return (np.array([math.cos(e) * math.sin(a), -math.cos(e) * math.cos(a), math.sin(e)]),
            np.array([math.cos(a), math.sin(a), 0.0]))


@given(st.floats(-1.0, 1.0), st.floats(-1.0, 1.0), st.floats(-1.0, 1.0),
       st.sampled_from(["blender", "threestudio", "y-up-front-z"]))
def test_source_cameras_keep_direction_and_image_right(x, y, z, frame):
    """Any T3Bench-style look-at camera, in any frame: the harness view looks from the same
    (turned) direction and has the same (turned) image-right axis, poles included."""
    from harness.protocol.source_cameras import FRAMES, pyrender_lookat_view

    v = np.array([x, y, z])
    if np.linalg.norm(v) < 1e-3:
        return
    rot = FRAMES[frame]
    f = v / np.linalg.norm(v)
    up = np.array([0.0, 0.0, 1.0]) if abs(f[2]) < 0.99 else np.array([0.0, 1.0, 0.0])
    right = -np.cross(up, -v)
    right /= np.linalg.norm(right)
    at_pole = abs(round(math.degrees(math.asin(max(-1.0, min(1.0, (rot @ f)[2])))), 6)) == 90.0
    d = rot @ f
    level_right = np.array([-d[1], d[0], 0.0]) / max(np.hypot(d[0], d[1]), 1e-12)  # a harness camera's right
    if not (at_pole or float((rot @ right) @ level_right) >= 1.0 - 1e-6):
        with pytest.raises(ProtocolError, match="rolled"):  # an up off the harness's up rolls the picture
            pyrender_lookat_view(v, frame)
        return
    view = pyrender_lookat_view(v, frame)
    direction, image_right = _harness_axes(view)
    assert np.allclose(direction, rot @ f, atol=1e-5)
    assert np.allclose(image_right, rot @ right, atol=1e-5)
