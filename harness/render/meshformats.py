"""OBJ, PLY, STL and USD assets, point clouds and 3D Gaussian splats, for Blender.

Every function takes the ``bpy`` module first (the caller imports bpy, through
``harness.render.bpyaccess``). The importer measures an asset with :func:`import_parts` (in a child process, see
``harness.render.gltfmeasure``) and the renderer draws exactly the meshes it returns.
Coordinates are the file's own (no axis conversion: OBJ/PLY/STL are imported with
``forward_axis="Y", up_axis="Z"``), except USD, where Blender's importer applies the stage's
``upAxis`` and ``metersPerUnit``; conventions (up, front, unit) are the scene's, applied by the
object's placement (``harness.scenes.importers.meshobject``).

Colour:

* a mesh with a colour attribute (OBJ ``v x y z r g b``, PLY ``red green blue``) and no
  material gets :func:`colour_material`: Principled BSDF whose base colour reads that
  attribute (Blender stores it linear; both importers convert the files' sRGB values), so the
  object is lit like every other and shows its own colours;
* a mesh without colour or material (STL, bare OBJ/PLY) gets the renderer's grey default, and
  :func:`import_parts` reports ``colour = "none"`` so the import can say so;
* point clouds (a PLY without faces): each point becomes a small sphere (an icosahedron,
  12 vertices) of radius :data:`POINT_RADIUS_FACTOR` x the median nearest-neighbour distance
  of the cloud (the spheres of neighbours just touch), coloured by the point's colour through
  :func:`colour_material`;
* 3D Gaussian splats (:func:`splat_mesh`, :func:`splat_node_group`): each splat an
  ellipsoid *instance* (geometry nodes put one shared once-subdivided icosphere, 42 vertices,
  on every splat point) with semi-axes ``SPLAT_SIGMAS`` x its standard deviations
  ``exp(scale_*)`` rotated by its quaternion ``rot_*`` (w, x, y, z), coloured by its DC
  colour ``0.5 + C0 * f_dc`` as emission (strength 1), with ``sigmoid(opacity)`` as alpha on
  its front faces (:func:`splat_material`). See docs/formats.md for the limits.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import numpy as np

SH_C0 = 0.28209479177387814  # degree-0 spherical harmonic: a splat's colour is 0.5 + C0 * f_dc
#: the ellipsoid's semi-axes in standard deviations: a uniform disc of radius sqrt(2) sigma
#: and opacity a carries the same alpha mass (a * 2 pi sigma^2) as the Gaussian it stands for
SPLAT_SIGMAS = float(np.sqrt(2.0))
POINT_RADIUS_FACTOR = 0.5
SPLAT_TRANSPARENT_BOUNCES = 128  # splats behind splats: Cycles' default (8) cuts them off
COLOUR_MATERIAL = "t3d:vertex_colour"
SPLAT_MATERIAL = "t3d:splat"
SPLAT_NODES = "t3d:splat_instances"


def _icosphere(subdivisions: int) -> tuple[np.ndarray, np.ndarray]:
    """Unit icosphere: (V, 3) vertices on the unit sphere and (F, 3) triangle indices."""
    t = (1.0 + 5 ** 0.5) / 2.0
    verts = [(-1, t, 0), (1, t, 0), (-1, -t, 0), (1, -t, 0), (0, -1, t), (0, 1, t),
             (0, -1, -t), (0, 1, -t), (t, 0, -1), (t, 0, 1), (-t, 0, -1), (-t, 0, 1)]
    faces = [(0, 11, 5), (0, 5, 1), (0, 1, 7), (0, 7, 10), (0, 10, 11), (1, 5, 9), (5, 11, 4),
             (11, 10, 2), (10, 7, 6), (7, 1, 8), (3, 9, 4), (3, 4, 2), (3, 2, 6), (3, 6, 8),
             (3, 8, 9), (4, 9, 5), (2, 4, 11), (6, 2, 10), (8, 6, 7), (9, 8, 1)]
    v = [np.asarray(p, dtype=float) / np.linalg.norm(p) for p in verts]
    for _ in range(subdivisions):
        cache: dict[tuple[int, int], int] = {}

        def mid(a: int, b: int, cache: dict[tuple[int, int], int] = cache) -> int:
            key = (min(a, b), max(a, b))
            if key not in cache:
                m = v[a] + v[b]
                v.append(m / np.linalg.norm(m))
                cache[key] = len(v) - 1
            return cache[key]

        new = []
        for a, b, c in faces:
            ab, bc, ca = mid(a, b), mid(b, c), mid(c, a)
            new += [(a, ab, ca), (b, bc, ab), (c, ca, bc), (ab, bc, ca)]
        faces = new
    return np.asarray(v), np.asarray(faces, dtype=np.int64)


def _mesh_from_arrays(bpy: ModuleType, name: str, verts: np.ndarray, tris: np.ndarray) -> object:
    mesh = bpy.data.meshes.new(name)
    mesh.vertices.add(len(verts))
    mesh.vertices.foreach_set("co", np.ascontiguousarray(verts, dtype=np.float32).ravel())
    mesh.loops.add(tris.size)
    mesh.loops.foreach_set("vertex_index", np.ascontiguousarray(tris, dtype=np.int32).ravel())
    mesh.polygons.add(len(tris))
    mesh.polygons.foreach_set("loop_start", np.arange(0, tris.size, 3, dtype=np.int32))
    mesh.polygons.foreach_set("loop_total", np.full(len(tris), 3, dtype=np.int32))
    mesh.update()  # built from whole triangles of valid indices: nothing for validate() to fix
    return mesh


def _set_point_colour(mesh: object, name: str, rgba_linear: np.ndarray) -> None:
    attr = mesh.color_attributes.new(name, "FLOAT_COLOR", "POINT")
    attr.data.foreach_set("color", rgba_linear.astype(np.float32).ravel())
    mesh.color_attributes.active_color = attr


def srgb_to_linear(c: np.ndarray) -> np.ndarray:
    """IEC 61966-2-1 sRGB decoding of values in [0, 1]."""
    c = np.clip(np.asarray(c, dtype=float), 0.0, 1.0)
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def _tree(bpy: ModuleType, mat: object) -> object:
    tree = mat.node_tree
    if tree is None:  # Blender < 5 needs use_nodes
        mat.use_nodes = True
        tree = mat.node_tree
    return tree


def colour_material(bpy: ModuleType, attribute: str) -> object:
    """The material that shows a mesh's colour attribute ``attribute`` as its base colour
    (roughness 0.8, like the grey default). One per attribute name, kept across scenes."""
    name = f"{COLOUR_MATERIAL}:{attribute}"
    mat = bpy.data.materials.get(name)
    if mat is not None:
        return mat
    mat = bpy.data.materials.new(name)
    mat.use_fake_user = True
    tree = _tree(bpy, mat)
    bsdf = next(n for n in tree.nodes if n.bl_idname == "ShaderNodeBsdfPrincipled")
    bsdf.inputs["Roughness"].default_value = 0.8
    node = tree.nodes.new("ShaderNodeAttribute")
    node.attribute_type = "GEOMETRY"
    node.attribute_name = attribute
    tree.links.new(node.outputs["Color"], bsdf.inputs["Base Color"])
    return mat


def splat_material(bpy: ModuleType) -> object:
    """Emission of the ``Col`` attribute (strength 1) over transparency, mixed by the ``alpha``
    attribute on front faces; back faces are fully transparent, so a splat counts once."""
    mat = bpy.data.materials.get(SPLAT_MATERIAL)
    if mat is not None:
        return mat
    mat = bpy.data.materials.new(SPLAT_MATERIAL)
    mat.use_fake_user = True
    tree = _tree(bpy, mat)
    tree.nodes.clear()
    out = tree.nodes.new("ShaderNodeOutputMaterial")
    colour = tree.nodes.new("ShaderNodeAttribute")
    colour.attribute_type = "INSTANCER"  # the splat's point attributes, on its instance
    colour.attribute_name = "Col"
    alpha = tree.nodes.new("ShaderNodeAttribute")
    alpha.attribute_type = "INSTANCER"
    alpha.attribute_name = "alpha"
    geometry = tree.nodes.new("ShaderNodeNewGeometry")
    front = tree.nodes.new("ShaderNodeMath")
    front.operation = "SUBTRACT"
    front.inputs[0].default_value = 1.0
    tree.links.new(geometry.outputs["Backfacing"], front.inputs[1])
    factor = tree.nodes.new("ShaderNodeMath")
    factor.operation = "MULTIPLY"
    tree.links.new(alpha.outputs["Fac"], factor.inputs[0])
    tree.links.new(front.outputs["Value"], factor.inputs[1])
    emission = tree.nodes.new("ShaderNodeEmission")
    emission.inputs["Strength"].default_value = 1.0
    tree.links.new(colour.outputs["Color"], emission.inputs["Color"])
    clear = tree.nodes.new("ShaderNodeBsdfTransparent")
    mix = tree.nodes.new("ShaderNodeMixShader")
    tree.links.new(factor.outputs["Value"], mix.inputs["Fac"])
    tree.links.new(clear.outputs["BSDF"], mix.inputs[1])
    tree.links.new(emission.outputs["Emission"], mix.inputs[2])
    tree.links.new(mix.outputs["Shader"], out.inputs["Surface"])
    return mat


def splat_arrays(table: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Splat parameters from a 3DGS PLY vertex table: ``centre`` (N, 3), ``rotation`` (N, 3, 3),
    ``sigma`` (N, 3) standard deviations, ``rgb`` (N, 3) DC colour in [0, 1] (display
    values), ``alpha`` (N,) opacity in [0, 1]. Non-finite splats are dropped."""
    centre = np.stack([table["x"], table["y"], table["z"]], axis=1)
    q = np.stack([table[f"rot_{i}"] for i in range(4)], axis=1)
    norm = np.linalg.norm(q, axis=1, keepdims=True)
    sigma = np.exp(np.stack([table[f"scale_{i}"] for i in range(3)], axis=1))
    rgb = np.clip(0.5 + SH_C0 * np.stack([table[f"f_dc_{i}"] for i in range(3)], axis=1), 0, 1)
    alpha = 1.0 / (1.0 + np.exp(-table["opacity"]))
    ok = (np.all(np.isfinite(centre), 1) & np.all(np.isfinite(sigma), 1) & (norm[:, 0] > 0)
          & np.all(np.isfinite(q), 1) & np.isfinite(alpha))
    q = q[ok] / norm[ok]
    w, x, y, z = q.T
    rot = np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
        np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
        np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1),
    ], axis=1)
    return {"centre": centre[ok], "rotation": rot, "sigma": sigma[ok], "rgb": rgb[ok],
            "alpha": alpha[ok]}


