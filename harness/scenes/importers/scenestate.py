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
  ``asset_root`` (SceneEval's ``_data`` folder) through :func:`candidate_paths`: the user's
  ``asset_map`` (``--asset-map``), SceneEval's own layouts (``layoutvlm-objaverse.<id>`` at
  ``layoutvlm-objathor/<id>/<id>.glb``, ``objaverse.<id>`` at ``objathor-assets/<id>/<id>.glb``,
  ``fpModel.<id>`` (HSSD) at ``hssd/glb/<first char>/<id>.glb`` or
  ``hssd/decomposed/<id before _>/<id>.glb``, ``3dfModel.<id>`` (3D-FUTURE) at
  ``3D-FUTURE-model/<id>/raw_model.obj``), then ``<source>/<assetId>[/<assetId>].obj|glb|gltf``.
  Symlinks inside the root are followed. Every missing asset is reported at once.
* glTF/GLB assets are copied byte for byte and measured by Blender's importer (z up); the
  sceneState transform acts on the file's own (y-up) coordinates, as in SceneEval, so the
  y-to-z turn is composed in. OBJ assets whose axes need no re-basing are copied byte for
  byte (with their ``mtllib`` files and the texture maps those name); re-based OBJs are
  rewritten (coordinates permuted). Assets land in ``<out_root>/assets/<source>/`` (in a
  folder per asset when the source has one, so 3D-FUTURE's shared file names do not clash).
* any rotation is kept (an object off the vertical axis gets a ``tilt``); the scene is
  written as schema ``t3d-scene/2``.
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

import math
import re
import string
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import NoReturn

import numpy as np

from harness.core import bounded_input
from harness.core.errors import ImportError_
from harness.scenes.importers.common import (
    Y_UP_TO_Z_UP,
    PlacedObject,
    Placement,
    assemble_scene,
    decompose,
    footprint_room,
    resolve_meta,
    room_from_points,
    sanitize_id,
    unique_ids,
    up_conversion,
    write_bytes_atomic,
)
from harness.scenes.importers.gltf_io import read_gltf
from harness.scenes.importers.objbox import obj_box
from harness.scenes.load import validate_scene
from harness.scenes.meshbytes import mesh_bytes
from harness.scenes.model import SCENE_SCHEMA_V2, Scene

SCENE_VERSION = "scene@1.0.2"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
MAX_MODEL_ID = 255  # characters: a file name's limit; a longer id names no file on disk


def _reject_constant(literal: str) -> NoReturn:
    raise ValueError(f"non-finite number {literal}")


def _number(value: object, *, path: Path, pointer: str, positive: bool = False) -> float:
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
    asset_map: Mapping[str, object] | None = None,
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
    meshes = _MeshCache(asset_root, out_root, path, asset_map)
    parsed = []
    for i, obj in enumerate(raw_objects):
        where = f"/scene/object/{i}"
        if not isinstance(obj, dict):
            raise ImportError_("object must be a JSON object", path=path, pointer=where)
        model_id = obj.get("modelId")
        source, asset_id = _split_model_id(model_id, path, f"{where}/modelId")
        matrix = _matrix(obj.get("transform"), path, f"{where}/transform")
        parsed.append((i, obj, model_id, source, asset_id, matrix))
    meshes.resolve_all([(p[3], p[4], f"/scene/object/{p[0]}/modelId") for p in parsed])
    pending = []
    for i, obj, model_id, source, asset_id, matrix in parsed:
        where = f"/scene/object/{i}"
        world = np.eye(4)
        world[:3, :3] = to_z @ matrix[:3, :3]
        world[:3, 3] = to_z @ matrix[:3, 3]
        gltf = meshes.is_gltf(source, asset_id)
        if gltf:  # the transform acts on the file's own y-up coordinates; Blender reads z-up
            world[:3, :3] = world[:3, :3] @ Y_UP_TO_Z_UP.T
        lo, hi = meshes.bounds(source, asset_id, f"{where}/modelId")
        placement = decompose(
            world, lo, hi, unit=unit, rebase=not gltf, path=path, pointer=f"{where}/transform"
        )
        asset = meshes.write(source, asset_id, placement)
        label = _label(obj, model_id, asset_id, labels)
        index = obj.get("index", i)
        pending.append((sanitize_id(obj.get("id"), f"obj{index}"), label, asset, placement))
    ids = unique_ids(p[0] for p in pending)
    objects = [PlacedObject(k, p[1], p[2], p[3]) for k, p in zip(ids, pending, strict=True)]
    room, centre = _room(spec.get("arch"), objects, to_z, unit, path)
    scene = replace(
        assemble_scene(meta, objects, room, centre, path=path), schema=SCENE_SCHEMA_V2
    )
    return validate_scene(scene, out_root, path=path)


def _read(path: Path) -> dict[str, object]:
    try:
        raw = bounded_input.read_bytes(path, what="sceneState file")
    except OSError as exc:
        raise ImportError_(
            f"cannot read sceneState file: {exc.strerror or exc}", path=path
        ) from None
    try:
        doc = bounded_input.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
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


def _split_model_id(model_id: object, path: Path, pointer: str) -> tuple[str, str]:
    if isinstance(model_id, str) and "." in model_id:
        source, asset_id = model_id.split(".", 1)
        if (_NAME.match(source) and _NAME.match(asset_id) and ".." not in asset_id
                and len(model_id) <= MAX_MODEL_ID):  # fmt: skip
            return source, asset_id
    long = isinstance(model_id, str) and len(model_id) > MAX_MODEL_ID
    shown = model_id[:77] + "..." if long else model_id
    raise ImportError_(
        f"invalid modelId {shown!r}" + (f" (over {MAX_MODEL_ID} characters)" if long else ""),
        path=path,
        pointer=pointer,
        hint='expected "<source>.<assetId>" with letters, digits, "_", "-", "."',
    )


def _matrix(transform: object, path: Path, pointer: str) -> np.ndarray:
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
    obj: dict[str, object], model_id: str, asset_id: str, labels: Mapping[str, str] | None
) -> str:
    if labels and isinstance(labels.get(model_id), str) and labels[model_id].strip():
        return labels[model_id].strip()
    for key in ("label", "category"):
        value = obj.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return asset_id


