"""The Blender Cycles pipeline: the only module that imports bpy (lazily, on first use).

Per process there is one :class:`BlenderRenderer` (see :func:`get_renderer`). It resets Blender
to empty factory settings once, then keeps state across renders:

- each OBJ asset is imported once per process; its meshes are shared by every placed object
  (linked duplicates), scaled to the object's box, yawed and placed at its position;
- glTF/GLB assets go through Blender's own glTF importer (``harness.render.gltfscene``) with
  their materials, textures and vertex colours; OBJ assets through its OBJ importer;
- each frozen scene is built once into its own ``bpy`` scene (floor, four walls, objects,
  camera, world; an object scene has no walls and its ground plane only when asked for) and reused across configurations with ``render.use_persistent_data``; between
  renders only the camera, the world map, the hidden walls and the resolution change;
- lighting maps are Blender's bundled studio-light world HDRIs at a fixed strength;
- Blender's own output (C-level prints on fds 1/2) goes to ``<log dir>/blender-<pid>.log``
  (``harness.render.blenderlog``; the service sets the folder), and a failure quotes its last
  lines.

Renders have a transparent film; backgrounds are composited later in numpy.
"""

from __future__ import annotations

import atexit
import math
import os
import shutil
import tempfile
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import numpy as np
from PIL import Image

from harness.core.hashing import sha256_file
from harness.protocol.configurations import NEUTRAL_TEMPERATURE_K, RenderConfig
from harness.render import blenderlog, framing, settings
from harness.render.failures import (
    AssetImportFailed,
    NothingVisible,
    RenderFailed,
    RenderTimeout,
    SceneInvalid,
)
from harness.scenes.model import Scene
from harness.vocab.factors import LIGHTING_MAPS

MAX_BUILT_SCENES = 8  # LRU of built bpy scenes per process (meshes are shared regardless)
GPU_BACKENDS = ("OPTIX", "CUDA", "HIP", "ONEAPI", "METAL")


def _bpy() -> ModuleType:
    import bpy  # the one place bpy is imported

    return bpy


@dataclass
class _Asset:
    """An imported OBJ: its meshes with their import matrices, and its bounding box (asset units)."""

    parts: list[tuple[object, object]]  # (bpy mesh, mathutils.Matrix)
    lo: np.ndarray  # (3,)
    hi: np.ndarray  # (3,)
    kind: str = "mesh"  # mesh | points | splats (harness.render.meshformats)


@dataclass
class _Built:
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
    world: _World | None = None


@dataclass
class _World:
    """The world's node tree and the nodes the search's light settings use: linked
    into the tree only while a setting is off its default, so a default render's world is the
    study's (environment colour straight into the background)."""

    tree: object
    env: object
    background: object
    mapping: object  # environment rotation about z: texture coordinate -> mapping -> env vector
    coords: object
    blackbody: object  # colour temperature tint: env colour x blackbody colour
    tint: object


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


