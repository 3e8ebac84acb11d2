"""Leave-one-generator-out sensitivity of peak ρ (study Table 15)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from harness.stats.rho import peak, rho


def logo_peak_rho(
    factor_scores: Mapping[str, np.ndarray], baseline: np.ndarray
) -> tuple[float, float]:
    """[min, max] of peak ρ after dropping each generator in turn.

    ``factor_scores``: factor → (G, P, L); ``baseline`` (G, P). Needs G ≥ 3 (two generators
    remain for the between-generator variance); otherwise (NaN, NaN).
    """
    n_gen = baseline.shape[0]
    if n_gen < 3 or not factor_scores:
        return (float("nan"), float("nan"))
    peaks = []
    for g in range(n_gen):
        keep = np.arange(n_gen) != g
        values = {f: rho(s[keep], baseline[keep]) for f, s in factor_scores.items()}
        peaks.append(peak(values)[1])
    arr = np.asarray(peaks)
    if not np.isfinite(arr).any():
        return (float("nan"), float("nan"))
    return (float(np.nanmin(arr)), float(np.nanmax(arr)))
