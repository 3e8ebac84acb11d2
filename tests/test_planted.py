"""Planted-fragility evaluators: each effect is a known function of the configuration."""

from __future__ import annotations

import math
import random
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.captions import BEST_PAPER_TEMPLATE_ID, DEFAULT_TEMPLATE_ID
from harness.evaluators.base import ScoreResult
from harness.evaluators.reference.companion import (
    CompanionEvaluator,
    CompanionSpec,
    ObjectRequirement,
    RelationRequirement,
)
from harness.evaluators.reference.items import ScoreContext, ScoreItem
from harness.evaluators.reference.planted import (
    PLANTED_IDS,
    canonical_layout,
    make_planted,
)
from harness.protocol.profiles import get_profile
from harness.scenes.model import Room, Scene, SceneObject
from harness.stats.rank import rank_stability
from harness.stats.rho import rho
from tests._thresholds import default_thresholds

GENERATORS = ("faithful", "jittered", "gridded", "sparse", "cluttered", "confused")
SPEC = CompanionSpec(
    "p",
    (ObjectRequirement("table", 1), ObjectRequirement("chair", 2), ObjectRequirement("lamp", 1)),
    (RelationRequirement("chair", "beside", "table"), RelationRequirement("lamp", "on", "table")),
)


def _obj(oid, label, x, y, z=0.0, size=(0.5, 0.5, 0.9), yaw=0.0):
    return SceneObject(oid, label, f"assets/{label}.obj", (x, y, z), yaw, size)


def _scene(generator: str, quality: int) -> Scene:
    """A synthetic scene; lower ``quality`` drops objects or breaks relations."""
    objs = [_obj("t", "table", 0, 0, size=(1.0, 1.0, 0.75))]
    objs.append(_obj("c1", "chair", 0, 0.9))
    if quality > 1:
        objs.append(_obj("c2", "chair", 0, -0.9 if quality > 2 else -3.0))
    if quality > 3:  # on the table only at the top quality
        objs.append(_obj("l", "lamp", 0.1, 0.1 if quality > 4 else 2.0,
                         z=0.75 if quality > 4 else 0.0, size=(0.2, 0.2, 0.4)))
    return Scene(f"{generator}-p", generator, "p", "a table", "test", Room((8, 8), 2.5), tuple(objs))


# c0 companion scores are strictly ordered by quality, so the c0 winner is "faithful"
QUALITY = dict(zip(GENERATORS, (5, 4, 3, 2, 1, 1), strict=True))
SCENES = {g: _scene(g, QUALITY[g]) for g in GENERATORS}
PROFILE = get_profile("smoke")
CONFIGS = PROFILE.configurations()


def _items(generator: str, configs) -> list[ScoreItem]:
    return [ScoreItem(SCENES[generator], SPEC, "", ScoreContext(generator, c)) for c in configs]


def _scores(name: str, configs) -> np.ndarray:
    """(G, 1, L) scores of planted evaluator ``name`` over ``configs``."""
    ev = make_planted(name, CompanionEvaluator())
    rows = []
    for g in GENERATORS:
        res = ev.score_items(_items(g, configs))
        assert all(r.status == "ok" for r in res)
        rows.append([r.score for r in res])
    return np.array(rows)[:, None, :]


def _factor(name: str) -> list:
    return [c for c in CONFIGS if c.factor == name]


BASELINE = _scores("planted-robust", [CONFIGS[0]])[:, :, 0]


def test_every_planted_baseline_equals_the_companion():
    for name in (*PLANTED_IDS[:3], "planted-robust"):
        assert np.array_equal(_scores(name, [CONFIGS[0]])[:, :, 0], BASELINE)


def test_pitch_shift_hand_values():
    ev = make_planted("planted-pitch", CompanionEvaluator())
    base = {g: CompanionEvaluator().score_items(_items(g, [CONFIGS[0]]))[0].score for g in GENERATORS}
    by_level = {c.level: c for c in _factor("pitch")}
    for g, sign in (("gridded", 1), ("faithful", -1)):
        res = ev.score_items(_items(g, [by_level["0"], by_level["45"], by_level["90"]]))
        assert [r.score for r in res] == pytest.approx(
            [base[g], base[g] + sign * 0.25, base[g] + sign * 0.5]
        )
    unknown = ScoreItem(SCENES["faithful"], SPEC, "", ScoreContext("mystery", by_level["90"]))
    assert ev.score_items([unknown])[0].score == pytest.approx(base["faithful"])


