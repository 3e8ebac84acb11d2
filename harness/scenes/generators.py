"""Six synthetic scene generators with a planted, documented quality ordering.

Every generator starts from the faithful layout of the prompt (:mod:`harness.scenes.layout`),
so all six share the prompt's room, and then degrades it in one controlled way. Quality is
measured by :func:`harness.scenes.fidelity.fidelity` (mean of object recall, object precision
and relation satisfaction against the prompt spec); the planted ordering, best first, is

=========  ===========================================================  ====================
generator  what it does                                                  expected fidelity
=========  ===========================================================  ====================
faithful   every requested object, relations satisfied, no overlaps,    1.00
           best-scoring asset variant
jittered   faithful + pose noise (σ 0.25 m position, σ 20° yaw; items    ≈ 0.85–0.95
           on furniture follow their support)
cluttered  faithful + unrelated extra objects (about 60 % as many       ≈ 0.85–0.9
           again) placed in free space
gridded    every requested object on the floor at yaw 0 in packed rows   ≈ 0.7–0.8
           (rugs flat in the middle); relations ignored
sparse     faithful with about 35 % of the requested objects dropped    ≈ 0.65–0.7
           (what stood on a dropped object falls to the floor)
confused   faithful with about 40 % of the objects swapped to another   ≈ 0.5–0.65
           category of similar size (shrunk into the original box)
=========  ===========================================================  ====================

Non-faithful generators pick the best asset variant with probability 0.75 and the second
otherwise. Every object carries ``candidates``: all variants of its category with retrieval
scores, best first. Output is deterministic given (prompt, generator, seed): the only
randomness is a :class:`random.Random` seeded from ``sha256("<prompt id>|<generator>|<seed>")``,
used through ``random()`` alone, and all coordinates are rounded (0.1 mm, 0.01°).
"""

from __future__ import annotations

import math
import random
from dataclasses import replace

from harness.core.errors import SceneError
from harness.scenes.assets import CATEGORIES, candidates
from harness.scenes.footprints import FLAT_HEIGHT, boxes_overlap, half_extents, inside_room
from harness.scenes.layout import Layout, Placed, faithful_layout, slug_id
from harness.scenes.model import Room, Scene, SceneObject
from harness.scenes.prompts import PromptSpec
from harness.scenes.seeded import normal as _normal
from harness.scenes.seeded import pick as _pick
from harness.scenes.seeded import rng_for
from harness.scenes.seeded import sample as _sample

#: Generator names, best first (the planted quality ordering).
GENERATORS = ("faithful", "jittered", "cluttered", "gridded", "sparse", "confused")

JITTER_XY = 0.25  # m, σ of position noise
JITTER_YAW = 20.0  # degrees, σ of yaw noise
JITTER_ON_XY = 0.03  # m, σ for items standing on furniture
SPARSE_DROP = 0.35
CLUTTER_EXTRA = 0.6
CONFUSE_SWAP = 0.4
SECOND_VARIANT_P = 0.25


def _r(v: float, nd: int = 4) -> float:
    return round(v, nd) + 0.0


def _yaw(v: float) -> float:
    y = round(v % 360.0, 2)
    return 0.0 if y >= 360.0 else y + 0.0


def _asset(label: str, rng: random.Random | None) -> str:
    cands = candidates(label)
    if rng is not None and rng.random() < SECOND_VARIANT_P:
        return cands[1].asset
    return cands[0].asset


def _to_object(p: Placed, rng: random.Random | None) -> SceneObject:
    return SceneObject(
        id=p.id,
        label=p.label,
        asset=_asset(p.label, rng),
        position=(_r(p.x), _r(p.y), _r(p.z)),
        yaw_deg=_yaw(p.yaw),
        size=tuple(_r(v) for v in p.size),  # type: ignore[arg-type]
        candidates=candidates(p.label),
    )


def _clamp_inside(x: float, y: float, size, yaw: float, room: Room) -> tuple[float, float] | None:
    hx, hy = half_extents(size, yaw)
    lx, ly = room.size[0] / 2 - hx, room.size[1] / 2 - hy
    if lx < 0 or ly < 0:
        return None
    return (min(lx, max(-lx, x)), min(ly, max(-ly, y)))


