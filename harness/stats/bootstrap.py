"""Prompt-block bootstrap (study §3.4, Appendix H).

A draw resamples the P prompt blocks with replacement and keeps every generator,
evaluator and configuration of a prompt together. It is stored as multinomial prompt
*counts* ``weights`` (B, P) — row b says how often each prompt occurs in draw b — so any
statistic built from means over prompts becomes a matrix product. One weight matrix is
shared by every statistic of an audit, which keeps all intervals jointly aligned. The
intervals themselves are read from the draws by :mod:`harness.stats.intervals`.
"""

from __future__ import annotations

import numpy as np

from harness.stats.intervals import block_bounds

# The largest B the harness accepts anywhere: B x prompts weights and B-row draws stay within
# memory at every profile (B = 100,000 recomputes a smoke report in about 3 s).
MAX_BOOTSTRAP = 100_000


def prompt_weights(n_prompts: int, n_draws: int, rng: np.random.Generator | int) -> np.ndarray:
    """Multinomial prompt counts for ``n_draws`` bootstrap draws: (B, P) int32, rows sum to P."""
    if n_prompts < 1 or n_draws < 1:
        raise ValueError("need at least one prompt and one draw")
    gen = np.random.default_rng(rng)
    p = np.full(n_prompts, 1.0 / n_prompts)
    return gen.multinomial(n_prompts, p, size=n_draws).astype(np.int32)


def prompt_mean_draws(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Bootstrap replicates of the NaN-skipping mean over the prompt axis.

    ``values``: (P, K) per-prompt values (K columns, e.g. contrasts); ``weights``: (B, P).
    Returns (B, K): Σ_p w_bp·v_pk / Σ_p w_bp·[v_pk finite]; NaN where a draw holds no
    finite value of a column.
    """
    v = np.asarray(values, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    finite = np.isfinite(v)
    if finite.all():
        return (w @ v) / w.sum(axis=1, keepdims=True)
    num = w @ np.where(finite, v, 0.0)
    den = w @ finite.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / den, np.nan)


def scene_mean_draws(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Bootstrap replicates of the mean over scenes of a per-scene quantity.

    ``values``: (G, P) or (..., G, P) — any leading axes are kept, scenes are the last two
    axes; NaN scenes are skipped. Returns (B,) or (B, ...).
    """
    v = np.asarray(values, dtype=np.float64)
    lead = v.shape[:-2]
    finite = np.isfinite(v)
    sums = np.where(finite, v, 0.0).sum(axis=-2).reshape(-1, v.shape[-1])  # (K, P)
    counts = finite.sum(axis=-2).reshape(-1, v.shape[-1]).astype(np.float64)
    w = np.asarray(weights, dtype=np.float64)
    num = w @ sums.T
    den = w @ counts.T
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(den > 0, num / den, np.nan)
    return out.reshape((w.shape[0], *lead))


def generator_mean_draws(scores: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Replicates of L(m) = mean over prompts per generator: (G, P) → (B, G)."""
    return prompt_mean_draws(np.asarray(scores, dtype=np.float64).T, weights)


def rho_draws(
    scene_var: np.ndarray, baseline: np.ndarray, weights: np.ndarray, ddof: int = 0
) -> np.ndarray:
    """Replicates of ρ for one or more factors.

    ``scene_var``: (F, G, P) per-scene population variance over levels; ``baseline`` (G, P);
    returns (B, F). The generator-mean variance is recomputed in every draw.
    """
    num = scene_mean_draws(scene_var, weights)  # (B, F)
    gm = generator_mean_draws(baseline, weights)  # (B, G)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        den = np.nanvar(gm, axis=1, ddof=ddof)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den[:, None] > 0, num / den[:, None], np.nan)


def paired_gap(scores: np.ndarray, a: int, b: int, weights: np.ndarray) -> np.ndarray:
    """Replicates of L(a) − L(b) from paired per-prompt differences; ``scores`` (G, P) → (B,)."""
    d = np.asarray(scores, dtype=np.float64)[a] - np.asarray(scores, dtype=np.float64)[b]
    return prompt_mean_draws(d[:, None], weights)[:, 0]


def margin_ci(scores: np.ndarray, weights: np.ndarray, level: float = 0.95) -> np.ndarray:
    """Pointwise intervals of every pairwise margin Δ_mn(π), read by the interval policy over
    the P prompts the weights resample (:func:`harness.stats.intervals.block_bounds`).

    ``scores`` (G, P, Π) for one evaluator, ``weights`` (B, P). Returns (2, pairs, Π) in
    score units, pairs in :func:`harness.stats.envelopes.generator_pairs` order. Memory
    B × pairs × Π floats: call it per protocol subset for large families.
    """
    from harness.stats.envelopes import generator_pairs

    s = np.asarray(scores, dtype=np.float64)
    pairs = generator_pairs(s.shape[0])
    a = np.array([m for m, _ in pairs], dtype=np.int64)
    b = np.array([n for _, n in pairs], dtype=np.int64)
    d = s[a] - s[b]  # (pairs, P, Π)
    flat = np.transpose(d, (1, 0, 2)).reshape(s.shape[1], -1)
    ci = block_bounds(prompt_mean_draws(flat, weights), np.asarray(weights).shape[1], level)
    return ci.reshape(2, len(pairs), s.shape[2])
