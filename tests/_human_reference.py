"""A plain reference implementation of the pooled human-agreement statistics, frozen: the
vectorised path in ``harness.stats`` must reproduce it to the last digit (tests and
``benchmarks/bench_human_agreement.py``).

Pooled bootstrap (:func:`pooled_draws`): every ordered item pair of a few series at a time as
(series, n, n) arrays, block sums by two GEMMs with the block indicator, quadratic forms over
all P² block pairs. Pooled ε search (:func:`tie_calibrated_epsilons`): gathered pair
differences of every pair and a partition per series. :func:`series_agreement` assembles both as
``harness.human.agreement_table.series_agreement`` does. Nothing here is used by the harness.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import stats as sps

from harness.human import agreement_draws as hb
from harness.human import degenerate as dg
from harness.human import item_agreement as hc
from harness.stats.intervals import percentile_bounds
from harness.stats.pair_bounds import check_cells, check_pairs, pair_count

KEYS = ("pearson", "spearman", "kendall_tau_b", "kendall_tau_c", "pairwise_accuracy")


def _f(v: float) -> float | None:
    return float(v) if v is not None and np.isfinite(v) else None


OUTER_BUDGET = 6e7  # B × P² elements of the outer-product weights (240 MB float32)
PAIR_BUDGET = 8e5  # (series × n × n) elements per chunk of the pair stage (~6 MB float64: in cache)
GEMM_SERIES = 256  # series per quadratic-form GEMM of the pair stage
GROUP_BUDGET = 4e6  # elements of that group's (4, series, P, P) block sums (32 MB float64)


def _prepare(scores: np.ndarray, human: np.ndarray, blocks: np.ndarray, n_blocks: int):
    x = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    y = np.asarray(human, dtype=np.float64)
    blk = np.asarray(blocks, dtype=np.int64)
    if x.shape[1] != y.size or blk.shape != y.shape:
        raise ValueError(f"scores {x.shape}, human {y.shape} and blocks {blk.shape} disagree on n")
    if blk.size and (blk.min() < 0 or blk.max() >= n_blocks):
        raise ValueError(f"block indices must lie in 0..{n_blocks - 1}")
    keep = np.isfinite(y)
    order = np.argsort(blk[keep], kind="stable")
    x, y, blk = x[:, keep][:, order], y[keep][order], blk[keep][order]
    mask = np.isfinite(x)
    return x, y, blk, mask


def _per_block(values: np.ndarray, blk: np.ndarray, n_blocks: int) -> np.ndarray:
    """Sum (E, n) over the items of each block → (E, P)."""
    onehot = np.zeros((blk.size, n_blocks))
    onehot[np.arange(blk.size), blk] = 1.0
    return values @ onehot


def _weighted_pearson(x: np.ndarray, y: np.ndarray, mask: np.ndarray, blk: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Pearson r per draw and series: x (E, n), y (E, n) or (n,), mask (E, n) → (B, E)."""
    p = w.shape[1]
    m = mask.astype(np.float64)
    y2 = np.broadcast_to(y, x.shape)
    xz = np.where(mask, x, 0.0)
    yz = np.where(mask, y2, 0.0)
    # centring on the full-sample means keeps the moment formula well conditioned
    mx = xz.sum(1, keepdims=True) / np.maximum(m.sum(1, keepdims=True), 1)
    my = yz.sum(1, keepdims=True) / np.maximum(m.sum(1, keepdims=True), 1)
    xc = np.where(mask, x - mx, 0.0)
    yc = np.where(mask, y2 - my, 0.0)
    wf = w.astype(np.float64)
    s0 = wf @ _per_block(m, blk, p).T
    sx = wf @ _per_block(xc, blk, p).T
    sy = wf @ _per_block(yc, blk, p).T
    sxx = wf @ _per_block(xc * xc, blk, p).T
    syy = wf @ _per_block(yc * yc, blk, p).T
    sxy = wf @ _per_block(xc * yc, blk, p).T
    with np.errstate(invalid="ignore", divide="ignore"):
        cov = sxy - sx * sy / s0
        vx = sxx - sx * sx / s0
        vy = syy - sy * sy / s0
        r = cov / np.sqrt(vx * vy)
    tiny = 1e-12 * np.maximum(np.abs(sxx), 1e-300)
    # |r| ≤ 1 exactly: rounding can land at 1 + 1e-16, which would print and compare above 1
    return np.clip(np.where((vx > tiny) & (vy > 1e-12 * np.maximum(np.abs(syy), 1e-300)), r, np.nan), -1.0, 1.0)


