"""Symbolic companion evaluator: a structured scene scored against its prompt spec, no rendering.

The study's probes can say a score moved but not whether the scene really got worse; this check
is the ground truth it lacks (the card's "companion check" field). It reads only the frozen
scene numbers (labels, positions, yaws, boxes, retrieval candidates), so every render or caption
protocol gives the same value: it is protocol-invariant by construction.

Components (each in [0, 1], higher = better):

- ``count_recall``: ``sum_l min(n_l, r_l) / sum_l r_l`` with ``r_l`` the requested count of
  label ``l`` and ``n_l`` the number of scene objects with that label.
- ``count_precision``: ``sum_l min(n_l, r_l) / sum_l n_l`` over every scene label (unrequested
  objects count against it); 0 for an empty scene.
- ``relations``: mean over the spec's relations of the relation's satisfaction (see
  :data:`RELATIONS`); ``None`` when the spec has no relations.
- ``asset_fidelity``: mean over objects that carry retrieval candidates of
  ``retrieval_score(used asset) / max(candidate retrieval scores)``; ``None`` when no object
  carries candidates. It is what lets a symbolic check see the worst-objects probe.

``score`` is the mean of the components that are not ``None``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from harness.core.errors import EvaluatorError
from harness.evaluators.reference import geometry
from harness.scenes.model import Scene, SceneObject

if TYPE_CHECKING:
    from harness.evaluators.base import EvaluatorSpec

# Thresholds of the relation predicates, in metres / degrees. Chosen for furniture-scale rooms.
NEAR_M = 0.6  # footprint gap for "beside"/"next to"/"around"/"near"
ON_Z_TOL_M = 0.08  # tolerance between a supporter's top and the supported object's bottom
FACING_TOL_DEG = 45.0  # "facing": front within this angle of the bearing to the target, or
FACING_MARGIN_M = 0.3  # the front ray hits the target's footprint grown by this margin
FRONT_MAX_M = 2.5  # "in front of": centre beyond the target's front face, within this gap
FRONT_SIDE_M = 0.5  # and at most this far past the target's sides
# Distance thresholds are compared with this slack so a rigid move of the whole layout
# (float rounding of ~1e-16 m) cannot flip a gap that sits exactly on a threshold.
GAP_EPS_M = 1e-9


@dataclass(frozen=True)
class ObjectRequirement:
    """``count`` objects labelled ``label`` are requested."""

    label: str
    count: int


@dataclass(frozen=True)
class RelationRequirement:
    """``subject`` (a label) stands in ``relation`` to ``object`` (a label)."""

    subject: str
    relation: str
    object: str


@dataclass(frozen=True)
class CompanionSpec:
    """What a prompt asks for, reduced to what the symbolic check reads."""

    prompt_id: str
    objects: tuple[ObjectRequirement, ...]
    relations: tuple[RelationRequirement, ...] = ()

    def requested_counts(self) -> dict[str, int]:
        """label -> requested count (repeated labels are summed)."""
        out: Counter[str] = Counter()
        for req in self.objects:
            out[req.label] += req.count
        return dict(out)


@dataclass(frozen=True)
class CompanionScore:
    """The components and their mean; see the module docstring for definitions."""

    count_recall: float
    count_precision: float
    relations: float | None
    asset_fidelity: float | None

    @property
    def score(self) -> float:
        parts = [self.count_recall, self.count_precision]
        parts += [v for v in (self.relations, self.asset_fidelity) if v is not None]
        return sum(parts) / len(parts)

    def to_dict(self) -> dict[str, float | None]:
        return {
            "count_recall": self.count_recall,
            "count_precision": self.count_precision,
            "relations": self.relations,
            "asset_fidelity": self.asset_fidelity,
            "score": self.score,
        }


# ---------------------------------------------------------------------------------------------
# Relation predicates: (subject instance, object instances) -> satisfied?


def _beside(a: SceneObject, others: Sequence[SceneObject]) -> bool:
    return any(geometry.footprint_gap(a, b) <= NEAR_M + GAP_EPS_M and not _on(a, [b]) for b in others)


def _on(a: SceneObject, others: Sequence[SceneObject]) -> bool:
    for b in others:
        top = b.position[2] + b.size[2]
        if abs(a.position[2] - top) <= ON_Z_TOL_M and geometry.inside_footprint(
            (a.position[0], a.position[1]), b
        ):
            return True
    return False


def _angle_between(u: geometry.Point, v: geometry.Point) -> float:
    nu, nv = math.hypot(*u), math.hypot(*v)
    if nu == 0 or nv == 0:
        return 0.0
    cos = max(-1.0, min(1.0, (u[0] * v[0] + u[1] * v[1]) / (nu * nv)))
    return math.degrees(math.acos(cos))


def _local(point: geometry.Point, obj: SceneObject) -> geometry.Point:
    """``point`` in ``obj``'s frame: x along its width, -y is its front."""
    x, y = point[0] - obj.position[0], point[1] - obj.position[1]
    c, s = math.cos(math.radians(obj.yaw_deg)), math.sin(math.radians(obj.yaw_deg))
    return (c * x + s * y, -s * x + c * y)


