"""Axis, front and unit conventions of a generated object, as options recorded in the scene.

A generator writes its objects in one convention: which file axis is up, which way the object
faces, and what a file unit measures. The scene model is metres, z up, and an object scene's
c0 camera looks along +y from the -y side, so an object that *faces -y* faces the camera.

:class:`Conventions` holds what the user said (``--up``, ``--front``, ``--unit`` / ``--scale``)
and :func:`resolve` fills in the documented default of each format:

=========  ==========  ======  ===========================================================
format     up          front   why
=========  ==========  ======  ===========================================================
glTF       y           +z      the glTF 2.0 specification (Blender's importer converts)
OBJ        y           +z      the de-facto OBJ convention (TripoSR, most DCC exports)
PLY        z           -y      Shap-E and Blender write z-up PLY
STL        z           -y      the 3D-printing convention
USD        z           -y      after Blender's importer applied the stage's ``upAxis``
=========  ==========  ======  ===========================================================

``up`` is any signed file axis (``x``, ``y``, ``z`` or ``-x``, ``-y``, ``-z``; ``+x`` is read as
``x``), so an x-up or upside-down export stands upright too. ``front`` names the file axis the
object's front points along; with only ``up`` given, the front is the format's default front
when that is horizontal, else the first horizontal one of ``-y``, ``+z``, ``+x``
(:data:`FRONT_FALLBACK`); ``unit`` (``m``, ``cm``,
``mm``, ``in``) or ``scale`` (metres per file unit) gives the size; the default is metres.
:meth:`Resolved.rotation` is the rotation that takes file coordinates to the scene frame
(up -> +z, front -> -y).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from harness.core.errors import ImportError_

UP_AXES = ("x", "-x", "y", "-y", "z", "-z")  # canonical spellings; "+x" etc. are accepted
FRONT_AXES = ("+x", "-x", "+y", "-y", "+z", "-z")
#: the fronts tried in order when the default front lies along a user-given up axis
FRONT_FALLBACK = ("-y", "+z", "+x")
UNITS = {"m": 1.0, "cm": 0.01, "mm": 0.001, "in": 0.0254}
DEFAULTS = {  # format -> (up, front)
    "gltf": ("y", "+z"),
    "obj": ("y", "+z"),
    "ply": ("z", "-y"),
    "stl": ("z", "-y"),
    "usd": ("z", "-y"),
}
#: the frame Blender's importer already put the file in (file -> Blender coordinates)
_IMPORTED_FRAME = {"gltf": ("y", "+z")}
SIZE_MIN, SIZE_MAX = 1e-6, 1e6  # metres: the object sizes an object scene accepts
DISPLAY_MIN, DISPLAY_MAX = 0.01, 100.0  # metres: outside, the object is shown at DISPLAY_SIZE
DISPLAY_SIZE = 1.0  # metres: the largest side of an object shown at display scale


def canonical_up(name: str) -> str:
    """``"+x"`` -> ``"x"``; other spellings unchanged (checked by :meth:`Conventions.check`)."""
    return name[1:] if name in ("+x", "+y", "+z") else name


def horizontal_fronts(up: str) -> tuple[str, ...]:
    """The four signed file axes perpendicular to ``up`` (the fronts an object can have)."""
    return tuple(f for f in FRONT_AXES if f[-1] != up[-1])


def _axis(name: str) -> np.ndarray:
    sign = -1.0 if name.startswith("-") else 1.0
    v = np.zeros(3)
    v["xyz".index(name[-1])] = sign
    return v


def rotation(up: str, front: str) -> np.ndarray:
    """(3, 3) rotation taking file coordinates to the scene frame: ``up`` -> +z and ``front``
    -> -y (faces the c0 camera). Rows are the file vectors that become x, y, z."""
    u, f = _axis(up), _axis(front)
    sy, sz = -f, u
    return np.stack([np.cross(sy, sz), sy, sz])


@dataclass(frozen=True)
class Conventions:
    """What the user said; ``None`` means the format's default (see the module docstring)."""

    up: str | None = None
    front: str | None = None
    unit: str | None = None
    scale: float | None = None

    @classmethod
    def from_mapping(cls, raw: object, *, path: object = "", pointer: str = "") -> Conventions:
        """From a prompts/mapping file entry ``{"up", "front", "unit", "scale"}`` (all
        optional); raises ImportError_ for anything else."""
        if raw is None:
            return cls()
        if not isinstance(raw, dict) or set(raw) - {"up", "front", "unit", "scale"}:
            raise ImportError_("conventions must be an object with up, front, unit or scale",
                               path=path, pointer=pointer,
                               hint='e.g. {"up": "z", "front": "-y", "unit": "mm"}')
        scale = raw.get("scale")
        if scale is not None and (isinstance(scale, bool) or not isinstance(scale, int | float)):
            raise ImportError_("conventions scale must be a number", path=path, pointer=pointer)
        up = raw.get("up")
        out = cls(canonical_up(up) if isinstance(up, str) else up, raw.get("front"),
                  raw.get("unit"), None if scale is None else float(scale))
        out.check(path=path, pointer=pointer)
        return out

    def check(self, *, path: object = "", pointer: str = "") -> None:
        """Raise ImportError_ for an unknown axis or unit, or ``unit`` with ``scale``."""
        if self.up is not None and (not isinstance(self.up, str)
                                    or canonical_up(self.up) not in UP_AXES):
            raise ImportError_(f"unknown up axis {self.up!r}", path=path, pointer=pointer,
                               hint="up is one of x, y, z, -x, -y, -z")
        if self.front is not None and self.front not in FRONT_AXES:
            raise ImportError_(f"unknown front axis {self.front!r}", path=path, pointer=pointer,
                               hint=f"front is one of {', '.join(FRONT_AXES)}")
        if self.unit is not None and self.unit not in UNITS:
            raise ImportError_(f"unknown unit {self.unit!r}", path=path, pointer=pointer,
                               hint=f"unit is one of {', '.join(UNITS)}")
        if self.unit is not None and self.scale is not None:
            raise ImportError_("give a unit or a scale, not both", path=path, pointer=pointer)
        if self.scale is not None and not (math.isfinite(self.scale) and self.scale > 0):
            raise ImportError_(f"scale {self.scale!r} must be a positive finite number",
                               path=path, pointer=pointer, hint="metres per file unit")

    def resolve(self, fmt: str, *, path: object = "") -> Resolved:
        """The conventions of a ``fmt`` file with defaults filled in."""
        self.check(path=path)
        d_up, d_front = DEFAULTS[fmt]
        up = canonical_up(self.up) if self.up else d_up
        front = self.front or next(f for f in (d_front, *FRONT_FALLBACK) if f[-1] != up[-1])
        if front[-1] == up[-1]:
            raise ImportError_(f"front {front} lies along the up axis {up}", path=path,
                               hint="the front must be a horizontal axis of the file")
        if self.scale is not None:
            return Resolved(fmt, up, front, None, self.scale)
        unit = self.unit or "m"
        return Resolved(fmt, up, front, unit, UNITS[unit])


