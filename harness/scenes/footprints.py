"""Plan-view geometry of scene objects: rotated footprints, overlap and containment tests.

Conventions (docs/formats.md "Scene file"): metres, z up, an object's ``position`` is the bottom centre
of its box, ``yaw_deg`` rotates counter-clockwise about +z seen from above. An object's
*front* faces local -y (Blender's "front" view direction), so at yaw θ the front points
along ``(sin θ, -cos θ)``.

Objects enter these tests through their floor-layout box (``SceneObject.layout``): the box in
the yaw frame enclosing a tilted object (schema 2); for untilted objects, their own box.

Flat floor coverings (rugs: height ≤ ``FLAT_HEIGHT``) may lie under other objects; overlap
tests ignore a flat object against any other object.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from harness.scenes.model import Room, SceneObject

FLAT_HEIGHT = 0.05  # m: an object this thin is a floor covering (rug), exempt from overlap
EPS = 1e-6  # m: boxes that merely touch do not overlap

Point = tuple[float, float]


def front_vector(yaw_deg: float) -> Point:
    """Unit vector (x, y) the object's front faces at ``yaw_deg``."""
    t = math.radians(yaw_deg)
    return (math.sin(t), -math.cos(t))


def rotate(x: float, y: float, yaw_deg: float) -> Point:
    """Rotate the plan vector (x, y) counter-clockwise by ``yaw_deg``."""
    t = math.radians(yaw_deg)
    c, s = math.cos(t), math.sin(t)
    return (x * c - y * s, x * s + y * c)


def footprint(position: Sequence[float], size: Sequence[float], yaw_deg: float) -> list[Point]:
    """The four plan corners (x, y) of a box at ``position`` with ``size`` rotated by ``yaw_deg``."""
    hx, hy = size[0] / 2.0, size[1] / 2.0
    corners = []
    for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
        dx, dy = rotate(sx * hx, sy * hy, yaw_deg)
        corners.append((position[0] + dx, position[1] + dy))
    return corners


def object_footprint(obj: SceneObject) -> list[Point]:
    """Plan corners of ``obj``'s rotated (floor-layout) box."""
    position, size = obj.layout()
    return footprint(position, size, obj.yaw_deg)


def _axes(yaw_deg: float) -> tuple[Point, Point]:
    t = math.radians(yaw_deg)
    return (math.cos(t), math.sin(t)), (-math.sin(t), math.cos(t))


def _project(corners: list[Point], axis: Point) -> tuple[float, float]:
    values = [cx * axis[0] + cy * axis[1] for cx, cy in corners]
    return min(values), max(values)


def plan_overlap(
    a_pos: Sequence[float],
    a_size: Sequence[float],
    a_yaw: float,
    b_pos: Sequence[float],
    b_size: Sequence[float],
    b_yaw: float,
) -> bool:
    """Whether two rotated rectangles overlap with positive area (separating-axis test)."""
    ahx, ahy = half_extents(a_size, a_yaw)
    bhx, bhy = half_extents(b_size, b_yaw)
    if abs(a_pos[0] - b_pos[0]) >= ahx + bhx - EPS or abs(a_pos[1] - b_pos[1]) >= ahy + bhy - EPS:
        return False  # enclosing axis-aligned boxes are apart: a cheap early exit
    ca = footprint(a_pos, a_size, a_yaw)
    cb = footprint(b_pos, b_size, b_yaw)
    for axis in (*_axes(a_yaw), *_axes(b_yaw)):
        a_lo, a_hi = _project(ca, axis)
        b_lo, b_hi = _project(cb, axis)
        if a_hi <= b_lo + EPS or b_hi <= a_lo + EPS:
            return False
    return True


def boxes_overlap(a: SceneObject, b: SceneObject) -> bool:
    """Whether two objects' boxes interpenetrate (plan overlap and z overlap), rugs exempt."""
    (a_pos, a_size), (b_pos, b_size) = a.layout(), b.layout()
    if a_size[2] <= FLAT_HEIGHT or b_size[2] <= FLAT_HEIGHT:
        return False
    a_z0, a_z1 = a_pos[2], a_pos[2] + a_size[2]
    b_z0, b_z1 = b_pos[2], b_pos[2] + b_size[2]
    if a_z1 <= b_z0 + EPS or b_z1 <= a_z0 + EPS:
        return False
    return plan_overlap(a_pos, a_size, a.yaw_deg, b_pos, b_size, b.yaw_deg)


def inside_room(
    position: Sequence[float], size: Sequence[float], yaw_deg: float, room: Room, *, tol: float = 1e-4
) -> bool:
    """Whether the rotated footprint lies within the floor and the box below the ceiling."""
    hx, hy = room.size[0] / 2.0 + tol, room.size[1] / 2.0 + tol
    for cx, cy in footprint(position, size, yaw_deg):
        if not (-hx <= cx <= hx and -hy <= cy <= hy):
            return False
    return position[2] >= -tol and position[2] + size[2] <= room.wall_height + tol


def object_inside_room(obj: SceneObject, room: Room, *, tol: float = 1e-4) -> bool:
    """:func:`inside_room` for a placed object (its floor-layout box)."""
    position, size = obj.layout()
    return inside_room(position, size, obj.yaw_deg, room, tol=tol)


def half_extents(size: Sequence[float], yaw_deg: float) -> Point:
    """Half widths (x, y) of the axis-aligned box enclosing the rotated footprint."""
    t = math.radians(yaw_deg)
    c, s = abs(math.cos(t)), abs(math.sin(t))
    return (
        (size[0] * c + size[1] * s) / 2.0,
        (size[0] * s + size[1] * c) / 2.0,
    )


def plan_gap(a: SceneObject, b: SceneObject) -> float:
    """Smallest plan distance between the two footprints (0 when they touch or overlap), metres."""
    ca, cb = object_footprint(a), object_footprint(b)
    (a_pos, a_size), (b_pos, b_size) = a.layout(), b.layout()
    if plan_overlap(a_pos, a_size, a.yaw_deg, b_pos, b_size, b.yaw_deg):
        return 0.0
    best = math.inf
    for poly_p, poly_q in ((ca, cb), (cb, ca)):
        for p in poly_p:
            for i in range(4):
                best = min(best, _point_segment(p, poly_q[i], poly_q[(i + 1) % 4]))
    return best


def _point_segment(p: Point, a: Point, b: Point) -> float:
    ax, ay = b[0] - a[0], b[1] - a[1]
    px, py = p[0] - a[0], p[1] - a[1]
    denom = ax * ax + ay * ay
    t = 0.0 if denom == 0 else max(0.0, min(1.0, (px * ax + py * ay) / denom))
    return math.hypot(px - t * ax, py - t * ay)


def point_in_footprint(point: Point, obj: SceneObject, *, margin: float = 0.0) -> bool:
    """Whether the plan point lies inside ``obj``'s footprint grown by ``margin`` metres."""
    lx, ly = to_local(point, obj)
    size = obj.layout()[1]
    return abs(lx) <= size[0] / 2.0 + margin and abs(ly) <= size[1] / 2.0 + margin


def to_local(point: Point, obj: SceneObject) -> Point:
    """Plan point in ``obj``'s frame (origin at its layout box's centre, front towards local -y)."""
    position = obj.layout()[0]
    return rotate(point[0] - position[0], point[1] - position[1], -obj.yaw_deg)
