"""The flip region: how much of the protocol space changes a verdict, and where.

For a generator pair (A, B) the verdict is "A scores above B" (means over prompts); without a
pair it is "the c0 winner is the top generator". The region is the set of points where the
verdict differs from c0's. Its share is estimated from a scrambled Sobol sample of the unit
cube (``scipy.stats.qmc.Sobol``, mapped onto the space by :meth:`Space.from_unit`), with a
95 % Wilson interval (:func:`harness.stats.intervals.share_interval`): Sobol points are not
independent (they are more even than random ones), so the binomial interval is conservative
for them.

:func:`describe` says in words where the flips sit: for each float axis the range the
flipping points span, when it is at most half the domain; for each choice axis the choices
they take, when they are at most half of them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from harness.core.numbers import finite_or_none
from harness.search.space import Point, Space
from harness.stats.intervals import share_interval

#: An axis carries the flips when the flipping points span at most this share of its domain
#: (or of its choices): for 6 flips spread at random over a float axis, a span that narrow
#: has probability 0.005.
NARROW = 0.25
MIN_DESCRIBED = 4  # fewer flips than this say nothing about where


def sobol_points(space: Space, n: int, seed: int) -> list[Point]:
    """``n`` points of a scrambled Sobol sequence over ``space`` (n a power of 2 is balanced)."""
    from scipy.stats import qmc

    sampler = qmc.Sobol(d=len(space.axes), scramble=True, seed=seed)
    m = max(math.ceil(math.log2(max(n, 1))), 0)
    unit = sampler.random_base2(m)[:n]
    return [space.from_unit(u) for u in unit]


def flipped(generators: Sequence[str], pair: tuple[str, str] | None, base: np.ndarray,
            moved: np.ndarray) -> bool | None:  # fmt: skip
    """Whether ``moved`` (``(G, P)``) changes c0's verdict; ``None`` when undefined (a failed
    cell, or c0 ties the pair or the top)."""
    if not (np.isfinite(base).all() and np.isfinite(moved).all()):
        return None
    m0, m1 = base.mean(axis=1), moved.mean(axis=1)
    if pair is not None:
        a, b = (list(generators).index(g) for g in pair)
        s0, s1 = np.sign(m0[a] - m0[b]), np.sign(m1[a] - m1[b])
        return None if s0 == 0 else bool(s1 != s0)
    top0 = np.flatnonzero(m0 == m0.max())
    if len(top0) != 1:
        return None
    return bool(not (m1[top0[0]] == m1.max() and (m1 == m1.max()).sum() == 1))


@dataclass(frozen=True)
class FlipRegion:
    """The estimate: ``share`` of the ``n`` defined sample points that flip (``flips`` of
    them), its 95 % ``interval``, ``undefined`` points (failed), the verdict (``pair`` or the
    c0 winner), and ``where`` (:func:`describe`). ``points``: (printed point, flipped) pairs."""

    verdict: str
    share: float
    interval: tuple[float, float]
    flips: int
    n: int
    undefined: int
    where: str
    points: tuple[tuple[str, bool | None], ...] = field(default=(), repr=False)

    def to_dict(self) -> dict[str, object]:
        return {"verdict": self.verdict,
                "share": finite_or_none(self.share),
                "interval": [finite_or_none(x) for x in self.interval],
                "flips": self.flips, "points": self.n, "undefined": self.undefined,
                "where": self.where}  # fmt: skip


def describe(space: Space, points: Sequence[Point], flips: Sequence[bool]) -> str:
    """Where the flipping points sit, in words (module doc)."""
    hit = [p for p, f in zip(points, flips, strict=True) if f]
    if not hit:
        return "no sampled point flips the verdict"
    if len(hit) == len(points):
        return "every sampled point flips the verdict"
    head = f"{len(hit)} of {len(points)} sampled points flip"
    if len(hit) < MIN_DESCRIBED:
        return f"{head}: too few to say where (sample more points)"
    parts = []
    for i, axis in enumerate(space.axes):
        d = axis.domain
        if d.kind == "float":
            values = [float(p[i]) for p in hit]
            lo, hi = min(values), max(values)
            if hi - lo <= NARROW * (d.high - d.low):
                unit = f" {d.unit}" if d.unit and d.unit != "°" else d.unit
                parts.append(f"{axis.name} {d.text(lo)}–{d.text(hi)}{unit}")
        else:
            taken = sorted({p[i] for p in hit}, key=axis.choices.index)
            if len(taken) <= NARROW * len(axis.choices) and len(taken) <= len(hit) / 2:
                parts.append(f"{axis.name} in {{{', '.join(taken)}}}")
    where = " and ".join(parts) if parts else "spread over the whole space (no axis narrows them)"
    return f"{head}: {where}"


def flip_region(
    space: Space, points: Sequence[Point], outcomes: Sequence[bool | None], verdict: str
) -> FlipRegion:
    """The :class:`FlipRegion` of ``points`` with their ``outcomes`` (:func:`flipped`)."""
    defined = [(p, f) for p, f in zip(points, outcomes, strict=True) if f is not None]
    k, n = sum(1 for _, f in defined if f), len(defined)
    share = k / n if n else math.nan
    where = describe(space, [p for p, _ in defined], [bool(f) for _, f in defined]) if n else (
        "every sampled point failed")  # fmt: skip
    return FlipRegion(verdict, share, share_interval(k, n), k, n, len(points) - n, where,
                      tuple((space.text(p), f) for p, f in zip(points, outcomes, strict=True)))  # fmt: skip
