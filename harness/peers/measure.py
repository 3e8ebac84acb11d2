"""Scoring a frozen scene set under one protocol preset.

Image evaluators are measured by the audit's one pipeline, :func:`harness.measure.images.measure_images`:
per preset, a plan of one row per scene whose image is the preset's shown views (every pass;
``preset:NAME`` policy), rendered through the renderer's cache (a view two presets share is one
render), composited on each pass's background, tiled when the protocol tiles, scored against
the scene's c0 caption through the score cache, and reduced to one score
(:meth:`Protocol.reduce`). Scene-reading evaluators (the companion, the planted ones) are never
rendered: each view is a :class:`~harness.evaluators.reference.items.ScoreItem` whose context
carries the view's configuration and the :class:`Presentation`. A render or score failure
fails the scene: its row has ``status`` ``failed`` and the reason, never a score.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from harness.measure.images import ImageSource, measure_images
from harness.measure.plan import ImageKey, Plan, PlannedScene, Row
from harness.protocol.configurations import Configuration
from harness.protocol.presets import Protocol
from harness.render.renderer import default_renderer

if TYPE_CHECKING:
    import pandas as pd

    from harness.evaluators.base import EvaluatorSpec
    from harness.render.renderer import Renderer
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


POLICY_PREFIX = "preset:"


def preset_plan(scene_set: SceneSet, protocol: Protocol, template: str | None,
                scenes: Sequence[object] | None = None) -> Plan:  # fmt: skip
    """The measurement plan of ``protocol`` on ``scenes`` of ``scene_set`` (default: all): one
    row per scene (factor ``preset``, level the preset name) whose image is the protocol's
    shown views of every pass (pass-major), captioned with ``template`` (``None``: the bare
    prompt, for a plan that only renders)."""
    from harness.captions import realize

    views = tuple(cfg for render_pass in protocol.passes for cfg in protocol.render_configs(render_pass))
    policy = POLICY_PREFIX + protocol.name
    planned: dict[str, PlannedScene] = {}
    rows: list[Row] = []
    for scene in _ordered(scene_set) if scenes is None else scenes:
        planned[scene.id] = PlannedScene(scene, scene_set.identity(scene.id))
        image = ImageKey(scene.id, views[0], protocol.background, views, policy)
        rows.append(Row(scene.generator, scene.prompt_id, scene.id, FACTOR, protocol.name,
                        scene.prompt if template is None else realize(template, scene.prompt), image))  # fmt: skip
    return Plan(Path(scene_set.root), policy, planned, rows, key="", view_policy=policy)


def scene_images(renderer: Renderer, scene_set: SceneSet, scene: object, protocol: Protocol) -> list[object] | str:
    """The images the evaluator sees for ``scene`` ((H, W, 3) uint8 each), or the failure."""
    plan = preset_plan(scene_set, protocol, None, [scene])
    (row,) = plan.rows
    assert row.image is not None  # a preset row always has its image
    images = ImageSource(plan, renderer, {row.image.policy: protocol}.get).scored_images(row.image)
    failed = [im for im in images if isinstance(im, str)]
    return failed[0] if failed else images


def score_scenes_images(spec: EvaluatorSpec, renderer: Renderer, scene_set: SceneSet, protocol: Protocol, template: str,
                        *, cache_dir: Path, load_evaluator: Callable[[object], object]) -> list[dict[str, object]]:  # fmt: skip
    """Rows of an image evaluator under ``protocol``, measured by the audit's pipeline."""
    plan = preset_plan(scene_set, protocol, template)
    table = measure_images(spec, plan, renderer, cache_dir=cache_dir, load_evaluator=load_evaluator,
                           protocol_of={plan.view_policy: protocol}.get)  # fmt: skip
    return [_row(protocol, plan.scenes[row.group].scene, float(score), str(error))
            for row, score, error in zip(plan.rows, table["score"], table["error"], strict=True)]


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
    evaluator = build(spec) if is_scene_evaluator(spec) else _OneModel(build)
    rows: list[dict[str, object]] = []
    try:
        if is_scene_evaluator(spec):
            specs = bundled_prompt_specs()
            for protocol in protocols:
                rows += score_scenes_symbolic(evaluator, scene_set, protocol, template, specs)
        else:
            if renderer is None:
                renderer = default_renderer(Path(cache_dir) / "renders")
            for protocol in protocols:
                rows += score_scenes_images(spec, renderer, scene_set, protocol, template,
                                            cache_dir=Path(cache_dir), load_evaluator=evaluator.load)  # fmt: skip
    finally:
        close = getattr(evaluator, "close", None)
        if close is not None:
            close()
    return pd.DataFrame(rows, columns=list(COLUMNS))


class _OneModel:
    """The image evaluator of every preset of one call: built by the first measurement that
    misses the score cache (a run the cache serves whole never loads the model: importing torch
    and open_clip alone takes seconds), and closed once, at the end."""

    def __init__(self, build: Callable[[object], object]):
        self._build = build
        self._model: object = None

    def load(self, spec: EvaluatorSpec) -> _KeptOpen:
        if self._model is None:
            self._model = self._build(spec)
        return _KeptOpen(self._model)

    def close(self) -> None:
        close = getattr(self._model, "close", None)
        if close is not None:
            close()


class _KeptOpen:
    """The model as one preset's measurement sees it: everything but ``close``, which
    :class:`_OneModel` does after the last preset."""

    def __init__(self, model: object):
        self._model = model

    def __getattr__(self, name: str) -> object:
        return getattr(self._model, name)

    def close(self) -> None:
        """Nothing: the model serves the next preset too."""
