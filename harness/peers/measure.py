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

from harness.measure.images import ImageSource, measure_images, render_total
from harness.measure.plan import ImageKey, Plan, PlannedScene, Row
from harness.protocol.configurations import Configuration
from harness.protocol.presets import Protocol
from harness.render.renderer import default_renderer

if TYPE_CHECKING:
    import pandas as pd

    from harness.core.progress import Progress
    from harness.evaluators.base import EvaluatorSpec
    from harness.render.renderer import Renderer
    from harness.scenes.sceneset import SceneSet

#: ``(protocol, renders) -> Progress``: the progress of one protocol's renders
ProgressOf = Callable[[Protocol, int], "Progress"]

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
                        *, cache_dir: Path, load_evaluator: Callable[[object], object],
                        progress_of: ProgressOf | None = None) -> list[dict[str, object]]:  # fmt: skip
    """Rows of an image evaluator under ``protocol``, measured by the audit's pipeline;
    ``progress_of(protocol, renders)`` makes the progress its renders advance."""
    plan = preset_plan(scene_set, protocol, template)
    bar = progress_of(protocol, render_total(plan)) if progress_of is not None else None
    try:
        table = measure_images(spec, plan, renderer, cache_dir=cache_dir, load_evaluator=load_evaluator,
                               protocol_of={plan.view_policy: protocol}.get, progress=bar)  # fmt: skip
    finally:
        if bar is not None:
            bar.close()
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
    progress_of: ProgressOf | None = None,
) -> pd.DataFrame:
    """One row per (preset, scene) (:data:`COLUMNS`), presets in the given order.

    ``renderer`` (default: the Blender render service under ``cache_dir/renders``) is used
    only by image evaluators; their scores go through the score cache under ``cache_dir``.
    ``progress_of(protocol, renders)``: the progress each protocol's renders advance (image
    evaluators only; a scene-reading evaluator renders nothing).
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
                                            cache_dir=Path(cache_dir), load_evaluator=evaluator.load,
                                            progress_of=progress_of)  # fmt: skip
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


class StudyProgress:
    """One progress over every protocol of a preset command (``concordance``, ``reproduce``):
    the renders of all of them, counted per protocol (a render two protocols share is fetched
    twice, the second time from the render cache); :meth:`of` is ``score_protocols``'s
    ``progress_of``. A scene-reading evaluator renders nothing: no progress then."""

    def __init__(self, spec: EvaluatorSpec, scene_set: SceneSet, protocols: Sequence[Protocol], template: str):
        from harness.core.progress import progress
        from harness.evaluators.reference.scene_measure import is_scene_evaluator

        self.bar: Progress | None = None
        if not is_scene_evaluator(spec):
            total = sum(render_total(preset_plan(scene_set, p, template)) for p in protocols)
            self.bar = progress(total, verb="fetched", unit="render", label=f"{spec.id} under {len(protocols)} protocols")

    def of(self, protocol: Protocol, total: int) -> Progress:
        assert self.bar is not None  # asked for by image evaluators only
        return _Part(self.bar)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


class _Part:
    """One protocol's share of a :class:`StudyProgress`: advances it, closes nothing."""

    def __init__(self, bar: Progress):
        self._bar = bar

    def update(self, n: int = 1) -> object:
        return self._bar.update(n)

    def close(self) -> None:
        """Nothing: the study's progress goes on with the next protocol."""
