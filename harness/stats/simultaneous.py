"""Simultaneous bootstrap band over the full contrast family (study Eq. 3, Appendix H).

A contrast j = (evaluator, generator pair, shared protocol) has per-prompt differences
d_pj. With prompt counts ``weights`` (B, P) the bootstrap means of every contrast are one
matrix product W·D/P. The family (110,295 contrasts at the study's scale) is streamed in
column chunks so memory stays at about B × chunk × 8 bytes, and each chunk holds every draw,
so the bootstrap SD and the per-draw maximum are obtained in one pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from harness.stats._nan import nanmax, nanmean, nanmin
from harness.stats.bootstrap import prompt_mean_draws

SEMethod = Literal["bootstrap", "analytic"]


@dataclass(frozen=True)
class Band:
    """Result of :func:`simultaneous_band`.

    ``mean`` (J,) d̄_j, ``se`` (J,) SE_j fixed at the original sample, ``eligible`` (J,)
    bool (non-constant contrasts with SE > 0), ``q`` the ``level`` quantile of ``t_max``
    (B,) = max_j |d̄*_j − d̄_j| / SE_j over eligible j.
    """

    mean: np.ndarray
    se: np.ndarray
    eligible: np.ndarray
    t_max: np.ndarray
    q: float
    level: float
    se_method: str

    @property
    def n_contrasts(self) -> int:
        return int(self.mean.size)

    @property
    def n_eligible(self) -> int:
        return int(self.eligible.sum())

    def interval(self, j: np.ndarray | int) -> tuple[np.ndarray, np.ndarray]:
        """I_j = d̄_j ± q·SE_j; NaN for ineligible contrasts (no inferential claim)."""
        m, s, ok = self.mean[j], self.se[j], self.eligible[j]
        lo = np.where(ok, m - self.q * s, np.nan)
        hi = np.where(ok, m + self.q * s, np.nan)
        return lo, hi


def chunk_columns(n_draws: int, max_bytes: int) -> int:
    """Columns per chunk so that a (B × chunk) float64 block plus temporaries fits."""
    return max(1, int(max_bytes // (8 * 4 * max(1, n_draws))))


def simultaneous_band(
    contrasts: np.ndarray,
    weights: np.ndarray,
    *,
    level: float = 0.95,
    se_method: SEMethod = "bootstrap",
    max_bytes: int = 256 * 2**20,
) -> Band:
    """Eq. 3: the band's critical value q and the per-contrast SE.

    ``contrasts``: (P, J) per-prompt differences d_pj (NaN = not measured for that prompt);
    ``weights``: (B, P) prompt counts. ``se_method`` "bootstrap" takes SE_j as the SD of
    the bootstrap means (the same draws), "analytic" as the paired standard error
    sd_p(d_pj)/√P_j (ddof=1). Either way SE is fixed at the original sample, not
    re-estimated within a draw. Contrasts whose d_pj are constant over prompts, or whose
    SE is 0 or NaN, are ineligible. ``max_bytes`` bounds the working block.
    """
    d = np.asarray(contrasts, dtype=np.float64)
    w = np.asarray(weights)
    n_draws = w.shape[0]
    j_total = d.shape[1]
    mean = nanmean(d, axis=0) if j_total else np.zeros(0)
    constant = ~(nanmax(d, axis=0) > nanmin(d, axis=0)) if j_total else np.zeros(0, bool)
    se = np.full(j_total, np.nan)
    t_max = np.zeros(n_draws)
    step = chunk_columns(n_draws, max_bytes)
    # Rows of w sum to P, so normalising once turns a finite block's mean into one product.
    w_norm = w.astype(np.float64) / w.sum(axis=1, keepdims=True)
    # Columns with a missing prompt need the masked path; group them at the end so every
    # chunk is contiguous and of one kind (no column gathers on (B × chunk) blocks).
    full = np.isfinite(d).all(axis=0)
    perm = np.concatenate([np.flatnonzero(full), np.flatnonzero(~full)])
    n_full = int(full.sum())
    bounds = [(a, min(a + step, n_full)) for a in range(0, n_full, step)]
    bounds += [(a, min(a + step, j_total)) for a in range(n_full, j_total, step)]
    for start, stop in bounds:
        cols = perm[start:stop]
        block = d[:, cols]
        finite = start < n_full
        means = w_norm @ block if finite else prompt_mean_draws(block, w)  # (B, c)
        if se_method == "bootstrap":
            s = _draw_sd(means, finite)
        else:
            n = np.isfinite(block).sum(axis=0)
            with np.errstate(invalid="ignore", divide="ignore"):
                s = _nanstd(block) / np.sqrt(n)
        se[cols] = s
        ok = ~constant[cols] & np.isfinite(s) & (s > 0)
        if not ok.any():
            continue
        with np.errstate(divide="ignore"):
            inv = np.where(ok, 1.0 / np.where(ok, s, 1.0), 0.0)  # ineligible columns weigh 0
        means -= mean[cols]
        means *= inv
        np.abs(means, out=means)
        t_max = np.fmax(t_max, means.max(axis=1) if finite else nanmax(means, axis=1))
    eligible = ~constant & np.isfinite(se) & (se > 0)
    q = float(np.quantile(t_max, level)) if eligible.any() else float("nan")
    return Band(mean, se, eligible, t_max, q, level, se_method)


def _draw_sd(means: np.ndarray, all_finite: bool) -> np.ndarray:
    """SD over draws (axis 0, ddof=1) without touching ``means``."""
    if not all_finite:
        return _nanstd(means)
    centred = means - means.mean(axis=0)
    np.square(centred, out=centred)
    return np.sqrt(centred.sum(axis=0) / max(1, means.shape[0] - 1))


def _nanstd(block: np.ndarray) -> np.ndarray:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanstd(block, axis=0, ddof=1)


def naive_band(contrasts: np.ndarray, weights: np.ndarray, level: float = 0.95) -> float:
    """Reference implementation: one resampled mean vector per draw in a Python loop.

    Same estimand as :func:`simultaneous_band` with bootstrap SE; keeps (B, J) draws in
    memory, so only use it on small families (tests, the benchmark's baseline).
    """
    d = np.asarray(contrasts, dtype=np.float64)
    n_prompts = d.shape[0]
    draws = np.empty((weights.shape[0], d.shape[1]))
    for b in range(weights.shape[0]):
        idx = np.repeat(np.arange(n_prompts), weights[b])
        draws[b] = d[idx].mean(axis=0)
    mean = d.mean(axis=0)
    se = draws.std(axis=0, ddof=1)
    ok = (d.max(axis=0) > d.min(axis=0)) & (se > 0)
    t = (np.abs(draws[:, ok] - mean[ok]) / se[ok]).max(axis=1)
    return float(np.quantile(t, level))


@dataclass(frozen=True)
class MaxTBand:
    """Simultaneous intervals for a family of J estimates from shared bootstrap draws.

    ``point`` (J,), ``se`` (J,) the SD of each estimate's draws (ddof 1), ``eligible`` (J,)
    (finite point and SE > 0), ``q`` the critical value (NaN when none is eligible) and
    ``studentized``: the band is θ_j ± q·SE_j when True, θ_j ± q (one width) when False.
    """

    point: np.ndarray
    se: np.ndarray
    eligible: np.ndarray
    q: float
    level: float
    studentized: bool = True

    def interval(self) -> tuple[np.ndarray, np.ndarray]:
        """(lo, hi), each (J,). An estimate whose draws never move (SE 0, e.g. a level scored
        exactly like c0) gets the point [θ, θ]; one without finite draws NaN."""
        scale = self.se if self.studentized else np.ones_like(self.se)
        with np.errstate(invalid="ignore"):
            half = np.where(self.eligible, self.q * scale, np.where(self.se == 0, 0.0, np.nan))
        return self.point - half, self.point + half


def few_cluster_inflation(clusters: int) -> float:
    """√(P/(P − 1)): the prompt-block bootstrap's variance is biased low by (P − 1)/P with P
    resampled prompts (the plug-in variance of a mean of P values); the critical value is
    widened by the inverse. 1.095 at the study's 6 prompts, → 1 as P grows."""
    return float(np.sqrt(clusters / (clusters - 1.0))) if clusters >= 2 else float("nan")


def max_t_band(point: np.ndarray, draws: np.ndarray, level: float = 0.95, *,
               studentize: bool = True, clusters: int | None = None) -> MaxTBand:
    """The study's max-t construction (Eq. 3) for any paired family of estimates.

    ``point`` (J,) the original-sample values, ``draws`` (B, J) their replicates from the same
    prompt-block draws (NaN = undefined in that draw, skipped). Unlike :func:`simultaneous_band`
    the estimates need not be means of per-prompt values (e.g. differences of correlations), so
    the draws are given rather than formed here. q is the ``level`` quantile over draws of
    max_j |θ*_j − θ_j| / SE_j (``studentize``) or of max_j |θ*_j − θ_j| (not studentized: one
    width for the family), over eligible j. Every interval covers its target jointly with the
    others at ``level``, so a check that takes the worst of J levels is not J chances to fail
    by noise. ``clusters`` (the prompts resampled) multiplies q by :func:`few_cluster_inflation`.

    Why not studentize with few prompts: SE_j from 6 prompts is itself noisy, and the maximum
    over hundreds of levels picks the levels whose SE came out small; in the null simulation of
    tests/test_human_honest_stats.py (6 prompts, 90 replications, three noise levels) the
    studentized band failed a one-sided 2.5 % check 8-28 % of the time at 337 levels, the
    one-width band at most 2.2 % at 10, 50 or 337 levels.
    """
    theta = np.asarray(point, dtype=np.float64)
    d = np.asarray(draws, dtype=np.float64).reshape(-1, theta.size)
    se = _nanstd(d) if d.shape[0] > 1 else np.full(theta.size, np.nan)
    se = np.where(np.isfinite(d).any(axis=0), se, np.nan)
    if clusters is not None and clusters < 2:  # every draw is the sample itself: no spread to read
        se = np.full(theta.size, np.nan)
    eligible = np.isfinite(theta) & np.isfinite(se) & (se > 0)
    q = float("nan")
    if eligible.any():
        with np.errstate(invalid="ignore"):
            t = np.abs(d[:, eligible] - theta[eligible])
            if studentize:
                t = t / se[eligible]
        t_max = nanmax(t, axis=1)
        t_max = t_max[np.isfinite(t_max)]
        q = float(np.quantile(t_max, level)) if t_max.size else float("nan")
        if clusters is not None:
            q *= few_cluster_inflation(clusters)
    return MaxTBand(theta, se, eligible, q, level, studentize)
