"""Selection-aware confirmation: the searched worst case measured once on held-out prompts.

The search picks its worst point by looking at the discovery prompts only, so its discovery
effect is biased upwards (the winner's curse). The held-out prompts never influenced the
choice: the effect measured there, with a paired prompt-bootstrap interval (c0 and the point
resampled together, the study's prompt-block bootstrap, :mod:`harness.stats.bootstrap`), is an
honest estimate. ``optimism`` = discovery effect − held-out estimate.

"Confirmed" means one thing only: the held-out interval's lower bound exceeds the objective's
threshold (``vocab/metrics.py``'s search thresholds). An undefined effect is never confirmed.

Few prompt blocks. The held-out split is small (a handful of prompts), and a plain percentile
bootstrap over n blocks is too narrow there: its quantiles are those of a distribution with
divisor n instead of n − 1 and normal instead of t tails. With the former default of 2 held-out
prompts a noisy but protocol-invariant evaluator was "confirmed" in 10 of 120 seeds (8 %,
nominal ≤ 5 %). Two remedies, both here:

- the interval is Hesterberg's *expanded percentile* interval (T. Hesterberg, "What teachers
  should know about the bootstrap", The American Statistician 69, 2015, §5): the bootstrap
  percentiles are taken at the level ``1 − α'`` with ``z_{α'/2} = sqrt(n/(n−1)) · t_{α/2,n−1}``,
  n the held-out prompts, so that for a mean it is as wide as the t interval while keeping the
  bootstrap's asymmetry. It applies to every objective (ρ, a Kendall distance and the pair
  reversal alike are computed on each resample), which a t interval on per-prompt effects
  would not: only the pair reversal decomposes into per-prompt terms. Its tail percentiles
  need many draws, so at least :data:`MIN_DRAWS` are taken (the held-out matrices are small);
- below :data:`MIN_PROMPTS` held-out prompts no distribution-free interval can reach the
  nominal level at all (a lower bound above 0 needs, at best, every prompt's effect above 0,
  which happens by chance with probability 2⁻ⁿ under a symmetric null; 2⁻⁶ ≈ 1.6 % is the first
  below the lower bound's 2.5 %; with 2 prompts it is 25 %). There the result is "not
  confirmable: n held-out prompts" (``confirmed`` false, the reason in ``reason``), never a
  verdict.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from harness.core.numbers import finite_or_none
from harness.search.objectives import Objective
from harness.stats.bootstrap import prompt_weights
from harness.stats.intervals import DEFAULT_POLICY, expanded_level, interval
from harness.stats.replicates import resampled_draws

# the interval policy's held-out rule (harness.stats.intervals.IntervalPolicy), named here
LEVEL = DEFAULT_POLICY.level
METHOD = DEFAULT_POLICY.held_out_method
MIN_DRAWS = DEFAULT_POLICY.held_out_min_draws
MIN_PROMPTS = DEFAULT_POLICY.min_blocks(LEVEL)  # 6 at 95 %


def not_confirmable(prompts: int, min_prompts: int = MIN_PROMPTS) -> str:
    """The reason no verdict is given with ``prompts`` held-out prompts, ``""`` when one is."""
    if prompts >= min_prompts:
        return ""
    return (f"not confirmable: {prompts} held-out prompts (a {LEVEL:.0%} confirmation needs at "
            f"least {min_prompts})")  # fmt: skip


@dataclass(frozen=True)
class Confirmation:
    """The held-out measurement of one point: ``estimate`` (the effect on every held-out
    prompt), its ``interval`` (95 % paired prompt bootstrap, expanded percentile), the
    ``threshold`` it must clear and its name, and whether it does (``confirmed``). ``reason``
    says why no verdict could be given ("not confirmable: ..."), ``""`` when one was."""

    estimate: float
    interval: tuple[float, float]
    threshold: float
    threshold_name: str
    prompts: int
    bootstrap: int
    confirmed: bool
    min_prompts: int = MIN_PROMPTS
    reason: str = ""

    @property
    def confirmable(self) -> bool:
        return not self.reason

    def to_dict(self) -> dict[str, object]:
        return {
            "estimate": finite_or_none(self.estimate),
            "interval": [finite_or_none(self.interval[0]), finite_or_none(self.interval[1])],
            "level": LEVEL,
            "threshold": {"name": self.threshold_name, "value": self.threshold},
            "method": METHOD,
            "percentile_level": finite_or_none(expanded_level(self.prompts)),
            "prompts": self.prompts,
            "min_prompts": self.min_prompts,
            "bootstrap": self.bootstrap,
            "confirmable": self.confirmable,
            "reason": self.reason,
        }



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
    min_prompts: int = 2,
) -> Confirmation:
    """The held-out :class:`Confirmation` of a point with score matrices ``base`` (c0) and
    ``moved`` (the point), both ``(G, P_held_out)``: the expanded percentile interval from
    ``max(bootstrap, MIN_DRAWS)`` paired draws. With fewer than ``min_prompts`` prompts it is
    not confirmed whatever the interval says (``reason``); the search passes
    :data:`MIN_PROMPTS`, the default 2 is only what a resample needs."""
    n = base.shape[1]
    draws = max(bootstrap, MIN_DRAWS)
    estimate = objective.effect(base, moved)
    if math.isfinite(estimate) and n >= 2:
        found = interval(effect_draws(objective, base, moved, draws, seed), level=LEVEL, method=METHOD,
                         n_blocks=n, min_blocks=min_prompts)  # fmt: skip
        lo, hi = found.as_tuple()
    else:
        lo = hi = math.nan
    reason = not_confirmable(n, min_prompts)
    confirmed = bool(not reason and math.isfinite(lo) and lo > threshold)
    return Confirmation(estimate, (lo, hi), threshold, objective.threshold, n, draws, confirmed,
                        min_prompts, reason)  # fmt: skip
