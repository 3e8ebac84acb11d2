"""What the search maximises: how much one configuration changes a verdict relative to c0.

Inputs are score matrices ``(G, P)``: one row per generator, one column per prompt (a scene
is one generator's output for one prompt), at c0 (``base``) and at the searched point
(``moved``). Every objective is an *effect*: 0 when the point changes nothing, larger when it
changes more, NaN when undefined (a failed cell is never a score).

* ``shift``: the study's ρ of one configuration against c0: the within-scene variance over the
  two configurations, ``mean_s[(d_s / 2)^2]`` (``d_s`` = moved − base of scene ``s``), over the
  variance of the generators' c0 means, ``Var_g(mean_p base[g, p])`` (population variances).
  ρ > 1: the point moves scores more than the generators differ.
* ``ranking``: the Kendall distance of the generators' order at the point from c0's: the share
  of generator pairs ordered strictly at c0 whose order the point reverses (0 .. 1).
* ``pair:A,B``: how far the point reverses the order of generators A and B:
  ``-sign(c0 gap) * (moved gap)`` with gap = mean_A − mean_B; > 0 means B now beats A (if A won
  at c0). Undefined when A and B tie at c0.

The statistic of the held-out confirmation is the same function of a prompt-bootstrap
resample (:mod:`harness.search.confirm`), so the discovery and held-out effects are one
quantity measured twice.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.core.errors import AuditError
from harness.stats.rho import generator_signal
from harness.vocab.metrics import (
    MAX_WORST_CASE_PAIR_REVERSAL,
    MAX_WORST_CASE_RANKING_DISTANCE,
    MAX_WORST_CASE_RHO,
)

SHIFT = "shift"
RANKING = "ranking"
PAIR = "pair"


class ObjectiveError(AuditError):
    """A malformed ``--objective`` or one that does not fit the scene set."""


@dataclass(frozen=True)
class Objective:
    """One objective: ``kind`` (shift, ranking, pair), the pair's generators for ``pair``,
    the generator names the matrices' rows follow, and the threshold (metric registry name)
    a confirmed effect must exceed."""

    kind: str
    generators: tuple[str, ...]
    pair: tuple[str, str] | None = None

    @property
    def text(self) -> str:
        return f"{PAIR}:{self.pair[0]},{self.pair[1]}" if self.pair else self.kind

    @property
    def threshold(self) -> str:
        """The threshold (``vocab/metrics.py``) a held-out lower bound must exceed."""
        return {SHIFT: MAX_WORST_CASE_RHO, RANKING: MAX_WORST_CASE_RANKING_DISTANCE,
                PAIR: MAX_WORST_CASE_PAIR_REVERSAL}[self.kind]  # fmt: skip

    @property
    def label(self) -> str:
        return {SHIFT: "ρ against c0", RANKING: "Kendall distance from c0's ranking",
                PAIR: f"reversal of {self.pair[0] if self.pair else ''} vs "
                      f"{self.pair[1] if self.pair else ''}"}[self.kind]  # fmt: skip

    def effect(self, base: np.ndarray, moved: np.ndarray) -> float:
        """The effect of ``moved`` against ``base`` (both ``(G, P)``); NaN when undefined."""
        base = np.asarray(base, dtype=np.float64)
        moved = np.asarray(moved, dtype=np.float64)
        if base.shape != moved.shape or base.ndim != 2 or base.shape[0] != len(self.generators):
            raise ObjectiveError(
                f"score matrices of shape {base.shape} and {moved.shape} for "
                f"{len(self.generators)} generators", where="objective",
            )  # fmt: skip
        if not (np.isfinite(base).all() and np.isfinite(moved).all()):
            return float("nan")
        if self.kind == SHIFT:
            return shift_rho(base, moved)
        if self.kind == RANKING:
            return kendall_distance(base.mean(axis=1), moved.mean(axis=1))
        assert self.pair is not None
        a, b = (self.generators.index(g) for g in self.pair)
        return pair_reversal(base[a] - base[b], moved[a] - moved[b])


def shift_rho(base: np.ndarray, moved: np.ndarray) -> float:
    """ρ of one configuration against c0 (module doc); NaN when the c0 means do not vary.
    The denominator is the study's generator signal (:func:`harness.stats.rho.generator_signal`,
    the same float on finite scores); the numerator is the two-level scene variance in closed
    form, (d / 2)²."""
    within = float(np.mean(((moved - base) / 2.0) ** 2))
    between = generator_signal(base)
    return within / between if between > 0 else float("nan")


def kendall_distance(base_means: np.ndarray, moved_means: np.ndarray) -> float:
    """Share of the pairs strictly ordered by ``base_means`` that ``moved_means`` orders the
    other way (a tie at the point counts half); NaN when c0 orders no pair."""
    n = len(base_means)
    i, j = np.triu_indices(n, k=1)
    s0 = np.sign(base_means[i] - base_means[j])
    s1 = np.sign(moved_means[i] - moved_means[j])
    ordered = s0 != 0
    if not ordered.any():
        return float("nan")
    flips = np.where(s1[ordered] == 0, 0.5, (s0[ordered] * s1[ordered] < 0).astype(float))
    return float(flips.mean())


def pair_reversal(base_gap: np.ndarray, moved_gap: np.ndarray) -> float:
    """``-sign(mean base gap) * mean moved gap`` (gaps per prompt); NaN on a c0 tie."""
    sign = float(np.sign(np.mean(base_gap)))
    return -sign * float(np.mean(moved_gap)) if sign else float("nan")


def parse_objective(text: str, generators: tuple[str, ...]) -> Objective:
    """``shift``, ``ranking`` or ``pair:A,B`` (two distinct generators of the scene set)."""
    hint = "use shift, ranking or pair:A,B with two generators of the scene set"
    if text in (SHIFT, RANKING):
        if text == RANKING and len(generators) < 2:
            raise ObjectiveError("a ranking needs at least 2 generators", where="--objective")
        return Objective(text, generators)
    kind, sep, rest = str(text).partition(":")
    if kind == PAIR and sep:
        names = tuple(n.strip() for n in rest.split(","))
        if len(names) != 2 or names[0] == names[1] or not all(names):
            raise ObjectiveError(f"malformed pair objective {_shown(text)}", where="--objective", hint=hint)
        unknown = [n for n in names if n not in generators]
        if unknown:
            raise ObjectiveError(f"generator {_shown(unknown[0])} is not in the scene set", where="--objective",
                                 hint=f"generators: {', '.join(generators)}")  # fmt: skip
        return Objective(PAIR, generators, (names[0], names[1]))
    raise ObjectiveError(f"unknown objective {_shown(text)}", where="--objective", hint=hint)


def _shown(text: str, limit: int = 60) -> str:
    return repr(text) if len(text) <= limit else repr(text[: limit - 3] + "...")
