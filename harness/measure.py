"""The measurement pipeline: (evaluator spec, scene set, profile) → the tidy records table.

Rows (DESIGN.md "Raw score records"), per scene in (generator, prompt_id) order:

* ``baseline/c0`` and every selected level of every factor of the profile (default-equivalent
  levels included). Background levels reuse the c0 render and only re-composite; template
  levels reuse the c0 image with another caption.
* ``paraphrase/pN`` at the default render, for the levels that survive the duplicate-collapse
  rule (no rows for a prompt without paraphrases).
* ``probe/<name>``: the probe-edited scene rendered at c0 against the original caption; its
  ``scene_sha256`` is the edited scene's identity.

Work is shared as far as the inputs allow: each (scene, render config) is rendered once (the
renderer caches across runs), each background composited once, and each distinct image and
caption is encoded once per evaluator (``score_grid`` for embedding evaluators). Scores live in
the evaluators' on-disk score cache (``harness.evaluators.cache.ScoreCache``: immutable
segments, temp file + rename), so an interrupted run resumes where it stopped. Render and score failures become ``failed`` rows
with the reason; they are never cached and never stored as a number. The model id a hosted
evaluator reports serving (``ScoreResult.metadata["model"]``) is cached with the score and
written to the rows' ``served_model`` column (absent when no row has one).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness import components
from harness.hashing import sha256_json

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from harness.protocol import Profile, RenderConfig
    from harness.scenes.model import Scene

MEASURE_VERSION = 1


@dataclass(frozen=True)
class ImageKey:
    """One image an evaluator sees: a scene (by plan key) rendered at ``render`` over ``background``."""

    scene: str
    render: RenderConfig
    background: str


@dataclass(frozen=True)
class Row:
    """One planned measurement; ``error`` set when it failed before scoring (e.g. a probe)."""

    generator: str
    prompt_id: str
    group: str  # the original scene id: rows of one group are scored together
    factor: str
    level: str
    caption: str
    image: ImageKey | None
    error: str = ""


@dataclass
class PlannedScene:
    """A scene to render (original or probe-edited) with its identity."""

    scene: Scene
    identity: str


@dataclass
class Plan:
    """Everything one evaluator needs measured, independent of the evaluator.

    ``scenes`` maps plan keys (scene id, or ``<id>~<probe>``) to scenes; ``rows`` are in record
    order; ``renders`` lists the distinct (scene key, render config) pairs, the render plan.
    """

    root: Path
    profile_name: str
    scenes: dict[str, PlannedScene]
    rows: list[Row]
    key: str
    renders: list[tuple[str, RenderConfig]] = field(default_factory=list)

    def groups(self) -> Iterator[tuple[str, list[Row]]]:
        """Rows grouped by original scene id, in plan order."""
        current: str | None = None
        bucket: list[Row] = []
        for row in self.rows:
            if row.group != current and bucket:
                yield current or "", bucket
                bucket = []
            current = row.group
            bucket.append(row)
        if bucket:
            yield current or "", bucket


def build_plan(scene_set: Any, profile: Profile, *, probe_seed: int = 0) -> Plan:
    """The measurement plan of ``profile`` on ``scene_set`` (already selected)."""
    root = Path(scene_set.root)
    template_default = components.default_template_id()
    configs = profile.configurations()
    scenes: dict[str, PlannedScene] = {}
    rows: list[Row] = []
    c0 = profile.c0
    for scene in sorted(scene_set.scenes, key=lambda s: (s.generator, s.prompt_id, s.id)):
        scenes[scene.id] = PlannedScene(scene, scene_set.identity(scene.id))
        base_caption = components.realize(template_default, scene.prompt)
        para: list[tuple[str, str]] | None = None
        for cfg in configs:
            image = ImageKey(scene.id, cfg.render, cfg.background)
            if cfg.factor == "paraphrase":
                if para is None:
                    para = components.paraphrase_captions(scene.prompt_id, scene.prompt, template_default) or []
                caption = dict(para).get(cfg.level)
                if caption is None:
                    continue  # collapsed duplicate or no paraphrases for this prompt
            else:
                caption = components.realize(cfg.template, scene.prompt)
            rows.append(Row(scene.generator, scene.prompt_id, scene.id, cfg.factor, cfg.level, caption, image))
        for probe in profile.probes:
            key = f"{scene.id}~{probe}"
            try:
                edited = components.apply_probe(scene, probe, probe_seed)
            except Exception as exc:  # a probe that cannot apply is a failed measurement
                if type(exc).__name__ == "ProbeNotApplicable":
                    continue  # e.g. removing objects from a single generated object: no row
                rows.append(
                    Row(scene.generator, scene.prompt_id, scene.id, "probe", probe, base_caption,
                        None, f"probe {probe} failed: {exc}")
                )
                continue
            scenes[key] = PlannedScene(edited, components.scene_identity(edited, root))
            rows.append(
                Row(scene.generator, scene.prompt_id, scene.id, "probe", probe, base_caption,
                    ImageKey(key, c0, "255"))
            )
    renders: dict[tuple[str, RenderConfig], None] = {}
    for row in rows:
        if row.image is not None:
            renders.setdefault((row.image.scene, row.image.render), None)
    key = sha256_json(
        {
            "measure": MEASURE_VERSION,
            "scenes": {k: v.identity for k, v in sorted(scenes.items())},
            "rows": [
                [r.group, r.factor, r.level, r.caption, _image_token(r.image), r.error] for r in rows
            ],
        }
    )
    return Plan(root, profile.name, scenes, rows, key, list(renders))


def _image_token(image: ImageKey | None) -> Any:
    if image is None:
        return None
    return [image.scene, image.render.key, image.background]


# ----------------------------------------------------------------------------- images


class ImageSource:
    """Renders (through the renderer's cache) and composites the images of one scene group.

    Holds at most one group's images; a render failure is remembered as its message.
    """

    def __init__(self, plan: Plan, renderer: components.Renderer):
        self.plan = plan
        self.renderer = renderer
        self._rgba: dict[tuple[str, RenderConfig], np.ndarray | str] = {}
        self._rgb: dict[ImageKey, np.ndarray | str] = {}
        self.images = 0  # renders fetched, from the render cache or rendered
        self.renders = 0  # of those, rendered here (when the renderer counts its cache misses)

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
            except Exception as exc:
                if not components.is_render_failure(exc):
                    raise
                self._rgba[key] = f"render failed: {exc}"
        return self._rgba[key]

    def rgb(self, image: ImageKey) -> np.ndarray | str:
        """The composited ``(H, W, 3)`` uint8 image, or the failure message."""
        if image not in self._rgb:
            rgba = self.rgba(image.scene, image.render)
            self._rgb[image] = rgba if isinstance(rgba, str) else components.composite(rgba, image.background)
        return self._rgb[image]


def image_sha256(rgb: np.ndarray) -> str:
    """The score-cache image key (shape header plus pixel bytes; the evaluators' definition)."""
    from harness.evaluators.cache import image_sha256 as _sha

    return _sha(rgb)


# ----------------------------------------------------------------------------- scoring


@dataclass
class MeasureStats:
    """Counters of one measurement (terminal summary only; never hashed into outputs)."""

    images: int = 0  # renders fetched (render cache or rendered)
    renders: int = 0  # renders made in this process
    scored_pairs: int = 0
    cached_pairs: int = 0
    failed_rows: int = 0
    model_loaded: bool = False


def _score_missing(
    evaluator: Any, images: dict[str, np.ndarray], pairs: Sequence[tuple[str, str]]
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
            served = (getattr(res, "metadata", None) or {}).get("model", "")
            out[p] = (float(res.score), "", served if isinstance(served, str) else "")
        else:
            out[p] = (math.nan, f"score failed: {getattr(res, 'error', '') or 'unknown'}", "")
    return out


def measure(
    spec: Any,
    plan: Plan,
    renderer: components.Renderer,
    *,
    cache_dir: Path,
    load_evaluator: Callable[[Any], Any] | None = None,
    stats: MeasureStats | None = None,
) -> pd.DataFrame:
    """Measure every row of ``plan`` with evaluator ``spec``; returns the records table.

    ``load_evaluator(spec)`` builds the model (default ``spec.build()``); it is called at most
    once and only when some pair is not in the score cache. Output rows follow plan order.
    """
    from harness.evaluators.reference.scene_measure import is_scene_evaluator, measure_scenes

    if is_scene_evaluator(spec):  # companion, planted-*: scenes + configuration, no renders
        return measure_scenes(spec, plan, load_evaluator=load_evaluator)
    stats = stats if stats is not None else MeasureStats()
    build = load_evaluator or (lambda s: s.build())
    from harness.evaluators.cache import ScoreCache

    cache = ScoreCache(Path(cache_dir))
    identity_hash = spec.identity_hash
    needs_text = bool(getattr(spec, "needs_text", True))
    source = ImageSource(plan, renderer)
    evaluator: Any = None
    out: list[tuple] = []
    try:
        for _group, rows in plan.groups():
            source.clear()
            images: dict[str, np.ndarray] = {}
            row_pairs: list[tuple[str, str] | str] = []
            for row in rows:
                if row.image is None:
                    row_pairs.append(row.error)
                    continue
                rgb = source.rgb(row.image)
                if isinstance(rgb, str):
                    row_pairs.append(rgb)
                    continue
                sha = image_sha256(rgb)
                images[sha] = rgb
                row_pairs.append((sha, row.caption if needs_text else ""))
            wanted = sorted({p for p in row_pairs if isinstance(p, tuple)})
            cached: dict[tuple[str, str], tuple[float, str]] = {}
            for sha in sorted({p[0] for p in wanted}):
                caps = [p[1] for p in wanted if p[0] == sha]
                cached.update(((sha, c), v) for c, v in cache.get_entries(identity_hash, sha, caps).items())
            missing = [p for p in wanted if p not in cached]
            stats.cached_pairs += len(wanted) - len(missing)
            results: dict[tuple[str, str], tuple[float, str, str]] = {}
            if missing:
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
            for row, p in zip(rows, row_pairs, strict=True):
                caption = row.caption if needs_text else ""
                if isinstance(p, str):
                    value, err, served = math.nan, p, ""
                elif p in cached:
                    (value, served), err = cached[p], ""
                else:
                    value, err, served = results[p]
                if not err and (problem := score_problem(spec, value)):
                    value, err = math.nan, f"score failed: {problem}"
                status = "failed" if err else "ok"
                out.append(_row(spec.id, row, plan, caption, value, status, err, served))
    finally:
        stats.images += source.images
        stats.renders += source.renders
        if evaluator is not None and hasattr(evaluator, "close"):
            evaluator.close()
    stats.failed_rows += sum(1 for r in out if r[8] == "failed")
    return components.records_frame(out)


def score_problem(spec: Any, value: float) -> str | None:
    """Why ``value`` cannot be recorded as an ok score of ``spec`` (range and finiteness), else
    ``None``. Specs without ``score_problem`` (duck-typed test specs) only need finite scores."""
    check = getattr(spec, "score_problem", None)
    if check is not None:
        return check(value)
    return None if math.isfinite(value) else f"non-finite score {value!r}"


def _row(
    ev: str, row: Row, plan: Plan, caption: str, score: float, status: str, error: str, served: str = ""
) -> tuple:
    """One record in column order, ``served_model`` last (dropped by ``records_frame`` when
    no row has one)."""
    scene_key = row.image.scene if row.image is not None else row.group
    identity = plan.scenes[scene_key].identity if scene_key in plan.scenes else ""
    return (ev, row.generator, row.prompt_id, identity, row.factor, row.level, caption,
            float(score), status, error[:300], served)
