"""Spec fidelity: how well a scene meets its prompt spec (the generators' planted quality).

``fidelity = (recall + precision + relations) / 3`` where, with ``m(l) = min(requested count,
scene count)`` of label ``l``:

* recall = Σ m(l) / requested instances;
* precision = Σ m(l) / scene objects;
* relations = mean over spec relations of the fraction of the requested subject instances
  that are satisfied: a scene object with the subject label that stands in the relation to
  some object with the anchor label (at most the requested count is credited).

Geometric tests (metres, degrees; front faces local -y, see :mod:`harness.scenes.footprints`):

=============  ==========================================================================
relation       subject S satisfies it with anchor A when
=============  ==========================================================================
on             S's bottom is within 3 cm of A's top and S's centre is over A's footprint
under          S is flat (a rug) and A's centre lies over S's footprint
beside         plan gap ≤ 0.3 m, both on the floor, S's centre level with A (|local y| ≤
               A's depth / 2 + 0.1 in A's frame)
in_front_of    S's centre in front of A (local y < -depth/2, |local x| ≤ width/2 + 0.2),
               plan gap ≤ 0.6 m
around         plan gap ≤ 0.5 m and S's front points at A (≤ 45° to A's nearest point)
facing         S's front points at A (≤ 45° to A's nearest point), centres ≤ 8 m apart
=============  ==========================================================================
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from harness.scenes.footprints import (
    FLAT_HEIGHT,
    front_vector,
    plan_gap,
    point_in_footprint,
    to_local,
)
from harness.scenes.model import Scene, SceneObject
from harness.scenes.prompts import PromptSpec


@dataclass(frozen=True)
class Fidelity:
    """Fractions in [0, 1]; ``score`` is their mean."""

    recall: float
    precision: float
    relations: float

    @property
    def score(self) -> float:
        return (self.recall + self.precision + self.relations) / 3.0


def _nearest_point(p: tuple[float, float], obj: SceneObject) -> tuple[float, float]:
    lx, ly = to_local(p, obj)
    cx = max(-obj.size[0] / 2, min(obj.size[0] / 2, lx))
    cy = max(-obj.size[1] / 2, min(obj.size[1] / 2, ly))
    t = math.radians(obj.yaw_deg)
    return (
        obj.position[0] + cx * math.cos(t) - cy * math.sin(t),
        obj.position[1] + cx * math.sin(t) + cy * math.cos(t),
    )


def _points_at(s: SceneObject, a: SceneObject, max_deg: float) -> bool:
    sx, sy = s.position[0], s.position[1]
    tx, ty = _nearest_point((sx, sy), a)
    vx, vy = tx - sx, ty - sy
    norm = math.hypot(vx, vy)
    if norm < 1e-9:
        return True
    fx, fy = front_vector(s.yaw_deg)
    cos = max(-1.0, min(1.0, (fx * vx + fy * vy) / norm))
    return math.degrees(math.acos(cos)) <= max_deg


def satisfies(s: SceneObject, kind: str, a: SceneObject) -> bool:
    """Whether subject ``s`` stands in relation ``kind`` to anchor ``a`` (table above)."""
    if s is a:
        return False
    centre = (s.position[0], s.position[1])
    if kind == "on":
        top = a.position[2] + a.size[2]
        return abs(s.position[2] - top) <= 0.03 and point_in_footprint(centre, a)
    if kind == "under":
        return s.size[2] <= FLAT_HEIGHT and point_in_footprint((a.position[0], a.position[1]), s)
    on_floor = s.position[2] <= 0.03 and a.position[2] <= 0.03
    if kind == "beside":
        lx, ly = to_local(centre, a)
        return on_floor and plan_gap(s, a) <= 0.3 and abs(ly) <= a.size[1] / 2 + 0.1
    if kind == "in_front_of":
        lx, ly = to_local(centre, a)
        return ly < -a.size[1] / 2 and abs(lx) <= a.size[0] / 2 + 0.2 and plan_gap(s, a) <= 0.6
    if kind == "around":
        return plan_gap(s, a) <= 0.5 and _points_at(s, a, 45.0)
    if kind == "facing":
        dist = math.hypot(a.position[0] - s.position[0], a.position[1] - s.position[1])
        return dist <= 8.0 and _points_at(s, a, 45.0)
    raise ValueError(f"unknown relation {kind!r}")


def relation_fraction(scene: Scene, spec: PromptSpec, subject: str, kind: str, anchor: str) -> float:
    """Fraction of the requested ``subject`` instances that satisfy the relation in ``scene``."""
    wanted = spec.count(subject)
    subjects = [o for o in scene.objects if o.label == subject]
    anchors = [o for o in scene.objects if o.label == anchor]
    ok = sum(1 for s in subjects if any(satisfies(s, kind, a) for a in anchors))
    return min(ok, wanted) / wanted


def fidelity(scene: Scene, spec: PromptSpec) -> Fidelity:
    """Recall, precision and relation satisfaction of ``scene`` against ``spec``."""
    scene_counts: dict[str, int] = {}
    for o in scene.objects:
        scene_counts[o.label] = scene_counts.get(o.label, 0) + 1
    matched = sum(min(count, scene_counts.get(label, 0)) for label, count in spec.objects)
    recall = matched / spec.n_objects
    precision = matched / len(scene.objects) if scene.objects else 0.0
    fractions = [relation_fraction(scene, spec, r.subject, r.kind, r.anchor) for r in spec.relations]
    relations = sum(fractions) / len(fractions) if fractions else 1.0
    return Fidelity(recall, precision, relations)

