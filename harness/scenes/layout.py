"""Faithful layout: turn a prompt spec into placed boxes that satisfy its relations.

Algorithm (deterministic, no randomness):

1. Expand the spec into instances (``bed-1``, ``nightstand-1``, ``nightstand-2``, ...) at their
   category's nominal size.
2. Give each instance at most one *placement relation*: the first spec relation naming its
   label as subject. Instances are paired with anchors one-to-one when the counts match,
   round-robin otherwise, and along a chain for same-label relations (``sink-2`` beside
   ``sink-1``). A relation that would close a cycle is only checked, never used to place.
3. Lay out every *group* (an anchor with everything placed relative to it, recursively) in
   the anchor's frame — front towards local -y: ``on`` on the top face, ``under`` centred
   below (rugs), ``beside`` to the right/left with backs aligned, ``in_front_of`` along the
   front facing the anchor, ``around`` on the sides facing the anchor, ``facing`` in rows in
   front (or on both sides of a free-standing anchor), turned towards it.
4. Place each root group as a rigid body, largest first: wall objects back against a wall
   (wall centre outwards), free-standing objects nearest the room centre, small free objects
   in corners. No box may overlap another or leave the room.
5. If a group does not fit, the floor grows by 15 % and the layout restarts (at most 10 times).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from harness.core.errors import SceneError
from harness.scenes.assets import CATEGORIES
from harness.scenes.footprints import FLAT_HEIGHT, boxes_overlap, inside_room, rotate
from harness.scenes.model import Room, SceneObject
from harness.scenes.prompts import ROOM_TYPES, PromptSpec

GROW = 1.15
MAX_GROW_STEPS = 10
STEP = 0.1  # m: grid of candidate positions when placing groups
WALL_GAP = 0.01  # m: distance kept from the walls
BESIDE_GAP = 0.05
FRONT_GAP_SEAT = 0.05  # chairs/stools tuck close to the desk or counter they are in front of
FRONT_GAP = 0.35
AROUND_GAP = 0.05
FACING_GAP = 1.0
SEATS = frozenset({"chair", "office chair", "stool", "armchair", "sofa"})

Box = tuple[float, float, float, float]  # x0, x1, y0, y1 in some plan frame


@dataclass(frozen=True)
class Placed:
    """One laid-out instance: pose of its box and the instance it stands on, if any.

    In a :class:`Layout` the pose is in the room's world frame; while a group is being laid
    out the same record holds the group-local pose.
    """

    id: str
    label: str
    size: tuple[float, float, float]
    x: float
    y: float
    z: float
    yaw: float
    support: str | None = None


@dataclass(frozen=True)
class Layout:
    """A room and the instances placed in it, supports before what they carry."""

    room: Room
    placed: tuple[Placed, ...]


def slug_id(label: str, k: int) -> str:
    """Object id for the ``k``-th (1-based) instance of ``label``: ``coffee-table-2``."""
    return f"{label.replace(' ', '-')}-{k}"


def instances(spec: PromptSpec) -> list[tuple[str, str]]:
    """``[(id, label), ...]`` for every requested instance, in spec order."""
    return [(slug_id(label, k), label) for label, count in spec.objects for k in range(1, count + 1)]


def placement_parents(spec: PromptSpec) -> dict[str, tuple[str, str]]:
    """Instance id → (relation kind, anchor instance id) for instances placed relative to another."""
    by_label: dict[str, list[str]] = {}
    for iid, label in instances(spec):
        by_label.setdefault(label, []).append(iid)
    parent: dict[str, tuple[str, str]] = {}

    def ancestors(iid: str) -> set[str]:
        seen = set()
        while iid in parent and iid not in seen:
            seen.add(iid)
            iid = parent[iid][1]
        seen.add(iid)
        return seen

    for rel in spec.relations:
        subjects, anchors = by_label[rel.subject], by_label[rel.anchor]
        if rel.subject == rel.anchor:
            pairs = list(zip(subjects[1:], subjects[:-1], strict=True))
        else:
            pairs = [(s, anchors[i % len(anchors)]) for i, s in enumerate(subjects)]
        for s, a in pairs:
            if s not in parent and s not in ancestors(a):
                parent[s] = (rel.kind, a)
    return parent


# ------------------------------------------------------------------ group layout (local frame)


_Member = Placed  # a group member, posed in the group's local frame


def _objects(members: list[_Member]) -> list[SceneObject]:
    """The members as asset-less scene objects (for the overlap and room checks)."""
    return [SceneObject(m.id, m.label, "", (m.x, m.y, m.z), m.yaw, m.size) for m in members]


def _move(members: list[_Member], dx: float, dy: float, dz: float, dyaw: float) -> list[_Member]:
    out = []
    for m in members:
        rx, ry = rotate(m.x, m.y, dyaw)
        out.append(replace(m, x=rx + dx, y=ry + dy, z=m.z + dz, yaw=(m.yaw + dyaw) % 360.0))
    return out


def _bbox(members: list[_Member], *, solid_only: bool = False) -> Box:
    xs, ys = [], []
    for m in members:
        if solid_only and m.size[2] <= FLAT_HEIGHT:
            continue
        hx, hy = m.size[0] / 2, m.size[1] / 2
        for sx, sy in ((-hx, -hy), (hx, -hy), (hx, hy), (-hx, hy)):
            cx, cy = rotate(sx, sy, m.yaw)
            xs.append(m.x + cx)
            ys.append(m.y + cy)
    if not xs:
        return (0.0, 0.0, 0.0, 0.0)
    return (min(xs), max(xs), min(ys), max(ys))


def _rot_box(box: Box, yaw: float) -> Box:
    x0, x1, y0, y1 = box
    pts = [rotate(x, y, yaw) for x in (x0, x1) for y in (y0, y1)]
    return (min(p[0] for p in pts), max(p[0] for p in pts), min(p[1] for p in pts), max(p[1] for p in pts))


class _Grouper:
    def __init__(self, spec: PromptSpec):
        self.labels = dict(instances(spec))
        self.parent = placement_parents(spec)
        self.children: dict[str, list[tuple[str, str]]] = {}
        for iid in self.labels:
            if iid in self.parent:
                kind, anchor = self.parent[iid]
                self.children.setdefault(anchor, []).append((kind, iid))

    def roots(self) -> list[str]:
        return [iid for iid in self.labels if iid not in self.parent]

    def group(self, iid: str) -> list[_Member]:
        """Members of ``iid``'s group in its frame (``iid`` at the origin, yaw 0), support first."""
        label = self.labels[iid]
        w, d, h = CATEGORIES[label].size
        members = [_Member(iid, label, (w, d, h), 0.0, 0.0, 0.0, 0.0, None)]
        kids = self.children.get(iid, [])
        by_kind: dict[str, list[list[_Member]]] = {}
        for kind, cid in kids:
            by_kind.setdefault(kind, []).append(self.group(cid))

        on = by_kind.get("on", [])
        for i, g in enumerate(on):
            gx0, gx1, gy0, gy1 = _bbox(g)
            if len(on) == 1 and gx1 - gx0 < w / 2:
                x = w / 2 - 0.05 - gx1
            else:
                x = -w / 2 + (i + 0.5) * w / len(on) - (gx0 + gx1) / 2
            y = max(-(gy0 + gy1) / 2, d / 2 - 0.03 - gy1)
            g2 = _move(g, x, y, h, 0.0)
            g2[0] = replace(g2[0], support=iid)
            members += g2

        for g in by_kind.get("under", []):
            gw, gd = g[0].size[0], g[0].size[1]
            yaw = 90.0 if (gw > gd) != (w > d) else 0.0
            members += _move(g, 0.0, 0.0, 0.0, yaw)

        solid = _bbox(members, solid_only=True)
        right, left = solid[1], solid[0]
        for i, g in enumerate(by_kind.get("beside", [])):
            gx0, gx1, gy0, gy1 = _bbox(g, solid_only=True)
            y = d / 2 - gy1
            if i % 2 == 0:
                x = right + BESIDE_GAP - gx0
                right = x + gx1
            else:
                x = left - BESIDE_GAP - gx1
                left = x + gx0
            members += _move(g, x, y, 0.0, 0.0)

        front = by_kind.get("in_front_of", [])
        if front:
            solid = _bbox(members, solid_only=True)
            boxes = [_rot_box(_bbox(g, solid_only=True), 180.0) for g in front]
            total = sum(b[1] - b[0] for b in boxes) + 0.1 * (len(boxes) - 1)
            cursor = -total / 2
            for g, b in zip(front, boxes, strict=True):
                gap = FRONT_GAP_SEAT if g[0].label in SEATS else FRONT_GAP
                x = cursor - b[0]
                y = solid[2] - gap - b[3]
                members += _move(g, x, y, 0.0, 180.0)
                cursor += b[1] - b[0] + 0.1

        around = by_kind.get("around", [])
        if around:
            members += self._around(around, w, d)

        facing = by_kind.get("facing", [])
        if facing:
            members += self._facing(facing, members, CATEGORIES[label].placement == "centre")
        return members

    @staticmethod
    def _around(groups: list[list[_Member]], w: float, d: float) -> list[_Member]:
        n = len(groups)
        widest = max(_bbox(g, solid_only=True)[1] - _bbox(g, solid_only=True)[0] for g in groups)
        cap = max(1, math.floor((w + 0.1) / (widest + 0.15)))
        n_ends = next((e for e in (0, 1, 2) if math.ceil((n - e) / 2) <= cap), 2)
        n_front = math.ceil((n - n_ends) / 2)
        n_back = n - n_ends - n_front
        out: list[_Member] = []
        slots: list[tuple[str, float]] = []
        slots += [("front", -w / 2 + (j + 0.5) * w / n_front) for j in range(n_front)]
        slots += [("back", -w / 2 + (j + 0.5) * w / max(1, n_back)) for j in range(n_back)]
        slots += [("left", 0.0), ("right", 0.0)][:n_ends]
        yaws = {"front": 180.0, "back": 0.0, "left": 90.0, "right": 270.0}
        for g, (side, pos) in zip(groups, slots, strict=True):
            b = _rot_box(_bbox(g, solid_only=True), yaws[side])
            cx, cy = (b[0] + b[1]) / 2, (b[2] + b[3]) / 2
            if side == "front":
                x, y = pos - cx, -d / 2 - AROUND_GAP - b[3]
            elif side == "back":
                x, y = pos - cx, d / 2 + AROUND_GAP - b[2]
            elif side == "left":
                x, y = -w / 2 - AROUND_GAP - b[1], pos - cy
            else:
                x, y = w / 2 + AROUND_GAP - b[0], pos - cy
            out += _move(g, x, y, 0.0, yaws[side])
        return out

    @staticmethod
    def _facing(groups: list[list[_Member]], members: list[_Member], both_sides: bool) -> list[_Member]:
        solid = _bbox(members, solid_only=True)
        n = len(groups)
        out: list[_Member] = []
        if both_sides and n >= 2:
            sides = {"front": groups[0::2], "back": groups[1::2]}
            for side, gs in sides.items():
                yaw = 180.0 if side == "front" else 0.0
                boxes = [_rot_box(_bbox(g, solid_only=True), yaw) for g in gs]
                total = sum(b[1] - b[0] for b in boxes) + 0.2 * (len(boxes) - 1)
                cursor = -total / 2
                for g, b in zip(gs, boxes, strict=True):
                    x = cursor - b[0]
                    y = solid[2] - FACING_GAP - b[3] if side == "front" else solid[3] + FACING_GAP - b[2]
                    out += _move(g, x, y, 0.0, yaw)
                    cursor += b[1] - b[0] + 0.2
            return out
        per_row = min(n, max(1, round(math.sqrt(1.5 * n))))
        boxes = [_rot_box(_bbox(g, solid_only=True), 180.0) for g in groups]
        col = max(b[1] - b[0] for b in boxes) + 0.3
        row = max(b[3] - b[2] for b in boxes) + 0.45
        for i, (g, b) in enumerate(zip(groups, boxes, strict=True)):
            r, c = divmod(i, per_row)
            in_row = min(per_row, n - r * per_row)
            cx = (c - (in_row - 1) / 2) * col
            x = cx - (b[0] + b[1]) / 2
            y = solid[2] - FACING_GAP - r * row - b[3]
            out += _move(g, x, y, 0.0, 180.0)
        return out


