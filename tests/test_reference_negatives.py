"""Hard-negative training groups (harness.training.negatives) and their loss terms."""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.training.data import concat_datasets, load_dataset
from harness.training.negatives import (
    AUDIT_PREFIX,
    NEAR_C0_FOCALS_MM,
    VARIANTS,
    NegativesRecipe,
    build_negatives,
    group_view,
    make_group,
    sample_groups,
    spec_caption,
)


def _audit_prompt_ids() -> set[str]:
    from harness.scenes.prompts import load_prompts

    return {p.id for p in load_prompts()}


def test_groups_are_deterministic_and_come_from_held_out_pool_prompts():
    a = sample_groups(NegativesRecipe(n_groups=4))
    b = sample_groups(NegativesRecipe(n_groups=4))
    assert [[s.to_dict() for s in g[2]] for g in a] == [[s.to_dict() for s in g[2]] for g in b]
    c = sample_groups(NegativesRecipe(n_groups=4, seed=5))
    assert [g[2][0].to_dict() for g in a] != [g[2][0].to_dict() for g in c]
    from harness.scenes.prompts import load_prompts

    audit_texts = {p.text for p in load_prompts()}
    for spec, _written, scenes, scores in a:
        assert spec.id.startswith("train-") and spec.id not in _audit_prompt_ids()
        assert spec.text not in audit_texts  # never an audit prompt's wording
        assert len(scenes) == len(scores) == len(VARIANTS)
        assert [s.generator for s in scenes[:6]] == list(VARIANTS[:6])


def test_variants_break_the_spec_and_the_faithful_one_scores_best():
    """The companion ranks the faithful variant first; sparse drops, cluttered adds objects."""
    for _spec, _, scenes, scores in sample_groups(NegativesRecipe(n_groups=6, seed=11)):
        by = dict(zip(VARIANTS, scenes, strict=True))
        score = dict(zip(VARIANTS, scores, strict=True))
        assert score["faithful"] == max(scores) == pytest.approx(1.0)
        assert score["confused"] < 1.0 and score["sparse"] < 1.0 and score["cluttered"] < 1.0
        assert len(by["sparse"].objects) < len(by["faithful"].objects) < len(by["cluttered"].objects)
        assert by["scrambled"].id.startswith(by["faithful"].id + "~")
        # worst_objects keeps every label and pose, only the assets change
        worst, faithful = by["worst_objects"].objects, by["faithful"].objects
        assert [(o.label, o.position) for o in worst] == [(o.label, o.position) for o in faithful]


def test_make_group_is_deterministic():
    spec = sample_groups(NegativesRecipe(n_groups=1))[0][0]
    assert [s.to_dict() for s in make_group(spec, 3)] == [s.to_dict() for s in make_group(spec, 3)]


def test_spec_captions_name_the_requested_objects():
    spec, written, _scenes, _ = sample_groups(NegativesRecipe(n_groups=1, as_written_p=0.0))[0]
    assert not written
    rng = random.Random(0)
    recipe = NegativesRecipe(audit_prefix_p=0.5)
    texts = [spec_caption(spec, rng, recipe, written=False) for _ in range(40)]
    assert any(t.startswith(AUDIT_PREFIX) for t in texts)
    assert all(t != spec.text for t in texts)
    from harness.training.data import SYNONYMS, plural

    for text in texts:
        for label, count in spec.objects:
            words = SYNONYMS.get(label, (label,))
            forms = [w if count == 1 else plural(w) for w in words]
            assert any(f in text for f in forms), (label, text)


def test_written_specs_use_their_own_text_sometimes():
    spec = sample_groups(NegativesRecipe(n_groups=1))[0][0]
    spec = replace(spec, text="A quiet room with one bed.")
    rng = random.Random(1)
    texts = {spec_caption(spec, rng, NegativesRecipe(audit_prefix_p=0.0), written=True) for _ in range(30)}
    assert any("quiet room with one bed" in t for t in texts)


def _stub_render(scene, cfg):
    img = np.zeros((cfg.resolution_px, cfg.resolution_px, 4), np.uint8)
    img[8 : 8 + 4 * len(scene.objects), 8:-8] = (200, 100, 50, 255)
    return img


