"""Planted-fragility evaluators: a base evaluator plus a documented, known protocol effect.

They give the audit a known answer. Each wrapper scores :class:`ScoreItem` s with its base
(by default the protocol-invariant symbolic companion) and adds an effect that is a
deterministic function of the item's :class:`ScoreContext`; every effect is exactly 0 at the
study's default c0 (pitch 0, lighting ``city``, template "A top-down view of"), so a planted
evaluator's baseline equals its base's.

=================  ==========================================================================
id                 planted effect (``s`` = base score, all offsets in base-score units)
=================  ==========================================================================
planted-pitch      ``s + a * w(generator) * pitch_deg / 90`` with ``w = +1`` for the
                   *favoured* generators, ``-1`` for the *disfavoured*, 0 otherwise
                   (``a = 0.5``). Only the pitch factor varies within a scene (yaw levels sit
                   at a fixed 45°), and at eye level a favoured generator overtakes the c0
                   winner: a planted winner reversal between pitch 0 and pitch 90.
planted-template   ``s + b * NOUN_BIAS[head noun of the template]`` (``b = 0.3``): the caption
                   template alone moves the score (rendering highest, photo lowest, the
                   default "view" neutral), the same for every generator.
planted-lighting   ``s + c * LIGHTING_BRIGHTNESS[env map]`` (``c = 0.3``): brighter maps score
                   higher, the same for every generator.
planted-bow        the base scores a *canonical layout* of the scene (objects sorted by
                   label, asset and size, placed in a row at yaw 0 on the floor): a
                   bag-of-words score that sees which objects exist but not where. A scramble
                   leaves it unchanged, so scramble discrimination is 50 % (all ties).
planted-interaction ``s + a * w(generator) * both(configuration)`` (``a = 0.5``, ``w`` as for
                   planted-pitch): ``both`` is 1 when, for one of the pairs
                   (pitch, lighting) or (focal_length, background), *both* factors leave the
                   study's default (pitch 0, lighting ``city``; focal length 50 mm, background
                   255), else 0. No OFAT configuration changes two factors at once (yaw levels
                   sit at 45° pitch but ``city`` light), so every OFAT ρ is 0; inside the
                   factorial blocks of the ``interactions`` profile the effect is a pure
                   generator × protocol interaction that flips favoured and disfavoured pairs.
planted-robust     ``s``: no protocol effect at all.
planted-jitter     ``s + 0.05 * z_k`` with ``z_k`` standard normal seeded by the index ``k`` of
                   the evaluator's ``score_items`` call: constant within one call, different
                   between calls, so it fails the repeatability check and nothing else. Not
                   in the registry (:data:`REPEATABILITY_PLANTED`).
planted-pitch90    ``s + a * w(generator)`` at pitch 90° only (``a = 0.5``, ``w`` as for
                   planted-pitch), else ``s``: agreement with a panel simulated from the
                   companion collapses at eye level and nowhere else (yaw levels sit at 45°).
                   Not in the registry (:data:`EXTRA_PLANTED`): the human-agreement known
                   answer registers it through ``pytest_audit_evaluators``.
planted-boundary   ``q(generator) + σ · z(scene, configuration)`` at every configuration but
                   c0 (``q(generator)`` there): not the companion but known generator
                   qualities :data:`BOUNDARY_QUALITY`, plus a standard normal ``z`` seeded by
                   the record, with ``σ = 2 · sd(q)``; every configuration's true ρ against
                   c0 (the search's ``shift`` objective, a saved level's effect) is exactly
                   1 = ``max_worst_case_rho``: a confirmation at its own boundary. Not in
                   the registry (:data:`NOISY_PLANTED`).
planted-noise      ``s + 0.3 · z(scene, configuration)`` at every configuration, c0 included
                   (:class:`InvariantNoise`): noise and no effect, so every confirmed
                   effect, disagreement or reversal is a false one. Not in the registry
                   (:data:`NOISY_PLANTED`).
=================  ==========================================================================

With the companion as base, the planted factor is the only factor with non-zero within-scene
variance, so ρ exceeds any positive threshold for that factor and is 0 for every other.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from harness.core.errors import EvaluatorError
from harness.evaluators.base import ScoreResult
from harness.evaluators.reference.items import SceneScorer, ScoreContext, ScoreItem
from harness.scenes.model import Scene, SceneObject
from harness.vocab.factors import BACKGROUND, FOCAL_LENGTH, LIGHTING, PITCH
from harness.vocab.factors import factor as factor_spec

#: Head-noun bias of planted-template (the study found "rendering" best, "photo" worst).
NOUN_BIAS: dict[str | None, float] = {
    "rendering": 1.0,
    "image": 0.5,
    "view": 0.0,
    "picture": -0.5,
    "photo": -1.0,
    None: -0.25,  # no head noun (the identity template)
}

#: Planted brightness of each studio-light map for planted-lighting (a fixed order, not a
#: measurement of the EXR files): city is the neutral default.
LIGHTING_BRIGHTNESS: dict[str, float] = {
    "city": 0.0,
    "courtyard": 0.5,
    "forest": -0.5,
    "interior": -0.25,
    "night": -1.0,
    "studio": 1.0,
    "sunrise": 0.25,
    "sunset": -0.75,
}

#: Default split of the bundled generators for planted-pitch.
FAVOURED = ("gridded", "sparse", "cluttered")
DISFAVOURED = ("faithful", "jittered", "confused")


def _need_context(item: ScoreItem) -> ScoreContext:
    if item.context is None:
        raise EvaluatorError(
            "a planted evaluator needs the measurement context",
            where="ScoreItem.context",
            hint="pass ScoreContext(generator, configuration) with every item",
        )
    return item.context


@dataclass(frozen=True)
class PitchShift:
    """Offset ``amplitude * w(generator) * pitch_deg / 90`` (see the module table)."""

    amplitude: float = 0.5
    favoured: tuple[str, ...] = FAVOURED
    disfavoured: tuple[str, ...] = DISFAVOURED

    def offset(self, item: ScoreItem) -> float:
        ctx = _need_context(item)
        w = 1.0 if ctx.generator in self.favoured else -1.0 if ctx.generator in self.disfavoured else 0.0
        return self.amplitude * w * ctx.configuration.render.pitch_deg / 90.0


@dataclass(frozen=True)
class TemplateBias:
    """Offset ``amplitude * NOUN_BIAS[head noun]`` of the configuration's caption template."""

    amplitude: float = 0.3

    def offset(self, item: ScoreItem) -> float:
        from harness.captions import get_template

        template = get_template(_need_context(item).configuration.template)
        return self.amplitude * NOUN_BIAS[template.slots["noun"]]