def _relabel(objects: list[SceneObject]) -> tuple[SceneObject, ...]:
    """Renumber ids per label in list order (``chair-1``, ``chair-2``, ...)."""
    counts: dict[str, int] = {}
    out = []
    for o in objects:
        counts[o.label] = counts.get(o.label, 0) + 1
        out.append(replace(o, id=slug_id(o.label, counts[o.label])))
    return tuple(out)


# ------------------------------------------------------------------ the six generators


def _faithful(layout: Layout, rng: random.Random) -> list[SceneObject]:
    return [_to_object(p, None) for p in layout.placed]


def _jittered(layout: Layout, rng: random.Random) -> list[SceneObject]:
    room = layout.room
    out = []
    poses: dict[str, Placed] = {p.id: p for p in layout.placed}
    new: dict[str, Placed] = {}
    for p in layout.placed:
        if p.support is not None and p.support in new:
            s_old, s_new = poses[p.support], new[p.support]
            dyaw = s_new.yaw - s_old.yaw
            t = math.radians(dyaw)
            rx, ry = p.x - s_old.x, p.y - s_old.y
            x = s_new.x + rx * math.cos(t) - ry * math.sin(t) + _normal(rng, JITTER_ON_XY)
            y = s_new.y + rx * math.sin(t) + ry * math.cos(t) + _normal(rng, JITTER_ON_XY)
            yaw = p.yaw + dyaw + _normal(rng, JITTER_YAW / 2)
        else:
            x = p.x + _normal(rng, JITTER_XY)
            y = p.y + _normal(rng, JITTER_XY)
            yaw = p.yaw + _normal(rng, JITTER_YAW)
        clamped = _clamp_inside(x, y, p.size, yaw, room)
        if clamped is None:
            yaw = p.yaw
            clamped = _clamp_inside(x, y, p.size, yaw, room) or (p.x, p.y)
        new[p.id] = replace(p, x=clamped[0], y=clamped[1], yaw=yaw)
    for p in layout.placed:
        out.append(_to_object(new[p.id], rng))
    return out


def _sparse(layout: Layout, rng: random.Random) -> list[SceneObject]:
    n = len(layout.placed)
    k = min(n - 1, max(1, round(SPARSE_DROP * n)))
    dropped = set(_sample(rng, [p.id for p in layout.placed], k))
    out = []
    for p in layout.placed:
        if p.id in dropped:
            continue
        if p.support is not None and p.support in dropped:
            p = replace(p, z=0.0, support=None)
        out.append(_to_object(p, rng))
    return out


def _random_free_spot(
    size,
    room: Room,
    placed: list[SceneObject],
    rng: random.Random,
    tries: int = 120,
    yaws: tuple[float, ...] = (0.0, 90.0, 180.0, 270.0),
) -> tuple[float, float, float] | None:
    for _ in range(tries):
        yaw = yaws[_pick(rng, len(yaws))]
        hx, hy = half_extents(size, yaw)
        lx, ly = room.size[0] / 2 - hx, room.size[1] / 2 - hy
        if lx < 0 or ly < 0:
            continue
        x, y = _r(-lx + 2 * lx * rng.random()), _r(-ly + 2 * ly * rng.random())
        probe = SceneObject("_", "_", "", (x, y, 0.0), yaw, size)
        if inside_room(probe.position, size, yaw, room) and not any(boxes_overlap(probe, o) for o in placed):
            return (x, y, yaw)
    return None


def _cluttered(layout: Layout, rng: random.Random) -> list[SceneObject]:
    out = [_to_object(p, rng) for p in layout.placed]
    requested = {p.label for p in layout.placed}
    pool = [label for label in sorted(CATEGORIES) if label not in requested]
    k = max(2, round(CLUTTER_EXTRA * len(layout.placed)))
    for label in _sample(rng, pool, min(k, len(pool))):
        size = CATEGORIES[label].size
        spot = _random_free_spot(size, layout.room, out, rng)
        if spot is None:
            continue
        x, y, yaw = spot
        out.append(
            SceneObject(slug_id(label, 1), label, _asset(label, rng), (x, y, 0.0), _yaw(yaw), size, candidates(label))
        )
    return out


