"""Import a glTF 2.0 / GLB scene (one node per object) into the scene model.

Rules:

* glTF is y-up (spec); world coordinates are converted to z-up with ``Y_UP_TO_Z_UP``.
* Every node of the default scene that has a mesh is one object (node transforms are composed
  down the hierarchy). Nodes whose name starts with ``floor``, ``wall`` or ``ceiling``
  (case-insensitive) or whose ``extras.arch`` is true are architecture, not objects.
* label: ``extras.label``, else the node name without a Blender-style ``.001`` suffix, else the
  mesh name, else ``object``; id: the sanitised node name (deduplicated), else ``obj<node>``.
* size/pose: the bounding box of the mesh's triangle-primitive POSITION data (exactly the
  vertices written to the OBJ asset, so the renderer's box fit matches; accessor min/max are
  not trusted), placed by the node's world matrix (see ``common.decompose``: only rotations
  about the up axis, positive scales).
* asset: each (mesh, re-basing) is written once as a z-up OBJ under
  ``<out_root>/assets/<asset_dir>/<mesh name>[.<axes>].obj`` (``asset_dir`` defaults to the
  file's stem), so the renderer (OBJ only) can draw it.
* room: floor nodes' world boxes give the floor rectangle (its top is z = 0 after import) and
  wall nodes' tops the wall height; without floor nodes, walls' footprint; without both, the
  objects' footprint (see ``common.footprint_room``). The room centre moves to the origin.
* metadata: ``generator``, ``prompt_id``, ``prompt``, ``prompt_source``, ``scene_id`` come from
  keyword options, else from ``asset.extras`` of the glTF; generator, prompt_id and prompt are
  required. ``prompt_source`` defaults to ``"glTF"``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from harness.errors import ImportError_
from harness.scenes.importers.common import (
    Y_UP_TO_Z_UP,
    PlacedObject,
    assemble_scene,
    decompose,
    footprint_room,
    format_obj,
    resolve_meta,
    room_from_points,
    sanitize_id,
    unique_ids,
    write_bytes_atomic,
)
from harness.scenes.importers.gltf_io import (
    Gltf,
    mesh_triangles,
    read_gltf,
    scene_nodes,
)
from harness.scenes.load import validate_scene
from harness.scenes.model import Scene

_ARCH = re.compile(r"^(floor|wall|ceiling)", re.IGNORECASE)
_BLENDER_SUFFIX = re.compile(r"\.\d{3}$")


def _z_up(world: np.ndarray) -> np.ndarray:
    out = np.eye(4)
    out[:3, :3] = Y_UP_TO_Z_UP @ world[:3, :3]
    out[:3, 3] = Y_UP_TO_Z_UP @ world[:3, 3]
    return out


def _box_corners(world: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """8 x 3 world corners of the local box [lo, hi] under ``world``."""
    corners = np.array(
        [[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])]
    )
    return corners @ world[:3, :3].T + world[:3, 3]


def import_gltf(
    path: Path | str,
    *,
    out_root: Path | str,
    asset_dir: str | None = None,
    generator: str | None = None,
    prompt_id: str | None = None,
    prompt: str | None = None,
    prompt_source: str | None = None,
    scene_id: str | None = None,
) -> Scene:
    """Import ``path`` (.glb or .gltf); write converted assets under ``out_root``.

    Returns a Scene whose asset paths are relative to ``out_root`` and which passed
    ``validate_scene``. Raises ImportError_ (a SceneError) for unsupported or malformed input.
    """
    path = Path(path)
    out_root = Path(out_root)
    g = read_gltf(path)
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

    floor_pts: list[np.ndarray] = []
    wall_pts: list[np.ndarray] = []
    pending: list[tuple[str, str, str, Any]] = []  # (raw id, label, asset, placement)
    written: dict[tuple[int, str], str] = {}
    meshes: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for index, world_y in scene_nodes(g):
        node = g.item("nodes", index, f"/nodes/{index}")
        if "mesh" not in node:
            continue
        where = f"/nodes/{index}"
        world = _z_up(world_y)
        mesh_index = node["mesh"]
        g.item("meshes", mesh_index, f"{where}/mesh")  # a valid index before it is a dict key
        if mesh_index not in meshes:
            meshes[mesh_index] = mesh_triangles(g, mesh_index, f"{where}/mesh")
        verts, faces = meshes[mesh_index]
        lo, hi = verts.min(axis=0), verts.max(axis=0)
        name = node.get("name") if isinstance(node.get("name"), str) else ""
        node_extras = node.get("extras") if isinstance(node.get("extras"), dict) else {}
        if _ARCH.match(name) or node_extras.get("arch") is True:
            corners = _box_corners(world, lo, hi)
            arch_type = node_extras.get("arch_type")
            kind = (arch_type if isinstance(arch_type, str) else name).lower()
            (floor_pts if kind.startswith("floor") else wall_pts).append(corners)
            continue
        placement = decompose(world, lo, hi, path=path, pointer=where)
        asset = _write_mesh_asset(
            g, mesh_index, (verts, faces), placement, out_root, folder, written
        )
        label = _label(g, node, name, node_extras)
        pending.append((sanitize_id(name, f"obj{index}"), label, asset, placement))

    ids = unique_ids(p[0] for p in pending)
    objects = [PlacedObject(i, p[1], p[2], p[3]) for i, p in zip(ids, pending, strict=True)]
    if not objects:
        raise ImportError_(
            "glTF scene has no object nodes with meshes", path=path, pointer="/nodes"
        )
    room, centre = _room(floor_pts, wall_pts, objects, path)
    scene = assemble_scene(meta, objects, room, centre, path=path)
    return validate_scene(scene, out_root, path=path)


def _label(g: Gltf, node: dict[str, Any], name: str, extras: dict[str, Any]) -> str:
    label = extras.get("label")
    if isinstance(label, str) and label.strip():
        return label.strip()
    if name.strip():
        return _BLENDER_SUFFIX.sub("", name.strip()) or name.strip()
    mesh = g.item("meshes", node["mesh"], "/nodes")
    mesh_name = mesh.get("name")
    if isinstance(mesh_name, str) and mesh_name.strip():
        return mesh_name.strip()
    return "object"


def _write_mesh_asset(
    g: Gltf,
    mesh_index: int,
    mesh_data: tuple[np.ndarray, np.ndarray],
    placement: Any,
    out_root: Path,
    folder: str,
    written: dict[tuple[int, str], str],
) -> str:
    key = (mesh_index, placement.tag)
    if key in written:
        return written[key]
    mesh = g.item("meshes", mesh_index, "/meshes")
    stem = sanitize_id(mesh.get("name"), f"mesh{mesh_index}")
    verts, faces = mesh_data
    rebased = verts @ np.asarray(placement.axes).T
    suffix = "" if placement.is_identity else f".{placement.tag}"
    rel = f"assets/{folder}/{stem}{suffix}.obj"
    if rel in written.values():  # two meshes with one name
        rel = f"assets/{folder}/{stem}-m{mesh_index}{suffix}.obj"
    write_bytes_atomic(out_root / rel, format_obj(rebased, faces, name=stem))
    written[key] = rel
    return rel


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