# ------------------------------------------------------------------ placing groups in the room


def _fits(members: list[_Member], room: Room, placed: list[SceneObject]) -> bool:
    objs = _objects(members)
    for o in objs:
        if not inside_room(o.position, o.size, o.yaw_deg, room, tol=0.0):
            return False
        if any(boxes_overlap(o, p) for p in placed):
            return False
    return True


def _wall_candidates(box: Box, room: Room, corners_first: bool):
    hx, hy = room.size[0] / 2, room.size[1] / 2
    # (group yaw, which world axis runs along the wall, fixed coordinate of the group origin)
    for yaw in (0.0, 180.0, 270.0, 90.0):
        b = _rot_box(box, yaw)
        if yaw == 0.0:
            fixed, lo, hi, along_x = hy - WALL_GAP - b[3], -hx + WALL_GAP - b[0], hx - WALL_GAP - b[1], True
        elif yaw == 180.0:
            fixed, lo, hi, along_x = -hy + WALL_GAP - b[2], -hx + WALL_GAP - b[0], hx - WALL_GAP - b[1], True
        elif yaw == 270.0:
            fixed, lo, hi, along_x = hx - WALL_GAP - b[1], -hy + WALL_GAP - b[2], hy - WALL_GAP - b[3], False
        else:
            fixed, lo, hi, along_x = -hx + WALL_GAP - b[0], -hy + WALL_GAP - b[2], hy - WALL_GAP - b[3], False
        if hi < lo:
            continue
        n = math.floor((hi - lo) / STEP + 1e-9)
        offsets = [lo + k * STEP for k in range(n + 1)]
        if hi - offsets[-1] > 1e-9:
            offsets.append(hi)
        mid = (lo + hi) / 2
        offsets.sort(key=lambda v: (-abs(v - mid) if corners_first else abs(v - mid), v))
        for off in offsets:
            yield (yaw, off, fixed) if along_x else (yaw, fixed, off)


