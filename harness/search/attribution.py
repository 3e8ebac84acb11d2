"""What breaks the evaluator: the worst point's effect taken apart one axis at a time.

The search's worst point usually moves several axes at once (night light, a green background
and a 130 mm lens). For each axis on which it differs from c0, two points are measured on the
discovery prompts, against the same c0 scores as the search:

- *alone*: c0 with only this axis at the worst point's value: the effect this axis carries
  by itself;
- *without*: the worst point with only this axis back at c0's value: how much of the effect
  is left when this axis is undone.

An axis *carries* the effect when undoing it takes away at least half of it (``without`` at
most half the worst effect) or when it alone reaches half of it; the words name those axes, or
say that the effect needs several axes together. Costs 2 × (changed axes) configurations.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from harness.core.numbers import finite_or_none
from harness.search.space import Point, Space

#: The share of the worst effect an axis must take away (undone) or reach (alone) to carry it.
CARRY_SHARE = 0.5


@dataclass(frozen=True)
class AxisEffect:
    """One changed axis: its ``name``, the values at c0 and at the worst point (printed), the
    objective's effect with the axis ``alone`` changed and ``without`` it (NaN: not measured),
    and whether it ``carries`` the effect."""

    name: str
    c0: str
    worst: str
    alone: float
    without: float
    carries: bool

    def to_dict(self) -> dict[str, object]:
        return {"axis": self.name, "c0": self.c0, "worst": self.worst, "alone": finite_or_none(self.alone),
                "without": finite_or_none(self.without), "carries": self.carries}  # fmt: skip


@dataclass(frozen=True)
class Attribution:
    """The worst point's ``effect`` (discovery prompts) and one :class:`AxisEffect` per changed
    axis, largest ``alone`` first; ``text``: the finding in words."""

    effect: float
    axes: tuple[AxisEffect, ...]
    text: str

    @property
    def carrying(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.axes if a.carries)

    def to_dict(self) -> dict[str, object]:
        return {"effect": finite_or_none(self.effect), "carrying": list(self.carrying), "text": self.text,
                "axes": [a.to_dict() for a in self.axes]}  # fmt: skip


def changed_axes(space: Space, worst: Point) -> list[int]:
    """Indices of the axes on which ``worst`` differs from c0."""
    return [i for i, (a, b) in enumerate(zip(space.c0, worst, strict=True)) if a != b]


def ablation_points(space: Space, worst: Point) -> list[tuple[int, Point, Point]]:
    """For each changed axis i: (i, c0 with axis i from ``worst``, ``worst`` with axis i from c0)."""
    c0 = space.c0
    out = []
    for i in changed_axes(space, worst):
        alone = tuple(worst[j] if j == i else c0[j] for j in range(len(c0)))
        without = tuple(c0[j] if j == i else worst[j] for j in range(len(c0)))
        out.append((i, alone, without))
    return out


def carries(effect: float, alone: float, without: float, share: float = CARRY_SHARE) -> bool:
    """Whether an axis carries ``effect``: undone, at most ``1 − share`` of it is left; or,
    alone, it reaches ``share`` of it. An undefined or non-positive effect is carried by none."""
    if not (math.isfinite(effect) and effect > 0):
        return False
    undone = math.isfinite(without) and without <= (1.0 - share) * effect
    reaches = math.isfinite(alone) and alone >= share * effect
    return undone or reaches


def attribute(space: Space, worst: Point, effect: float, alone: Sequence[float], without: Sequence[float],
              label: str = "the effect") -> Attribution:  # fmt: skip
    """The :class:`Attribution` from the measured ``alone`` / ``without`` effects, one of each
    per changed axis in :func:`ablation_points` order."""
    idx = changed_axes(space, worst)
    if not (len(alone) == len(without) == len(idx)):
        raise ValueError(f"expected {len(idx)} alone and without effects, got {len(alone)} and {len(without)}")
    rows = [AxisEffect(space.axes[i].name, space.c0[i], worst[i], float(a), float(w), carries(effect, a, w))
            for i, a, w in zip(idx, alone, without, strict=True)]  # fmt: skip
    rows.sort(key=lambda r: (-(r.alone if math.isfinite(r.alone) else -math.inf), r.name))
    return Attribution(float(effect), tuple(rows), _words(rows, effect, label))


def _words(rows: Sequence[AxisEffect], effect: float, label: str) -> str:
    if not rows:
        return "the worst point is c0 itself: no axis to attribute"
    if not (math.isfinite(effect) and effect > 0):
        return f"{label} at the worst point is not positive: nothing to attribute"
    carrying = [r for r in rows if r.carries]

    def one(r: AxisEffect) -> str:
        return (f"{r.name} {r.c0} → {r.worst} (alone {_num(r.alone)}, "
                f"{_num(r.without)} left without it)")  # fmt: skip

    if carrying:
        named = "; ".join(one(r) for r in carrying)
        rest = len(rows) - len(carrying)
        tail = f"; the other {rest} changed axes add little" if rest else ""
        return f"{label} {_num(effect)} is carried by {named}{tail}"
    return (f"{label} {_num(effect)} needs several of the {len(rows)} changed axes together: "
            f"no single one carries half of it (largest alone: {one(rows[0])})")


def _num(value: float) -> str:
    return f"{value:.3g}" if math.isfinite(value) else "not measured"
