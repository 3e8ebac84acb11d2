"""Configuration-to-signal ratio ρ (study §3.4, Table 14)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from harness.stats._nan import nanmean, nanvar


def scene_level_variance(scores: np.ndarray) -> np.ndarray:
    """Population variance over levels per scene: (..., L) → (...), NaN levels skipped."""
    return nanvar(scores, axis=-1, ddof=0)


def generator_signal(baseline: np.ndarray, ddof: int = 0) -> float:
    """Var_m(mean_p σ_{m,p,c0}): variance of the generator means at c0.

    ``baseline``: (G, P). ``ddof=0`` is the study's population variance; ``ddof=1`` the
    sample variance (which rescales every ρ by (G−1)/G, i.e. 5/6 for six generators).
    """
    return float(nanvar(nanmean(baseline, axis=1), ddof=ddof))


def rho(scores: np.ndarray, baseline: np.ndarray, *, ddof: int = 0) -> float:
    """ρ(f) = mean_s[Var_l σ_{s,l}] / Var_m(mean_p σ_{m,p,c0}).

    ``scores`` (G, P, L) is one factor sweep, ``baseline`` (G, P) the c0 scores. The
    numerator always uses the population variance over levels; ``ddof`` applies to the
    generator-mean denominator only. Dimensionless; NaN when the denominator is 0.
    """
    num = float(nanmean(scene_level_variance(scores)))
    den = generator_signal(baseline, ddof=ddof)
    return num / den if den > 0 else float("nan")


def peak(values: Mapping[str, float]) -> tuple[str | None, float]:
    """The factor with the largest finite value and that value ((None, NaN) if none)."""
    finite = {k: v for k, v in values.items() if np.isfinite(v)}
    if not finite:
        return None, float("nan")
    key = max(finite, key=lambda k: finite[k])
    return key, float(finite[key])
