"""Procedural furniture assets: a tiny mesh builder and the asset catalogue.

Every category has a *nominal size* ``(w, d, h)`` in metres (x width, y depth, z height) and
three variants written as Wavefront OBJ + MTL under ``<root>/assets/<slug>/<variant>.obj``:

* ``a`` — the detailed mesh, highest retrieval score (0.82–0.95);
* ``b`` — an alternative style (other proportions of parts, other shade), score 0.55–0.75;
* ``c`` — clearly poor but same-label: one crude box in a muddy off-colour, score 0.08–0.25.
  The ``worst_objects`` probe swaps every object to this variant.

Mesh conventions (the renderer relies on them): vertices in metres, z up, the front of the
object faces -y, and every variant's bounding box is exactly
``[-w/2, w/2] × [-d/2, d/2] × [0, h]`` — bottom centre at the origin. A scene object with
``size = (sx, sy, sz)`` is therefore drawn by scaling the mesh by ``(sx/w, sy/d, sz/h)``.
Materials are named ``<slug>_<variant>_<part>`` (unique across files) and only set ``Kd``.
Output is byte-deterministic: fixed formatting, no timestamps.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from harness.core.errors import SceneError
from harness.core.fileio import write_json_atomic
from harness.scenes.model import AssetCandidate

Color = tuple[float, float, float]
VARIANTS = ("a", "b", "c")
_CYL_SEGMENTS = 12


@dataclass(frozen=True)
class Part:
    """A primitive in nominal metres: ``kind`` ``box`` or ``cyl`` (axis z), spanning
    ``x0..x1``, ``y0..y1``, ``z0..z1`` (a cylinder is inscribed in that box), with ``material``."""

    kind: str
    x0: float
    x1: float
    y0: float
    y1: float
    z0: float
    z1: float
    material: str


def box(x0: float, x1: float, y0: float, y1: float, z0: float, z1: float, mat: str) -> Part:
    """An axis-aligned box part."""
    return Part("box", x0, x1, y0, y1, z0, z1, mat)


def cyl(cx: float, cy: float, r: float, z0: float, z1: float, mat: str) -> Part:
    """A vertical cylinder part of radius ``r`` centred at (cx, cy)."""
    return Part("cyl", cx - r, cx + r, cy - r, cy + r, z0, z1, mat)


@dataclass
class Mesh:
    """Vertices (metres) and faces (1-based vertex indices) grouped by material, in build order."""

    vertices: list[tuple[float, float, float]] = field(default_factory=list)
    faces: dict[str, list[tuple[int, ...]]] = field(default_factory=dict)

    def add(self, part: Part) -> None:
        """Append a primitive; faces wind counter-clockwise seen from outside."""
        base = len(self.vertices) + 1
        group = self.faces.setdefault(part.material, [])
        if part.kind == "box":
            for z in (part.z0, part.z1):
                for x, y in ((part.x0, part.y0), (part.x1, part.y0), (part.x1, part.y1), (part.x0, part.y1)):
                    self.vertices.append((x, y, z))
            b, t = base, base + 4
            group.append((b, b + 3, b + 2, b + 1))  # bottom (normal -z)
            group.append((t, t + 1, t + 2, t + 3))  # top
            for i in range(4):
                j = (i + 1) % 4
                group.append((b + i, b + j, t + j, t + i))
            return
        cx, cy = (part.x0 + part.x1) / 2, (part.y0 + part.y1) / 2
        rx, ry = (part.x1 - part.x0) / 2, (part.y1 - part.y0) / 2
        n = _CYL_SEGMENTS
        for z in (part.z0, part.z1):
            for i in range(n):
                a = 2 * math.pi * (i + 0.5) / n
                self.vertices.append((cx + rx * math.cos(a), cy + ry * math.sin(a), z))
        b, t = base, base + n
        group.append(tuple(b + i for i in reversed(range(n))))
        group.append(tuple(t + i for i in range(n)))
        for i in range(n):
            j = (i + 1) % n
            group.append((b + i, b + j, t + j, t + i))

    def bounds(self) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
        """(min xyz, max xyz) of the vertices."""
        xs, ys, zs = zip(*self.vertices, strict=True)
        return (min(xs), min(ys), min(zs)), (max(xs), max(ys), max(zs))

    def fitted(self, size: tuple[float, float, float]) -> Mesh:
        """A copy scaled and moved so its bounds are exactly the nominal box of ``size``."""
        (x0, y0, z0), (x1, y1, z1) = self.bounds()
        sx, sy, sz = size[0] / (x1 - x0), size[1] / (y1 - y0), size[2] / (z1 - z0)
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        verts = [((x - cx) * sx, (y - cy) * sy, (z - z0) * sz) for x, y, z in self.vertices]
        return Mesh(verts, self.faces)


def _obj_number(v: float) -> str:
    """``v`` as an OBJ/MTL number: at most 5 decimals, no trailing zeros, no ``-0``."""
    text = f"{v:.5f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def write_obj(mesh: Mesh, name: str, mtl_name: str) -> str:
    """OBJ text for ``mesh`` naming the material library ``mtl_name`` (same folder)."""
    lines = [f"# t3d-audit procedural asset {name}", f"mtllib {mtl_name}", f"o {name}"]
    lines += [f"v {_obj_number(x)} {_obj_number(y)} {_obj_number(z)}" for x, y, z in mesh.vertices]
    for material, faces in mesh.faces.items():
        lines.append(f"usemtl {material}")
        lines += ["f " + " ".join(str(i) for i in face) for face in faces]
    return "\n".join(lines) + "\n"


def write_mtl(materials: dict[str, Color]) -> str:
    """MTL text: one diffuse material per entry (``Kd`` in linear 0..1 RGB)."""
    lines = ["# t3d-audit procedural materials"]
    for name, (r, g, b) in materials.items():
        lines += [
            "",
            f"newmtl {name}",
            "Ka 0 0 0",
            f"Kd {_obj_number(r)} {_obj_number(g)} {_obj_number(b)}",
            "Ks 0.05 0.05 0.05",
            "Ns 10",
            "d 1",
            "illum 2",
        ]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- category builders
# Each builder takes the nominal (w, d, h) and ``alt`` (variant b) and returns parts whose
# materials are the keys "body", "accent" and "detail"; the front faces -y.

Builder = Callable[[float, float, float, bool], list[Part]]


def _legs(w: float, d: float, h: float, t: float, mat: str, round_: bool = False) -> list[Part]:
    out = []
    for sx in (-1, 1):
        for sy in (-1, 1):
            cx, cy = sx * (w / 2 - t / 2), sy * (d / 2 - t / 2)
            if round_:
                out.append(cyl(cx, cy, t / 2, 0, h, mat))
            else:
                out.append(box(cx - t / 2, cx + t / 2, cy - t / 2, cy + t / 2, 0, h, mat))
    return out


def _table(w: float, d: float, h: float, alt: bool) -> list[Part]:
    top = 0.06 if alt else 0.04
    return [box(-w / 2, w / 2, -d / 2, d / 2, h - top, h, "body"), *_legs(w * 0.94, d * 0.9, h - top, 0.06, "accent", alt)]


def _bed(w, d, h, alt):
    parts = [
        box(-w / 2, w / 2, -d / 2, d / 2 - 0.08, 0.1, 0.3, "body"),
        box(-w / 2 + 0.03, w / 2 - 0.03, -d / 2 + 0.03, d / 2 - 0.1, 0.3, 0.5, "accent"),
        box(-w / 2, w / 2, d / 2 - 0.08, d / 2, 0, h, "body"),
        *_legs(w, d - 0.08, 0.1, 0.08, "body"),
    ]
    n = 1 if alt else 2
    for i in range(n):
        x0 = -w / 2 + 0.1 + i * (w - 0.2) / n
        parts.append(box(x0, x0 + (w - 0.2) / n - 0.06, d / 2 - 0.55, d / 2 - 0.15, 0.5, 0.62, "detail"))
    if not alt:
        parts.append(box(-w / 2, w / 2, -d / 2, -d / 2 + 0.05, 0, 0.45, "body"))
    else:
        parts.append(box(-w / 2 + 0.03, w / 2 - 0.03, -d / 2 + 0.03, 0.0, 0.5, 0.55, "detail"))
    return parts


def _nightstand(w, d, h, alt):
    parts = [box(-w / 2, w / 2, -d / 2, d / 2, 0.08, h, "body"), *_legs(w, d, 0.08, 0.05, "accent")]
    for k in range(1 if alt else 2):
        z = 0.15 + k * (h - 0.1) / 2
        parts.append(box(-w / 2 + 0.05, w / 2 - 0.05, -d / 2 - 0.01, -d / 2, z, z + 0.15, "detail"))
    return parts


def _wardrobe(w, d, h, alt):
    parts = [box(-w / 2, w / 2, -d / 2 + 0.02, d / 2, 0.05, h, "body"), box(-w / 2 + 0.02, w / 2 - 0.02, -d / 2 + 0.02, d / 2 - 0.02, 0, 0.05, "accent")]
    doors = 3 if alt else 2
    for i in range(doors):
        x0 = -w / 2 + 0.02 + i * (w - 0.04) / doors
        parts.append(box(x0 + 0.01, x0 + (w - 0.04) / doors - 0.01, -d / 2, -d / 2 + 0.02, 0.1, h - 0.05, "detail"))
    return parts


def _dresser(w, d, h, alt):
    parts = [box(-w / 2, w / 2, -d / 2 + 0.02, d / 2, 0.1, h, "body"), *_legs(w, d, 0.1, 0.06, "accent", alt)]
    rows = 4 if alt else 3
    for r in range(rows):
        z0 = 0.13 + r * (h - 0.16) / rows
        parts.append(box(-w / 2 + 0.04, w / 2 - 0.04, -d / 2, -d / 2 + 0.02, z0, z0 + (h - 0.16) / rows - 0.03, "detail"))
    return parts


def _sofa(w, d, h, alt):
    arm = 0.12 if alt else 0.2
    parts = [
        box(-w / 2, w / 2, -d / 2, d / 2, 0.1, 0.42, "body"),
        box(-w / 2, w / 2, d / 2 - 0.22, d / 2, 0.42, h, "body"),
        box(-w / 2, -w / 2 + arm, -d / 2, d / 2, 0.42, 0.62, "body"),
        box(w / 2 - arm, w / 2, -d / 2, d / 2, 0.42, 0.62, "body"),
        *_legs(w, d, 0.1, 0.06, "detail"),
    ]
    seats = 2 if alt else 3
    inner = w - 2 * arm
    for i in range(seats):
        x0 = -w / 2 + arm + i * inner / seats
        parts.append(box(x0 + 0.02, x0 + inner / seats - 0.02, -d / 2 + 0.03, d / 2 - 0.24, 0.42, 0.52, "accent"))
    return parts


def _armchair(w, d, h, alt):
    arm = 0.1 if alt else 0.16
    return [
        box(-w / 2, w / 2, -d / 2, d / 2, 0.12, 0.4, "body"),
        box(-w / 2, w / 2, d / 2 - 0.18, d / 2, 0.4, h, "body"),
        box(-w / 2, -w / 2 + arm, -d / 2, d / 2, 0.4, 0.62, "body"),
        box(w / 2 - arm, w / 2, -d / 2, d / 2, 0.4, 0.62, "body"),
        box(-w / 2 + arm, w / 2 - arm, -d / 2 + 0.03, d / 2 - 0.2, 0.4, 0.5, "accent"),
        *_legs(w, d, 0.12, 0.05, "detail", alt),
    ]


def _coffee_table(w, d, h, alt):
    parts = _table(w, d, h, alt)
    parts.append(box(-w / 2 + 0.08, w / 2 - 0.08, -d / 2 + 0.08, d / 2 - 0.08, 0.1, 0.13, "detail"))
    return parts


def _tv_stand(w, d, h, alt):
    parts = [box(-w / 2, w / 2, -d / 2 + 0.02, d / 2, 0.06, h, "body"), *_legs(w, d, 0.06, 0.05, "accent")]
    n = 2 if alt else 3
    for i in range(n):
        x0 = -w / 2 + 0.03 + i * (w - 0.06) / n
        parts.append(box(x0 + 0.01, x0 + (w - 0.06) / n - 0.01, -d / 2, -d / 2 + 0.02, 0.1, h - 0.05, "detail"))
    return parts


def _tv(w, d, h, alt):
    base_h = 0.04
    parts = [box(-w * 0.15, w * 0.15, -d / 2, d / 2, 0, base_h, "accent")]
    parts.append(box(-0.04, 0.04, -0.02, 0.04, base_h, 0.15, "accent"))
    parts.append(box(-w / 2, w / 2, -0.03, 0.03, 0.12, h, "body"))
    parts.append(box(-w / 2 + 0.03, w / 2 - 0.03, -0.035, -0.03, 0.15, h - 0.03, "detail"))
    if alt:
        parts[0] = box(-w / 2 + 0.05, -w / 2 + 0.15, -d / 2, d / 2, 0, base_h, "accent")
        parts.append(box(w / 2 - 0.15, w / 2 - 0.05, -d / 2, d / 2, 0, base_h, "accent"))
    return parts


def _chair(w, d, h, alt):
    seat = 0.45
    parts = [
        box(-w / 2, w / 2, -d / 2, d / 2, seat - 0.05, seat, "body"),
        *_legs(w, d, seat - 0.05, 0.04, "accent", alt),
    ]
    if alt:
        parts.append(box(-w / 2, w / 2, d / 2 - 0.04, d / 2, seat, h, "body"))
    else:
        for sx in (-1, 1):
            parts.append(box(sx * (w / 2 - 0.02) - 0.02, sx * (w / 2 - 0.02) + 0.02, d / 2 - 0.04, d / 2, seat, h, "accent"))
        parts.append(box(-w / 2, w / 2, d / 2 - 0.04, d / 2, h - 0.2, h, "body"))
    parts.append(box(-w / 2 + 0.03, w / 2 - 0.03, -d / 2 + 0.03, d / 2 - 0.05, seat, seat + 0.03, "detail"))
    return parts


def _desk(w, d, h, alt):
    parts = [box(-w / 2, w / 2, -d / 2, d / 2, h - 0.04, h, "body")]
    if alt:
        parts += _legs(w, d, h - 0.04, 0.05, "accent")
    else:
        parts.append(box(-w / 2, -w / 2 + 0.45, -d / 2, d / 2, 0, h - 0.04, "accent"))
        parts.append(box(w / 2 - 0.04, w / 2, -d / 2, d / 2, 0, h - 0.04, "accent"))
        parts.append(box(-w / 2 + 0.05, -w / 2 + 0.4, -d / 2 - 0.005, -d / 2, 0.1, h - 0.1, "detail"))
    return parts


def _office_chair(w, d, h, alt):
    parts = [cyl(0, 0, w / 2, 0, 0.06, "accent"), cyl(0, 0, 0.03, 0.06, 0.42, "accent")]
    parts.append(box(-w / 2 + 0.06, w / 2 - 0.06, -d / 2 + 0.04, d / 2 - 0.1, 0.42, 0.5, "body"))
    parts.append(box(-w / 2 + 0.08, w / 2 - 0.08, d / 2 - 0.1, d / 2, 0.5, h, "body"))
    if not alt:
        for sx in (-1, 1):
            parts.append(box(sx * (w / 2 - 0.03) - 0.03, sx * (w / 2 - 0.03) + 0.03, -d / 2 + 0.1, d / 2 - 0.15, 0.6, 0.64, "detail"))
    return parts


def _bookshelf(w, d, h, alt):
    t = 0.03
    parts = [
        box(-w / 2, -w / 2 + t, -d / 2, d / 2, 0, h, "body"),
        box(w / 2 - t, w / 2, -d / 2, d / 2, 0, h, "body"),
        box(-w / 2, w / 2, d / 2 - 0.01, d / 2, 0, h, "body"),
    ]
    shelves = 4 if alt else 5
    for i in range(shelves + 1):
        z = i * (h - t) / shelves
        parts.append(box(-w / 2 + t, w / 2 - t, -d / 2, d / 2, z, z + t, "body"))
        if i < shelves:
            fill = 0.55 if (i % 2) else 0.8
            parts.append(box(-w / 2 + t + 0.02, -w / 2 + t + (w - 2 * t) * fill, -d / 2 + 0.05, d / 2 - 0.02, z + t, z + t + (h / shelves) * 0.6, "detail" if i % 2 else "accent"))
    return parts


def _lamp(w, d, h, alt):
    base = cyl(0, 0, w * 0.3, 0, 0.03, "accent") if not alt else box(-w * 0.25, w * 0.25, -d * 0.25, d * 0.25, 0, 0.04, "accent")
    return [
        base,
        cyl(0, 0, 0.012, 0.03, h * 0.6, "accent"),
        cyl(0, 0, w / 2, h * 0.55, h, "body") if not alt else box(-w / 2, w / 2, -d / 2, d / 2, h * 0.55, h, "body"),
        cyl(0, 0, w * 0.15, h * 0.5, h * 0.6, "detail"),
    ]


def _rug(w, d, h, alt):
    parts = [box(-w / 2, w / 2, -d / 2, d / 2, 0, h * 0.5, "body")]
    inset = 0.12 if alt else 0.2
    parts.append(box(-w / 2 + inset, w / 2 - inset, -d / 2 + inset, d / 2 - inset, h * 0.5, h, "accent"))
    if not alt:
        parts.append(box(-w / 2 + 0.45, w / 2 - 0.45, -d / 2 + 0.35, d / 2 - 0.35, h * 0.5, h, "detail"))
    return parts


def _plant(w, d, h, alt):
    pot_h = h * 0.3
    parts = [cyl(0, 0, w * 0.3, 0, pot_h, "accent") if not alt else box(-w * 0.28, w * 0.28, -d * 0.28, d * 0.28, 0, pot_h, "accent")]
    parts.append(cyl(0, 0, 0.02, pot_h, h * 0.6, "detail"))
    parts.append(cyl(0, 0, w / 2, h * 0.45, h, "body"))
    if not alt:
        parts.append(cyl(w * 0.15, -d * 0.1, w * 0.3, h * 0.35, h * 0.75, "body"))
    return parts


def _toilet(w, d, h, alt):
    parts = [
        box(-w * 0.3, w * 0.3, -d * 0.2, d * 0.25, 0, 0.38, "body"),
        box(-w / 2, w / 2, d * 0.25, d / 2, 0.38, h, "body"),
        cyl(0, -d * 0.12, w * 0.35, 0.42, 0.44, "accent"),
    ]
    if alt:
        parts.append(box(-w / 2, w / 2, -d / 2, d * 0.2, 0.3, 0.42, "body"))
    else:
        parts.append(cyl(0, -d * 0.12, w / 2, 0.3, 0.42, "body"))
        parts.append(box(-w * 0.3, w * 0.3, d * 0.26, d * 0.45, h, h + 0.02, "detail"))
    return parts


def _sink(w, d, h, alt):
    parts = [box(-w / 2, w / 2, -d / 2 + 0.02, d / 2, 0.1 if alt else 0, h - 0.08, "accent")]
    if alt:
        parts += _legs(w, d, 0.1, 0.04, "detail")
    parts.append(box(-w / 2, w / 2, -d / 2, d / 2, h - 0.08, h - 0.05, "body"))
    parts.append(box(-w / 2 + 0.08, w / 2 - 0.08, -d / 2 + 0.06, d / 2 - 0.12, h - 0.05, h - 0.04, "detail"))
    parts.append(cyl(0, d / 2 - 0.06, 0.025, h - 0.05, h, "detail"))
    return parts


def _bathtub(w, d, h, alt):
    t = 0.08
    parts = [
        box(-w / 2, w / 2, -d / 2, d / 2, 0, 0.12, "body"),
        box(-w / 2, -w / 2 + t, -d / 2, d / 2, 0.12, h, "body"),
        box(w / 2 - t, w / 2, -d / 2, d / 2, 0.12, h, "body"),
        box(-w / 2 + t, w / 2 - t, -d / 2, -d / 2 + t, 0.12, h, "body"),
        box(-w / 2 + t, w / 2 - t, d / 2 - t, d / 2, 0.12, h, "body"),
        box(-w / 2 + t, w / 2 - t, -d / 2 + t, d / 2 - t, 0.12, 0.2, "accent"),
    ]
    if not alt:
        parts.append(cyl(w / 2 - 0.2, 0, 0.03, h - 0.1, h + 0.04, "detail"))
    return parts


def _counter(w, d, h, alt):
    parts = [box(-w / 2, w / 2, -d / 2 + 0.03, d / 2, 0.1, h - 0.04, "accent"), box(-w / 2 + 0.03, w / 2 - 0.03, -d / 2 + 0.08, d / 2, 0, 0.1, "detail")]
    parts.append(box(-w / 2, w / 2, -d / 2, d / 2, h - 0.04, h, "body"))
    doors = 3 if alt else 4
    for i in range(doors):
        x0 = -w / 2 + i * w / doors
        parts.append(box(x0 + 0.02, x0 + w / doors - 0.02, -d / 2 + 0.01, -d / 2 + 0.03, 0.14, h - 0.1, "detail"))
    return parts


def _stool(w, d, h, alt):
    seat = cyl(0, 0, w / 2, h - 0.05, h, "body") if not alt else box(-w / 2, w / 2, -d / 2, d / 2, h - 0.05, h, "body")
    return [seat, *_legs(w * 0.8, d * 0.8, h - 0.05, 0.035, "accent", not alt), box(-w * 0.35, w * 0.35, -d * 0.35, d * 0.35, 0.25, 0.28, "detail")]


def _fridge(w, d, h, alt):
    split = 0.6 if alt else 0.68
    return [
        box(-w / 2, w / 2, -d / 2 + 0.04, d / 2, 0, h, "body"),
        box(-w / 2 + 0.01, w / 2 - 0.01, -d / 2, -d / 2 + 0.04, 0.05, h * split - 0.01, "body"),
        box(-w / 2 + 0.01, w / 2 - 0.01, -d / 2, -d / 2 + 0.04, h * split + 0.01, h - 0.02, "body"),
        box(w / 2 - 0.08, w / 2 - 0.05, -d / 2 - 0.0, -d / 2 + 0.01, h * split + 0.1, h * split + 0.5, "accent"),
        box(-w / 2, w / 2, -d / 2 + 0.04, d / 2, h - 0.01, h, "detail"),
    ]


def _stove(w, d, h, alt):
    parts = [box(-w / 2, w / 2, -d / 2 + 0.02, d / 2, 0, h - 0.02, "body"), box(-w / 2, w / 2, -d / 2 + 0.02, d / 2, h - 0.02, h, "accent")]
    parts.append(box(-w / 2 + 0.06, w / 2 - 0.06, -d / 2, -d / 2 + 0.02, 0.1, h * 0.7, "accent"))
    for sx in (-1, 1):
        for sy in (-1, 1):
            r = 0.09 if alt else 0.11
            parts.append(cyl(sx * w * 0.22, sy * d * 0.2 + 0.02, r, h, h + 0.01, "detail"))
    return parts


def _whiteboard(w, d, h, alt):
    parts = [box(-w / 2 + 0.05, w / 2 - 0.05, -0.02, 0.02, h * 0.4, h, "body")]
    parts.append(box(-w / 2 + 0.05, w / 2 - 0.05, -0.03, -0.02, h * 0.4 + 0.03, h - 0.03, "detail"))
    for sx in (-1, 1):
        parts.append(box(sx * (w / 2 - 0.03) - 0.025, sx * (w / 2 - 0.03) + 0.025, -0.025, 0.025, 0, h, "accent"))
        parts.append(box(sx * (w / 2 - 0.03) - 0.025, sx * (w / 2 - 0.03) + 0.025, -d / 2, d / 2, 0, 0.04, "accent"))
    if not alt:
        parts.append(box(-w / 2 + 0.05, w / 2 - 0.05, -0.1, 0.0, h * 0.4 - 0.02, h * 0.4, "accent"))
    return parts


def _cabinet(w, d, h, alt):
    parts = [box(-w / 2, w / 2, -d / 2 + 0.02, d / 2, 0.05, h, "body"), box(-w / 2 + 0.02, w / 2 - 0.02, -d / 2 + 0.02, d / 2 - 0.02, 0, 0.05, "accent")]
    n = 3 if alt else 2
    for i in range(n):
        z0 = 0.08 + i * (h - 0.1) / n
        parts.append(box(-w / 2 + 0.03, w / 2 - 0.03, -d / 2, -d / 2 + 0.02, z0, z0 + (h - 0.1) / n - 0.03, "detail"))
    return parts


@dataclass(frozen=True)
class Category:
    """An asset category: ``label`` (noun used in prompts), nominal ``size`` (w, d, h) in metres,
    ``placement`` hint for generators (``wall``, ``centre``, ``free`` or ``top`` = sits on
    furniture) and the ``colors`` of its body/accent/detail materials (distinct per category)."""

    label: str
    size: tuple[float, float, float]
    placement: str
    colors: tuple[Color, Color, Color]
    builder: Builder = field(compare=False, repr=False)

    @property
    def slug(self) -> str:
        """Folder name under ``assets/`` (label with underscores)."""
        return self.label.replace(" ", "_")


def _c(label, size, placement, colors, builder) -> Category:
    return Category(label, size, placement, colors, builder)


# Colours: linear RGB 0..1, chosen so every category's body colour is distinct.
CATEGORIES: dict[str, Category] = {
    c.label: c
    for c in (
        _c("bed", (1.6, 2.1, 1.0), "wall", ((0.45, 0.28, 0.15), (0.85, 0.85, 0.9), (0.3, 0.45, 0.8)), _bed),
        _c("nightstand", (0.5, 0.45, 0.55), "wall", ((0.62, 0.42, 0.25), (0.2, 0.13, 0.08), (0.8, 0.7, 0.5)), _nightstand),
        _c("wardrobe", (1.2, 0.6, 2.0), "wall", ((0.9, 0.88, 0.8), (0.3, 0.3, 0.3), (0.7, 0.6, 0.45)), _wardrobe),
        _c("dresser", (1.2, 0.5, 0.85), "wall", ((0.55, 0.2, 0.18), (0.15, 0.1, 0.08), (0.85, 0.75, 0.55)), _dresser),
        _c("sofa", (2.1, 0.9, 0.85), "wall", ((0.15, 0.3, 0.6), (0.25, 0.45, 0.8), (0.1, 0.1, 0.1)), _sofa),
        _c("armchair", (0.85, 0.85, 0.9), "free", ((0.7, 0.5, 0.1), (0.9, 0.75, 0.3), (0.2, 0.12, 0.05)), _armchair),
        _c("coffee table", (1.1, 0.6, 0.45), "centre", ((0.25, 0.15, 0.1), (0.1, 0.1, 0.1), (0.5, 0.35, 0.2)), _coffee_table),
        _c("tv stand", (1.6, 0.45, 0.5), "wall", ((0.2, 0.2, 0.22), (0.05, 0.05, 0.05), (0.45, 0.45, 0.5)), _tv_stand),
        _c("tv", (1.2, 0.25, 0.75), "top", ((0.03, 0.03, 0.04), (0.25, 0.25, 0.28), (0.1, 0.2, 0.35)), _tv),
        _c("dining table", (1.8, 0.9, 0.75), "centre", ((0.7, 0.5, 0.3), (0.4, 0.25, 0.12), (0.6, 0.4, 0.2)), _table),
        _c("chair", (0.45, 0.5, 0.9), "free", ((0.8, 0.35, 0.1), (0.3, 0.18, 0.08), (0.95, 0.6, 0.3)), _chair),
        _c("desk", (1.4, 0.7, 0.75), "wall", ((0.85, 0.8, 0.65), (0.35, 0.35, 0.38), (0.6, 0.55, 0.45)), _desk),
        _c("office chair", (0.6, 0.6, 1.0), "free", ((0.08, 0.08, 0.1), (0.5, 0.5, 0.55), (0.2, 0.2, 0.25)), _office_chair),
        _c("bookshelf", (1.0, 0.35, 1.9), "wall", ((0.4, 0.22, 0.1), (0.7, 0.15, 0.15), (0.15, 0.35, 0.6)), _bookshelf),
        _c("lamp", (0.3, 0.3, 0.5), "top", ((0.98, 0.9, 0.6), (0.6, 0.55, 0.35), (1.0, 1.0, 0.85)), _lamp),
        _c("rug", (2.0, 1.4, 0.02), "centre", ((0.6, 0.1, 0.15), (0.85, 0.7, 0.5), (0.2, 0.3, 0.45)), _rug),
        _c("plant", (0.45, 0.45, 0.9), "free", ((0.15, 0.55, 0.15), (0.7, 0.35, 0.2), (0.3, 0.2, 0.1)), _plant),
        _c("toilet", (0.4, 0.7, 0.8), "wall", ((0.97, 0.97, 0.97), (0.75, 0.8, 0.85), (0.6, 0.6, 0.65)), _toilet),
        _c("sink", (0.6, 0.5, 0.9), "wall", ((0.9, 0.95, 1.0), (0.35, 0.5, 0.45), (0.7, 0.7, 0.75)), _sink),
        _c("bathtub", (1.7, 0.8, 0.6), "wall", ((0.92, 0.92, 0.88), (0.55, 0.75, 0.9), (0.7, 0.7, 0.72)), _bathtub),
        _c("counter", (2.4, 0.65, 0.92), "wall", ((0.3, 0.3, 0.32), (0.55, 0.7, 0.6), (0.8, 0.8, 0.78)), _counter),
        _c("stool", (0.4, 0.4, 0.75), "free", ((0.75, 0.1, 0.1), (0.7, 0.7, 0.72), (0.4, 0.4, 0.42)), _stool),
        _c("fridge", (0.75, 0.7, 1.8), "wall", ((0.8, 0.83, 0.86), (0.2, 0.2, 0.22), (0.6, 0.62, 0.65)), _fridge),
        _c("stove", (0.75, 0.65, 0.92), "wall", ((0.6, 0.6, 0.62), (0.12, 0.12, 0.12), (0.35, 0.05, 0.05)), _stove),
        _c("whiteboard", (1.8, 0.5, 1.9), "wall", ((0.98, 0.98, 0.98), (0.5, 0.5, 0.55), (0.85, 0.9, 0.95)), _whiteboard),
        _c("cabinet", (0.8, 0.5, 1.1), "wall", ((0.35, 0.45, 0.3), (0.15, 0.2, 0.12), (0.65, 0.7, 0.55)), _cabinet),
    )
}


def category(label: str) -> Category:
    """The category for ``label``; raises :class:`SceneError` naming the known labels."""
    try:
        return CATEGORIES[label]
    except KeyError:
        raise SceneError(
            f"unknown asset category {label!r}",
            hint=f"use one of: {', '.join(sorted(CATEGORIES))}",
        ) from None


def asset_path(label: str, variant: str) -> str:
    """Scene-set-relative path of a variant's OBJ, e.g. ``assets/coffee_table/a.obj``."""
    return f"assets/{category(label).slug}/{variant}.obj"


