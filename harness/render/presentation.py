"""The presentation settings of a built scene (``RenderConfig.render_pass``, ``texture``,
``ambient``, ``geometry``) and the walls hidden from the camera.

At their defaults the scene renders with its own materials under the lighting map; the normal
pass and texture off are a view-layer material override, ambient a uniform white world, and
points geometry each object's surface as seeded points (made on first use, then toggled).
"""

from __future__ import annotations

import math

import numpy as np

from harness.protocol.configurations import RenderConfig
from harness.render import bpyaccess, settings
from harness.render.bpyaccess import assign
from harness.render.failures import RenderFailed
from harness.render.materials import Materials
from harness.render.scene_build import BuiltScene


def present(built: BuiltScene, cfg: RenderConfig, materials: Materials) -> None:
    """``cfg``'s presentation settings on ``built``; an unknown value is a :class:`RenderFailed`."""
    if cfg.render_pass not in ("shaded", "normal"):
        raise RenderFailed(f"unknown render pass {cfg.render_pass!r}", scene_id=built.scene_id, cfg=cfg,
                           hint="use shaded or normal")  # fmt: skip
    if cfg.ambient is not None and not (math.isfinite(cfg.ambient) and cfg.ambient >= 0):
        raise RenderFailed(f"ambient level {cfg.ambient!r} is not a finite level >= 0",
                           scene_id=built.scene_id, cfg=cfg)  # fmt: skip
    bscene = built.bscene
    tree = bscene.world.node_tree
    bg = next(n for n in tree.nodes if n.bl_idname == "ShaderNodeBackground")
    linked = [lk for lk in tree.links if lk.to_node == bg and lk.to_socket.name == "Color"]
    if cfg.ambient is None:
        if not linked:
            tree.links.new(built.env_node.outputs["Color"], bg.inputs["Color"])
        assign(bg.inputs["Strength"], "default_value", settings.WORLD_STRENGTH)
    else:
        for lk in linked:
            tree.links.remove(lk)
        bg.inputs["Color"].default_value = (1.0, 1.0, 1.0, 1.0)
        assign(bg.inputs["Strength"], "default_value", float(cfg.ambient))
    if cfg.render_pass == "normal":
        from harness.protocol.source_cameras import FRAMES

        if cfg.normal_frame not in FRAMES:
            raise RenderFailed(f"unknown normal frame {cfg.normal_frame!r}", scene_id=built.scene_id, cfg=cfg,
                               hint=f"use one of {', '.join(FRAMES)}")  # fmt: skip
        override, transform = materials.normal(cfg.normal_frame), "Raw"  # 0.5·n + 0.5 as is
    elif not cfg.texture:
        override, transform = materials.plain("untextured", settings.DEFAULT_OBJECT_RGB), built.view_transform
    else:
        override, transform = None, built.view_transform
    layer = bscene.view_layers[0]
    if layer.material_override != override:
        layer.material_override = override
    assign(bscene.view_settings, "view_transform", transform)
    if cfg.geometry not in ("mesh", "points"):
        raise RenderFailed(f"unknown geometry {cfg.geometry!r}", scene_id=built.scene_id, cfg=cfg,
                           hint="use mesh or points")  # fmt: skip
    points = cfg.geometry == "points"
    if points and built.points is None:
        built.points = [(part, _point_object(bscene, part, materials)) for part in built.assets]
        built.objects += [ob for _, ob in built.points]
    for part, dots in built.points or ():
        assign(part, "hide_render", points)
        assign(dots, "hide_render", not points)


def hide_walls(built: BuiltScene, hidden: frozenset[str]) -> None:
    """Hide the walls named in ``hidden`` from the render, show the others."""
    for wname, ob in built.walls.items():
        assign(ob, "hide_render", wname in hidden)


def _point_object(bscene: object, part: object, materials: Materials) -> object:
    """``part`` as points: :data:`settings.POINTS_PER_M2` seeded samples per square metre of
    its world-space surface (at least :data:`settings.MIN_POINTS`), each a small icosahedron
    (``meshformats.point_mesh``) in the part's first material."""
    from harness.render import meshformats

    bpy = bpyaccess.load()
    mesh = part.data
    mesh.calc_loop_triangles()
    co = np.empty(len(mesh.vertices) * 3, dtype=np.float64)
    mesh.vertices.foreach_get("co", co)
    tris = np.empty(len(mesh.loop_triangles) * 3, dtype=np.int32)
    mesh.loop_triangles.foreach_get("vertices", tris)
    world = np.asarray(part.matrix_basis, dtype=np.float64)  # parts have no parent
    verts = co.reshape(-1, 3) @ world[:3, :3].T + world[:3, 3]
    corners = verts[tris.reshape(-1, 3)]  # (T, 3, 3)
    areas = 0.5 * np.linalg.norm(np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0]), axis=1)
    rng = np.random.default_rng(0)
    n = int(min(settings.MAX_POINTS, max(settings.MIN_POINTS, settings.POINTS_PER_M2 * areas.sum())))
    if areas.sum() > 0:
        pick = rng.choice(len(areas), size=n, p=areas / areas.sum())
        u, v = rng.random(n), rng.random(n)
        flip = u + v > 1
        u, v = np.where(flip, 1 - u, u), np.where(flip, 1 - v, v)
        a, b, c = corners[pick, 0], corners[pick, 1], corners[pick, 2]
        samples = a + u[:, None] * (b - a) + v[:, None] * (c - a)
    else:
        samples = verts
    cloud = bpy.data.meshes.new(f"{part.name}:cloud")
    cloud.vertices.add(len(samples))
    cloud.vertices.foreach_set("co", np.ascontiguousarray(samples, dtype=np.float32).ravel())
    dots = meshformats.point_mesh(bpy, cloud)
    bpy.data.meshes.remove(cloud)
    dots.materials.append(mesh.materials[0] if len(mesh.materials) else materials.for_mesh(dots))
    ob = bpy.data.objects.new(f"{part.name}:points", dots)
    ob.hide_render = True
    bscene.collection.objects.link(ob)
    return ob
