"""Prompt-bootstrap replicates of the study's statistics: the resampling every metric shares
and the vectorised draws of the study's own metrics.

A draw is one row of the (B, P) prompt counts of :func:`harness.stats.bootstrap.prompt_weights`.
A statistic without vectorised draws is recomputed on each draw's resample of the scores
(:func:`resample_prompts`, :func:`resampled_draws`); the study's statistics have closed
forms over the draws (level means, W, winners, envelope counts, a weighted median, the
factor ρ and dispersion, a block's interaction share and sign crossings). The estimator
groups of ``stats/estimators.py`` build every metric's draws from these. Pure: arrays in,
arrays out.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from harness.stats import bootstrap as bs
from harness.stats._nan import nanmax, nanmean, nanmin
from harness.stats.dispersion import scene_dispersion
from harness.stats.envelopes import SIGN_CROSSING, envelopes, generator_pairs
from harness.stats.interactions import scene_sums_of_squares, shares, zero_tolerance
from harness.stats.rank import kendall_w
from harness.stats.rho import scene_level_variance
from harness.stats.table import BlockScores, EvaluatorScores

# ------------------------------------------------------------------------------ resampling


def prompt_index(counts: np.ndarray) -> np.ndarray:
    """The prompt columns of one bootstrap draw: prompt p repeated ``counts[p]`` times, in
    prompt order; ``counts`` (P,) is one row of :func:`harness.stats.bootstrap.prompt_weights`."""
    return np.repeat(np.arange(len(counts)), np.asarray(counts, dtype=np.int64))


def resampled_draws(
    statistic: Callable[..., float], arrays: Sequence[np.ndarray], weights: np.ndarray
) -> np.ndarray:
    """Replicates of ``statistic(*arrays)`` with every array's prompt axis (axis 1) resampled by
    each draw of ``weights`` (B, P), the same prompts for every array (paired): (B,) floats,
    NaN where the statistic is undefined. The general path for a statistic without vectorised
    draws (the search's held-out effects)."""
    out = np.empty(np.asarray(weights).shape[0])
    for b, counts in enumerate(np.asarray(weights)):
        idx = prompt_index(counts)
        out[b] = statistic(*(a[:, idx] for a in arrays))
    return out


def resample_prompts(t: EvaluatorScores, counts: np.ndarray) -> EvaluatorScores:
    """One prompt-bootstrap resample of ``t``: prompt p repeated ``counts[p]`` times.

    ``counts`` (P,) is one row of :func:`harness.stats.bootstrap.prompt_weights`; every
    array's prompt axis (axis 1) is taken in that order, and ``prompts`` repeats the ids
    alike. ``n_records``, ``n_failed`` and ``failed_by_factor`` stay those of ``t``.
    """
    idx = prompt_index(counts)

    def take(a: np.ndarray) -> np.ndarray:
        return np.take(a, idx, axis=1)

    return replace(
        t,
        prompts=tuple(t.prompts[i] for i in idx),
        baseline=take(t.baseline),
        factors={f: replace(fs, scores=take(fs.scores)) for f, fs in t.factors.items()},
        probes={n: take(v) for n, v in t.probes.items()},
        probe_recorded={n: take(v) for n, v in t.probe_recorded.items()},
        blocks={n: replace(b, scores=take(b.scores)) for n, b in t.blocks.items()},
    )


# ------------------------------------------------------------------------------ vectorised draws


def level_mean_draws(scores: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Bootstrap replicates of the generator means per level: (G, P, L) → (B, G, L)."""
    s = np.asarray(scores, dtype=np.float64)
    g, p, n_levels = s.shape
    flat = np.transpose(s, (1, 0, 2)).reshape(p, g * n_levels)
    return bs.prompt_mean_draws(flat, weights).reshape(-1, g, n_levels)


def kendall_w_draws(means: np.ndarray) -> np.ndarray:
    """:func:`harness.stats.rank.kendall_w` per draw; ``means`` (B, G, L) → (B,).

    Levels are the raters and generators the items, as in :func:`rank_stability`. Draws
    with a NaN mean take the scalar path (it drops the affected generators).
    """
    r = np.transpose(np.asarray(means, dtype=np.float64), (0, 2, 1))  # (B, m, n)
    n_draws, m_, n = r.shape
    out = np.full(n_draws, np.nan)
    if m_ < 2 or n < 2:
        return out
    finite = np.isfinite(r).all(axis=(1, 2))
    idx = np.flatnonzero(finite)
    for start in range(0, idx.size, 256):  # bounds the (chunk, m, n, n) comparison block
        sub = r[idx[start : start + 256]]
        less = (sub[..., None, :] < sub[..., :, None]).sum(axis=-1)
        equal = (sub[..., None, :] == sub[..., :, None]).sum(axis=-1)
        ranks = less + (equal + 1) / 2.0
        ties = (equal.astype(np.float64) ** 2 - 1).sum(axis=(1, 2))
        col = ranks.sum(axis=1)
        s = ((col - m_ * (n + 1) / 2.0) ** 2).sum(axis=1)
        den = m_ * m_ * (n**3 - n) - m_ * ties
        with np.errstate(divide="ignore", invalid="ignore"):
            out[idx[start : start + 256]] = np.where(den > 0, 12.0 * s / den, np.nan)
    for b in np.flatnonzero(~finite):
        out[b] = kendall_w(r[b])
    return out


def top1_count_draws(means: np.ndarray) -> np.ndarray:
    """Distinct unique winners over levels per draw; ``means`` (B, G, L) → (B,) float.

    A level counts only when every generator mean is finite and the top is not shared
    (as :func:`harness.stats.rank.unique_winners`).
    """
    mu = np.asarray(means, dtype=np.float64)
    finite = np.isfinite(mu).all(axis=1)  # (B, L)
    top = nanmax(mu, axis=1)
    hits = mu == top[:, None, :]
    unique = finite & (hits.sum(axis=1) == 1)
    won = (hits & unique[:, None, :]).any(axis=2)  # (B, G)
    return won.sum(axis=1).astype(np.float64)


def envelope_count_draws(means: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(strict, sign-crossing) pair counts per draw from (B, G, Π) protocol means.

    Categories as :func:`harness.stats.envelopes.envelopes`: a pair without a finite
    envelope counts as a sign crossing.
    """
    mu = np.asarray(means, dtype=np.float64)
    pairs = generator_pairs(mu.shape[1])
    a = np.array([i for i, _ in pairs], dtype=np.int64)
    b = np.array([j for _, j in pairs], dtype=np.int64)
    strict = np.zeros(mu.shape[0])
    cross = np.zeros(mu.shape[0])
    for start in range(0, mu.shape[0], 256):
        block = mu[start : start + 256]
        d = block[:, a] - block[:, b]  # (chunk, pairs, Π)
        lo, hi = nanmin(d, axis=2), nanmax(d, axis=2)
        ok = np.isfinite(lo) & np.isfinite(hi)
        strict[start : start + 256] = (ok & ((lo > 0) | (hi < 0))).sum(axis=1)
        cross[start : start + 256] = (~ok | ((lo < 0) & (hi > 0))).sum(axis=1)
    return strict, cross


def weighted_median_draws(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Replicates of the NaN-skipping median over scenes; ``values`` (G, P), weights (B, P).

    A draw repeats every scene of prompt p ``weights[b, p]`` times; its median is exactly
    ``np.nanmedian`` of that repeated sample (the mean of the two middle values when the
    count is even). Returns (B,); NaN for a draw without a finite value.
    """
    v = np.asarray(values, dtype=np.float64)
    prompt = np.broadcast_to(np.arange(v.shape[1]), v.shape).ravel()
    flat = v.ravel()
    ok = np.isfinite(flat)
    order = np.argsort(flat[ok], kind="stable")
    sorted_v = flat[ok][order]
    w = np.asarray(weights, dtype=np.int64)
    out = np.full(w.shape[0], np.nan)
    if sorted_v.size == 0:
        return out
    cum = np.cumsum(w[:, prompt[ok][order]], axis=1)  # (B, S)
    total = cum[:, -1]
    has = total > 0
    lo_k = (total - 1) // 2
    hi_k = total // 2
    i_lo = np.minimum((cum <= lo_k[:, None]).sum(axis=1), sorted_v.size - 1)
    i_hi = np.minimum((cum <= hi_k[:, None]).sum(axis=1), sorted_v.size - 1)
    out[has] = (sorted_v[i_lo[has]] + sorted_v[i_hi[has]]) / 2.0
    return out


def factor_draws(t: EvaluatorScores, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The prompt-bootstrap replicates of ρ and of dispersion of every factor of ``t``
    (``t.factors`` order): two (B, F) arrays (ratios, fractions). Peak ρ's draws are the
    row maximum of the first."""
    names = list(t.factors)
    if not names:
        empty = np.zeros((weights.shape[0], 0))
        return empty, empty
    blocks = [t.factors[f].scores for f in names]
    rho_d = bs.rho_draws(np.stack([scene_level_variance(s) for s in blocks]), t.baseline, weights)
    disp_d = bs.scene_mean_draws(np.stack([scene_dispersion(s) for s in blocks]), weights)
    return rho_d, disp_d


def interaction_share_draws(block: BlockScores, weights: np.ndarray) -> tuple[float, np.ndarray]:
    """The block's interaction share (pooled non-additive SS / pooled SS_tot over scenes with
    every cell measured, :func:`harness.stats.interactions.block_stats`) and its prompt-bootstrap
    replicates: (point, (B,))."""
    y = np.asarray(block.scores, dtype=np.float64)
    k = len(block.factors)
    n_cells = int(np.prod(y.shape[2:]))
    _main, inter, total = scene_sums_of_squares(y, k)
    tol = zero_tolerance(y, n_cells)
    point = float(shares(nanmean(inter), nanmean(total), tol))
    d = bs.scene_mean_draws(np.stack([inter, total]), weights)  # (B, 2)
    return point, shares(d[:, 0], d[:, 1], tol)


def block_sign_crossing_draws(block: BlockScores, weights: np.ndarray) -> tuple[float, np.ndarray]:
    """Generator pairs whose margin envelope over the block's cells crosses zero (NaN when no
    cell has a mean) and its prompt-bootstrap replicates: (point, (B,))."""
    y = np.asarray(block.scores, dtype=np.float64)
    g, p = y.shape[:2]
    cells = y.reshape(g, p, -1)
    means = nanmean(cells, axis=1)  # (G, cells)
    point = float(envelopes(means).counts()[SIGN_CROSSING]) if np.isfinite(means).any() else math.nan
    draw_means = level_mean_draws(cells, weights)  # (B, G, cells)
    _strict, cross = envelope_count_draws(draw_means)
    return point, np.where(np.isfinite(draw_means).any(axis=(1, 2)), cross, np.nan)

