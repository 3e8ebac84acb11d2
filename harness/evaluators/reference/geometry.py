"""Floor-plan geometry of scene objects for the symbolic checks (metres, z up, no rendering).

An object's footprint is its (x, y) box rotated by ``yaw_deg`` about +z around its position
(counter-clockwise seen from above, as in :mod:`harness.scenes.model`). Everything here is a
pure function of the frozen scene numbers, so it is identical under every render protocol.
"""

from __future__ import annotations

import math

from harness.scenes import footprints as scene_geometry
from harness.scenes.model import SceneObject

Point = tuple[float, float]

# The direction an object faces at yaw 0, in the floor plane: the scene generators' convention,
# taken from ``harness.scenes.footprints`` (the footprint and front helpers below delegate there).
FRONT_AT_YAW0: Point = (0.0, -1.0)


def footprint(obj: SceneObject) -> tuple[Point, Point, Point, Point]:
    """The four floor corners (x, y) of ``obj``'s rotated box, counter-clockwise."""
    return tuple(scene_geometry.object_footprint(obj))  # type: ignore[return-value]


def front_direction(obj: SceneObject) -> Point:
    """Unit vector the object faces: :data:`FRONT_AT_YAW0` rotated by ``yaw_deg``."""
    return scene_geometry.front_vector(obj.yaw_deg)


def _axes(poly: tuple[Point, ...]) -> list[Point]:
    out = []
    for i in range(len(poly)):
        (x0, y0), (x1, y1) = poly[i], poly[(i + 1) % len(poly)]
        out.append((-(y1 - y0), x1 - x0))
    return out


def _overlap(a: tuple[Point, ...], b: tuple[Point, ...]) -> bool:
    """Separating-axis test for two convex polygons (touching counts as overlapping)."""
    for ax, ay in _axes(a) + _axes(b):
        pa = [x * ax + y * ay for x, y in a]
        pb = [x * ax + y * ay for x, y in b]
        if max(pa) < min(pb) - 1e-12 or max(pb) < min(pa) - 1e-12:
            return False
    return True


def _point_segment(p: Point, a: Point, b: Point) -> float:
    ax, ay = a
    dx, dy = b[0] - ax, b[1] - ay
    length2 = dx * dx + dy * dy
    t = 0.0 if length2 == 0 else max(0.0, min(1.0, ((p[0] - ax) * dx + (p[1] - ay) * dy) / length2))
    return math.hypot(p[0] - (ax + t * dx), p[1] - (ay + t * dy))


def footprint_gap(a: SceneObject, b: SceneObject) -> float:
    """Shortest floor-plan distance between the two footprints in metres (0 if they overlap)."""
    pa, pb = footprint(a), footprint(b)
    if _overlap(pa, pb):
        return 0.0
    best = math.inf
    for poly, other in ((pa, pb), (pb, pa)):
        for p in poly:
            for i in range(4):
                best = min(best, _point_segment(p, other[i], other[(i + 1) % 4]))
    return best


def inside_footprint(point: Point, obj: SceneObject) -> bool:
    """Whether the floor point lies inside (or on the edge of) ``obj``'s footprint."""
    return scene_geometry.point_in_footprint(point, obj, margin=1e-9)


def bearing_deg(origin: SceneObject, target: SceneObject) -> float:
    """Angle in degrees in [0, 360) of ``target``'s centre seen from ``origin``'s centre."""
    dx = target.position[0] - origin.position[0]
    dy = target.position[1] - origin.position[1]
    return math.degrees(math.atan2(dy, dx)) % 360.0
