"""The c0 statistics: functions of one evaluator's c0 scores."""

from __future__ import annotations

import numpy as np

from harness.stats.table import EvaluatorScores, generator_means


def c0_spread(scores: EvaluatorScores) -> float:
    """Spread (max - min) of the generators' mean c0 scores, in score units."""
    means = generator_means(scores.baseline)
    return float(np.nanmax(means) - np.nanmin(means)) if np.isfinite(means).any() else float("nan")
