"""Item-level agreement between an evaluator and human ratings (point estimates).

Every function takes an evaluator score vector ``x`` (n,) and the human target ``y`` (n,)
(usually the mean human rating of each item) and skips items where either is NaN. Grouped
variants take ``groups`` (n,) integer or string labels (the prompt of each item), compute the
statistic within each group and average over the groups where it is defined.

Pairwise accuracy with tie calibration follows Deutsch, Foster & Freitag (2023), "Ties Matter":
a pair of items is *correct* when the metric orders it as the humans do, or when both call it a
tie; metric differences ``|x_i − x_j| ≤ ε`` count as metric ties, and ε is chosen (one global
value, also for the grouped form) to maximise the accuracy. Candidate ε are 0 and every distinct
pairwise metric difference; the smallest ε reaching the maximum wins.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

ITEM_STATISTICS = ("pearson", "spearman", "kendall_tau_b", "kendall_tau_c", "pairwise_accuracy")


def _finite_pair(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"x and y must be 1-D of equal length, got {x.shape} and {y.shape}")
    keep = np.isfinite(x) & np.isfinite(y)
    return x[keep], y[keep]


def _constant(a: np.ndarray) -> bool:
    return a.size < 2 or bool(np.all(a == a[0]))


def pearson(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson's r of the finite pairs; NaN with fewer than 2 pairs or a constant side."""
    a, b = _finite_pair(x, y)
    if _constant(a) or _constant(b):
        return float("nan")
    return float(np.corrcoef(a, b)[0, 1])


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's ρ (Pearson of midranks) of the finite pairs; NaN when undefined."""
    a, b = _finite_pair(x, y)
    if _constant(a) or _constant(b):
        return float("nan")
    return float(sps.spearmanr(a, b).statistic)


def kendall_tau(x: np.ndarray, y: np.ndarray, variant: str = "b") -> float:
    """Kendall's τ-b (tie-corrected) or τ-c (Stuart's, for unequal numbers of classes).

    τ-b = (C − D) / sqrt((n0 − n1)(n0 − n2)); τ-c = 2(C − D) / (n² (m − 1)/m) with m the smaller
    number of distinct values. NaN when undefined.
    """
    if variant not in ("b", "c"):
        raise ValueError("variant must be 'b' or 'c'")
    a, b = _finite_pair(x, y)
    if _constant(a) or _constant(b):
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(sps.kendalltau(a, b, variant=variant).statistic)


@dataclass(frozen=True)
class TieCalibration:
    """Result of the ε search: the accuracy curve and its maximum.

    ``thresholds`` (K,) ascending candidate ε (metric units), ``accuracies`` (K,) the accuracy
    at each; ``epsilon`` and ``accuracy`` the (first) maximum.
    """

    thresholds: np.ndarray
    accuracies: np.ndarray
    epsilon: float
    accuracy: float


def _group_codes(groups: Sequence | np.ndarray | None, n: int) -> np.ndarray:
    if groups is None:
        return np.zeros(n, dtype=np.int64)
    g = np.asarray(groups)
    if g.shape != (n,):
        raise ValueError(f"groups must have shape ({n},), got {g.shape}")
    return np.unique(g, return_inverse=True)[1].astype(np.int64)


def _pairs_by_group(x: np.ndarray, y: np.ndarray, codes: np.ndarray):
    """All within-group item pairs: metric |Δ|, concordant, human tie, pair weight 1/(N_g R)."""
    keep = np.isfinite(x) & np.isfinite(y)
    x, y, codes = x[keep], y[keep], codes[keep]
    order = np.argsort(codes, kind="stable")
    x, y, codes = x[order], y[order], codes[order]
    bounds = np.flatnonzero(np.diff(codes)) + 1
    starts = np.concatenate(([0], bounds))
    ends = np.concatenate((bounds, [codes.size]))
    diffs, conc, hties, weights = [], [], [], []
    groups_with_pairs = 0
    for s, e in zip(starts, ends, strict=True):
        m = e - s
        if m < 2:
            continue
        i, j = np.triu_indices(m, k=1)
        xs, ys = x[s:e], y[s:e]
        dx = xs[i] - xs[j]
        dy = ys[i] - ys[j]
        diffs.append(np.abs(dx))
        conc.append(np.sign(dx) * np.sign(dy) > 0)
        hties.append(dy == 0)
        weights.append(np.full(i.size, 1.0 / i.size))
        groups_with_pairs += 1
    if not groups_with_pairs:
        empty = np.empty(0)
        return empty, empty.astype(bool), empty.astype(bool), empty
    w = np.concatenate(weights) / groups_with_pairs
    return np.concatenate(diffs), np.concatenate(conc), np.concatenate(hties), w