def _ray_hits_box(origin: geometry.Point, direction: geometry.Point, obj: SceneObject,
                  margin: float) -> bool:
    """Whether the ray hits ``obj``'s footprint grown by ``margin`` (slab test, local frame)."""
    ox, oy = _local(origin, obj)
    c, s = math.cos(math.radians(obj.yaw_deg)), math.sin(math.radians(obj.yaw_deg))
    dx, dy = c * direction[0] + s * direction[1], -s * direction[0] + c * direction[1]
    t0, t1 = 0.0, math.inf
    for o, d, half in ((ox, dx, obj.size[0] / 2 + margin), (oy, dy, obj.size[1] / 2 + margin)):
        if abs(d) < 1e-12:
            if abs(o) > half:
                return False
            continue
        lo, hi = sorted(((-half - o) / d, (half - o) / d))
        t0, t1 = max(t0, lo), min(t1, hi)
    return t0 <= t1


def _facing(a: SceneObject, others: Sequence[SceneObject]) -> bool:
    front = geometry.front_direction(a)
    for b in others:
        to_b = (b.position[0] - a.position[0], b.position[1] - a.position[1])
        if _angle_between(front, to_b) <= FACING_TOL_DEG or _ray_hits_box(
            (a.position[0], a.position[1]), front, b, FACING_MARGIN_M
        ):
            return True
    return False


def _in_front_of(a: SceneObject, others: Sequence[SceneObject]) -> bool:
    for b in others:
        lx, ly = _local((a.position[0], a.position[1]), b)
        if (
            ly < -b.size[1] / 2
            and abs(lx) <= b.size[0] / 2 + FRONT_SIDE_M + GAP_EPS_M
            and geometry.footprint_gap(a, b) <= FRONT_MAX_M + GAP_EPS_M
        ):
            return True
    return False


def _under(a: SceneObject, others: Sequence[SceneObject]) -> bool:
    return any(_on(b, [a]) or (
        geometry.inside_footprint((a.position[0], a.position[1]), b)
        and a.position[2] + a.size[2] <= b.position[2] + b.size[2] + ON_Z_TOL_M
        and a.position[2] <= b.position[2] + ON_Z_TOL_M
        and a.volume < b.volume
    ) for b in others)


Predicate = Callable[[SceneObject, Sequence[SceneObject]], bool]

#: Relation name -> per-instance predicate. "around" is a group relation handled separately.
RELATIONS: dict[str, Predicate] = {
    "beside": _beside,
    "next_to": _beside,
    "near": _beside,
    "on": _on,
    "on_top_of": _on,
    "facing": _facing,
    "in_front_of": _in_front_of,
    "under": _under,
}
GROUP_RELATIONS = ("around",)


def _normalise_relation(name: str) -> str:
    return name.strip().lower().replace(" ", "_").replace("-", "_")


def _layout_box(obj: SceneObject) -> SceneObject:
    """The object as its floor-layout box (oriented bounding box of a tilted object, schema 2)."""
    if obj.tilt is None:
        return obj
    position, size = obj.layout()
    return replace(obj, position=position, size=size, tilt=None)


