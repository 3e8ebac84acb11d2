"""Simultaneous bootstrap band over the full contrast family (study Eq. 3, Appendix H).

A contrast j = (evaluator, generator pair, shared protocol) has per-prompt differences
d_pj. With prompt counts ``weights`` (B, P) the bootstrap means of every contrast are one
matrix product W·D/P. The family (110,295 contrasts at the study's scale) is streamed in
column chunks so memory stays at about B × chunk × 8 bytes, and each chunk holds every draw,
so the bootstrap SD and the per-draw maximum are obtained in one pass. The critical value is
read by :func:`harness.stats.intervals.critical_value` at the level the interval policy reads
an interval over the P resampled prompts at (:meth:`IntervalPolicy.read_level`: the expanded
level of the study method, 0.9951 for a 95 % band over 6 prompts); a family whose draws are given rather
than formed from per-prompt differences takes :func:`harness.stats.intervals.max_t_band`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from harness.stats._nan import nanmax, nanmean, nanmin
from harness.stats.bootstrap import prompt_mean_draws
from harness.stats.intervals import DEFAULT_POLICY, IntervalPolicy, critical_value

SEMethod = Literal["bootstrap", "analytic"]


@dataclass(frozen=True)
class Band:
    """Result of :func:`simultaneous_band`.

    ``mean`` (J,) d̄_j, ``se`` (J,) SE_j fixed at the original sample, ``eligible`` (J,)
    bool (non-constant contrasts with SE > 0), ``q`` the quantile of ``t_max``
    (B,) = max_j |d̄*_j − d̄_j| / SE_j over eligible j, read at the interval policy's level for
    ``level`` over the resampled prompts.
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
    policy: IntervalPolicy = DEFAULT_POLICY,
) -> Band:
    """Eq. 3: the band's critical value q and the per-contrast SE.

    ``contrasts``: (P, J) per-prompt differences d_pj (NaN = not measured for that prompt);
    ``weights``: (B, P) prompt counts. ``se_method`` "bootstrap" takes SE_j as the SD of
    the bootstrap means (the same draws), "analytic" as the paired standard error
    sd_p(d_pj)/√P_j (ddof=1). Either way SE is fixed at the original sample, not
    re-estimated within a draw. Contrasts whose d_pj are constant over prompts, or whose
    SE is 0 or NaN, are ineligible. ``max_bytes`` bounds the working block. q is read at
    ``policy.read_level(P, level)``, P the prompts the weights resample.
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
    read_at = policy.read_level(w.shape[1], level)
    q = critical_value(t_max, read_at, policy=policy) if eligible.any() else float("nan")
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


def naive_band(contrasts: np.ndarray, weights: np.ndarray, level: float = 0.95, *,
               policy: IntervalPolicy = DEFAULT_POLICY) -> float:
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
    return critical_value(t, policy.read_level(n_prompts, level), policy=policy)