@dataclass(frozen=True)
class LightingBias:
    """Offset ``amplitude * LIGHTING_BRIGHTNESS[env map]`` of the configuration's lighting."""

    amplitude: float = 0.3

    def offset(self, item: ScoreItem) -> float:
        lighting = _need_context(item).configuration.render.lighting
        if lighting not in LIGHTING_BRIGHTNESS:
            raise EvaluatorError(
                f"planted-lighting has no brightness for env map {lighting!r}",
                hint=f"use one of {', '.join(LIGHTING_BRIGHTNESS)}",
            )
        return self.amplitude * LIGHTING_BRIGHTNESS[lighting]


@dataclass(frozen=True)
class PitchCollapse:
    """Offset ``amplitude * w(generator)`` at pitch 90° only (eye level), else 0: the
    evaluator agrees with the companion, and so with a panel simulated from it, everywhere
    but at pitch 90, where its order of the generators collapses (``w`` as for PitchShift)."""

    amplitude: float = 0.5
    favoured: tuple[str, ...] = FAVOURED
    disfavoured: tuple[str, ...] = DISFAVOURED

    def offset(self, item: ScoreItem) -> float:
        ctx = _need_context(item)
        if ctx.configuration.render.pitch_deg < 90.0:
            return 0.0
        w = 1.0 if ctx.generator in self.favoured else -1.0 if ctx.generator in self.disfavoured else 0.0
        return self.amplitude * w


@dataclass(frozen=True)
class NoEffect:
    """Offset 0: the robust control."""

    def offset(self, item: ScoreItem) -> float:
        return 0.0


CANONICAL_SPACING_M = 10.0  # gap in the canonical row: beyond every relation threshold


