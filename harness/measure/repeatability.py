"""Is the evaluator repeatable? The same inputs scored three ways must give the same numbers.

A fixed sample of the run's own c0 inputs (:data:`SAMPLE_SIZE` baseline rows, spread evenly
over the plan: each row's composited render, or for a scene evaluator its scene item, with
its caption) is scored, bypassing the score cache,

1. in this process, one row per call (batches of 1): the reference;
2. in this process, by the same evaluator object, every row in one call (a batch of N, N the
   sample size): state the object keeps from call to call shows here;
3. in a fresh process that imports and builds the evaluator anew
   (:mod:`harness.measure.fresh_process`), every row in one call.

The result is the largest absolute difference of a pass 2 or 3 score from the reference, and
where it was (pass, row, scene, caption, both values); ``max_repeatability_diff`` gates it
(0 by default: the bundled evaluators are bit-for-bit repeatable on CPU). A row that fails in
any pass, or a pass that cannot run, makes the result a failure with the reason: never a
difference of 0.

Scores are compared as the evaluator returned them (floats); units are the evaluator's score
scale.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.evaluators.base import EvaluatorSpec
    from harness.measure.plan import Plan, Row
    from harness.render.renderer import Renderer

SAMPLE_SIZE = 4  # c0 rows scored three times
PASSES = ("batch of 1", "batch of N", "fresh process")


@dataclass(frozen=True)
class Repeatability:
    """One evaluator's repeatability measurement (``summary.json`` and the card keep
    :meth:`to_dict` without ``seconds``).

    ``max_abs_diff``: the largest absolute difference from pass 1, in score units (``None``
    when ``error`` says why it could not be measured); ``where``: ``{"pass", "row", "scene",
    "caption", "reference", "value"}`` of that difference (``None`` when every score agreed
    exactly or it failed); ``inputs``: rows in the sample; ``batch_sizes``: ``[1, N]``;
    ``seconds``: wall time of the in-process passes and of the fresh process (this run's
    cost, never part of a card).
    """

    max_abs_diff: float | None
    where: dict[str, object] | None
    inputs: int
    batch_sizes: list[int]
    error: str = ""
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def measured(self) -> bool:
        return not self.error and self.max_abs_diff is not None

    def to_dict(self, *, with_seconds: bool = True) -> dict[str, object]:
        out = asdict(self)
        if not with_seconds:
            out.pop("seconds")
        return out

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> Repeatability:
        return cls(data.get("max_abs_diff"), data.get("where"), int(data.get("inputs", 0)),
                   list(data.get("batch_sizes", [])), str(data.get("error", "")),
                   dict(data.get("seconds", {})))  # fmt: skip


def c0_sample(plan: Plan, size: int = SAMPLE_SIZE) -> list[Row]:
    """Up to ``size`` c0 rows of ``plan`` with an image, spread evenly in plan order."""
    from harness.protocol.configurations import BASELINE, C0

    rows = [r for r in plan.rows if r.factor == BASELINE and r.level == C0 and r.image is not None]
    if len(rows) <= size:
        return rows
    return [rows[(i * len(rows)) // size] for i in range(size)]


def sample_inputs(spec: EvaluatorSpec, plan: Plan, renderer: Renderer, rows: list[Row]) -> tuple[list[object], list[str]]:
    """The scored inputs of ``rows`` and their captions: each row's first scored image (its
    composited render) for an image evaluator, its :class:`ScoreItem` for a scene evaluator.
    Raises :class:`RuntimeError` when a render failed or a prompt spec is missing."""
    from harness.evaluators.families import adapter_input

    needs_text = bool(getattr(spec, "needs_text", True))
    captions = [r.caption if needs_text else "" for r in rows]
    if adapter_input(spec) == "scene":
        from harness.captions import DEFAULT_TEMPLATE_ID
        from harness.evaluators.reference.items import ScoreContext, ScoreItem
        from harness.evaluators.reference.scene_measure import (
            bundled_prompt_specs,
            row_configuration,
        )

        specs = bundled_prompt_specs()
        return [ScoreItem(plan.scenes[r.image.scene].scene, specs.get(r.prompt_id), r.caption,
                          ScoreContext(r.generator, row_configuration(r, DEFAULT_TEMPLATE_ID)))
                for r in rows if r.image is not None], captions  # fmt: skip
    from harness.measure.images import ImageSource

    source = ImageSource(plan, renderer)
    images = []
    for row in rows:
        assert row.image is not None
        image = source.scored_images(row.image)[0]
        if isinstance(image, str):
            raise RuntimeError(f"the sample's render of {row.image.scene} failed: {image}")
        images.append(image)
    return images, captions


def _in_process(build: Callable[[], object], inputs: list[object], captions: list[str], batch_sizes: list[int],
                scene: bool) -> dict[str, list[float | None]]:
    """Passes 1 and 2 on one build (in that order); raises :class:`RuntimeError` naming the
    pass and the first failed row's reason."""
    from harness.measure.fresh_process import score_batches

    evaluator = build()
    passes: dict[str, list[float | None]] = {}
    try:
        for name, batch in zip(PASSES[:2], batch_sizes, strict=True):
            scores, errors = score_batches(evaluator, inputs, captions, batch, scene)
            failed = next((e for e in errors if e), "")
            if failed:
                raise RuntimeError(f"{name}: a row failed: {failed}")
            passes[name] = scores
    finally:
        close = getattr(evaluator, "close", None)
        if close is not None:
            close()
    return passes