@dataclass(frozen=True)
class Resolved:
    """Conventions in force: ``metres_per_unit`` from ``unit`` (or ``--scale`` when unit is
    None)."""

    format: str
    up: str
    front: str
    unit: str | None
    metres_per_unit: float

    def rotation(self) -> np.ndarray:
        """(3, 3) rotation from the frame Blender imported the file in to the scene frame."""
        frame = _IMPORTED_FRAME.get(self.format, ("z", "-y"))
        return rotation(self.up, self.front) @ rotation(*frame).T

    def record(self) -> dict[str, object]:
        """The scene file's ``source`` fields for these conventions."""
        out: dict[str, object] = {"up": self.up, "front": self.front}
        if self.unit is not None:
            out["unit"] = self.unit
        out["metres_per_unit"] = self.metres_per_unit
        return out


def display_scale(extent_m: np.ndarray, *, path: object) -> float:
    """Factor an object of ``extent_m`` (3,) metres is shown at: 1 when its largest side is in
    [:data:`DISPLAY_MIN`, :data:`DISPLAY_MAX`], else the factor that makes it
    :data:`DISPLAY_SIZE` (object scenes are framed from their bounds, so only the
    proportions show). Raises ImportError_ outside [:data:`SIZE_MIN`, :data:`SIZE_MAX`]."""
    largest = float(np.max(extent_m)) if np.all(np.isfinite(extent_m)) else math.inf
    if not SIZE_MIN <= largest <= SIZE_MAX:
        raise ImportError_(
            f"the object is {largest:.6g} m across, outside [{SIZE_MIN:g}, {SIZE_MAX:g}] m",
            path=path,
            hint="check its unit: pass --unit m|cm|mm|in or --scale METRES_PER_UNIT",
        )
    if DISPLAY_MIN <= largest <= DISPLAY_MAX:
        return 1.0
    return DISPLAY_SIZE / largest


NOTES = {
    "stl": "STL carries no colour: grey is the object's true appearance in this file",
    "none": "the file has no colours or materials: rendered in the default grey",
    "splats": "3D Gaussian splats drawn as ellipsoids (DC colour as emission, opacity as "
    "alpha; view-dependent colour dropped); lighting does not apply",
    "points": "point cloud drawn as spheres sized from the point spacing",
}


def source_record(detected: object, conv: dict[str, object], facts: dict[str, object],
                  size_m: np.ndarray, fit: float) -> dict[str, object]:
    """The scene's ``source`` object (see docs/formats.md "Scene file")."""
    out: dict[str, object] = {"format": detected.format}
    if detected.variant is not None:
        out["variant"] = detected.variant
    out.update(conv)
    out["size_m"] = [round(float(v), 9) for v in size_m]
    out["display_scale"] = round(float(fit), 12)
    colour = facts.get("colour", "material")
    out["colour"] = colour
    note = None
    if detected.format == "stl" and colour == "none":
        note = NOTES["stl"]
    elif detected.variant in ("splats", "points"):
        note = NOTES[detected.variant]
    elif colour == "none":
        note = NOTES["none"]
    if note:
        out["note"] = note
    return out
