"""Generator-level agreement with humans and Bradley–Terry strengths from pairwise votes.

Pairwise votes are arrays: ``a`` (V,) and ``b`` (V,) generator indices in 0..G−1, ``outcome``
(V,) 1.0 when a won, 0.0 when b won, 0.5 for a tie, and ``block`` (V,) the prompt index of each
vote (the bootstrap block). Strengths are log-strengths β (G,), centred to mean 0, with
P(i beats j) = 1 / (1 + exp(β_j − β_i)).
"""

from __future__ import annotations

import numpy as np

from harness.human.item_agreement import kendall_tau
from harness.stats._nan import nanmean


def generator_kendall(evaluator_means: np.ndarray, human_means: np.ndarray) -> float:
    """Kendall τ-b between an evaluator's and the humans' generator means: (G,), (G,) → float."""
    return kendall_tau(evaluator_means, human_means, "b")


def winners(means: np.ndarray) -> frozenset[int]:
    """Indices of the generators at the maximum finite mean (a set, to keep ties honest)."""
    m = np.asarray(means, dtype=np.float64)
    if not np.isfinite(m).any():
        return frozenset()
    top = np.nanmax(m)
    return frozenset(int(i) for i in np.flatnonzero(m == top))


def winner_match(evaluator_means: np.ndarray, human_means: np.ndarray) -> bool:
    """Whether the evaluator's winner set equals the humans' winner set."""
    ev, hu = winners(evaluator_means), winners(human_means)
    return bool(ev) and ev == hu


def win_matrices(
    a: np.ndarray, b: np.ndarray, outcome: np.ndarray, block: np.ndarray, n_generators: int, n_blocks: int
) -> np.ndarray:
    """Per-block win counts (P, G, G): [p, i, j] = wins of i over j in block p (a tie is ½ each)."""
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    out = np.asarray(outcome, dtype=np.float64)
    blk = np.asarray(block, dtype=np.int64)
    if np.any(a == b):
        raise ValueError("a vote compares a generator with itself")
    if not np.isin(out, (0.0, 0.5, 1.0)).all():
        raise ValueError("outcome must be 1 (a won), 0 (b won) or 0.5 (tie)")
    wins = np.zeros((n_blocks, n_generators, n_generators))
    np.add.at(wins, (blk, a, b), out)
    np.add.at(wins, (blk, b, a), 1.0 - out)
    return wins


