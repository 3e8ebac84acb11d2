"""Hard-negative training groups for the reference evaluators (NegCLIP-style).

Retrieval among random scenes teaches a model to tell rooms apart; the audit asks it to tell a
faithful layout of a prompt from a broken one of the *same* prompt. Each training group is one
spec and the same spec broken the ways the generators and probes break it, rendered under one
shared random view, so that the loss can contrast the spec's caption with its own negatives.

Recipe (:class:`NegativesRecipe`, recorded on every training card):

1. **Spec.** A written pool prompt the frozen audit set did not sample (``pool.jsonl`` minus
   ``prompts.json``, as :mod:`harness.training.data`), used as written with probability
   ``as_written_p`` and otherwise mutated (:func:`harness.training.data.mutate_spec`).
2. **Variants** (:data:`VARIANTS`): the six bundled generators' scenes of the spec (faithful,
   jittered, cluttered = extra clutter, gridded = grid layout, sparse = missing objects,
   confused = wrong objects) and two probe edits of the faithful scene (``scrambled``:
   relations broken by moving objects; ``worst_objects``: the worst-retrieved assets). Each
   variant carries its symbolic companion score against the spec
   (:func:`harness.evaluators.reference.companion.companion_breakdown`), the graded truth the
   ranking loss reads; a spec whose generators fail is redrawn.
3. **Captions.** The group's *positive* captions describe the spec (the prompt as written, when
   used as written, and generated wordings of its objects, counts and relations; sometimes the
   audit template's "a top-down view of" prefix); they match the faithful render and none of the
   broken ones. Every variant also has captions of what it contains
   (:func:`harness.training.data.write_caption`), the plain contrastive loss's positives and the
   text-side negatives of the faithful render.
4. **Renders.** All variants of a group under one view drawn by :func:`group_view`: near the
   audit's room c0, which is where the quality bars are measured (top-down with probability
   ``top_down_p``, else a pitch up to ``max_pitch_deg``; the c0 focal length 50 mm with
   probability ``c0_focal_p``, else a neighbouring one; the c0 light map ``city`` with
   probability ``c0_lighting_p``, else any studio map; yaw a quarter turn, so walls stay
   axis-aligned as at c0), at ``resolutions``, resized to ``image_px``. Renders are stored
   as RGBA; training composites a fresh background under them each step.

Output (``DIR``, ignored by git): ``data.npz`` as :func:`harness.training.data.build_dataset`
plus ``group`` (N,) int, ``variant`` (N,) int index into :data:`VARIANTS`, ``companion``
(N,) float and ``contents`` (N,) int (equal within a group for equal labels and counts); ``captions.json`` (N lists: each variant's content captions),
``group_captions.json`` (one list of positive captions per group), ``scenes.jsonl``,
``recipe.json``. Held-out groups (``heldout_frac``) are never trained on.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from harness.core.errors import AuditError, EvaluatorError
from harness.core.fileio import write_json_atomic
from harness.core.hashing import sha256_json
from harness.core.jsonout import JSONObject, strict
from harness.scenes.model import Scene
from harness.training.data import (
    FRAMES,
    MIN_HELDOUT,
    PREFIXES,
    RELATION_WORDS,
    SYNONYMS,
    TRAIN_SEED,
    DataRecipe,
    _article,
    _join,
    _seed_specs,
    mutate_spec,
    noun_phrase,
    plural,
    write_caption,
)
from harness.vocab.factors import BACKGROUND, factor
from harness.vocab.probes import SCRAMBLED, WORST_OBJECTS

if TYPE_CHECKING:
    from harness.scenes.prompts import PromptSpec

GENERATOR_VARIANTS = ("faithful", "jittered", "cluttered", "gridded", "sparse", "confused")
PROBE_VARIANTS = (SCRAMBLED, WORST_OBJECTS)  # probe edits of the faithful scene
VARIANTS = GENERATOR_VARIANTS + PROBE_VARIANTS
AUDIT_PREFIX = "a top-down view of "  # the default caption template's wording


@dataclass(frozen=True)
class NegativesRecipe:
    """Everything that determines the hard-negative set (its hash names the data directory)."""

    seed: int = TRAIN_SEED + 50
    n_groups: int = 200
    captions_per_image: int = 3
    spec_captions: int = 4
    image_px: int = 64
    resolutions: tuple[int, ...] = (96,)
    samples: int = 8
    heldout_frac: float = 0.1
    as_written_p: float = 0.35
    keep_p: float = 0.8
    recount_p: float = 0.3
    add_p: float = 0.4
    top_down_p: float = 0.6
    max_pitch_deg: float = 90.0
    c0_focal_p: float = 0.0
    c0_lighting_p: float = 0.0
    audit_prefix_p: float = 0.3
    kind: str = "hard-negatives"

    def to_dict(self) -> JSONObject:
        """The recipe as a JSON object (its fields in declaration order)."""
        return strict(self)

    @property
    def key(self) -> str:
        return sha256_json(self.to_dict())[:16]


#: The hard-negative sets the bundled weights were fine-tuned on: groups shot near the room c0
#: (85 % top-down, 70 % at 50 mm, 40 % under ``city``), rendered at 128, 96 and 64 px (a 64 px
#: render costs about a quarter of a 128 px one, and the models look at 48 and 64 px), all stored
#: at 64 px.
BUNDLED_NEGATIVES = NegativesRecipe(
    seed=TRAIN_SEED + 60, n_groups=480, image_px=64, resolutions=(128,), heldout_frac=0.05, top_down_p=0.85,
    max_pitch_deg=45.0, c0_focal_p=0.7, c0_lighting_p=0.4, audit_prefix_p=0.5, kind="hard-negatives-c0")
BUNDLED_NEGATIVES_96 = replace(BUNDLED_NEGATIVES, seed=TRAIN_SEED + 61, resolutions=(96,))
BUNDLED_NEGATIVES_64 = replace(BUNDLED_NEGATIVES, seed=TRAIN_SEED + 62, resolutions=(64,), n_groups=1000)
#: Plain scenes under random views (retrieval among rooms, so that the c0-focused groups do not
#: narrow what the models can tell apart).
BUNDLED_PLAIN = DataRecipe(seed=TRAIN_SEED + 70, n_scenes=900, views=1)
#: Every training set of the bundled weights (``t3d-audit train-reference`` default).
BUNDLED_TRAINING = (BUNDLED_NEGATIVES, BUNDLED_NEGATIVES_96, BUNDLED_NEGATIVES_64, BUNDLED_PLAIN)


NEAR_C0_FOCALS_MM = (35.0, 85.0)


def group_view(recipe: NegativesRecipe, rng: random.Random) -> object:
    """The :class:`~harness.protocol.configurations.RenderConfig` shared by one group's variants.

    Pitch 0 (top-down) with probability ``top_down_p``, else U(0, ``max_pitch_deg``); focal
    length 50 mm with probability ``c0_focal_p``, else one of :data:`NEAR_C0_FOCALS_MM`; light
    map ``city`` with probability ``c0_lighting_p``, else any of the eight; yaw 0, 90, 180 or
    270 degrees."""
    from harness.protocol.configurations import RenderConfig
    from harness.protocol.profiles import get_profile
    from harness.vocab.factors import LIGHTING_MAPS

    c0 = get_profile("default").c0  # the room c0 the quality bars are measured at
    pitch = 0.0 if rng.random() < recipe.top_down_p else round(rng.uniform(0.0, recipe.max_pitch_deg), 1)
    resolution = rng.choice(recipe.resolutions)
    focal = c0.focal_length_mm if rng.random() < recipe.c0_focal_p else rng.choice(NEAR_C0_FOCALS_MM)
    lighting = c0.lighting if rng.random() < recipe.c0_lighting_p else rng.choice(LIGHTING_MAPS)
    yaw = float(rng.choice((0, 90, 180, 270)))
    return RenderConfig(resolution_px=resolution, focal_length_mm=focal, lighting=lighting, pitch_deg=pitch,
                        yaw_deg=yaw, samples=recipe.samples, seed=0)  # fmt: skip


def spec_caption(spec: PromptSpec, rng: random.Random, recipe: NegativesRecipe, *, written: bool) -> str:
    """One positive caption of what ``spec`` asks for (objects, counts, relations).

    With ``written`` the spec's own text is one of the choices (half the time)."""
    if written and spec.text and rng.random() < 0.5:
        text = spec.text
    else:
        labels = [lab for lab, _ in spec.objects]
        counts = dict(spec.objects)
        rng.shuffle(labels)
        phrases = [noun_phrase(lab, counts[lab], rng) for lab in labels]
        text = rng.choice(FRAMES).format(room_a=_article(spec.room_type), objects=_join(phrases, rng))
        relations = [r for r in spec.relations if r.kind in RELATION_WORDS]
        if relations and rng.random() < 0.7:
            r = rng.choice(relations)
            subject = rng.choice(SYNONYMS.get(r.subject, (r.subject,)))
            subject = plural(subject) if counts.get(r.subject, 1) > 1 else subject
            anchor = rng.choice(SYNONYMS.get(r.anchor, (r.anchor,)))
            verb = "are" if counts.get(r.subject, 1) > 1 else "is"
            text += f", the {subject} {verb} {rng.choice(RELATION_WORDS[r.kind])} the {anchor}"
    u = rng.random()
    if u < recipe.audit_prefix_p:
        text = AUDIT_PREFIX + text[0].lower() + text[1:]
    elif u < recipe.audit_prefix_p + 0.15:
        text = rng.choice(PREFIXES) + text[0].lower() + text[1:]
    return text


