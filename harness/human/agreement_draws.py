"""Prompt-block bootstrap of evaluator–human agreement, vectorised over many score series.

Inputs, shared by every function:

- ``scores`` (E, n): E score series (evaluators × configurations) over the same n items;
  NaN marks a missing score and drops that item from that series only;
- ``human`` (n,): the human target (mean rating) per item; NaN items are dropped everywhere;
- ``blocks`` (n,): the prompt index (0..P−1) of each item — the bootstrap block;
- ``weights`` (B, P): multinomial prompt counts from :func:`harness.stats.bootstrap.prompt_weights`.

A draw holds prompt p ``w_p`` times, with all its items. Pair statistics (Kendall's τ, pairwise
accuracy) are exact for the resampled multiset: pairs across two copies of one item are ties
on both sides. Every pair count is a quadratic form Σ_{p≤q} w_p w_q U_pq in the prompt counts,
with U the sums over the unordered item pairs of each pair of prompts (P(P+1)/2 of them), so a
draw costs O(P²) whatever n is, and the forms of every draw and series are one matrix product.

Two statistics are resampled with a documented simplification: Spearman's ρ uses the full-sample
midranks (the Pearson correlation of the original ranks in each draw; ranks are not recomputed
on the multiset), and pairwise accuracy holds ε at its full-sample value (the ε search is not
repeated per draw). Grouped (within-prompt) statistics are exact: a draw averages the
per-prompt values with the prompt counts as weights.
"""

from __future__ import annotations

import hashlib
import warnings

import numpy as np
from scipy import stats as sps

from harness.stats.bootstrap import prompt_mean_draws
from harness.stats.pair_bounds import check_cells, check_pairs, pair_count

POOLED = ("pearson", "spearman", "kendall_tau_b", "kendall_tau_c", "pairwise_accuracy")
OUTER_BUDGET = 2e7  # B × (block pairs) features w_p·w_q per quadratic-form GEMM (160 MB float64)
COUNT_BUDGET = 4e6  # (block pairs × 4 × series) pair counts held at once (16 MB float32)
PAIR_BUDGET = 2e5  # (block items × later items × series) per step of the pair stage (in cache)


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


_FEATURES: dict[tuple, np.ndarray] = {}  # the last weights' w_p·w_q features (one entry)


def _quadratic_forms(w: np.ndarray, pair_a: np.ndarray, pair_b: np.ndarray, exact: bool):
    """The map U (K, C) → (B, C), Σ_{p≤q} w_p w_q U_pq per draw and series, for w (B, P) and the
    K block pairs (pair_a[k], pair_b[k]), pair_a ≤ pair_b, each U a whole-number pair count.

    Up to :data:`OUTER_BUDGET` features w_p·w_q: one GEMM against them, float32 when ``exact``
    (every operand and partial sum an integer below 2²⁴), else float64 (exact below 2⁵³). More
    (many prompts): per series the symmetric (P, P) matrix S with S_pp = 2U_pp, and ½ wᵀSw by a
    float64 GEMM, exact below 2⁵³. Every path gives the same integers.
    """
    if w.shape[0] * pair_a.size <= OUTER_BUDGET:
        dtype = np.float32 if exact else np.float64
        key = (w.shape, hashlib.sha1(w.tobytes()).digest(), hashlib.sha1(pair_a.tobytes() + pair_b.tobytes()).digest(),
               np.dtype(dtype).str)
        features = _FEATURES.get(key)
        if features is None:  # the chunks of one study share the weights: built once for all
            features = (w[:, pair_a] * w[:, pair_b]).astype(dtype)
            _FEATURES.clear()
            _FEATURES[key] = features
        return lambda counts: (features @ counts.astype(dtype, copy=False)).astype(np.float64)
    present = np.unique(np.concatenate((pair_a, pair_b)))
    ia, ib = np.searchsorted(present, pair_a), np.searchsorted(present, pair_b)
    diagonal = ia[ia == ib]
    wp = w[:, present]

    def forms(counts: np.ndarray) -> np.ndarray:
        out = np.empty((w.shape[0], counts.shape[1]))
        s = np.zeros((present.size, present.size))
        for c in range(counts.shape[1]):
            s[ia, ib] = counts[:, c]
            s[ib, ia] = counts[:, c]
            s[diagonal, diagonal] *= 2.0
            out[:, c] = 0.5 * np.einsum("bp,bp->b", wp @ s, wp)
        return out

    return forms