def test_template_and_lighting_hand_values():
    base = BASELINE[0, 0]
    tpl = make_planted("planted-template", CompanionEvaluator())
    pick = [c for c in _factor("template") if c.level in (DEFAULT_TEMPLATE_ID, BEST_PAPER_TEMPLATE_ID)]
    got = {c.level: r.score for c, r in zip(pick, tpl.score_items(_items("faithful", pick)), strict=True)}
    assert got == pytest.approx({DEFAULT_TEMPLATE_ID: base, BEST_PAPER_TEMPLATE_ID: base + 0.3})
    light = make_planted("planted-lighting", CompanionEvaluator())
    cfgs = _factor("lighting")
    got = {c.level: r.score for c, r in zip(cfgs, light.score_items(_items("faithful", cfgs)), strict=True)}
    assert got == pytest.approx({"city": base, "night": base - 0.3, "studio": base + 0.3})


@pytest.mark.parametrize(
    "name, planted_factor",
    [("planted-pitch", "pitch"), ("planted-template", "template"), ("planted-lighting", "lighting"),
     ("planted-robust", None), ("planted-bow", None)],
)
def test_rho_flags_only_the_planted_factor(name, planted_factor):
    for factor in PROFILE.levels:
        r = rho(_scores(name, _factor(factor)), BASELINE)
        if factor == planted_factor:
            assert r > default_thresholds()["peak_rho_max"], (factor, r)
        else:
            assert r == 0.0, (factor, r)


def test_pitch_plants_a_winner_reversal_and_nothing_else_does():
    for name in PLANTED_IDS:
        for factor in PROFILE.levels:
            means = _scores(name, _factor(factor))[:, 0, :]
            stab = rank_stability(means)
            if name == "planted-pitch" and factor == "pitch":
                assert stab.winners[0] == GENERATORS.index("faithful")
                assert stab.winners[-1] == GENERATORS.index("gridded")
                assert stab.winner_changes > 0
            else:
                assert stab.winner_changes == 0, (name, factor)


def test_missing_context_and_base_failure_are_failures_not_numbers():
    ev = make_planted("planted-pitch", CompanionEvaluator())
    res = ev.score_items([ScoreItem(SCENES["faithful"], SPEC, "", None), ScoreItem(None, SPEC, "", None)])
    assert [r.status for r in res] == ["failed", "failed"]
    assert all(math.isnan(r.score) for r in res)
    assert "context" in res[0].error and "scene" in res[1].error
    # the robust one needs no context
    ok = make_planted("planted-robust", CompanionEvaluator()).score_items(
        [ScoreItem(SCENES["faithful"], SPEC, "", None)]
    )
    assert ok == [ScoreResult.ok(BASELINE[0, 0])]


def _scramble(scene: Scene, seed: int) -> Scene:
    rng = random.Random(seed)
    objs = tuple(
        replace(o, position=(rng.uniform(-3, 3), rng.uniform(-3, 3), 0.0), yaw_deg=rng.uniform(0, 360))
        for o in rng.sample(scene.objects, len(scene.objects))
    )
    return scene.with_objects(objs, id_suffix="scrambled")


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(GENERATORS), st.integers(0, 10_000))
def test_bag_of_words_ignores_layout(generator, seed):
    intact, scrambled = SCENES[generator], _scramble(SCENES[generator], seed)
    assert canonical_layout(intact).objects == canonical_layout(scrambled).objects
    ev = make_planted("planted-bow", CompanionEvaluator())
    a, b = ev.score_items([ScoreItem(intact, SPEC, ""), ScoreItem(scrambled, SPEC, "")])
    assert a.score == b.score  # an exact tie: 0.5 credit, so scramble discrimination is 50 %
    # the robust (layout-aware) companion drops for this scramble of the faithful scene
    if generator == "faithful":
        r = CompanionEvaluator().score_items([ScoreItem(intact, SPEC, ""), ScoreItem(scrambled, SPEC, "")])
        assert r[1].score <= r[0].score


def test_bag_of_words_still_sees_missing_objects():
    ev = make_planted("planted-bow", CompanionEvaluator())
    full = SCENES["faithful"]
    half = full.with_objects(full.objects[:2], id_suffix="keep_half")
    a, b = ev.score_items([ScoreItem(full, SPEC, ""), ScoreItem(half, SPEC, "")])
    assert b.score < a.score
