"""Measuring scene-reading evaluators (companion, planted-*, scene scorers) over a measurement plan.

The image pipeline (``harness.measure.images.measure``) renders, composites and calls
``score(images, captions)``. The companion and the planted evaluators read the structured
scene, its prompt spec and the configuration instead, so they are measured here, with no
rendering at all: every plan row becomes one :class:`~.items.ScoreItem` whose context is the
row's full configuration (factor, level, render settings, background, template, paraphrase).

The plugin routes a spec here when :func:`is_scene_evaluator` is true::

    if is_scene_evaluator(spec):
        frame = measure_scenes(spec, plan)
    else:
        frame = measure(spec, plan, renderer, cache_dir=...)

Rows come back in plan order in the records layout, ``failed`` with the reason when a prompt
spec is missing, a probe could not be applied, or the evaluator could not score the item.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.evaluators.base import EvaluatorSpec


def is_scene_evaluator(spec: EvaluatorSpec) -> bool:
    """Whether ``spec`` is measured by :func:`measure_scenes` (it never needs a render): its
    family declares ``input="scene"`` (:mod:`harness.evaluators.families`)."""
    from harness.evaluators.families import adapter_input

    return adapter_input(spec) == "scene"


def bundled_prompt_specs() -> dict[str, object]:
    """prompt id → prompt spec of the bundled scene set (``fixtures/prompts/prompts.json``)."""
    from harness.scenes.prompts import load_prompts

    return {p.id: p for p in load_prompts()}


def row_configuration(row: object, default_template: str) -> object:
    """The full :class:`~harness.protocol.configurations.Configuration` of a plan row."""
    from harness.protocol.configurations import BLOCK, SEARCH, Configuration
    from harness.protocol.levels import parse_cell
    from harness.vocab.factors import PARAPHRASE, TEMPLATE, factor

    template = row.level if row.factor == TEMPLATE else default_template
    if row.factor == BLOCK:  # a factorial cell: its template, when it crosses one
        template = dict(parse_cell(row.level)).get(TEMPLATE, default_template)
    if row.factor == SEARCH:  # a search point (name=value pairs): its template, when searched
        pairs = (part.partition("=") for part in row.level.split(","))
        template = {name: value for name, _, value in pairs}.get(TEMPLATE, default_template)
    return Configuration(
        factor=row.factor,
        level=row.level,
        render=row.image.render,
        background=row.image.background,
        template=template,
        paraphrase=row.level if row.factor == PARAPHRASE else factor(PARAPHRASE).default,
    )


def measure_scenes(
    spec: EvaluatorSpec,
    plan: object,
    *,
    prompt_specs: Mapping[str, object] | None = None,
    load_evaluator: Callable[[object], object] | None = None,
) -> object:
    """Records table of scene evaluator ``spec`` over every row of ``plan`` (no rendering).

    ``prompt_specs`` maps prompt id → prompt spec (default: the bundled prompts).
    """
    from harness.captions import DEFAULT_TEMPLATE_ID
    from harness.evaluators.reference.items import ScoreContext, ScoreItem
    from harness.protocol.records import records_frame

    specs = bundled_prompt_specs() if prompt_specs is None else prompt_specs
    evaluator = (load_evaluator or (lambda s: s.build()))(spec)
    default_template = DEFAULT_TEMPLATE_ID
    needs_text = bool(getattr(spec, "needs_text", True))
    # the companion checks scenes against their prompt spec; a user's scene scorer may not
    # need one (its items then carry spec None where the scene set has none)
    needs_prompt_spec = bool(getattr(evaluator, "needs_prompt_spec", True))
    items: list[object] = []
    errors: list[str] = []
    for row in plan.rows:
        if row.image is None:
            errors.append(row.error or "no scene for this row")
            items.append(None)
            continue
        if row.prompt_id not in specs and needs_prompt_spec:
            errors.append(f"no prompt spec for prompt id {row.prompt_id!r}")
            items.append(None)
            continue
        scene = plan.scenes[row.image.scene].scene
        context = ScoreContext(row.generator, row_configuration(row, default_template))
        items.append(ScoreItem(scene, specs.get(row.prompt_id), row.caption, context))
        errors.append("")
    todo = [it for it in items if it is not None]
    try:
        results = iter(evaluator.score_items(todo))
    finally:
        close = getattr(evaluator, "close", None)
        if close is not None:
            close()
    out = []
    for row, item, err in zip(plan.rows, items, errors, strict=True):
        caption = row.caption if needs_text else ""
        if item is None:
            out.append(plan.record(spec.id, row, caption, math.nan, "failed", err))
            continue
        res = next(results)
        if res.status == "ok":
            out.append(plan.record(spec.id, row, caption, res.score, "ok", ""))
        else:
            out.append(plan.record(spec.id, row, caption, math.nan, "failed", f"score failed: {res.error}"))
    return records_frame(out)