# SceneEval's own data layouts (its configs/assets.yaml and asset classes), by modelId prefix,
# relative to the asset root (SceneEval's ``_data``). ``{id}``: the asset id, ``{id0}``: its
# first character, ``{base}``: the id before its first "_" (HSSD decomposed parts).
SCENEEVAL_LAYOUTS: dict[str, tuple[str, ...]] = {
    "3dfModel": ("3D-FUTURE-model/{id}/raw_model.obj",),
    "objaverse": ("objathor-assets/{id}/{id}.glb",),
    "fpModel": ("hssd/glb/{id0}/{id}.glb", "hssd/decomposed/{base}/{id}.glb"),
    "layoutvlm-objaverse": ("layoutvlm-objathor/{id}/{id}.glb",),
}
# Generic layouts tried for every source after SceneEval's.
GENERIC_LAYOUTS = (
    "{source}/{id}.obj",
    "{source}/{id}/{id}.obj",
    "{source}/{id}.glb",
    "{source}/{id}/{id}.glb",
    "{source}/{id}.gltf",
    "{source}/{id}/{id}.gltf",
)


def candidate_paths(
    source: str, asset_id: str, asset_map: Mapping[str, object] | None = None
) -> list[str]:
    """Relative paths (POSIX) where ``<source>.<asset_id>`` may live under the asset root, in
    the order tried: the user's ``asset_map`` (key = full modelId or source; value = a pattern
    or a list of patterns), SceneEval's layouts, then :data:`GENERIC_LAYOUTS`."""
    fields = {"source": source, "id": asset_id, "id0": asset_id[:1], "base": asset_id.split("_")[0]}
    patterns: list[str] = []
    for key in (f"{source}.{asset_id}", source):
        value = (asset_map or {}).get(key)
        if isinstance(value, str):
            patterns.append(value)
        elif isinstance(value, list):
            patterns.extend(v for v in value if isinstance(v, str))
    patterns += [*SCENEEVAL_LAYOUTS.get(source, ()), *GENERIC_LAYOUTS]
    out = []
    for pattern in patterns:
        rel = _expand(pattern, fields)
        if rel is not None and rel not in out:
            out.append(rel)
    return out


def _expand(pattern: str, fields: Mapping[str, str]) -> str | None:
    """``pattern`` with its ``{field}`` names replaced; None when it names an unknown field or
    is malformed. Only bare names are expanded: a format spec or conversion (``{id:>4000000000}``
    would allocate 4 GB), an attribute or an index is refused with ImportError_."""
    out = []
    try:
        pieces = list(string.Formatter().parse(pattern))
    except ValueError:
        return None
    for literal, name, spec, conversion in pieces:
        out.append(literal)
        if name is None:
            continue
        if spec or conversion or not name.isidentifier():
            raise ImportError_(
                f"asset-map pattern {pattern[:80]!r} uses a format spec, conversion or "
                "attribute",
                hint="patterns may only name {source}, {id}, {id0} and {base}",
            )
        if name not in fields:
            return None
        out.append(fields[name])
    return "".join(out)


