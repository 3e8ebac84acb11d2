"""Protocol movement M: how far a factor moves a scene's score, in the evaluator's own c0 units.

ρ (:mod:`harness.stats.rho`) divides the protocol variance by the variance of the generator
means at c0, so a release that spreads the generators further apart at c0 gets a smaller ρ
even when a factor moves every score much further than before: ρ mixes "how fragile" with
"how far apart the generators are". M answers the first question alone:

    M(f) = sqrt( mean_s Var_l σ_{s,l}  /  mean_m Var_p σ_{m,p,c0} )

The numerator is ρ's (the population variance of a scene's score over the factor's levels,
averaged over scenes); the denominator is the pooled *within-generator* variance of the c0
scores (sample variance over one generator's prompts, averaged over generators), which does
not change when the generators move apart. M is the typical movement of a scene's score over
the factor's levels in c0 standard deviations of a scene within its generator: M = 2 reads
"lighting moves a scene's score by two c0 spreads". It is unchanged by any affine rescaling of
the scores (a·σ + b, a ≠ 0), like ρ. Undefined (NaN) without c0 spread, and for a run of
fewer than :data:`MIN_PROMPTS` prompts: with two, each generator's c0 spread rests on one
difference, and half of the prompt resamples (one prompt drawn twice) have none, so the
statistic could be neither estimated nor given an interval.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from harness.stats import bootstrap as bs
from harness.stats._nan import nanmax, nanmean
from harness.stats.rho import peak, scene_level_variance
from harness.stats.table import EvaluatorScores

#: The fewest prompts at which a run's protocol movement is estimated.
MIN_PROMPTS = 3


def within_generator_variance(baseline: np.ndarray) -> float:
    """mean_m Var_p σ_{m,p,c0} (sample variance, ddof 1): ``baseline`` (G, P) → score².

    NaN cells are skipped; a generator with fewer than two finite prompts drops out; NaN when
    none is left."""
    b = np.asarray(baseline, dtype=np.float64)
    finite = np.isfinite(b)
    n = finite.sum(axis=1)
    if not (n >= 2).any():
        return math.nan
    x = np.where(finite, b, 0.0)
    mean = x.sum(axis=1) / np.maximum(n, 1)
    ss = (np.where(finite, b - mean[:, None], 0.0) ** 2).sum(axis=1)
    var = np.where(n >= 2, ss / np.maximum(n - 1, 1), np.nan)
    return float(nanmean(var))


def within_generator_variance_draws(baseline: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Prompt-bootstrap replicates of :func:`within_generator_variance`: (G, P), (B, P) → (B,).

    A draw's generator variance is the sample variance of its resampled prompts (counts
    ``weights``): (Σw·x² − (Σw·x)²/n) / (n − 1) with n = Σw over finite cells."""
    b = np.asarray(baseline, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    finite = np.isfinite(b)
    x = np.where(finite, b, 0.0)
    n = w @ finite.T.astype(np.float64)  # (B, G)
    s1 = w @ x.T
    s2 = w @ (x**2).T
    with np.errstate(invalid="ignore", divide="ignore"):
        var = np.where(n >= 2, (s2 - s1**2 / n) / (n - 1), np.nan)
    var = np.maximum(var, 0.0)  # rounding of a zero-spread draw
    return nanmean(var, axis=1)


def _ratio(num: np.ndarray | float, den: np.ndarray | float) -> np.ndarray:
    num, den = np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, np.sqrt(num / den), np.nan)


def factor_movement(scores: np.ndarray, baseline: np.ndarray) -> float:
    """M(f) of one factor sweep ``scores`` (G, P, L) against the c0 ``baseline`` (G, P); in
    c0 within-generator standard deviations (dimensionless)."""
    num = float(nanmean(scene_level_variance(scores)))
    return float(_ratio(num, within_generator_variance(baseline)))


def movement(t: EvaluatorScores) -> dict[str, float]:
    """factor → M(f) for every factor of the evaluator's score table (its ``factors`` order);
    NaN each below :data:`MIN_PROMPTS` prompts."""
    if len(t.prompts) < MIN_PROMPTS:
        return dict.fromkeys(t.factors, math.nan)
    return {f: factor_movement(fs.scores, t.baseline) for f, fs in t.factors.items()}


def movement_draws(t: EvaluatorScores, weights: np.ndarray) -> dict[str, np.ndarray]:
    """factor → (B,) prompt-bootstrap replicates of M(f), from the (B, P) prompt counts; the
    numerator and the c0 spread are recomputed on the same resampled prompts."""
    names = list(t.factors)
    if not names:
        return {}
    if len(t.prompts) < MIN_PROMPTS:
        return {f: np.full(np.asarray(weights).shape[0], np.nan) for f in names}
    scene_var = np.stack([scene_level_variance(t.factors[f].scores) for f in names])  # (F, G, P)
    num = bs.scene_mean_draws(scene_var, weights)  # (B, F)
    den = within_generator_variance_draws(t.baseline, weights)  # (B,)
    ratios = _ratio(num, den[:, None])
    return {f: ratios[:, i] for i, f in enumerate(names)}


def peak_movement(t: EvaluatorScores) -> float:
    """The largest M(f) over the factors (NaN when none is defined)."""
    return peak(movement(t))[1]


def peak_movement_factor(values: Mapping[str, float | None]) -> str | None:
    """The factor of the largest finite movement in ``values``; ``None`` when none is finite
    or the largest is 0 (no factor moves a score: none carries the peak)."""
    factor, value = peak({k: float(v) for k, v in values.items() if v is not None})
    return factor if factor is not None and value > 0 else None


def peak_movement_draws(t: EvaluatorScores, weights: np.ndarray) -> np.ndarray:
    """(B,) replicates of the peak movement: the row maximum of the factors' draws."""
    draws = movement_draws(t, weights)
    if not draws:
        return np.full(np.asarray(weights).shape[0], np.nan)
    return nanmax(np.stack(list(draws.values()), axis=1), axis=1)