def retrieval_score(label: str, variant: str) -> float:
    """The fixed retrieval score of a variant (a: 0.82–0.95, b: 0.55–0.75, c: 0.08–0.25)."""
    lo, hi = {"a": (0.82, 0.95), "b": (0.55, 0.75), "c": (0.08, 0.25)}[variant]
    frac = int.from_bytes(hashlib.sha256(f"{label}/{variant}".encode()).digest()[:4], "big") / 2**32
    return round(lo + (hi - lo) * frac, 3)


def candidates(label: str) -> tuple[AssetCandidate, ...]:
    """All variants of ``label`` with their retrieval scores, best first."""
    cands = [AssetCandidate(asset_path(label, v), retrieval_score(label, v)) for v in VARIANTS]
    return tuple(sorted(cands, key=lambda c: (-c.retrieval_score, c.asset)))


def _shade(color: Color, factor: float) -> Color:
    return tuple(min(1.0, max(0.0, c * factor)) for c in color)  # type: ignore[return-value]


def _poor_color(color: Color) -> Color:
    # Complement, pulled towards a muddy grey: clearly the wrong colour, still one flat material.
    comp = tuple(1.0 - c for c in color)
    return tuple(round(0.5 * c + 0.5 * 0.45, 4) for c in comp)  # type: ignore[return-value]