def relation_satisfaction(scene: Scene, req: RelationRequirement) -> float:
    """Fraction in [0, 1] to which ``req`` holds in ``scene``.

    Per-instance relations: the fraction of subject instances for which the predicate holds
    against at least one object instance (0 when either label is absent). ``around``: the
    fraction of subject instances within :data:`NEAR_M` of an object instance, halved when
    two or more such instances all sit on the same side (same 90° sector of bearing).
    """
    name = _normalise_relation(req.relation)
    boxes = [_layout_box(o) for o in scene.objects]
    subjects = [o for o in boxes if o.label == req.subject]
    targets = [o for o in boxes if o.label == req.object]
    if not subjects or not targets:
        return 0.0
    if name in GROUP_RELATIONS:
        near = [
            (a, b)
            for a in subjects
            for b in [min(targets, key=lambda t, a=a: geometry.footprint_gap(a, t))]
            if geometry.footprint_gap(a, b) <= NEAR_M + GAP_EPS_M
        ]
        frac = len(near) / len(subjects)
        sectors = {int(((geometry.bearing_deg(b, a) + 45.0) % 360.0) // 90.0) for a, b in near}
        if len(near) >= 2 and len(sectors) < 2:
            frac *= 0.5
        return frac
    if name not in RELATIONS:
        raise EvaluatorError(
            f"unknown relation {req.relation!r} in a prompt spec",
            where="companion",
            hint=f"use one of {', '.join(sorted((*RELATIONS, *GROUP_RELATIONS)))}",
        )
    pred = RELATIONS[name]
    return sum(1 for a in subjects if pred(a, [t for t in targets if t is not a])) / len(subjects)


def _asset_fidelity(scene: Scene) -> float | None:
    values = []
    for obj in scene.objects:
        if not obj.candidates:
            continue
        best = max(c.retrieval_score for c in obj.candidates)
        used = [c.retrieval_score for c in obj.candidates if c.asset == obj.asset]
        if best <= 0 or not used:
            continue
        values.append(max(0.0, min(1.0, used[0] / best)))
    return sum(values) / len(values) if values else None


def companion_breakdown(scene: Scene, spec: CompanionSpec) -> CompanionScore:
    """All components of the companion check for one scene against its prompt spec."""
    requested = spec.requested_counts()
    if not requested or sum(requested.values()) <= 0:
        raise EvaluatorError(
            f"prompt spec {spec.prompt_id!r} requests no objects",
            where="companion",
            hint="a spec needs at least one object with count >= 1",
        )
    found = Counter(o.label for o in scene.objects)
    matched = sum(min(found.get(label, 0), r) for label, r in requested.items())
    recall = matched / sum(requested.values())
    precision = matched / sum(found.values()) if found else 0.0
    rel = (
        sum(relation_satisfaction(scene, r) for r in spec.relations) / len(spec.relations)
        if spec.relations
        else None
    )
    return CompanionScore(recall, precision, rel, _asset_fidelity(scene))


# ---------------------------------------------------------------------------------------------
# Prompt specs from the scene-set side


def spec_from_mapping(data: Mapping[str, object], *, where: str = "prompt spec") -> CompanionSpec:
    """Build a :class:`CompanionSpec` from a JSON-like prompt spec.

    The scene set's format (``harness.scenes.prompts.PromptSpec.to_dict()``, the entries of
    ``fixtures/prompts/prompts.json``): ``{"id": str, "objects": {label: count, ...},
    "relations": [[subject, relation, anchor], ...]}``. Also accepted: ``objects`` as a list of
    ``{"label", "count"}`` and relations as ``{"subject", "relation", "object"}`` mappings.
    """
    try:
        prompt_id = str(data.get("prompt_id", data.get("id", "")))
        raw_objects = data["objects"]
        if isinstance(raw_objects, Mapping):
            objects = tuple(ObjectRequirement(str(k), int(v)) for k, v in raw_objects.items())
        else:
            objects = tuple(
                ObjectRequirement(str(o["label"]), int(o.get("count", 1))) for o in raw_objects
            )
        relations = []
        for r in data.get("relations", ()):
            if isinstance(r, Mapping):
                relations.append(
                    RelationRequirement(str(r["subject"]), str(r["relation"]), str(r["object"]))
                )
            else:
                subject, relation, anchor = r
                relations.append(RelationRequirement(str(subject), str(relation), str(anchor)))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise EvaluatorError(f"malformed prompt spec: {exc!r}", where=where) from exc
    if any(o.count < 0 for o in objects):
        raise EvaluatorError("a requested object count is negative", where=where)
    return CompanionSpec(prompt_id, objects, tuple(relations))


def as_companion_spec(spec: EvaluatorSpec) -> CompanionSpec:
    """Coerce a prompt spec into a :class:`CompanionSpec`: a :class:`CompanionSpec`, a mapping
    (see :func:`spec_from_mapping`) or an object with ``to_dict()`` such as the scene set's
    ``harness.scenes.prompts.PromptSpec``."""
    if isinstance(spec, CompanionSpec):
        return spec
    if isinstance(spec, Mapping):
        return spec_from_mapping(spec)
    if hasattr(spec, "to_dict"):
        return spec_from_mapping(spec.to_dict())
    raise EvaluatorError(
        f"cannot read a prompt spec of type {type(spec).__name__}",
        where="companion",
        hint="pass a CompanionSpec, a mapping or an object with to_dict()",
    )


# ---------------------------------------------------------------------------------------------
# The evaluator object


class CompanionEvaluator:
    """The companion check as an evaluator over :class:`~.items.ScoreItem` s.

    ``needs_scene = True`` and ``needs_render = False``: the plugin passes scenes and prompt
    specs through ``score_items`` and renders nothing for it; images, captions and the context
    are ignored (protocol-invariant by construction). ``needs_text = False``: its records carry
    an empty caption, so the statistics treat it like a prompt-free control and keep it out of
    the alignment counts; it fills the card's "companion check" field instead.
    An item without a scene or with an unreadable spec is a ``failed`` result with the reason.
    """

    needs_scene = True
    needs_render = False
    needs_text = False

    def __init__(self, spec=None, *, id: str = "companion"):
        self.spec = spec
        self.id = spec.id if spec is not None else id

    def score_items(self, items):
        from harness.evaluators.base import ScoreResult

        out = []
        for item in items:
            if item.scene is None:
                out.append(ScoreResult.failed("companion needs the structured scene"))
                continue
            try:
                out.append(ScoreResult.ok(companion_breakdown(item.scene, as_companion_spec(item.spec)).score))
            except EvaluatorError as exc:
                out.append(ScoreResult.failed(str(exc)))
        return out

    def score(self, images, captions):
        raise EvaluatorError(
            f"evaluator {self.id!r} scores scenes, not images",
            hint="call score_items() with ScoreItem(scene, spec, caption, context)",
        )

    def close(self) -> None:
        return None


def build(spec, *, device: str = "auto", batch_size: int = 32) -> CompanionEvaluator:
    """Adapter constructor (``EvaluatorSpec.build``); device and batch size are irrelevant."""
    return CompanionEvaluator(spec)