def make_group(spec: PromptSpec, seed: int) -> list[Scene]:
    """The :data:`VARIANTS` of ``spec`` in order (an :class:`AuditError` when one fails)."""
    from harness.scenes import probe_edits
    from harness.scenes.generators import generate
    from harness.scenes.layout import faithful_layout

    layout = faithful_layout(spec)
    scenes = [generate(spec, g, seed=seed, layout=layout) for g in GENERATOR_VARIANTS]
    if any(not s.objects for s in scenes):
        raise EvaluatorError(f"an empty variant of {spec.id}")
    scenes += [probe_edits.apply(scenes[0], p, seed=seed % 1000) for p in PROBE_VARIANTS]
    return scenes


def sample_groups(recipe: NegativesRecipe) -> list[tuple[object, bool, list[Scene], list[float]]]:
    """``recipe.n_groups`` (spec, used as written, variant scenes, companion scores)."""
    from harness.evaluators.reference.companion import as_companion_spec, companion_breakdown

    rng = random.Random(recipe.seed)
    seeds = _seed_specs()
    if not seeds:
        raise EvaluatorError("no pool prompts outside the audit set to derive training specs from")
    mutation = DataRecipe(keep_p=recipe.keep_p, recount_p=recipe.recount_p, add_p=recipe.add_p)
    out: list[tuple[object, bool, list[Scene], list[float]]] = []
    attempts = 0
    while len(out) < recipe.n_groups:
        attempts += 1
        if attempts > 5 * recipe.n_groups + 100:
            raise EvaluatorError(f"only {len(out)} of {recipe.n_groups} training groups could be laid out")
        base = rng.choice(seeds)
        written = rng.random() < recipe.as_written_p
        spec = mutate_spec(base, len(out), mutation, rng)
        if written:
            spec = replace(base, id=f"train-{len(out):05d}", prompt_source="training")
        try:
            scenes = make_group(spec, rng.randrange(2**31))
        except AuditError:
            continue
        cspec = as_companion_spec(spec)
        out.append((spec, written, scenes, [companion_breakdown(s, cspec).score for s in scenes]))
    return out


