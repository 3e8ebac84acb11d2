"""Per-level summaries of render factors: best/worst level (Table 18), lighting (Table 8)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from harness.stats._nan import nanmean


def level_means(scores: np.ndarray) -> np.ndarray:
    """Mean score over scenes per level: (G, P, L) → (L,), NaN cells skipped."""
    return nanmean(scores.reshape(-1, scores.shape[-1]), axis=0)


def best_worst(scores: np.ndarray, levels: Sequence[str]) -> tuple[str, str] | None:
    """(highest-, lowest-scoring level) by mean over scenes; first in level order on ties."""
    means = level_means(scores)
    if not np.isfinite(means).any():
        return None
    return levels[int(np.nanargmax(means))], levels[int(np.nanargmin(means))]


def standardised_shift(scores: np.ndarray) -> np.ndarray:
    """One evaluator's mean standardised shift per level: (G, P, L) → (L,).

    Each score's deviation from its scene's mean over levels is divided by the evaluator's
    pooled SD of those deviations (so evaluators on different scales become comparable),
    then averaged over scenes. Positive: the level tends to raise the score.
    """
    dev = scores - nanmean(scores, axis=-1)[..., None]
    sd = float(np.sqrt(nanmean(dev**2)))
    if not np.isfinite(sd) or sd == 0:
        return np.zeros(scores.shape[-1])
    return level_means(dev / sd)


def mean_standardised_shift(blocks: Sequence[np.ndarray]) -> np.ndarray:
    """Average of :func:`standardised_shift` over evaluators; blocks share their levels."""
    return nanmean(np.stack([standardised_shift(b) for b in blocks]), axis=0)


def lighting_correlation(
    levels: Sequence[str], z_shift: np.ndarray, scalars: Mapping[str, tuple[float, float]]
) -> dict[str, float]:
    """Pearson r of the maps' EV and CCT with their mean z-shift (Table 8).

    ``scalars``: map name → (EV, CCT in kelvin), e.g. computed from the EXR maps by
    ``harness.render``. Levels without scalars are left out; NaN when fewer than 3 remain.
    """
    keep = [i for i, lv in enumerate(levels) if lv in scalars and np.isfinite(z_shift[i])]
    if len(keep) < 3:
        return {"ev": float("nan"), "cct": float("nan")}
    z = np.asarray([z_shift[i] for i in keep])
    ev = np.asarray([scalars[levels[i]][0] for i in keep])
    cct = np.asarray([scalars[levels[i]][1] for i in keep])
    return {"ev": _pearson(ev, z), "cct": _pearson(cct, z)}


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    if np.std(x) == 0 or np.std(y) == 0:
        return float("nan")
    return float(np.corrcoef(x, y)[0, 1])
