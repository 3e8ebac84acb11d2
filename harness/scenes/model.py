"""The frozen scene model (docs/formats.md "Scene file"): frozen dataclasses mirroring scene-v1.json.

Units: metres, z up; an object's ``position`` is the bottom centre of its box; ``yaw_deg``
rotates about +z, counter-clockwise seen from above. Validation of untrusted files lives in
``harness.scenes.load``; these classes assume well-formed values.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from harness.hashing import sha256_file, sha256_json

SCENE_SCHEMA = "t3d-scene/1"

Vec2 = tuple[float, float]
Vec3 = tuple[float, float, float]


@dataclass(frozen=True)
class Room:
    """Rectangular room: floor ``size`` = (x, y) metres centred on the origin, walls of ``wall_height``."""

    size: Vec2
    wall_height: float

    def to_dict(self) -> dict[str, Any]:
        return {"size": list(self.size), "wall_height": self.wall_height}


@dataclass(frozen=True)
class AssetCandidate:
    """A retrieval alternative for an object: asset path and its retrieval score (higher = better)."""

    asset: str
    retrieval_score: float

    def to_dict(self) -> dict[str, Any]:
        return {"asset": self.asset, "retrieval_score": self.retrieval_score}


@dataclass(frozen=True)
class SceneObject:
    """One placed object. ``size`` is the (x, y, z) box in metres before the yaw rotation."""

    id: str
    label: str
    asset: str
    position: Vec3
    yaw_deg: float
    size: Vec3
    candidates: tuple[AssetCandidate, ...] | None = None

    @property
    def volume(self) -> float:
        """Box volume in cubic metres."""
        return self.size[0] * self.size[1] * self.size[2]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "label": self.label,
            "asset": self.asset,
            "position": list(self.position),
            "yaw_deg": self.yaw_deg,
            "size": list(self.size),
        }
        if self.candidates is not None:
            out["candidates"] = [c.to_dict() for c in self.candidates]
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

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": self.schema,
            "id": self.id,
            "generator": self.generator,
            "prompt_id": self.prompt_id,
            "prompt": self.prompt,
            "prompt_source": self.prompt_source,
            "room": self.room.to_dict(),
            "objects": [o.to_dict() for o in self.objects],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Scene:
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
        )

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
    changed mesh file get different identities. The files an OBJ asset pulls in (``mtllib``
    materials and their texture maps, see ``harness.scenes.assetdeps``) count as asset bytes
    too. ``asset_sha256`` (path -> hex digest, e.g. from a verified manifest) avoids re-reading
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
