"""Building a frozen scene into its own ``bpy`` scene: floor, four walls (seen by the camera
only), the objects (linked duplicates of the shared asset meshes, scaled to their boxes, yawed,
tilted and placed), the camera and the world; and removing a built scene again.

An object scene has no walls, and its ground plane only when the scene asks for one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from harness.render import bpyaccess, cycles_setup, framing, settings
from harness.render.asset_import import AssetLibrary
from harness.render.failures import SceneInvalid
from harness.render.materials import Materials
from harness.render.world_lighting import WorldNodes, make_world
from harness.scenes.model import Scene


@dataclass
class BuiltScene:
    """A scene built into bpy: the bpy scene, its camera, environment node and walls."""

    bscene: object
    camera: object
    env_node: object
    walls: dict[str, object]
    scene_id: str
    room_size: tuple[float, float]
    box: framing.Box
    renders: int = 0
    objects: list[object] = field(default_factory=list)
    view_transform: str = settings.VIEW_TRANSFORM  # the build's own (splats: Standard)
    assets: list[object] = field(default_factory=list)  # the scene objects' mesh parts
    points: list[tuple[object, object]] | None = None  # (part, its point object), made on first use
    world: WorldNodes | None = None


def validate_scene(scene: Scene, scene_root: Path) -> None:
    """Raise :class:`SceneInvalid` unless the scene can be built (finite, positive, inside root)."""

    def bad(what: str, hint: str | None = None) -> SceneInvalid:
        return SceneInvalid(what, scene_id=scene.id, hint=hint)

    sx, sy = scene.room.size
    if not all(math.isfinite(v) and v > 0 for v in (sx, sy, scene.room.wall_height)):
        raise bad(f"room size {scene.room.size} / wall height {scene.room.wall_height} must be > 0")
    root = Path(scene_root).resolve()
    for i, obj in enumerate(scene.objects):
        vals = (*obj.position, *obj.size, obj.yaw_deg)
        if not all(math.isfinite(v) for v in vals):
            raise bad(f"objects[{i}] ({obj.id}) has a non-finite position, size or yaw")
        if any(v <= 0 for v in obj.size):
            raise bad(f"objects[{i}] ({obj.id}) has a non-positive size {obj.size}")
        path = (root / obj.asset).resolve()
        if not path.is_relative_to(root):
            raise bad(
                f"objects[{i}] ({obj.id}) asset {obj.asset!r} leaves the scene-set root {root}",
                hint="asset paths are relative to the scene-set root",
            )


def build_scene(
    scene: Scene, scene_root: Path, identity: str, assets: AssetLibrary, materials: Materials, device: str
) -> BuiltScene:
    """``scene`` (assets under ``scene_root``) as the bpy scene ``t3d-<identity[:16]>``,
    rendering on ``device``; a failure part-way removes what was built."""
    bpy = bpyaccess.load()
    from mathutils import Matrix, Quaternion

    validate_scene(scene, scene_root)
    root = Path(scene_root).resolve()
    imported = [assets.asset((root / o.asset).resolve(), scene, o.id) for o in scene.objects]

    name = f"t3d-{identity[:16]}"
    bscene = bpy.data.scenes.new(name)
    built_objects: list[object] = []
    asset_parts: list[object] = []
    try:
        floor_mat = materials.plain("floor", settings.FLOOR_RGB)
        wall_mat = materials.plain("wall", settings.WALL_RGB)
        hx, hy = scene.room.size[0] / 2, scene.room.size[1] / 2
        if not scene.is_object_scene or scene.ground:
            # an object scene's ground is as thin as the room's floor is, relative to it
            depth = 0.02 if not scene.is_object_scene else 0.01 * max(hx, hy)
            floor = _box_object(
                bscene, "floor", framing.Box((-hx, -hy, -depth), (hx, hy, 0.0)), floor_mat
            )
            built_objects.append(floor)
        walls = {
            wname: _box_object(bscene, wname, wbox, wall_mat)
            for wname, wbox in framing.wall_boxes(scene.room.size, scene.room.wall_height).items()
        } if not scene.is_object_scene else {}
        for wall in walls.values():
            # walls are seen by the camera only: light from the environment reaches the
            # interior as in an open dollhouse, instead of only through the open top
            wall.visible_shadow = False
            wall.visible_diffuse = False
            wall.visible_glossy = False
            wall.visible_transmission = False
        built_objects += walls.values()

        for obj, asset in zip(scene.objects, imported, strict=True):
            extent = asset.hi - asset.lo
            scale = np.where(extent > 1e-9, np.asarray(obj.size) / np.maximum(extent, 1e-9), 1.0)
            # move the asset's bottom centre to the origin, scale to the box, yaw, place
            offset = -np.array([(asset.lo[0] + asset.hi[0]) / 2, (asset.lo[1] + asset.hi[1]) / 2, asset.lo[2]])
            place = (
                Matrix.Translation(obj.position)
                @ Matrix.Rotation(math.radians(obj.yaw_deg), 4, "Z")
                @ Matrix.Diagonal((*scale.tolist(), 1.0))
                @ Matrix.Translation(offset.tolist())
            )
            if obj.tilt is not None:  # schema 2: T · Rz(yaw) · R(tilt) · S · offset
                tilt = Quaternion(obj.tilt).normalized().to_matrix().to_4x4()
                place = (
                    Matrix.Translation(obj.position)
                    @ Matrix.Rotation(math.radians(obj.yaw_deg), 4, "Z")
                    @ tilt
                    @ Matrix.Diagonal((*scale.tolist(), 1.0))
                    @ Matrix.Translation(offset.tolist())
                )
            for j, (mesh, matrix) in enumerate(asset.parts):
                ob = bpy.data.objects.new(f"{name}:{obj.id}:{j}", mesh)  # shares the mesh
                ob.matrix_basis = place @ matrix
                if asset.kind == "splats":  # one ellipsoid instance per splat point
                    from harness.render.meshformats import splat_node_group

                    ob.modifiers.new("splats", "NODES").node_group = splat_node_group(bpy)
                bscene.collection.objects.link(ob)
                built_objects.append(ob)
                if asset.kind != "splats":  # splats are points already
                    asset_parts.append(ob)

        cam_data = bpy.data.cameras.new(f"{name}:camera")
        cam_data.sensor_fit = "HORIZONTAL"
        cam_data.sensor_width = framing.SENSOR_WIDTH_MM
        camera = bpy.data.objects.new(f"{name}:camera", cam_data)
        camera.rotation_mode = "XYZ"
        bscene.collection.objects.link(camera)
        bscene.camera = camera
        built_objects.append(camera)

        world = make_world(bscene, name)

        cycles_setup.configure(bscene, device)
        if any(a.kind == "splats" for a in imported):
            from harness.render.meshformats import SPLAT_TRANSPARENT_BOUNCES

            # splat colours are baked display values: shown as stored, not tone-mapped
            bscene.view_settings.view_transform = "Standard"
            bscene.cycles.transparent_max_bounces = SPLAT_TRANSPARENT_BOUNCES
    except Exception:
        remove_scene(bscene, built_objects)
        raise
    return BuiltScene(
        bscene=bscene,
        camera=camera,
        env_node=world.env,
        walls=walls,
        scene_id=scene.id,
        room_size=scene.room.size,
        box=framing.scene_box(scene),
        objects=built_objects,
        view_transform=bscene.view_settings.view_transform,
        assets=asset_parts,
        world=world,
    )


def remove_scene(bscene: object, objects: list[object]) -> None:
    """Remove ``bscene``, its ``objects``, their data no one else uses, and its world if unused."""
    bpy = bpyaccess.load()
    world = bscene.world
    for ob in objects:
        data = ob.data
        bpy.data.objects.remove(ob, do_unlink=True)
        if data is not None and data.users == 0 and not data.use_fake_user:
            if isinstance(data, bpy.types.Camera):
                bpy.data.cameras.remove(data)
            elif isinstance(data, bpy.types.Mesh):
                bpy.data.meshes.remove(data)
    bpy.data.scenes.remove(bscene)
    if world is not None and world.users == 0:
        bpy.data.worlds.remove(world)


def _box_object(bscene: object, name: str, box: framing.Box, material: object) -> object:
    """An axis-aligned box mesh object ``<scene>:<name>`` in ``material``, linked into ``bscene``."""
    bpy = bpyaccess.load()
    verts = [tuple(c) for c in box.corners().tolist()]  # corner i: bit k set -> hi on axis k
    faces = [(0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4), (2, 6, 7, 3), (0, 4, 6, 2), (1, 3, 7, 5)]
    mesh = bpy.data.meshes.new(f"{bscene.name}:{name}")
    mesh.from_pydata(verts, [], faces)
    mesh.materials.append(material)
    mesh.update()
    ob = bpy.data.objects.new(f"{bscene.name}:{name}", mesh)
    bscene.collection.objects.link(ob)
    return ob
