"""Image measurement: render, composite and score every row of a plan with one evaluator.

Work is shared as far as the inputs allow: each (scene, render config) is rendered once (the
renderer caches across runs), each background composited once, and each distinct image and
caption is encoded once per evaluator (``score_grid`` for embedding evaluators). Scores live in
the evaluators' on-disk score cache (``harness.evaluators.cache.ScoreCache``: immutable
segments, temp file + rename), so an interrupted run resumes where it stopped. Render and score
failures become ``failed`` rows with the reason; they are never cached and never stored as a
number. The model id a hosted evaluator reports serving (``ScoreResult.metadata["model"]``) is
cached with the score and written to the rows' ``served_model`` column (absent when no row has
one); text outside :data:`harness.core.ids.SERVED_MODEL_ID` is kept as ``unrecognised model id``.

:func:`measure` is the one place that chooses how an evaluator is measured, by its adapter
kind (:func:`measurement_kind`): ``image`` (every model evaluator) goes through
:func:`measure_images`; ``scene`` (the companion, the planted evaluators, any family registered
with ``input="scene"`` in :mod:`harness.evaluators.families`) reads the structured scene, its
prompt spec and the configuration, no rendering
(:func:`harness.evaluators.reference.scene_measure.measure_scenes`). Both return rows in plan
order (:mod:`harness.measure.plan`), built by ``Plan.record``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from harness.core.errors import RenderError
from harness.core.ids import stored_model_id
from harness.protocol import presets
from harness.protocol.configurations import background_rgb
from harness.protocol.presets import Protocol
from harness.protocol.records import Record, records_frame
from harness.protocol.tiling import stack, tile

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from harness.core.progress import Progress
    from harness.evaluators.base import EvaluatorSpec
    from harness.measure.plan import ImageKey, Plan
    from harness.protocol.configurations import RenderConfig
    from harness.render.renderer import Renderer

MeasurementKind = Literal["image", "scene"]


class ImageSource:
    """Renders (through the renderer's cache) and composites the images of one scene group.

    Holds at most one group's images; a render failure is remembered as its message.
    """

    def __init__(self, plan: Plan, renderer: Renderer,
                 protocol_of: Callable[[str], Protocol | None] | None = None):  # fmt: skip
        self.plan = plan
        self.renderer = renderer
        self.protocol_of = protocol_of or policy_protocol  # a ``preset:NAME`` policy's protocol
        self._rgba: dict[tuple[str, RenderConfig], np.ndarray | str] = {}
        self._rgb: dict[ImageKey, np.ndarray | str] = {}
        self.images = 0  # renders fetched, from the render cache or rendered
        self.renders = 0  # of those, rendered here (when the renderer counts its cache misses)
        self.fetched: Callable[[int], object] = lambda n: None  # after each render, failed or not

    def clear(self) -> None:
        self._rgba.clear()
        self._rgb.clear()

    def rgba(self, scene_key: str, cfg: RenderConfig) -> np.ndarray | str:
        """The RGBA render, or the failure message."""
        key = (scene_key, cfg)
        if key not in self._rgba:
            planned = self.plan.scenes[scene_key]
            before = getattr(self.renderer, "rendered", None)
            try:
                self._rgba[key] = self.renderer.render(planned.scene, self.plan.root, planned.identity, cfg)
                self.images += 1
                after = getattr(self.renderer, "rendered", None)
                self.renders += 1 if before is None or after is None else after - before
            except RenderError as exc:
                self._rgba[key] = f"render failed: {exc}"
            self.fetched(1)
        return self._rgba[key]

    def rgb(self, image: ImageKey) -> np.ndarray | str:
        """The composited ``(H, W, 3)`` uint8 image, or the failure message; for a ``sheet4``
        key the 2 × 2 sheet of its views (first two on top)."""
        if image not in self._rgb:
            from harness.render.composite import composite

            if image.views and image.policy == "sheet4":
                self._rgb[image] = sheet([self.rgb(v) for v in image.view_keys()])
                return self._rgb[image]
            rgba = self.rgba(image.scene, image.render)
            self._rgb[image] = (
                rgba if isinstance(rgba, str) else composite(rgba, background_rgb(image.background))
            )
        return self._rgb[image]

    def scored_images(self, image: ImageKey) -> list[np.ndarray | str]:
        """The images one score of ``image`` is aggregated from: each view for ``mean4`` and
        ``max4``, else the one image (the sheet for ``sheet4``); under ``preset:NAME`` the
        preset's images (:func:`preset_images`)."""
        if image.views and image.policy in AGGREGATES:
            return [self.rgb(v) for v in image.view_keys()]
        if image.views and (protocol := self.protocol_of(image.policy)) is not None:
            # a pass with a background of its own (GPTEval3D's normals on black) keeps it
            views = [replace(v, background=protocol.pass_background(v.render.render_pass))
                     if protocol.normal_background is not None and v.render.render_pass == "normal" else v
                     for v in image.view_keys()]  # fmt: skip
            return preset_images(protocol, [self.rgb(v) for v in views])
        return [self.rgb(image)]


def render_total(plan: Plan) -> int:
    """How many renders :func:`measure_images` fetches for ``plan`` (from the render cache or
    rendered): the distinct (scene, render config) pairs of each scene group's images, every
    view of a multi-view image counted; the total of its progress lines."""
    total = 0
    for _group, rows in plan.groups():
        total += len({(v.scene, v.render) for row in rows if row.image is not None for v in row.image.view_keys()})
    return total


#: How the per-view scores of a multi-view row become its score.
AGGREGATES = {"mean4": "mean", "max4": "max"}


def policy_protocol(policy: str) -> Protocol | None:
    """The protocol preset of a ``preset:NAME`` view policy, else ``None``."""
    return presets.policy_protocol(policy)


def preset_images(protocol: Protocol, views: list[np.ndarray | str]) -> list[np.ndarray | str]:
    """The images a preset scores from its views (pass-major): the views themselves, or one
    grid per pass stacked when it tiles; the first failure message when a view failed."""
    failed = [v for v in views if isinstance(v, str)]
    if failed or protocol.tiling is None:
        return [failed[0]] if failed else views
    n = len(protocol.shown_views)
    cols, rows = protocol.tiling
    return [stack([tile(views[i * n:(i + 1) * n], cols, rows) for i in range(len(protocol.passes))])]


def sheet(images: Sequence[np.ndarray | str]) -> np.ndarray | str:
    """Four equal ``(H, W, 3)`` views tiled 2 × 2 into a ``(2H, 2W, 3)`` sheet (views 1, 2 on
    top, 3, 4 below); the first failure message when a view failed."""
    import numpy as np

    failed = [im for im in images if isinstance(im, str)]
    if failed:
        return failed[0]
    if len(images) != 4 or len({im.shape for im in images}) != 1:
        return f"sheet needs four equal views, got {[getattr(im, 'shape', None) for im in images]}"
    top = np.concatenate([images[0], images[1]], axis=1)
    bottom = np.concatenate([images[2], images[3]], axis=1)
    return np.concatenate([top, bottom], axis=0)


@dataclass
class MeasureStats:
    """Counters of one measurement (terminal summary only; never hashed into outputs)."""

    images: int = 0  # renders fetched (render cache or rendered)
    renders: int = 0  # renders made in this process
    scored_pairs: int = 0
    cached_pairs: int = 0  # found in the score cache, put there by an earlier measurement
    reused_pairs: int = 0  # scored earlier in this measurement (a pair the plan repeats)
    failed_rows: int = 0
    model_loaded: bool = False
    missing_pairs: int = 0  # pairs absent from a read-only score store (not scored here)


def _score_missing(
    evaluator: object, images: dict[str, np.ndarray], pairs: Sequence[tuple[str, str]]
) -> dict[tuple[str, str], tuple[float, str, str]]:
    """Score ``pairs`` of (image sha, caption). Returns pair → (score, error, served model id);
    error '' when ok, served model '' unless the evaluator reported one."""
    import numpy as np

    out: dict[tuple[str, str], tuple[float, str, str]] = {}
    if hasattr(evaluator, "score_grid"):
        shas = sorted({p[0] for p in pairs})
        caps = sorted({p[1] for p in pairs})
        try:
            grid = np.asarray(evaluator.score_grid([images[s] for s in shas], caps), dtype=np.float64)
            if grid.shape != (len(shas), len(caps)):
                raise ValueError(f"score_grid returned shape {grid.shape}, expected {(len(shas), len(caps))}")
        except Exception as exc:
            return {p: (math.nan, f"score failed: {type(exc).__name__}: {exc}", "") for p in pairs}
        si = {s: i for i, s in enumerate(shas)}
        ci = {c: j for j, c in enumerate(caps)}
        for p in pairs:
            value = float(grid[si[p[0]], ci[p[1]]])
            out[p] = (value, "", "") if math.isfinite(value) else (math.nan, "score failed: non-finite score", "")
        return out
    try:
        results = evaluator.score([images[s] for s, _ in pairs], [c for _, c in pairs])
    except Exception as exc:
        return {p: (math.nan, f"score failed: {type(exc).__name__}: {exc}", "") for p in pairs}
    for p, res in zip(pairs, results, strict=True):
        if getattr(res, "status", "failed") == "ok" and math.isfinite(float(res.score)):
            served = stored_model_id((getattr(res, "metadata", None) or {}).get("model", ""))
            out[p] = (float(res.score), "", served)
        else:
            out[p] = (math.nan, f"score failed: {getattr(res, 'error', '') or 'unknown'}", "")
    return out


def measure_images(
    spec: EvaluatorSpec,
    plan: Plan,
    renderer: Renderer,
    *,
    cache_dir: Path,
    load_evaluator: Callable[[object], object] | None = None,
    stats: MeasureStats | None = None,
    score_cache: object = None,
    fill: bool = True,
    protocol_of: Callable[[str], Protocol | None] | None = None,
    progress: Progress | None = None,
) -> pd.DataFrame:
    """Measure every row of ``plan`` with image evaluator ``spec``; returns the records table.

    ``load_evaluator(spec)`` builds the model (default ``spec.build()``); it is called at most
    once and only when some pair is not in the score cache. Output rows follow plan order.
    ``score_cache`` replaces the local one under ``cache_dir`` (e.g. a
    :class:`harness.evaluators.score_store.StoreScoreCache`). With ``fill=False`` pairs
    missing from it are not scored: they are counted in ``stats.missing_pairs`` and their
    rows fail (the caller reports them and discards the table). ``protocol_of(policy)``: the
    protocol a ``preset:NAME`` row shows and reduces by (default: the registered preset
    NAME; a caller measuring protocols of its own, scaled or edited, passes its lookup).
    ``progress`` is advanced once per render fetched (:func:`render_total` in all; the
    caller makes it and closes it).
    """
    from harness.evaluators.cache import ScoreCache, image_sha256

    stats = stats if stats is not None else MeasureStats()
    build = load_evaluator or (lambda s: s.build())
    cache = score_cache if score_cache is not None else ScoreCache(Path(cache_dir))
    identity_hash = spec.identity_hash
    needs_text = bool(getattr(spec, "needs_text", True))
    protocol_of = protocol_of or policy_protocol
    source = ImageSource(plan, renderer, protocol_of)
    if progress is not None:
        source.fetched = _counting(progress, source)
    evaluator: object = None
    out: list[Record] = []
    scored_here: set[tuple[str, str]] = set()  # so a pair met again is not called cached
    try:
        for _group, rows in plan.groups():
            source.clear()
            images: dict[str, np.ndarray] = {}
            row_pairs: list[list[tuple[str, str]] | str] = []
            for row in rows:
                if row.image is None:
                    row_pairs.append(row.error)
                    continue
                views = source.scored_images(row.image)
                failed = [v for v in views if isinstance(v, str)]
                if failed:
                    row_pairs.append(failed[0])
                    continue
                pairs = []
                for rgb in views:
                    sha = image_sha256(rgb)
                    images[sha] = rgb
                    pairs.append((sha, row.caption if needs_text else ""))
                row_pairs.append(pairs)
            wanted = sorted({p for ps in row_pairs if not isinstance(ps, str) for p in ps})
            cached: dict[tuple[str, str], tuple[float, str]] = {}
            for sha in sorted({p[0] for p in wanted}):
                caps = [p[1] for p in wanted if p[0] == sha]
                cached.update(((sha, c), v) for c, v in cache.get_entries(identity_hash, sha, caps).items())
            missing = [p for p in wanted if p not in cached]
            reused = sum(1 for p in wanted if p in cached and p in scored_here)
            stats.reused_pairs += reused
            stats.cached_pairs += len(wanted) - len(missing) - reused
            scored_here.update(missing)
            results: dict[tuple[str, str], tuple[float, str, str]] = {}
            if missing and not fill:
                stats.missing_pairs += len(missing)
                results = {p: (math.nan, "score missing from the store", "") for p in missing}
            elif missing:
                if evaluator is None:
                    evaluator = build(spec)
                    stats.model_loaded = True
                results = _score_missing(evaluator, images, missing)
                stats.scored_pairs += len(missing)
                for sha in sorted({p[0] for p in missing}):
                    new_ok = {p[1]: v for p, (v, err, _) in results.items() if p[0] == sha and not err}
                    served = {p[1]: m for p, (_, err, m) in results.items() if p[0] == sha and not err and m}
                    if new_ok:
                        cache.put(identity_hash, sha, new_ok, served)
            for row, ps in zip(rows, row_pairs, strict=True):
                caption = row.caption if needs_text else ""
                if isinstance(ps, str):
                    value, err, served = math.nan, ps, ""
                else:
                    policy = row.image.policy if row.image else ""
                    value, err, served = _aggregate(
                        [(cached[p][0], "", cached[p][1]) if p in cached else results[p] for p in ps],
                        AGGREGATES.get(policy, "mean"), protocol_of(policy),
                    )
                if not err and (problem := score_problem(spec, value)):
                    value, err = math.nan, f"score failed: {problem}"
                status = "failed" if err else "ok"
                out.append(plan.record(spec.id, row, caption, value, status, err, stored_model_id(served)))
    finally:
        stats.images += source.images
        stats.renders += source.renders
        if evaluator is not None and hasattr(evaluator, "close"):
            evaluator.close()
    stats.failed_rows += sum(1 for r in out if r.status == "failed")
    return records_frame(out)


def _counting(progress: Progress, source: ImageSource) -> Callable[[int], object]:
    """``progress.update``, with a plain line's note saying how many of the renders fetched
    so far were rendered now (the rest came from the render cache)."""
    from harness.core.progress import LineProgress

    def fetched(n: int) -> object:
        if isinstance(progress, LineProgress):
            progress.note = f"{source.renders} rendered now"
        return progress.update(n)

    return fetched


def _aggregate(parts: list[tuple[float, str, str]], how: str, protocol: Protocol | None = None) -> tuple[float, str, str]:
    """One row's ``(score, error, served model)`` from its views' ``(score, error, served)``:
    the one view's as is; several views' mean or max (``how``), or a preset's reduction
    (``protocol.reduce``); a failed view fails the row."""
    if len(parts) == 1:
        return parts[0]
    for _value, err, _ in parts:
        if err:
            return math.nan, err, ""
    values = [v for v, _, _ in parts]
    served = next((m for _, _, m in parts if m), "")
    if protocol is not None:
        return protocol.reduce(values), "", served
    return (max(values) if how == "max" else math.fsum(values) / len(values)), "", served


def score_problem(spec: EvaluatorSpec, value: float) -> str | None:
    """Why ``value`` cannot be recorded as an ok score of ``spec`` (range and finiteness), else
    ``None``. Specs without ``score_problem`` (duck-typed test specs) only need finite scores."""
    check = getattr(spec, "score_problem", None)
    if check is not None:
        return check(value)
    return None if math.isfinite(value) else f"non-finite score {value!r}"


def measurement_kind(spec: EvaluatorSpec) -> MeasurementKind:
    """``scene`` for the scene-reading families (never rendered), else ``image``."""
    from harness.evaluators.families import adapter_input

    return adapter_input(spec)


def measure(
    spec: EvaluatorSpec,
    plan: Plan,
    renderer: Renderer,
    *,
    cache_dir: Path,
    load_evaluator: Callable[[object], object] | None = None,
    stats: MeasureStats | None = None,
    score_cache: object = None,
    fill: bool = True,
    progress: Progress | None = None,
) -> pd.DataFrame:
    """Measure every row of ``plan`` with evaluator ``spec``; returns the records table.

    ``load_evaluator(spec)`` builds the model (default ``spec.build()``). ``stats`` counts the
    image pipeline's work (a scene evaluator renders and caches nothing). ``score_cache``,
    ``fill`` and ``progress``: see :func:`measure_images`.
    """
    if measurement_kind(spec) == "scene":
        from harness.evaluators.reference.scene_measure import measure_scenes

        return measure_scenes(spec, plan, load_evaluator=load_evaluator)
    return measure_images(
        spec, plan, renderer, cache_dir=cache_dir, load_evaluator=load_evaluator, stats=stats,
        score_cache=score_cache, fill=fill, progress=progress,
    )  # fmt: skip
