"""The Blender Cycles pipeline: frozen scene + render configuration -> RGBA image.

Per process there is one :class:`BlenderRenderer` (see :func:`get_renderer`). It resets Blender
to empty factory settings once (bpy is imported lazily, through ``harness.render.bpyaccess``),
then keeps state across renders:

- each asset is imported once per process and its meshes shared by every placed object
  (``harness.render.asset_import``: OBJ through Blender's OBJ importer, glTF/GLB through its
  glTF importer with materials, textures and vertex colours, PLY/STL/USD through
  ``harness.render.meshformats``); the pipeline's own materials come from
  ``harness.render.materials``;
- each frozen scene is built once into its own ``bpy`` scene (``harness.render.scene_build``:
  floor, four walls, objects, camera, world; an object scene has no walls and its ground plane
  only when asked for), kept in an LRU of :data:`MAX_BUILT_SCENES` and reused across
  configurations with ``render.use_persistent_data``;
- per render only what changed is written: resolution and sampling
  (``harness.render.cycles_setup``), the world's lighting map and light settings
  (``harness.render.world_lighting``: Blender's bundled studio-light HDRIs at a fixed
  strength), the presentation settings (``harness.render.presentation``), the camera
  (``harness.render.framing``) and the walls hidden from it;
- Blender's own output (C-level prints on fds 1/2) goes to ``<log dir>/blender-<pid>.log``
  (``harness.render.blenderlog``; the service sets the folder), and a failure quotes its last
  lines.

Renders have a transparent film; backgrounds are composited later in numpy.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import time
from collections import OrderedDict
from pathlib import Path

import numpy as np
from PIL import Image

from harness.protocol.configurations import RenderConfig
from harness.render import (
    blenderlog,
    bpyaccess,
    cycles_setup,
    framing,
    presentation,
    world_lighting,
)
from harness.render.asset_import import AssetLibrary
from harness.render.bpyaccess import assign
from harness.render.failures import NothingVisible, RenderFailed, RenderTimeout
from harness.render.materials import Materials
from harness.render.scene_build import BuiltScene, build_scene, remove_scene
from harness.scenes.model import Scene

MAX_BUILT_SCENES = 8  # LRU of built bpy scenes per process (meshes are shared regardless)


class BlenderRenderer:
    """Per-process Blender state; use :func:`get_renderer` rather than constructing directly."""

    def __init__(self, device: str = "cpu"):
        with blenderlog.capture():
            bpy = bpyaccess.load()
            bpy.ops.wm.read_factory_settings(use_empty=True)
            self.device = cycles_setup.choose_device(device)
        self._materials = Materials()
        self._assets = AssetLibrary(self._materials)
        self._built: OrderedDict[str, BuiltScene] = OrderedDict()
        self._lights = world_lighting.StudioLights()
        self._tmp = Path(tempfile.mkdtemp(prefix="t3d-render-"))
        atexit.register(shutil.rmtree, self._tmp, True)
        self.builds = 0  # scenes built so far (for tests and benchmarks)

    def built(self, scene: Scene, scene_root: Path, identity: str) -> BuiltScene:
        """The bpy scene for ``identity``, built on first use (LRU of ``MAX_BUILT_SCENES``)."""
        if identity in self._built:
            self._built.move_to_end(identity)
            return self._built[identity]
        built = build_scene(scene, scene_root, identity, self._assets, self._materials, self.device)
        self.builds += 1
        self._built[identity] = built
        while len(self._built) > MAX_BUILT_SCENES:
            _, old = self._built.popitem(last=False)
            remove_scene(old.bscene, old.objects)
        return built

    def _apply(self, built: BuiltScene, scene: Scene, cfg: RenderConfig, timeout_s: float | None) -> None:
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
        # assign only what changed: any write tags Cycles' persistent data for a re-sync
        cycles_setup.apply_sampling(built.bscene, cfg, timeout_s)
        image = self._lights.image(cfg.lighting, scene, cfg)
        if built.env_node.image != image:
            built.env_node.image = image
        presentation.present(built, cfg, self._materials)

        if built.world is not None and cfg.ambient is None:  # a uniform ambient world has no map to turn or tint
            world_lighting.light(built.world, cfg)
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
            assign(cam.data, attr, value)
        presentation.hide_walls(built, framing.hidden_walls(built.room_size, pose.location))

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
        bpy = bpyaccess.load()
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
