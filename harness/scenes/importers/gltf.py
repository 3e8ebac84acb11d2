"""Import a glTF 2.0 / GLB file (a generated object, or a room of objects) into the scene model.

Geometry is read by Blender's own glTF importer only (``harness.render.gltfmeasure`` in a
child process, ``harness.render.gltfscene``): the boxes measured here are those of the meshes
the renderer draws, with their materials, textures and vertex colours. Assets stay glTF/GLB.

Rules:

* kind: ``object`` (a single generated object, the usual text-to-3D output) unless ``kind`` says
  otherwise, ``asset.extras.kind`` is ``"room"``, or a node is architecture (name starting
  with ``floor``, ``wall`` or ``ceiling``, case-insensitive, or ``extras.arch`` true): then
  ``room``.
* object kind: the file is copied byte for byte to ``<out_root>/assets/<asset_dir>/`` with the
  ``.bin`` and image files a ``.gltf`` names (same relative layout), so all of them count in the
  scene identity. One object, untransformed: its box is the measured bounding box. The room is
  the object's footprint grown by half on each axis (the ground plane when ``ground``), its
  height the object's; the camera frames the object (``harness.render.framing``).
* room kind: every object node (``gltfscene.object_roots``: the root nodes, below single
  wrapper nodes) that is not architecture becomes an object whose asset is its subtree
  exported by Blender as ``assets/<asset_dir>/<node>.glb``, node at the origin. Parts keep
  their own transforms inside the asset (a wheel turned about its axle stays turned). The
  node's world transform becomes position, yaw, tilt and size (``common.decompose``: any
  rotation, non-uniform scale). Floor nodes' world boxes give the floor rectangle (its top is
  z = 0 after import) and wall nodes' tops the wall height; without floor nodes, walls'
  footprint; without both, the objects' footprint (``common.footprint_room``).
* label: ``label`` (object kind) / ``labels[node name]`` (room kind) if given, else the node's
  ``extras.label``; an object scene falls back to the prompt, a room object to the node name
  without a Blender-style ``.001`` suffix. Mesh names (``LOD3spShape``) are never labels.
* metadata: ``generator``, ``prompt_id``, ``prompt``, ``prompt_source``, ``scene_id`` come from
  the keyword options (``--generator`` ...), else from ``asset.extras`` of the glTF; generator,
  prompt_id and prompt are required. ``prompt_source`` defaults to ``"glTF"``.
* the scene is written as schema ``t3d-scene/2``.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from harness.core.errors import ImportError_
from harness.render.gltfmeasure import run_jobs
from harness.scenes.importers.common import (
    PlacedObject,
    assemble_scene,
    decompose,
    footprint_room,
    resolve_meta,
    room_from_points,
    sanitize_id,
    unique_ids,
    write_bytes_atomic,
)
from harness.scenes.importers.gltf_io import Gltf, dependencies, read_gltf
from harness.scenes.limits import LENGTH_MAX
from harness.scenes.load import validate_scene
from harness.scenes.meshbytes import mesh_bytes
from harness.scenes.model import KIND_OBJECT, KIND_ROOM, SCENE_SCHEMA_V2, Room, Scene

_ARCH = re.compile(r"^(floor|wall|ceiling)", re.IGNORECASE)
_BLENDER_SUFFIX = re.compile(r"\.\d{3}$")
GROUND_MARGIN = 0.5  # the object scene's ground extends this fraction of the object per side


def import_gltf(
    path: Path | str,
    *,
    out_root: Path | str,
    asset_dir: str | None = None,
    kind: str | None = None,
    ground: bool = True,
    label: str | None = None,
    labels: Mapping[str, str] | None = None,
    generator: str | None = None,
    prompt_id: str | None = None,
    prompt: str | None = None,
    prompt_source: str | None = None,
    scene_id: str | None = None,
    conventions: object = None,
) -> Scene:
    """Import ``path`` (.glb or .gltf); write its assets under ``out_root``.

    ``conventions`` (object kind only): a ``conventions.Conventions`` (up, front, unit or
    scale; default glTF's y up, +z front, metres), recorded in the scene's ``source``.

    Returns a Scene whose asset paths are relative to ``out_root`` and which passed
    ``validate_scene``. Raises ImportError_ (a SceneError) for unsupported or malformed input.
    """
    path = Path(path)
    out_root = Path(out_root)
    from harness.scenes.gltf_limits import check_gltf  # it imports this package

    g = read_gltf(path)
    check_gltf(g)  # files inside its folder, sizes and counts bounded, before Blender reads it
    extras = g.doc.get("asset", {}).get("extras")
    options = {
        "generator": generator,
        "prompt_id": prompt_id,
        "prompt": prompt,
        "prompt_source": prompt_source,
        "scene_id": scene_id,
    }
    meta = resolve_meta(options, extras, default_source="glTF", path=path)
    folder = sanitize_id(asset_dir or path.stem, "gltf")
    chosen = _kind(g, kind, extras)
    if chosen == KIND_ROOM and conventions is not None and any(vars(conventions).values()):
        raise ImportError_("--up/--front/--unit/--scale apply to object scenes, not rooms",
                           path=path, hint="a glTF room is y up, in metres (the glTF spec)")
    if chosen == KIND_OBJECT:
        scene = _object_scene(g, out_root, folder, meta, label, ground, conventions)
    else:
        scene = _room_scene(g, out_root, folder, meta, labels or {})
    return validate_scene(scene, out_root, path=path)


def _kind(g: Gltf, kind: str | None, extras: object) -> str:
    if kind is not None:
        if kind not in (KIND_ROOM, KIND_OBJECT):
            raise ImportError_(f"unknown scene kind {kind!r}", path=g.path, hint="--kind room|object")
        return kind
    if isinstance(extras, dict) and extras.get("kind") in (KIND_ROOM, KIND_OBJECT):
        return extras["kind"]
    for node in g.items("nodes"):
        if not isinstance(node, dict):
            continue
        name = node.get("name") if isinstance(node.get("name"), str) else ""
        node_extras = node.get("extras") if isinstance(node.get("extras"), dict) else {}
        if _ARCH.match(name) or node_extras.get("arch") is True:
            return KIND_ROOM
    return KIND_OBJECT


def copy_gltf(g: Gltf, out_root: Path, folder: str) -> str:
    """Copy the file and its dependencies to ``assets/<folder>/``; returns the asset path."""
    deps = dependencies(g)
    rel = f"assets/{folder}/{g.path.name}"
    write_bytes_atomic(out_root / rel, mesh_bytes(g.path, "glTF file"))
    for dep in deps:  # each within the input bound, as check_gltf sized them
        write_bytes_atomic(out_root / f"assets/{folder}/{dep}",
                           mesh_bytes(g.path.parent / dep, "glTF buffer or image file"))
    return rel


def _measured(result: dict[str, object], path: Path, pointer: str = "") -> tuple[np.ndarray, np.ndarray]:
    if "error" in result:
        raise ImportError_(
            f"Blender's glTF importer failed: {result['error']}",
            path=path,
            pointer=pointer,
            hint="check the file with https://github.khronos.org/glTF-Validator/",
        )
    lo, hi = np.asarray(result["lo"], dtype=float), np.asarray(result["hi"], dtype=float)
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
        raise ImportError_("the object has NaN or infinite vertex coordinates", path=path,
                           pointer=pointer, hint="every vertex needs finite x, y and z")
    return lo, hi


def _object_scene(
    g: Gltf,
    out_root: Path,
    folder: str,
    meta: dict[str, str],
    label: str | None,
    ground: bool,
    conventions: object = None,
) -> Scene:
    from dataclasses import replace

    from harness.scenes.fileformats import Detected
    from harness.scenes.importers.conventions import Conventions, display_scale, source_record

    conv = (conventions or Conventions()).resolve("gltf", path=g.path)
    asset = copy_gltf(g, out_root, folder)
    (result,) = run_jobs([{"op": "measure", "file": str((out_root / asset).resolve())}], where=g.path)
    lo, hi = _measured(result, g.path)
    world = np.eye(4)
    world[:3, :3] = conv.rotation()
    size_m = np.abs(world[:3, :3]) @ (hi - lo) * conv.metres_per_unit
    fit = display_scale(size_m, path=g.path)  # a 166 m city or a 743 mm-unit engine still fits
    placement = decompose(world, lo, hi, unit=conv.metres_per_unit * fit, rebase=False,
                          path=g.path, pointer="")
    name = label or _extras_label(g.doc.get("asset", {}).get("extras")) or meta["prompt"]
    obj = PlacedObject(sanitize_id(name, "object")[:64] or "object", name, asset, placement)
    scene = object_scene(meta, [obj], ground=ground, path=g.path)
    source = source_record(Detected("gltf"), conv.record(), result, size_m, fit)
    return replace(scene, source=source)


def object_scene(
    meta: dict[str, str], objects: list[PlacedObject], *, ground: bool, path: Path
) -> Scene:
    """An object-kind scene (schema 2) around ``objects``: ground = footprint grown by
    :data:`GROUND_MARGIN` of its size on each side (at most 100 m, the model's limit), height =
    the tallest object."""
    room, centre = footprint_room(objects, path=path)
    top = max(o.placement.position[2] + o.placement.size[2] for o in objects) - centre[2]
    grow = 1.0 + 2 * GROUND_MARGIN
    def ground_side(v: float) -> float:  # grown, but within the scene model's 100 m
        return round(min(v * grow, max(v, LENGTH_MAX)), 9)

    room = Room(
        size=(ground_side(room.size[0]), ground_side(room.size[1])),
        wall_height=round(max(top, 1e-3), 9),
    )
    scene = assemble_scene(meta, objects, room, centre, path=path)
    return _as_v2(scene, KIND_OBJECT, ground)


def _as_v2(scene: Scene, kind: str, ground: bool = True) -> Scene:
    from dataclasses import replace

    return replace(scene, schema=SCENE_SCHEMA_V2, kind=kind, ground=ground)


def _extras_label(extras: object) -> str | None:
    if isinstance(extras, dict) and isinstance(extras.get("label"), str) and extras["label"].strip():
        return extras["label"].strip()
    return None


def _room_scene(
    g: Gltf, out_root: Path, folder: str, meta: dict[str, str], labels: Mapping[str, str]
) -> Scene:
    with tempfile.TemporaryDirectory(prefix="t3d-split-") as tmp:
        (result,) = run_jobs([{"op": "split", "file": str(g.path.resolve()), "out_dir": tmp}], where=g.path)
        if "error" in result:
            _measured(result, g.path)
        floor_pts: list[np.ndarray] = []
        wall_pts: list[np.ndarray] = []
        pending: list[tuple[str, str, str, object]] = []
        taken: set[str] = set()
        for k, entry in enumerate(result["objects"]):
            name = entry["name"]
            extras = entry["extras"]
            where = f"<node {name}>"
            if entry.get("world_lo") is None:
                continue  # an empty, light or camera: nothing to draw
            if _ARCH.match(name) or extras.get("arch") is True:
                corners = _corners(np.asarray(entry["world_lo"]), np.asarray(entry["world_hi"]))
                arch_type = extras.get("arch_type")
                kind = (arch_type if isinstance(arch_type, str) else name).lower()
                (floor_pts if kind.startswith("floor") else wall_pts).append(corners)
                continue
            lo, hi = _measured(entry, g.path, where)
            placement = decompose(
                np.asarray(entry["matrix"]), lo, hi, rebase=False, path=g.path, pointer=where
            )
            stem = sanitize_id(_BLENDER_SUFFIX.sub("", name), f"node{k}")
            rel = f"assets/{folder}/{stem}.glb"
            n = 2
            while rel in taken:
                rel = f"assets/{folder}/{stem}-{n}.glb"
                n += 1
            taken.add(rel)
            # Blender's export of one node: a decoded (e.g. Draco) mesh can outgrow its source
            write_bytes_atomic(out_root / rel, mesh_bytes(entry["asset"], "exported object GLB"))
            label = labels.get(name) or _extras_label(extras) or _BLENDER_SUFFIX.sub("", name) or "object"
            pending.append((sanitize_id(name, f"obj{k}"), label, rel, placement))
    if not pending:
        raise ImportError_("glTF scene has no object nodes with meshes", path=g.path, pointer="/nodes")
    ids = unique_ids(p[0] for p in pending)
    objects = [PlacedObject(i, p[1], p[2], p[3]) for i, p in zip(ids, pending, strict=True)]
    room, centre = _room(floor_pts, wall_pts, objects, g.path)
    return _as_v2(assemble_scene(meta, objects, room, centre, path=g.path), KIND_ROOM)


def _corners(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])


def _room(
    floor_pts: list[np.ndarray],
    wall_pts: list[np.ndarray],
    objects: list[PlacedObject],
    path: Path,
):
    if not floor_pts and not wall_pts:
        return footprint_room(objects, path=path)
    floor = np.concatenate(floor_pts) if floor_pts else None
    walls = np.concatenate(wall_pts) if wall_pts else None
    outline = floor if floor is not None else walls
    floor_z = float(floor[:, 2].max()) if floor is not None else float(walls[:, 2].min())
    if walls is not None:
        height = float(walls[:, 2].max()) - floor_z
    else:
        height = max(
            2.5, max(o.placement.position[2] + o.placement.size[2] for o in objects) - floor_z
        )
    room, (cx, cy) = room_from_points(outline[:, :2], height, path=path, pointer="/nodes")
    return room, (cx, cy, floor_z)
