"""The public rendering API: cached renders of frozen scenes under render configurations.

>>> service = RenderService(cache_dir)                                      # doctest: +SKIP
>>> rgba = service.render(scene, scene_root, scene_identity(scene, root), cfg)  # doctest: +SKIP

Images are (H, W, 4) uint8 straight-alpha RGBA; composite a background with
:func:`harness.render.composite.composite`. A failed render raises a
:class:`harness.render.failures.SceneRenderError` subclass and is never cached.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.protocol.configurations import RenderConfig
from harness.render.cache import RenderCache, default_render_cache_dir, key_inputs
from harness.render.store_cache import LEASE_MARGIN_S, StoreRenderCache, open_render_cache
from harness.scenes.model import Scene

DEFAULT_TIMEOUT_S = 600.0
DEVICE_ENV = "T3D_AUDIT_RENDER_DEVICE"  # cpu (default, deterministic) | gpu | auto


@dataclass(frozen=True)
class RenderRequest:
    """One render to do: a scene (with its set root and identity) under one render config."""

    scene: Scene
    scene_root: Path
    identity: str
    cfg: RenderConfig


class RenderService:
    """Renders through the per-process Blender pipeline, behind the content-addressed cache.

    ``cache_dir`` is the render-cache root (``None``: ``<default cache dir>/renders``), a
    store URL (``file://DIR``, ``s3://bucket/prefix``: renders under ``<url>/renders``, shared
    across machines with leases) or a ready cache object;
    ``timeout_s`` bounds one render; ``device`` is ``cpu`` (default), ``gpu`` or ``auto``
    (default from ``$T3D_AUDIT_RENDER_DEVICE``). GPU renders get their own cache keys.
    Blender's own output goes to ``<cache_dir>/logs/blender-<pid>.log``, not the terminal.
    """

    def __init__(
        self,
        cache_dir: Path | str | RenderCache | StoreRenderCache | None = None,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        device: str | None = None,
        read_only: bool = False,
    ):
        if isinstance(cache_dir, RenderCache | StoreRenderCache):
            self.cache: RenderCache | StoreRenderCache = cache_dir
        else:
            self.cache = open_render_cache(
                cache_dir if cache_dir is not None else default_render_cache_dir(),
                read_only=read_only,
                lease_ttl_s=timeout_s + LEASE_MARGIN_S,
            )
        self.timeout_s = timeout_s
        self._device_request = device or os.environ.get(DEVICE_ENV, "cpu")
        self.rendered = 0  # renders actually done by this service (cache misses)

    @property
    def identity(self) -> str:
        """The renderer's name in cards and manifests: Blender version, revision, device."""
        from harness.render.settings import RENDERER_REVISION, blender_version

        return f"blender-{blender_version()}-cycles-rev{RENDERER_REVISION}-{self.device}"

    @property
    def device(self) -> str:
        """The device renders run on; resolving ``auto`` starts Blender."""
        if self._device_request == "cpu":
            return "cpu"
        return self._renderer().device

    def start(self) -> str:
        """Start Blender now (factory reset, render device) rather than on the first render;
        returns the device. Idempotent."""
        return self._renderer().device

    def host(self) -> dict:
        """Facts about this machine's renderer (``manifest.json#/render_host``): CPU model,
        Blender build, Cycles device and CPU kernel. Does not import bpy here; with a local
        render cache the Blender facts are kept in ``<renders>/host/`` between runs."""
        from harness.render.host import render_host

        local = isinstance(self.cache, RenderCache)
        return render_host(self.device, self.cache.root / "host" if local else None)

    def _renderer(self):
        from harness.render import blenderlog
        from harness.render.blender import get_renderer

        blenderlog.set_log_dir(self.cache.log_dir)
        return get_renderer(self._device_request)

    def key(self, identity: str, cfg: RenderConfig) -> str:
        """The render-cache key of (scene identity, cfg) on this service's device."""
        return self.cache.key(identity, cfg, self.device)

    def render(self, scene: Scene, scene_root: Path, identity: str, cfg: RenderConfig) -> np.ndarray:
        """(H, W, 4) uint8 RGBA of ``scene`` under ``cfg``, from the cache or rendered once."""
        key = self.key(identity, cfg)
        fn = self._render_fn(scene, scene_root, identity, cfg)
        return self.cache.get_or_render(key, fn, self._meta(scene, identity, cfg))

    def _meta(self, scene: Scene, identity: str, cfg: RenderConfig) -> dict:
        return {"scene_id": scene.id, "inputs": key_inputs(identity, cfg, self.device)}

    def try_render(self, scene: Scene, scene_root: Path, identity: str, cfg: RenderConfig) -> str:
        """Render into a shared store without waiting: ``"rendered"``, ``"cached"``, or
        ``"busy"`` (another machine holds the key's lease; try again later). Raises
        ``RenderError`` on a failed render (nothing stored). Needs a store-backed cache."""
        if not isinstance(self.cache, StoreRenderCache):
            before = self.rendered
            self.render(scene, scene_root, identity, cfg)
            return "rendered" if self.rendered > before else "cached"
        fn = self._render_fn(scene, scene_root, identity, cfg)
        status, _ = self.cache.try_render(self.key(identity, cfg), fn, self._meta(scene, identity, cfg))
        return status

    def _render_fn(self, scene: Scene, scene_root: Path, identity: str, cfg: RenderConfig):
        def fn() -> np.ndarray:
            image = self._renderer().render(
                scene, Path(scene_root), identity, cfg, timeout_s=self.timeout_s
            )
            self.rendered += 1
            return image

        return fn

    def render_many(self, jobs: Iterable[RenderRequest]) -> list[np.ndarray]:
        """Render every request (grouped by scene so each is built once); results in input order."""
        out = dict(self.iter_render(jobs))
        return [out[i] for i in range(len(out))]

    def iter_render(self, jobs: Iterable[RenderRequest]) -> Iterator[tuple[int, np.ndarray]]:
        """Yield ``(input index, image)`` in scene-grouped order, for progress reporting."""
        jobs = list(jobs)
        order = sorted(range(len(jobs)), key=lambda i: (jobs[i].identity, i))
        for i in order:
            j = jobs[i]
            yield i, self.render(j.scene, j.scene_root, j.identity, j.cfg)