def canonical_layout(scene: Scene) -> Scene:
    """The scene's objects, sorted by (label, asset, size), in a row along +x at yaw 0.

    Depends only on the multiset of (label, asset, size): any relocation or reorientation of
    the objects (the scrambled probe) gives the same canonical scene.
    """
    ordered = sorted(scene.objects, key=lambda o: (o.label, o.asset, o.size))
    x = 0.0
    objects = []
    for i, o in enumerate(ordered):
        x += o.size[0] / 2.0
        objects.append(
            SceneObject(f"c{i}", o.label, o.asset, (x, 0.0, 0.0), 0.0, o.size, o.candidates)
        )
        x += o.size[0] / 2.0 + CANONICAL_SPACING_M
    return replace(scene, objects=tuple(objects))


#: The factor pairs planted-interaction acts on; each factor's setting and study default
#: come from the factor registry (:mod:`harness.vocab.factors`).
INTERACTION_PAIRS: tuple[tuple[str, str], ...] = ((PITCH, LIGHTING), (FOCAL_LENGTH, BACKGROUND))


def _leaves_default(configuration, name: str) -> bool:
    """Whether the configuration's setting of factor ``name`` is not its c0 level."""
    spec = factor_spec(name, where="planted-interaction")
    return spec.setting(configuration) != spec.resolved()[1]


@dataclass(frozen=True)
class InteractionShift:
    """Offset ``amplitude * w(generator)`` when both factors of a pair in
    :data:`INTERACTION_PAIRS` leave their defaults, else 0 (see the module table)."""

    amplitude: float = 0.5
    favoured: tuple[str, ...] = FAVOURED
    disfavoured: tuple[str, ...] = DISFAVOURED

    def offset(self, item: ScoreItem) -> float:
        ctx = _need_context(item)
        cfg = ctx.configuration
        both = any(all(_leaves_default(cfg, f) for f in pair) for pair in INTERACTION_PAIRS)
        if not both:
            return 0.0
        w = 1.0 if ctx.generator in self.favoured else -1.0 if ctx.generator in self.disfavoured else 0.0
        return self.amplitude * w


class CallNoise:
    """Offset ``sigma * z_k``, ``z_k`` standard normal from a generator seeded with ``k``, the
    index of this evaluator object's ``score_items`` call (0 for its first). Every row of one
    call gets the same offset, so inside one measurement it is a constant shift that no
    configuration or generator moves (the audit's other checks read it like planted-robust);
    the same item scored in another call (a batch of another size) gets another number: the
    known answer of the repeatability check (planted-jitter)."""

    def __init__(self, sigma: float = 0.05):
        self.sigma = sigma
        self.calls = -1

    def start_call(self) -> None:
        self.calls += 1

    def offset(self, item: ScoreItem) -> float:
        import numpy as np

        return self.sigma * float(np.random.default_rng(max(self.calls, 0)).standard_normal())


Effect = PitchShift | PitchCollapse | TemplateBias | LightingBias | InteractionShift | NoEffect | CallNoise


class PlantedEvaluator:
    """``base`` plus a planted effect; scores :class:`ScoreItem` s (``needs_scene = True``).

    ``effect`` adds an offset per item; ``scene_transform`` (planted-bow) rewrites the scene
    before the base sees it. A base failure stays a failure (no offset is added to NaN); a
    missing context fails the item with the reason.
    """

    needs_scene = True

    def __init__(
        self,
        id: str,
        base: SceneScorer,
        effect: Effect,
        *,
        scene_transform: Callable[[Scene], Scene] | None = None,
        spec=None,
    ):
        if scene_transform is not None and getattr(base, "needs_render", True):
            raise EvaluatorError(
                f"planted evaluator {id!r}: a scene transform needs a base that reads scenes",
                hint="use the symbolic companion as base (images would need re-rendering)",
            )
        self.id = id
        self.base = base
        self.effect = effect
        self.scene_transform = scene_transform
        self.needs_render = getattr(base, "needs_render", True)
        self.spec = spec

    def score_items(self, items: Sequence[ScoreItem]) -> list[ScoreResult]:
        start_call = getattr(self.effect, "start_call", None)
        if start_call is not None:  # a per-call effect (planted-jitter)
            start_call()
        offsets: list[float | str] = []
        for item in items:
            try:
                offsets.append(self.effect.offset(item))
            except EvaluatorError as exc:
                offsets.append(str(exc))
        if self.scene_transform is not None:
            items = [
                replace(it, scene=None if it.scene is None else self.scene_transform(it.scene))
                for it in items
            ]
        base_results = self.base.score_items(items)
        out = []
        for res, off in zip(base_results, offsets, strict=True):
            if res.status != "ok":
                out.append(res)
            elif isinstance(off, str):
                out.append(ScoreResult.failed(off))
            else:
                out.append(ScoreResult.ok(res.score + off))
        return out

    def score(self, images, captions) -> list[ScoreResult]:
        raise EvaluatorError(
            f"evaluator {self.id!r} needs scenes and the measurement context",
            hint="call score_items() with ScoreItem(scene, spec, caption, context, image)",
        )

    def close(self) -> None:
        close = getattr(self.base, "close", None)
        if close is not None:
            close()


