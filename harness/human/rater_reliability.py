"""How much the human raters agree with each other, and what that allows an evaluator.

Ratings come as a matrix ``ratings`` (U, R): U items (units) by R raters, NaN where a rater did
not rate an item. Nothing here reads files.

Noise ceiling (the definition this harness uses). Model each rating as the item's true score
plus independent rater noise. The single-rating reliability is then estimated by Krippendorff's
α (interval); the mean of k ratings has Spearman–Brown reliability ρ_k = kα / (1 + (k − 1)α),
and the correlation between the true scores and that mean is sqrt(ρ_k). No evaluator, not even
one that outputs the true scores, can expect a higher Pearson correlation with the observed
mean rating, so ``noise_ceiling = sqrt(ρ_k)`` (α clipped at 0). With unequal numbers of ratings
per item, k is their harmonic mean (the mean's noise variance scales with mean(1/k_u)).
"""

from __future__ import annotations

import numpy as np

LEVELS = ("interval", "ordinal")


def _matrix(ratings: np.ndarray) -> np.ndarray:
    r = np.asarray(ratings, dtype=np.float64)
    if r.ndim != 2:
        raise ValueError(f"ratings must be (items, raters), got shape {r.shape}")
    return r


def coincidences(
    ratings: np.ndarray, groups: np.ndarray | None = None, n_groups: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Coincidence matrices summed per group of items: (P, V, V), and the distinct values (V,).

    o[c, k] = Σ_u Σ_{i≠j} [v_ui = c][v_uj = k] / (m_u − 1) over the m_u ratings of item u; items
    with fewer than two ratings are not pairable and add nothing. ``groups`` (U,) assigns items
    to P groups (the prompt blocks of the bootstrap); without it P = 1.
    """
    r = _matrix(ratings)
    finite = np.isfinite(r)
    vals = np.unique(r[finite])
    g = np.zeros(r.shape[0], dtype=np.int64) if groups is None else np.asarray(groups, dtype=np.int64)
    n_g = (int(g.max()) + 1 if g.size else 1) if n_groups is None else n_groups
    if vals.size == 0:
        return np.zeros((n_g, 0, 0)), vals
    idx = np.searchsorted(vals, np.where(finite, r, vals[0]))
    counts = np.zeros((r.shape[0], vals.size))
    rows = np.nonzero(finite)
    np.add.at(counts, (rows[0], idx[rows]), 1.0)
    m = counts.sum(axis=1)
    scale = np.where(m > 1, 1.0 / np.maximum(m - 1, 1), 0.0)
    out = np.zeros((n_g, vals.size, vals.size))
    for p in np.unique(g):
        c = counts[g == p]
        sc = scale[g == p]
        out[p] = (c * sc[:, None]).T @ c - np.diag(sc @ c)
    return out, vals


def _delta2(values: np.ndarray, n_c: np.ndarray, level: str) -> np.ndarray:
    """Squared distance metric δ²[c, k]; ``n_c`` (..., V) value marginals (ordinal only)."""
    if level == "interval":
        d = values[:, None] - values[None, :]
        return np.broadcast_to(d * d, (*n_c.shape[:-1], values.size, values.size))
    if level == "ordinal":
        cum = np.cumsum(n_c, axis=-1)
        # Σ_{g=c..k} n_g − (n_c + n_k)/2 for c ≤ k equals cum_k − cum_c + n_c − (n_c + n_k)/2
        ck = cum[..., None, :] - cum[..., :, None]
        d = np.abs(ck + n_c[..., :, None] - (n_c[..., :, None] + n_c[..., None, :]) / 2.0)
        d = np.where(np.triu(np.ones((values.size, values.size), dtype=bool)), d, np.swapaxes(d, -1, -2))
        return d * d
    raise ValueError(f"level must be one of {LEVELS}, got {level!r}")


def alpha_from_coincidences(o: np.ndarray, values: np.ndarray, level: str = "interval") -> np.ndarray:
    """Krippendorff's α from summed coincidence matrices ``o`` (..., V, V) → (...).

    α = 1 − (n − 1) Σ o_ck δ²_ck / Σ n_c n_k δ²_ck; NaN when the expected disagreement is 0.
    """
    o = np.asarray(o, dtype=np.float64)
    n_c = o.sum(axis=-1)
    n = n_c.sum(axis=-1)
    d2 = _delta2(values, n_c, level)
    observed = (o * d2).sum(axis=(-1, -2))
    expected = (n_c[..., :, None] * n_c[..., None, :] * d2).sum(axis=(-1, -2))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(expected > 0, 1.0 - (n - 1.0) * observed / expected, np.nan)


def krippendorff_alpha(ratings: np.ndarray, level: str = "interval") -> float:
    """Krippendorff's α of a (U, R) ratings matrix at the ``interval`` or ``ordinal`` level."""
    r = _matrix(ratings)
    return float(alpha_draws_sparse(r, np.zeros(r.shape[0], dtype=np.int64), np.ones((1, 1)), level)[0])


def ratings_per_item(ratings: np.ndarray) -> np.ndarray:
    """Number of finite ratings per item: (U,) int."""
    return np.isfinite(_matrix(ratings)).sum(axis=1)


def effective_raters(ratings: np.ndarray) -> float:
    """Harmonic mean of the ratings per rated item (the k of the noise ceiling)."""
    k = ratings_per_item(ratings)
    k = k[k > 0]
    return float(k.size / np.sum(1.0 / k)) if k.size else float("nan")


def spearman_brown(r: np.ndarray | float, factor: float) -> np.ndarray | float:
    """Reliability of a measure ``factor`` times as long: f·r / (1 + (f − 1)·r)."""
    r = np.asarray(r, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = factor * r / (1.0 + (factor - 1.0) * r)
    return float(out) if out.ndim == 0 else out


def noise_ceiling(alpha: np.ndarray | float, k: float) -> np.ndarray | float:
    """sqrt(Spearman–Brown reliability of a k-rating mean) from single-rating α (clipped at 0)."""
    a = np.clip(np.asarray(alpha, dtype=np.float64), 0.0, 1.0)
    out = np.sqrt(spearman_brown(a, k))
    return float(out) if np.ndim(out) == 0 else out


def _pearson_masked(a: np.ndarray, b: np.ndarray) -> float:
    keep = np.isfinite(a) & np.isfinite(b)
    a, b = a[keep], b[keep]
    if a.size < 2 or np.all(a == a[0]) or np.all(b == b[0]):
        return float("nan")
    return float(np.corrcoef(a, b)[0, 1])


def _row_mean(r: np.ndarray) -> np.ndarray:
    n = np.isfinite(r).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, np.nansum(r, axis=1) / np.maximum(n, 1), np.nan)


def leave_one_rater_out(ratings: np.ndarray) -> np.ndarray:
    """Pearson r of each rater with the mean of the other raters: (R,), over shared items."""
    r = _matrix(ratings)
    out = np.full(r.shape[1], np.nan)
    for j in range(r.shape[1]):
        others = np.delete(r, j, axis=1)
        out[j] = _pearson_masked(r[:, j], _row_mean(others))
    return out


def split_half(
    ratings: np.ndarray, n_splits: int = 200, seed: int | np.random.Generator = 42
) -> tuple[float, float]:
    """Split-half reliability: (mean half-panel r, its Spearman–Brown correction 2r/(1+r)).

    Raters are split at random into two halves ``n_splits`` times (explicit ``seed``); each split
    correlates the two half-panel mean ratings over items rated in both halves. With two raters
    there is one split. NaN when fewer than two raters.
    """
    r = _matrix(ratings)
    n_r = r.shape[1]
    if n_r < 2:
        return float("nan"), float("nan")
    gen = np.random.default_rng(seed)
    perms = [np.array([0, 1])] if n_r == 2 else [gen.permutation(n_r) for _ in range(n_splits)]
    rs = []
    for perm in perms:
        half = n_r // 2
        rs.append(_pearson_masked(_row_mean(r[:, perm[:half]]), _row_mean(r[:, perm[half:]])))
    vals = np.array(rs)
    vals = vals[np.isfinite(vals)]
    if not vals.size:
        return float("nan"), float("nan")
    mean_r = float(vals.mean())
    return mean_r, float(spearman_brown(mean_r, 2.0))


def human_reliability(ratings: np.ndarray, seed: int = 42) -> dict[str, float | list[float]]:
    """Every reliability figure of a (U, R) ratings matrix as a plain dict (JSON-ready)."""
    r = _matrix(ratings)
    a_int = krippendorff_alpha(r, "interval")
    a_ord = krippendorff_alpha(r, "ordinal")
    k = effective_raters(r)
    loro = leave_one_rater_out(r)
    half_r, half_sb = split_half(r, seed=seed)
    return {
        "krippendorff_alpha_interval": a_int,
        "krippendorff_alpha_ordinal": a_ord,
        "effective_raters": k,
        "noise_ceiling": float(noise_ceiling(a_int, k)) if np.isfinite(a_int) else float("nan"),
        "leave_one_rater_out": [float(v) for v in loro],
        "leave_one_rater_out_mean": float(np.nanmean(loro)) if np.isfinite(loro).any() else float("nan"),
        "split_half_r": half_r,
        "split_half_spearman_brown": half_sb,
    }


def alpha_draws(
    per_block: np.ndarray, values: np.ndarray, weights: np.ndarray, level: str = "interval"
) -> np.ndarray:
    """Prompt-block bootstrap replicates of α: per-block coincidences (P, V, V), (B, P) → (B,).

    Exact: a draw's coincidence matrix is the count-weighted sum of its prompts' matrices.
    """
    p, v, _ = per_block.shape
    drawn = (np.asarray(weights, dtype=np.float64) @ per_block.reshape(p, v * v)).reshape(-1, v, v)
    return alpha_from_coincidences(drawn, values, level)


def simulate_panel(
    true_scores: np.ndarray, n_raters: int, reliability: float, seed: int | np.random.Generator = 42
) -> np.ndarray:
    """A simulated rater panel: (n,) true scores → (n, R) ratings = true + independent noise.

    The noise variance is Var(true)·(1 − ρ)/ρ, so one rating has reliability ``reliability`` = ρ
    (the share of its variance that is true-score variance) and the panel's expected α is ρ and
    its noise ceiling ``noise_ceiling(ρ, R)``. NaN true scores stay NaN. Ratings are continuous
    (no scale rounding, which would lower the reliability). Explicit ``seed``.
    """
    if not 0.0 < reliability <= 1.0:
        raise ValueError("reliability must be in (0, 1]")
    if n_raters < 2:
        raise ValueError("a panel needs at least two raters")
    t = np.asarray(true_scores, dtype=np.float64)
    sd = float(np.nanstd(t))
    noise_sd = sd * np.sqrt((1.0 - reliability) / reliability)
    gen = np.random.default_rng(seed)
    return t[:, None] + gen.normal(0.0, 1.0, (t.size, n_raters)) * noise_sd


def alpha_draws_sparse(
    ratings: np.ndarray,
    blocks: np.ndarray,
    weights: np.ndarray,
    level: str = "interval",
    draw_chunk: int = 256,
) -> np.ndarray:
    """Replicates of α without any V × V matrix: (U, R) ratings, (U,) blocks, (B, P) → (B,).

    Uses Σ_{c,k} n_c n_k (t_c − t_k)² = 2nΣn_c t_c² − 2(Σn_c t_c)² and, per item, Σ_{i≠j}(t_i −
    t_j)² = 2mΣt² − 2(Σt)², with t the value itself (interval) or its midrank among the draw's
    pairable values (ordinal: δ_ck = |mid_k − mid_c|). Memory O(B × ratings) per draw chunk, so
    continuous ratings with thousands of distinct values are fine. Same values as
    :func:`alpha_from_coincidences`.
    """
    r = _matrix(ratings)
    finite = np.isfinite(r)
    m = finite.sum(axis=1)
    pair = m >= 2
    units, cols = np.nonzero(finite & pair[:, None])
    if units.size == 0:
        return np.full(np.asarray(weights).shape[0], np.nan)
    vals, idx = np.unique(r[units, cols], return_inverse=True)
    blk = np.asarray(blocks, dtype=np.int64)[units]
    n_blocks = np.asarray(weights).shape[1]
    counts = np.zeros((n_blocks, vals.size))
    np.add.at(counts, (blk, idx), 1.0)
    out = np.empty(np.asarray(weights).shape[0])
    w_all = np.asarray(weights, dtype=np.float64)
    for b0 in range(0, w_all.shape[0], draw_chunk):
        w = w_all[b0 : b0 + draw_chunk]
        n_c = w @ counts  # (b, V)
        n = n_c.sum(axis=1)
        if level == "interval":
            t_c = np.broadcast_to(vals, n_c.shape)
        elif level == "ordinal":
            t_c = np.cumsum(n_c, axis=1) - n_c / 2.0
        else:
            raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
        t = t_c[:, idx]  # (b, ratings)
        # per item sums of t and t² (weighted by the draw), then the within-item disagreement
        s1 = np.zeros((w.shape[0], r.shape[0]))
        s2 = np.zeros_like(s1)
        for arr, dest in ((t, s1), (t * t, s2)):
            np.add.at(dest.T, units, arr.T)
        wu = w[:, np.asarray(blocks, dtype=np.int64)]  # (b, U)
        mm = m.astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            within = np.where(pair, (2.0 * mm * s2 - 2.0 * s1 * s1) / np.maximum(mm - 1.0, 1.0), 0.0)
        observed = (wu * within).sum(axis=1)
        expected = 2.0 * n * (n_c * t_c * t_c).sum(axis=1) - 2.0 * (n_c * t_c).sum(axis=1) ** 2
        with np.errstate(invalid="ignore", divide="ignore"):
            out[b0 : b0 + w.shape[0]] = np.where(expected > 0, 1.0 - (n - 1.0) * observed / expected, np.nan)
    return out
