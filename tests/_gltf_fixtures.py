"""Build glTF test fixtures with Blender's own exporter: ``python tests/_gltf_fixtures.py OUT``.

Run in a child process (it resets Blender). Writes into OUT:

* ``red_textured.glb`` — 0.5 m cube whose base colour is an embedded 8 x 8 red PNG texture;
* ``red_draco.glb`` — the same, Draco-compressed;
* ``red_textured.gltf`` (+ ``.bin``, ``red.png``) — the same as separate files;
* ``green_vcol.glb`` — 0.5 m cube, white material multiplied by a green colour attribute;
* ``truck.glb`` — a blue 2 x 1 x 0.6 m body with a child wheel turned 90° + 10° about its axle;
* ``plane.glb`` — a flat 2 x 2 m plane (zero height);
* ``tiny.glb`` / ``huge.glb`` — yellow cubes of 6 cm and 60 m;
* ``picture_room.glb`` — a floor node plus a picture (a plane) standing upright (tilted 90°);
* ``truth.json`` — per file, the world bounding box (lo, hi; z up, metres) of its meshes as
  Blender computed it before export, and per object of the room file its world box.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import bpy
import numpy as np


def _reset() -> None:
    bpy.ops.wm.read_factory_settings(use_empty=True)


def _material(name: str, rgb, *, texture: Path | None = None, vcol: bool = False):
    mat = bpy.data.materials.new(name)
    tree = mat.node_tree
    if tree is None:
        mat.use_nodes = True
        tree = mat.node_tree
    bsdf = next(n for n in tree.nodes if n.bl_idname == "ShaderNodeBsdfPrincipled")
    bsdf.inputs["Base Color"].default_value = (*rgb, 1.0)
    if texture is not None:
        img = bpy.data.images.new(f"{name}_img", 8, 8)
        img.pixels = [*rgb, 1.0] * 64
        img.filepath_raw = str(texture)
        img.file_format = "PNG"
        img.save()
        node = tree.nodes.new("ShaderNodeTexImage")
        node.image = img
        tree.links.new(node.outputs["Color"], bsdf.inputs["Base Color"])
    if vcol:
        attr = tree.nodes.new("ShaderNodeVertexColor")
        attr.layer_name = "Col"
        tree.links.new(attr.outputs["Color"], bsdf.inputs["Base Color"])
    return mat


def _cube(name: str, size: float, mat, location=(0.0, 0.0, 0.0)):
    bpy.ops.mesh.primitive_cube_add(size=size, location=location)
    ob = bpy.context.object
    ob.name = name
    ob.data.materials.append(mat)
    return ob


def _world_box(objects) -> list[list[float]]:
    bpy.context.view_layer.update()
    pts = []
    for ob in objects:
        if ob.type != "MESH":
            continue
        m = np.array(ob.matrix_world)
        co = np.array([v.co[:] for v in ob.data.vertices])
        pts.append(co @ m[:3, :3].T + m[:3, 3])
    allp = np.concatenate(pts)
    return [allp.min(0).tolist(), allp.max(0).tolist()]


def _export(path: Path, **kw) -> None:
    bpy.ops.export_scene.gltf(filepath=str(path), export_animations=False, **kw)


def build(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    truth: dict[str, object] = {}

    _reset()
    ob = _cube("Cube", 0.5, _material("red", (0.9, 0.05, 0.05), texture=out / "red.png"))
    truth["red_textured"] = _world_box([ob])
    _export(out / "red_textured.glb", export_format="GLB")
    _export(out / "red_draco.glb", export_format="GLB", export_draco_mesh_compression_enable=True)
    _export(out / "red_textured.gltf", export_format="GLTF_SEPARATE")

    _reset()
    ob = _cube("Cube", 0.5, _material("white", (1.0, 1.0, 1.0), vcol=True))
    layer = ob.data.color_attributes.new("Col", "FLOAT_COLOR", "POINT")
    for item in layer.data:
        item.color = (0.05, 0.8, 0.1, 1.0)
    truth["green_vcol"] = _world_box([ob])
    _export(out / "green_vcol.glb", export_format="GLB", export_vertex_color="ACTIVE")

    _reset()
    blue = _material("blue", (0.05, 0.1, 0.9))
    body = _cube("body", 1.0, blue, location=(0.0, 0.0, 0.6))
    body.scale = (2.0, 1.0, 0.6)
    bpy.ops.mesh.primitive_cylinder_add(radius=0.3, depth=0.2, location=(0.6, -0.6, 0.3))
    wheel = bpy.context.object
    wheel.name = "wheel"
    wheel.data.materials.append(blue)
    wheel.rotation_euler = (math.radians(100), 0.0, 0.0)  # about its axle (x), 10° past upright
    bpy.context.view_layer.update()
    world = wheel.matrix_world.copy()
    wheel.parent = body
    wheel.matrix_world = world
    truth["truck"] = _world_box([body, wheel])
    _export(out / "truck.glb", export_format="GLB")

    _reset()
    bpy.ops.mesh.primitive_plane_add(size=2.0)
    plane = bpy.context.object
    plane.name = "ground"
    plane.data.materials.append(_material("grey", (0.5, 0.5, 0.5)))
    truth["plane"] = _world_box([plane])
    _export(out / "plane.glb", export_format="GLB")

    for name, size in (("tiny", 0.06), ("huge", 60.0)):
        _reset()
        ob = _cube("Cube", size, _material("yellow", (0.9, 0.8, 0.05)))
        truth[name] = _world_box([ob])
        _export(out / f"{name}.glb", export_format="GLB")

    _reset()
    floor = _cube("Floor", 1.0, _material("grey", (0.5, 0.5, 0.5)), location=(0.0, 0.0, -0.025))
    floor.scale = (4.0, 3.0, 0.05)
    bpy.ops.mesh.primitive_plane_add(size=1.0, location=(0.0, 1.0, 0.8))
    pic = bpy.context.object
    pic.name = "picture"
    pic.rotation_euler = (math.radians(90), 0.0, 0.0)  # standing upright
    pic.data.materials.append(_material("red", (0.9, 0.05, 0.05)))
    truth["picture_room"] = {"picture": _world_box([pic]), "Floor": _world_box([floor])}
    _export(out / "picture_room.glb", export_format="GLB")

    _reset()  # an upright flat asset facing the front (-y), like a sign or a single triangle
    bpy.ops.mesh.primitive_plane_add(size=1.0, location=(0.0, 0.0, 0.5))
    sign = bpy.context.object
    sign.name = "sign"
    sign.rotation_euler = (math.radians(90), 0.0, 0.0)
    sign.data.materials.append(_material("red", (0.9, 0.05, 0.05)))
    truth["standee"] = _world_box([sign])
    _export(out / "standee.glb", export_format="GLB")

    _reset()  # a skinned strip: a mesh bound to a two-bone armature (glTF skin)
    bpy.ops.object.armature_add(location=(0.0, 0.0, 0.0))
    rig = bpy.context.object
    rig.name = "rig"
    bpy.ops.object.mode_set(mode="EDIT")
    first = rig.data.edit_bones[0]
    first.head, first.tail = (0.0, 0.0, 0.0), (0.0, 0.0, 1.0)
    second = rig.data.edit_bones.new("upper")
    second.head, second.tail, second.parent = (0.0, 0.0, 1.0), (0.0, 0.0, 2.0), first
    bpy.ops.object.mode_set(mode="OBJECT")
    bpy.ops.mesh.primitive_plane_add(size=1.0, location=(0.0, 0.0, 1.0))
    strip = bpy.context.object
    strip.name = "strip"
    strip.scale = (0.5, 1.0, 2.0)
    strip.rotation_euler = (math.radians(90), 0.0, 0.0)
    bpy.ops.object.transform_apply(location=False, rotation=True, scale=True)
    strip.data.materials.append(_material("green", (0.05, 0.8, 0.1)))
    strip.select_set(True)
    rig.select_set(True)
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.parent_set(type="ARMATURE_AUTO")
    truth["skinned"] = _world_box([strip])
    _export(out / "skinned.glb", export_format="GLB")

    (out / "truth.json").write_text(json.dumps(truth), encoding="utf-8")


if __name__ == "__main__":
    build(Path(sys.argv[1]))
