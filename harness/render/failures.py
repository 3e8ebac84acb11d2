"""The render failure taxonomy: every failed render raises one of these, naming scene and config.

A failure never reaches an evaluator as an image: callers record it as a failure
(``status = failed``, ``error = str(exc)``). All derive from :class:`harness.core.errors.RenderError`.
"""

from __future__ import annotations

from harness.core.errors import RenderError
from harness.protocol.configurations import RenderConfig


def describe(cfg: RenderConfig | None) -> str:
    """Short readable form of a render configuration for error messages."""
    if cfg is None:
        return "any config"
    return (
        f"{cfg.resolution_px}px f={cfg.focal_length_mm:g}mm light={cfg.lighting} "
        f"pitch={cfg.pitch_deg:g} yaw={cfg.yaw_deg:g} samples={cfg.samples} seed={cfg.seed}"
        f"{' denoise' if cfg.denoise else ''}"
    )


class SceneRenderError(RenderError):
    """Base of the taxonomy: ``scene_id`` and ``cfg`` identify the failed render."""

    kind = "render_error"

    def __init__(
        self,
        what: str,
        *,
        scene_id: str,
        cfg: RenderConfig | None = None,
        hint: str | None = None,
    ):
        self.scene_id = scene_id
        self.cfg = cfg
        super().__init__(what, where=f"scene {scene_id} [{describe(cfg)}]", hint=hint)


class SceneInvalid(SceneRenderError):
    """The scene cannot be built (bad room, non-finite pose, asset path outside the root)."""

    kind = "scene_invalid"


class AssetImportFailed(SceneRenderError):
    """An asset file is missing or Blender's OBJ importer produced no mesh from it."""

    kind = "asset_import_failed"


class NothingVisible(SceneRenderError):
    """The render is fully transparent: nothing of the scene is in frame."""

    kind = "nothing_visible"


class RenderFailed(SceneRenderError):
    """Blender raised, produced no image, or the configuration is not renderable."""

    kind = "render_failed"


class RenderTimeout(SceneRenderError):
    """The render exceeded the service's time limit; its partial image is discarded."""

    kind = "render_timeout"
