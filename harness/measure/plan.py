"""The measurement plan: which rows an evaluator is measured on, independent of the evaluator.

Rows (records format: :mod:`harness.protocol.records`), per scene in (generator, prompt_id) order:

* ``baseline/c0`` and every selected level of every factor of the profile (default-equivalent
  levels included). Background levels reuse the c0 render and only re-composite; template
  levels reuse the c0 image with another caption.
* ``paraphrase/pN`` at the default render, for the levels that survive the duplicate-collapse
  rule (no rows for a prompt without paraphrases).
* ``probe/<name>``: the probe-edited scene rendered at c0 against the original caption; its
  ``scene_sha256`` is the edited scene's identity.

A plan row becomes a record with :meth:`Plan.record` (image and scene measurement alike).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import harness.protocol.presets  # noqa: F401  (registers the preset:NAME view policies)
from harness.captions import realize
from harness.captions.paraphrase import bundled_captions
from harness.core.hashing import sha256_json
from harness.protocol.records import Record, record
from harness.scenes import probe_edits
from harness.scenes.model import scene_identity
from harness.vocab.factors import LIGHTING, PARAPHRASE

if TYPE_CHECKING:
    from harness.protocol.configurations import RenderConfig
    from harness.protocol.profiles import Profile
    from harness.scenes.model import Scene
    from harness.scenes.sceneset import SceneSet

MEASURE_VERSION = 1


@dataclass(frozen=True)
class ImageKey:
    """One image an evaluator sees: a scene (by plan key) rendered at ``render`` over ``background``.

    Under a multi-view policy (``harness.protocol.view_policies.VIEW_POLICIES``) ``policy`` names it and
    ``views`` holds the four renders (``render`` is the first): ``mean4`` / ``max4`` score each
    view and aggregate, ``sheet4`` scores one 2 × 2 sheet of them. ``single``: ``views == ()``.
    """

    scene: str
    render: RenderConfig
    background: str
    views: tuple[RenderConfig, ...] = ()
    policy: str = "single"

    def view_keys(self) -> list[ImageKey]:
        """One single-view key per view (``[self]`` for ``single``)."""
        if not self.views:
            return [self]
        return [ImageKey(self.scene, v, self.background) for v in self.views]


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
    order; ``renders`` lists the distinct (scene key, render config) pairs, the render plan;
    ``not_applicable`` maps ``"<generator>/<prompt_id>"`` to the profile probes that do not
    apply to that scene (no row is planned for them); ``factors_not_applicable`` likewise to
    the factors whose levels cannot change its image (:func:`factors_not_applicable`: lighting
    on 3D Gaussian splats, whose colour is baked radiance), so no row is planned for any of
    their levels: "not applicable", never a null effect.
    """

    root: Path
    profile_name: str
    scenes: dict[str, PlannedScene]
    rows: list[Row]
    key: str
    renders: list[tuple[str, RenderConfig]] = field(default_factory=list)
    not_applicable: dict[str, list[str]] = field(default_factory=dict)
    view_policy: str = "single"
    factors_not_applicable: dict[str, list[str]] = field(default_factory=dict)

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

    def record(
        self,
        evaluator: str,
        row: Row,
        caption: str,
        score: float,
        status: str,
        error: str,
        served_model: str = "",
    ) -> Record:
        """The record of ``row`` measured by ``evaluator``; its ``scene_sha256`` is the identity
        of the scene the row's image shows (the probe-edited one for probe rows)."""
        scene_key = row.image.scene if row.image is not None else row.group
        identity = self.scenes[scene_key].identity if scene_key in self.scenes else ""
        policy = "" if self.view_policy == "single" else self.view_policy
        return record(evaluator, row.generator, row.prompt_id, identity, row.factor, row.level,
                      caption, score, status, error, served_model, policy)


def factors_not_applicable(scene: Scene) -> tuple[str, ...]:
    """Factors whose levels cannot change ``scene``'s image: ``lighting`` for an imported 3D
    Gaussian splat object (``source.variant == "splats"``: emission, baked radiance)."""
    source = scene.source or {}
    return (LIGHTING,) if source.get("variant") == "splats" else ()


