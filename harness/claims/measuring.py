"""The claim's scores, measured through the audit's own pipeline: the profile's grid
(:func:`harness.measure.plan.build_plan` and :func:`harness.measure.images.measure`: renders
from the render cache, scores from the score cache) and the presets
(:func:`harness.peers.measure.score_protocols`). A ``prefetch`` (the command's backend, e.g.
``local`` processes) renders what is missing first, in parallel; without one the renders are
made one by one as they are measured.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from harness.core.errors import AuditError

if TYPE_CHECKING:
    import pandas as pd

    from harness.claims.inputs import ClaimInputs
    from harness.measure.plan import Plan
    from harness.render.renderer import Renderer
    from harness.render.service import RenderRequest

Prefetch = Callable[[Sequence["RenderRequest"]], object]


@dataclass(frozen=True)
class GridScores:
    """The grid: ``protocols`` (``baseline`` first, then ``factor=level``: the audit's shared
    protocol family, paraphrases excluded), ``scores`` ``(G, P, Π)`` in the evaluator's units
    (NaN: a failed cell), rows in ``generators`` order, columns in ``prompts`` order."""

    generators: tuple[str, ...]
    prompts: tuple[str, ...]
    protocols: tuple[str, ...]
    scores: np.ndarray
    failed: int


@dataclass(frozen=True)
class PresetScores:
    """The presets: ``names`` and ``scores`` ``(K, G, P)`` (NaN: a failed scene) and the
    measured table (``peers.measure.COLUMNS``)."""

    names: tuple[str, ...]
    scores: np.ndarray
    table: pd.DataFrame
    failed: int


def plan_requests(plan: Plan) -> list[RenderRequest]:
    """The renders ``plan`` reads (every view of a multi-view row), once each."""
    from harness.render.service import RenderRequest

    wanted: dict[tuple[str, object], None] = {}
    for row in plan.rows:
        if row.image is not None:
            for view in row.image.view_keys():
                wanted.setdefault((view.scene, view.render), None)
    return [RenderRequest(plan.scenes[k].scene, plan.root, plan.scenes[k].identity, cfg) for k, cfg in wanted]


def _prefetch(inputs: ClaimInputs, plan: Plan, prefetch: Prefetch | None) -> None:
    from harness.measure.images import measurement_kind

    if prefetch is not None and measurement_kind(inputs.spec) == "image":
        todo = plan_requests(plan)
        if todo:
            prefetch(todo)


def measure_grid(inputs: ClaimInputs, renderer: Renderer, prefetch: Prefetch | None = None,
                 load_evaluator: Callable[[object], object] | None = None) -> GridScores:  # fmt: skip
    """The claim's generators on the profile's grid (:class:`GridScores`)."""
    from harness.measure.images import measure
    from harness.measure.plan import build_plan
    from harness.stats.table import pivot_records

    plan = build_plan(inputs.scene_set, inputs.profile)
    _prefetch(inputs, plan, prefetch)
    records = measure(inputs.spec, plan, renderer, cache_dir=inputs.cache_dir, load_evaluator=load_evaluator)
    failed = int((records["status"] != "ok").sum())
    table = pivot_records(records).get(inputs.spec.id)
    if table is None:
        raise AuditError(f"no score records of {inputs.spec.id!r} on the grid", where="grid")
    ids, scores = table.shared_protocols()
    order = [table.generators.index(g) for g in inputs.generators]
    base = scores[order][:, :, 0]
    if not np.isfinite(base).all():
        raise AuditError(f"c0 could not be measured for every scene: {failed} of {len(records)} grid records failed"
                         f"{_first_error(records)}", where=f"{inputs.spec.id} at c0",
                         hint="fix the failure (a render or score error; see t3d-audit score) and rerun")  # fmt: skip
    return GridScores(inputs.generators, tuple(table.prompts), tuple(ids), scores[order], failed)


def _first_error(records: pd.DataFrame) -> str:
    """``" (first: <error>)"`` of the first failed record, on one line and at most 200
    characters; empty when none says why."""
    errors = [str(e) for e in records.loc[records["status"] != "ok", "error"] if isinstance(e, str) and e.strip()]
    return f" (first: {' '.join(errors[0].split())[:200]})" if errors else ""


def measure_presets(inputs: ClaimInputs, renderer: Renderer, prefetch: Prefetch | None = None,
                    load_evaluator: Callable[[object], object] | None = None) -> PresetScores | None:  # fmt: skip
    """The claim's generators under each preset (``None`` without presets)."""
    from harness.peers.measure import preset_plan, score_protocols
    from harness.peers.rank_concordance import score_array

    if not inputs.presets:
        return None
    for protocol in inputs.presets:
        _prefetch(inputs, preset_plan(inputs.scene_set, protocol, inputs.template), prefetch)
    table = score_protocols(inputs.spec, inputs.scene_set, inputs.presets, template=inputs.template,
                            cache_dir=inputs.cache_dir, renderer=renderer, load_evaluator=load_evaluator)  # fmt: skip
    names = tuple(p.name for p in inputs.presets)
    scores, generators, prompts = score_array(table, names)
    if tuple(prompts) != inputs.prompts:  # every scene is one row, failed or not
        raise AuditError(f"the presets measured {len(prompts)} prompts, the claim has {len(inputs.prompts)}",
                         where="presets")  # fmt: skip
    order = [generators.index(g) for g in inputs.generators]
    return PresetScores(names, scores[:, order, :], table, int((table["status"] != "ok").sum()))
