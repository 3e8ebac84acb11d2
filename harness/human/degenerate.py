"""When a human-agreement figure would be a number without meaning: the reasons, one line each.

Every function returns the reasons (plain sentences, what and why) a figure is refused or
flagged; the assembly (:mod:`harness.human.agreement_table`) sets refused figures to ``None`` and
lists the reasons under ``flags``. Nothing here computes a statistic.

- fewer than :data:`MIN_ITEMS` items: a correlation of 2 points is ±1 whatever the scores;
- fewer than two prompt blocks: the prompt-block bootstrap has one sample to draw, so any
  interval would have zero width;
- human ratings all equal: nothing to agree with (every pair a human tie, so a metric that ties
  everything scores pairwise accuracy 1.0);
- fewer than two items with two ratings: Krippendorff's α needs two pairable units (one gives 0);
- raters on different scales: α of the raw ratings far below α after standardising each rater.
"""

from __future__ import annotations

import numpy as np

MIN_ITEMS = 3  # below this a correlation is ±1 (or undefined) by construction
SCALE_GAP = 0.1  # α(standardised) − α(raw) above which the raters' scales are said to differ


def series_reasons(n_items: int, n_blocks: int, human_constant: bool) -> tuple[list[str], bool, bool]:
    """(reasons, refuse the statistics, refuse the intervals) for one score series.

    ``n_items``: items with both a score and a rating; ``n_blocks``: prompt blocks they span;
    ``human_constant``: the mean ratings of those items are all equal.
    """
    reasons = []
    refuse = refuse_ci = False
    if n_items < MIN_ITEMS:
        reasons.append(f"{n_items} item(s) with a score and a rating: a correlation needs at least "
                       f"{MIN_ITEMS} (with 2 it is ±1 whatever the scores); not reported")
        refuse = refuse_ci = True
    elif human_constant:
        reasons.append("the human ratings of these items are all equal: there is no ordering to agree "
                       "with (pairwise accuracy would be 1.0 for a metric that ties everything); not reported")
        refuse = refuse_ci = True
    if n_blocks < 2 and not refuse_ci:
        reasons.append(f"the items span {n_blocks} prompt block(s): the bootstrap cannot resample one "
                       "block, so there is no interval (it would have zero width)")
        refuse_ci = True
    return reasons, refuse, refuse_ci


def reliability_reasons(ratings: np.ndarray) -> tuple[list[str], bool]:
    """(reasons, refuse α and the ceiling) for a (U, R) ratings matrix."""
    r = np.asarray(ratings, dtype=np.float64)
    pairable = int((np.isfinite(r).sum(axis=1) >= 2).sum())
    if pairable < 2:
        return [f"{pairable} item(s) rated twice or more: Krippendorff's alpha needs at least 2 "
                "(with one it is 0 whatever the ratings); alpha and the noise ceiling not reported"], True
    return [], False


def standardize_raters(ratings: np.ndarray) -> np.ndarray:
    """Each rater's ratings as z-scores over the items that rater rated: (U, R) → (U, R).

    For raters who use the scale differently (one rates 1-3, another 2-6): the mean rating and α
    then compare the raters' orderings, not their offsets and spreads. A rater with one rating
    or no spread (all equal) has no z-score and is dropped (NaN).
    """
    r = np.asarray(ratings, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            mean = np.nanmean(r, axis=0)
            sd = np.nanstd(r, axis=0, ddof=1)
        z = (r - mean) / sd
    return np.where(np.isfinite(sd) & (sd > 0), z, np.nan)


def scale_reason(alpha_raw: float, alpha_standardized: float) -> str | None:
    """A flag when standardising each rater raises α by more than :data:`SCALE_GAP`."""
    if not (np.isfinite(alpha_raw) and np.isfinite(alpha_standardized)):
        return None
    if alpha_standardized - alpha_raw <= SCALE_GAP:
        return None
    return (f"the raters use the scale differently: alpha {alpha_raw:.3f} on the raw ratings, "
            f"{alpha_standardized:.3f} after standardising each rater; consider --standardize-raters")
