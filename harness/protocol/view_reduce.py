"""How a protocol turns its per-view scores into one score per scene.

``mean`` (MATE-3D, 3DCodeBench), ``max`` (the best view), ``trimmed_mean`` (the mean with the
highest and the lowest view dropped, as RichDreamer's CLIP score), ``icosphere_max``
(T3Bench's quality score: the best lens per icosphere vertex, three rounds of averaging each
vertex with its neighbours, then the best vertex). A failed view fails the scene: a failure
is never averaged away.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from harness.core.errors import ProtocolError

AGGREGATIONS = ("mean", "max", "trimmed_mean", "icosphere_max")
ICOSPHERE_ROUNDS = 3  # T3Bench's run_eval_quality.py convolves the scores three times


def check_aggregation(name: str) -> str:
    if name not in AGGREGATIONS:
        raise ProtocolError(f"unknown aggregation {name!r}", where="aggregation",
                            hint=f"use one of {', '.join(AGGREGATIONS)}")  # fmt: skip
    return name


def trimmed_mean(values: np.ndarray) -> float:
    """Mean without the one highest and the one lowest value (all values when fewer than 3)."""
    v = np.sort(np.asarray(values, dtype=float))
    return float(v.mean() if v.size < 3 else v[1:-1].mean())


def icosphere_max(values: np.ndarray, neighbours: Sequence[Sequence[int]], lenses: int) -> float:
    """T3Bench's quality reduction of ``values`` ((V × lenses,), vertex-major)."""
    v = np.asarray(values, dtype=float)
    if v.size != len(neighbours) * lenses:
        raise ProtocolError(f"{v.size} view scores for {len(neighbours)} vertices x {lenses} lenses",
                            where="icosphere_max")  # fmt: skip
    per_vertex = v.reshape(len(neighbours), lenses).max(axis=1)
    for _ in range(ICOSPHERE_ROUNDS):
        per_vertex = np.array(
            [(per_vertex[i] + per_vertex[list(n)].sum()) / (len(n) + 1) for i, n in enumerate(neighbours)]
        )
    return float(per_vertex.max())


def aggregate(
    values: Sequence[float],
    how: str,
    *,
    neighbours: Sequence[Sequence[int]] | None = None,
    lenses: int = 1,
) -> float:
    """One scene score from its per-view scores (NaN when any view is NaN)."""
    check_aggregation(how)
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        raise ProtocolError("no view scores to aggregate", where="aggregation")
    if not np.isfinite(v).all():
        return math.nan
    if v.size == 1:
        return float(v[0])
    if how == "mean":
        return float(math.fsum(v) / v.size)
    if how == "max":
        return float(v.max())
    if how == "trimmed_mean":
        return trimmed_mean(v)
    if neighbours is None:
        raise ProtocolError("icosphere_max needs the icosphere's neighbours", where="aggregation")
    return icosphere_max(v, neighbours, lenses)