def _gridded(layout: Layout, rng: random.Random) -> list[SceneObject]:
    room = layout.room
    solid = [i for i, p in enumerate(layout.placed) if p.size[2] > FLAT_HEIGHT]
    by_depth = sorted(solid, key=lambda i: (-layout.placed[i].size[1], i))
    spots: dict[int, tuple[float, float, float]] = {}
    for order in (solid, by_depth):
        for gap in (0.3, 0.15, 0.05):
            packed = _pack_rows([layout.placed[i].size for i in order], room, gap)
            if packed is not None:
                spots = dict(zip(order, packed, strict=True))
                break
        if spots:
            break
    out: list[SceneObject] = []
    for i, p in enumerate(layout.placed):
        if p.size[2] <= FLAT_HEIGHT:  # rugs lie flat in the middle, under whatever is there
            spot = (0.0, 0.0, 0.0)
        else:
            spot = spots.get(i) or _random_free_spot(p.size, room, out, rng, yaws=(0.0,)) or (0.0, 0.0, 0.0)
        x, y, yaw = spot
        out.append(_to_object(replace(p, x=x, y=y, z=0.0, yaw=yaw, support=None), rng))
    return out


def _pack_rows(sizes, room: Room, gap: float) -> list[tuple[float, float, float]] | None:
    """Shelf packing from the north-west corner in spec order; None if it overflows."""
    hx, hy = room.size[0] / 2, room.size[1] / 2
    x, top, row_depth = -hx + gap, hy - gap, 0.0
    spots = []
    for w, d, _ in sizes:
        if x + w > hx - gap + 1e-9:
            x, top, row_depth = -hx + gap, top - row_depth - gap, 0.0
        if x + w > hx - gap + 1e-9 or top - d < -hy + gap - 1e-9:
            return None
        spots.append((_r(x + w / 2), _r(top - d / 2), 0.0))
        x += w + gap
        row_depth = max(row_depth, d)
    return spots


def _similar_labels(label: str, exclude: set[str]) -> list[str]:
    """The three categories closest in log-size to ``label`` (ties by name)."""
    w, d, h = CATEGORIES[label].size

    def dist(other: str) -> float:
        ow, od, oh = CATEGORIES[other].size
        return abs(math.log(w / ow)) + abs(math.log(d / od)) + abs(math.log(h / oh))

    others = sorted((lab for lab in CATEGORIES if lab != label and lab not in exclude), key=lambda o: (dist(o), o))
    return others[:3]


def _confused(layout: Layout, rng: random.Random) -> list[SceneObject]:
    n = len(layout.placed)
    k = max(1, round(CONFUSE_SWAP * n))
    swapped = set(_sample(rng, [p.id for p in layout.placed], k))
    requested = {p.label for p in layout.placed}
    out = []
    for p in layout.placed:
        if p.id not in swapped:
            out.append(_to_object(p, rng))
            continue
        options = _similar_labels(p.label, requested)
        new_label = options[_pick(rng, len(options))]
        nw, nd, nh = CATEGORIES[new_label].size
        w, d, h = p.size
        s = min(1.0, w / nw, d / nd, h / nh)
        out.append(_to_object(replace(p, label=new_label, size=(nw * s, nd * s, nh * s)), rng))
    return out


_IMPL = {
    "faithful": _faithful,
    "jittered": _jittered,
    "cluttered": _cluttered,
    "gridded": _gridded,
    "sparse": _sparse,
    "confused": _confused,
}


def scene_id(generator: str, prompt_id: str) -> str:
    """Scene id ``<generator>.<prompt id>``."""
    return f"{generator}.{prompt_id}"


def generate(spec: PromptSpec, generator: str, seed: int = 0, *, layout: Layout | None = None) -> Scene:
    """The scene ``generator`` makes for ``spec``. ``layout`` (the faithful layout of ``spec``)
    may be passed to avoid recomputing it for each generator."""
    if generator not in _IMPL:
        raise SceneError(f"unknown generator {generator!r}", hint=f"use one of {', '.join(GENERATORS)}")
    layout = layout or faithful_layout(spec)
    rng = rng_for(spec.id, generator, seed)
    objects = _relabel(_IMPL[generator](layout, rng))
    return Scene(
        id=scene_id(generator, spec.id),
        generator=generator,
        prompt_id=spec.id,
        prompt=spec.text,
        prompt_source=spec.prompt_source,
        room=layout.room,
        objects=objects,
    )
