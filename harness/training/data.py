"""Training data for the reference evaluators: a separate procedural scene set, rendered.

Recipe (:class:`DataRecipe`, recorded on every training card):

1. **Specs.** Seeds are the written pool prompts that the frozen audit set did *not* sample
   (``pool.jsonl`` minus ``prompts.json``), so no audit prompt is trained on. Each training
   spec mutates one: every requested label is kept with probability ``keep_p`` (relations
   whose labels are gone are dropped), counts move by ±1 with probability ``recount_p``, and
   with probability ``add_p`` one extra floor-standing category joins.
2. **Scenes.** One of the six bundled generators (weights :data:`GENERATOR_WEIGHTS`) lays the
   spec out with a seed from the recipe's own ``seed`` (never the audit set's), so the images
   show faithful, jittered, sparse, cluttered, gridded and confused layouts.
3. **Captions** are written from what the scene *contains* (labels and counts of its objects),
   never from the spec alone, with varied wording: synonyms, number words, several sentence
   frames, a random object order, the room type sometimes, relation phrases only for spec
   relations the companion geometry confirms, and sometimes a caption-grammar prefix.
4. **Renders** through the harness renderer, ``views`` per scene, each with a random camera
   (pitch: top-down with probability 0.4, else uniform 0–90°; yaw uniform; a Table 11 focal
   length), a random studio-light map, a random background colour (composited), a random
   resolution from ``resolutions``; then resized to ``image_px`` (bicubic) and stored.

Output (``DIR``, ignored by git): ``data.npz`` (``images`` (N, S, S, 3) uint8 composited,
``rgba`` (N, S, S, 4) uint8 before compositing, ``scene`` (N,) int scene index, ``heldout``
(N,) bool), ``captions.json`` (N lists of strings),
``scenes.jsonl`` (the scene dicts), ``recipe.json``. Held-out scenes (a fraction
``heldout_frac`` chosen by the seed) are never trained on.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from harness.core.errors import AuditError, EvaluatorError
from harness.core.fileio import write_json_atomic
from harness.core.hashing import sha256_json
from harness.core.jsonout import JSONObject, strict
from harness.scenes.model import Scene

if TYPE_CHECKING:
    from harness.scenes.prompts import PromptSpec

TRAIN_SEED = 8_20261130  # the training set's own seed; the audit set uses 20260 and its own
MIN_HELDOUT = 10  # held-out scenes (or groups) of any set: the retrieval check ranks 10 at a time

GENERATOR_WEIGHTS = {
    "faithful": 0.3,
    "jittered": 0.2,
    "cluttered": 0.125,
    "gridded": 0.125,
    "sparse": 0.125,
    "confused": 0.125,
}
FOCALS_MM = (16.0, 24.0, 35.0, 50.0, 85.0, 100.0, 200.0)

SYNONYMS: dict[str, tuple[str, ...]] = {
    "dining table": ("dining table", "table"),
    "coffee table": ("coffee table", "low table"),
    "tv": ("tv", "television"),
    "tv stand": ("tv stand", "tv cabinet"),
    "sofa": ("sofa", "couch"),
    "bookshelf": ("bookshelf", "bookcase"),
    "rug": ("rug", "carpet"),
    "fridge": ("fridge", "refrigerator"),
    "plant": ("plant", "potted plant"),
    "office chair": ("office chair", "desk chair"),
    "nightstand": ("nightstand", "bedside table"),
    "stove": ("stove", "cooker"),
    "cabinet": ("cabinet", "cupboard"),
    "armchair": ("armchair", "easy chair"),
    "counter": ("counter", "bar counter"),
}
NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
RELATION_WORDS = {
    "beside": ("beside", "next to"),
    "facing": ("facing",),
    "on": ("on", "on top of"),
    "around": ("around",),
    "in_front_of": ("in front of",),
    "under": ("under", "beneath"),
}
FRAMES = (
    "{room_a} with {objects}",
    "{room_a} containing {objects}",
    "{objects} in {room_a}",
    "a room with {objects}",
    "{objects}",
    "a scene with {objects}",
)
PREFIXES = ("a top-down view of ", "a rendering of ", "an image of ", "a picture of a scene: ",
            "a bird-eye view of ", "a photo of ")  # fmt: skip


def plural(word: str) -> str:
    """English plural of a category noun ("bookshelf" → "bookshelves", "tv" → "tvs")."""
    last = word.split(" ")[-1]
    head = word[: len(word) - len(last)]
    if last.endswith("shelf"):
        return head + last[:-1] + "ves"
    if last.endswith(("s", "x", "ch", "sh")):
        return head + last + "es"
    return head + last + "s"


def _article(word: str) -> str:
    return ("an " if word[0] in "aeiou" else "a ") + word


def noun_phrase(label: str, count: int, rng: random.Random) -> str:
    """"a bed", "one bed", "two chairs", "3 stools" — wording chosen by ``rng``."""
    word = rng.choice(SYNONYMS.get(label, (label,)))
    if count == 1:
        return _article(word) if rng.random() < 0.8 else "one " + word
    number = NUMBER_WORDS[count] if count < len(NUMBER_WORDS) and rng.random() < 0.85 else str(count)
    return f"{number} {plural(word)}"


def _join(parts: Sequence[str], rng: random.Random) -> str:
    if len(parts) == 1:
        return parts[0]
    sep = " and " if rng.random() < 0.85 else " & "
    return ", ".join(parts[:-1]) + sep + parts[-1]


def write_caption(scene: Scene, spec: PromptSpec, room_type: str, rng: random.Random) -> str:
    """One caption of what ``scene`` contains, in a wording drawn with ``rng``.

    Objects and counts come from the scene; a relation of ``spec`` is mentioned only when the
    companion geometry says it holds for every subject instance in the scene.
    """
    from harness.evaluators.reference.companion import as_companion_spec, relation_satisfaction

    counts = Counter(o.label for o in scene.objects)
    if not counts:
        return f"an empty {room_type}"
    labels = list(counts)
    rng.shuffle(labels)
    phrases = [noun_phrase(lab, counts[lab], rng) for lab in labels]
    text = rng.choice(FRAMES).format(room_a=_article(room_type), objects=_join(phrases, rng))
    relations = [
        r
        for r in as_companion_spec(spec).relations
        if r.relation in RELATION_WORDS and relation_satisfaction(scene, r) >= 1.0
    ]
    if relations and rng.random() < 0.7:
        r = rng.choice(relations)
        subject = rng.choice(SYNONYMS.get(r.subject, (r.subject,)))
        subject = plural(subject) if counts[r.subject] > 1 else subject
        anchor = rng.choice(SYNONYMS.get(r.object, (r.object,)))
        verb = "are" if counts[r.subject] > 1 else "is"
        text += f", the {subject} {verb} {rng.choice(RELATION_WORDS[r.relation])} the {anchor}"
    if rng.random() < 0.3:
        text = rng.choice(PREFIXES) + text
    return text


@dataclass(frozen=True)
class DataRecipe:
    """Everything that determines the training set (its hash names the data directory)."""

    seed: int = TRAIN_SEED
    n_scenes: int = 480
    views: int = 2
    captions_per_image: int = 4
    image_px: int = 64
    resolutions: tuple[int, ...] = (96, 128)
    samples: int = 8
    heldout_frac: float = 0.15
    keep_p: float = 0.8
    recount_p: float = 0.3
    add_p: float = 0.4
    top_down_p: float = 0.4

    def to_dict(self) -> JSONObject:
        """The recipe as a JSON object (its fields in declaration order)."""
        return strict(self)

    @property
    def key(self) -> str:
        return sha256_json(self.to_dict())[:16]


#: A fresh set of training-style scenes, all held out, for the retrieval check of committed
#: weights (:func:`harness.training.checks.heldout_retrieval_check`); its seed is no training
#: recipe's.
RETRIEVAL_CHECK_RECIPE = DataRecipe(seed=TRAIN_SEED + 97, n_scenes=150, views=1, heldout_frac=1.0)


def _seed_specs() -> list[object]:
    from harness.scenes.prompts import load_pool, load_prompts

    audit = {p.id for p in load_prompts()}
    return [p for p in load_pool() if p.id not in audit]


def mutate_spec(base: PromptSpec, index: int, recipe: DataRecipe, rng: random.Random) -> PromptSpec:
    """A training spec derived from pool spec ``base`` (see the module docstring)."""
    from harness.scenes.assets import CATEGORIES

    objects = []
    for label, count in base.objects:
        if rng.random() >= recipe.keep_p:
            continue
        if rng.random() < recipe.recount_p:
            count = min(5, max(1, count + rng.choice((-1, 1))))
        objects.append((label, count))
    present = {lab for lab, _ in objects}
    if rng.random() < recipe.add_p:
        extra = sorted(
            lab for lab, cat in CATEGORIES.items() if cat.placement != "top" and lab not in present
        )
        lab = rng.choice(extra)
        objects.append((lab, rng.choice((1, 1, 2))))
        present.add(lab)
    if not objects:
        objects = [base.objects[0]]
        present = {base.objects[0][0]}
    relations = tuple(r for r in base.relations if r.subject in present and r.anchor in present)
    return replace(
        base,
        id=f"train-{index:05d}",
        text="",
        prompt_source="training",
        objects=tuple(objects),
        relations=relations,
    )


def sample_scenes(recipe: DataRecipe) -> list[tuple[Scene, object]]:
    """``recipe.n_scenes`` (scene, spec) pairs; specs that cannot be laid out are redrawn."""
    from harness.scenes.generators import generate

    rng = random.Random(recipe.seed)
    seeds = _seed_specs()
    if not seeds:
        raise EvaluatorError("no pool prompts outside the audit set to derive training specs from")
    names, weights = zip(*GENERATOR_WEIGHTS.items(), strict=True)
    out: list[tuple[Scene, object]] = []
    attempts = 0
    while len(out) < recipe.n_scenes:
        attempts += 1
        if attempts > 5 * recipe.n_scenes + 100:
            raise EvaluatorError(f"only {len(out)} of {recipe.n_scenes} training specs could be laid out")
        spec = mutate_spec(rng.choice(seeds), len(out), recipe, rng)
        generator = rng.choices(names, weights)[0]
        try:
            scene = generate(spec, generator, seed=rng.randrange(2**31))
        except AuditError:
            continue
        if scene.objects:
            out.append((scene, spec))
    return out


def random_view(recipe: DataRecipe, rng: random.Random):
    """(RenderConfig, background RGB) for one randomised training view."""
    from harness.protocol.configurations import RenderConfig
    from harness.vocab.factors import LIGHTING_MAPS

    pitch = 0.0 if rng.random() < recipe.top_down_p else round(rng.uniform(0.0, 90.0), 1)
    cfg = RenderConfig(
        resolution_px=rng.choice(recipe.resolutions),
        focal_length_mm=rng.choice(FOCALS_MM),
        lighting=rng.choice(LIGHTING_MAPS),
        pitch_deg=pitch,
        yaw_deg=round(rng.uniform(0.0, 360.0), 1),
        samples=recipe.samples,
        seed=0,
    )
    if rng.random() < 0.5:
        g = rng.randrange(256)
        background = (g, g, g)
    else:
        background = (rng.randrange(256), rng.randrange(256), rng.randrange(256))
    return cfg, background


def build_dataset(
    recipe: DataRecipe,
    out_dir: str | Path,
    *,
    render: Callable[[Scene, object], np.ndarray] | None = None,
    log: Callable[[str], None] = print,
) -> Path:
    """Generate the training set into ``out_dir`` and return it.

    ``render(scene, cfg) -> (H, W, 4) uint8`` defaults to the harness renderer (its cache in
    ``out_dir/renders`` makes an interrupted build resume without re-rendering).
    """
    from harness.evaluators.reference.fit import resize
    from harness.render.composite import composite

    if recipe.n_scenes < MIN_HELDOUT:
        raise EvaluatorError(
            f"a training set needs at least {MIN_HELDOUT} scenes, not {recipe.n_scenes}",
            where="n_scenes",
            hint=f"{MIN_HELDOUT} are held out for the retrieval check; pass --scenes {MIN_HELDOUT} or more",
        )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if render is None:
        render = harness_renderer(out / "renders")
    t0 = time.time()
    pairs = sample_scenes(recipe)
    log(f"{len(pairs)} training scenes sampled in {time.time() - t0:.1f}s")
    rng = random.Random(recipe.seed + 1)
    heldout_scenes = set(rng.sample(range(len(pairs)), max(MIN_HELDOUT, round(recipe.heldout_frac * len(pairs)))))
    images, rgbas, scene_idx, captions = [], [], [], []
    for i, (scene, spec) in enumerate(pairs):
        for _ in range(recipe.views):
            cfg, background = random_view(recipe, rng)
            rgba = render(scene, cfg)
            images.append(resize(composite(rgba, background), recipe.image_px))
            rgbas.append(resize(rgba, recipe.image_px))
            scene_idx.append(i)
            room = spec.room_type
            captions.append([write_caption(scene, spec, room, rng) for _ in range(recipe.captions_per_image)])
        if (i + 1) % 25 == 0:
            rate = (i + 1) / (time.time() - t0)
            log(f"rendered {i + 1}/{len(pairs)} scenes ({rate:.2f} scenes/s)")
    np.savez_compressed(
        out / "data.npz",
        images=np.stack(images),
        rgba=np.stack(rgbas),
        scene=np.asarray(scene_idx, dtype=np.int64),
        heldout=np.asarray([s in heldout_scenes for s in scene_idx]),
    )
    write_json_atomic(out / "captions.json", captions, indent=None, sort_keys=False, ensure_ascii=True)
    with (out / "scenes.jsonl").open("w", encoding="utf-8") as fh:
        for scene, spec in pairs:
            fh.write(json.dumps({"scene": scene.to_dict(), "spec": spec.to_dict()}) + "\n")
    meta = {"recipe": recipe.to_dict(), "key": recipe.key, "images": len(images),
            "scenes": len(pairs), "heldout_scenes": len(heldout_scenes),
            "build_seconds": round(time.time() - t0, 1)}  # fmt: skip
    write_json_atomic(out / "recipe.json", meta, indent=1, sort_keys=False, ensure_ascii=True)
    log(f"wrote {len(images)} images to {out} in {time.time() - t0:.0f}s")
    return out


def harness_renderer(cache_dir: Path) -> Callable[[Scene, object], np.ndarray]:
    from harness.core.paths import FIXTURES
    from harness.render.service import RenderService
    from harness.scenes.model import scene_identity

    service = RenderService(cache_dir)
    root = FIXTURES / "scenes"  # the asset library the generators reference

    def render(scene: Scene, cfg: object) -> np.ndarray:
        return service.render(scene, root, scene_identity(scene, root), cfg)

    return render


@dataclass(frozen=True)
class TrainingSet:
    """A loaded training set: ``images`` (N, S, S, 3) uint8 (composited over the recipe's random
    background), ``scene`` (N,), ``heldout`` (N,), ``captions`` N lists of strings, ``recipe``
    the build metadata, ``rgba`` (N, S, S, 4) uint8 renders before compositing (training draws
    a fresh background per step from them) or ``None``.

    Hard-negative groups (:mod:`harness.training.negatives`; ``None`` for a set without any):
    ``group`` (N,) int group per row (−1 outside groups), ``companion`` (N,) float the row's
    companion score against its group's spec, ``contents`` (N,) int (equal within a group for
    equal labels and counts), ``group_captions`` one list of positive captions per group."""

    images: np.ndarray
    scene: np.ndarray
    heldout: np.ndarray
    captions: list[list[str]]
    recipe: dict[str, object]
    rgba: np.ndarray | None = None
    group: np.ndarray | None = None
    companion: np.ndarray | None = None
    contents: np.ndarray | None = None
    group_captions: list[list[str]] | None = None


def load_dataset(data_dir: str | Path) -> TrainingSet:
    """Read a directory written by :func:`build_dataset`."""
    d = Path(data_dir)
    if not (d / "data.npz").is_file():
        raise EvaluatorError(
            "no training set here",
            where=d,
            hint="build one with 't3d-audit train-reference --data DIR' (it renders the set first)",
        )
    with np.load(d / "data.npz") as z:
        images, scene, heldout = z["images"], z["scene"], z["heldout"]
        rgba = z["rgba"] if "rgba" in z.files else None
        grouped = "group" in z.files
        group = z["group"] if grouped else None
        companion = z["companion"] if grouped else None
        contents = z["contents"] if grouped else None
    captions = json.loads((d / "captions.json").read_text(encoding="utf-8"))
    recipe = json.loads((d / "recipe.json").read_text(encoding="utf-8"))
    group_captions = json.loads((d / "group_captions.json").read_text(encoding="utf-8")) if grouped else None
    if not (len(images) == len(scene) == len(heldout) == len(captions)):
        raise EvaluatorError("training set arrays disagree in length", where=d, hint="rebuild it")
    if grouped and not (len(group) == len(companion) == len(contents) == len(images)
                        and int(group.max()) < len(group_captions)):  # fmt: skip
        raise EvaluatorError("hard-negative arrays disagree with the images", where=d, hint="rebuild it")
    return TrainingSet(images, scene, heldout, captions, recipe, rgba, group, companion, contents, group_captions)


def concat_datasets(sets: Sequence[TrainingSet]) -> TrainingSet:
    """One training set from several (scene indices kept distinct; recipes listed)."""
    if len(sets) == 1:
        return sets[0]
    offset, scenes = 0, []
    for ts in sets:
        scenes.append(ts.scene + offset)
        offset += int(ts.scene.max()) + 1 if len(ts.scene) else 0
    rgba = None
    if all(ts.rgba is not None for ts in sets):
        rgba = np.concatenate([ts.rgba for ts in sets])
    hard: dict[str, object] = {"group": None, "companion": None, "contents": None, "group_captions": None}
    if any(ts.group is not None for ts in sets):
        groups, companions, contents, group_captions = [], [], [], []
        for ts in sets:
            n = len(ts.images)
            if ts.group is None:
                groups.append(np.full(n, -1, dtype=np.int64))
                companions.append(np.full(n, np.nan))
                contents.append(np.full(n, -1, dtype=np.int64))
                continue
            groups.append(np.where(ts.group >= 0, ts.group + len(group_captions), -1))
            companions.append(ts.companion)
            contents.append(ts.contents)
            group_captions += ts.group_captions
        hard = {"group": np.concatenate(groups), "companion": np.concatenate(companions),
                "contents": np.concatenate(contents), "group_captions": group_captions}  # fmt: skip
    return TrainingSet(
        np.concatenate([ts.images for ts in sets]),
        np.concatenate(scenes),
        np.concatenate([ts.heldout for ts in sets]),
        [c for ts in sets for c in ts.captions],
        {"parts": [ts.recipe for ts in sets]},
        rgba,
        **hard,
    )