PLANTED_IDS = (
    "planted-pitch",
    "planted-template",
    "planted-lighting",
    "planted-bow",
    "planted-interaction",
    "planted-robust",
)
#: Planted effects outside the registry (a test registers them through a hook): the human
#: agreement known answer (docs/human-agreement.md, "In an audit").
EXTRA_PLANTED = ("planted-pitch90",)
#: The repeatability check's known answer (per-call seeded noise, :class:`CallNoise`), outside
#: the registry: :func:`harness.evaluators.reference.specs.repeatability_planted_specs`.
REPEATABILITY_PLANTED = ("planted-jitter",)
#: Known answers with seeded per-record noise, outside the registry (the interval policy's
#: calibration, docs/intervals.md): :func:`harness.evaluators.reference.specs.noisy_planted_specs`.
NOISY_PLANTED = ("planted-boundary", "planted-noise")


def make_planted(name: str, base: SceneScorer, spec=None) -> PlantedEvaluator:
    """The planted evaluator ``name`` (one of :data:`PLANTED_IDS`) over ``base``."""
    if name == "planted-pitch":
        return PlantedEvaluator(name, base, PitchShift(), spec=spec)
    if name == "planted-template":
        return PlantedEvaluator(name, base, TemplateBias(), spec=spec)
    if name == "planted-lighting":
        return PlantedEvaluator(name, base, LightingBias(), spec=spec)
    if name == "planted-bow":
        return PlantedEvaluator(name, base, NoEffect(), scene_transform=canonical_layout, spec=spec)
    if name == "planted-interaction":
        return PlantedEvaluator(name, base, InteractionShift(), spec=spec)
    if name == "planted-robust":
        return PlantedEvaluator(name, base, NoEffect(), spec=spec)
    if name == "planted-pitch90":
        return PlantedEvaluator(name, base, PitchCollapse(), spec=spec)
    if name in REPEATABILITY_PLANTED:
        return PlantedEvaluator(name, base, CallNoise(), spec=spec)
    if name in PRESET_PLANTED:
        return make_preset_planted(name, base, spec)
    if name in SEARCH_PLANTED:
        return PlantedEvaluator(name, base, SEARCH_PLANTED[name](), spec=spec)
    if name == "planted-boundary":
        return PlantedEvaluator(name, QualityBase(), BoundaryNoise(), spec=spec)
    if name == "planted-noise":
        return PlantedEvaluator(name, base, InvariantNoise(), spec=spec)
    raise EvaluatorError(f"unknown planted evaluator {name!r}", hint=f"use one of {', '.join(PLANTED_IDS)}")


def build(spec, *, device: str = "auto", batch_size: int = 32) -> PlantedEvaluator:
    """Adapter constructor (``EvaluatorSpec.build``): the spec's ``effect`` over the companion."""
    from harness.evaluators.reference.companion import CompanionEvaluator

    return make_planted(spec.option("effect", spec.id), CompanionEvaluator(), spec=spec)


