"""Benchmark cameras as harness views: each source's world frame and look-at convention.

A benchmark places its camera in its own world frame (threestudio: z up, assets facing +x;
PyTorch3D and OBJ files: y up, assets facing +z; Blender: z up, front on the -y side) and
builds the camera's orientation with its own look-at rule. The harness renders a scene whose
front faces -y with z up. To show a harness asset as a source shows its assets, a source
camera is carried into the harness frame by the rotation that takes the source's asset front
to -y and its up axis to +z (:data:`FRAMES`), and becomes a :class:`View`: elevation and
azimuth of its position, and, straight above or below (where azimuth alone does not fix the
picture), the azimuth whose harness camera has the source camera's image-right axis.

Every function returns a :class:`View` and raises :class:`ProtocolError` when the source
camera is rolled about its axis (a harness camera cannot roll away from the poles).
"""

from __future__ import annotations

import math

import numpy as np

from harness.core.errors import ProtocolError
from harness.protocol.cameras import View

#: Source frame name → (3, 3) rotation whose columns are the source's x, y and z axes written
#: in harness axes (harness: x right, y back, z up; an asset's front faces -y).
FRAMES: dict[str, np.ndarray] = {
    # Blender's own frame (front view from -y, z up): the harness frame itself
    "blender": np.eye(3),
    # threestudio: z up, azimuth 0 on +x is the prompt's "front view" (assets face +x)
    "threestudio": np.array([[0.0, 1.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]),
    # PyTorch3D / OBJ / glTF: y up, assets face +z (the import rotation of glTF into Blender)
    "y-up-front-z": np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]]),
}

_POLE_DEG = 90.0
_ROLL_TOLERANCE = 1e-6


def frame_matrix(name: str) -> np.ndarray:
    """The (3, 3) rotation of source frame ``name`` (see :data:`FRAMES`)."""
    if name not in FRAMES:
        raise ProtocolError(f"unknown source frame {name!r}", where="frame",
                            hint=f"use one of {', '.join(FRAMES)}")  # fmt: skip
    return FRAMES[name]


def harness_view(position: np.ndarray, right: np.ndarray, frame: str, fov_deg: float | None = None) -> View:
    """The harness view of a source camera at ``position`` (3,) looking at the origin with
    image-right axis ``right`` (3,), both in source frame ``frame``."""
    rot = frame_matrix(frame)
    p = rot @ np.asarray(position, dtype=float)
    r = rot @ np.asarray(right, dtype=float)
    p, r = p / np.linalg.norm(p), r / np.linalg.norm(r)
    elevation = round(math.degrees(math.asin(max(-1.0, min(1.0, float(p[2]))))), 6)
    if abs(elevation) == _POLE_DEG:
        azimuth = math.degrees(math.atan2(float(r[1]), float(r[0])))
    else:
        azimuth = math.degrees(math.atan2(float(p[0]), float(-p[1])))
        yaw = math.radians(azimuth)
        if float(r @ np.array([math.cos(yaw), math.sin(yaw), 0.0])) < 1.0 - _ROLL_TOLERANCE:
            raise ProtocolError("the source camera is rolled about its axis; a harness view cannot roll",
                                where="camera", hint="give the camera an up vector along the frame's up axis")  # fmt: skip
    return View(elevation, round(azimuth % 360.0, 6) % 360.0, fov_deg)


def threestudio_view(elevation_deg: float, azimuth_deg: float, fov_deg: float | None = None) -> View:
    """threestudio's evaluation camera (``threestudio/data/uncond.py``, ``RandomCameraDataset``):
    position ``(cos e cos a, cos e sin a, sin e)``, up +z, ``right = normalize(lookat × up)``."""
    e, a = math.radians(elevation_deg), math.radians(azimuth_deg)
    position = np.array([math.cos(e) * math.cos(a), math.cos(e) * math.sin(a), math.sin(e)])
    right = np.cross(-position, [0.0, 0.0, 1.0])
    return harness_view(position, right, "threestudio", fov_deg)


def pyrender_lookat_view(vertex: np.ndarray, frame: str, fov_deg: float | None = None) -> View:
    """T3Bench's camera at ``vertex`` (``render/meshrender.py``): up +z unless the view is
    within ``|f·z| >= 0.99`` of a pole (then +y), ``r = u × (-v)``, pose columns ``[-r, u', f]``:
    the image-right axis is ``-r``."""
    v = np.asarray(vertex, dtype=float)
    f = v / np.linalg.norm(v)
    up = np.array([0.0, 0.0, 1.0]) if abs(float(f @ [0.0, 0.0, 1.0])) < 0.99 else np.array([0.0, 1.0, 0.0])
    r = np.cross(up, -v)
    return harness_view(v, -r / np.linalg.norm(r), frame, fov_deg)


def _normalize32(v: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    """``torch.nn.functional.normalize(v, eps=eps)`` in float32."""
    return (v / np.float32(max(float(np.linalg.norm(v)), eps))).astype(np.float32)


def pytorch3d_view(elevation_deg: float, azimuth_deg: float, fov_deg: float | None = None) -> View:
    """PyTorch3D's ``look_at_view_transform(dist, elev, azim)`` camera in float32, as it runs:
    ``camera_position_from_spherical_angles`` (y up, azimuth 0 on +z) and ``look_at_rotation``,
    whose near-pole fallback (``|x| <= 5e-3``) replaces the x axis by ``y × z``. PyTorch3D's
    camera +x points left in the image, so the image-right axis is ``-x``."""
    e = np.float32(math.pi / 180.0) * np.float32(elevation_deg)
    a = np.float32(math.pi / 180.0) * np.float32(azimuth_deg)
    pos = np.array([np.cos(e) * np.sin(a), np.sin(e), np.cos(e) * np.cos(a)], dtype=np.float32)
    up = np.array([0.0, 1.0, 0.0], dtype=np.float32)
    z = _normalize32(-pos)
    x = _normalize32(np.cross(up, z))
    y = _normalize32(np.cross(z, x))
    if np.all(np.abs(x) <= 5e-3):
        x = _normalize32(np.cross(y, z))
    # the position's direction from the nominal angles (float32 leaves cos 90° at -4e-8)
    er, ar = math.radians(elevation_deg), math.radians(azimuth_deg)
    nominal = np.array([math.cos(er) * math.sin(ar), math.sin(er), math.cos(er) * math.cos(ar)])
    return harness_view(np.round(nominal, 12), -x.astype(float), "y-up-front-z", fov_deg)


def blender_track_view(position: np.ndarray, fov_deg: float | None = None) -> View:
    """A Blender camera at ``position`` turned by ``to_track_quat("-Z", "Y")`` towards the
    origin (3DCodeBench's ``core/render.py``): its image-right axis is ``forward × z``."""
    p = np.asarray(position, dtype=float)
    return harness_view(p, np.cross(-p, [0.0, 0.0, 1.0]), "blender", fov_deg)
