"""Asset import into Blender: each asset file once per process (keyed by path and sha256), its
meshes kept as shared parts that every placed object links to.

OBJ goes through Blender's OBJ importer, glTF/GLB through its glTF importer
(``harness.render.gltfscene``, materials, textures and vertex colours kept), PLY (mesh, point
cloud, 3DGS splats), STL and USD through ``harness.render.meshformats``. Every file is sized
(and a glTF's counts bounded) before Blender reads it; any failure is one
:class:`~harness.render.failures.AssetImportFailed` quoting what Blender said.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import numpy as np

from harness.core.hashing import sha256_file
from harness.render import blenderlog, bpyaccess
from harness.render.failures import AssetImportFailed
from harness.render.materials import Materials
from harness.scenes.model import Scene


@dataclass
class Asset:
    """An imported asset: its meshes with their import matrices, and its bounding box (asset units)."""

    parts: list[tuple[object, object]]  # (bpy mesh, mathutils.Matrix)
    lo: np.ndarray  # (3,)
    hi: np.ndarray  # (3,)
    kind: str = "mesh"  # mesh | points | splats (harness.render.meshformats)


class AssetLibrary:
    """This process's imported assets; meshes without a material get ``materials.for_mesh``."""

    def __init__(self, materials: Materials) -> None:
        self._assets: dict[tuple[str, str], Asset] = {}
        self._materials = materials

    def asset(self, path: Path, scene: Scene, obj_id: str) -> Asset:
        """The asset at ``path`` (object ``obj_id`` of ``scene``), imported on first use."""
        if not path.is_file():
            raise AssetImportFailed(
                f"asset file {path} of object {obj_id} does not exist", scene_id=scene.id
            )
        from harness.core.errors import ImportError_
        from harness.scenes.meshbytes import mesh_size

        try:  # sized on its handle: Blender's importers never see a file over the input bound
            mesh_size(path, "asset file")
        except ImportError_ as exc:
            raise AssetImportFailed(f"asset {path} (object {obj_id}): {exc.what}",
                                    scene_id=scene.id, hint=exc.hint) from None
        digest = sha256_file(path)
        cache_key = (str(path), digest)
        if cache_key in self._assets:
            return self._assets[cache_key]
        if path.suffix.lower() in (".glb", ".gltf"):
            asset = self._gltf(path, scene, obj_id)
        elif path.suffix.lower() != ".obj":
            asset = self._mesh(path, scene, obj_id)
        else:
            asset = self._obj(path, scene, obj_id)
        self._assets[cache_key] = asset
        return asset

    def _obj(self, path: Path, scene: Scene, obj_id: str) -> Asset:
        """An OBJ through Blender's OBJ importer (y forward, z up); the import objects are
        removed, their meshes kept."""
        bpy = bpyaccess.load()
        before = set(bpy.data.objects)
        with blenderlog.capture() as log:
            said = log.from_here()  # quote this import's output only
            try:
                bpy.ops.wm.obj_import(filepath=str(path), forward_axis="Y", up_axis="Z")
            except RuntimeError as exc:
                raise AssetImportFailed(
                    f"Blender could not import {path} (object {obj_id}): {str(exc).strip()}",
                    scene_id=scene.id,
                    hint=said.describe() or None,
                ) from exc
            new = [o for o in bpy.data.objects if o not in before]
            parts, points = [], []
            for ob in new:
                if ob.type == "MESH" and len(ob.data.vertices) > 0:
                    mesh, matrix = ob.data, ob.matrix_basis.copy()
                    mesh.use_fake_user = True  # keep the mesh alive after its import object goes
                    co = np.empty(len(mesh.vertices) * 3, dtype=np.float64)
                    mesh.vertices.foreach_get("co", co)
                    co = co.reshape(-1, 3)
                    m = np.array(matrix)
                    points.append(co @ m[:3, :3].T + m[:3, 3])
                    if not mesh.materials:
                        mesh.materials.append(self._materials.for_mesh(mesh))
                    parts.append((mesh, matrix))
            for ob in new:
                bpy.data.objects.remove(ob, do_unlink=True)
            if not parts:
                raise AssetImportFailed(
                    f"OBJ file {path} (object {obj_id}) contains no mesh geometry",
                    scene_id=scene.id,
                    hint=said.describe() or None,
                )
        allp = np.concatenate(points)
        return Asset(parts, allp.min(0), allp.max(0))

    def _gltf(self, path: Path, scene: Scene, obj_id: str) -> Asset:
        """A glTF/GLB asset through Blender's importer (``harness.render.gltfscene``): its
        materials, textures and vertex colours are kept; meshes without a material get the
        default object material."""
        from harness.core.errors import AuditError
        from harness.render import gltfscene
        from harness.scenes.gltf_limits import check_gltf_file

        try:  # sizes, counts and texture dimensions bounded before Blender allocates for them
            check_gltf_file(path)
        except AuditError as exc:  # SceneError, or a bad $T3D_AUDIT_GLTF_LIMITS
            pointer = getattr(exc, "pointer", "")
            raise AssetImportFailed(
                f"glTF file {path} (object {obj_id}) refused: {exc.what}"
                f"{f' at {pointer}' if pointer else ''}",
                scene_id=scene.id,
                hint=exc.hint,
            ) from None
        parts, _facts, box = self._import_parts(
            lambda bpy: (gltfscene.import_parts(bpy, path), {}), path, scene, obj_id, "glTF")
        return Asset(parts, box[0], box[1])

    def _mesh(self, path: Path, scene: Scene, obj_id: str) -> Asset:
        """A PLY (mesh, point cloud, splats), STL or USD asset through Blender's importers
        (``harness.render.meshformats``); the format is read from the file's content."""
        from harness.core.errors import ImportError_
        from harness.render import meshformats
        from harness.scenes.fileformats import detect_format

        try:
            found = detect_format(path)
        except ImportError_ as exc:
            raise AssetImportFailed(
                f"asset {path} (object {obj_id}): {exc.what}", scene_id=scene.id, hint=exc.hint
            ) from None
        parts, facts, box = self._import_parts(
            lambda bpy: meshformats.import_parts(bpy, path, found.format, found.variant),
            path, scene, obj_id, found.label)
        return Asset(parts, box[0], box[1], facts["kind"])

    def _import_parts(
        self, load: Callable[[ModuleType], tuple[list[tuple[object, object]], dict[str, object]]],
        path: Path, scene: Scene, obj_id: str, label: str,
    ) -> tuple[list[tuple[object, object]], dict[str, object], tuple[np.ndarray, np.ndarray]]:
        """``load(bpy) -> (parts, facts)`` under Blender's log capture: an importer's error, or
        a file without geometry, is one ``AssetImportFailed`` with what Blender said; every
        mesh is kept (fake user) and one without a material gets ``Materials.for_mesh`` (its
        colour attribute, e.g. glTF ``COLOR_0`` or OBJ/PLY vertex colours, or grey). Returns
        the parts, the importer's facts and the bounds (``facts`` ``lo``/``hi`` when given:
        splats' exact ellipsoid box)."""
        from harness.core.errors import ImportError_
        from harness.render import gltfscene

        with blenderlog.capture() as log:
            said = log.from_here()
            try:
                parts, facts = load(bpyaccess.load())
            except (RuntimeError, ImportError_) as exc:
                raise AssetImportFailed(
                    f"Blender could not import {path} (object {obj_id}): {str(exc).strip()}",
                    scene_id=scene.id,
                    hint=said.describe() or None,
                ) from exc
            for mesh, _ in parts:
                mesh.use_fake_user = True
                if not mesh.materials:
                    mesh.materials.append(self._materials.for_mesh(mesh))
            box = gltfscene.parts_bounds(parts)
            if "lo" in facts:
                box = (np.asarray(facts["lo"]), np.asarray(facts["hi"]))
            if box is None:
                raise AssetImportFailed(
                    f"{label} file {path} (object {obj_id}) contains no mesh geometry",
                    scene_id=scene.id,
                    hint=said.describe() or None,
                )
        return parts, facts, box