# ---------------------------------------------------------------------------------------------
# Protocol-preset known answers (docs/protocols.md); outside the registry and the
# default panel: ``preset_planted_specs()`` (specs.py) hands them to the preset commands.
#
# preset-tiling     ``s + a * w(generator)`` when the views are tiled into one image
#                    (``ScoreContext.presentation.tiled``), else ``s`` (``a = 0.5``, ``w`` as
#                    for planted-pitch): a grid protocol (3d-defectbench) crowns a favoured
#                    generator, a separate-views protocol (3dcodebench, mate3d) does not.
# preset-viewspike  ``s + a * w+(generator) * (max(0, cos θ) - 0.2)`` with θ the angle between
#                    the view and the front view (elevation 0, azimuth 0), ``w+`` 1 for the
#                    favoured generators, else 0 (``a = 1``): a favoured generator looks best
#                    from the front only, so T3Bench's best smoothed view (0.62 at icosphere
#                    subdivision 1, 0.89 at 2) crowns it and the mean over six axis views
#                    (mate3d: 1/6 - 0.2 < 0) does not.
# planted-preset    ``s + a * w(generator)`` under the one preset mate3d (``a = 0.5``, ``w`` as
#                    for planted-pitch), else ``s``: no grid configuration, no point of the
#                    search space and no other preset moves it, so a generator pair's order
#                    flips under mate3d alone (the known answer of ``t3d-audit claim``'s
#                    "depends on the protocol").

PRESET_PLANTED = ("preset-tiling", "preset-viewspike", "planted-preset")


@dataclass(frozen=True)
class TilingPreference:
    """Offset ``amplitude * w(generator)`` for a tiled presentation, else 0."""

    amplitude: float = 0.5
    favoured: tuple[str, ...] = FAVOURED
    disfavoured: tuple[str, ...] = DISFAVOURED

    def offset(self, item: ScoreItem) -> float:
        ctx = _need_context(item)
        if ctx.presentation is None or not ctx.presentation.tiled:
            return 0.0
        w = 1.0 if ctx.generator in self.favoured else -1.0 if ctx.generator in self.disfavoured else 0.0
        return self.amplitude * w


@dataclass(frozen=True)
class FrontSpike:
    """Offset ``amplitude * [favoured] * (max(0, cos θ) - baseline)``, θ from the front view."""

    amplitude: float = 1.0
    baseline: float = 0.2
    favoured: tuple[str, ...] = FAVOURED

    def offset(self, item: ScoreItem) -> float:
        import math

        ctx = _need_context(item)
        if ctx.generator not in self.favoured:
            return 0.0
        render = ctx.configuration.render
        # the camera direction (harness.render.framing.rotation's back axis) · the front (0, -1, 0)
        cos_front = math.cos(math.radians(render.yaw_deg)) * math.sin(math.radians(render.pitch_deg))
        return self.amplitude * (max(0.0, cos_front) - self.baseline)


@dataclass(frozen=True)
class OnePresetPreference:
    """Offset ``amplitude * w(generator)`` under the protocol preset ``preset`` only (a
    configuration of factor ``preset`` at that level), else 0 (``w`` as for PitchShift)."""

    amplitude: float = 0.5
    preset: str = "mate3d"
    favoured: tuple[str, ...] = FAVOURED
    disfavoured: tuple[str, ...] = DISFAVOURED

    def offset(self, item: ScoreItem) -> float:
        ctx = _need_context(item)
        cfg = ctx.configuration
        # a scaled preset (fewer views, another resolution) is named "<preset>@scaled"
        if ctx.presentation is None or cfg.factor != "preset" or cfg.level.partition("@")[0] != self.preset:
            return 0.0
        w = 1.0 if ctx.generator in self.favoured else -1.0 if ctx.generator in self.disfavoured else 0.0
        return self.amplitude * w


def make_preset_planted(name: str, base: SceneScorer, spec=None) -> PlantedEvaluator:
    """The preset known-answer evaluator ``name`` (one of :data:`PRESET_PLANTED`) over ``base``."""
    if name == "preset-tiling":
        return PlantedEvaluator(name, base, TilingPreference(), spec=spec)
    if name == "preset-viewspike":
        return PlantedEvaluator(name, base, FrontSpike(), spec=spec)
    if name == "planted-preset":
        return PlantedEvaluator(name, base, OnePresetPreference(), spec=spec)
    raise EvaluatorError(f"unknown planted evaluator {name!r}", hint=f"use one of {', '.join(PRESET_PLANTED)}")


# ---------------------------------------------------------------------------------------------
# Off-grid planted effects: known answers of the search beyond the grid


