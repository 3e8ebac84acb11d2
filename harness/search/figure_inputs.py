"""What the search's figures are drawn from (:mod:`harness.report.search_figures` draws them):
one discovery scene rendered at c0 and at the worst configuration, and the flip-region sample
as numbers. Used by ``t3d-audit search --out`` and by an audit's report (the session hands
these to the report, which measures nothing itself).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from harness.search.pipeline import SearchResult


@dataclass(frozen=True)
class WorstImages:
    """``scene`` (generator/prompt) rendered at c0 and at the worst configuration (``(H, W, 3)``
    uint8, composited on each configuration's background); ``text``: the worst point printed."""

    scene: str
    c0: np.ndarray
    worst: np.ndarray
    text: str


@dataclass(frozen=True)
class FlipSample:
    """The flip region's sample on two float axes: ``points`` (axis → value, flipped or
    ``None`` when it failed), the axes ``x`` and ``y`` (those that carry the flips first, else
    pitch and colour temperature), and ``title`` (the share and its Wilson interval)."""

    points: list[tuple[dict[str, float], bool | None]]
    x: str
    y: str
    title: str


def worst_images(result: SearchResult, renderer: object, scene_set: object) -> WorstImages | None:
    """The first scene (by generator, id) of the first discovery prompt of ``scene_set``,
    rendered through ``renderer`` (its cache) at c0 and at the worst point; ``None`` without a
    worst point or when the prompt is not in ``scene_set``."""
    from harness.protocol.configurations import background_rgb
    from harness.render.composite import composite

    if result.worst is None or not result.discovery_prompts:
        return None
    prompt = result.discovery_prompts[0]
    if prompt not in scene_set.prompt_ids:
        return None
    chosen = scene_set.with_prompts([prompt])
    scene = sorted(chosen.scenes, key=lambda s: (s.generator, s.id))[0]
    images = []
    for cfg in (result.space.base, result.space.configuration(result.worst)):
        rgba = renderer.render(scene, chosen.root, chosen.identity(scene.id), cfg.render)
        images.append(composite(rgba, background_rgb(cfg.background)))
    return WorstImages(f"{scene.generator}/{scene.prompt_id}", images[0], images[1],
                       result.space.text(result.worst))  # fmt: skip


def flip_sample(result: SearchResult) -> FlipSample | None:
    """The flip region's sample as a :class:`FlipSample`; ``None`` without one."""
    space, flip = result.space, result.flip
    if flip is None or not flip.points:
        return None
    floats = [a.name for a in space.axes if a.domain.kind == "float"]
    if len(floats) < 2:
        return None
    named = [n for n in floats if f"{n} " in flip.where] + ["pitch", "colour_temperature"]
    x, y = list(dict.fromkeys([n for n in named if n in floats] + floats))[:2]
    points = [({a.name: float(v) for a, v in zip(space.axes, space.parse(text), strict=True)
                if a.domain.kind == "float"}, flag) for text, flag in flip.points]  # fmt: skip
    share = flip.to_dict()
    title = (f"flip share {share['share']:.3g} [{share['interval'][0]:.3g}, {share['interval'][1]:.3g}] "
             f"(95% Wilson, {share['points']} Sobol points)") if share["share"] is not None else "no defined point"  # fmt: skip
    return FlipSample(points, x, y, title)
