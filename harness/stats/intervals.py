"""Every interval the harness reports, read from bootstrap draws by one policy.

The prompt-block bootstrap (:mod:`harness.stats.bootstrap`) gives draws; this module turns
draws into intervals, and nothing else in ``harness/`` takes a quantile for an interval
(``tests/test_intervals.py`` scans for one). The rules live in one frozen
:class:`IntervalPolicy`, :data:`DEFAULT_POLICY`; changing the small-sample behaviour of every
interval is a change of that one value. Every prompt-block interval is read knowing P, the
prompt blocks its draws resampled (``n_blocks``), by the policy's ``study_method``
(docs/intervals.md says why that method, with the calibration benchmark's numbers). The
constructions:

- ``"percentile"`` (:func:`percentile_bounds`): the draws' quantiles at ``(1 ∓ level) / 2``,
  NaN draws skipped; the primitive every other construction reads its quantiles with.
- ``"expanded percentile"`` (:func:`interval` and :func:`block_bounds` with ``n_blocks``, the
  default ``study_method``): the quantiles taken at Hesterberg's expanded level
  (:func:`expanded_level`) so that, for a mean over P prompt blocks, the interval is as wide
  as the t interval while keeping the bootstrap's asymmetry. The audit's, ``compare``'s
  pointwise, the leaderboard's, the peers' and the human agreement intervals, and the search's
  held-out confirmation. Below :meth:`IntervalPolicy.min_blocks` blocks an interval is still
  reported, but it is *not confirmable* (no lower bound can reach the nominal level) and no
  verdict is called confirmed on it.
- ``"max-t"`` (:func:`max_t_band`, :func:`critical_value`): simultaneous intervals over a
  family, θ_j ± q·SE_j with q the quantile over draws of max_j |θ*_j − θ_j| / SE_j (the
  study's Eq. 3), optionally one width for the family. Given P, q is read at the level the
  study method reads a pointwise interval at (:meth:`IntervalPolicy.read_level`). The release
  gate, the simultaneous contrast band (:mod:`harness.stats.simultaneous`), the concordance's
  disagreements and the human protocol drops.
- ``"wilson"`` (:func:`share_interval`): the score interval of a share k / n, for counts that
  are not bootstrap draws (the search's flip region).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np

from harness.stats._nan import nanmax

Method = Literal["percentile", "expanded percentile"]
QuantileRule = Literal["linear"]


@dataclass(frozen=True)
class IntervalPolicy:
    """The rules every interval follows.

    ``level``: the nominal coverage of an interval when the caller names none (0.95).
    ``quantile_rule``: numpy's quantile ``method`` for every percentile and critical value
    (``"linear"``: Hyndman–Fan type 7, numpy's default). ``held_out_method``: the interval of a
    selection-aware confirmation on held-out prompts. ``held_out_min_draws``: the fewest draws
    it is read from (its tail quantiles need many). ``few_block_widening``: under a
    ``"percentile"`` study method, whether a max-t critical value given its number of resampled
    prompt blocks is widened by √(P/(P − 1)) (the expanded level already holds that factor).
    ``study_method``: how every other prompt-block interval over P blocks is read, pointwise
    and, through :meth:`read_level`, the max-t critical values. ``refuse_below_min_blocks``:
    whether a verdict over fewer prompt blocks than :meth:`min_blocks` is refused ("not
    confirmable", :meth:`not_confirmable`) while its interval is still reported.
    """

    level: float = 0.95
    quantile_rule: QuantileRule = "linear"
    held_out_method: Method = "expanded percentile"
    held_out_min_draws: int = 2000
    few_block_widening: bool = True
    study_method: Method = "expanded percentile"
    refuse_below_min_blocks: bool = True

    def min_blocks(self, level: float | None = None) -> int:
        """The fewest prompt blocks at which a lower bound can be confirmed at ``level``: the
        most extreme sign pattern of n blocks, 2⁻ⁿ under a symmetric null, must be at most the
        lower bound's one-sided error ``(1 − level) / 2`` (6 at 95 %)."""
        lvl = self.level if level is None else level
        return math.ceil(math.log2(2.0 / (1.0 - lvl)))

    def read_level(self, n_blocks: int | None, level: float | None = None) -> float:
        """The percentile level a ``level`` interval over ``n_blocks`` prompt blocks is read at:
        ``level`` itself under a ``"percentile"`` study method (or without ``n_blocks``),
        :func:`expanded_level` under ``"expanded percentile"`` (NaN below 2 blocks)."""
        lvl = self.level if level is None else level
        if n_blocks is None or self.study_method == "percentile":
            return lvl
        return expanded_level(n_blocks, lvl, policy=self)

    def not_confirmable(self, n_blocks: int, level: float | None = None, noun: str = "prompts") -> str:
        """Why no verdict may rest on an interval over ``n_blocks`` prompt blocks
        (``"not confirmable: 2 prompts (needs 6)"``), ``""`` when one may."""
        need = self.min_blocks(level)
        if not self.refuse_below_min_blocks or n_blocks >= need:
            return ""
        return f"not confirmable: {n_blocks} {noun} (needs {need})"


DEFAULT_POLICY = IntervalPolicy()


@dataclass(frozen=True)
class Interval:
    """One interval: ``low``, ``high`` (NaN where undefined), the ``method`` that built it, its
    nominal ``level``, the ``percentile_level`` its quantiles were read at (the nominal one
    for ``"percentile"``, the expanded one for ``"expanded percentile"``), the ``n_blocks``
    resampled (``None``: not given) and whether a verdict may rest on it (``confirmable``:
    ``n_blocks`` is at least the policy's minimum, or was not given)."""

    low: float
    high: float
    method: str
    level: float
    percentile_level: float
    n_blocks: int | None
    confirmable: bool

    def as_tuple(self) -> tuple[float, float]:
        return self.low, self.high


def _quantiles(values: np.ndarray, q: float | list[float], axis: int | None, policy: IntervalPolicy) -> np.ndarray:
    """The one quantile call of the harness: NaN values skipped, an empty slice gives NaN."""
    if np.isfinite(values).all():
        return np.quantile(values, q, axis=axis, method=policy.quantile_rule)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanquantile(values, q, axis=axis, method=policy.quantile_rule)


def percentile_bounds(
    draws: np.ndarray, level: float | None = None, *, policy: IntervalPolicy = DEFAULT_POLICY
) -> np.ndarray:
    """Pointwise percentile intervals over the draw axis 0, NaN draws skipped.

    ``draws``: (B, ...). Returns (2, ...): the lower and upper quantiles at ``(1 ∓ level) / 2``
    (``level`` defaults to the policy's); NaN where a column holds no finite draw (or there
    are no draws).
    """
    a = (1.0 - (policy.level if level is None else level)) / 2.0
    d = np.asarray(draws, dtype=np.float64)
    if d.ndim and d.shape[0] == 0:
        return np.full((2, *d.shape[1:]), np.nan)
    return _quantiles(d, [a, 1.0 - a], 0, policy)


def percentile_columns(
    draws: np.ndarray, level: float | None = None, *, policy: IntervalPolicy = DEFAULT_POLICY
) -> np.ndarray:
    """:func:`percentile_bounds` of wide (B, C) draws → (2, C), bit for bit the same values.

    One sort per column instead of numpy's partitions, then numpy's own "linear" quantile rule
    step for step (virtual index (m − 1)·q over the m non-NaN draws, its floor and the next
    index, and numpy's two-sided interpolation), so every bit agrees: NaN draws are skipped as
    ``nanquantile`` skips them, and a column without a draw gives NaN. Faster than numpy's
    partitions for hundreds of columns; a policy with another quantile rule falls back to
    :func:`percentile_bounds`.
    """
    if policy.quantile_rule != "linear":
        return percentile_bounds(draws, level, policy=policy)
    a = (1.0 - (policy.level if level is None else level)) / 2.0
    q = np.array([a, 1.0 - a])
    d = np.array(np.asarray(draws, dtype=np.float64).T, order="C")  # (C, B), a copy
    d.sort(axis=1)  # NaN last
    m = (~np.isnan(d)).sum(axis=1)[:, None]  # (C, 1)
    virtual = (m - 1) * q[None, :]  # (C, 2)
    prev = np.floor(virtual)
    nxt = prev + 1
    above = virtual >= m - 1
    prev[above] = nxt[above] = -1  # the last non-NaN draw
    below = virtual < 0
    prev[below] = nxt[below] = 0
    gamma = virtual - prev
    rows = np.arange(d.shape[0])[:, None]
    lo = d[rows, np.where(prev < 0, m + prev, prev).astype(np.intp)]
    hi = d[rows, np.where(nxt < 0, m + nxt, nxt).astype(np.intp)]
    diff = hi - lo
    with np.errstate(invalid="ignore"):
        out = np.where(gamma >= 0.5, hi - diff * (1 - gamma), lo + diff * gamma)
    return np.where(m > 0, out, np.nan).T


def expanded_level(n: int, level: float | None = None, *, policy: IntervalPolicy = DEFAULT_POLICY) -> float:
    """The percentile level of Hesterberg's expanded percentile interval for ``n`` prompt
    blocks: ``1 − α'`` with ``z_{α'/2} = sqrt(n/(n−1)) · t_{α/2, n−1}`` (``level`` = 1 − α;
    T. Hesterberg, "What teachers should know about the bootstrap", The American Statistician
    69, 2015, §5). NaN below 2 blocks."""
    from scipy import stats

    lvl = policy.level if level is None else level
    if n < 2:
        return math.nan
    z = math.sqrt(n / (n - 1)) * float(stats.t.ppf(1.0 - (1.0 - lvl) / 2.0, n - 1))
    return 1.0 - 2.0 * float(stats.norm.sf(z))


def interval(
    draws: np.ndarray,
    *,
    level: float | None = None,
    method: Method | None = None,
    n_blocks: int | None = None,
    min_blocks: int | None = None,
    policy: IntervalPolicy = DEFAULT_POLICY,
) -> Interval:
    """The :class:`Interval` of one statistic from its (B,) bootstrap ``draws`` over
    ``n_blocks`` resampled prompt blocks (NaN draws skipped; none finite gives NaN ends).

    ``method`` (default: the policy's ``study_method`` when ``n_blocks`` is given, else
    ``"percentile"``): "percentile" reads the quantiles at ``level`` (default the policy's);
    "expanded percentile" at :func:`expanded_level` of ``n_blocks`` (required; NaN ends below 2
    blocks). ``confirmable`` is ``n_blocks >= min_blocks`` (default
    :meth:`IntervalPolicy.min_blocks`, none when the policy does not refuse below it), True when
    ``n_blocks`` is not given.
    """
    lvl = policy.level if level is None else level
    if method is None:
        method = policy.study_method if n_blocks is not None else "percentile"
    if method == "percentile":
        read_at = lvl
    elif method == "expanded percentile":
        if n_blocks is None:
            raise ValueError("an expanded percentile interval needs n_blocks, the prompt blocks resampled")
        read_at = expanded_level(n_blocks, lvl, policy=policy)
    else:
        raise ValueError(f"unknown interval method {method!r}; use 'percentile' or 'expanded percentile'")
    if math.isfinite(read_at):
        lo, hi = (float(x) for x in percentile_bounds(np.ravel(draws), read_at, policy=policy))
    else:
        lo = hi = math.nan
    if min_blocks is not None:
        need = min_blocks
    else:
        need = policy.min_blocks(lvl) if policy.refuse_below_min_blocks else 0
    confirmable = n_blocks is None or n_blocks >= need
    return Interval(lo, hi, method, lvl, read_at, n_blocks, confirmable)


def block_bounds(
    draws: np.ndarray, n_blocks: int, level: float | None = None, *, policy: IntervalPolicy = DEFAULT_POLICY
) -> np.ndarray:
    """The study method's interval of every column of (B, ...) ``draws`` over ``n_blocks``
    resampled prompt blocks: (2, ...), :func:`percentile_bounds` read at
    :meth:`IntervalPolicy.read_level` (NaN everywhere below 2 blocks under the expanded
    percentile: one block has no spread to read)."""
    read_at = policy.read_level(n_blocks, level)
    if not math.isfinite(read_at):
        d = np.asarray(draws, dtype=np.float64)
        return np.full((2, *d.shape[1:]), np.nan)
    return percentile_bounds(draws, read_at, policy=policy)


def block_columns(
    draws: np.ndarray, n_blocks: int, level: float | None = None, *, policy: IntervalPolicy = DEFAULT_POLICY
) -> np.ndarray:
    """:func:`block_bounds` of wide (B, C) draws → (2, C) by :func:`percentile_columns`, bit for
    bit the same values."""
    read_at = policy.read_level(n_blocks, level)
    if not math.isfinite(read_at):
        return np.full((2, np.asarray(draws).shape[1]), np.nan)
    return percentile_columns(draws, read_at, policy=policy)


def critical_value(statistics: np.ndarray, level: float | None = None, *,
                   policy: IntervalPolicy = DEFAULT_POLICY) -> float:
    """A simultaneous band's critical value: the ``level`` quantile of the per-draw maxima
    ``statistics`` (B,) (e.g. max_j |θ*_j − θ_j| / SE_j); NaN when there are none or the
    level is NaN."""
    t = np.asarray(statistics, dtype=np.float64)
    lvl = policy.level if level is None else level
    if not t.size or not math.isfinite(lvl):
        return float("nan")
    return float(_quantiles(t, lvl, None, policy))


def few_cluster_inflation(clusters: int) -> float:
    """√(P/(P − 1)): the prompt-block bootstrap's variance is biased low by (P − 1)/P with P
    resampled prompts (the plug-in variance of a mean of P values); the critical value is
    widened by the inverse. 1.095 at the study's 6 prompts, → 1 as P grows."""
    return float(np.sqrt(clusters / (clusters - 1.0))) if clusters >= 2 else float("nan")


def _draw_sd(d: np.ndarray) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanstd(d, axis=0, ddof=1)


@dataclass(frozen=True)
class MaxTBand:
    """Simultaneous intervals for a family of J estimates from shared bootstrap draws.

    ``point`` (J,), ``se`` (J,) the SD of each estimate's draws (ddof 1), ``eligible`` (J,)
    (finite point and an SE above rounding, :data:`ROUNDING_SPREAD`), ``q`` the critical value
    (NaN when none is eligible) and
    ``studentized``: the band is θ_j ± q·SE_j when True, θ_j ± q (one width) when False.
    """

    point: np.ndarray
    se: np.ndarray
    eligible: np.ndarray
    q: float
    level: float
    studentized: bool = True

    def interval(self) -> tuple[np.ndarray, np.ndarray]:
        """(lo, hi), each (J,). An estimate whose draws never move (SE 0 or rounding residue,
        e.g. a level scored exactly like c0, or every score shifted by one constant) gets the
        point [θ, θ]; one without finite draws NaN."""
        scale = self.se if self.studentized else np.ones_like(self.se)
        with np.errstate(invalid="ignore"):
            half = np.where(self.eligible, self.q * scale, np.where(rounding_spread(self.se, self.point), 0.0, np.nan))
        return self.point - half, self.point + half


#: A bootstrap SD below this fraction of the estimate's magnitude is rounding residue (draws
#: that equal the point in exact arithmetic), so the estimate has no sampling spread to band.
ROUNDING_SPREAD = 1e-9


def rounding_spread(se: np.ndarray, point: np.ndarray) -> np.ndarray:
    """Where a finite bootstrap SD (J,) is rounding residue of its estimate ``point`` (J,), 0
    included: at most :data:`ROUNDING_SPREAD` of the estimate's magnitude."""
    return np.isfinite(se) & (se <= ROUNDING_SPREAD * np.maximum(np.abs(point), 1e-300))


def max_t_band(point: np.ndarray, draws: np.ndarray, level: float | None = None, *,
               studentize: bool = True, clusters: int | None = None,
               policy: IntervalPolicy = DEFAULT_POLICY) -> MaxTBand:
    """The study's max-t construction (Eq. 3) for any paired family of estimates.

    ``point`` (J,) the original-sample values, ``draws`` (B, J) their replicates from the same
    prompt-block draws (NaN = undefined in that draw, skipped). The estimates need not be means
    of per-prompt values (e.g. differences of correlations), so the draws are given rather than
    formed here. q is the ``level`` quantile over draws of max_j |θ*_j − θ_j| / SE_j
    (``studentize``) or of max_j |θ*_j − θ_j| (not studentized: one width for the family), over
    eligible j. Every interval covers its target jointly with the others at ``level``, so a
    check that takes the worst of J levels is not J chances to fail by noise. ``clusters`` (the
    prompts resampled, P) reads q at :meth:`IntervalPolicy.read_level` (the expanded level of
    the ``"expanded percentile"`` study method: for one estimate, not studentized, the
    symmetric expanded percentile interval); under a ``"percentile"`` study method it
    multiplies q by :func:`few_cluster_inflation` when the policy's ``few_block_widening`` is on.

    Why not studentize with few prompts: SE_j from 6 prompts is itself noisy, and the maximum
    over hundreds of levels picks the levels whose SE came out small; in the null simulation of
    tests/test_human_honest_stats.py (6 prompts, 90 replications, three noise levels) the
    studentized band failed a one-sided 2.5 % check 8-28 % of the time at 337 levels, the
    one-width band at most 2.2 % at 10, 50 or 337 levels.
    """
    lvl = policy.level if level is None else level
    theta = np.asarray(point, dtype=np.float64).ravel()
    raw = np.asarray(draws, dtype=np.float64)
    d = raw.reshape(-1, theta.size) if theta.size else np.zeros((raw.shape[0] if raw.ndim else 0, 0))
    se = _draw_sd(d) if d.shape[0] > 1 else np.full(theta.size, np.nan)
    se = np.where(np.isfinite(d).any(axis=0), se, np.nan)
    if clusters is not None and clusters < 2:  # every draw is the sample itself: no spread to read
        se = np.full(theta.size, np.nan)
    # draws that equal the point only where the estimate is defined (e.g. a within-prompt spread
    # on resamples of two prompts, undefined whenever one prompt is drawn twice) say nothing of
    # its precision: such an estimate has no interval, never the zero-width one; unless it is
    # exactly 0 on every draw where defined (two identical releases: nothing differs at all)
    rounding = rounding_spread(se, theta)
    identical = (theta == 0) & (se == 0)
    se = np.where(rounding & ~identical & ~np.isfinite(d).all(axis=0), np.nan, se)
    # a spread of a few ulps is rounding, not sampling: studentizing by it would turn the
    # rounding residue of draws equal to the point into t statistics of order one
    eligible = np.isfinite(theta) & np.isfinite(se) & ~rounding_spread(se, theta)
    q = float("nan")
    if eligible.any():
        with np.errstate(invalid="ignore"):
            t = np.abs(d[:, eligible] - theta[eligible])
            if studentize:
                t = t / se[eligible]
        t_max = nanmax(t, axis=1)
        q = critical_value(t_max[np.isfinite(t_max)], policy.read_level(clusters, lvl), policy=policy)
        if clusters is not None and policy.study_method == "percentile" and policy.few_block_widening:
            q *= few_cluster_inflation(clusters)
    return MaxTBand(theta, se, eligible, q, lvl, studentize)


def share_interval(k: int, n: int, level: float | None = None, *,
                   policy: IntervalPolicy = DEFAULT_POLICY) -> tuple[float, float]:
    """The Wilson score interval of a share ``k / n`` (``0 <= k <= n``) at ``level``; (NaN,
    NaN) for ``n = 0``. Its lower bound at ``k = 0`` is exactly 0 and its upper bound at
    ``k = n`` exactly 1: in floating point ``centre − half`` leaves a rounding residue there
    (5.55e-17 for 0 of 3), which a gate ``<= 0`` would read as flips; and the share itself
    always lies inside."""
    from scipy import stats

    if n == 0:
        return math.nan, math.nan
    lvl = policy.level if level is None else level
    z = float(stats.norm.ppf(1.0 - (1.0 - lvl) / 2.0))
    p = k / n
    den = 1 + z**2 / n
    centre = (p + z**2 / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z**2 / (4 * n * n)) / den
    lo = 0.0 if k == 0 else min(max(0.0, centre - half), p)
    hi = 1.0 if k == n else max(min(1.0, centre + half), p)
    return lo, hi


def withheld_ends(bounds: tuple[float, float], metric: str, n_blocks: int) -> tuple[float, float]:
    """``bounds`` with an end withheld (NaN) where it would not cover: the upper end when
    ``metric``'s row sets ``upper_min_blocks`` and the interval rests on fewer prompt blocks (a
    statistic biased low with few prompts misses above), the lower end likewise for
    ``lower_min_blocks`` (one biased high misses below); unchanged otherwise, and for a name the
    registry does not hold."""
    from harness.vocab.metrics import METRICS

    spec = METRICS.find(metric)
    if spec is None:
        return bounds
    low, high = bounds
    if spec.lower_min_blocks is not None and n_blocks < spec.lower_min_blocks:
        low = float("nan")
    if spec.upper_min_blocks is not None and n_blocks < spec.upper_min_blocks:
        high = float("nan")
    return (low, high)
