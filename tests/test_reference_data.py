"""Training-data recipe of the reference evaluators: specs, captions, views (no rendering)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.scenes.prompts import load_pool, load_prompts
from harness.training import data
from harness.training.data import (
    DataRecipe,
    build_dataset,
    load_dataset,
    mutate_spec,
    noun_phrase,
    plural,
    random_view,
    sample_scenes,
    write_caption,
)


def test_plural_hand_values():
    assert plural("bookshelf") == "bookshelves"
    assert plural("office chair") == "office chairs"
    assert plural("bus") == "buses"
    assert plural("couch") == "couches"
    assert plural("tv") == "tvs"


def test_noun_phrase_numbers():
    rng = random.Random(0)
    phrases = {noun_phrase("chair", 3, rng) for _ in range(50)}
    assert phrases <= {"three chairs", "3 chairs"}
    singles = {noun_phrase("armchair", 1, rng) for _ in range(50)}
    assert singles <= {"an armchair", "one armchair", "an easy chair", "one easy chair"}


def test_training_specs_never_come_from_the_audit_prompts():
    audit = {p.id for p in load_prompts()}
    seeds = data._seed_specs()
    assert seeds and not audit & {p.id for p in seeds}
    pool = {p.id: p for p in load_pool()}
    rng = random.Random(1)
    for i in range(30):
        spec = mutate_spec(rng.choice(seeds), i, DataRecipe(), rng)
        assert spec.id == f"train-{i:05d}" and spec.id not in pool
        labels = {lab for lab, _ in spec.objects}
        assert labels and all(c >= 1 for _, c in spec.objects)
        assert all(r.subject in labels and r.anchor in labels for r in spec.relations)


def test_sampling_is_deterministic_and_uses_a_new_seed():
    assert data.TRAIN_SEED != 20260
    a = sample_scenes(DataRecipe(n_scenes=6))
    b = sample_scenes(DataRecipe(n_scenes=6))
    assert [s.to_dict() for s, _ in a] == [s.to_dict() for s, _ in b]
    c = sample_scenes(DataRecipe(n_scenes=6, seed=7))
    assert [s.to_dict() for s, _ in a] != [s.to_dict() for s, _ in c]


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000))
def test_captions_describe_what_the_scene_contains(seed):
    scene, spec = sample_scenes(DataRecipe(n_scenes=1, seed=seed))[0]
    text = write_caption(scene, spec, spec.room_type, random.Random(seed))
    assert text == text.strip() and text
    labels = {o.label for o in scene.objects}
    for label in labels:  # every present label is named (by itself or a synonym, maybe plural)
        words = data.SYNONYMS.get(label, (label,))
        assert any(w in text or plural(w) in text for w in words), (label, text)


def test_relation_phrases_only_when_they_hold():
    from harness.evaluators.reference.companion import as_companion_spec, relation_satisfaction

    pairs = sample_scenes(DataRecipe(n_scenes=40, seed=3))
    rng = random.Random(0)
    for scene, spec in pairs:
        holding = {
            r.relation
            for r in as_companion_spec(spec).relations
            if relation_satisfaction(scene, r) >= 1.0
        }
        for _ in range(5):
            text = write_caption(scene, spec, spec.room_type, rng)
            if ", the " in text:
                tail = text.rsplit(", the ", 1)[1]
                assert any(w in tail for rel in holding for w in data.RELATION_WORDS[rel]), text


def test_random_views_cover_the_protocol_ranges():
    from harness.vocab.factors import LIGHTING_MAPS

    rng = random.Random(0)
    recipe = DataRecipe()
    views = [random_view(recipe, rng) for _ in range(300)]
    pitches = [cfg.pitch_deg for cfg, _ in views]
    assert 0.25 < sum(p == 0 for p in pitches) / len(pitches) < 0.55
    assert max(pitches) > 80
    assert {cfg.lighting for cfg, _ in views} == set(LIGHTING_MAPS)
    assert {cfg.resolution_px for cfg, _ in views} == set(recipe.resolutions)
    assert all(all(0 <= v <= 255 for v in bg) for _, bg in views)


def test_build_and_load_with_a_stub_renderer(tmp_path):
    """The dataset files round-trip; held-out scenes are whole scenes."""

    def render(scene, cfg):
        img = np.zeros((cfg.resolution_px, cfg.resolution_px, 4), np.uint8)
        img[8:-8, 8:-8] = (200, 100, 50, 255)
        return img

    recipe = DataRecipe(n_scenes=12, views=2, heldout_frac=0.25)
    build_dataset(recipe, tmp_path, render=render, log=lambda m: None)
    ts = load_dataset(tmp_path)
    assert ts.images.shape == (24, recipe.image_px, recipe.image_px, 3)
    assert ts.images.dtype == np.uint8
    assert len(ts.captions) == 24 and all(len(c) == recipe.captions_per_image for c in ts.captions)
    for s in np.unique(ts.scene):
        assert len(set(ts.heldout[ts.scene == s])) == 1
    assert ts.heldout.sum() == 2 * 10  # at least 10 held-out scenes for 10-way retrieval
    assert ts.recipe["recipe"]["seed"] == recipe.seed


def test_missing_dataset_is_a_typed_error(tmp_path):
    from harness.core.errors import EvaluatorError

    with pytest.raises(EvaluatorError, match="no training set"):
        load_dataset(tmp_path)
