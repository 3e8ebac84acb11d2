"""Import a SceneEval ``sceneState`` JSON file into the scene model.

Input (SceneEval, github.com/3dlg-hcvc/SceneEval, ``scenes/scene_state.py``)::

    {"format": "sceneState",
     "scene": {"version": "scene@1.0.2", "up": [0, 0, 1], "front": [0, 1, 0], "unit": 1.0,
               "arch": {"up": [0, 0, 1], "scaleToMeters": 1, "elements": [
                   {"type": "Wall", "height": 2.8, "points": [[x, y, z], [x, y, z]], ...},
                   {"type": "Floor", "points": [[x, y, z], ...]}, ...]},
               "object": [{"id"?, "index", "modelId": "<source>.<assetId>",
                           "transform": {"rows": 4, "cols": 4, "data": [16 numbers]}}, ...]},
     "metadata"?: {"generator", "prompt_id", "prompt", "prompt_source", "scene_id"}}

Rules:

* ``transform.data`` is a column-major 4x4 (SceneEval: ``np.reshape(data, (4, 4)).T``) that maps
  the asset's own mesh coordinates to world; ``unit`` is metres per world unit.
* up axis: ``scene.up`` (list or ``{x, y, z}``; default +z, SceneEval's default) and
  ``arch.up`` are each +z or +y; +y worlds are rotated to z-up (``common.Y_UP_TO_Z_UP``).
  Assets are frequently y-up in their own files (objaverse GLBs); the transform then carries
  the y-to-z turn, and the importer re-bases the mesh so its local up is z (see
  ``common.decompose``), writing the re-based OBJ as the asset.
* ``modelId`` ``"<source>.<assetId>"`` (split at the first dot) resolves under the user's
  ``asset_root`` to the first existing file of ``<source>/<assetId>.obj``,
  ``<source>/<assetId>/<assetId>.obj``, ``<source>/<assetId>.glb``,
  ``<source>/<assetId>/<assetId>.glb``. OBJ assets whose axes need no re-basing are copied
  byte for byte (with their ``mtllib`` files and the texture maps those name); re-based OBJs
  and all GLBs are written as OBJ. Assets land in ``<out_root>/assets/<source>/``.
* size = the asset's vertex bounding box × the transform's scale; position = bottom centre of
  the transformed box; yaw = heading of the re-based local x axis about +z.
* room: ``Floor`` elements' points give the floor rectangle (bounding box of the polygon) and
  floor height; ``Wall`` elements' largest ``height`` the wall height (without walls:
  max(2.5 m, tallest object)); without a floor, walls' points; with neither, the objects'
  footprint. The room centre moves to the origin, the floor to z = 0.
* label: ``labels[modelId]`` if given, else the object's ``label``/``category`` field, else the
  asset id. id: the object's ``id`` (sanitised, deduplicated), else ``obj<index>``.
* metadata: keyword options win over the file's top-level ``metadata`` object; generator,
  prompt_id and prompt are required; ``prompt_source`` defaults to ``"sceneState"``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from harness.errors import ImportError_
from harness.scenes.importers.common import (
    PlacedObject,
    Placement,
    assemble_scene,
    decompose,
    footprint_room,
    format_obj,
    resolve_meta,
    room_from_points,
    sanitize_id,
    unique_ids,
    up_conversion,
    write_bytes_atomic,
)
from harness.scenes.importers.gltf_io import triangle_soup
from harness.scenes.load import validate_scene
from harness.scenes.model import Scene

SCENE_VERSION = "scene@1.0.2"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def _reject_constant(literal: str) -> Any:
    raise ValueError(f"non-finite number {literal}")


def _number(value: Any, *, path: Path, pointer: str, positive: bool = False) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or (positive and value <= 0):
        need = "a positive number" if positive else "a finite number"
        raise ImportError_(f"expected {need}, got {value!r}", path=path, pointer=pointer)
    return float(value)


def import_scenestate(
    path: Path | str,
    *,
    asset_root: Path | str,
    out_root: Path | str,
    generator: str | None = None,
    prompt_id: str | None = None,
    prompt: str | None = None,
    prompt_source: str | None = None,
    scene_id: str | None = None,
    labels: Mapping[str, str] | None = None,
) -> Scene:
    """Import one sceneState file; assets resolve under ``asset_root`` and are written under
    ``out_root`` (the scene-set root). Returns a Scene that passed ``validate_scene``."""
    path = Path(path)
    asset_root = Path(asset_root).resolve()
    out_root = Path(out_root)
    doc = _read(path)
    spec = doc.get("scene")
    if not isinstance(spec, dict):
        raise ImportError_("missing 'scene' object", path=path, pointer="/scene")
    version = spec.get("version", SCENE_VERSION)
    if version != SCENE_VERSION:
        raise ImportError_(
            f"unsupported scene version {version!r}",
            path=path,
            pointer="/scene/version",
            hint=f"this importer reads {SCENE_VERSION}",
        )
    options = {
        "generator": generator,
        "prompt_id": prompt_id,
        "prompt": prompt,
        "prompt_source": prompt_source,
        "scene_id": scene_id,
    }
    meta = resolve_meta(options, doc.get("metadata"), default_source="sceneState", path=path)
    to_z = up_conversion(spec.get("up", [0, 0, 1]), path=path, pointer="/scene/up")
    unit = _number(spec.get("unit", 1.0), path=path, pointer="/scene/unit", positive=True)

    raw_objects = spec.get("object")
    if not isinstance(raw_objects, list) or not raw_objects:
        raise ImportError_(
            "scene.object must be a non-empty array", path=path, pointer="/scene/object"
        )
    meshes = _MeshCache(asset_root, out_root, path)
    pending = []
    for i, obj in enumerate(raw_objects):
        where = f"/scene/object/{i}"
        if not isinstance(obj, dict):
            raise ImportError_("object must be a JSON object", path=path, pointer=where)
        model_id = obj.get("modelId")
        source, asset_id = _split_model_id(model_id, path, f"{where}/modelId")
        matrix = _matrix(obj.get("transform"), path, f"{where}/transform")
        world = np.eye(4)
        world[:3, :3] = to_z @ matrix[:3, :3]
        world[:3, 3] = to_z @ matrix[:3, 3]
        lo, hi = meshes.bounds(source, asset_id, f"{where}/modelId")
        placement = decompose(world, lo, hi, unit=unit, path=path, pointer=f"{where}/transform")
        asset = meshes.write(source, asset_id, placement)
        label = _label(obj, model_id, asset_id, labels)
        index = obj.get("index", i)
        pending.append((sanitize_id(obj.get("id"), f"obj{index}"), label, asset, placement))
    ids = unique_ids(p[0] for p in pending)
    objects = [PlacedObject(k, p[1], p[2], p[3]) for k, p in zip(ids, pending, strict=True)]
    room, centre = _room(spec.get("arch"), objects, to_z, unit, path)
    scene = assemble_scene(meta, objects, room, centre, path=path)
    return validate_scene(scene, out_root, path=path)


def _read(path: Path) -> dict[str, Any]:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ImportError_(
            f"cannot read sceneState file: {exc.strerror or exc}", path=path
        ) from None
    try:
        doc = json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ImportError_(f"malformed sceneState JSON: {exc}", path=path) from None
    if not isinstance(doc, dict) or doc.get("format") != "sceneState":
        raise ImportError_(
            "not a sceneState file",
            path=path,
            pointer="/format",
            hint='expected "format": "sceneState"',
        )
    return doc


def _split_model_id(model_id: Any, path: Path, pointer: str) -> tuple[str, str]:
    if isinstance(model_id, str) and "." in model_id:
        source, asset_id = model_id.split(".", 1)
        if _NAME.match(source) and _NAME.match(asset_id) and ".." not in asset_id:
            return source, asset_id
    raise ImportError_(
        f"invalid modelId {model_id!r}",
        path=path,
        pointer=pointer,
        hint='expected "<source>.<assetId>" with letters, digits, "_", "-", "."',
    )


def _matrix(transform: Any, path: Path, pointer: str) -> np.ndarray:
    if not isinstance(transform, dict):
        raise ImportError_("transform must be an object", path=path, pointer=pointer)
    if transform.get("rows", 4) != 4 or transform.get("cols", 4) != 4:
        raise ImportError_("transform must be 4x4", path=path, pointer=pointer)
    data = transform.get("data")
    if not isinstance(data, list) or len(data) != 16:
        raise ImportError_(
            "transform.data must hold 16 numbers", path=path, pointer=f"{pointer}/data"
        )
    values = [_number(v, path=path, pointer=f"{pointer}/data/{k}") for k, v in enumerate(data)]
    return np.array(values).reshape(4, 4).T  # column-major storage


def _label(
    obj: dict[str, Any], model_id: str, asset_id: str, labels: Mapping[str, str] | None
) -> str:
    if labels and isinstance(labels.get(model_id), str) and labels[model_id].strip():
        return labels[model_id].strip()
    for key in ("label", "category"):
        value = obj.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return asset_id


class _MeshCache:
    """Finds, reads and writes each source asset once per import."""

    _PATTERNS = ("{s}/{a}.obj", "{s}/{a}/{a}.obj", "{s}/{a}.glb", "{s}/{a}/{a}.glb")

    def __init__(self, asset_root: Path, out_root: Path, scene_path: Path):
        self.asset_root, self.out_root, self.scene_path = asset_root, out_root, scene_path
        self._mesh: dict[tuple[str, str], tuple[Path, np.ndarray, np.ndarray | None, bytes]] = {}

    def _load(self, source: str, asset_id: str, pointer: str):
        key = (source, asset_id)
        if key in self._mesh:
            return self._mesh[key]
        for pattern in self._PATTERNS:
            candidate = (self.asset_root / pattern.format(s=source, a=asset_id)).resolve()
            if candidate.is_relative_to(self.asset_root) and candidate.is_file():
                break
        else:
            tried = ", ".join(p.format(s=source, a=asset_id) for p in self._PATTERNS)
            raise ImportError_(
                f"asset {source}.{asset_id} not found under {self.asset_root}",
                path=self.scene_path,
                pointer=pointer,
                hint=f"looked for {tried}",
            )
        if candidate.suffix == ".glb":
            verts, faces = triangle_soup(candidate)
            entry = (candidate, verts, faces, b"")
        else:
            raw = candidate.read_bytes()
            verts = _obj_vertices(raw, candidate)
            entry = (candidate, verts, None, raw)
        self._mesh[key] = entry
        return entry

    def bounds(self, source: str, asset_id: str, pointer: str) -> tuple[np.ndarray, np.ndarray]:
        _, verts, _, _ = self._load(source, asset_id, pointer)
        return verts.min(axis=0), verts.max(axis=0)

    def write(self, source: str, asset_id: str, placement: Placement) -> str:
        src, verts, faces, raw = self._load(source, asset_id, "")
        folder = f"assets/{source}"
        if faces is None and placement.is_identity:
            rel = f"{folder}/{asset_id}.obj"
            write_bytes_atomic(self.out_root / rel, raw)
            _copy_materials(src, raw, self.out_root / folder)
            return rel
        suffix = "" if placement.is_identity else f".{placement.tag}"
        rel = f"{folder}/{asset_id}{suffix}.obj"
        axes = np.asarray(placement.axes)
        if faces is None:
            data = _rebase_obj(raw, axes)
            _copy_materials(src, raw, self.out_root / folder)
        else:
            data = format_obj(verts @ axes.T, faces, name=asset_id)
        write_bytes_atomic(self.out_root / rel, data)
        return rel


def _obj_vertices(raw: bytes, path: Path) -> np.ndarray:
    verts = []
    for n, line in enumerate(raw.decode("utf-8", errors="replace").splitlines(), start=1):
        if line.startswith("v "):
            parts = line.split()
            try:
                xyz = [float(v) for v in parts[1:4]]
            except ValueError:
                xyz = []
            if len(xyz) != 3 or not all(math.isfinite(v) for v in xyz):
                raise ImportError_(f"bad vertex on line {n}", path=path)
            verts.append(xyz)
    if not verts:
        raise ImportError_("OBJ asset has no vertices", path=path)
    return np.array(verts)


def _rebase_obj(raw: bytes, axes: np.ndarray) -> bytes:
    """OBJ text with ``v``/``vn`` coordinates multiplied by ``axes`` (a signed permutation, so
    the numbers are only reordered/negated); every other line is kept verbatim."""
    out = []
    for line in raw.decode("utf-8", errors="replace").splitlines():
        parts = line.split()
        if parts and parts[0] in ("v", "vn") and len(parts) >= 4:
            xyz = parts[1:4]
            new = []
            for row in axes:
                k = int(np.argmax(np.abs(row)))
                value = xyz[k]
                if row[k] < 0:
                    value = value[1:] if value.startswith("-") else "-" + value
                new.append(value)
            line = " ".join([parts[0], *new, *parts[4:]])
        out.append(line)
    return ("\n".join(out) + "\n").encode("utf-8")


def _copy_materials(src: Path, raw: bytes, dest_dir: Path) -> None:
    """Copy the ``mtllib`` files an OBJ names, and the maps they name, next to the copied OBJ.

    Only plain relative names inside the asset's folder are followed; missing ones are skipped
    (the renderer falls back to a default material).
    """
    base = src.parent.resolve()
    for line in raw.decode("utf-8", errors="replace").splitlines():
        if not line.startswith("mtllib "):
            continue
        for name in line.split()[1:]:
            mtl = (base / name).resolve()
            if not mtl.is_relative_to(base) or not mtl.is_file():
                continue
            write_bytes_atomic(dest_dir / mtl.relative_to(base), mtl.read_bytes())
            for mline in mtl.read_text(encoding="utf-8", errors="replace").splitlines():
                words = mline.split()
                if (
                    words
                    and words[0].lower().startswith(("map_", "bump", "disp"))
                    and len(words) > 1
                ):
                    tex = (mtl.parent / words[-1]).resolve()
                    if tex.is_relative_to(base) and tex.is_file():
                        # temp + rename, never in place: the output may hard-link an
                        # existing scene set's files (``staging.staged_directory``)
                        write_bytes_atomic(dest_dir / tex.relative_to(base), tex.read_bytes())


def _room(arch: Any, objects: list[PlacedObject], to_z: np.ndarray, unit: float, path: Path):
    if not isinstance(arch, dict):
        return footprint_room(objects, path=path)
    elements = arch.get("elements", [])
    if not isinstance(elements, list):
        raise ImportError_(
            "arch.elements must be an array", path=path, pointer="/scene/arch/elements"
        )
    arch_to_z = up_conversion(arch.get("up", [0, 0, 1]), path=path, pointer="/scene/arch/up")
    scale = _number(
        arch.get("scaleToMeters", unit),
        path=path,
        pointer="/scene/arch/scaleToMeters",
        positive=True,
    )
    floors, walls, heights = [], [], []
    for e, element in enumerate(elements):
        where = f"/scene/arch/elements/{e}"
        if not isinstance(element, dict) or element.get("type") not in ("Floor", "Wall"):
            continue  # ceilings, columns, ... do not shape the room box
        pts = element.get("points")
        if not isinstance(pts, list) or not pts:
            raise ImportError_("arch element needs points", path=path, pointer=f"{where}/points")
        arr = np.array(
            [
                [_number(v, path=path, pointer=f"{where}/points/{k}") for v in p]
                if isinstance(p, list) and len(p) == 3
                else _bad_point(path, f"{where}/points/{k}")
                for k, p in enumerate(pts)
            ]
        )
        arr = arr @ arch_to_z.T * scale
        if element["type"] == "Floor":
            floors.append(arr)
        else:
            walls.append(arr)
            if "height" in element:
                heights.append(
                    _number(element["height"], path=path, pointer=f"{where}/height", positive=True)
                    * scale
                )
    if not floors and not walls:
        return footprint_room(objects, path=path)
    outline = np.concatenate(floors if floors else walls)
    floor_z = float(outline[:, 2].min())
    tallest = max(o.placement.position[2] + o.placement.size[2] for o in objects) - floor_z
    height = max(heights) if heights else max(2.5, tallest)
    room, (cx, cy) = room_from_points(outline[:, :2], height, path=path, pointer="/scene/arch")
    return room, (cx, cy, floor_z)


def _bad_point(path: Path, pointer: str) -> list[float]:
    raise ImportError_("arch point must be [x, y, z]", path=path, pointer=pointer)
