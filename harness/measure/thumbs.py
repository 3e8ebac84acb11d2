"""The report's thumbnail images: renders the evaluators saw, read back and JPEG-encoded.

The HTML report (:mod:`harness.report.html.page`) shows, per factor, one prompt's scenes
across the factor's levels, and each probe edit next to the intact scene. This module makes
those images from the plan and the renderer (the render cache: every image was rendered for
scoring, so this is a cache read); :mod:`harness.report.thumbs` only writes what it gets into
the report's ``thumbs/``, so the HTML can be rebuilt from the report directory alone.

Images shared by several rows (template and paraphrase levels reuse the c0 render) are encoded
once. JPEG bytes depend only on the pixels and the Pillow build, so equal renders give equal
bytes. Evaluators that all score scenes without rendering (companion, planted) get no
thumbnails (:func:`needs_renders`): rendering them would be work the audit never did.

Thumbnails are cached like renders (``<cache dir>/thumbs/``, the cache is handed in by the
report writer: :func:`harness.report.pieces.thumb_entries`), content-addressed by
:func:`thumb_key`: the render keys of the image, its background, view policy, size and
quality, the Pillow version and the code that composites and encodes it. A warm run gets the
cached JPEG bytes and neither reads a render nor encodes.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.core.hashing import sha256_json

THUMB_PROMPTS = 2  # prompts whose scenes are shown (the first in prompt-id order)
MAX_PX = 256  # longer side of a stored thumbnail, in pixels (no upscaling)
JPEG_QUALITY = 85


@dataclass(frozen=True)
class ThumbImage:
    """One plan row's thumbnail: its JPEG bytes (``None`` when it has no image, or its render
    failed: ``error`` then says why)."""

    generator: str
    prompt_id: str
    factor: str
    level: str
    data: bytes | None
    error: str | None


@dataclass(frozen=True)
class Thumbnails:
    """The thumbnails of a report: the prompts shown and one image per plan row, in plan order."""

    prompts: list[str]
    images: list[ThumbImage]


def encode_thumb(rgb: object, max_px: int = MAX_PX, quality: int = JPEG_QUALITY) -> bytes:
    """JPEG bytes of an ``(H, W, 3)`` uint8 image, shrunk to at most ``max_px`` per side."""
    from PIL import Image

    image = Image.fromarray(rgb[..., :3], mode="RGB")
    if max(image.size) > max_px:
        scale = max_px / max(image.size)
        image = image.resize(
            (max(1, round(image.width * scale)), max(1, round(image.height * scale))),
            Image.Resampling.LANCZOS,
        )
    out = io.BytesIO()
    image.save(out, format="JPEG", quality=quality, optimize=True)
    return out.getvalue()


def needs_renders(specs: Sequence[object]) -> bool:
    """Whether any of the evaluator ``specs`` scored rendered images."""
    from harness.evaluators.reference.scene_measure import is_scene_evaluator

    return any(not is_scene_evaluator(s) for s in specs)


def render_key(renderer: object, identity: str, cfg: object) -> str:
    """The render-cache key of (scene identity, render config) on ``renderer``; a renderer
    without a cache key (a test rasteriser) is named by its identity instead."""
    key = getattr(renderer, "key", None)
    if callable(key):
        return str(key(identity, cfg))
    return sha256_json(
        {"renderer": str(getattr(renderer, "identity", type(renderer).__qualname__)),
         "scene": identity, "render": cfg.to_dict()}
    )


def fixed_key_inputs() -> dict[str, object]:
    """The thumbnail key inputs shared by every image: the Pillow version and the sources that
    turn renders into thumbnail bytes (composite, view sheet, this module)."""
    import harness.measure.images as measure_images
    import harness.render.composite as composite
    from harness.core.code_identity import package_versions, source_hash

    return {
        "packages": package_versions(["pillow"]),
        "code": source_hash([Path(__file__), Path(composite.__file__), Path(measure_images.__file__)]),
    }


def thumb_key(plan: object, renderer: object, image: object, max_px: int = MAX_PX, quality: int = JPEG_QUALITY,
              fixed: dict[str, object] | None = None) -> str:
    """The thumbnail cache key of ``image`` (a ``harness.measure.plan.ImageKey``): sha256 of the
    render keys of its views, its background (id and RGB), view policy, ``max_px``, ``quality``
    and ``fixed`` (default: :func:`fixed_key_inputs`)."""
    from harness.protocol.configurations import background_rgb

    identity = plan.scenes[image.scene].identity
    return sha256_json(
        {
            "renders": [render_key(renderer, identity, cfg) for cfg in (image.render, *image.views)],
            "background": [image.background, [int(c) for c in background_rgb(image.background)]],
            "policy": image.policy,
            "max_px": max_px,
            "quality": quality,
            **(fixed if fixed is not None else fixed_key_inputs()),
        }
    )


def thumb_images(plan: object, renderer: object, prompts: int = THUMB_PROMPTS, cache: object = None) -> Thumbnails:
    """The thumbnails of the first ``prompts`` prompt ids of ``plan``, one per row in plan order.
    A render that fails gives its error and no bytes (failures are never cached). ``cache``: a
    :class:`harness.report.pieces.SealedEntries` of encoded thumbnails (:func:`thumb_key`), read
    before any render is and filled with what was encoded."""
    from harness.measure.images import ImageSource

    wanted = sorted({r.prompt_id for r in plan.rows})[:prompts]
    source = ImageSource(plan, renderer)
    fixed = fixed_key_inputs() if cache is not None else None
    keys: dict[object, str] = {}  # image → thumbnail key (rows share images)
    found: dict[str, bytes] = {}  # thumbnail bytes of this run by key
    images: list[ThumbImage] = []
    for _group, rows in plan.groups():
        rows = [r for r in rows if r.prompt_id in wanted]
        if not rows:
            continue
        source.clear()
        for row in rows:
            error = row.error
            data = None
            if row.image is not None:
                key = ""
                if cache is not None:
                    key = keys.get(row.image) or keys.setdefault(
                        row.image, thumb_key(plan, renderer, row.image, fixed=fixed))
                data = found.get(key) or (cache.get(key) if cache is not None else None)
                if data is None:
                    rgb = source.rgb(row.image)
                    if isinstance(rgb, str):
                        error = rgb
                    else:
                        data = encode_thumb(rgb)
                        if cache is not None:
                            cache.put(key, data)
                if data is not None and cache is not None:
                    found[key] = data
            images.append(ThumbImage(row.generator, row.prompt_id, row.factor, row.level, data, error))
    return Thumbnails(wanted, images)