def bradley_terry(
    wins: np.ndarray, prior: float = 1.0, tol: float = 1e-10, max_iter: int = 10_000
) -> np.ndarray:
    """Bradley–Terry log-strengths by Hunter's (2004) MM iterations, vectorised over draws.

    ``wins`` (..., G, G) total win counts. ``prior`` adds that many virtual games, split as a tie,
    to every pair compared at least once, which keeps the strengths finite when a generator never
    loses (0 gives the plain maximum-likelihood fit). Returns β (..., G), mean 0 per draw; a
    generator with no comparisons gets NaN.
    """
    w = np.asarray(wins, dtype=np.float64)
    games = w + np.swapaxes(w, -1, -2)
    compared = games > 0
    w = w + np.where(compared, prior / 2.0, 0.0)
    games = w + np.swapaxes(w, -1, -2)
    total_wins = w.sum(axis=-1)
    active = games.sum(axis=-1) > 0
    p = np.where(active, 1.0, np.nan)
    for _ in range(max_iter):
        denom = np.nansum(games / (p[..., :, None] + p[..., None, :]), axis=-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            new = np.where(active, total_wins / denom, np.nan)
        new = new / np.exp(np.nanmean(np.log(np.where(new > 0, new, np.nan)), axis=-1, keepdims=True))
        done = np.nanmax(np.abs(np.log(new) - np.log(p))) < tol if np.isfinite(new).any() else True
        p = new
        if done:
            break
    with np.errstate(divide="ignore"):
        beta = np.log(p)
    return beta - np.nanmean(np.where(np.isfinite(beta), beta, np.nan), axis=-1, keepdims=True)


def bradley_terry_draws(
    block_wins: np.ndarray, weights: np.ndarray, prior: float = 1.0
) -> np.ndarray:
    """Prompt-block bootstrap replicates of the strengths: (P, G, G) wins, (B, P) → (B, G)."""
    p, g, _ = block_wins.shape
    drawn = (np.asarray(weights, dtype=np.float64) @ block_wins.reshape(p, g * g)).reshape(-1, g, g)
    return bradley_terry(drawn, prior=prior)


def tau_b_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Kendall τ-b between matching rows of a and b: (B, G), (B, G) → (B,); NaN when undefined."""
    i, j = np.triu_indices(a.shape[1], k=1)
    sa = np.sign(a[:, i] - a[:, j])
    sb = np.sign(b[:, i] - b[:, j])
    n0 = i.size
    n1 = (sa == 0).sum(1)
    n2 = (sb == 0).sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        den = np.sqrt((n0 - n1) * (n0 - n2).astype(np.float64))
        out = np.where(den > 0, (sa * sb).sum(1) / den, np.nan)
    finite = np.isfinite(a).all(1) & np.isfinite(b).all(1)
    return np.where(finite, out, np.nan)


def generator_level_draws(
    scores: np.ndarray, human: np.ndarray, generator: np.ndarray, blocks: np.ndarray, weights: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Prompt-block replicates of the generator-level τ-b and of winner agreement.

    ``scores``, ``human`` (n,), ``generator`` (n,) indices 0..G−1, ``blocks`` (n,) indices
    0..P−1, ``weights`` (B, P). Generator means are recomputed in every draw over the items
    both sides have. Returns (tau (B,), winners_match (B,) bool).
    """
    x = np.asarray(scores, dtype=np.float64)
    y = np.asarray(human, dtype=np.float64)
    keep = np.isfinite(x) & np.isfinite(y)
    g_count = int(generator.max()) + 1
    p_count = weights.shape[1]
    sums_x = np.zeros((g_count, p_count))
    sums_y = np.zeros((g_count, p_count))
    counts = np.zeros((g_count, p_count))
    np.add.at(sums_x, (generator[keep], blocks[keep]), x[keep])
    np.add.at(sums_y, (generator[keep], blocks[keep]), y[keep])
    np.add.at(counts, (generator[keep], blocks[keep]), 1.0)
    w = np.asarray(weights, dtype=np.float64)
    den = w @ counts.T
    with np.errstate(invalid="ignore", divide="ignore"):
        mx = np.where(den > 0, (w @ sums_x.T) / den, np.nan)
        my = np.where(den > 0, (w @ sums_y.T) / den, np.nan)
    tau = tau_b_rows(mx, my)
    top_x = mx == np.nanmax(mx, axis=1, keepdims=True)
    top_y = my == np.nanmax(my, axis=1, keepdims=True)
    return tau, (top_x == top_y).all(axis=1)


def comparison_components(wins: np.ndarray) -> np.ndarray:
    """Connected components of the vote graph: (G, G) total wins → labels (G,), −1 for a
    generator in no vote. Strengths in different components were never compared, directly or
    through others, so their difference is set by the fit's normalisation, not by any vote."""
    from scipy.sparse.csgraph import connected_components

    w = np.asarray(wins, dtype=np.float64)
    compared = (w + w.T) > 0
    _, labels = connected_components(compared, directed=False)
    return np.where(compared.any(axis=1), labels, -1)


def centre_within(beta: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """β (..., G) shifted to mean 0 within each component (labels (G,)); NaN outside any."""
    b = np.array(beta, dtype=np.float64)
    for k in np.unique(labels[labels >= 0]):
        m = labels == k
        b[..., m] -= nanmean(b[..., m], axis=-1)[..., None]
    b[..., labels < 0] = np.nan
    return b


def bradley_terry_within_components(
    block_wins: np.ndarray, weights: np.ndarray, labels: np.ndarray, prior: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """Replicates of the strengths centred within each full-sample component: (B, G), and the
    number of draws (K,) in which each component (labels 0..K−1) fell apart and was left out
    (NaN): a draw that loses every vote linking two parts has no relative strength between them."""
    from scipy.sparse.csgraph import connected_components

    p, g, _ = block_wins.shape
    drawn = (np.asarray(weights, dtype=np.float64) @ block_wins.reshape(p, g * g)).reshape(-1, g, g)
    beta = centre_within(bradley_terry(drawn, prior=prior), labels)
    n_comp = int(labels.max()) + 1 if (labels >= 0).any() else 0
    broken = np.zeros(n_comp, dtype=np.int64)
    for b in range(drawn.shape[0]):
        _, lab = connected_components((drawn[b] + drawn[b].T) > 0, directed=False)
        for k in range(n_comp):
            if np.unique(lab[labels == k]).size > 1:
                beta[b, labels == k] = np.nan
                broken[k] += 1
    return beta, broken
