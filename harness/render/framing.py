"""Camera rig, auto-framing and dollhouse walls: pure numpy, no bpy (testable anywhere).

Conventions (metres, z up, room floor centred on the origin):

- The camera rotation is the Blender Euler ``(pitch, 0, yaw)`` in XYZ order, i.e. the matrix
  ``Rz(yaw) @ Rx(pitch)``. A Blender camera looks along its local -z with local +y up, so
  pitch 0 looks straight down (top-down, image up = world +y at yaw 0) and pitch 90 looks
  horizontally along +y (eye level, camera on the -y side). Yaw turns the camera
  counter-clockwise (seen from above) about the vertical axis through the box centre.
- Image coordinates are normalised by the sensor width (36 mm): the frame spans
  ``[-0.5, 0.5]`` on both axes of a square image, the unit Blender uses for lens shift.
- **Auto-framing**: the camera distance is solved so that the larger side of the projected
  scene box is ``FILL`` of the frame, and the lens shift centres the projected box, whatever
  the focal length, pitch or yaw.
- **Fixed camera** (a protocol preset's source camera, :func:`fixed_camera`): the camera
  stands a given distance from the box centre, unshifted, and the box fills what it fills.
- **Dollhouse**: a wall is hidden when the camera lies on the outer side of its plane, i.e.
  when its outward normal faces the camera; exactly those walls can stand between the camera
  and the room interior.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from harness.protocol.cameras import SENSOR_WIDTH_MM
from harness.protocol.configurations import DEFAULT_FRAMING_MARGIN, DISTANCE_UNITS, RenderConfig
from harness.scenes.model import Scene

FILL = 0.85  # larger projected box side as a fraction of the frame side
NEAR_M = 0.05  # the camera stays this far (at most a tenth of the box diagonal) before every corner
WALL_THICKNESS_M = 0.08

# name -> outward unit normal (x, y); walls stand outside the floor rectangle
WALL_NORMALS: dict[str, tuple[float, float]] = {
    "wall_+x": (1.0, 0.0),
    "wall_-x": (-1.0, 0.0),
    "wall_+y": (0.0, 1.0),
    "wall_-y": (0.0, -1.0),
}


@dataclass(frozen=True)
class Box:
    """Axis-aligned box: ``lo`` and ``hi`` are (3,) float arrays in metres (stored as tuples)."""

    lo: tuple[float, float, float]
    hi: tuple[float, float, float]

    @property
    def centre(self) -> np.ndarray:
        """(3,) centre point."""
        return (np.asarray(self.lo) + np.asarray(self.hi)) / 2.0

    def corners(self) -> np.ndarray:
        """(8, 3) corner points."""
        lo, hi = np.asarray(self.lo), np.asarray(self.hi)
        idx = np.array([[(i >> k) & 1 for k in range(3)] for i in range(8)], dtype=bool)
        return np.where(idx, hi, lo)


@dataclass(frozen=True)
class CameraPose:
    """A solved camera: what Blender needs to place it.

    ``location`` (3,) metres; ``rotation_euler`` (pitch, 0, yaw) radians, XYZ order;
    ``lens_mm`` on a ``SENSOR_WIDTH_MM`` sensor; ``shift`` (x, y) in sensor-width units;
    ``clip`` (start, end) metres; ``distance`` from the box centre along the view axis.
    """

    location: tuple[float, float, float]
    rotation_euler: tuple[float, float, float]
    lens_mm: float
    shift: tuple[float, float]
    clip: tuple[float, float]
    distance: float


def object_corners(size: tuple[float, float, float], position, yaw_deg: float) -> np.ndarray:
    """(8, 3) world corners of an object box: bottom centre at ``position``, yawed about +z."""
    sx, sy, sz = size
    local = Box((-sx / 2, -sy / 2, 0.0), (sx / 2, sy / 2, sz)).corners()
    c, s = math.cos(math.radians(yaw_deg)), math.sin(math.radians(yaw_deg))
    rot = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    return local @ rot.T + np.asarray(position, dtype=float)


def scene_box(scene: Scene) -> Box:
    """The box auto-framing keeps fixed: the room with its walls united with every object.

    An object scene (schema 2 ``kind: object``) frames its objects' boxes only, so a 6 cm and a
    6 m object fill the frame alike; its ground plane is not part of the box.
    """
    pts = []
    if not scene.is_object_scene:
        hx = scene.room.size[0] / 2 + WALL_THICKNESS_M
        hy = scene.room.size[1] / 2 + WALL_THICKNESS_M
        pts.append(np.array([[-hx, -hy, 0.0], [hx, hy, scene.room.wall_height]]))
    pts += [
        object_corners(o.size, o.position, o.yaw_deg) if o.tilt is None else o.corners()
        for o in scene.objects
    ]
    allp = np.concatenate(pts)
    return Box(tuple(allp.min(0).tolist()), tuple(allp.max(0).tolist()))  # type: ignore[arg-type]


def rotation(pitch_deg: float, yaw_deg: float) -> np.ndarray:
    """(3, 3) camera-to-world rotation ``Rz(yaw) @ Rx(pitch)``; columns are right, up, back."""
    p, y = math.radians(pitch_deg), math.radians(yaw_deg)
    rx = np.array([[1, 0, 0], [0, math.cos(p), -math.sin(p)], [0, math.sin(p), math.cos(p)]])
    rz = np.array([[math.cos(y), -math.sin(y), 0], [math.sin(y), math.cos(y), 0], [0, 0, 1]])
    return rz @ rx


def project(points: np.ndarray, location: np.ndarray, rot: np.ndarray, lens_mm: float) -> np.ndarray:
    """(N, 2) sensor-width-normalised image coordinates of (N, 3) points (no lens shift).

    Raises ``ValueError`` if a point is not in front of the camera.
    """
    cam = (np.asarray(points, dtype=float) - location) @ rot  # camera coords: x right, y up, -z fwd
    depth = -cam[:, 2]
    if np.any(depth <= 0):
        raise ValueError("a point is behind the camera")
    return (lens_mm / SENSOR_WIDTH_MM) * cam[:, :2] / depth[:, None]


def _extent(rel_cam: np.ndarray, depth0: np.ndarray, d: float, k: float) -> float:
    img = k * rel_cam / (depth0 + d)[:, None]
    return float(np.max(img.max(0) - img.min(0)))


def solve_camera(
    box: Box, lens_mm: float, pitch_deg: float, yaw_deg: float, fill: float = FILL
) -> CameraPose:
    """Auto-frame ``box``: the distance that makes its larger projected side ``fill`` of the frame.

    The camera looks at the box centre from direction (pitch, yaw); the extent shrinks
    monotonically with distance (the centre projects to the image centre and lies inside the
    box), so bisection converges; the lens shift then centres the projected box.
    """
    if not (lens_mm > 0 and 0 < fill < 1):
        raise ValueError(f"lens_mm must be > 0 and 0 < fill < 1, got {lens_mm}, {fill}")
    rot = rotation(pitch_deg, yaw_deg)
    forward = -rot[:, 2]
    centre = box.centre
    rel = box.corners() - centre
    rel_cam = rel @ rot[:, :2]  # x, y in camera axes: independent of the distance
    depth0 = rel @ forward  # depth of each corner relative to the centre
    k = lens_mm / SENSOR_WIDTH_MM
    # a centimetre-sized object needs a nearer limit; rooms (diagonal >= 0.5 m) keep NEAR_M
    near = min(NEAR_M, 0.1 * float(np.linalg.norm(np.asarray(box.hi) - np.asarray(box.lo))))
    lo = near - float(depth0.min())
    hi = max(lo * 2.0, 1.0)
    while _extent(rel_cam, depth0, hi, k) > fill:
        hi *= 2.0
    if _extent(rel_cam, depth0, lo, k) <= fill:
        hi = lo  # even from the nearest allowed point the box fits (degenerate flat box)
    for _ in range(80):
        mid = (lo + hi) / 2.0
        if _extent(rel_cam, depth0, mid, k) > fill:
            lo = mid
        else:
            hi = mid
    d = hi
    location = centre - d * forward
    img = k * rel_cam / (depth0 + d)[:, None]
    shift = (img.max(0) + img.min(0)) / 2.0
    far = d + float(depth0.max())
    return CameraPose(
        location=tuple(location.tolist()),  # type: ignore[arg-type]
        rotation_euler=(math.radians(pitch_deg), 0.0, math.radians(yaw_deg)),
        lens_mm=float(lens_mm),
        shift=(float(shift[0]), float(shift[1])),
        clip=(min(0.01, near / 2), far * 1.5 + 1.0),
        distance=d,
    )


def box_unit(box: Box, unit: str) -> float:
    """Metres of one ``unit`` of ``box``: half its largest side, its largest side, or half its
    diagonal (the radius of the sphere through its corners)."""
    size = np.asarray(box.hi) - np.asarray(box.lo)
    if unit == "half_side":
        return float(size.max()) / 2.0
    if unit == "side":
        return float(size.max())
    if unit == "radius":
        return float(np.linalg.norm(size)) / 2.0
    raise ValueError(f"unknown distance unit {unit!r}; use one of {', '.join(DISTANCE_UNITS)}")


def fixed_camera(box: Box, lens_mm: float, pitch_deg: float, yaw_deg: float, distance_m: float) -> CameraPose:
    """A source's camera: ``distance_m`` from the box centre along direction (pitch, yaw),
    looking at the centre with no lens shift, whatever share of the frame the box then fills
    (a narrow lens crops it, a far camera leaves it small)."""
    if not (lens_mm > 0 and math.isfinite(distance_m) and distance_m > 0):
        raise ValueError(f"lens_mm and distance_m must be > 0, got {lens_mm}, {distance_m}")
    rot = rotation(pitch_deg, yaw_deg)
    forward = -rot[:, 2]
    centre = box.centre
    depth = (box.corners() - centre) @ forward
    diagonal = float(np.linalg.norm(np.asarray(box.hi) - np.asarray(box.lo)))
    near = min(NEAR_M, 0.1 * diagonal, distance_m / 10.0)
    return CameraPose(
        location=tuple((centre - distance_m * forward).tolist()),  # type: ignore[arg-type]
        rotation_euler=(math.radians(pitch_deg), 0.0, math.radians(yaw_deg)),
        lens_mm=float(lens_mm),
        shift=(0.0, 0.0),
        clip=(min(0.01, near / 2), (distance_m + float(depth.max())) * 1.5 + 1.0),
        distance=distance_m,
    )


def camera_pose(box: Box, cfg: RenderConfig) -> CameraPose:
    """The camera of render configuration ``cfg`` on ``box``: auto-framed (``framing_margin``),
    or a source's fixed camera (``camera_distance`` ``distance_unit`` s of the box). Raises
    ``ValueError`` naming the bad setting."""
    if cfg.camera_distance is None:
        fill = FILL if cfg.framing_margin == DEFAULT_FRAMING_MARGIN else 1.0 - cfg.framing_margin
        return solve_camera(box, cfg.focal_length_mm, cfg.pitch_deg, cfg.yaw_deg, fill)
    if cfg.distance_unit not in DISTANCE_UNITS or not (
        math.isfinite(cfg.camera_distance) and cfg.camera_distance > 0
    ):
        raise ValueError(f"camera distance {cfg.camera_distance!r} {cfg.distance_unit!r} is not a distance > 0 "
                         f"in one of {', '.join(DISTANCE_UNITS)}")  # fmt: skip
    metres = cfg.camera_distance * box_unit(box, cfg.distance_unit)
    return fixed_camera(box, cfg.focal_length_mm, cfg.pitch_deg, cfg.yaw_deg, metres)


def projected_extent(box: Box, pose: CameraPose) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) (2,) corners of the projected box in the shifted frame ([-0.5, 0.5] is inside)."""
    rot = rotation(math.degrees(pose.rotation_euler[0]), math.degrees(pose.rotation_euler[2]))
    img = project(box.corners(), np.asarray(pose.location), rot, pose.lens_mm) - np.asarray(pose.shift)
    return img.min(0), img.max(0)


