"""What the audit needs from a renderer, and the default one (the Blender render service).

A project may hand the plugin its own renderer (``pytest_audit_renderer``), e.g. a numpy
rasteriser in the harness's own tests; anything with this shape works.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np

    from harness.protocol.configurations import RenderConfig
    from harness.scenes.model import Scene


@runtime_checkable
class Renderer(Protocol):
    """A renderer. ``identity`` names it in cache keys, run ids and cards."""

    @property
    def identity(self) -> str: ...

    def render(
        self, scene: Scene, scene_root: Path, identity: str, cfg: RenderConfig
    ) -> np.ndarray:
        """RGBA ``(H, W, 4)`` uint8 with a transparent film; raises ``RenderError`` on failure."""
        ...


def default_renderer(cache_dir: Path | str) -> Renderer:
    """The Blender render service, caching under ``cache_dir`` (a local directory, or a store
    URL such as ``s3://bucket/prefix``; imports bpy only to render)."""
    from harness.render.service import RenderService

    return RenderService(cache_dir if isinstance(cache_dir, str) and "://" in cache_dir
                         else Path(cache_dir))  # fmt: skip


def host_facts(renderer: object) -> dict[str, object] | None:
    """``renderer.host()`` when the renderer has one (Blender: CPU model, Blender build, Cycles
    device and kernel, see :mod:`harness.render.host`), else ``None`` (e.g. a test rasteriser)."""
    host = getattr(renderer, "host", None)
    return dict(host()) if callable(host) else None