def build_negatives(
    recipe: NegativesRecipe,
    out_dir: str | Path,
    *,
    render: Callable[[Scene, object], np.ndarray] | None = None,
    log: Callable[[str], None] = print,
) -> Path:
    """Generate the hard-negative set into ``out_dir`` and return it (see the module docstring).

    ``render(scene, cfg) -> (H, W, 4) uint8`` defaults to the harness renderer (cached in
    ``out_dir/renders``, so an interrupted build resumes)."""
    from harness.evaluators.reference.fit import resize
    from harness.protocol.configurations import background_rgb
    from harness.render.composite import composite
    from harness.training.data import harness_renderer

    if recipe.n_groups < MIN_HELDOUT:
        raise EvaluatorError(
            f"a hard-negative set needs at least {MIN_HELDOUT} groups, not {recipe.n_groups}",
            where="n_groups",
            hint=f"{MIN_HELDOUT} groups are held out for the checks; ask for {MIN_HELDOUT} or more",
        )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if render is None:
        render = harness_renderer(out / "renders")
    t0 = time.time()
    groups = sample_groups(recipe)
    log(f"{len(groups)} groups of {len(VARIANTS)} variants sampled in {time.time() - t0:.1f}s")
    # separate streams, so that a group's view and captions do not depend on ``n_groups``
    rng = random.Random(recipe.seed + 1)
    pick = random.Random(recipe.seed + 2)
    n_heldout = max(MIN_HELDOUT, round(recipe.heldout_frac * len(groups)))
    heldout_groups = set(pick.sample(range(len(groups)), n_heldout))
    images, rgbas, group_idx, variant_idx, companion, captions, group_captions = [], [], [], [], [], [], []
    contents: list[int] = []
    white = background_rgb(factor(BACKGROUND).default)  # the audit's c0 background
    for gi, (spec, written, scenes, scores) in enumerate(groups):
        cfg = group_view(recipe, rng)
        group_captions.append([spec_caption(spec, rng, recipe, written=written) for _ in range(recipe.spec_captions)])
        kinds: list[tuple[tuple[str, int], ...]] = []
        for vi, (scene, score) in enumerate(zip(scenes, scores, strict=True)):
            kind = tuple(sorted(Counter(o.label for o in scene.objects).items()))
            kinds += [kind] if kind not in kinds else []
            contents.append(kinds.index(kind))
            rgba = render(scene, cfg)
            images.append(resize(composite(rgba, white), recipe.image_px))
            rgbas.append(resize(rgba, recipe.image_px))
            group_idx.append(gi)
            variant_idx.append(vi)
            companion.append(score)
            captions.append([write_caption(scene, spec, spec.room_type, rng) for _ in range(recipe.captions_per_image)])
        if (gi + 1) % 10 == 0:
            rate = len(images) / (time.time() - t0)
            log(f"rendered {gi + 1}/{len(groups)} groups ({rate:.2f} images/s)")
    n = len(images)
    np.savez_compressed(
        out / "data.npz",
        images=np.stack(images),
        rgba=np.stack(rgbas),
        scene=np.arange(n, dtype=np.int64),
        heldout=np.asarray([g in heldout_groups for g in group_idx]),
        group=np.asarray(group_idx, dtype=np.int64),
        variant=np.asarray(variant_idx, dtype=np.int64),
        companion=np.asarray(companion, dtype=np.float64),
        contents=np.asarray(contents, dtype=np.int64),
    )
    write_json_atomic(out / "captions.json", captions, indent=None, sort_keys=False, ensure_ascii=True)
    write_json_atomic(out / "group_captions.json", group_captions, indent=None, sort_keys=False, ensure_ascii=True)
    with (out / "scenes.jsonl").open("w", encoding="utf-8") as fh:
        for spec, _, scenes, _ in groups:
            fh.write(json.dumps({"spec": spec.to_dict(), "scenes": [s.to_dict() for s in scenes]}) + "\n")
    meta = {"recipe": recipe.to_dict(), "key": recipe.key, "images": n, "groups": len(groups),
            "variants": list(VARIANTS), "heldout_groups": len(heldout_groups),
            "build_seconds": round(time.time() - t0, 1)}  # fmt: skip
    write_json_atomic(out / "recipe.json", meta, indent=1, sort_keys=False, ensure_ascii=True)
    log(f"wrote {n} images ({len(groups)} groups) to {out} in {time.time() - t0:.0f}s")
    return out
