"""Generators, the faithful layout, the fidelity metric and plan geometry."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from harness.core.errors import SceneError
from harness.scenes.assets import CATEGORIES, candidates
from harness.scenes.fidelity import fidelity, satisfies
from harness.scenes.footprints import (
    boxes_overlap,
    front_vector,
    inside_room,
    object_inside_room,
    plan_gap,
    plan_overlap,
)
from harness.scenes.generators import GENERATORS, generate
from harness.scenes.layout import faithful_layout, placement_parents
from harness.scenes.model import Room, SceneObject
from harness.scenes.prompts import load_pool, parse_spec, sample


def _spec(objects, relations, room="bedroom", pid="test-01"):
    return parse_spec(
        {
            "id": pid,
            "room_type": room,
            "prompt_source": "written-terse",
            "style": None,
            "text": "a test room",
            "objects": objects,
            "relations": relations,
        }
    )


def _o(oid, label, pos, yaw, size):
    return SceneObject(oid, label, "", pos, yaw, size)


# ------------------------------------------------------------------ geometry


def test_front_vector_convention():
    fx, fy = front_vector(0.0)
    assert (round(fx, 9), round(fy, 9)) == (0.0, -1.0)  # front faces -y at yaw 0
    fx, fy = front_vector(90.0)
    assert (round(fx, 9), round(fy, 9)) == (1.0, 0.0)


def test_plan_overlap_hand_cases():
    unit = (1.0, 1.0, 1.0)
    assert plan_overlap((0, 0), unit, 0, (0.5, 0), unit, 0)
    assert not plan_overlap((0, 0), unit, 0, (1.0, 0), unit, 0)  # touching is not overlapping
    # a unit square turned 45° reaches 0.7071 from its centre along x
    assert plan_overlap((0, 0), unit, 0, (1.2, 0), unit, 45)
    assert not plan_overlap((0, 0), unit, 0, (1.22, 0), unit, 45)
    # corner-to-corner: AABBs overlap but the rotated squares do not
    assert not plan_overlap((0, 0), unit, 45, (1.0, 1.0), unit, 45)


def test_boxes_overlap_respects_height_and_rugs():
    table = _o("t", "desk", (0, 0, 0), 0, (1.4, 0.7, 0.75))
    lamp = _o("l", "lamp", (0.3, 0, 0.75), 0, (0.3, 0.3, 0.5))
    rug = _o("r", "rug", (0, 0, 0), 0, (2.0, 1.4, 0.02))
    chair = _o("c", "chair", (0.3, 0.2, 0), 0, (0.45, 0.5, 0.9))
    assert not boxes_overlap(table, lamp)  # stacked: touching in z only
    assert not boxes_overlap(table, rug)  # rugs lie under furniture
    assert boxes_overlap(table, chair)


def test_inside_room_and_gap():
    room = Room((4.0, 3.0), 2.5)
    assert inside_room((1.5, 0, 0), (1.0, 1.0, 1.0), 0, room)
    assert not inside_room((1.6, 0, 0), (1.0, 1.0, 1.0), 0, room)
    assert not inside_room((1.5, 0, 0), (1.0, 1.0, 1.0), 45, room)  # corners stick out
    assert not inside_room((0, 0, 0), (1.0, 1.0, 2.6), 0, room)  # through the ceiling
    a = _o("a", "x", (0, 0, 0), 0, (1.0, 1.0, 1.0))
    b = _o("b", "x", (1.8, 0, 0), 0, (1.0, 1.0, 1.0))
    assert math.isclose(plan_gap(a, b), 0.8)


# ------------------------------------------------------------------ fidelity relations


def test_relation_checks_hand_cases():
    stand = _o("n", "nightstand", (1.0, 1.0, 0.0), 0, (0.5, 0.45, 0.55))
    lamp_on = _o("l", "lamp", (1.0, 1.0, 0.55), 0, (0.3, 0.3, 0.5))
    lamp_off = _o("l2", "lamp", (2.0, 1.0, 0.0), 0, (0.3, 0.3, 0.5))
    assert satisfies(lamp_on, "on", stand)
    assert not satisfies(lamp_off, "on", stand)
    desk = _o("d", "desk", (0, 0, 0), 0, (1.4, 0.7, 0.75))
    chair_front = _o("c", "chair", (0, -0.65, 0), 180, (0.45, 0.5, 0.9))  # faces +y: the desk
    chair_back = _o("c2", "chair", (0, 0.65, 0), 0, (0.45, 0.5, 0.9))
    assert satisfies(chair_front, "in_front_of", desk)
    assert not satisfies(chair_back, "in_front_of", desk)
    assert satisfies(chair_front, "facing", desk)
    assert not satisfies(_o("c3", "chair", (0, -0.65, 0), 0, (0.45, 0.5, 0.9)), "facing", desk)
    beside = _o("b", "cabinet", (0.95, 0.0, 0), 0, (0.4, 0.5, 1.1))
    assert satisfies(beside, "beside", desk)
    assert not satisfies(_o("b2", "cabinet", (2.5, 0.0, 0), 0, (0.4, 0.5, 1.1)), "beside", desk)


# ------------------------------------------------------------------ faithful layout


@pytest.fixture(scope="module")
def sampled():
    return sample(load_pool())


def test_faithful_satisfies_every_sampled_spec(sampled):
    for spec in sampled:
        scene = generate(spec, "faithful")
        f = fidelity(scene, spec)
        assert (f.recall, f.precision, f.relations) == (1.0, 1.0, 1.0), spec.id
        objs = scene.objects
        assert all(object_inside_room(o, scene.room) for o in objs), spec.id
        assert not any(boxes_overlap(a, b) for i, a in enumerate(objs) for b in objs[i + 1 :]), spec.id
        assert Counter(o.label for o in objs) == Counter(dict(spec.objects))


def test_placement_pairs_one_to_one_and_chains_same_label():
    spec = _spec(
        {"bed": 1, "nightstand": 2, "lamp": 2, "sink": 3},
        [["nightstand", "beside", "bed"], ["lamp", "on", "nightstand"], ["sink", "beside", "sink"]],
    )
    parents = placement_parents(spec)
    assert parents["lamp-1"] == ("on", "nightstand-1")
    assert parents["lamp-2"] == ("on", "nightstand-2")
    assert parents["nightstand-2"] == ("beside", "bed-1")
    assert parents["sink-2"] == ("beside", "sink-1")
    assert parents["sink-3"] == ("beside", "sink-2")
    assert "sink-1" not in parents and "bed-1" not in parents


def test_room_grows_when_the_base_room_is_too_small():
    spec = _spec({"counter": 3, "stool": 6}, [["stool", "in_front_of", "counter"]], room="bathroom")
    layout = faithful_layout(spec)
    assert layout.room.size[0] > 3.0 and layout.room.size[1] > 2.5


# ------------------------------------------------------------------ the other generators


def test_generation_is_deterministic_and_seeded(sampled):
    spec = sampled[0]
    for gen in GENERATORS:
        assert generate(spec, gen, 3).to_dict() == generate(spec, gen, 3).to_dict()
    assert generate(spec, "jittered", 1).to_dict() != generate(spec, "jittered", 2).to_dict()
    assert generate(spec, "faithful", 1).objects == generate(spec, "faithful", 2).objects


def test_generator_specific_degradations(sampled):
    for spec in sampled[:12]:
        layout = faithful_layout(spec)
        n = spec.n_objects
        out = {g: generate(spec, g, layout=layout) for g in GENERATORS}
        assert len({s.room for s in out.values()}) == 1  # one room per prompt
        assert len(out["sparse"].objects) == n - min(n - 1, max(1, round(0.35 * n)))
        extra = [o for o in out["cluttered"].objects if spec.count(o.label) == 0]
        assert extra and len(out["cluttered"].objects) == n + len(extra)
        assert all(o.yaw_deg == 0.0 and o.position[2] == 0.0 for o in out["gridded"].objects)
        assert fidelity(out["confused"], spec).recall < 1.0
        for scene in out.values():
            assert all(object_inside_room(o, scene.room) for o in scene.objects), (spec.id, scene.generator)
            for o in scene.objects:
                assert o.candidates == candidates(o.label)
                assert o.asset in {c.asset for c in o.candidates[:2]}
            assert len({o.id for o in scene.objects}) == len(scene.objects)


def test_confused_swaps_to_similar_size_within_the_original_box(sampled):
    spec = sampled[5]
    faithful = {(o.position, o.yaw_deg): o for o in generate(spec, "faithful").objects}
    confused = generate(spec, "confused")
    swapped = [o for o in confused.objects if spec.count(o.label) == 0]
    assert swapped
    for o in swapped:
        original = faithful[(o.position, o.yaw_deg)]  # same pose as the object it replaced
        assert o.label in CATEGORIES and o.label != original.label
        assert all(a <= b + 1e-4 for a, b in zip(o.size, original.size, strict=True))


def test_planted_ordering_of_mean_fidelity(sampled):
    means = []
    for gen in GENERATORS:
        scores = [fidelity(generate(spec, gen), spec).score for spec in sampled[::5]]
        means.append(sum(scores) / len(scores))
    assert means == sorted(means, reverse=True), dict(zip(GENERATORS, means, strict=True))
    assert means[0] == 1.0


def test_unknown_generator_is_a_scene_error(sampled):
    with pytest.raises(SceneError, match="unknown generator"):
        generate(sampled[0], "perfect")
