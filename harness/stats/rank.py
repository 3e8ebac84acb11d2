"""Rank stability over one factor's levels (study §3.4, Table 16).

Raters are levels, items are generators ranked by L(m; level) = mean over prompts.
Exact aggregate ties stay ties: they get average ranks (with the tie correction in W) and a
level whose top score is shared has no unique winner.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def kendall_w(ratings: np.ndarray) -> float:
    """Tie-corrected Kendall's coefficient of concordance.

    ``ratings``: (m, n) — m raters (levels) each scoring n items (generators); larger is
    better but the direction does not change W. Items with a NaN anywhere are dropped.
    W = 12·S / (m²(n³−n) − m·Σ_j T_j), S = Σ_i (R_i − m(n+1)/2)², T_j = Σ(t³−t) over the tie
    groups of rater j. Returns W in [0, 1]; NaN when m < 2, n < 2 or every rater ties
    every item.
    """
    r = np.asarray(ratings, dtype=np.float64)
    r = r[:, np.isfinite(r).all(axis=0)]
    m, n = r.shape
    if m < 2 or n < 2:
        return float("nan")
    ranks, ties = _average_ranks(r)
    col = ranks.sum(axis=0)
    s = float(((col - m * (n + 1) / 2.0) ** 2).sum())
    den = m * m * (n**3 - n) - m * ties
    return 12.0 * s / den if den > 0 else float("nan")


def _average_ranks(r: np.ndarray) -> tuple[np.ndarray, float]:
    """Per-row ranks 1..n with ties averaged, and Σ over rows and tie groups of (t³ − t).

    ``r`` (m, n). Pairwise comparison is O(m·n²), cheap for a handful of generators, and
    avoids importing scipy.stats (seconds at start-up). An item in a tie group of size t
    sees t equal values, so Σ_items (t² − 1) = Σ_groups (t³ − t).
    """
    less = (r[:, None, :] < r[:, :, None]).sum(axis=2)
    equal = (r[:, None, :] == r[:, :, None]).sum(axis=2)
    return less + (equal + 1) / 2.0, float((equal.astype(np.float64) ** 2 - 1).sum())


def unique_winners(means: np.ndarray) -> np.ndarray:
    """Index of the unique top generator per level, −1 where the top is tied or undefined.

    ``means``: (G, L) generator means per level. Returns (L,) int.
    """
    mu = np.asarray(means, dtype=np.float64)
    out = np.full(mu.shape[1], -1, dtype=np.int64)
    for j in range(mu.shape[1]):
        col = mu[:, j]
        if not np.isfinite(col).all():
            continue
        top = col.max()
        hits = np.flatnonzero(col == top)
        if hits.size == 1:
            out[j] = int(hits[0])
    return out


@dataclass(frozen=True)
class RankStability:
    """Rank stability of one factor: W, distinct unique winners, winner-change count.

    ``winners`` (L,) holds the unique winner index per level (−1 = tied top);
    ``winner_changes`` counts unordered level pairs whose unique winners differ;
    ``measured`` is False when no generator mean is finite (every record failed): the counts
    are then 0 but mean "not measured", never "stable".
    """

    kendall_w: float
    top1_count: int
    winner_changes: int
    winners: tuple[int, ...]
    measured: bool = True


def rank_stability(means: np.ndarray) -> RankStability:
    """W over levels (raters) of generators (items), top-1 count and winner changes.

    ``means``: (G, L) — L(m; level) for one factor.
    """
    mu = np.asarray(means, dtype=np.float64)
    w = kendall_w(mu.T)
    win = unique_winners(mu)
    valid = win[win >= 0]
    counts = np.bincount(valid, minlength=mu.shape[0]) if valid.size else np.zeros(0, int)
    same = int((counts * (counts - 1) // 2).sum())
    total = valid.size * (valid.size - 1) // 2
    return RankStability(
        kendall_w=w,
        top1_count=int(np.unique(valid).size),
        winner_changes=int(total - same),
        winners=tuple(int(x) for x in win),
        measured=bool(np.isfinite(mu).any()),
    )