def test_build_and_load_round_trip_with_groups(tmp_path):
    recipe = NegativesRecipe(n_groups=12, heldout_frac=0.25)
    build_negatives(recipe, tmp_path, render=_stub_render, log=lambda m: None)
    ts = load_dataset(tmp_path)
    n = 12 * len(VARIANTS)
    assert ts.images.shape == (n, recipe.image_px, recipe.image_px, 3) and ts.rgba.shape[-1] == 4
    assert len(ts.scene) == len(set(ts.scene.tolist())) == n  # every variant is its own scene
    assert ts.group.tolist() == [g for g in range(12) for _ in VARIANTS]
    assert len(ts.group_captions) == 12 and all(len(c) == recipe.spec_captions for c in ts.group_captions)
    for g in range(12):
        rows = ts.group == g
        assert len(set(ts.heldout[rows])) == 1  # whole groups are held out
        assert ts.companion[rows][0] == ts.companion[rows].max()
        # contents: equal exactly for equal label multisets; sparse never equals faithful
        contents = ts.contents[rows]
        assert contents[0] == 0 and contents[VARIANTS.index("sparse")] != 0
        assert contents[VARIANTS.index("jittered")] == 0
    assert ts.heldout.sum() == 10 * len(VARIANTS)
    # a plain set concatenated after it keeps the groups and marks its own rows as group-free
    plain = replace(ts, group=None, companion=None, contents=None, group_captions=None)
    both = concat_datasets([ts, plain])
    assert both.group.tolist() == ts.group.tolist() + [-1] * n
    assert len(both.group_captions) == 12 and np.isnan(both.companion[n:]).all()
    again = concat_datasets([ts, ts])
    assert again.group.max() == 23 and len(again.group_captions) == 24


def test_hard_negative_loss_by_hand():
    torch = pytest.importorskip("torch")
    from harness.evaluators.reference.fit import hard_negative_loss

    text = torch.tensor([[1.0, 0.0]])
    images = [torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]])]
    companion = [np.array([1.0, 0.5, 0.8])]
    neg = [torch.tensor([[0.0, 1.0]])]
    scale = torch.tensor(2.0)
    contrastive, ranking, within_top1 = hard_negative_loss(text, images, neg, companion, scale)
    logits = np.array([2.0, 0.0, 1.2])
    t2i = -logits[0] + np.log(np.exp(logits).sum())
    i2t = -2.0 + np.log(np.exp(2.0) + np.exp(0.0))
    assert float(contrastive) == pytest.approx((t2i + i2t) / 2, rel=1e-5)
    sp = lambda x: np.log1p(np.exp(-x))  # noqa: E731
    expected = np.mean([sp(2.0 - 0.0), sp(2.0 - 1.2), sp(1.2 - 0.0)])
    assert float(ranking) == pytest.approx(expected, rel=1e-5)
    assert float(within_top1) == pytest.approx(t2i, rel=1e-5)  # one group: its own variants only


def test_within_group_top1_sees_only_the_groups_own_variants():
    torch = pytest.importorskip("torch")
    from harness.evaluators.reference.fit import hard_negative_loss

    # two groups; group 0's caption also matches group 1's first image perfectly
    text = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    images = [torch.tensor([[0.8, 0.6], [0.0, 1.0]]), torch.tensor([[1.0, 0.0], [0.0, 1.0]])]
    companion = [np.array([1.0, 0.3]), np.array([0.4, 0.9])]
    empty = [torch.zeros((0, 2)), torch.zeros((0, 2))]
    terms = hard_negative_loss(text, images, empty, companion, torch.tensor(1.0))
    # group 0 (best 0): logits over its own variants (0.8, 0.0); group 1 (best 1): (0.0, 1.0)
    top1_0 = -0.8 + np.log(np.exp(0.8) + np.exp(0.0))
    top1_1 = -1.0 + np.log(np.exp(0.0) + np.exp(1.0))
    assert float(terms.within_top1) == pytest.approx((top1_0 + top1_1) / 2, rel=1e-5)
    # the contrastive caption->image term also sees the other group's images
    t2i_0 = -0.8 + np.log(np.exp([0.8, 0.0, 1.0, 0.0]).sum())
    t2i_1 = -1.0 + np.log(np.exp([0.6, 1.0, 0.0, 1.0]).sum())
    i2t_0 = -0.8 + np.log(np.exp(0.8) + np.exp(0.6))
    i2t_1 = -1.0 + np.log(np.exp(0.0) + np.exp(1.0))
    expected = ((t2i_0 + t2i_1) / 2 + (i2t_0 + i2t_1) / 2) / 2
    assert float(terms.contrastive) == pytest.approx(expected, rel=1e-5)


