"""Best-view inflation (study §4.5, Table 2)."""

from __future__ import annotations

import numpy as np

from harness.stats._nan import nanmax, nanmedian


def scene_view_inflation(baseline: np.ndarray, views: np.ndarray) -> np.ndarray:
    """Per-scene max over tested poses (default included) / default-view score.

    ``baseline`` (...,) default-view scores; ``views`` (..., V) scores at the tested pitch
    and yaw poses. The default view is part of the max, so the ratio is ≥ 1. Scenes whose
    baseline is not positive (or is missing) give NaN: the ratio is not meaningful there.
    """
    base = np.asarray(baseline, dtype=np.float64)
    best = np.fmax(nanmax(views, axis=-1), base)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = best / base
    return np.where(base > 0, ratio, np.nan)


def best_view_inflation(baseline: np.ndarray, views: np.ndarray) -> float:
    """Median over scenes (positive baseline only) of :func:`scene_view_inflation`.

    Returns a ratio (1.17 = +17 %); NaN when no scene has a positive baseline.
    """
    return float(nanmedian(scene_view_inflation(baseline, views)))