def splat_bounds(s: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) (3,) of the splat ellipsoids of :func:`splat_arrays` (exact box of each
    ellipsoid: half-extent on axis i is the norm of row i of ``R diag(r)``)."""
    axes = s["rotation"] * (SPLAT_SIGMAS * s["sigma"])[:, None, :]
    half = np.linalg.norm(axes, axis=2)
    return (s["centre"] - half).min(0), (s["centre"] + half).max(0)


def splat_node_group(bpy: ModuleType) -> object:
    """Geometry nodes that put a unit icosphere (subdivided once, 42 vertices, with
    :func:`splat_material`) on every point, rotated by its ``rot`` quaternion and scaled by its
    ``scale`` vector: one oriented ellipsoid *instance* per splat (Cycles shares the sphere)."""
    group = bpy.data.node_groups.get(SPLAT_NODES)
    if group is not None:
        return group
    group = bpy.data.node_groups.new(SPLAT_NODES, "GeometryNodeTree")
    group.use_fake_user = True
    group.interface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
    group.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    nodes, links = group.nodes, group.links
    given, out = nodes.new("NodeGroupInput"), nodes.new("NodeGroupOutput")
    sphere = nodes.new("GeometryNodeMeshIcoSphere")
    sphere.inputs["Subdivisions"].default_value = 2  # 42 vertices (1 is the bare icosahedron)
    sphere.inputs["Radius"].default_value = 1.0
    material = nodes.new("GeometryNodeSetMaterial")
    material.inputs["Material"].default_value = splat_material(bpy)
    place = nodes.new("GeometryNodeInstanceOnPoints")
    rot = nodes.new("GeometryNodeInputNamedAttribute")
    rot.data_type = "QUATERNION"
    rot.inputs["Name"].default_value = "rot"
    scale = nodes.new("GeometryNodeInputNamedAttribute")
    scale.data_type = "FLOAT_VECTOR"
    scale.inputs["Name"].default_value = "scale"
    links.new(sphere.outputs["Mesh"], material.inputs["Geometry"])
    links.new(given.outputs[0], place.inputs["Points"])
    links.new(material.outputs["Geometry"], place.inputs["Instance"])
    links.new(rot.outputs["Attribute"], place.inputs["Rotation"])
    links.new(scale.outputs["Attribute"], place.inputs["Scale"])
    links.new(place.outputs["Instances"], out.inputs[0])
    return group


def splat_mesh(bpy: ModuleType, path: Path | str) -> tuple[object, tuple[np.ndarray, np.ndarray]]:
    """The splats of the 3DGS PLY ``path`` as a point mesh (see the module docstring) with
    point attributes ``rot`` (quaternion w, x, y, z), ``scale`` (semi-axes, :data:`SPLAT_SIGMAS`
    sigma), ``Col`` (linear DC colour) and ``alpha``, drawn by :func:`splat_node_group` (the
    renderer adds it to each object); and the exact box of the ellipsoids
    (:func:`splat_bounds`)."""
    from harness.scenes.fileformats import SPLAT_PROPERTIES, read_ply_vertices

    # the fields a splat is drawn from: never the 45 f_rest_* columns of an SH-degree-3 file
    s = splat_arrays(read_ply_vertices(path, ("x", "y", "z", *SPLAT_PROPERTIES)))
    n = len(s["alpha"])
    if n == 0:
        raise RuntimeError("the splat file has no finite splats")
    mesh = bpy.data.meshes.new(Path(path).stem)
    mesh.vertices.add(n)
    mesh.vertices.foreach_set("co", s["centre"].astype(np.float32).ravel())
    quat = _quaternions(s["rotation"])
    for name, kind, key, values in (
        ("rot", "QUATERNION", "value", quat),
        ("scale", "FLOAT_VECTOR", "vector", SPLAT_SIGMAS * s["sigma"]),
        ("alpha", "FLOAT", "value", s["alpha"]),
    ):
        attr = mesh.attributes.new(name, kind, "POINT")
        attr.data.foreach_set(key, np.ascontiguousarray(values, dtype=np.float32).ravel())
    rgba = np.concatenate([srgb_to_linear(s["rgb"]), np.ones((n, 1))], axis=1)
    _set_point_colour(mesh, "Col", rgba)
    mesh.materials.append(splat_material(bpy))
    mesh["t3d_splats"] = n
    mesh.update()
    return mesh, splat_bounds(s)


def _quaternions(rot: np.ndarray) -> np.ndarray:
    """(N, 4) unit quaternions (w, x, y, z) of (N, 3, 3) rotation matrices."""
    from scipy.spatial.transform import Rotation

    xyzw = Rotation.from_matrix(rot).as_quat()
    return np.concatenate([xyzw[:, 3:], xyzw[:, :3]], axis=1)


def point_radius(points: np.ndarray) -> float:
    """:data:`POINT_RADIUS_FACTOR` x the median nearest-neighbour distance of (N, 3) points
    (a thousandth of the cloud's diagonal when every point coincides or N = 1)."""
    from scipy.spatial import cKDTree

    diag = float(np.linalg.norm(points.max(0) - points.min(0))) if len(points) else 0.0
    if len(points) > 1:
        dist, _ = cKDTree(points).query(points, k=2)
        nearest = dist[:, 1][dist[:, 1] > 0]
        if nearest.size:
            return POINT_RADIUS_FACTOR * float(np.median(nearest))
    return max(diag, 1.0) * 1e-3


def point_mesh(bpy: ModuleType, cloud: object) -> object:
    """Spheres (icosahedra) at the vertices of the face-less mesh ``cloud`` with their colour
    attribute carried over (grey default material when the cloud has none)."""
    co = np.empty(len(cloud.vertices) * 3, dtype=np.float64)
    cloud.vertices.foreach_get("co", co)
    points = co.reshape(-1, 3)
    radius = point_radius(points)
    unit, tris = _icosphere(0)
    k, n = len(unit), len(points)
    verts = (points[:, None, :] + radius * unit[None, :, :]).reshape(-1, 3)
    faces = (tris[None, :, :] + (np.arange(n) * k)[:, None, None]).reshape(-1, 3)
    mesh = _mesh_from_arrays(bpy, f"{cloud.name}:points", verts, faces)
    source = cloud.color_attributes.active_color or (
        cloud.color_attributes[0] if len(cloud.color_attributes) else None
    )
    if source is not None and source.domain == "POINT":
        rgba = np.empty(n * 4, dtype=np.float32)
        source.data.foreach_get("color", rgba)
        _set_point_colour(mesh, "Col", np.repeat(rgba.reshape(-1, 4), k, axis=0))
    return mesh


def _colour_name(mesh: object) -> str | None:
    attrs = mesh.color_attributes
    if not len(attrs):
        return None
    active = attrs.active_color or attrs[0]
    return active.name


def _measured(objects: list[object], variant: str | None) -> dict[str, object]:
    """The facts :func:`import_parts` gives plus ``lo``/``hi``, read from imported OBJ/PLY/STL
    objects without copying their meshes. A point cloud's box grows by its sphere radius."""
    lo, hi, count, colours = None, None, 0, set()
    points = variant == "points"
    for ob in objects:
        if ob.type != "MESH" or len(ob.data.vertices) == 0:
            continue
        mesh = ob.data
        co = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
        mesh.vertices.foreach_get("co", co)
        m = np.array(ob.matrix_world)
        pts = co.reshape(-1, 3).astype(np.float64) @ m[:3, :3].T + m[:3, 3]
        if points:
            r = point_radius(pts) * float(_icosphere(0)[0].max())  # the icosahedra's reach
            a, b = pts.min(0) - r, pts.max(0) + r
            count += len(pts)
        else:
            a, b = pts.min(0), pts.max(0)
            count += len(mesh.polygons)
        lo = a if lo is None else np.minimum(lo, a)
        hi = b if hi is None else np.maximum(hi, b)
        if any(x is not None for x in mesh.materials):
            colours.add("material")
        else:
            colours.add("vertex" if len(mesh.color_attributes) else "none")
    if lo is None:
        raise RuntimeError("the file has no geometry")
    colour = "vertex" if "vertex" in colours else ("material" if "material" in colours else "none")
    return {"colour": colour, "kind": "points" if points else "mesh", "count": count,
            "lo": lo.tolist(), "hi": hi.tolist()}


def _run_importer(bpy: ModuleType, fmt: str, path: Path) -> list[object]:
    before = set(bpy.data.objects)
    if fmt == "obj":
        bpy.ops.wm.obj_import(filepath=str(path), forward_axis="Y", up_axis="Z")
    elif fmt == "ply":
        bpy.ops.wm.ply_import(filepath=str(path), forward_axis="Y", up_axis="Z",
                              import_colors="SRGB")
    elif fmt == "stl":
        bpy.ops.wm.stl_import(filepath=str(path), forward_axis="Y", up_axis="Z")
    elif fmt == "usd":
        bpy.ops.wm.usd_import(filepath=str(path), import_cameras=False, import_lights=False,
                              create_world_material=False)
    else:
        raise RuntimeError(f"no Blender importer for format {fmt!r}")
    return [o for o in bpy.data.objects if o not in before]


def import_parts(
    bpy: ModuleType, path: Path | str, fmt: str, variant: str | None = None, *,
    measure_only: bool = False,
) -> tuple[list[tuple[object, object]], dict[str, object]]:
    """Import ``path`` (``fmt``: obj, ply, stl or usd; ``variant`` for PLY: mesh, points or
    splats) and return its meshes with their matrices plus facts about it: ``colour``
    (``vertex``: a colour attribute is shown; ``material``: the file's materials; ``none``:
    the grey default), ``kind`` (mesh, points, splats) and ``count`` (faces, points or
    splats). Meshes without a material get :func:`colour_material` when they have a colour
    attribute; others are left without one (the renderer adds its grey default). The imported
    objects are removed again; the meshes stay. ``measure_only``: splats are not built, their
    box comes as ``lo``/``hi`` in the facts (the same box the built mesh has). Raises
    RuntimeError on failure."""
    from mathutils import Matrix

    from harness.render import gltfscene

    path = Path(path)
    if fmt == "ply" and variant == "splats" and measure_only:
        from harness.scenes.fileformats import SPLAT_PROPERTIES, read_ply_vertices

        s = splat_arrays(read_ply_vertices(path, ("x", "y", "z", *SPLAT_PROPERTIES)))
        if not len(s["alpha"]):
            raise RuntimeError("the splat file has no finite splats")
        lo, hi = splat_bounds(s)
        return [], {"colour": "vertex", "kind": "splats", "count": len(s["alpha"]),
                    "lo": lo.tolist(), "hi": hi.tolist()}
    if fmt == "ply" and variant == "splats":
        mesh, box = splat_mesh(bpy, path)
        return [(mesh, Matrix.Identity(4))], {"colour": "vertex", "kind": "splats",
                                             "count": int(mesh["t3d_splats"]),
                                             "lo": box[0].tolist(), "hi": box[1].tolist()}
    objects = _run_importer(bpy, fmt, path)
    if measure_only and fmt in ("obj", "ply", "stl"):  # no modifiers: read the data in place
        try:
            return [], _measured(objects, variant)
        finally:
            gltfscene.remove_objects(bpy, objects)
    try:
        parts = gltfscene.evaluated_parts(bpy, objects)
    finally:
        gltfscene.remove_objects(bpy, objects)
    kind = "mesh"
    if fmt == "ply" and variant == "points":
        kind = "points"
        clouds = parts
        parts = [(point_mesh(bpy, mesh), matrix) for mesh, matrix in clouds]
        count = sum(len(m.vertices) for m, _ in clouds)
        for mesh, _ in clouds:
            bpy.data.meshes.remove(mesh)
    else:
        count = sum(len(m.polygons) for m, _ in parts)
    colours = set()
    for mesh, _ in parts:
        attribute = _colour_name(mesh)
        if mesh.materials and any(m is not None for m in mesh.materials):
            colours.add("material")
        elif attribute is not None:
            mesh.materials.clear()
            mesh.materials.append(colour_material(bpy, attribute))
            colours.add("vertex")
        else:
            colours.add("none")
    colour = "vertex" if "vertex" in colours else ("material" if "material" in colours else "none")
    return parts, {"colour": colour, "kind": kind, "count": count}
