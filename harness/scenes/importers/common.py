"""Shared geometry for importers: placement decomposition, axis conventions, OBJ output, ids.

Conventions of the scene model (see ``harness.scenes.model``): metres, z up, an object is a box
``size`` (x, y, z) rotated by ``yaw_deg`` about +z and placed with its bottom centre at
``position``; the room is centred on the origin with its floor at z = 0. The renderer fits an
asset's mesh bounding box to the object's box, so an asset's *local* frame must be z-up too.

Source formats place a mesh with a general 4x4 matrix ``M`` (world = M · local). An importer
turns ``M`` into the scene model in :func:`decompose`:

1. world axes are converted to z-up first (``Y_UP_TO_Z_UP`` for y-up sources such as glTF);
2. with ``rebase=True`` (OBJ assets the importer rewrites), the local axis whose image is
   (anti)parallel to world up becomes the asset's up axis; the mesh is re-based by a signed
   axis permutation ``P`` (right-handed) so that it is z-up, and the importer writes that
   re-based mesh as the asset (unchanged bytes when ``P`` is identity). glTF assets are kept
   byte for byte (``rebase=False``, ``P`` = identity);
3. what remains is a rotation times a positive per-axis scale: ``yaw_deg`` is the heading of
   the local x axis, ``size`` = re-based mesh extent × scale, ``position`` = image of the
   re-based box's bottom centre, and a rotation off the vertical axis is kept as the object's
   ``tilt`` quaternion (schema 2; below ~0.001°, float noise, it is snapped upright). A flat mesh (a plane, a picture) gets :data:`FLAT_SIZE` on its flat axis.
   Sheared, mirrored or degenerate transforms are rejected with
   :class:`harness.core.errors.ImportError_`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.core import fileio
from harness.core.errors import ImportError_
from harness.scenes.model import Room

# y-up world (x, y, z) -> z-up world (x, -z, y): a +90° rotation about x (right-handed).
Y_UP_TO_Z_UP = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])
Z_UP = np.eye(3)

# Smallest |cos| between an object's up axis and world up below which the object keeps a tilt;
# above it (tilts under ~0.001°, float noise of exported matrices) it is snapped upright.
_MIN_UPRIGHT_COS = 1.0 - 1e-10
_ORTHO_TOL = 1e-3
FLAT_SIZE = 1e-3  # m: size given to a flat mesh's flat axis (the scene model's smallest length)

_ID_BAD = re.compile(r"[^A-Za-z0-9._~+-]+")


def up_conversion(up: object, *, path: str | Path, pointer: str) -> np.ndarray:
    """World-axis conversion for a declared up vector: +z -> identity, +y -> ``Y_UP_TO_Z_UP``.

    ``up`` may be a list ``[x, y, z]`` or a dict ``{"x", "y", "z"}`` (both occur in sceneState).
    """
    vec: list[float] | None = None
    if isinstance(up, dict) and all(k in up for k in "xyz"):
        vec = [up["x"], up["y"], up["z"]]
    elif isinstance(up, list | tuple) and len(up) == 3:
        vec = list(up)
    if vec is not None and all(isinstance(v, int | float) and not isinstance(v, bool) for v in vec):
        if [float(v) for v in vec] == [0.0, 0.0, 1.0]:
            return Z_UP
        if [float(v) for v in vec] == [0.0, 1.0, 0.0]:
            return Y_UP_TO_Z_UP
    raise ImportError_(
        f"unsupported up axis {up!r}",
        path=path,
        pointer=pointer,
        hint="only +z ([0, 0, 1]) and +y ([0, 1, 0]) up axes are supported",
    )


@dataclass(frozen=True)
class Placement:
    """An object's pose in the scene model plus the re-basing of its mesh.

    ``axes``: signed permutation matrix ``P`` (3x3, rows = new local axes in old coordinates);
    re-based mesh vertices are ``P @ v``. ``position``/``size`` metres, ``yaw_deg`` degrees.
    """

    axes: tuple[tuple[float, float, float], ...]
    position: tuple[float, float, float]
    yaw_deg: float
    size: tuple[float, float, float]
    tilt: tuple[float, float, float, float] | None = None  # (w, x, y, z), schema 2

    @property
    def is_identity(self) -> bool:
        return np.array_equal(np.asarray(self.axes), np.eye(3))

    @property
    def tag(self) -> str:
        """Short stable name of the re-basing, used in converted asset file names."""
        names = []
        for row in self.axes:
            k = int(np.argmax(np.abs(row)))
            names.append(("-" if row[k] < 0 else "") + "xyz"[k])
        return "".join(names).replace("-", "n")


def decompose(
    matrix: np.ndarray,
    local_lo: np.ndarray,
    local_hi: np.ndarray,
    *,
    unit: float = 1.0,
    rebase: bool = True,
    path: str | Path,
    pointer: str,
) -> Placement:
    """Turn a z-up world 4x4 ``matrix`` (world = M · local) and the mesh's local bounding box
    ``[local_lo, local_hi]`` (3-vectors, mesh units) into a :class:`Placement` in metres
    (``unit`` = metres per mesh/world unit). See the module docstring for the rules."""
    m = np.asarray(matrix, dtype=float)
    if m.shape != (4, 4) or not np.all(np.isfinite(m)):
        raise ImportError_("transform is not a finite 4x4 matrix", path=path, pointer=pointer)
    if not np.allclose(m[3], [0.0, 0.0, 0.0, 1.0], atol=1e-9):
        raise ImportError_(
            "transform has a projective bottom row",
            path=path,
            pointer=pointer,
            hint="expected [0, 0, 0, 1]",
        )
    lin, trans = m[:3, :3], m[:3, 3]
    with np.errstate(over="ignore"):
        scale = np.linalg.norm(lin, axis=0)
    if not np.all(np.isfinite(scale)):
        raise ImportError_(
            "transform scale overflows", path=path, pointer=pointer, hint="scale entries must be below ~1e150"
        )
    if np.any(scale < 1e-12):
        raise ImportError_("transform has a zero scale", path=path, pointer=pointer)
    rot = lin / scale
    if not np.allclose(rot.T @ rot, np.eye(3), atol=_ORTHO_TOL):
        raise ImportError_(
            "transform shears the object", path=path, pointer=pointer, hint="only rotation + scale"
        )
    if np.linalg.det(rot) < 0:
        raise ImportError_(
            "transform mirrors the object",
            path=path,
            pointer=pointer,
            hint="negative scales are unsupported",
        )
    k = int(np.argmax(np.abs(rot[2]))) if rebase else 2
    i, j = (k + 1) % 3, (k + 2) % 3  # cyclic order keeps the frame right-handed
    sign = 1.0 if (rot[2, k] > 0 or not rebase) else -1.0
    axes = np.zeros((3, 3))
    axes[0, i] = 1.0
    axes[1, j] = sign
    axes[2, k] = sign
    lo = np.asarray(local_lo, dtype=float)
    hi = np.asarray(local_hi, dtype=float)
    a, b = axes @ lo, axes @ hi
    new_lo, new_hi = np.minimum(a, b), np.maximum(a, b)
    extent = new_hi - new_lo
    new_scale = scale[[i, j, k]]
    size = np.maximum(extent * new_scale * unit, FLAT_SIZE)
    rebased = lin @ axes.T  # maps re-based local coordinates to world
    x_world = rebased[:, 0]
    yaw = math.degrees(math.atan2(x_world[1], x_world[0]))
    tilt = None
    if not sign * rot[2, k] >= _MIN_UPRIGHT_COS:  # tilted (or, not re-based, upside down)
        from harness.scenes.model import yaw_matrix

        turn = rot @ axes.T  # rotation of the re-based frame
        yaw = math.degrees(math.atan2(turn[1, 0], turn[0, 0])) if abs(turn[2, 0]) < 1 - 1e-9 else 0.0
        tilt = tuple(_clean(v) for v in quat_from_matrix(yaw_matrix(yaw).T @ turn))
    bottom = np.array([(new_lo[0] + new_hi[0]) / 2, (new_lo[1] + new_hi[1]) / 2, new_lo[2]])
    position = (rebased @ bottom + trans) * unit
    return Placement(
        axes=tuple(tuple(float(v) for v in row) for row in axes),  # type: ignore[misc]
        position=tuple(_clean(v) for v in position),  # type: ignore[arg-type]
        yaw_deg=_clean(yaw),
        size=tuple(_clean(v) for v in size),  # type: ignore[arg-type]
        tilt=tilt,  # type: ignore[arg-type]
    )


def quat_from_matrix(rot: np.ndarray) -> tuple[float, float, float, float]:
    """Unit quaternion (w, x, y, z), w >= 0, of a (3, 3) rotation matrix."""
    m = np.asarray(rot, dtype=float)
    tr = m[0, 0] + m[1, 1] + m[2, 2]
    if tr > 0:
        s = math.sqrt(tr + 1.0) * 2
        q = (0.25 * s, (m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s)
    elif m[0, 0] > m[1, 1] and m[0, 0] > m[2, 2]:
        s = math.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2]) * 2
        q = ((m[2, 1] - m[1, 2]) / s, 0.25 * s, (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s)
    elif m[1, 1] > m[2, 2]:
        s = math.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2]) * 2
        q = ((m[0, 2] - m[2, 0]) / s, (m[0, 1] + m[1, 0]) / s, 0.25 * s, (m[1, 2] + m[2, 1]) / s)
    else:
        s = math.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1]) * 2
        q = ((m[1, 0] - m[0, 1]) / s, (m[0, 2] + m[2, 0]) / s, (m[1, 2] + m[2, 1]) / s, 0.25 * s)
    arr = np.asarray(q) / np.linalg.norm(q)
    if arr[0] < 0:
        arr = -arr
    return tuple(float(v) for v in arr)  # type: ignore[return-value]


def _clean(value: float, digits: int = 9) -> float:
    """Round away float noise (1e-16 residues of rotations) so imports are reproducible."""
    out = round(float(value), digits)
    return 0.0 if out == 0 else out


def sanitize_id(raw: object, fallback: str) -> str:
    """A valid scene-model identifier from an arbitrary name (invalid runs become '_')."""
    text = _ID_BAD.sub("_", str(raw) if raw is not None else "").strip("_.~+-")
    if not text or not text[0].isalnum():
        text = fallback
    return text[:128]


def unique_ids(names: Iterable[str]) -> list[str]:
    """Deduplicate ids by appending ``-2``, ``-3``, ... to repeats (first keeps its name)."""
    seen: dict[str, int] = {}
    taken = set()
    out = []
    for name in names:
        candidate = name
        while candidate in taken:
            seen[name] = seen.get(name, 1) + 1
            candidate = f"{name}-{seen[name]}"
        taken.add(candidate)
        out.append(candidate)
    return out


def room_from_points(
    xy: np.ndarray, wall_height: float, *, path: str | Path, pointer: str
) -> tuple[Room, tuple[float, float]]:
    """Axis-aligned room around floor points ``xy`` (N x 2, metres) and its centre (x, y).

    Non-rectangular floors become their bounding rectangle.
    """
    pts = np.asarray(xy, dtype=float).reshape(-1, 2)
    if len(pts) == 0 or not np.all(np.isfinite(pts)):
        raise ImportError_("no finite floor points", path=path, pointer=pointer)
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    size = hi - lo
    if np.any(size <= 0) or not (wall_height > 0 and math.isfinite(wall_height)):
        raise ImportError_(
            f"degenerate room: floor {size.tolist()} m, wall height {wall_height} m",
            path=path,
            pointer=pointer,
        )
    centre = (lo + hi) / 2
    room = Room(size=(_clean(size[0]), _clean(size[1])), wall_height=_clean(wall_height))
    return room, (float(centre[0]), float(centre[1]))


def write_bytes_atomic(target: Path, data: bytes) -> None:
    """Write ``data`` to ``target`` (creating parents) unless identical bytes are already there."""
    if target.is_file() and target.stat().st_size == len(data) and target.read_bytes() == data:
        return
    fileio.write_bytes_atomic(target, data)


@dataclass(frozen=True)
class PlacedObject:
    """An imported object before room centring: ``placement`` in source world metres (z up)."""

    id: str
    label: str
    asset: str
    placement: Placement


META_KEYS = ("scene_id", "generator", "prompt_id", "prompt", "prompt_source")


def resolve_meta(
    options: dict[str, str | None], file_meta: object, *, default_source: str, path: str | Path
) -> dict[str, str]:
    """Scene identity fields: explicit ``options`` win over the file's metadata dict.

    Required: generator, prompt_id, prompt. ``scene_id`` defaults to ``<generator>__<prompt_id>``
    and ``prompt_source`` to ``default_source``.
    """
    meta = file_meta if isinstance(file_meta, dict) else {}
    out: dict[str, str] = {}
    for key in META_KEYS:
        value = options.get(key)
        if value is None:
            value = meta.get(key)
        if value is not None and not isinstance(value, str):
            raise ImportError_(f"metadata {key} must be a string, got {value!r}", path=path)
        if value is not None:
            out[key] = value
    missing = [k for k in ("generator", "prompt_id", "prompt") if not out.get(k)]
    if missing:
        raise ImportError_(
            f"missing scene metadata: {', '.join(missing)}",
            path=path,
            hint="pass --generator, --prompt-id and --prompt, or store them in the file's "
            "metadata (glTF: asset.extras; sceneState: the top-level metadata object)",
        )
    out.setdefault("prompt_source", default_source)
    out.setdefault("scene_id", f"{out['generator']}__{out['prompt_id']}")
    return out


def assemble_scene(
    meta: dict[str, str],
    objects: list[PlacedObject],
    room: Room,
    centre: tuple[float, float, float],
    *,
    path: str | Path,
):
    """Build the Scene: move ``centre`` (room centre x, y and floor z) to the origin."""
    from harness.scenes.model import Scene, SceneObject

    if not objects:
        raise ImportError_("scene has no objects", path=path, hint="a scene needs >= 1 object")
    cx, cy, cz = centre
    placed = tuple(
        SceneObject(
            id=o.id,
            label=o.label,
            asset=o.asset,
            position=(
                _clean(o.placement.position[0] - cx),
                _clean(o.placement.position[1] - cy),
                _clean(o.placement.position[2] - cz),
            ),
            yaw_deg=o.placement.yaw_deg,
            size=o.placement.size,
            tilt=o.placement.tilt,
        )
        for o in objects
    )
    return Scene(
        id=meta["scene_id"],
        generator=meta["generator"],
        prompt_id=meta["prompt_id"],
        prompt=meta["prompt"],
        prompt_source=meta["prompt_source"],
        room=room,
        objects=placed,
    )


def footprint_room(
    objects: list[PlacedObject], *, path: str | Path
) -> tuple[Room, tuple[float, float, float]]:
    """Fallback room when the source has no floor: the objects' footprint rectangle, floor at the
    lowest object bottom, walls max(2.5 m, tallest object top above that floor)."""
    corners = []
    bottoms, tops = [], []
    for o in objects:
        if o.placement.tilt is not None:
            from harness.scenes.model import SceneObject

            p = o.placement
            pts = SceneObject("o", "o", "o", p.position, p.yaw_deg, p.size, tilt=p.tilt).corners()
            corners.extend((float(x), float(y)) for x, y in pts[:, :2])
            bottoms.append(float(pts[:, 2].min()))
            tops.append(float(pts[:, 2].max()))
            continue
        bottoms.append(o.placement.position[2])
        tops.append(o.placement.position[2] + o.placement.size[2])
        hx, hy = o.placement.size[0] / 2, o.placement.size[1] / 2
        yaw = math.radians(o.placement.yaw_deg)
        c, s = math.cos(yaw), math.sin(yaw)
        for dx, dy in ((-hx, -hy), (hx, -hy), (hx, hy), (-hx, hy)):
            corners.append(
                (
                    o.placement.position[0] + c * dx - s * dy,
                    o.placement.position[1] + s * dx + c * dy,
                )
            )
    floor_z = min(bottoms)
    top = max(tops) - floor_z
    room, (cx, cy) = room_from_points(
        np.array(corners), max(2.5, top), path=path, pointer="/objects"
    )
    return room, (cx, cy, floor_z)
