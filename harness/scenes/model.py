"""The frozen scene model (docs/formats.md "Scene file"): frozen dataclasses mirroring
scene-v1.json and scene-v2.json.

Units: metres, z up; an object's ``position`` is the bottom centre of its box; ``yaw_deg``
rotates about +z, counter-clockwise seen from above. Validation of untrusted files lives in
``harness.scenes.load``; these classes assume well-formed values.

Schema ``t3d-scene/2`` (imports) adds, and ``t3d-scene/1`` files never carry:

* ``kind``: ``"room"`` (floor, four walls; the v1 meaning) or ``"object"`` (a single generated
  object: no walls, a ground plane when ``ground`` is true, camera framed on the objects);
* ``source`` (optional): the imported file's format and the conventions applied (up, front,
  unit, true size, display scale, colour source, a note); see docs/formats.md;
* per object ``tilt``: a unit quaternion ``[w, x, y, z]`` applied in the object's frame before
  the yaw. The full object transform is ``T(position) · Rz(yaw_deg) · R(tilt) · S(size)``: the
  asset's bounding box, scaled per axis to ``size`` (non-uniform scale), its bottom centre at
  the origin, then tilted, yawed and moved. Without ``tilt`` the v1 meaning holds exactly.

Floor-layout semantics (footprints, relations, probes) use :meth:`SceneObject.layout`: the box
in the object's yaw frame that encloses its tilted box; for an untilted object that is exactly
``(position, size, yaw_deg)``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from harness.core.hashing import sha256_file, sha256_json
from harness.core.jsonout import JSONObject, strict

SCENE_SCHEMA = "t3d-scene/1"
SCENE_SCHEMA_V2 = "t3d-scene/2"
KIND_ROOM = "room"
KIND_OBJECT = "object"

if TYPE_CHECKING:
    import numpy as np

Vec2 = tuple[float, float]
Vec3 = tuple[float, float, float]
Quat = tuple[float, float, float, float]


def quat_matrix(q: Quat) -> np.ndarray:
    """(3, 3) rotation matrix of the quaternion ``q`` = (w, x, y, z) (normalised first)."""
    import numpy as np  # lazily: loading v1 scenes must not pay for numpy

    w, x, y, z = (float(v) for v in q)
    n = w * w + x * x + y * y + z * z
    s = 2.0 / n
    return np.array(
        [
            [1 - s * (y * y + z * z), s * (x * y - z * w), s * (x * z + y * w)],
            [s * (x * y + z * w), 1 - s * (x * x + z * z), s * (y * z - x * w)],
            [s * (x * z - y * w), s * (y * z + x * w), 1 - s * (x * x + y * y)],
        ]
    )


def yaw_matrix(yaw_deg: float) -> np.ndarray:
    """(3, 3) rotation about +z by ``yaw_deg`` (counter-clockwise seen from above)."""
    import numpy as np

    t = math.radians(yaw_deg)
    c, s = math.cos(t), math.sin(t)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


@dataclass(frozen=True)
class Room:
    """Rectangular room: floor ``size`` = (x, y) metres centred on the origin, walls of ``wall_height``."""

    size: Vec2
    wall_height: float

    def to_dict(self) -> JSONObject:
        return strict(self)


@dataclass(frozen=True)
class AssetCandidate:
    """A retrieval alternative for an object: asset path and its retrieval score (higher = better)."""

    asset: str
    retrieval_score: float

    def to_dict(self) -> JSONObject:
        return strict(self)


@dataclass(frozen=True)
class SceneObject:
    """One placed object. ``size`` is the (x, y, z) box in metres before the rotation;
    ``tilt`` (schema 2 only) a (w, x, y, z) quaternion (normalised on use) applied before the
    yaw, or None."""

    id: str
    label: str
    asset: str
    position: Vec3
    yaw_deg: float
    size: Vec3
    candidates: tuple[AssetCandidate, ...] | None = None
    tilt: Quat | None = None

    @property
    def volume(self) -> float:
        """Box volume in cubic metres."""
        return self.size[0] * self.size[1] * self.size[2]

    def rotation(self) -> np.ndarray:
        """(3, 3) world rotation ``Rz(yaw_deg) · R(tilt)``."""
        rz = yaw_matrix(self.yaw_deg)
        return rz if self.tilt is None else rz @ quat_matrix(self.tilt)

    def corners(self) -> np.ndarray:
        """(8, 3) world corners of the object's (tilted, yawed) box, metres."""
        import numpy as np

        sx, sy, sz = self.size
        local = np.array(
            [[x, y, z] for x in (-sx / 2, sx / 2) for y in (-sy / 2, sy / 2) for z in (0.0, sz)]
        )
        return local @ self.rotation().T + np.asarray(self.position, dtype=float)

    def layout(self) -> tuple[Vec3, Vec3]:
        """(position, size) of the floor-layout box: the box in the yaw frame (same
        ``yaw_deg``) enclosing the tilted box, bottom centre and extents in metres.

        Untilted objects return ``(position, size)`` unchanged, bit for bit.
        """
        if self.tilt is None:
            return self.position, self.size
        import numpy as np

        sx, sy, sz = self.size
        local = np.array(
            [[x, y, z] for x in (-sx / 2, sx / 2) for y in (-sy / 2, sy / 2) for z in (0.0, sz)]
        )
        pts = local @ quat_matrix(self.tilt).T  # in the yaw frame, relative to position
        lo, hi = pts.min(0), pts.max(0)
        offset = yaw_matrix(self.yaw_deg) @ np.array(
            [(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, lo[2]]
        )
        pos = tuple(float(p + o) for p, o in zip(self.position, offset, strict=True))
        return pos, tuple(float(v) for v in hi - lo)  # type: ignore[return-value]

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "id": self.id,
            "label": self.label,
            "asset": self.asset,
            "position": list(self.position),
            "yaw_deg": self.yaw_deg,
            "size": list(self.size),
        }
        if self.candidates is not None:
            out["candidates"] = [c.to_dict() for c in self.candidates]
        if self.tilt is not None:
            out["tilt"] = list(self.tilt)
        return out