def _centre_candidates(box: Box, room: Room):
    hx, hy = room.size[0] / 2, room.size[1] / 2
    cands = []
    for yaw in (0.0, 90.0, 180.0, 270.0):
        b = _rot_box(box, yaw)
        x_lo, x_hi = -hx + WALL_GAP - b[0], hx - WALL_GAP - b[1]
        y_lo, y_hi = -hy + WALL_GAP - b[2], hy - WALL_GAP - b[3]
        if x_hi < x_lo or y_hi < y_lo:
            continue
        xc, yc = (x_lo + x_hi) / 2, (y_lo + y_hi) / 2
        nx, ny = int((x_hi - x_lo) / (2 * STEP)), int((y_hi - y_lo) / (2 * STEP))
        for i in range(-nx, nx + 1):
            for j in range(-ny, ny + 1):
                x, y = xc + i * STEP, yc + j * STEP
                cands.append((math.hypot(x, y), yaw, x, y))
    cands.sort()
    for _, yaw, x, y in cands:
        yield (yaw, x, y)


def _layout_in(spec: PromptSpec, room: Room) -> Layout | None:
    grouper = _Grouper(spec)
    groups = [grouper.group(root) for root in grouper.roots()]
    order = sorted(range(len(groups)), key=lambda i: (-_area(_bbox(groups[i])), i))
    placed_objs: list[SceneObject] = []
    placed_members: dict[int, list[_Member]] = {}
    for i in order:
        g = groups[i]
        _check_internal(g, spec)
        kind = CATEGORIES[g[0].label].placement
        box = _bbox(g)
        if kind == "centre":
            cands = _centre_candidates(box, room)
        else:
            cands = _wall_candidates(box, room, corners_first=kind in ("free", "top"))
        for yaw, x, y in cands:
            moved = _move(g, x, y, 0.0, yaw)
            if _fits(moved, room, placed_objs):
                placed_members[i] = moved
                placed_objs += _objects(moved)
                break
        else:
            return None
    order_ids = [iid for iid, _ in instances(spec)]
    all_members = {m.id: m for ms in placed_members.values() for m in ms}
    placed = tuple(
        Placed(m.id, m.label, m.size, round(m.x, 4) + 0.0, round(m.y, 4) + 0.0, round(m.z, 4) + 0.0, _norm_yaw(m.yaw), m.support)
        for m in (all_members[iid] for iid in order_ids)
    )
    return Layout(room, placed)