def _ranks(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Midranks within each row's finite items: (E, n) → (E, n), NaN where masked."""
    out = np.full(values.shape, np.nan)
    full = mask.all(axis=1)
    if full.any():  # complete rows in one call (a call per row cost seconds at 7,740 series)
        out[full] = sps.rankdata(values[full], axis=1)
    for e in np.flatnonzero(~full):
        out[e, mask[e]] = sps.rankdata(values[e, mask[e]])
    return out


def _quad(ww: np.ndarray, s: np.ndarray) -> np.ndarray:
    """wᵀ S w per draw and series: ww (B, P²) the outer products w⊗w, S (C, P, P) → (B, C).

    One float32 GEMM: every operand is a small integer (S holds whole pair counts), so the
    products and sums are exact while they stay below 2²⁴.
    """
    flat = s.reshape(s.shape[0], -1).T.astype(np.float32)
    return (ww @ flat).astype(np.float64)


def _distinct_present(values: np.ndarray, blk: np.ndarray, present_w: np.ndarray) -> np.ndarray:
    """Distinct values present in each draw: values (n,), blk (n,), present_w (B, P) bool → (B,)."""
    uniq, inv = np.unique(values, return_inverse=True)
    p = present_w.shape[1]
    if uniq.size == values.size:  # every value distinct: count the present items
        return present_w.astype(np.float64) @ np.bincount(blk, minlength=p).astype(np.float64)
    hit = np.zeros((uniq.size, p), dtype=bool)
    hit[inv, blk] = True
    per_value = hit.sum(1)
    single = per_value == 1
    counts = np.zeros(p)
    np.add.at(counts, np.argmax(hit[single], axis=1), 1.0)
    out = present_w.astype(np.float64) @ counts
    multi = hit[~single]
    if multi.size:
        out = out + ((present_w.astype(np.float64) @ multi.T.astype(np.float64)) > 0).sum(1)
    return out


def pooled_draws(
    scores: np.ndarray,
    human: np.ndarray,
    blocks: np.ndarray,
    weights: np.ndarray,
    epsilon: np.ndarray,
) -> dict[str, np.ndarray]:
    """Bootstrap replicates of every pooled statistic: {name: (B, E)} for names in :data:`POOLED`.

    ``epsilon`` (E,): the full-sample tie-calibration ε of each series (metric units).
    An all-ones weight row reproduces the point estimates.
    """
    w = np.asarray(weights, dtype=np.float64)
    n_blocks = w.shape[1]
    x, y, blk, mask = _prepare(scores, human, blocks, n_blocks)
    e_count, n = x.shape
    eps = np.broadcast_to(np.asarray(epsilon, dtype=np.float64), (e_count,))
    out = {"pearson": _weighted_pearson(x, y, mask, blk, w)}
    ry = _ranks(np.broadcast_to(y, x.shape), mask)
    out["spearman"] = _weighted_pearson(_ranks(x, mask), ry, mask, blk, w)

    n_pe = _per_block(mask.astype(np.float64), blk, n_blocks)  # (E, P)
    n_w = w @ n_pe.T  # (B, E)
    dup = (w * (w - 1.0) / 2.0) @ n_pe.T
    n0 = n_w * (n_w - 1.0) / 2.0
    check_cells(n, n, what="pairwise matrix of the pooled bootstrap")
    dy = y[:, None] - y[None, :]
    sy = np.sign(dy).astype(np.int8)
    ty = dy == 0
    chunk = max(1, int(PAIR_BUDGET // max(n * n, 1)))
    kq = np.empty((w.shape[0], e_count))
    txq = np.empty_like(kq)
    tyq = np.empty_like(kq)
    aq = np.empty_like(kq)
    # the diagonal (an item with itself) is tied on both sides and tied at any ε ≥ 0
    diag = np.zeros((e_count, n_blocks, n_blocks))
    diag[:, np.arange(n_blocks), np.arange(n_blocks)] = n_pe

    # Few prompts: one GEMM against the (B, P²) outer products. Many prompts (e.g. one block
    # per item): (B, P²) would not fit, so each series is w @ S, then a row-wise dot with w.
    outer = w.shape[0] * n_blocks * n_blocks <= OUTER_BUDGET
    exact = float(np.max(n_w, initial=0.0)) ** 2 < 2.0**24
    ww = None
    if outer:
        ww = (w[:, :, None] * w[:, None, :]).reshape(w.shape[0], -1)
        ww = ww.astype(np.float32) if exact else ww

    # Block sums of the (C, n, n) pair arrays as two float32 GEMMs with the (n, P) block
    # indicator, Mᵀ Q M: exact (entries are small integer counts, far below 2²⁴) and several
    # times faster than two reduceat passes over int8 arrays.
    onehot = np.zeros((n, n_blocks), dtype=np.float32)
    onehot[np.arange(n), blk] = 1.0

    def reduce(q: np.ndarray) -> np.ndarray:
        c = q.shape[0]
        half = (q.reshape(c * n, n).astype(np.float32) @ onehot).reshape(c, n, n_blocks)
        return np.matmul(onehot.T, half).astype(np.float64)

    def quad(s: np.ndarray) -> np.ndarray:  # s holds doubled counts (both orders of a pair)
        if ww is None:
            return 0.5 * np.stack([np.einsum("bp,bp->b", w @ s_c, w) for s_c in s], axis=1)
        if exact:
            return 0.5 * _quad(ww, s)
        return 0.5 * (ww @ s.reshape(s.shape[0], -1).T)

    all_y = quad(reduce(ty[None].view(np.int8)) - diag[:1])[:, 0] if mask.all() else None
    # Two chunk sizes: the (c, n, n) pair arrays of a few series stay in cache (memory traffic,
    # not arithmetic, bounds this stage), while the quadratic forms run as one GEMM per group
    # of series so the (B, P²) outer products are read once per group, not once per few series.
    group = max(chunk, min(GEMM_SERIES, int(GROUP_BUDGET // (4 * n_blocks * n_blocks))))
    for g0 in range(0, e_count, group):
        g1 = min(g0 + group, e_count)
        sums = np.zeros((4, g1 - g0, n_blocks, n_blocks))  # concordance, x ties, accuracy, y ties
        for c0 in range(g0, g1, chunk):
            sl = slice(c0, min(c0 + chunk, g1))
            at = slice(c0 - g0, sl.stop - g0)
            holes = not mask[sl].all()
            xc = np.where(mask[sl], x[sl], 0.0)
            # signs and ties straight from comparisons (x_i > x_j exactly when x_i − x_j > 0):
            # one byte per pair written instead of an 8-byte difference; the difference itself
            # is formed only for the series whose ε is above 0
            gt = xc[:, :, None] > xc[:, None, :]
            lt = xc[:, :, None] < xc[:, None, :]
            sx = gt.view(np.int8) - lt.view(np.int8)
            conc = sx * sy
            xtie = ~(gt | lt)
            tied = xtie.copy()
            wide = np.flatnonzero(eps[sl] > 0)
            if wide.size:
                xw = xc[wide]
                tied[wide] = np.abs(xw[:, :, None] - xw[:, None, :]) <= eps[sl][wide][:, None, None]
            acc = np.where(tied, ty, conc > 0)
            if holes:
                pm = mask[sl][:, :, None] & mask[sl][:, None, :]
                conc = conc * pm
                xtie &= pm
                acc &= pm
            d = diag[sl]
            sums[0, at] = reduce(conc)
            sums[1, at] = reduce(xtie.view(np.int8)) - d
            sums[2, at] = reduce(acc.view(np.int8)) - d
            if all_y is None:
                sums[3, at] = reduce((ty & pm).view(np.int8) if holes else np.broadcast_to(
                    ty.view(np.int8), (sl.stop - sl.start, n, n))) - d
        sg = slice(g0, g1)
        kq[:, sg] = quad(sums[0])
        txq[:, sg] = quad(sums[1])
        aq[:, sg] = quad(sums[2])
        tyq[:, sg] = all_y[:, None] if all_y is not None else quad(sums[3])
    with np.errstate(invalid="ignore", divide="ignore"):
        den_b = np.sqrt((n0 - txq - dup) * (n0 - tyq - dup))
        out["kendall_tau_b"] = np.where(den_b > 0, kq / den_b, np.nan)
        present_w = w > 0
        m_classes = np.empty_like(kq)
        y_all = _distinct_present(y, blk, present_w)
        for e in range(e_count):
            me = mask[e]
            y_classes = y_all if me.all() else _distinct_present(y[me], blk[me], present_w)
            if np.unique(x[e, me]).size == int(me.sum()):
                # all scores distinct: a draw has as many x classes as items, never fewer than
                # its distinct human values, so m is the human count
                m_classes[:, e] = y_classes
            else:
                m_classes[:, e] = np.minimum(_distinct_present(x[e, me], blk[me], present_w), y_classes)
        den_c = n_w * n_w * (m_classes - 1.0) / m_classes
        out["kendall_tau_c"] = np.where((den_c > 0) & (m_classes > 1), 2.0 * kq / den_c, np.nan)
        out["pairwise_accuracy"] = np.where(n0 > 0, (aq + dup) / n0, np.nan)
    return out


def tie_calibrated_epsilons(
    x: np.ndarray, y: np.ndarray, groups: Sequence | np.ndarray | None = None, chunk: int = 8
) -> np.ndarray:
    """ε of :func:`tie_calibrated_accuracy` for many series at once: (E, n), (n,) → (E,).

    Same answer as the one-series search (the smallest ε at the maximum accuracy); series with
    missing values fall back to it. Tying a pair gains one correct pair when the humans tie it
    (set A of metric differences) and loses one when the metric ordered it rightly (set D), so
    the accuracy curve only rises at values of A: sorting A (the human-tie pairs, the same pairs
    for every series) and counting D below each value by a search is enough, with no sort of all
    n(n−1)/2 differences. Vectorised over chunks of series.
    """
    xs = np.atleast_2d(np.asarray(x, dtype=np.float64))
    y = np.asarray(y, dtype=np.float64)
    out = np.zeros(xs.shape[0])
    full = np.isfinite(xs).all(axis=1) & bool(np.isfinite(y).all())
    n = y.size
    if groups is not None:
        check_pairs(pair_count(np.unique(hc._group_codes(groups, n), return_counts=True)[1]),
                    what="pairwise accuracy")
    else:
        check_pairs(pair_count([n]), what="pairwise accuracy")
    i, j = np.triu_indices(n, k=1) if groups is None else (np.empty(0, int), np.empty(0, int))
    dy = y[i] - y[j]
    tie = dy == 0
    ti, tj = i[tie], j[tie]
    ci, cj, sy = i[~tie], j[~tie], np.sign(dy[~tie])
    rows = np.flatnonzero(full)
    if groups is not None:
        out[rows] = hc._grouped_epsilons(xs[rows], y, groups, chunk)
        rows = rows[:0]
    if ti.size and rows.size:
        for c0 in range(0, rows.size, chunk):
            r = rows[c0 : c0 + chunk]
            xr = xs[r]
            a = np.sort(np.abs(xr[:, ti] - xr[:, tj]), axis=1)  # (C, |A|)
            dx = xr[:, ci] - xr[:, cj]
            conc = np.sign(dx) * sy > 0
            absdx = np.abs(dx)
            lost = np.empty_like(a)
            # Only the K = |A| + 1 smallest |Δ| of D can matter, so a partition (linear) and a
            # sort of K values replace the sort of all of D. Exact: a count
            # truncated at K scores gained − K ≤ −1, and such a value never decides, because
            # either A's smallest value is 0 (no rightly ordered pair has |Δ| ≤ 0, so it scores
            # ≥ 1) or it is > 0 and any best ≤ 0 gives ε = 0 below.
            cap = a.shape[1] + 1
            for k in range(r.size):  # pairs the metric ordered rightly with |Δ| ≤ each value of A
                d = absdx[k][conc[k]]
                if d.size > cap:
                    d = np.partition(d, cap - 1)[:cap]
                lost[k] = np.searchsorted(np.sort(d), a[k], side="right")
            gained = np.arange(1, a.shape[1] + 1, dtype=np.float64)[None, :]
            last = np.concatenate((a[:, 1:] != a[:, :-1], np.ones((r.size, 1), dtype=bool)), axis=1)
            value = np.where(last, gained - lost, -np.inf)
            best = np.argmax(value, axis=1)
            best_val = value[np.arange(r.size), best]
            start_wins = (a[:, 0] > 0) & (best_val <= 0)  # ε = 0 (value 0) comes first
            out[r] = np.where(start_wins, 0.0, a[np.arange(r.size), best])
    for e in np.flatnonzero(~full):
        out[e] = hc.tie_calibrated_accuracy(xs[e], y, groups).epsilon
    return out


def series_agreement(
    scores: np.ndarray,
    human: np.ndarray,
    blocks: np.ndarray,
    n_blocks: int,
    weights: np.ndarray,
    *,
    grouped: bool = False,
    level: float = 0.95,
    chunk: int = 256,
) -> list[dict]:
    """Agreement of every series with intervals.

    ``scores`` (E, n), ``human`` (n,) mean rating, ``blocks`` (n,) prompt index, ``weights``
    (B, P). Returns one dict per series with the keys n, pearson, spearman, kendall_tau_b,
    kendall_tau_c, pairwise_accuracy, pairwise_epsilon, ``ci`` {key: [lo, hi]} and ``flags``
    (reasons from :mod:`harness.human.degenerate`: a degenerate series has its statistics
    or its intervals ``None`` rather than a number without meaning). With ``grouped`` the
    statistics are computed within each block and averaged.
    """
    x = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    groups = blocks if grouped else None
    # row 0 of the weights is the original sample (every prompt once): the point estimates
    w = np.vstack([np.ones((1, weights.shape[1]), dtype=weights.dtype), weights])
    y = np.asarray(human, dtype=np.float64)
    both = np.isfinite(x) & np.isfinite(y)[None, :]
    n_ok = both.sum(axis=1)
    blk = np.asarray(blocks, dtype=np.int64)
    spanned = np.array([np.unique(blk[row]).size for row in both])
    y_hi = np.where(both, y[None, :], -np.inf).max(axis=1, initial=-np.inf)
    y_lo = np.where(both, y[None, :], np.inf).min(axis=1, initial=np.inf)
    out = []
    for c0 in range(0, x.shape[0], chunk):  # bounded memory: (B, chunk) draws at a time
        xc = x[c0 : c0 + chunk]
        eps = tie_calibrated_epsilons(xc, y, groups)
        if grouped:
            draws = hb.grouped_draws(hb.per_block_values(xc, y, blocks, n_blocks, eps), w)
        else:
            draws = pooled_draws(xc, y, blocks, w, eps)
        cis = {k: percentile_bounds(draws[k][1:], level) for k in KEYS}  # (2, chunk) each
        for e in range(xc.shape[0]):
            i = c0 + e
            reasons, refuse, refuse_ci = dg.series_reasons(int(n_ok[i]), int(spanned[i]), bool(y_hi[i] == y_lo[i]))
            entry = {"n": int(n_ok[i])}
            entry.update({k: None if refuse else _f(draws[k][0, e]) for k in KEYS})
            entry["pairwise_epsilon"] = None if refuse else _f(eps[e])
            entry["ci"] = {k: [None, None] if refuse_ci else [_f(cis[k][0, e]), _f(cis[k][1, e])] for k in KEYS}
            entry["flags"] = reasons
            out.append(entry)
    return out
