"""Camera rig, auto-framing and dollhouse walls: pure numpy, no Blender."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.protocol.configurations import factors
from harness.render import framing
from harness.scenes.model import Room, Scene, SceneObject

FOCALS = [float(f) for f in factors()["focal_length"].levels]
ROOM_BOX = framing.Box((-2.0, -1.5, 0.0), (2.0, 1.5, 2.5))


def test_rotation_conventions():
    # pitch 0: looking straight down, image up = world +y
    rot = framing.rotation(0.0, 0.0)
    np.testing.assert_allclose(-rot[:, 2], [0, 0, -1], atol=1e-12)
    np.testing.assert_allclose(rot[:, 1], [0, 1, 0], atol=1e-12)
    # pitch 90, yaw 0: eye level looking along +y (camera on the -y side)
    np.testing.assert_allclose(-framing.rotation(90.0, 0.0)[:, 2], [0, 1, 0], atol=1e-12)
    # yaw 90 turns the view direction counter-clockwise: +y -> -x
    np.testing.assert_allclose(-framing.rotation(90.0, 90.0)[:, 2], [-1, 0, 0], atol=1e-12)


def test_project_hand_computed():
    # camera 10 m above the origin looking down, 50 mm lens: a point 1 m to the right of the
    # axis projects to 50/36 * 1/10 sensor widths to the right
    img = framing.project(np.array([[1.0, 0.0, 0.0]]), np.array([0, 0, 10.0]), framing.rotation(0, 0), 50.0)
    np.testing.assert_allclose(img, [[50 / 36 / 10, 0.0]])
    with pytest.raises(ValueError):
        framing.project(np.array([[0, 0, 20.0]]), np.array([0, 0, 10.0]), framing.rotation(0, 0), 50.0)


def test_top_down_distance_hand_computed():
    # a flat 4 x 4 square seen top-down fills FILL of the frame at d = f * 4 / (36 * FILL)
    box = framing.Box((-2.0, -2.0, 0.0), (2.0, 2.0, 0.0))
    pose = framing.solve_camera(box, 50.0, 0.0, 0.0)
    assert pose.distance == pytest.approx(50.0 * 4.0 / (36.0 * framing.FILL), rel=1e-9)
    assert pose.shift == pytest.approx((0.0, 0.0), abs=1e-12)


def _extent(box, pose):
    lo, hi = framing.projected_extent(box, pose)
    return float(np.max(hi - lo)), lo, hi


@pytest.mark.parametrize("pitch,yaw", [(0, 0), (45, 0), (45, 135), (90, 0), (75, 270)])
def test_auto_framing_constant_across_focal_lengths(pitch, yaw):
    extents = []
    for f in FOCALS:
        pose = framing.solve_camera(ROOM_BOX, f, pitch, yaw)
        ext, lo, hi = _extent(ROOM_BOX, pose)
        extents.append(ext)
        # centred and inside the frame
        np.testing.assert_allclose((lo + hi) / 2, 0.0, atol=1e-9)
        assert np.all(hi <= 0.5) and np.all(lo >= -0.5)
    assert max(extents) / min(extents) - 1 < 0.02
    assert extents[0] == pytest.approx(framing.FILL, rel=1e-6)


def test_longer_lens_moves_camera_back():
    d = [framing.solve_camera(ROOM_BOX, f, 45, 30).distance for f in FOCALS]
    assert d == sorted(d) and d[-1] > 5 * d[0]


boxes = st.builds(
    lambda sx, sy, h, cx, cy: framing.Box((cx - sx / 2, cy - sy / 2, 0.0), (cx + sx / 2, cy + sy / 2, h)),
    st.floats(0.5, 12), st.floats(0.5, 12), st.floats(0.1, 4), st.floats(-2, 2), st.floats(-2, 2),
)


@settings(max_examples=150, deadline=None)
@given(boxes, st.sampled_from(FOCALS), st.sampled_from(FOCALS), st.floats(0, 90), st.floats(0, 360))
def test_auto_framing_property(box, f1, f2, pitch, yaw):
    e1, lo1, hi1 = _extent(box, framing.solve_camera(box, f1, pitch, yaw))
    e2, _, _ = _extent(box, framing.solve_camera(box, f2, pitch, yaw))
    assert abs(e1 - e2) / max(e1, e2) < 0.02
    assert e1 == pytest.approx(framing.FILL, rel=1e-6)
    assert np.all(np.abs(lo1) <= 0.5) and np.all(np.abs(hi1) <= 0.5)


def test_scene_box_covers_room_and_objects():
    obj = SceneObject("o", "tall", "a.obj", (1.8, 0.0, 0.0), 90.0, (1.0, 0.4, 3.0))
    scene = Scene("s", "g", "p", "x", "t", Room((4.0, 3.0), 2.5), (obj,))
    box = framing.scene_box(scene)
    # yawed 90°: the 1.0 m side runs along y, the 0.4 m side along x (1.8 + 0.2 = 2.0 = room
    # edge); the walls stand outside the 4 x 3 m floor
    t = framing.WALL_THICKNESS_M
    assert box.lo == pytest.approx((-2.0 - t, -1.5 - t, 0.0))
    assert box.hi == pytest.approx((2.0 + t, 1.5 + t, 3.0))
    far = SceneObject("o", "far", "a.obj", (5.0, 0.0, 0.0), 0.0, (1.0, 1.0, 1.0))
    assert framing.scene_box(Scene("s", "g", "p", "x", "t", Room((4.0, 3.0), 2.5), (far,))).hi[0] == 5.5


def test_hidden_walls_hand_cases():
    size = (4.0, 3.0)
    assert framing.hidden_walls(size, (0.0, 0.0, 9.0)) == frozenset()  # top-down
    assert framing.hidden_walls(size, (0.0, -8.0, 1.2)) == {"wall_-y"}  # eye level, yaw 0
    assert framing.hidden_walls(size, (6.0, -6.0, 5.0)) == {"wall_+x", "wall_-y"}
    assert framing.hidden_walls(size, (1.9, -1.4, 5.0)) == frozenset()  # above the floor


@settings(max_examples=200, deadline=None)
@given(
    st.floats(1.0, 10.0), st.floats(1.0, 10.0), st.floats(1.5, 4.0),
    st.sampled_from(FOCALS), st.floats(0, 90), st.floats(0, 360),
)
def test_dollhouse_no_wall_between_camera_and_centre(sx, sy, h, f, pitch, yaw):
    room_box = framing.Box((-sx / 2, -sy / 2, 0.0), (sx / 2, sy / 2, h))
    pose = framing.solve_camera(room_box, f, pitch, yaw)
    hidden = framing.hidden_walls((sx, sy), pose.location)
    centre = (0.0, 0.0, h / 2)
    walls = framing.wall_boxes((sx, sy), h)
    for name, wall in walls.items():
        if name not in hidden:
            assert not framing.segment_hits_box(pose.location, centre, wall), name
    # and a hidden wall is one that really stood in the way or faced the camera
    for name in hidden:
        nx, ny = framing.WALL_NORMALS[name]
        assert pose.location[0] * nx + pose.location[1] * ny > 0


def test_segment_hits_box():
    box = framing.Box((0, 0, 0), (1, 1, 1))
    assert framing.segment_hits_box((-1, 0.5, 0.5), (2, 0.5, 0.5), box)
    assert not framing.segment_hits_box((-1, 2, 0.5), (2, 2, 0.5), box)
    assert not framing.segment_hits_box((-1, 0.5, 0.5), (-0.5, 0.5, 0.5), box)


def test_solve_camera_rejects_bad_input():
    with pytest.raises(ValueError):
        framing.solve_camera(ROOM_BOX, 0.0, 0, 0)
    with pytest.raises(ValueError):
        framing.solve_camera(ROOM_BOX, 50.0, 0, 0, fill=1.5)


def test_pose_euler_matches_rotation():
    pose = framing.solve_camera(ROOM_BOX, 35.0, 60.0, 225.0)
    assert pose.rotation_euler == pytest.approx((math.radians(60), 0.0, math.radians(225)))


def test_box_units_hand_computed():
    box = framing.Box((-1.0, -2.0, 0.0), (1.0, 2.0, 4.0))  # sides 2, 4, 4
    assert framing.box_unit(box, "half_side") == 2.0
    assert framing.box_unit(box, "side") == 4.0
    assert framing.box_unit(box, "radius") == pytest.approx(math.sqrt(4 + 16 + 16) / 2)  # 3.0
    with pytest.raises(ValueError, match="unknown distance unit"):
        framing.box_unit(box, "diameter")


def test_fixed_camera_stands_at_the_distance_unshifted_whatever_the_lens():
    box = framing.Box((-1.0, -1.0, 0.0), (1.0, 1.0, 2.0))
    for lens in (20.0, 50.0, 200.0):
        pose = framing.fixed_camera(box, lens, 90.0, 0.0, 4.4)  # eye level, front (-y) side
        assert pose.location == pytest.approx((0.0, -4.4, 1.0))
        assert pose.shift == (0.0, 0.0) and pose.distance == 4.4 and pose.lens_mm == lens
    # seen square-on at 4.4 m, the 2 m face (1.4 m to 3.4 m deep) spans 2 / 3.4 x lens / 36 of the frame
    lo, hi = framing.projected_extent(box, framing.fixed_camera(box, 50.0, 90.0, 0.0, 4.4))
    assert hi[0] - lo[0] == pytest.approx(2.0 / 3.4 * 50.0 / 36.0)
    with pytest.raises(ValueError):
        framing.fixed_camera(box, 50.0, 90.0, 0.0, 0.0)
