"""The measurement pipeline: (evaluator spec, plan, renderer) → the tidy records table.

The one place that chooses how an evaluator is measured, by its adapter kind:

* ``image`` (every model evaluator): render, composite and score images,
  :func:`harness.measure_images.measure_images`;
* ``scene`` (the companion, the planted evaluators, any family registered with
  ``input="scene"`` in :mod:`harness.evaluators.families`): read the structured scene,
  its prompt spec and the configuration, no rendering,
  :func:`harness.evaluators.reference.scene_measure.measure_scenes`.

Both return rows in plan order (:mod:`harness.measure_plan`), built by ``Plan.record``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from harness.measure_images import MeasureStats, measure_images

if TYPE_CHECKING:
    import pandas as pd

    from harness.measure_plan import Plan
    from harness.render.renderer import Renderer

MeasurementKind = Literal["image", "scene"]


def measurement_kind(spec: Any) -> MeasurementKind:
    """``scene`` for the scene-reading families (never rendered), else ``image``."""
    from harness.evaluators.families import adapter_input

    return adapter_input(spec)


def measure(
    spec: Any,
    plan: Plan,
    renderer: Renderer,
    *,
    cache_dir: Path,
    load_evaluator: Callable[[Any], Any] | None = None,
    stats: MeasureStats | None = None,
    score_cache: Any = None,
    fill: bool = True,
) -> pd.DataFrame:
    """Measure every row of ``plan`` with evaluator ``spec``; returns the records table.

    ``load_evaluator(spec)`` builds the model (default ``spec.build()``). ``stats`` counts the
    image pipeline's work (a scene evaluator renders and caches nothing). ``score_cache`` and
    ``fill``: see :func:`harness.measure_images.measure_images`.
    """
    if measurement_kind(spec) == "scene":
        from harness.evaluators.reference.scene_measure import measure_scenes

        return measure_scenes(spec, plan, load_evaluator=load_evaluator)
    return measure_images(
        spec, plan, renderer, cache_dir=cache_dir, load_evaluator=load_evaluator, stats=stats,
        score_cache=score_cache, fill=fill,
    )  # fmt: skip