def build_plan(
    scene_set: SceneSet, profile: Profile, *, probe_seed: int = 0, view_policy: str = "single"
) -> Plan:
    """The measurement plan of ``profile`` on ``scene_set`` (already selected), every image
    looked at under ``view_policy`` (``single``: the plan and its key are those of the study's
    one-camera protocol)."""
    from harness.protocol.configurations import BASELINE
    from harness.protocol.view_policies import DEFAULT_VIEW_POLICY, policy_views

    multi = view_policy != DEFAULT_VIEW_POLICY

    def image_of(scene_key: str, cfg, background: str) -> ImageKey:
        views = policy_views(cfg, view_policy, profile.view.yaw_pitch_deg)
        if not multi:
            return ImageKey(scene_key, cfg.render, background)
        return ImageKey(scene_key, views[0], background, views, view_policy)

    root = Path(scene_set.root)
    template_default = profile.c0_template
    configs = profile.configurations()
    scenes: dict[str, PlannedScene] = {}
    rows: list[Row] = []
    not_applicable: dict[str, list[str]] = {}
    factors_na: dict[str, list[str]] = {}
    base = next(c for c in configs if c.factor == BASELINE)
    for scene in sorted(scene_set.scenes, key=lambda s: (s.generator, s.prompt_id, s.id)):
        scenes[scene.id] = PlannedScene(scene, scene_set.identity(scene.id))
        base_caption = realize(template_default, scene.prompt)
        para: list[tuple[str, str]] | None = None
        skip = factors_not_applicable(scene)
        if skip and any(cfg.factor in skip for cfg in configs):
            cell = f"{scene.generator}/{scene.prompt_id}"
            factors_na[cell] = sorted({cfg.factor for cfg in configs if cfg.factor in skip})
        for cfg in configs:
            if cfg.factor in skip:
                continue
            image = image_of(scene.id, cfg, cfg.background)
            if cfg.factor == PARAPHRASE:
                if para is None:
                    para = bundled_captions(scene.prompt_id, scene.prompt, template_default) or []
                caption = dict(para).get(cfg.level)
                if caption is None:
                    continue  # collapsed duplicate or no paraphrases for this prompt
            else:
                caption = realize(cfg.template, scene.prompt)
            rows.append(Row(scene.generator, scene.prompt_id, scene.id, cfg.factor, cfg.level, caption, image))
        for probe in profile.probes:
            key = f"{scene.id}~{probe}"
            try:
                edited = probe_edits.apply(scene, probe, seed=probe_seed)
            except probe_edits.ProbeNotApplicable:
                # e.g. removing objects from a single generated object: no row, but the
                # manifest says so, so validators do not count it as missing
                not_applicable.setdefault(f"{scene.generator}/{scene.prompt_id}", []).append(probe)
                continue
            except Exception as exc:  # a probe that cannot apply is a failed measurement
                rows.append(
                    Row(scene.generator, scene.prompt_id, scene.id, "probe", probe, base_caption,
                        None, f"probe {probe} failed: {exc}")
                )
                continue
            scenes[key] = PlannedScene(edited, scene_identity(edited, root))
            rows.append(
                Row(scene.generator, scene.prompt_id, scene.id, "probe", probe, base_caption,
                    image_of(key, base, base.background))
            )
    renders: dict[tuple[str, RenderConfig], None] = {}
    for row in rows:
        if row.image is not None:
            for view in row.image.view_keys():
                renders.setdefault((view.scene, view.render), None)
    keyed: dict[str, object] = {
        "measure": MEASURE_VERSION,
        "scenes": {k: v.identity for k, v in sorted(scenes.items())},
        "rows": [
            [r.group, r.factor, r.level, r.caption, _image_token(r.image), r.error] for r in rows
        ],
    }
    if multi:  # only then: a single-view plan keeps the key (and run id) it always had
        keyed["view_policy"] = view_policy
    key = sha256_json(keyed)
    return Plan(root, profile.name, scenes, rows, key, list(renders), not_applicable, view_policy,
                factors_na)


def _image_token(image: ImageKey | None) -> list[str] | None:
    if image is None:
        return None
    if image.views:
        return [image.scene, image.policy, *(_config_key(v) for v in image.views), image.background]
    return [image.scene, _config_key(image.render), image.background]


@lru_cache(maxsize=4096)
def _config_key(cfg: RenderConfig) -> str:
    """``cfg.key``, hashed once per distinct config (a plan has ~14,000 rows but few configs)."""
    return cfg.key
