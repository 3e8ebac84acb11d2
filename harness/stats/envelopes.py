"""Pairwise protocol margins and their envelopes (study Eq. 1–2, Appendix G, Table 9)."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

from harness.stats._nan import nanmax, nanmin

STRICT = "strict"
SIGN_CROSSING = "sign_crossing"
TIE_BOUNDARY = "tie_boundary"
CATEGORIES = (STRICT, SIGN_CROSSING, TIE_BOUNDARY)


def generator_pairs(n_generators: int) -> list[tuple[int, int]]:
    """Unordered pairs (m, n) with m < n, in lexicographic order (15 for six generators)."""
    return list(combinations(range(n_generators), 2))


def margins(means: np.ndarray) -> np.ndarray:
    """Δ_mn(π) = L(m; π) − L(n; π) for every pair of :func:`generator_pairs`.

    ``means``: (G, Π) generator means per protocol, score units. Returns (pairs, Π).
    """
    mu = np.asarray(means, dtype=np.float64)
    pairs = generator_pairs(mu.shape[0])
    a = np.array([m for m, _ in pairs], dtype=np.int64)
    b = np.array([n for _, n in pairs], dtype=np.int64)
    return mu[a] - mu[b]


def protocol_shifts(means: np.ndarray, base: int = 0) -> np.ndarray:
    """u_m(π) = L(m; π) − L(m; π0), with π0 the column ``base``. (G, Π) → (G, Π)."""
    mu = np.asarray(means, dtype=np.float64)
    return mu - mu[:, [base]]


def classify(lo: float, hi: float) -> str:
    """Envelope category: strict (never 0, one sign), sign crossing, or tie boundary."""
    if lo > 0 or hi < 0:
        return STRICT
    if lo < 0 < hi:
        return SIGN_CROSSING
    return TIE_BOUNDARY


@dataclass(frozen=True)
class Envelopes:
    """Margin envelopes over a protocol family.

    ``lo``/``hi`` (pairs,) are min/max over protocols of Δ (score units); ``categories``
    one of :data:`CATEGORIES` per pair; ``stable_winner`` the index of the generator that
    beats every other at every protocol, or None.
    """

    pairs: tuple[tuple[int, int], ...]
    lo: np.ndarray
    hi: np.ndarray
    categories: tuple[str, ...]
    stable_winner: int | None
    n_protocols: int

    def counts(self) -> dict[str, int]:
        """Number of pairs per category (the categories partition the pairs)."""
        return {c: sum(1 for k in self.categories if k == c) for c in CATEGORIES}


def envelopes(means: np.ndarray) -> Envelopes:
    """Envelope [min_π Δ, max_π Δ] per pair and the stable winner, from (G, Π) means.

    Protocols where a pair's margin is NaN (a generator unmeasured there) are skipped for
    that pair; a pair never measured gets a NaN envelope and the tie-boundary category is
    not claimed for it — it is counted as a sign crossing (nothing is established).
    """
    mu = np.asarray(means, dtype=np.float64)
    d = margins(mu)
    lo, hi = nanmin(d, axis=1), nanmax(d, axis=1)
    cats = tuple(
        classify(float(a), float(b)) if np.isfinite(a) and np.isfinite(b) else SIGN_CROSSING
        for a, b in zip(lo, hi, strict=True)
    )
    winner = None
    cols = np.isfinite(mu).all(axis=0)
    if cols.any():
        sub = mu[:, cols]
        for m in range(mu.shape[0]):
            others = np.delete(sub, m, axis=0)
            if (sub[m] > others).all():
                winner = m
                break
    return Envelopes(
        pairs=tuple(generator_pairs(mu.shape[0])),
        lo=lo,
        hi=hi,
        categories=cats,
        stable_winner=winner,
        n_protocols=mu.shape[1],
    )