class BlenderRenderer:
    """Per-process Blender state; use :func:`get_renderer` rather than constructing directly."""

    def __init__(self, device: str = "cpu"):
        with blenderlog.capture():
            bpy = _bpy()
            bpy.ops.wm.read_factory_settings(use_empty=True)
            self.device = self._setup_device(device)
        self._assets: dict[tuple[str, str], _Asset] = {}
        self._built: OrderedDict[str, _Built] = OrderedDict()
        self._hdris: dict[str, object] = {}
        self._tmp = Path(tempfile.mkdtemp(prefix="t3d-render-"))
        atexit.register(shutil.rmtree, self._tmp, True)
        self._materials: dict[str, object] = {}
        self.builds = 0  # scenes built so far (for tests and benchmarks)

    # -- device ----------------------------------------------------------------------------

    @staticmethod
    def _setup_device(device: str) -> str:
        """``cpu`` (deterministic default), ``gpu`` (required) or ``auto`` (GPU if present)."""
        if device == "cpu":
            return "cpu"
        bpy = _bpy()
        try:
            prefs = bpy.context.preferences.addons["cycles"].preferences
        except KeyError:
            prefs = None
        if prefs is not None:
            for backend in GPU_BACKENDS:
                try:
                    prefs.compute_device_type = backend
                except TypeError:
                    continue
                prefs.get_devices()
                gpus = [d for d in prefs.devices if d.type == backend]
                if gpus:
                    for d in prefs.devices:
                        d.use = d.type == backend
                    return "gpu"
        if device == "gpu":
            raise RenderFailed("no GPU device is available to Cycles", scene_id="-", hint="use device='cpu'")
        return "cpu"

    # -- assets ----------------------------------------------------------------------------

    def _asset(self, path: Path, scene: Scene, obj_id: str) -> _Asset:
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
        bpy = _bpy()
        if path.suffix.lower() in (".glb", ".gltf"):
            asset = self._gltf_asset(path, scene, obj_id)
            self._assets[cache_key] = asset
            return asset
        if path.suffix.lower() != ".obj":
            asset = self._mesh_asset(path, scene, obj_id)
            self._assets[cache_key] = asset
            return asset
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
                        mesh.materials.append(self._object_material(mesh))
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
        asset = _Asset(parts, allp.min(0), allp.max(0))
        self._assets[cache_key] = asset
        return asset

    def _gltf_asset(self, path: Path, scene: Scene, obj_id: str) -> _Asset:
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
        return _Asset(parts, box[0], box[1])

    def _import_parts(
        self, load: object, path: Path, scene: Scene, obj_id: str, label: str
    ) -> tuple[list[object], dict[str, object], tuple[object, object]]:
        """``load(bpy) -> (parts, facts)`` under Blender's log capture: an importer's error, or
        a file without geometry, is one ``AssetImportFailed`` with what Blender said; every
        mesh is kept (fake user) and one without a material gets :meth:`_object_material` (its
        colour attribute, e.g. glTF ``COLOR_0`` or OBJ/PLY vertex colours, or grey). Returns
        the parts, the importer's facts and the bounds (``facts`` ``lo``/``hi`` when given:
        splats' exact ellipsoid box)."""
        from harness.core.errors import ImportError_
        from harness.render import gltfscene

        with blenderlog.capture() as log:
            said = log.from_here()
            try:
                parts, facts = load(_bpy())
            except (RuntimeError, ImportError_) as exc:
                raise AssetImportFailed(
                    f"Blender could not import {path} (object {obj_id}): {str(exc).strip()}",
                    scene_id=scene.id,
                    hint=said.describe() or None,
                ) from exc
            for mesh, _ in parts:
                mesh.use_fake_user = True
                if not mesh.materials:
                    mesh.materials.append(self._object_material(mesh))
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

    def _object_material(self, mesh: object) -> object:
        """The material of a mesh that brings none: its colour attribute when it has one
        (OBJ/PLY vertex colours, ``meshformats.colour_material``), else the grey default."""
        from harness.render import meshformats

        attrs = mesh.color_attributes
        if len(attrs):
            name = (attrs.active_color or attrs[0]).name
            return meshformats.colour_material(_bpy(), name)
        return self._material("default_object", settings.DEFAULT_OBJECT_RGB)

    def _mesh_asset(self, path: Path, scene: Scene, obj_id: str) -> _Asset:
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
        return _Asset(parts, box[0], box[1], facts["kind"])

    def _material(self, name: str, rgb: tuple[float, float, float]) -> object:
        if name not in self._materials:
            bpy = _bpy()
            mat = bpy.data.materials.new(f"t3d:{name}")
            mat.use_fake_user = True
            mat.diffuse_color = (*rgb, 1.0)
            tree = mat.node_tree
            if tree is None:  # Blender < 5 needs use_nodes
                mat.use_nodes = True
                tree = mat.node_tree
            bsdf = next(n for n in tree.nodes if n.bl_idname == "ShaderNodeBsdfPrincipled")
            bsdf.inputs["Base Color"].default_value = (*rgb, 1.0)
            bsdf.inputs["Roughness"].default_value = 0.8
            self._materials[name] = mat
        return self._materials[name]

    def _hdri(self, level: str, scene: Scene, cfg: RenderConfig) -> object:
        if level not in settings.LIGHTING_FILES:
            raise RenderFailed(
                f"unknown lighting level {level!r}",
                scene_id=scene.id,
                cfg=cfg,
                hint=f"use one of {', '.join(LIGHTING_MAPS)}",
            )
        if level not in self._hdris:
            bpy = _bpy()
            path = (
                Path(bpy.utils.system_resource("DATAFILES"))
                / "studiolights"
                / "world"
                / settings.LIGHTING_FILES[level]
            )
            if not path.is_file():
                raise RenderFailed(
                    f"Blender's studio light {path} is missing", scene_id=scene.id, cfg=cfg
                )
            self._hdris[level] = bpy.data.images.load(str(path), check_existing=True)
        return self._hdris[level]

    # -- scene building --------------------------------------------------------------------

    def _box_object(self, bscene: object, name: str, box: framing.Box, material: object) -> object:
        bpy = _bpy()
        verts = [tuple(c) for c in box.corners().tolist()]  # corner i: bit k set -> hi on axis k
        faces = [(0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4), (2, 6, 7, 3), (0, 4, 6, 2), (1, 3, 7, 5)]
        mesh = bpy.data.meshes.new(f"{bscene.name}:{name}")
        mesh.from_pydata(verts, [], faces)
        mesh.materials.append(material)
        mesh.update()
        ob = bpy.data.objects.new(f"{bscene.name}:{name}", mesh)
        bscene.collection.objects.link(ob)
        return ob

    def _build(self, scene: Scene, scene_root: Path, identity: str) -> _Built:
        bpy = _bpy()
        from mathutils import Matrix, Quaternion

        validate_scene(scene, scene_root)
        root = Path(scene_root).resolve()
        assets = [self._asset((root / o.asset).resolve(), scene, o.id) for o in scene.objects]

        name = f"t3d-{identity[:16]}"
        bscene = bpy.data.scenes.new(name)
        built_objects: list[object] = []
        asset_parts: list[object] = []
        try:
            floor_mat = self._material("floor", settings.FLOOR_RGB)
            wall_mat = self._material("wall", settings.WALL_RGB)
            hx, hy = scene.room.size[0] / 2, scene.room.size[1] / 2
            if not scene.is_object_scene or scene.ground:
                # an object scene's ground is as thin as the room's floor is, relative to it
                depth = 0.02 if not scene.is_object_scene else 0.01 * max(hx, hy)
                floor = self._box_object(
                    bscene, "floor", framing.Box((-hx, -hy, -depth), (hx, hy, 0.0)), floor_mat
                )
                built_objects.append(floor)
            walls = {
                wname: self._box_object(bscene, wname, wbox, wall_mat)
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

            for obj, asset in zip(scene.objects, assets, strict=True):
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

            world = bpy.data.worlds.new(f"{name}:world")
            tree = world.node_tree
            if tree is None:
                world.use_nodes = True
                tree = world.node_tree
            tree.nodes.clear()
            env = tree.nodes.new("ShaderNodeTexEnvironment")
            bg = tree.nodes.new("ShaderNodeBackground")
            out = tree.nodes.new("ShaderNodeOutputWorld")
            bg.inputs["Strength"].default_value = settings.WORLD_STRENGTH
            tree.links.new(env.outputs["Color"], bg.inputs["Color"])
            tree.links.new(bg.outputs["Background"], out.inputs["Surface"])
            coords = tree.nodes.new("ShaderNodeTexCoord")
            mapping = tree.nodes.new("ShaderNodeMapping")
            blackbody = tree.nodes.new("ShaderNodeBlackbody")
            tint = tree.nodes.new("ShaderNodeMix")
            tint.data_type = "RGBA"
            tint.blend_type = "MULTIPLY"
            _socket(tint.inputs, "Factor", "VALUE").default_value = 1.0
            world.cycles.sampling_method = "MANUAL"  # the automatic map costs seconds per change
            world.cycles.sample_map_resolution = settings.WORLD_MAP_RESOLUTION
            bscene.world = world

            self._configure(bscene)
            if any(a.kind == "splats" for a in assets):
                from harness.render.meshformats import SPLAT_TRANSPARENT_BOUNCES

                # splat colours are baked display values: shown as stored, not tone-mapped
                bscene.view_settings.view_transform = "Standard"
                bscene.cycles.transparent_max_bounces = SPLAT_TRANSPARENT_BOUNCES
        except Exception:
            self._remove(bscene, built_objects)
            raise
        self.builds += 1
        return _Built(
            bscene=bscene,
            camera=camera,
            env_node=env,
            walls=walls,
            scene_id=scene.id,
            room_size=scene.room.size,
            box=framing.scene_box(scene),
            objects=built_objects,
            view_transform=bscene.view_settings.view_transform,
            assets=asset_parts,
            world=_World(tree, env, bg, mapping, coords, blackbody, tint),
        )

    def _configure(self, bscene: object) -> None:
        r = bscene.render
        r.engine = "CYCLES"
        r.film_transparent = True
        r.use_persistent_data = True
        threads = settings.render_threads()
        r.threads_mode = "FIXED" if threads else "AUTO"
        if threads:
            r.threads = threads
        r.resolution_percentage = 100
        r.use_compositing = False
        r.use_sequencer = False
        r.image_settings.file_format = "PNG"
        r.image_settings.color_mode = "RGBA"
        r.image_settings.color_depth = "8"
        r.image_settings.compression = 0
        r.use_stamp = False
        bscene.view_settings.view_transform = settings.VIEW_TRANSFORM
        bscene.view_settings.look = "None"
        bscene.view_settings.exposure = 0.0
        bscene.view_settings.gamma = 1.0
        c = bscene.cycles
        c.device = "GPU" if self.device == "gpu" else "CPU"
        c.use_animated_seed = False
        c.use_adaptive_sampling = False
        c.max_bounces = settings.MAX_BOUNCES
        c.denoiser = "OPENIMAGEDENOISE"
        # clamp sample values and drop caustics, or the few samples of the protocol leave
        # fireflies (sun glints, light leaking past walls) all over the floor
        c.sample_clamp_direct = settings.CLAMP_DIRECT
        c.sample_clamp_indirect = settings.CLAMP_INDIRECT
        c.caustics_reflective = False
        c.caustics_refractive = False
        c.blur_glossy = 1.0

    @staticmethod
    def _remove(bscene: object, objects: list[object]) -> None:
        bpy = _bpy()
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

    def built(self, scene: Scene, scene_root: Path, identity: str) -> _Built:
        """The bpy scene for ``identity``, built on first use (LRU of ``MAX_BUILT_SCENES``)."""
        if identity in self._built:
            self._built.move_to_end(identity)
            return self._built[identity]
        built = self._build(scene, scene_root, identity)
        self._built[identity] = built
        while len(self._built) > MAX_BUILT_SCENES:
            _, old = self._built.popitem(last=False)
            self._remove(old.bscene, old.objects)
        return built

    # -- rendering -------------------------------------------------------------------------

    def _apply(self, built: _Built, scene: Scene, cfg: RenderConfig, timeout_s: float | None) -> None:
        """Set the per-configuration state: resolution, sampling, camera, world, hidden walls."""
        if not (16 <= cfg.resolution_px <= 8192 and cfg.samples >= 1 and cfg.focal_length_mm > 0):
            raise RenderFailed(
                "resolution must be 16..8192 px, samples >= 1 and focal length > 0",
                scene_id=scene.id,
                cfg=cfg,
            )
        if not (0 < cfg.framing_margin < 1 and cfg.light_strength > 0 and cfg.colour_temperature_k > 0):
            raise RenderFailed(
                "framing margin must be in (0, 1), light strength and colour temperature > 0",
                scene_id=scene.id,
                cfg=cfg,
            )
        bscene = built.bscene
        # assign only what changed: any write tags Cycles' persistent data for a re-sync
        r, c = bscene.render, bscene.cycles
        _set(r, "resolution_x", int(cfg.resolution_px))
        _set(r, "resolution_y", int(cfg.resolution_px))
        _set(c, "samples", int(cfg.samples))
        _set(c, "seed", int(cfg.seed))
        _set(c, "use_denoising", bool(cfg.denoise))
        _set(c, "time_limit", float(timeout_s) if timeout_s else 0.0)
        image = self._hdri(cfg.lighting, scene, cfg)
        if built.env_node.image != image:
            built.env_node.image = image
        self._presentation(built, cfg)

        if built.world is not None and cfg.ambient is None:  # a uniform ambient world has no map to turn or tint
            _light(built.world, cfg)
        try:
            pose = framing.camera_pose(built.box, cfg)
        except ValueError as exc:
            raise RenderFailed(str(exc), scene_id=scene.id, cfg=cfg) from None
        cam = built.camera
        if tuple(cam.location) != pose.location or tuple(cam.rotation_euler) != pose.rotation_euler:
            cam.location = pose.location
            cam.rotation_euler = pose.rotation_euler
        for attr, value in (
            ("lens", pose.lens_mm),
            ("shift_x", pose.shift[0]),
            ("shift_y", pose.shift[1]),
            ("clip_start", pose.clip[0]),
            ("clip_end", pose.clip[1]),
        ):
            _set(cam.data, attr, value)
        hidden = framing.hidden_walls(built.room_size, pose.location)
        for wname, ob in built.walls.items():
            _set(ob, "hide_render", wname in hidden)

    def _presentation(self, built: _Built, cfg: RenderConfig) -> None:
        """The presentation settings (``RenderConfig.render_pass``, ``texture``, ``ambient``);
        at their defaults the scene renders exactly as before they existed."""
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
            _set(bg.inputs["Strength"], "default_value", settings.WORLD_STRENGTH)
        else:
            for lk in linked:
                tree.links.remove(lk)
            bg.inputs["Color"].default_value = (1.0, 1.0, 1.0, 1.0)
            _set(bg.inputs["Strength"], "default_value", float(cfg.ambient))
        if cfg.render_pass == "normal":
            from harness.protocol.source_cameras import FRAMES

            if cfg.normal_frame not in FRAMES:
                raise RenderFailed(f"unknown normal frame {cfg.normal_frame!r}", scene_id=built.scene_id, cfg=cfg,
                                   hint=f"use one of {', '.join(FRAMES)}")  # fmt: skip
            override, transform = self._normal_material(cfg.normal_frame), "Raw"  # 0.5·n + 0.5 as is
        elif not cfg.texture:
            override, transform = self._material("untextured", settings.DEFAULT_OBJECT_RGB), built.view_transform
        else:
            override, transform = None, built.view_transform
        layer = bscene.view_layers[0]
        if layer.material_override != override:
            layer.material_override = override
        _set(bscene.view_settings, "view_transform", transform)
        if cfg.geometry not in ("mesh", "points"):
            raise RenderFailed(f"unknown geometry {cfg.geometry!r}", scene_id=built.scene_id, cfg=cfg,
                               hint="use mesh or points")  # fmt: skip
        points = cfg.geometry == "points"
        if points and built.points is None:
            built.points = [(part, self._point_object(bscene, part)) for part in built.assets]
            built.objects += [ob for _, ob in built.points]
        for part, dots in built.points or ():
            _set(part, "hide_render", points)
            _set(dots, "hide_render", not points)

    def _point_object(self, bscene: object, part: object) -> object:
        """``part`` as points: :data:`settings.POINTS_PER_M2` seeded samples per square metre of
        its world-space surface (at least :data:`settings.MIN_POINTS`), each a small icosahedron
        (``meshformats.point_mesh``) in the part's first material."""
        from harness.render import meshformats

        bpy = _bpy()
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
        dots.materials.append(mesh.materials[0] if len(mesh.materials) else self._object_material(dots))
        ob = bpy.data.objects.new(f"{part.name}:points", dots)
        ob.hide_render = True
        bscene.collection.objects.link(ob)
        return ob

    def _normal_material(self, frame: str = "blender") -> object:
        """Emission of the world-space shading normal mapped to colour, ``0.5 * n + 0.5``, the
        normal written in the axes of source frame ``frame`` (``source_cameras.FRAMES``)."""
        from harness.protocol.source_cameras import FRAMES

        name = "normal" if frame == "blender" else f"normal:{frame}"
        if name not in self._materials:
            bpy = _bpy()
            mat = bpy.data.materials.new(f"t3d:{name}")
            mat.use_fake_user = True
            if mat.node_tree is None:  # Blender < 5 needs use_nodes
                mat.use_nodes = True
            nodes, links = mat.node_tree.nodes, mat.node_tree.links
            nodes.clear()
            geometry = nodes.new("ShaderNodeNewGeometry")
            remap = nodes.new("ShaderNodeVectorMath")
            remap.operation = "MULTIPLY_ADD"
            remap.inputs[1].default_value = (0.5, 0.5, 0.5)
            remap.inputs[2].default_value = (0.5, 0.5, 0.5)
            emission = nodes.new("ShaderNodeEmission")
            out = nodes.new("ShaderNodeOutputMaterial")
            normal = geometry.outputs["Normal"]
            if frame != "blender":  # source axis i is column i of the frame rotation: n_i = column_i · n
                combine = nodes.new("ShaderNodeCombineXYZ")
                for axis, column in enumerate(FRAMES[frame].T):
                    dot = nodes.new("ShaderNodeVectorMath")
                    dot.operation = "DOT_PRODUCT"
                    dot.inputs[1].default_value = tuple(float(c) for c in column)
                    links.new(normal, dot.inputs[0])
                    links.new(dot.outputs["Value"], combine.inputs[axis])
                normal = combine.outputs["Vector"]
            links.new(normal, remap.inputs[0])
            links.new(remap.outputs["Vector"], emission.inputs["Color"])
            links.new(emission.outputs["Emission"], out.inputs["Surface"])
            self._materials[name] = mat
        return self._materials[name]

    def hidden_walls(self, scene: Scene, scene_root: Path, identity: str, cfg: RenderConfig) -> set[str]:
        """Names of the walls hidden for ``cfg`` in the built scene (for tests)."""
        with blenderlog.capture():
            built = self.built(scene, scene_root, identity)
            self._apply(built, scene, cfg, None)
        return {n for n, ob in built.walls.items() if ob.hide_render}

    def render(
        self,
        scene: Scene,
        scene_root: Path,
        identity: str,
        cfg: RenderConfig,
        *,
        timeout_s: float | None = None,
    ) -> np.ndarray:
        """Render ``scene`` under ``cfg``: (H, W, 4) uint8 straight-alpha RGBA, H = W = resolution.

        Raises the typed errors of :mod:`harness.render.failures`; never returns a failed image.
        """
        bpy = _bpy()
        with blenderlog.capture() as log:
            built = self.built(scene, scene_root, identity)
            self._apply(built, scene, cfg, timeout_s)
            out = self._tmp / f"{os.getpid()}-{identity[:16]}.png"
            out.unlink(missing_ok=True)
            built.bscene.render.filepath = str(out)
            start = time.monotonic()
            said = log.from_here()
            try:
                bpy.ops.render.render(write_still=True, scene=built.bscene.name)
            except RuntimeError as exc:
                raise RenderFailed(
                    f"Blender failed: {str(exc).strip()}",
                    scene_id=scene.id,
                    cfg=cfg,
                    hint=said.describe() or None,
                ) from exc
            if not out.is_file():
                raise RenderFailed(
                    "Blender wrote no image", scene_id=scene.id, cfg=cfg, hint=said.describe() or None
                )
        elapsed = time.monotonic() - start
        if timeout_s and elapsed >= timeout_s:
            out.unlink(missing_ok=True)
            raise RenderTimeout(
                f"render took {elapsed:.1f} s, over the {timeout_s:g} s limit",
                scene_id=scene.id,
                cfg=cfg,
                hint="raise the timeout or lower samples/resolution",
            )
        with Image.open(out) as im:
            rgba = np.asarray(im.convert("RGBA")).copy()
        out.unlink(missing_ok=True)
        built.renders += 1
        if rgba.shape != (cfg.resolution_px, cfg.resolution_px, 4):
            raise RenderFailed(f"Blender wrote a {rgba.shape} image", scene_id=scene.id, cfg=cfg)
        if not rgba[..., 3].any():
            raise NothingVisible(
                "the render is fully transparent: nothing of the scene is in frame",
                scene_id=scene.id,
                cfg=cfg,
            )
        return rgba


def _socket(sockets: object, name: str, kind: str) -> object:
    """The socket ``name`` of type ``kind`` (a Mix node has A/B sockets of every data type)."""
    return next(s for s in sockets if s.name == name and s.type == kind)


def _link(tree: object, from_socket: object, to_socket: object) -> None:
    """Link ``from_socket`` into ``to_socket`` unless already (a relink re-syncs Cycles)."""
    if not any(link.from_socket == from_socket for link in to_socket.links):
        tree.links.new(from_socket, to_socket)


def _unlink(tree: object, to_socket: object) -> None:
    for link in list(to_socket.links):
        tree.links.remove(link)


def _light(world: _World, cfg: RenderConfig) -> None:
    """The search's light settings on the world: strength, rotation about z, blackbody tint.

    At the defaults (strength 1, rotation 0, 6500 K) the environment colour goes straight into
    the background at the study's strength, exactly as before these settings existed.
    """
    tree, env, bg = world.tree, world.env, world.background
    _set(bg.inputs["Strength"], "default_value", settings.WORLD_STRENGTH * float(cfg.light_strength))
    turn = float(cfg.light_rotation_deg) % 360.0
    if turn:
        _link(tree, world.coords.outputs["Generated"], world.mapping.inputs["Vector"])
        _link(tree, world.mapping.outputs["Vector"], env.inputs["Vector"])
        rotation = world.mapping.inputs["Rotation"]
        wanted = (0.0, 0.0, math.radians(turn))
        if tuple(rotation.default_value) != wanted:
            rotation.default_value = wanted
    elif env.inputs["Vector"].links:
        _unlink(tree, env.inputs["Vector"])
    colour_in = bg.inputs["Color"]
    if float(cfg.colour_temperature_k) != NEUTRAL_TEMPERATURE_K:
        _set(world.blackbody.inputs["Temperature"], "default_value", float(cfg.colour_temperature_k))
        _link(tree, env.outputs["Color"], _socket(world.tint.inputs, "A", "RGBA"))
        _link(tree, world.blackbody.outputs["Color"], _socket(world.tint.inputs, "B", "RGBA"))
        _link(tree, _socket(world.tint.outputs, "Result", "RGBA"), colour_in)
    else:
        _link(tree, env.outputs["Color"], colour_in)


def _set(target: object, attr: str, value: object) -> None:
    """``setattr`` unless equal (float32 properties compare after the round trip)."""
    current = getattr(target, attr)
    if isinstance(value, float):
        if abs(float(current) - value) <= 1e-7 * max(1.0, abs(value)):
            return
    elif current == value:
        return
    setattr(target, attr, value)


_RENDERERS: dict[str, BlenderRenderer] = {}


def get_renderer(device: str = "cpu") -> BlenderRenderer:
    """This process's renderer (created, and Blender reset, on first call)."""
    if _RENDERERS:
        only = next(iter(_RENDERERS.values()))
        if device in ("auto", only.device):
            return only
        raise RenderFailed(
            f"this process already renders on {only.device}; cannot switch to {device}",
            scene_id="-",
        )
    renderer = BlenderRenderer(device)
    _RENDERERS[renderer.device] = renderer
    return renderer
