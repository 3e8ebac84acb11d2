"""Thumbnails of the renders the evaluators saw, copied into the report as ``thumbs/``.

The report directory holds no renders of its own; the HTML report (:mod:`harness.report.html_page`)
shows, per factor, one prompt's scenes across the factor's levels, and each probe edit next to
the intact scene. The writer takes those images from the session's renders (the render cache:
every image was rendered for scoring, so this is a cache read) and writes them here, so the HTML
can be rebuilt from the report directory alone.

Layout::

    thumbs/<16 hex>.jpg   one image, at most MAX_PX on its longer side, named by its bytes
    thumbs/index.json     {"prompts": [...], "images": [{generator, prompt_id, factor, level,
                           file | null, error}]} in plan order

Images shared by several rows (template and paraphrase levels reuse the c0 render) are stored
once. JPEG bytes depend only on the pixels and the Pillow build, so equal renders give equal
files. A report whose evaluators all score scenes without rendering (companion, planted) gets
no thumbnails: rendering them would be work the audit never did.

Thumbnails are cached like renders (``<cache dir>/thumbs/``, :mod:`harness.report.pieces`),
content-addressed by :func:`thumb_key`: the render keys of the image, its background, view
policy, size and quality, the Pillow version and the code that composites and encodes it. A
warm run copies the cached JPEG bytes into the report and neither reads a render nor encodes.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.fileio import write_json_atomic
from harness.hashing import sha256_bytes, sha256_json

THUMB_DIR = "thumbs"
INDEX = "index.json"
THUMB_PROMPTS = 2  # prompts whose scenes are shown (the first in prompt-id order)
MAX_PX = 256  # longer side of a stored thumbnail, in pixels (no upscaling)
JPEG_QUALITY = 85


def encode_thumb(rgb: Any, max_px: int = MAX_PX, quality: int = JPEG_QUALITY) -> bytes:
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


def needs_renders(specs: Sequence[Any]) -> bool:
    """Whether any of the evaluator ``specs`` scored rendered images."""
    from harness.evaluators.reference.scene_measure import is_scene_evaluator

    return any(not is_scene_evaluator(s) for s in specs)


def write_session_thumbs(session: Any, evaluators: Sequence[str], report_dir: Path) -> int:
    """``thumbs/`` of an audit session's report (nothing when no evaluator scored renders),
    through the thumbnail cache under the session's cache dir."""
    if not needs_renders([session.specs[ev] for ev in evaluators]):
        return 0
    from harness.report.pieces import thumb_entries

    return write_thumbs(
        session.plan, session.renderer, report_dir, cache=thumb_entries(session.options.cache_dir)
    )


def render_key(renderer: Any, identity: str, cfg: Any) -> str:
    """The render-cache key of (scene identity, render config) on ``renderer``; a renderer
    without a cache key (a test rasteriser) is named by its identity instead."""
    key = getattr(renderer, "key", None)
    if callable(key):
        return str(key(identity, cfg))
    return sha256_json(
        {"renderer": str(getattr(renderer, "identity", type(renderer).__qualname__)),
         "scene": identity, "render": cfg.to_dict()}
    )


def fixed_key_inputs() -> dict[str, Any]:
    """The thumbnail key inputs shared by every image: the Pillow version and the sources that
    turn renders into thumbnail bytes (composite, view sheet, this module)."""
    import harness.measure_images as measure_images
    import harness.render.composite as composite
    from harness.report.pieces import package_versions, source_hash

    return {
        "packages": package_versions(["pillow"]),
        "code": source_hash([Path(__file__), Path(composite.__file__), Path(measure_images.__file__)]),
    }


def thumb_key(plan: Any, renderer: Any, image: Any, max_px: int = MAX_PX, quality: int = JPEG_QUALITY,
              fixed: dict[str, Any] | None = None) -> str:
    """The thumbnail cache key of ``image`` (a ``harness.measure_plan.ImageKey``): sha256 of the
    render keys of its views, its background (id and RGB), view policy, ``max_px``, ``quality``
    and ``fixed`` (default: :func:`fixed_key_inputs`)."""
    from harness.protocol import background_rgb

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


def write_thumbs(plan: Any, renderer: Any, report_dir: Path, prompts: int = THUMB_PROMPTS,
                 cache: Any = None) -> int:
    """Write ``thumbs/`` for the first ``prompts`` prompt ids of ``plan``; returns the number of
    image files. A render that fails is listed with its error and no file (failures are never
    cached). ``cache``: a :class:`harness.report.pieces.SealedEntries` of encoded thumbnails
    (:func:`thumb_key`), read before any render is and filled with what was encoded."""
    from harness.measure_images import ImageSource

    wanted = sorted({r.prompt_id for r in plan.rows})[:prompts]
    out_dir = Path(report_dir) / THUMB_DIR
    out_dir.mkdir(parents=True, exist_ok=True)
    source = ImageSource(plan, renderer)
    fixed = fixed_key_inputs() if cache is not None else None
    keys: dict[Any, str] = {}  # image → thumbnail key (rows share images)
    found: dict[str, bytes] = {}  # thumbnail bytes of this run by key
    entries: list[dict[str, Any]] = []
    files: set[str] = set()
    for _group, rows in plan.groups():
        rows = [r for r in rows if r.prompt_id in wanted]
        if not rows:
            continue
        source.clear()
        for row in rows:
            entry: dict[str, Any] = {
                "generator": row.generator,
                "prompt_id": row.prompt_id,
                "factor": row.factor,
                "level": row.level,
                "file": None,
                "error": row.error,
            }
            if row.image is not None:
                key = ""
                if cache is not None:
                    key = keys.get(row.image) or keys.setdefault(
                        row.image, thumb_key(plan, renderer, row.image, fixed=fixed))
                data = found.get(key) or (cache.get(key) if cache is not None else None)
                if data is None:
                    rgb = source.rgb(row.image)
                    if isinstance(rgb, str):
                        entry["error"] = rgb
                    else:
                        data = encode_thumb(rgb)
                        if cache is not None:
                            cache.put(key, data)
                if data is not None and cache is not None:
                    found[key] = data
                if data is not None:
                    name = f"{sha256_bytes(data)[:16]}.jpg"
                    if name not in files:
                        (out_dir / name).write_bytes(data)
                        files.add(name)
                    entry["file"] = name
            entries.append(entry)
    index = {"prompts": wanted, "images": entries}
    write_json_atomic(out_dir / INDEX, index, indent=1, ensure_ascii=True)
    return len(files)


def read_index(report_dir: Path) -> dict[str, Any] | None:
    """The parsed ``thumbs/index.json``, or ``None`` when the report has none (or it is unusable)."""
    path = Path(report_dir) / THUMB_DIR / INDEX
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("images"), list):
        return None
    return doc
