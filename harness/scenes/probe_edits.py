"""Content probes: structured edits of a frozen scene (study §3.3).

``apply(scene, probe, seed=0)`` returns a new frozen :class:`Scene`; the input is untouched.

* ``keep_half`` — a random half of the objects removed. Keeps ``⌊n/2⌋`` objects (so an odd
  scene loses the larger half), except that a one-object scene keeps its object (= ``⌈n/2⌉``)
  because a scene needs at least one object. Kept objects are unchanged and keep their order.
* ``biggest_only`` — only the object with the largest box volume; ties go to the smallest id.
* ``scrambled`` — every object relocated and reoriented: uniform yaw in [0°, 360°), uniform
  position with the rotated box inside the floor, standing on the floor (z = 0). Objects are
  placed largest footprint first by rejection sampling: up to 200 draws avoiding overlaps and
  moving the centre ≥ 0.3 m, then 200 avoiding overlaps only, then 200 at right-angle yaws
  (they pack tighter) avoiding overlaps, then the last draw that fits the room (an overlap is
  accepted only when the room is too full). The label multiset, sizes,
  assets and ids are preserved.
* ``keep_half``, ``biggest_only`` and ``scrambled`` edit a room's layout: on an object scene
  (schema 2 ``kind: object``) they raise :class:`ProbeNotApplicable`.
* ``worst_objects`` — each object's asset replaced by its lowest-scoring retrieval candidate
  (ties by asset path); label, position, yaw, size and count are preserved. Needs
  ``candidates`` on every object; a scene with none at all (a generator that makes its assets
  instead of retrieving them, e.g. an imported GLB) raises :class:`ProbeNotApplicable`.

Determinism: the random stream is seeded from ``sha256(<sha256 of the scene's canonical JSON>
| <probe> | <seed>)``, so the same scene, probe and seed give the same edited scene, byte for
byte. The edited scene's id is ``<id>~<probe with '-' for '_'>.s<seed>`` (scene ids may not
contain ``_``), so its identity differs from the original's and from other seeds'.
"""

from __future__ import annotations

import math
from dataclasses import replace

from harness.core.errors import ProtocolError, SceneError
from harness.core.hashing import sha256_json
from harness.scenes.footprints import boxes_overlap, half_extents, inside_room
from harness.scenes.model import Scene, SceneObject
from harness.scenes.seeded import pick, rng_for, sample
from harness.vocab.probes import PROBES, probe_names

SCRAMBLE_TRIES = 200


class ProbeNotApplicable(SceneError):
    """The probe has no meaning for this scene (e.g. removing objects from a single object)."""

SCRAMBLE_MIN_MOVE = 0.3  # m


def probe_id(scene_id: str, probe: str, seed: int) -> str:
    """Id of the probe-edited copy of ``scene_id``."""
    return f"{scene_id}~{probe.replace('_', '-')}.s{seed}"


def apply(scene: Scene, probe: str, *, seed: int = 0) -> Scene:
    """The ``probe``-edited copy of ``scene`` (see the module docstring)."""
    if probe not in PROBES:
        raise ProtocolError(f"unknown probe {probe!r}", where="probe", hint=f"use one of {', '.join(probe_names())}")
    spec = PROBES.get(probe)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ProtocolError(f"probe seed must be a non-negative integer, got {seed!r}", where="probe seed")
    if spec.multi_object and scene.is_object_scene:
        raise ProbeNotApplicable(
            f"probe {probe} is not applicable to an object scene",
            path=f"<scene {scene.id}>",
            hint=f"{probe} edits the layout of several objects",
        )
    content = sha256_json(scene.to_dict())
    memo = (content, probe, seed)
    if memo in _APPLIED:  # the warm step and the session edit the same scenes in one process
        return _APPLIED[memo]
    rng = rng_for(content, probe, seed)
    objects = tuple(spec.editor()(scene, rng))
    suffix = probe_id(scene.id, probe, seed)[len(scene.id) + 1 :]
    edited = scene.with_objects(objects, id_suffix=suffix)
    if len(_APPLIED) >= _APPLIED_MAX:
        _APPLIED.clear()
    _APPLIED[memo] = edited
    return edited


def biggest_only(scene: Scene, rng=None) -> tuple[SceneObject, ...]:
    """Only the object with the largest box volume; ties go to the smallest id (``rng`` unused)."""
    return (min(scene.objects, key=lambda o: (-o.volume, o.id)),)