@dataclass(frozen=True)
class Scene:
    """A frozen generated scene: the output of generator ``generator`` for prompt ``prompt_id``."""

    id: str
    generator: str
    prompt_id: str
    prompt: str
    prompt_source: str
    room: Room
    objects: tuple[SceneObject, ...]
    schema: str = field(default=SCENE_SCHEMA)
    kind: str = KIND_ROOM  # schema 2: "room" | "object"
    ground: bool = True  # schema 2, object kind: draw the ground plane
    # schema 2, imports: what file the scene came from and the conventions applied
    # (docs/formats.md "source"); None for generated scenes and older imports
    source: Mapping[str, object] | None = field(default=None, hash=False)

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "schema": self.schema,
            "id": self.id,
            "generator": self.generator,
            "prompt_id": self.prompt_id,
            "prompt": self.prompt,
            "prompt_source": self.prompt_source,
        }
        if self.schema != SCENE_SCHEMA:  # v1 documents stay byte-identical
            out["kind"] = self.kind
            if self.kind == KIND_OBJECT:
                out["ground"] = self.ground
            if self.source is not None:
                out["source"] = dict(self.source)
        out["room"] = self.room.to_dict()
        out["objects"] = [o.to_dict() for o in self.objects]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> Scene:
        """Build from an already validated dict (see ``harness.scenes.load`` for untrusted input)."""
        room = data["room"]
        objects = []
        for obj in data["objects"]:
            cands = obj.get("candidates")
            objects.append(
                SceneObject(
                    id=obj["id"],
                    label=obj["label"],
                    asset=obj["asset"],
                    position=tuple(float(v) for v in obj["position"]),  # type: ignore[arg-type]
                    yaw_deg=float(obj["yaw_deg"]),
                    size=tuple(float(v) for v in obj["size"]),  # type: ignore[arg-type]
                    candidates=None
                    if cands is None
                    else tuple(
                        AssetCandidate(c["asset"], float(c["retrieval_score"])) for c in cands
                    ),
                    tilt=tuple(float(v) for v in obj["tilt"]) if "tilt" in obj else None,  # type: ignore[arg-type]
                )
            )
        return cls(
            schema=data["schema"],
            id=data["id"],
            generator=data["generator"],
            prompt_id=data["prompt_id"],
            prompt=data["prompt"],
            prompt_source=data["prompt_source"],
            room=Room(
                size=tuple(float(v) for v in room["size"]),  # type: ignore[arg-type]
                wall_height=float(room["wall_height"]),
            ),
            objects=tuple(objects),
            kind=data.get("kind", KIND_ROOM),
            ground=bool(data.get("ground", True)),
            source=dict(data["source"]) if isinstance(data.get("source"), dict) else None,
        )

    @property
    def is_object_scene(self) -> bool:
        """A single generated object (no walls), not a room."""
        return self.kind == KIND_OBJECT

    def with_objects(self, objects: tuple[SceneObject, ...], *, id_suffix: str) -> Scene:
        """A copy with other objects and the id ``<id>~<id_suffix>`` (used by probes)."""
        return replace(self, objects=objects, id=f"{self.id}~{id_suffix}")

    @property
    def used_assets(self) -> tuple[str, ...]:
        """Sorted distinct asset paths the objects use (candidates excluded)."""
        return tuple(sorted({o.asset for o in self.objects}))


def scene_identity(
    scene: Scene, root: str | Path, *, asset_sha256: Mapping[str, str] | None = None
) -> str:
    """sha256 over the scene's canonical JSON plus the bytes of every asset it uses.

    Hashed value: canonical JSON of ``{"scene": scene.to_dict(), "assets": {path: sha256}}``,
    asset paths resolved against the scene-set ``root``. Two scenes with the same JSON but a
    changed mesh file get different identities. The files an asset pulls in (an OBJ's
    ``mtllib`` materials and their texture maps, a glTF's buffers and images, a USD's layers
    and textures, see ``harness.scenes.assetdeps``) count as asset bytes too; a reference
    outside the scene set raises SceneError. ``asset_sha256`` (path -> hex digest, e.g. from a verified manifest) avoids re-reading
    files; paths missing from it are hashed.
    """
    from harness.scenes.assetdeps import asset_dependencies

    root = Path(root)
    known = asset_sha256 or {}
    files = set(scene.used_assets)
    for asset in scene.used_assets:
        files.update(asset_dependencies(root, asset))
    assets = {
        path: known[path] if path in known else sha256_file(root / path) for path in sorted(files)
    }
    return sha256_json({"scene": scene.to_dict(), "assets": assets})
