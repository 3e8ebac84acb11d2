"""Scoring a frozen scene set under one protocol preset.

Per scene, the protocol's shown views are rendered (through the renderer's cache: a view two
presets share is one render), composited on the protocol's background, tiled when the
protocol tiles, scored against the scene's c0 caption, and reduced to one score
(:meth:`Protocol.reduce`). Image scores go through the score cache. Scene-reading evaluators
(the companion, the planted ones) are never rendered: each view is a
:class:`~harness.evaluators.reference.items.ScoreItem` whose context carries the view's
configuration and the :class:`Presentation`. A render or score failure fails the scene: its
row has ``status`` ``failed`` and the reason, never a score.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from harness.core.errors import RenderError
from harness.protocol.configurations import Configuration, background_rgb
from harness.protocol.presets import Protocol
from harness.protocol.tiling import stack, tile

if TYPE_CHECKING:
    import pandas as pd

    from harness.evaluators.base import EvaluatorSpec
    from harness.scenes.sceneset import SceneSet

FACTOR = "preset"  # the configuration factor of a preset's views; its level is the preset name
COLUMNS = ("preset", "generator", "prompt_id", "scene_id", "score", "status", "error")


def view_configurations(protocol: Protocol, template: str, render_pass: str = "shaded") -> list[Configuration]:
    """The full configuration of each shown view (factor ``preset``, level the preset name)."""
    return [Configuration(FACTOR, protocol.name, cfg, protocol.pass_background(render_pass), template)
            for cfg in protocol.render_configs(render_pass)]  # fmt: skip


def presentation(protocol: Protocol) -> object:
    from harness.evaluators.reference.items import Presentation

    return Presentation(tiled=protocol.tiling is not None, views=len(protocol.shown_views),
                        passes=tuple(protocol.passes))  # fmt: skip


def _row(protocol: Protocol, scene: object, score: float, error: str) -> dict[str, object]:
    ok = not error and math.isfinite(score)
    return {"preset": protocol.name, "generator": scene.generator, "prompt_id": scene.prompt_id,
            "scene_id": scene.id, "score": score if ok else math.nan, "status": "ok" if ok else "failed",
            "error": "" if ok else (error or "score failed: non-finite score")}  # fmt: skip


def score_scenes_symbolic(evaluator: object, scene_set: SceneSet, protocol: Protocol, template: str,
                          prompt_specs: dict[str, object]) -> list[dict[str, object]]:  # fmt: skip
    """Rows of a scene-reading evaluator: one item per (pass, view), or one per pass when tiled."""
    from harness.captions import realize
    from harness.evaluators.reference.items import ScoreContext, ScoreItem

    shown = presentation(protocol)
    rows = []
    for scene in _ordered(scene_set):
        caption = realize(template, scene.prompt)
        items = []
        for render_pass in protocol.passes:
            configs = view_configurations(protocol, template, render_pass)
            if protocol.tiling is not None:
                configs = configs[:1]  # one image: its context is the grid's first view
            items += [ScoreItem(scene, prompt_specs.get(scene.prompt_id), caption,
                                ScoreContext(scene.generator, c, shown)) for c in configs]  # fmt: skip
        results = evaluator.score_items(items)
        failed = next((r.error for r in results if r.status != "ok"), None)
        if failed is not None:
            rows.append(_row(protocol, scene, math.nan, f"score failed: {failed}"))
            continue
        values = [float(r.score) for r in results]
        if protocol.tiling is not None:
            values = [math.fsum(values) / len(values)]  # passes of one grid: one image
        rows.append(_row(protocol, scene, protocol.reduce(values), ""))
    return rows


def scene_images(renderer: object, scene_set: SceneSet, scene: object, protocol: Protocol) -> list[object] | str:
    """The images the evaluator sees for ``scene`` ((H, W, 3) uint8 each), or the failure."""
    from harness.render.composite import composite

    per_pass = []
    for render_pass in protocol.passes:
        rgb = background_rgb(protocol.pass_background(render_pass))
        images = []
        for cfg in protocol.render_configs(render_pass):
            try:
                rgba = renderer.render(scene, Path(scene_set.root), scene_set.identity(scene.id), cfg)
            except RenderError as exc:
                return f"render failed: {exc}"
            images.append(composite(rgba, rgb))
        per_pass.append(images)
    if protocol.tiling is None:
        return [im for images in per_pass for im in images]
    cols, rows = protocol.tiling
    return [stack([tile(images, cols, rows) for images in per_pass])]


def score_scenes_images(evaluator: object, renderer: object, scene_set: SceneSet, protocol: Protocol,
                        template: str, needs_text: bool) -> list[dict[str, object]]:  # fmt: skip
    from harness.captions import realize

    rows = []
    for scene in _ordered(scene_set):
        images = scene_images(renderer, scene_set, scene, protocol)
        if isinstance(images, str):
            rows.append(_row(protocol, scene, math.nan, images))
            continue
        caption = realize(template, scene.prompt) if needs_text else ""
        try:
            results = evaluator.score(images, [caption] * len(images))
        except Exception as exc:  # a model failure fails the scene, with the reason
            rows.append(_row(protocol, scene, math.nan, f"score failed: {type(exc).__name__}: {exc}"))
            continue
        failed = next((r.error for r in results if r.status != "ok"), None)
        if failed is not None:
            rows.append(_row(protocol, scene, math.nan, f"score failed: {failed}"))
            continue
        rows.append(_row(protocol, scene, protocol.reduce([float(r.score) for r in results]), ""))
    return rows


def _ordered(scene_set: SceneSet) -> list[object]:
    return sorted(scene_set.scenes, key=lambda s: (s.generator, s.prompt_id, s.id))


def score_protocols(
    spec: EvaluatorSpec,
    scene_set: SceneSet,
    protocols: list[Protocol] | tuple[Protocol, ...],
    *,
    template: str,
    cache_dir: Path,
    renderer: object = None,
    load_evaluator: Callable[[object], object] | None = None,
) -> pd.DataFrame:
    """One row per (preset, scene) (:data:`COLUMNS`), presets in the given order.

    ``renderer`` (default: the Blender render service under ``cache_dir/renders``) is used
    only by image evaluators; their scores go through the score cache under ``cache_dir``.
    """
    import pandas as pd

    from harness.evaluators.reference.scene_measure import bundled_prompt_specs, is_scene_evaluator

    build = load_evaluator or (lambda s: s.build())
    evaluator = build(spec) if is_scene_evaluator(spec) else _Lazy(spec, build)
    rows: list[dict[str, object]] = []
    try:
        if is_scene_evaluator(spec):
            specs = bundled_prompt_specs()
            for protocol in protocols:
                rows += score_scenes_symbolic(evaluator, scene_set, protocol, template, specs)
        else:
            from harness.evaluators.cache import CachedEvaluator, ScoreCache

            if renderer is None:
                from harness.render.renderer import default_renderer

                renderer = default_renderer(Path(cache_dir) / "renders")
            cached = CachedEvaluator(evaluator, ScoreCache(Path(cache_dir)))
            needs_text = bool(getattr(spec, "needs_text", True))
            for protocol in protocols:
                rows += score_scenes_images(cached, renderer, scene_set, protocol, template, needs_text)
    finally:
        close = getattr(evaluator, "close", None)
        if close is not None:
            close()
    return pd.DataFrame(rows, columns=list(COLUMNS))


class _Lazy:
    """An image evaluator built on its first ``score`` call: a run the score cache serves
    whole never loads the model (importing torch and open_clip alone takes seconds)."""

    def __init__(self, spec: EvaluatorSpec, build: Callable[[object], object]):
        self.spec = spec
        self._build = build
        self._model: object = None

    def score(self, images: list[object], captions: list[str]) -> list[object]:
        if self._model is None:
            self._model = self._build(self.spec)
        return self._model.score(images, captions)

    def close(self) -> None:
        close = getattr(self._model, "close", None)
        if close is not None:
            close()