@dataclass(frozen=True)
class OffGridCollapse:
    """Offset ``amplitude * w(generator)`` only where the camera pitch is within
    ``pitch_deg`` (inclusive) *and* the light is warmer than ``below_k`` kelvin, else 0
    (``w`` as for PitchShift): the generators' order collapses in a region no grid level of
    any profile touches (every grid configuration renders at the neutral 6500 K)."""

    amplitude: float = 0.5
    pitch_deg: tuple[float, float] = (50.0, 60.0)
    below_k: float = 3500.0
    favoured: tuple[str, ...] = FAVOURED
    disfavoured: tuple[str, ...] = DISFAVOURED

    def offset(self, item: ScoreItem) -> float:
        ctx = _need_context(item)
        render = ctx.configuration.render
        inside = self.pitch_deg[0] <= render.pitch_deg <= self.pitch_deg[1]
        if not (inside and render.colour_temperature_k < self.below_k):
            return 0.0
        w = 1.0 if ctx.generator in self.favoured else -1.0 if ctx.generator in self.disfavoured else 0.0
        return self.amplitude * w


def record_normal(item: ScoreItem) -> float:
    """A standard normal seeded by the record: the scene id and the configuration's hash (the
    same item always gets the same number, another configuration an independent one)."""
    import hashlib

    import numpy as np

    key = hashlib.sha256(f"{item.scene.id}|{_need_context(item).configuration.hash}".encode()).digest()
    return float(np.random.default_rng(int.from_bytes(key[:8], "little")).standard_normal())


@dataclass(frozen=True)
class InvariantNoise:
    """Protocol-invariant in distribution: N(0, ``sigma``²) drawn afresh for every scene and
    configuration (seeded by both), so no configuration moves the expected scores but every
    one moves the realised ones: the search's winner's curse, the known answer of the held-out
    confirmation's false-confirmation rate (``tests/test_search.py``,
    ``benchmarks/bench_confirm_rate.py``; planted-noise, :data:`NOISY_PLANTED`)."""

    sigma: float = 0.3

    def offset(self, item: ScoreItem) -> float:
        return self.sigma * record_normal(item)


#: planted-boundary's generator qualities (its base scores, arbitrary units): the bundled six,
#: 0.2 apart. Their population variance is 0.35 / 3.
BOUNDARY_QUALITY: dict[str, float] = {
    "faithful": 1.0, "jittered": 0.8, "gridded": 0.6, "sparse": 0.4, "cluttered": 0.2, "confused": 0.0,
}


class QualityBase:
    """Scores a scene by its generator's :data:`BOUNDARY_QUALITY` alone (no scene is read); a
    generator without a quality fails its items."""

    id = "boundary-quality"
    needs_scene = True
    needs_render = False

    def score_items(self, items: Sequence[ScoreItem]) -> list[ScoreResult]:
        out = []
        for item in items:
            q = BOUNDARY_QUALITY.get(_need_context(item).generator)
            out.append(ScoreResult.ok(q) if q is not None else ScoreResult.failed(
                f"planted-boundary has no quality for generator {_need_context(item).generator!r}"))
        return out


def boundary_sigma() -> float:
    """σ that puts every configuration's ρ against c0 at 1: the two-level scene variance of one
    configuration, E[(σ z / 2)²] = σ² / 4, over the generators' variance Var_g(q)."""
    import statistics

    return 2.0 * statistics.pstdev(BOUNDARY_QUALITY.values())


@dataclass(frozen=True)
class BoundaryNoise:
    """Offset ``boundary_sigma() · z(scene, configuration)`` at every configuration but c0
    (the ``baseline`` factor), whose score is exact: over :class:`QualityBase` every
    configuration's true ρ against c0 is 1 (planted-boundary)."""

    def offset(self, item: ScoreItem) -> float:
        from harness.protocol.configurations import BASELINE

        if _need_context(item).configuration.factor == BASELINE:
            return 0.0
        return boundary_sigma() * record_normal(item)


#: Planted effects of the search's known answers: outside the registry and the default panel
#: (a test or ``t3d-audit search`` resolves them through
#: :func:`harness.evaluators.reference.specs.search_planted_specs`).
SEARCH_PLANTED: dict[str, Callable[[], OffGridCollapse]] = {"planted-offgrid": OffGridCollapse}