def tie_calibrated_accuracy(
    x: np.ndarray, y: np.ndarray, groups: Sequence | np.ndarray | None = None
) -> TieCalibration:
    """Pairwise accuracy with tie calibration (acc_23 of Deutsch et al. 2023) and its ε search.

    ``x`` metric scores (n,), ``y`` human scores (n,), ``groups`` optional (n,) labels: pairs are
    formed within each group, the accuracy is the mean over groups with at least one pair, and
    one ε serves every group. Without groups all n(n−1)/2 pairs form one group. O(n² log n).
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"x and y must be 1-D of equal length, got {x.shape} and {y.shape}")
    diff, conc, htie, w = _pairs_by_group(x, y, _group_codes(groups, x.size))
    if diff.size == 0:
        return TieCalibration(np.array([0.0]), np.array([np.nan]), 0.0, float("nan"))
    order = np.argsort(diff, kind="stable")
    diff, conc, htie, w = diff[order], conc[order], htie[order], w[order]
    # No pair tied: correct iff concordant. Tying a pair changes correct from conc to htie.
    start = float(np.sum(w[conc]))
    running = start + np.cumsum(w * (htie.astype(np.float64) - conc.astype(np.float64)))
    last = np.flatnonzero(np.append(diff[1:] != diff[:-1], True))
    thresholds = diff[last]
    accs = running[last]
    if thresholds[0] > 0:
        thresholds = np.concatenate(([0.0], thresholds))
        accs = np.concatenate(([start], accs))
    best = int(np.argmax(accs))
    eps = float(thresholds[best])
    exact = float(np.sum(w[np.where(diff <= eps, htie, conc)]))  # no cumulative rounding
    return TieCalibration(thresholds, accs, eps, exact)


def accuracy_at(
    x: np.ndarray, y: np.ndarray, epsilon: float, groups: Sequence | np.ndarray | None = None
) -> float:
    """Tie-calibrated pairwise accuracy at a fixed ε (pairs with |Δx| ≤ ε are metric ties)."""
    diff, conc, htie, w = _pairs_by_group(
        np.asarray(x, dtype=np.float64),
        np.asarray(y, dtype=np.float64),
        _group_codes(groups, np.asarray(x).size),
    )
    if diff.size == 0:
        return float("nan")
    tied = diff <= epsilon
    return float(np.sum(w[np.where(tied, htie, conc)]))


def grouped(stat, x: np.ndarray, y: np.ndarray, groups: Sequence | np.ndarray) -> float:
    """Mean over groups of ``stat(x_g, y_g)``, skipping groups where it is NaN (NaN if none)."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    codes = _group_codes(groups, x.size)
    vals = np.array([stat(x[codes == g], y[codes == g]) for g in np.unique(codes)])
    vals = vals[np.isfinite(vals)]
    return float(vals.mean()) if vals.size else float("nan")


def item_agreement(
    x: np.ndarray, y: np.ndarray, groups: Sequence | np.ndarray | None = None
) -> dict[str, float]:
    """Every item-level statistic, pooled (``groups`` None) or grouped; plus n and ε.

    Returns ``{"n", "pearson", "spearman", "kendall_tau_b", "kendall_tau_c",
    "pairwise_accuracy", "pairwise_epsilon"}``; ``n`` counts items with both values finite.
    """
    a = np.asarray(x, dtype=np.float64)
    b = np.asarray(y, dtype=np.float64)
    n = int(np.sum(np.isfinite(a) & np.isfinite(b)))
    cal = tie_calibrated_accuracy(a, b, groups)
    if groups is None:
        out = {
            "pearson": pearson(a, b),
            "spearman": spearman(a, b),
            "kendall_tau_b": kendall_tau(a, b, "b"),
            "kendall_tau_c": kendall_tau(a, b, "c"),
        }
    else:
        out = {
            "pearson": grouped(pearson, a, b, groups),
            "spearman": grouped(spearman, a, b, groups),
            "kendall_tau_b": grouped(lambda u, v: kendall_tau(u, v, "b"), a, b, groups),
            "kendall_tau_c": grouped(lambda u, v: kendall_tau(u, v, "c"), a, b, groups),
        }
    return {
        "n": n,
        **out,
        "pairwise_accuracy": cal.accuracy,
        "pairwise_epsilon": cal.epsilon,
    }
