"""Measuring configurations for the search: score matrices through the audit's own pipeline.

:class:`PointScorer` turns a batch of configurations into one ``(G, P)`` score matrix each
(generators × prompts of a scene set), by building a small measurement plan (one row per
scene and configuration, captions realised from each configuration's template) and measuring
it with :func:`harness.measure.images.measure`: real renders through the render cache and real
scoring through the score cache for image evaluators; the configuration-reading path for scene
evaluators (the companion, the planted evaluators). A configuration already measured (c0, a
point the optimiser proposes twice, a point of a killed run) costs only cache reads.

Before measuring a batch, ``prefetch(requests)`` (given by the command: e.g. the Ray backend's
``warm_on``) may render the batch's missing renders in parallel; without it they render here.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from harness.captions import realize
from harness.evaluators.secrets import environment_secrets, scrub_reason
from harness.measure.images import MeasureStats, measure, measurement_kind
from harness.measure.plan import ImageKey, Plan, PlannedScene, Row

ERROR_LIMIT = 1000  # characters of a failed measurement's reason (trial log, stderr, test message)

if TYPE_CHECKING:
    from harness.evaluators.base import EvaluatorSpec
    from harness.protocol.configurations import Configuration
    from harness.render.renderer import Renderer
    from harness.render.service import RenderRequest
    from harness.scenes.sceneset import SceneSet

Prefetch = Callable[[Sequence["RenderRequest"]], object]


@dataclass
class Measured:
    """One configuration measured: ``scores`` ``(G, P)`` (NaN where a cell failed) and the
    first failure's reason (``""`` when every cell is ok)."""

    scores: np.ndarray
    error: str = ""

    @property
    def ok(self) -> bool:
        return not self.error


class _Kept:
    """The loaded evaluator, kept open across batches (the pipeline closes what it loads)."""

    def __init__(self, inner: object):
        self._inner = inner

    def __getattr__(self, name: str) -> object:
        return getattr(self._inner, name)

    def close(self) -> None:  # the PointScorer closes the inner one once, at the end
        pass


@dataclass
class PointScorer:
    """Measures configurations of one evaluator ``spec`` on ``scene_set`` (rows: its generators,
    sorted; columns: its prompt ids, sorted). ``seconds`` is the time spent measuring
    (rendering and scoring, cached or not): the search's own overhead is the rest."""

    spec: EvaluatorSpec
    scene_set: SceneSet
    renderer: Renderer
    cache_dir: Path
    prefetch: Prefetch | None = None
    stats: MeasureStats = field(default_factory=MeasureStats)
    seconds: float = 0.0
    _loaded: object = None

    @property
    def generators(self) -> tuple[str, ...]:
        return tuple(sorted(self.scene_set.generators))

    @property
    def prompts(self) -> tuple[str, ...]:
        return tuple(sorted(self.scene_set.prompt_ids))

    def _load(self, spec: EvaluatorSpec) -> object:
        if self._loaded is None:
            self._loaded = spec.build()
        return _Kept(self._loaded)

    def close(self) -> None:
        if self._loaded is not None and hasattr(self._loaded, "close"):
            self._loaded.close()
        self._loaded = None

    def plan(self, configs: Sequence[Configuration]) -> Plan:
        """The plan of ``configs`` on every scene (rows grouped by scene, configs in order)."""
        root = Path(self.scene_set.root)
        scenes: dict[str, PlannedScene] = {}
        rows: list[Row] = []
        for scene in sorted(self.scene_set.scenes, key=lambda s: (s.generator, s.prompt_id, s.id)):
            scenes[scene.id] = PlannedScene(scene, self.scene_set.identity(scene.id))
            for cfg in configs:
                caption = realize(cfg.template, scene.prompt)
                image = ImageKey(scene.id, cfg.render, cfg.background)
                rows.append(Row(scene.generator, scene.prompt_id, scene.id, cfg.factor, cfg.level,
                                caption, image))  # fmt: skip
        renders = list(dict.fromkeys((r.image.scene, r.image.render) for r in rows if r.image))
        return Plan(root, "search", scenes, rows, "", renders)

    def requests(self, configs: Sequence[Configuration]) -> list[RenderRequest]:
        """The renders ``configs`` need (none for a scene evaluator)."""
        from harness.render.service import RenderRequest

        if measurement_kind(self.spec) == "scene":
            return []
        plan = self.plan(configs)
        return [RenderRequest(plan.scenes[k].scene, plan.root, plan.scenes[k].identity, cfg)
                for k, cfg in plan.renders]  # fmt: skip

    def measure(self, configs: Sequence[Configuration]) -> list[Measured]:
        """One :class:`Measured` per configuration, in order."""
        if not configs:
            return []
        asked = list(configs)
        configs = list(dict.fromkeys(configs))  # a point asked twice in a batch is measured once
        start = time.perf_counter()
        try:
            if self.prefetch is not None:
                todo = self.requests(configs)
                if todo:
                    self.prefetch(todo)
            plan = self.plan(configs)
            frame = measure(self.spec, plan, self.renderer, cache_dir=self.cache_dir,
                            load_evaluator=self._load, stats=self.stats)  # fmt: skip
        finally:
            self.seconds += time.perf_counter() - start
        gi = {g: i for i, g in enumerate(self.generators)}
        pi = {p: j for j, p in enumerate(self.prompts)}
        index = {(c.factor, c.level): k for k, c in enumerate(configs)}
        out = [Measured(np.full((len(gi), len(pi)), math.nan)) for _ in configs]
        for rec in frame.itertuples(index=False):
            m = out[index[(rec.factor, rec.level)]]
            if rec.status == "ok":
                m.scores[gi[rec.generator], pi[rec.prompt_id]] = float(rec.score)
            elif not m.error:
                m.error = f"{rec.generator}/{rec.prompt_id}: {rec.error}"
        secrets = environment_secrets()
        for m in out:
            if not m.error and not np.isfinite(m.scores).all():
                m.error = "no score for some scene (the scene set lacks a generator × prompt cell)"
            # the reason reaches the trial log, stderr and a test's message: no key, one line
            m.error = scrub_reason(" ".join(m.error.split()), secrets, ERROR_LIMIT)
        return [out[index[(c.factor, c.level)]] for c in asked]