def build_variant(label: str, variant: str) -> tuple[Mesh, dict[str, Color]]:
    """The fitted mesh and materials of one variant (see the module docstring)."""
    cat = category(label)
    prefix = f"{cat.slug}_{variant}"
    w, d, h = cat.size
    if variant == "c":
        mesh = Mesh()
        mesh.add(box(-w / 2, w / 2, -d / 2, d / 2, 0, h, f"{prefix}_body"))
        return mesh, {f"{prefix}_body": _poor_color(cat.colors[0])}
    if variant not in ("a", "b"):
        raise SceneError(f"unknown asset variant {variant!r}", hint="use a, b or c")
    alt = variant == "b"
    factor = 0.8 if alt else 1.0
    names = ("body", "accent", "detail")
    materials = {f"{prefix}_{n}": _shade(col, factor) for n, col in zip(names, cat.colors, strict=True)}
    mesh = Mesh()
    for part in cat.builder(w, d, h, alt):
        mesh.add(Part(part.kind, part.x0, part.x1, part.y0, part.y1, part.z0, part.z1, f"{prefix}_{part.material}"))
    used = {m: c for m, c in materials.items() if m in mesh.faces}
    return mesh.fitted(cat.size), used


def write_assets(root: str | Path) -> list[str]:
    """Write every variant's OBJ and MTL and ``catalogue.json`` under ``<root>/assets/``;
    returns the written paths relative to ``root`` (sorted). Byte-deterministic."""
    root = Path(root)
    written = []
    for label in sorted(CATEGORIES):
        cat = CATEGORIES[label]
        folder = root / "assets" / cat.slug
        folder.mkdir(parents=True, exist_ok=True)
        for variant in VARIANTS:
            mesh, materials = build_variant(label, variant)
            obj = write_obj(mesh, f"{cat.slug}_{variant}", f"{variant}.mtl")
            (folder / f"{variant}.obj").write_text(obj, encoding="utf-8", newline="\n")
            (folder / f"{variant}.mtl").write_text(write_mtl(materials), encoding="utf-8", newline="\n")
            written += [f"assets/{cat.slug}/{variant}.obj", f"assets/{cat.slug}/{variant}.mtl"]
    write_json_atomic(root / "assets" / "catalogue.json", catalogue(), indent=1, ensure_ascii=True)
    written.append("assets/catalogue.json")
    return sorted(written)


def catalogue() -> dict[str, object]:
    """JSON-ready catalogue: label → slug, nominal size, placement and scored variants."""
    return {
        "schema": "t3d-assets/1",
        "conventions": "metres, z up, front faces -y, bbox = [-w/2,w/2]x[-d/2,d/2]x[0,h]",
        "categories": {
            label: {
                "slug": cat.slug,
                "size": list(cat.size),
                "placement": cat.placement,
                "variants": [c.to_dict() for c in candidates(label)],
            }
            for label, cat in sorted(CATEGORIES.items())
        },
    }
