"""Score dispersion D (study §3.4): mean over scenes of the normalised range over levels."""

from __future__ import annotations

import numpy as np

from harness.stats._nan import nanmax, nanmean, nanmin


def scene_dispersion(scores: np.ndarray) -> np.ndarray:
    """Per-scene normalised range (max_l σ − min_l σ) / |mean_l σ|.

    ``scores``: (..., L), the last axis over one factor's levels; NaN cells are skipped.
    Returns (...) as a fraction (0.28 = 28 %). A scene with fewer than one measured level
    or a zero level-mean gives NaN (the ratio is undefined) and drops out of the average.
    The absolute value keeps D a non-negative range for evaluators whose scores can be
    negative; for positive scores it is exactly the study's σ̄_s.
    """
    hi = nanmax(scores, axis=-1)
    lo = nanmin(scores, axis=-1)
    mean = np.abs(nanmean(scores, axis=-1))
    with np.errstate(divide="ignore", invalid="ignore"):
        d = (hi - lo) / mean
    return np.where(mean > 0, d, np.nan)


def dispersion(scores: np.ndarray) -> float:
    """D(f) = mean over scenes of :func:`scene_dispersion`; ``scores`` (G, P, L) or (S, L).

    Returns a fraction; NaN when no scene has a defined ratio.
    """
    return float(nanmean(scene_dispersion(scores)))
