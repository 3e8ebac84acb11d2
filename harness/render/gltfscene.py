"""glTF/GLB assets through Blender's own importer (``io_scene_gltf2``, shipped in the bpy wheel).

One reader for measuring and rendering: the importer (``harness.scenes.importers``, through
``harness.render.gltfmeasure`` in a subprocess) measures an asset's bounding box with
:func:`import_parts`, and the renderer draws exactly the meshes :func:`import_parts` returns.
What Blender's importer supports is kept: materials and textures (external, embedded, data
URIs), vertex colours, KHR_materials_*, KHR_texture_transform, KHR_mesh_quantization, sparse
accessors and Draco (its decoder ships with the addon). Animation is dropped after import, so
skinned meshes stay in their bind (rest) pose and morph targets at their default weights.

Every function takes the ``bpy`` module as its first argument (the caller imports bpy, through
``harness.render.bpyaccess``). Coordinates are Blender's: z up (the importer converts glTF's
y up), metres.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import numpy as np

# Extensions Blender 5.0's glTF importer decodes (io_scene_gltf2 ``extensions_managed``). A file
# that *requires* another one cannot be imported faithfully.
SUPPORTED_EXTENSIONS = frozenset(
    {
        "KHR_materials_pbrSpecularGlossiness",
        "KHR_lights_punctual",
        "KHR_materials_unlit",
        "KHR_texture_transform",
        "KHR_materials_clearcoat",
        "KHR_mesh_quantization",
        "EXT_mesh_gpu_instancing",
        "KHR_draco_mesh_compression",
        "KHR_materials_variants",
        "KHR_materials_emissive_strength",
        "KHR_materials_transmission",
        "KHR_materials_specular",
        "KHR_materials_sheen",
        "KHR_materials_ior",
        "KHR_animation_pointer",
        "KHR_materials_volume",
        "EXT_texture_webp",
        "KHR_materials_anisotropy",
    }
)


HELPER_COLLECTION = "glTF_not_exported"  # io_scene_gltf2's collection of its own helper objects


def _enable_addon(bpy: ModuleType) -> None:
    if not hasattr(bpy.ops.import_scene, "gltf") or "io_scene_gltf2" not in bpy.context.preferences.addons:
        bpy.ops.preferences.addon_enable(module="io_scene_gltf2")


def import_objects(bpy: ModuleType, path: Path | str) -> list[object]:
    """Import a .glb/.gltf into the current scene; returns the new objects, animation cleared
    and armatures in their rest pose. Raises RuntimeError (Blender's message) on failure."""
    _enable_addon(bpy)
    before = set(bpy.data.objects)
    # disable_bone_shape: otherwise a skinned file brings an icosphere mesh (the bones' display
    # shape, in the importer's "glTF_not_exported" collection) that would render as part of it
    bpy.ops.import_scene.gltf(
        filepath=str(path), import_scene_as_collection=False, disable_bone_shape=True
    )
    new = [o for o in bpy.data.objects if o not in before]
    helpers = [o for o in new if any(c.name.startswith(HELPER_COLLECTION) for c in o.users_collection)]
    remove_objects(bpy, helpers)  # anything else the importer keeps for itself is not the asset
    new = [o for o in new if o not in helpers]
    for ob in new:
        ob.animation_data_clear()
        data = getattr(ob, "data", None)
        keys = getattr(data, "shape_keys", None)
        if keys is not None:
            keys.animation_data_clear()
        if ob.type == "ARMATURE":
            data.pose_position = "REST"  # bind pose
    bpy.context.view_layer.update()
    return new


def evaluated_parts(bpy: ModuleType, objects: list[object]) -> list[tuple[object, object]]:
    """(standalone mesh, world matrix) per mesh object among ``objects``, modifiers (armature in
    rest pose, shape keys at their default values) applied; meshes keep materials, UVs and
    colour attributes. Empty meshes are skipped."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    parts = []
    for ob in objects:
        if ob.type != "MESH":
            continue
        evaluated = ob.evaluated_get(depsgraph)
        mesh = bpy.data.meshes.new_from_object(
            evaluated, preserve_all_data_layers=True, depsgraph=depsgraph
        )
        if len(mesh.vertices) == 0:
            bpy.data.meshes.remove(mesh)
            continue
        parts.append((mesh, ob.matrix_world.copy()))
    return parts


def remove_objects(bpy: ModuleType, objects: list[object]) -> None:
    """Delete imported objects (their meshes go too when nothing else uses them)."""
    for ob in objects:
        data = ob.data
        bpy.data.objects.remove(ob, do_unlink=True)
        if isinstance(data, bpy.types.Mesh) and data.users == 0 and not data.use_fake_user:
            bpy.data.meshes.remove(data)


def import_parts(bpy: ModuleType, path: Path | str) -> list[tuple[object, object]]:
    """The asset's meshes with their matrices (see :func:`evaluated_parts`); the imported
    objects themselves are removed again."""
    objects = import_objects(bpy, path)
    try:
        return evaluated_parts(bpy, objects)
    finally:
        remove_objects(bpy, objects)


def parts_bounds(parts: list[tuple[object, object]]) -> tuple[np.ndarray, np.ndarray] | None:
    """(lo, hi) (3,) bounding box of every vertex of ``parts`` under its matrix; None if none."""
    points = []
    for mesh, matrix in parts:
        co = np.empty(len(mesh.vertices) * 3, dtype=np.float64)
        mesh.vertices.foreach_get("co", co)
        co = co.reshape(-1, 3)
        m = np.array(matrix)
        points.append(co @ m[:3, :3].T + m[:3, 3])
    if not points:
        return None
    allp = np.concatenate(points)
    return allp.min(0), allp.max(0)


def subtree(ob: object) -> list[object]:
    """``ob`` and all its descendants."""
    out, stack = [], [ob]
    while stack:
        cur = stack.pop()
        out.append(cur)
        stack.extend(cur.children)
    return out


def object_roots(objects: list[object]) -> list[object]:
    """The nodes that are a scene's objects: the roots (below a single mesh-less root such as
    Sketchfab's "RootNode"), each descending through mesh-less nodes with exactly one child."""
    roots = [o for o in objects if o.parent is None]
    while len(roots) == 1 and roots[0].type != "MESH" and len(roots[0].children) >= 1:
        roots = list(roots[0].children)
    out = []
    for root in roots:
        while root.type != "MESH" and len(root.children) == 1:  # a group of one object
            root = root.children[0]
        out.append(root)
    return sorted(out, key=lambda o: o.name)


def export_subtree(bpy: ModuleType, root: object, target: Path | str) -> None:
    """Write ``root`` and its descendants as a GLB with ``root`` at the origin (identity
    transform): the asset of one object of a multi-object scene."""
    from mathutils import Matrix

    root.parent = None
    root.matrix_world = Matrix.Identity(4)
    bpy.ops.object.select_all(action="DESELECT")
    for ob in subtree(root):
        ob.select_set(True)
    bpy.context.view_layer.update()
    bpy.ops.export_scene.gltf(
        filepath=str(target), export_format="GLB", use_selection=True, export_animations=False
    )
