"""Selection-aware confirmation: the searched worst case measured once on held-out prompts.

The search picks its worst point by looking at the discovery prompts only, so its discovery
effect is biased upwards (the winner's curse). The held-out prompts never influenced the
choice: the effect measured there, with a paired prompt-bootstrap interval (c0 and the point
resampled together, the study's prompt-block bootstrap, :mod:`harness.stats.bootstrap`), is an
honest estimate. ``optimism`` = discovery effect − held-out estimate.

"Confirmed" means one thing only: the held-out interval's lower bound exceeds the objective's
threshold (``vocab/metrics.py``'s search thresholds). An undefined effect is never confirmed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from harness.search.objectives import Objective
from harness.stats.bootstrap import ci_tuple, prompt_weights
from harness.stats.engine import resampled_draws

LEVEL = 0.95


@dataclass(frozen=True)
class Confirmation:
    """The held-out measurement of one point: ``estimate`` (the effect on every held-out
    prompt), its ``interval`` (95 % paired prompt bootstrap), the ``threshold`` it must clear
    and its name, and whether it does (``confirmed``)."""

    estimate: float
    interval: tuple[float, float]
    threshold: float
    threshold_name: str
    prompts: int
    bootstrap: int
    confirmed: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "estimate": _num(self.estimate),
            "interval": [_num(self.interval[0]), _num(self.interval[1])],
            "level": LEVEL,
            "threshold": {"name": self.threshold_name, "value": self.threshold},
            "prompts": self.prompts,
            "bootstrap": self.bootstrap,
        }


def _num(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def effect_draws(
    objective: Objective, base: np.ndarray, moved: np.ndarray, bootstrap: int, seed: int
) -> np.ndarray:
    """``bootstrap`` replicates of the effect, prompts (columns) resampled with replacement,
    the same draw for c0 and the point (paired): ``(B,)``, NaN where a draw is undefined."""
    weights = prompt_weights(base.shape[1], bootstrap, seed)
    return resampled_draws(objective.effect, (base, moved), weights)


def confirm(
    objective: Objective,
    base: np.ndarray,
    moved: np.ndarray,
    *,
    threshold: float,
    bootstrap: int,
    seed: int,
) -> Confirmation:
    """The held-out :class:`Confirmation` of a point with score matrices ``base`` (c0) and
    ``moved`` (the point), both ``(G, P_held_out)``."""
    estimate = objective.effect(base, moved)
    if math.isfinite(estimate) and base.shape[1] >= 1:
        lo, hi = ci_tuple(effect_draws(objective, base, moved, bootstrap, seed), LEVEL)
    else:
        lo = hi = math.nan
    confirmed = bool(math.isfinite(lo) and lo > threshold)
    return Confirmation(estimate, (lo, hi), threshold, objective.threshold, base.shape[1], bootstrap,
                        confirmed)  # fmt: skip