class _MeshCache:
    """Finds, reads and writes each source asset once per import."""

    def __init__(
        self,
        asset_root: Path,
        out_root: Path,
        scene_path: Path,
        asset_map: Mapping[str, object] | None = None,
    ):
        self.asset_root, self.out_root, self.scene_path = asset_root, out_root, scene_path
        self.asset_map = asset_map
        self._file: dict[tuple[str, str], Path] = {}
        self._mesh: dict[tuple[str, str], tuple[Path, np.ndarray, bytes | None]] = {}

    def _find(self, source: str, asset_id: str) -> Path | None:
        for rel in candidate_paths(source, asset_id, self.asset_map):
            parts = rel.split("/")
            if rel.startswith("/") or ".." in parts or "" in parts:
                continue  # a pattern may not leave the asset root
            candidate = self.asset_root / rel  # symlinks inside the root are followed
            try:
                if candidate.is_file():
                    return candidate
            except OSError:  # a name too long for the file system (an asset-map pattern)
                continue
        return None

    def resolve_all(self, wanted: list[tuple[str, str, str]]) -> None:
        """Find every (source, asset id, pointer); one error lists all missing assets, then
        every glTF asset is measured by Blender in one batch."""
        missing: list[str] = []
        for source, asset_id, _ in wanted:
            key = (source, asset_id)
            if key in self._file:
                continue
            found = self._find(source, asset_id)
            if found is None:
                if f"{source}.{asset_id}" not in missing:
                    missing.append(f"{source}.{asset_id}")
                continue
            self._file[key] = found
        if missing:
            first = next(w for w in wanted if f"{w[0]}.{w[1]}" == missing[0])
            tried = ", ".join(candidate_paths(first[0], first[1], self.asset_map))
            raise ImportError_(
                f"{len(missing)} asset(s) not found under {self.asset_root}: "
                + ", ".join(missing),
                path=self.scene_path,
                pointer=first[2],
                hint=f"for {missing[0]} looked for {tried}; map other layouts with --asset-map",
            )
        from harness.scenes.gltf_limits import check_gltf_file

        gltfs = [k for k, f in self._file.items() if f.suffix.lower() in (".glb", ".gltf")]
        for key in gltfs:
            check_gltf_file(self._file[key])  # container, JSON, extensions, sizes and counts
        from harness.render.gltfmeasure import run_jobs

        results = run_jobs(
            [{"op": "measure", "file": str(self._file[k].resolve())} for k in gltfs],
            where=self.scene_path,
        )
        for key, result in zip(gltfs, results, strict=True):
            if "error" in result:
                raise ImportError_(
                    f"Blender's glTF importer failed on {self._file[key]}: {result['error']}",
                    path=self.scene_path,
                )
            verts = np.array([result["lo"], result["hi"]], dtype=float)
            self._mesh[key] = (self._file[key], verts, None)

    def is_gltf(self, source: str, asset_id: str) -> bool:
        return self._file[(source, asset_id)].suffix.lower() in (".glb", ".gltf")

    def _load(self, source: str, asset_id: str, pointer: str):
        key = (source, asset_id)
        if key not in self._mesh:
            src = self._file[key]
            raw = mesh_bytes(src, "OBJ asset")  # within the input bound, sized on its handle
            box = obj_box(raw, src)
            self._mesh[key] = (src, np.stack([box.lo, box.hi]), raw)
        return self._mesh[key]

    def bounds(self, source: str, asset_id: str, pointer: str) -> tuple[np.ndarray, np.ndarray]:
        _, verts, _ = self._load(source, asset_id, pointer)
        return verts.min(axis=0), verts.max(axis=0)

    def write(self, source: str, asset_id: str, placement: Placement) -> str:
        src, _, raw = self._load(source, asset_id, "")
        own_folder = src.parent.name == asset_id or src.parent.name == asset_id.split("_")[0]
        folder = f"assets/{source}/{asset_id}" if own_folder else f"assets/{source}"
        if raw is None:  # glTF: kept byte for byte, with the files a .gltf names
            from harness.scenes.importers.gltf import copy_gltf

            return copy_gltf(read_gltf(src), self.out_root, folder[len("assets/") :])
        stem = src.stem if own_folder else asset_id
        if placement.is_identity:
            rel = f"{folder}/{stem}.obj"
            write_bytes_atomic(self.out_root / rel, raw)
            _copy_materials(src, raw, self.out_root / folder)
            return rel
        rel = f"{folder}/{stem}.{placement.tag}.obj"
        data = _rebase_obj(raw, np.asarray(placement.axes))
        _copy_materials(src, raw, self.out_root / folder)
        write_bytes_atomic(self.out_root / rel, data)
        return rel


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
    """Copy the files an OBJ pulls in (``mtllib`` files and the maps they name) next to the
    copied OBJ, keeping their paths relative to its folder.

    A reference outside the asset's folder (absolute, a URI, ``..`` or a symlink out) is
    refused (``harness.scenes.assetdeps``); missing ones are skipped (the renderer falls back
    to a default material). ``raw`` is the OBJ's bytes, read by the caller.
    """
    from harness.scenes.assetdeps import copy_dependencies

    # temp + rename, never in place: the output may hard-link an existing scene set's files
    # (``staging.staged_directory``)
    copy_dependencies(src, dest_dir, write_bytes_atomic)


def _room(arch: object, objects: list[PlacedObject], to_z: np.ndarray, unit: float, path: Path):
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