def compare(passes: dict[str, list[float | None]], labels: list[tuple[str, str]]) -> tuple[float, dict[str, object] | None]:
    """Largest absolute difference of each later pass from the first, and where (see
    :class:`Repeatability`); ``labels``: ``(scene, caption)`` per row."""
    names = list(passes)
    reference = passes[names[0]]
    worst, where = 0.0, None
    for name in names[1:]:
        for i, (ref, value) in enumerate(zip(reference, passes[name], strict=True)):
            assert ref is not None and value is not None
            diff = abs(value - ref) if math.isfinite(value - ref) else math.inf
            if diff > worst:
                worst = diff
                where = {"pass": name, "row": i, "scene": labels[i][0], "caption": labels[i][1],
                         "reference": ref, "value": value}  # fmt: skip
    return worst, where


def measure_repeatability(spec: EvaluatorSpec, plan: Plan, renderer: Renderer, *, build: Callable[[], object],
                          device: str, build_batch_size: int, fresh_timeout_s: float,
                          size: int = SAMPLE_SIZE) -> Repeatability:
    """Score the c0 sample three ways (module docstring) and compare; ``build()`` makes the
    in-process evaluator as the run does (called once); the fresh process builds it with
    ``spec.build(device, build_batch_size)``, the run's settings."""
    from harness.evaluators.families import adapter_input
    from harness.measure.fresh_process import score_in_fresh_process

    rows = c0_sample(plan, size)
    n = len(rows)
    batch_sizes = [1, max(n, 1)]
    if not rows:
        return Repeatability(None, None, 0, batch_sizes, "the plan has no c0 row to score")
    labels = [(r.image.scene if r.image else "", r.caption) for r in rows]
    scene = adapter_input(spec) == "scene"
    seconds: dict[str, float] = {}
    try:
        inputs, captions = sample_inputs(spec, plan, renderer, rows)
        started = time.monotonic()
        passes = _in_process(build, inputs, captions, batch_sizes, scene)
        seconds["in_process"] = round(time.monotonic() - started, 3)
        started = time.monotonic()
        scores, errors = score_in_fresh_process(spec, inputs, captions, device=device, batch=n,
                                                build_batch_size=build_batch_size,
                                                timeout_s=fresh_timeout_s)  # fmt: skip
        seconds["fresh_process"] = round(time.monotonic() - started, 3)
        failed = next((e for e in errors if e), "")
        if failed:
            raise RuntimeError(f"fresh process: a row failed: {failed}")
        passes[PASSES[2]] = scores
    except Exception as exc:  # every way it cannot be measured is a failure with the reason
        return Repeatability(None, None, n, batch_sizes, str(exc)[:300] or type(exc).__name__, seconds)
    worst, where = compare(passes, labels)
    if not math.isfinite(worst):  # two finite scores whose difference overflows a float
        return Repeatability(None, where, n, batch_sizes, "the scores differ beyond the float range", seconds)
    return Repeatability(worst, where, n, batch_sizes, "", seconds)
