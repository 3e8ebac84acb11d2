"""Item-level agreement between an evaluator and human ratings (point estimates).

Every function takes an evaluator score vector ``x`` (n,) and the human target ``y`` (n,)
(usually the mean human rating of each item) and skips items where either is NaN. Grouped
variants take ``groups`` (n,) integer or string labels (the prompt of each item), compute the
statistic within each group and average over the groups where it is defined.

Pairwise accuracy with tie calibration follows Deutsch, Foster & Freitag (2023), "Ties Matter":
a pair of items is *correct* when the metric orders it as the humans do, or when both call it a
tie; metric differences ``|x_i − x_j| ≤ ε`` count as metric ties, and ε is chosen (one global
value, also for the grouped form) to maximise the accuracy. Candidate ε are 0 and every distinct
pairwise metric difference; the smallest ε reaching the maximum wins (accuracies within 1e-12
count as equal, so floating-point summation order cannot pick a larger ε).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

from harness.stats.pair_bounds import check_pairs, pair_count

EPSILON_BUDGET = 2e6  # series × pairs per array of the pooled ε search (16 MB float64)


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
    check_pairs(pair_count(ends - starts), what="pairwise accuracy")
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
    # accuracies within 1e-12 of the maximum are equal (the running sums round differently on
    # the way): the smallest such ε wins, as with exact counts
    best = int(np.flatnonzero(accs >= np.max(accs) - 1e-12)[0])
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


def _grouped_epsilons(xs: np.ndarray, y: np.ndarray, groups, chunk: int) -> np.ndarray:
    """Grouped ε for many complete series: within-group pairs weighted 1/(N_g R), one sort each."""
    codes = _group_codes(groups, y.size)
    out = np.zeros(xs.shape[0])
    ii, jj, ww = [], [], []
    check_pairs(pair_count(np.unique(codes, return_counts=True)[1]), what="pairwise accuracy")
    for g in np.unique(codes):
        members = np.flatnonzero(codes == g)
        if members.size < 2:
            continue
        a, b = np.triu_indices(members.size, k=1)
        ii.append(members[a])
        jj.append(members[b])
        ww.append(np.full(a.size, 1.0 / a.size))
    if not ii:
        return out
    i, j = np.concatenate(ii), np.concatenate(jj)
    w = np.concatenate(ww) / len(ii)
    dy = y[i] - y[j]
    htie = (dy == 0).astype(np.float64)
    sy = np.sign(dy)
    for c0 in range(0, xs.shape[0], chunk):
        xr = xs[c0 : c0 + chunk]
        dx = xr[:, i] - xr[:, j]
        conc = (np.sign(dx) * sy > 0).astype(np.float64)
        diff = np.abs(dx)
        order = np.argsort(diff, axis=1, kind="stable")
        diff = np.take_along_axis(diff, order, axis=1)
        delta = (w * (htie - conc))[np.arange(xr.shape[0])[:, None], order]
        running = np.cumsum(delta, axis=1)
        last = np.concatenate((diff[:, 1:] != diff[:, :-1], np.ones((xr.shape[0], 1), dtype=bool)), axis=1)
        cand = np.where(last, running, -np.inf)
        zero_first = diff[:, :1] > 0  # ε = 0 with nothing tied is a candidate of value 0
        cand = np.concatenate((np.where(zero_first, 0.0, -np.inf), cand), axis=1)
        thr = np.concatenate((np.zeros((xr.shape[0], 1)), diff), axis=1)
        top = np.max(cand, axis=1, keepdims=True)
        best = np.argmax(cand >= top - 1e-12, axis=1)
        out[c0 : c0 + xr.shape[0]] = thr[np.arange(xr.shape[0]), best]
    return out


def tie_calibrated_epsilons(
    x: np.ndarray, y: np.ndarray, groups: Sequence | np.ndarray | None = None, chunk: int = 32
) -> np.ndarray:
    """ε of :func:`tie_calibrated_accuracy` for many series at once: (E, n), (n,) → (E,).

    Same answer as the one-series search (the smallest ε at the maximum accuracy); series with
    missing values fall back to it. Tying a pair gains one correct pair when the humans tie it
    (set A of metric differences) and loses one when the metric ordered it rightly (set D), so
    the accuracy curve only rises at values of A: sorting A (the human-tie pairs, the same pairs
    for every series) and counting D below each value by a search is enough, with no sort of all
    n(n−1)/2 differences. Vectorised over chunks of ``chunk`` series.
    """
    xs = np.atleast_2d(np.asarray(x, dtype=np.float64))
    y = np.asarray(y, dtype=np.float64)
    out = np.zeros(xs.shape[0])
    full = np.isfinite(xs).all(axis=1) & bool(np.isfinite(y).all())
    n = y.size
    if groups is not None:
        check_pairs(pair_count(np.unique(_group_codes(groups, n), return_counts=True)[1]),
                    what="pairwise accuracy")
    else:
        check_pairs(pair_count([n]), what="pairwise accuracy")
    rows = np.flatnonzero(full)
    if groups is not None:
        out[rows] = _grouped_epsilons(xs[rows], y, groups, chunk)
    elif rows.size:
        out[rows] = _pooled_epsilons(xs[rows], y, chunk)
    for e in np.flatnonzero(~full):
        out[e] = tie_calibrated_accuracy(xs[e], y, groups).epsilon
    return out


def _pooled_epsilons(xs: np.ndarray, y: np.ndarray, chunk: int) -> np.ndarray:
    """Pooled ε of complete series: xs (E, n) finite, y (n,) finite → (E,).

    A (the human-tie pairs) is the same pairs for every series: one gather and a sort. Of D
    (the rightly ordered pairs) only the K = |A| + 1 smallest metric differences can matter.
    Exact: a count truncated at K scores gained − K ≤ −1, and such a value never decides,
    because either A's smallest value is 0 (no rightly ordered pair has |Δ| ≤ 0, so it scores
    ≥ 1) or it is > 0 and any best ≤ 0 gives ε = 0 below. Those K come from the pairs close in
    metric order (:func:`_smallest_rightly_ordered`), not from all n(n−1)/2.
    """
    ti, tj = np.triu_indices(y.size, k=1)
    tie = y[ti] == y[tj]
    ti, tj = ti[tie], tj[tie]
    out = np.zeros(xs.shape[0])
    if not ti.size:
        return out
    cap = ti.size + 1
    gained = np.arange(1, ti.size + 1, dtype=np.float64)[None, :]
    chunk = max(1, min(int(chunk), int(EPSILON_BUDGET // cap)))  # (chunk, K) arrays
    for c0 in range(0, xs.shape[0], chunk):
        xr = xs[c0 : c0 + chunk]
        c = xr.shape[0]
        a = np.sort(np.abs(xr[:, tj] - xr[:, ti]), axis=1)  # (C, |A|)
        d = _smallest_rightly_ordered(xr, y, cap)
        lost = np.empty_like(a)
        for k in range(c):  # rightly ordered pairs with |Δ| ≤ each value of A
            lost[k] = np.searchsorted(d[k], a[k], side="right")
        last = np.concatenate((a[:, 1:] != a[:, :-1], np.ones((c, 1), dtype=bool)), axis=1)
        value = np.where(last, gained - lost, -np.inf)
        best = np.argmax(value, axis=1)
        best_val = value[np.arange(c), best]
        start_wins = (a[:, 0] > 0) & (best_val <= 0)  # ε = 0 (value 0) comes first
        out[c0 : c0 + c] = np.where(start_wins, 0.0, a[np.arange(c), best])
    return out


def _smallest_rightly_ordered(xr: np.ndarray, y: np.ndarray, cap: int) -> np.ndarray:
    """The ``cap`` smallest metric differences of rightly ordered pairs, ascending, +inf where a
    series has fewer: xr (C, n) finite, y (n,) → (C, cap).

    In each series' metric order a pair g places apart has difference x_(i+g) − x_(i) ≥ 0, and it
    is rightly ordered when that is > 0 and the humans rate the later item higher. Gaps 1..G
    hold every pair whose difference is below m = min_i x_(i+G+1) − x_(i); when the cap-th
    smallest rightly ordered difference found is below m, no pair further apart can change the
    result. Series where it is not double G, up to all pairs.
    """
    c, n = xr.shape
    order = np.argsort(xr, axis=1, kind="stable")
    xo = np.take_along_axis(xr, order, axis=1)
    yo = y[order]
    out = np.full((c, cap), np.inf)
    pending = np.arange(c)
    gap = min(n - 1, max(8, -(-4 * cap // max(n, 1))))
    while pending.size:
        xp, yp = xo[pending], yo[pending]
        step = max(1, int(EPSILON_BUDGET // max(gap * n, 1)))
        for r0 in range(0, pending.size, step):  # (rows, pairs) arrays within the budget
            rows = slice(r0, r0 + step)
            xg, yg = xp[rows], yp[rows]
            diffs = np.concatenate([xg[:, g:] - xg[:, :-g] for g in range(1, gap + 1)], axis=1)
            higher = np.concatenate([yg[:, g:] > yg[:, :-g] for g in range(1, gap + 1)], axis=1)
            diffs = np.where(higher & (diffs > 0), diffs, np.inf)
            if diffs.shape[1] > cap:
                diffs = np.partition(diffs, cap - 1, axis=1)[:, :cap]
            diffs.sort(axis=1)
            out[pending[rows], : diffs.shape[1]] = diffs
        if gap >= n - 1:
            break
        reach = (xp[:, gap + 1 :] - xp[:, : n - gap - 1]).min(axis=1)  # the closest pair further apart
        pending = pending[~(out[pending, cap - 1] < reach)]
        gap = min(n - 1, 2 * gap)
    return out