def test_hard_negative_loss_masks_variants_as_good_as_the_best():
    torch = pytest.importorskip("torch")
    from harness.evaluators.reference.fit import hard_negative_loss

    text = torch.tensor([[1.0, 0.0]])
    images = [torch.tensor([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])]
    empty = [torch.zeros((0, 2))]
    tie = hard_negative_loss(text, images, empty, [np.array([1.0, 1.0, 0.2])], torch.tensor(1.0))
    # the tied second variant is no negative: the caption's softmax is over {best, third}
    t2i = -1.0 + np.log(np.exp(1.0) + np.exp(0.0))
    assert float(tie.contrastive) == pytest.approx((t2i + 0.0) / 2, abs=1e-6)
    assert float(tie.within_top1) == pytest.approx(t2i, abs=1e-6)


def test_shared_augmentation_is_one_draw_for_the_group():
    torch = pytest.importorskip("torch")
    from harness.evaluators.reference.fit import augment_batch

    rgba = torch.zeros(4, 4, 8, 8)
    rgba[:, 3] = 0.0  # fully transparent: the output is the background alone
    out = augment_batch(rgba, torch.Generator().manual_seed(0), shared=True)
    assert torch.allclose(out, out[:1].expand_as(out))
    mixed = augment_batch(rgba, torch.Generator().manual_seed(0))
    assert not torch.allclose(mixed, mixed[:1].expand_as(mixed))


def test_quality_bars_fail_on_a_miss_or_a_missing_value():
    from harness.training.checks import BARS, failed_bars

    ok = {"pair_agreement": 0.75, "faithful_winner_share": 0.52, "heldout_top1": 0.5, "biggest_only": 0.7}
    assert set(BARS) == set(ok) and failed_bars(ok) == []
    assert failed_bars({**ok, "faithful_winner_share": 0.5}) == ["faithful_winner_share 0.5 <= 0.5"]
    assert failed_bars({**ok, "pair_agreement": 0.7499}) == ["pair_agreement 0.7499 < 0.75"]
    assert failed_bars({**ok, "heldout_top1": None}) == ["heldout_top1 None < 0.5"]
    assert failed_bars({**ok, "biggest_only": float("nan")}) == ["biggest_only nan < 0.7"]


def test_group_view_at_c0_when_every_probability_is_one():
    """With every c0 probability 1 a group is shot exactly as the audit's room c0 (pitch 0,
    50 mm, city), only turned by a quarter turn; with 0 it never is."""
    recipe = NegativesRecipe(top_down_p=1.0, c0_focal_p=1.0, c0_lighting_p=1.0, resolutions=(96,))
    rng = random.Random(0)
    views = [group_view(recipe, rng) for _ in range(40)]
    assert {(v.pitch_deg, v.focal_length_mm, v.lighting, v.resolution_px) for v in views} == {(0.0, 50.0, "city", 96)}
    assert {v.yaw_deg for v in views} == {0.0, 90.0, 180.0, 270.0}
    never = NegativesRecipe(top_down_p=0.0, c0_focal_p=0.0, c0_lighting_p=0.0, max_pitch_deg=30.0)
    views = [group_view(never, rng) for _ in range(40)]
    assert all(0.0 < v.pitch_deg <= 30.0 and v.focal_length_mm in NEAR_C0_FOCALS_MM for v in views)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), top=st.floats(0, 1), focal=st.floats(0, 1), light=st.floats(0, 1),
       max_pitch=st.floats(0, 90))
def test_group_view_stays_in_the_recipe_ranges(seed, top, focal, light, max_pitch):
    from harness.vocab.factors import LIGHTING_MAPS

    recipe = NegativesRecipe(top_down_p=top, c0_focal_p=focal, c0_lighting_p=light, max_pitch_deg=max_pitch)
    v = group_view(recipe, random.Random(seed))
    assert 0.0 <= v.pitch_deg <= round(max_pitch, 1) + 1e-9
    assert v.focal_length_mm in (50.0, *NEAR_C0_FOCALS_MM) and v.lighting in LIGHTING_MAPS
    assert v.yaw_deg in (0.0, 90.0, 180.0, 270.0) and v.resolution_px in recipe.resolutions
    assert v.samples == recipe.samples