def _pair_block_counts(
    x: np.ndarray, y: np.ndarray, blk: np.ndarray, mask: np.ndarray, eps: np.ndarray
) -> tuple[np.ndarray, np.ndarray | None]:
    """Pair counts of every series per pair of prompt blocks, each unordered item pair once.

    ``x`` (E, n), ``y`` (n,), ``blk`` (n,) sorted, ``mask`` (E, n) finite scores, ``eps`` (E,).
    Returns ``counts`` (K, R, E) (float32 when exact): rows concordant − discordant, metric ties, accurate
    pairs at ε (a human tie the metric ties, or an order it gets right by more than ε) and, with
    missing scores (R = 4), human ties, for the K = P'(P'+1)/2 pairs (p ≤ q) of the P' present
    blocks in the row-major order of ``np.triu_indices(P')``; ``y_ties`` (K,) the human ties when
    nothing is missing (the same for every series), else ``None``. Pairs within a block count
    i < j only.

    With z = Δx·sign(Δy), a pair is concordant when z > 0, discordant when z < 0, and rightly
    ordered beyond ε when z > ε; a missing score makes Δx NaN, which every comparison rejects.
    Items are compared block against all later items with the series on the fast axis, in
    chunks of series whose (items, items, series) arrays stay in cache.
    """
    e_count, n = x.shape
    holes = not mask.all()
    xt = np.ascontiguousarray(np.where(mask, x, np.nan).T)  # (n, E)
    present, starts = np.unique(blk, return_index=True)
    ends = np.append(starts[1:], n)
    n_p = present.size
    n_pairs = n_p * (n_p + 1) // 2
    offsets = np.concatenate(([0], np.cumsum(np.arange(n_p, 0, -1))))
    rows = 4 if holes else 3
    widest = int(np.max(ends - starts, initial=1))
    # a count is at most widest² (two blocks' items): float32 holds it exactly below 2²⁴
    counts = np.empty((n_pairs, rows, e_count), dtype=np.float32 if widest * widest < 2**24 else np.float64)
    y_ties = None if holes else np.empty(n_pairs)
    chunk = max(1, int(PAIR_BUDGET // max(widest * n, 1)))
    eps = np.asarray(eps, dtype=np.float64)
    for a in range(n_p):
        s, e = int(starts[a]), int(ends[a])
        m, rest = e - s, n - s
        seg = starts[a:] - s  # each later block's first item, relative to s
        dy = y[s:e, None] - y[None, s:]
        keep = np.ones((m, rest), dtype=bool)
        keep[:, :m] = np.triu(keep[:, :m], k=1)  # within the block, i < j only
        sy = np.where(keep, np.sign(dy), 0.0)
        ti, tj = np.nonzero(keep & (dy == 0))
        order = np.argsort(tj, kind="stable")
        ti, tj = ti[order], tj[order]
        tie_bounds = np.searchsorted(tj, np.append(seg, rest))
        if y_ties is not None:
            y_ties[offsets[a] : offsets[a + 1]] = np.diff(tie_bounds)
        out = slice(offsets[a], offsets[a + 1])
        for c0 in range(0, e_count, chunk):
            c1 = min(c0 + chunk, e_count)
            dx = xt[s:e, None, c0:c1] - xt[None, s:, c0:c1]  # (m, rest, C)
            dx[:, :m][~keep[:, :m]] = np.nan
            z = dx * sy[:, :, None]
            ec = eps[c0:c1]
            conc = _block_sums((z > 0).sum(axis=0), seg) - _block_sums((z < 0).sum(axis=0), seg)
            counts[out, 0, c0:c1] = conc
            counts[out, 1, c0:c1] = _block_sums((dx == 0).sum(axis=0), seg)
            tied = dx[ti, tj]  # (T, C): the human ties, ordered by later block
            right = _block_sums((z > ec).sum(axis=0), seg)
            counts[out, 2, c0:c1] = right + _tie_sums(np.abs(tied) <= ec, tie_bounds)
            if holes:
                counts[out, 3, c0:c1] = _tie_sums(~np.isnan(tied), tie_bounds)
    return counts, y_ties


def _block_sums(per_item: np.ndarray, seg: np.ndarray) -> np.ndarray:
    """Sums of consecutive item rows per block: (items, C), (blocks,) first rows → (blocks, C)."""
    return np.add.reduceat(per_item, seg, axis=0)


def _tie_sums(hit: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """Counts of ``hit`` (T, C) between consecutive ``bounds`` (blocks + 1,) → (blocks, C)."""
    cum = np.zeros((hit.shape[0] + 1, hit.shape[1]), dtype=np.int64)
    np.cumsum(hit, axis=0, out=cum[1:])
    return cum[bounds[1:]] - cum[bounds[:-1]]


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
    # float32 is exact while every partial sum of the quadratic form stays below 2²⁴
    exact = float(np.max(n_w, initial=0.0)) ** 2 < 2.0**24
    kq, txq, aq, tyq = (np.empty((w.shape[0], e_count)) for _ in range(4))
    present = np.unique(blk)
    pair_a, pair_b = np.triu_indices(present.size)
    quad = _quadratic_forms(w, present[pair_a], present[pair_b], exact)
    group = max(1, int(COUNT_BUDGET // max(4 * pair_a.size, 1)))
    for g0 in range(0, e_count, group):  # bounded memory with many prompts: (K, 4, group) counts
        sl = slice(g0, min(g0 + group, e_count))
        size = sl.stop - sl.start
        counts, y_ties = _pair_block_counts(x[sl], y, blk, mask[sl], eps[sl])
        rows = counts.shape[1]
        flat = counts.reshape(counts.shape[0], -1)
        if y_ties is not None:  # no missing score: the human ties are the same pairs for every series
            flat = np.concatenate((flat, y_ties[:, None].astype(flat.dtype)), axis=1)
        forms = quad(flat)
        kq[:, sl], txq[:, sl], aq[:, sl] = (forms[:, : rows * size].reshape(-1, rows, size)[:, r] for r in range(3))
        tyq[:, sl] = forms[:, -1:] if y_ties is not None else forms[:, 3 * size :]
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


def _row_pearson(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r of each row of x (E, m) with y (m,) or (E, m); NaN where either side is constant.

    Constancy is tested on the values themselves: centring a constant row on its floating-point
    mean leaves rounding residue whose "correlation" (often ≈ 0) would otherwise be averaged in
    as a real value.
    """
    constant = (x.max(axis=1) == x.min(axis=1)) | np.broadcast_to(y.max(axis=-1) == y.min(axis=-1), x.shape[:1])
    xc = x - x.mean(axis=1, keepdims=True)
    yc = y - y.mean(axis=-1, keepdims=True)
    num = (xc * yc).sum(1)
    den = np.sqrt((xc * xc).sum(1) * (yc * yc).sum(-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.clip(np.where((den > 0) & ~constant, num / den, np.nan), -1.0, 1.0)


def _row_pair_stats(x: np.ndarray, y: np.ndarray, eps: np.ndarray) -> tuple[np.ndarray, ...]:
    """τ-b, τ-c and accuracy at ε for each row of x (E, m) against y (m,), all finite."""
    m = y.size
    check_pairs(pair_count([m]) * max(x.shape[0], 1), what="per-block pair statistics")
    i, j = np.triu_indices(m, k=1)
    dx = x[:, i] - x[:, j]
    dy = y[i] - y[j]
    conc = np.sign(dx) * np.sign(dy)
    s = conc.sum(1)
    n0 = i.size
    n1 = (dx == 0).sum(1)
    n2 = float((dy == 0).sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        tau_b = np.where((n0 - n1) * (n0 - n2) > 0, s / np.sqrt((n0 - n1) * (n0 - n2)), np.nan)
        # distinct values per row from one row-wise sort (a np.unique per row cost most of the
        # grouped path: one call per series and prompt)
        distinct = 1.0 + (np.diff(np.sort(x, axis=1), axis=1) != 0).sum(axis=1) if m else np.zeros(x.shape[0])
        classes = np.minimum(distinct, float(np.unique(y).size))
        tau_c = np.where(classes > 1, 2.0 * s / (m * m * (classes - 1.0) / classes), np.nan)
    tau_b = np.where((n1 == n0) | (n2 == n0), np.nan, tau_b)
    tau_c = np.where((n1 == n0) | (n2 == n0), np.nan, tau_c)
    tied = np.abs(dx) <= eps[:, None]
    acc = np.where(tied, dy == 0, conc > 0).mean(1) if n0 else np.full(x.shape[0], np.nan)
    return tau_b, tau_c, acc


def per_block_values(
    scores: np.ndarray, human: np.ndarray, blocks: np.ndarray, n_blocks: int, epsilon: np.ndarray
) -> dict[str, np.ndarray]:
    """Within-prompt statistics: {name: (E, P)}, NaN where a prompt leaves one undefined.

    ``epsilon`` (E,) is the global ε of the grouped tie calibration.
    """
    from harness.human import item_agreement as hc

    x, y, blk, mask = _prepare(scores, human, blocks, n_blocks)
    e_count = x.shape[0]
    eps = np.broadcast_to(np.asarray(epsilon, dtype=np.float64), (e_count,))
    out = {k: np.full((e_count, n_blocks), np.nan) for k in POOLED}
    for p in np.unique(blk):
        cols = blk == p
        xs, ys, ms = x[:, cols], y[cols], mask[:, cols]
        full = ms.all(1)
        if full.any() and ys.size >= 2:
            xf = xs[full]
            out["pearson"][full, p] = _row_pearson(xf, ys)
            out["spearman"][full, p] = _row_pearson(sps.rankdata(xf, axis=1), sps.rankdata(ys))
            if np.all(ys == ys[0]):
                out["pearson"][full, p] = np.nan
                out["spearman"][full, p] = np.nan
            tb, tc, acc = _row_pair_stats(xf, ys, eps[full])
            out["kendall_tau_b"][full, p] = tb
            out["kendall_tau_c"][full, p] = tc
            out["pairwise_accuracy"][full, p] = acc
        for e in np.flatnonzero(~full):  # rows with holes: the scalar definitions
            a, b = xs[e], ys
            out["pearson"][e, p] = hc.pearson(a, b)
            out["spearman"][e, p] = hc.spearman(a, b)
            out["kendall_tau_b"][e, p] = hc.kendall_tau(a, b, "b")
            out["kendall_tau_c"][e, p] = hc.kendall_tau(a, b, "c")
            out["pairwise_accuracy"][e, p] = hc.accuracy_at(a, b, float(eps[e]))
    return out


def grouped_draws(per_block: dict[str, np.ndarray], weights: np.ndarray) -> dict[str, np.ndarray]:
    """Replicates of the grouped statistics: mean over drawn prompts → {name: (B, E)}."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return {k: prompt_mean_draws(v.T, weights) for k, v in per_block.items()}


def pearson_draws(scores: np.ndarray, human: np.ndarray, blocks: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Pearson r of every series with the human target per draw: (E, n), (n,), (n,), (B, P) → (B, E).

    The same moment sums as :func:`pooled_draws`' Pearson, without the pair statistics: the
    cheap path for many configurations whose draws must stay paired (differences between
    series are taken draw by draw). An all-ones weight row gives the point estimates.
    """
    w = np.asarray(weights, dtype=np.float64)
    x, y, blk, mask = _prepare(scores, human, blocks, w.shape[1])
    return _weighted_pearson(x, y, mask, blk, w)
