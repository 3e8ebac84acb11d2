"""Camera views of a protocol and their render configurations.

A view is a camera direction around the scene: ``elevation_deg`` above the horizon (−90 below,
+90 straight above), ``azimuth_deg`` about the vertical axis (0 = the front camera on the
scene's −y side, 90 = on its +x side, counter-clockwise seen from above; the harness's yaw),
and an optional vertical field of view ``fov_deg``. The camera distance is not part of a view:
the harness frames the scene itself (:mod:`harness.render.framing`) unless a preset gives its
source's fixed distance (``Protocol.camera_distance``); a source's cameras become views in
:mod:`harness.protocol.source_cameras`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cache

import numpy as np

from harness.core.errors import ProtocolError
from harness.protocol.configurations import RenderConfig

#: mm: the camera sensor width every render uses (Blender's default full frame)
SENSOR_WIDTH_MM = 36.0


@dataclass(frozen=True)
class View:
    """One camera direction (degrees); ``fov_deg`` ``None``: the protocol's default lens."""

    elevation_deg: float
    azimuth_deg: float
    fov_deg: float | None = None

    def to_dict(self) -> dict[str, float]:
        out = {"elevation": self.elevation_deg, "azimuth": self.azimuth_deg}
        if self.fov_deg is not None:
            out["fov"] = self.fov_deg
        return out


def focal_length_mm(fov_deg: float) -> float:
    """The focal length (mm, 36 mm sensor, square image) whose field of view is ``fov_deg``."""
    if not 0.0 < fov_deg < 180.0:
        raise ProtocolError(f"field of view {fov_deg!r}° is not in (0, 180)", where="fov")
    return (SENSOR_WIDTH_MM / 2.0) / math.tan(math.radians(fov_deg) / 2.0)


def pitch_of(elevation_deg: float) -> float:
    """The harness's camera pitch (0 top-down, 90 eye level, 180 from straight below)."""
    if not -90.0 <= elevation_deg <= 90.0:
        raise ProtocolError(f"elevation {elevation_deg!r}° is not in [-90, 90]", where="elevation")
    return 90.0 - elevation_deg


def render_config(view: View, base: RenderConfig) -> RenderConfig:
    """``base`` looking along ``view`` (pitch, yaw and, when the view has one, the lens)."""
    cfg = replace(base, pitch_deg=round(pitch_of(view.elevation_deg), 9),
                  yaw_deg=round(view.azimuth_deg % 360.0, 9))  # fmt: skip
    if view.fov_deg is not None:
        cfg = replace(cfg, focal_length_mm=round(focal_length_mm(view.fov_deg), 9))
    return cfg


def direction_view(direction: np.ndarray, fov_deg: float | None = None) -> View:
    """The view whose camera sits along ``direction`` (3,) from the scene centre (z up)."""
    x, y, z = (float(v) for v in np.asarray(direction, dtype=float) / np.linalg.norm(direction))
    elevation = math.degrees(math.asin(max(-1.0, min(1.0, z))))
    azimuth = 0.0 if math.hypot(x, y) < 1e-9 else math.degrees(math.atan2(x, -y)) % 360.0
    return View(round(elevation, 6), round(azimuth, 6) % 360.0, fov_deg)


@cache
def icosphere(subdivisions: int) -> tuple[np.ndarray, tuple[tuple[int, ...], ...]]:
    """Unit icosphere: ``(V, 3)`` vertices and each vertex's neighbour indices.

    The icosahedron and its midpoint subdivision as ``trimesh.creation.icosphere`` builds them
    (12, 42, 162 vertices for 0, 1, 2 subdivisions; T3Bench renders from subdivision 2).
    """
    if not 0 <= subdivisions <= 4:
        raise ProtocolError(f"icosphere subdivisions {subdivisions!r} not in 0..4", where="icosphere")
    t = (1.0 + math.sqrt(5.0)) / 2.0
    verts = [[-1, t, 0], [1, t, 0], [-1, -t, 0], [1, -t, 0], [0, -1, t], [0, 1, t],
             [0, -1, -t], [0, 1, -t], [t, 0, -1], [t, 0, 1], [-t, 0, -1], [-t, 0, 1]]  # fmt: skip
    faces = [[0, 11, 5], [0, 5, 1], [0, 1, 7], [0, 7, 10], [0, 10, 11], [1, 5, 9], [5, 11, 4],
             [11, 10, 2], [10, 7, 6], [7, 1, 8], [3, 9, 4], [3, 4, 2], [3, 2, 6], [3, 6, 8],
             [3, 8, 9], [4, 9, 5], [2, 4, 11], [6, 2, 10], [8, 6, 7], [9, 8, 1]]  # fmt: skip
    points = [np.asarray(v, dtype=float) / np.linalg.norm(v) for v in verts]
    for _ in range(subdivisions):
        midpoint: dict[tuple[int, int], int] = {}
        new_faces = []
        for a, b, c in faces:
            ab, bc, ca = (_midpoint(points, midpoint, i, j) for i, j in ((a, b), (b, c), (c, a)))
            new_faces += [[a, ab, ca], [b, bc, ab], [c, ca, bc], [ab, bc, ca]]
        faces = new_faces
    neighbours: list[set[int]] = [set() for _ in points]
    for a, b, c in faces:
        neighbours[a] |= {b, c}
        neighbours[b] |= {a, c}
        neighbours[c] |= {a, b}
    return np.asarray(points), tuple(tuple(sorted(n)) for n in neighbours)


def _midpoint(points: list[np.ndarray], seen: dict[tuple[int, int], int], a: int, b: int) -> int:
    """Index of the unit midpoint of edge (a, b), appended to ``points`` the first time."""
    key = (min(a, b), max(a, b))
    if key not in seen:
        m = points[a] + points[b]
        points.append(m / np.linalg.norm(m))
        seen[key] = len(points) - 1
    return seen[key]