def _check_internal(members: list[_Member], spec: PromptSpec) -> None:
    objs = _objects(members)
    for i, a in enumerate(objs):
        for b in objs[i + 1 :]:
            if boxes_overlap(a, b):
                raise SceneError(
                    f"faithful layout of prompt {spec.id!r} overlaps {a.id} and {b.id}",
                    hint="simplify the prompt's relations (too many objects around one anchor)",
                )


def _area(box: Box) -> float:
    return (box[1] - box[0]) * (box[3] - box[2])


def _norm_yaw(yaw: float) -> float:
    v = round(yaw % 360.0, 2)
    return 0.0 if v >= 360.0 else v + 0.0


def faithful_layout(spec: PromptSpec) -> Layout:
    """The faithful layout of ``spec``; the room is the room type's base floor, grown as needed."""
    base = ROOM_TYPES[spec.room_type]
    sx, sy = base.size
    for _ in range(MAX_GROW_STEPS + 1):
        room = Room((round(sx, 1), round(sy, 1)), base.wall_height)
        layout = _layout_in(spec, room)
        if layout is not None:
            return layout
        sx, sy = sx * GROW, sy * GROW
    raise SceneError(
        f"prompt {spec.id!r} does not fit even a {sx:.1f} x {sy:.1f} m room",
        hint="request fewer or smaller objects",
    )