def hidden_walls(room_size: tuple[float, float], camera_location) -> frozenset[str]:
    """Names (keys of ``WALL_NORMALS``) of the walls whose outward normal faces the camera."""
    hx, hy = room_size[0] / 2, room_size[1] / 2
    x, y = float(camera_location[0]), float(camera_location[1])
    out = set()
    for name, (nx, ny) in WALL_NORMALS.items():
        plane = hx if nx else hy  # inner face of the wall: |x| = hx or |y| = hy
        if x * nx + y * ny > plane:
            out.add(name)
    return frozenset(out)


def wall_boxes(room_size: tuple[float, float], wall_height: float) -> dict[str, Box]:
    """The four wall slabs just outside the floor rectangle; the ±y walls own the corner posts
    (no overlapping faces, which would render as speckles)."""
    hx, hy, t, h = room_size[0] / 2, room_size[1] / 2, WALL_THICKNESS_M, wall_height
    return {
        "wall_+x": Box((hx, -hy, 0.0), (hx + t, hy, h)),
        "wall_-x": Box((-hx - t, -hy, 0.0), (-hx, hy, h)),
        "wall_+y": Box((-hx - t, hy, 0.0), (hx + t, hy + t, h)),
        "wall_-y": Box((-hx - t, -hy - t, 0.0), (hx + t, -hy, h)),
    }


def segment_hits_box(a, b, box: Box) -> bool:
    """Whether the segment from point ``a`` to ``b`` (3,) passes through ``box`` (slab test)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    d = b - a
    t0, t1 = 0.0, 1.0
    for i in range(3):
        lo, hi = box.lo[i], box.hi[i]
        if abs(d[i]) < 1e-12:
            if a[i] < lo or a[i] > hi:
                return False
            continue
        ta, tb = sorted(((lo - a[i]) / d[i], (hi - a[i]) / d[i]))
        t0, t1 = max(t0, ta), min(t1, tb)
        if t0 > t1:
            return False
    return True