#: Edited scenes of this process by (sha256 of the scene's document, probe, seed): an edit is a
#: pure function of those, and a frozen scene is safe to share.
_APPLIED: dict[tuple[str, str, int], Scene] = {}
_APPLIED_MAX = 4096


def keep_half(scene: Scene, rng) -> tuple[SceneObject, ...]:
    """A random half of the objects (the module docstring gives the count)."""
    n = len(scene.objects)
    keep = set(sample(rng, range(n), max(1, n // 2)))
    return tuple(o for i, o in enumerate(scene.objects) if i in keep)


def worst_objects(scene: Scene, rng=None) -> tuple[SceneObject, ...]:
    """Each object with its lowest-scoring retrieval candidate's asset (``rng`` unused)."""
    if not any(obj.candidates for obj in scene.objects):
        raise ProbeNotApplicable(
            "probe worst_objects is not applicable: no object has retrieval candidates",
            path=f"<scene {scene.id}>",
            hint="worst_objects swaps retrieved assets for worse candidates; generated assets have none",
        )
    out = []
    for i, obj in enumerate(scene.objects):
        if not obj.candidates:
            raise SceneError(
                f"object {obj.id!r} has no retrieval candidates",
                path=f"<scene {scene.id}>",
                pointer=f"/objects/{i}/candidates",
                hint="worst_objects needs candidates on every object; skip this probe for the scene",
            )
        worst = min(obj.candidates, key=lambda c: (c.retrieval_score, c.asset))
        out.append(replace(obj, asset=worst.asset))
    return tuple(out)


def _draw(obj: SceneObject, scene: Scene, rng, yaw: float | None = None) -> tuple[float, float, float] | None:
    """A uniform pose (x, y, yaw) whose rotated box fits the floor, or None if this yaw cannot."""
    if yaw is None:
        yaw = round(360.0 * rng.random(), 2) % 360.0
    hx, hy = half_extents(obj.size, yaw)
    lx, ly = scene.room.size[0] / 2 - hx - 1e-3, scene.room.size[1] / 2 - hy - 1e-3
    if lx < 0 or ly < 0:
        return None
    x = round(-lx + 2 * lx * rng.random(), 4) + 0.0
    y = round(-ly + 2 * ly * rng.random(), 4) + 0.0
    if not inside_room((x, y, 0.0), obj.size, yaw, scene.room):
        return None
    return (x, y, yaw + 0.0)


def scrambled(scene: Scene, rng) -> tuple[SceneObject, ...]:
    order = sorted(range(len(scene.objects)), key=lambda i: (-scene.objects[i].size[0] * scene.objects[i].size[1], i))
    placed: dict[int, SceneObject] = {}
    for i in order:
        obj = scene.objects[i]
        chosen = None
        fallback = None
        for attempt in range(3 * SCRAMBLE_TRIES):
            right_angle = 90.0 * pick(rng, 4) if attempt >= 2 * SCRAMBLE_TRIES else None
            pose = _draw(obj, scene, rng, right_angle)
            if pose is None:
                continue
            cand = replace(obj, position=(pose[0], pose[1], 0.0), yaw_deg=pose[2])
            fallback = cand
            if any(boxes_overlap(cand, other) for other in placed.values()):
                continue
            moved = math.hypot(pose[0] - obj.position[0], pose[1] - obj.position[1])
            if attempt < SCRAMBLE_TRIES and moved < SCRAMBLE_MIN_MOVE:
                continue
            chosen = cand
            break
        if chosen is None:
            chosen = fallback or _axis_aligned(obj, scene, rng)
        placed[i] = chosen
    return tuple(placed[i] for i in range(len(scene.objects)))


def _axis_aligned(obj: SceneObject, scene: Scene, rng) -> SceneObject:
    """Fallback for objects that fit the floor only at some right-angle yaws."""
    yaws = [y for y in (0.0, 90.0, 180.0, 270.0) if _draw(obj, scene, rng, y) is not None]
    if not yaws:
        raise SceneError(
            f"object {obj.id!r} ({obj.size[0]} x {obj.size[1]} m) does not fit the room",
            path=f"<scene {scene.id}>",
            hint="the scene is invalid: its room is smaller than one of its objects",
        )
    yaw = yaws[pick(rng, len(yaws))]
    for _ in range(SCRAMBLE_TRIES):
        pose = _draw(obj, scene, rng, yaw)
        if pose is not None:
            return replace(obj, position=(pose[0], pose[1], 0.0), yaw_deg=yaw)
    return replace(obj, position=(0.0, 0.0, 0.0), yaw_deg=yaw)
