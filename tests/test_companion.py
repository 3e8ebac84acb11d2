"""The symbolic companion evaluator against hand-computed values and invariants."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.errors import EvaluatorError
from harness.evaluators.reference import geometry
from harness.evaluators.reference.companion import (
    CompanionSpec,
    ObjectRequirement,
    RelationRequirement,
    companion_breakdown,
    relation_satisfaction,
    spec_from_mapping,
)
from harness.scenes.model import AssetCandidate, Room, Scene, SceneObject


def obj(oid, label, x, y, *, z=0.0, yaw=0.0, size=(1.0, 1.0, 1.0), asset=None, candidates=None):
    return SceneObject(
        id=oid,
        label=label,
        asset=asset or f"assets/{label}/a.glb",
        position=(x, y, z),
        yaw_deg=yaw,
        size=size,
        candidates=candidates,
    )


def scene(*objects):
    return Scene(
        id="s",
        generator="g",
        prompt_id="p",
        prompt="a room",
        prompt_source="test",
        room=Room((8.0, 8.0), 2.5),
        objects=tuple(objects),
    )


SPEC = CompanionSpec(
    "p",
    (ObjectRequirement("bed", 1), ObjectRequirement("nightstand", 2)),
    (RelationRequirement("nightstand", "beside", "bed"),),
)


def test_front_direction_matches_scene_convention():
    # yaw 0 faces -y; yaw 90 (counter-clockwise) faces +x
    f0 = geometry.front_direction(obj("a", "chair", 0, 0))
    f90 = geometry.front_direction(obj("a", "chair", 0, 0, yaw=90))
    assert f0 == pytest.approx((0.0, -1.0))
    assert f90 == pytest.approx((1.0, 0.0), abs=1e-12)


def test_footprint_gap_hand_values():
    a = obj("a", "x", 0, 0)
    assert geometry.footprint_gap(a, obj("b", "x", 3, 0)) == pytest.approx(2.0)
    assert geometry.footprint_gap(a, obj("b", "x", 0.5, 0.5)) == 0.0
    # diagonal: corner (0.5, 0.5) to corner (2.5, 2.5)
    assert geometry.footprint_gap(a, obj("b", "x", 3, 3)) == pytest.approx(2 * math.sqrt(2))
    # rotated 45°: its corner reaches sqrt(0.5) from its centre
    rot = obj("b", "x", 2, 0, yaw=45)
    assert geometry.footprint_gap(a, rot) == pytest.approx(2 - 0.5 - math.sqrt(0.5))


def test_perfect_scene_scores_one():
    s = scene(obj("b", "bed", 0, 0, size=(2, 2, 0.5)), obj("n1", "nightstand", 1.5, 0, size=(0.5, 0.5, 0.5)),
              obj("n2", "nightstand", -1.5, 0, size=(0.5, 0.5, 0.5)))
    br = companion_breakdown(s, SPEC)
    assert (br.count_recall, br.count_precision, br.relations) == (1.0, 1.0, 1.0)
    assert br.asset_fidelity is None
    assert br.score == 1.0


def test_missing_extra_and_far_objects_hand_values():
    # one nightstand missing, one far away (gap 3.75 m), one unrequested lamp
    s = scene(obj("b", "bed", 0, 0, size=(2, 2, 0.5)), obj("n1", "nightstand", 5, 0, size=(0.5, 0.5, 0.5)),
              obj("l", "lamp", -3, -3))
    br = companion_breakdown(s, SPEC)
    assert br.count_recall == pytest.approx(2 / 3)  # bed + 1 of 2 nightstands
    assert br.count_precision == pytest.approx(2 / 3)  # lamp is unrequested
    assert br.relations == 0.0
    assert br.score == pytest.approx((2 / 3 + 2 / 3 + 0) / 3)


def test_surplus_objects_cost_precision_not_recall():
    s = scene(obj("b", "bed", 0, 0), *(obj(f"n{i}", "nightstand", 1.2, 2.0 * i) for i in range(4)))
    br = companion_breakdown(s, SPEC)
    assert br.count_recall == 1.0
    assert br.count_precision == pytest.approx(3 / 5)


def test_empty_scene_is_zero_not_error():
    br = companion_breakdown(scene(), SPEC)
    assert (br.count_recall, br.count_precision, br.relations) == (0.0, 0.0, 0.0)


def test_on_facing_in_front_of_under():
    table = obj("t", "table", 0, 0, size=(1.0, 1.0, 0.75))
    lamp_on = obj("l", "lamp", 0.2, 0.1, z=0.75, size=(0.2, 0.2, 0.4))
    lamp_floor = obj("l", "lamp", 0.2, 0.1, z=0.0, size=(0.2, 0.2, 0.4))
    assert relation_satisfaction(scene(table, lamp_on), RelationRequirement("lamp", "on", "table")) == 1
    assert relation_satisfaction(scene(table, lamp_floor), RelationRequirement("lamp", "on", "table")) == 0
    assert relation_satisfaction(scene(table, lamp_on), RelationRequirement("table", "under", "lamp")) == 1
    # chair north of the table facing south (yaw 0 faces -y) faces it; yaw 180 faces away
    toward = obj("c", "chair", 0, 1.5, yaw=0, size=(0.5, 0.5, 0.9))
    away = obj("c", "chair", 0, 1.5, yaw=180, size=(0.5, 0.5, 0.9))
    req = RelationRequirement("chair", "facing", "table")
    assert relation_satisfaction(scene(table, toward), req) == 1
    assert relation_satisfaction(scene(table, away), req) == 0
    # a tv facing -y: the sofa is in front of it when south of it
    tv = obj("tv", "tv stand", 0, 0, yaw=0, size=(1.5, 0.4, 0.5))
    south = obj("s", "sofa", 0, -2.5, size=(2.0, 0.9, 0.8))
    north = obj("s", "sofa", 0, 2.5, size=(2.0, 0.9, 0.8))
    req = RelationRequirement("sofa", "in front of", "tv stand")
    assert relation_satisfaction(scene(tv, south), req) == 1
    assert relation_satisfaction(scene(tv, north), req) == 0


def test_around_needs_two_sides():
    table = obj("t", "table", 0, 0, size=(1.2, 1.2, 0.75))
    chairs_two_sides = [obj("c1", "chair", 0, 1.0, size=(0.4, 0.4, 0.9)),
                        obj("c2", "chair", 0, -1.0, size=(0.4, 0.4, 0.9))]
    chairs_one_side = [obj("c1", "chair", -0.3, 1.0, size=(0.4, 0.4, 0.9)),
                       obj("c2", "chair", 0.3, 1.0, size=(0.4, 0.4, 0.9))]
    chairs_far = [obj("c1", "chair", 0, 3.0, size=(0.4, 0.4, 0.9)),
                  obj("c2", "chair", 0, -1.0, size=(0.4, 0.4, 0.9))]
    req = RelationRequirement("chair", "around", "table")
    assert relation_satisfaction(scene(table, *chairs_two_sides), req) == 1.0
    assert relation_satisfaction(scene(table, *chairs_one_side), req) == 0.5
    assert relation_satisfaction(scene(table, *chairs_far), req) == 0.5


def test_asset_fidelity_from_retrieval_scores():
    cands = (AssetCandidate("assets/bed/a.glb", 0.9), AssetCandidate("assets/bed/c.glb", 0.3))
    good = obj("b", "bed", 0, 0, asset="assets/bed/a.glb", candidates=cands)
    worst = obj("b", "bed", 0, 0, asset="assets/bed/c.glb", candidates=cands)
    spec = CompanionSpec("p", (ObjectRequirement("bed", 1),))
    assert companion_breakdown(scene(good), spec).asset_fidelity == 1.0
    assert companion_breakdown(scene(worst), spec).asset_fidelity == pytest.approx(1 / 3)
    assert companion_breakdown(scene(worst), spec).score == pytest.approx((1 + 1 + 1 / 3) / 3)


def test_unknown_relation_and_malformed_spec_are_typed_errors():
    s = scene(obj("b", "bed", 0, 0), obj("n", "nightstand", 1, 0))
    with pytest.raises(EvaluatorError, match="unknown relation"):
        relation_satisfaction(s, RelationRequirement("nightstand", "levitating over", "bed"))
    with pytest.raises(EvaluatorError, match="malformed prompt spec"):
        spec_from_mapping({"id": "p", "objects": [{"label": "bed", "count": "many"}]})
    with pytest.raises(EvaluatorError, match="requests no objects"):
        companion_breakdown(s, CompanionSpec("p", ()))


def test_spec_from_mapping():
    assert spec_from_mapping(
        {"id": "p7", "objects": {"bed": 1, "nightstand": 2}, "relations": [["nightstand", "beside", "bed"]]}
    ) == SPEC.__class__("p7", SPEC.objects, SPEC.relations)
    spec = spec_from_mapping(
        {
            "id": "p7",
            "objects": [{"label": "bed"}, {"label": "nightstand", "count": 2}],
            "relations": [{"subject": "nightstand", "relation": "beside", "object": "bed"}],
        }
    )
    assert spec == SPEC.__class__("p7", SPEC.objects, SPEC.relations)


coords = st.floats(-3.0, 3.0, allow_nan=False)


@st.composite
def scenes(draw):
    labels = draw(st.lists(st.sampled_from(["bed", "nightstand", "lamp", "chair"]), max_size=6))
    objs = [
        obj(f"o{i}", lab, draw(coords), draw(coords), yaw=draw(st.floats(0, 359)),
            size=(draw(st.floats(0.2, 2)), draw(st.floats(0.2, 2)), draw(st.floats(0.2, 2))))
        for i, lab in enumerate(labels)
    ]
    return scene(*objs)


@settings(max_examples=60, deadline=None)
@given(scenes())
def test_components_in_unit_interval_and_order_invariant(s):
    br = companion_breakdown(s, SPEC)
    for v in br.to_dict().values():
        assert v is None or 0.0 <= v <= 1.0
    reordered = scene(*reversed(s.objects))
    assert companion_breakdown(reordered, SPEC) == br


@settings(max_examples=60, deadline=None)
@given(scenes(), coords, coords, st.sampled_from([0.0, 90.0, 180.0, 270.0]))
def test_rigid_motion_invariance(s, dx, dy, turn):
    """Moving/rotating the whole layout rigidly keeps every component (counts and relations)."""
    c, sn = math.cos(math.radians(turn)), math.sin(math.radians(turn))
    moved = scene(
        *(
            SceneObject(o.id, o.label, o.asset,
                        (c * o.position[0] - sn * o.position[1] + dx,
                         sn * o.position[0] + c * o.position[1] + dy, o.position[2]),
                        o.yaw_deg + turn, o.size)
            for o in s.objects
        )
    )
    a, b = companion_breakdown(s, SPEC), companion_breakdown(moved, SPEC)
    assert a.count_recall == b.count_recall and a.count_precision == b.count_precision
    assert a.relations == pytest.approx(b.relations)
