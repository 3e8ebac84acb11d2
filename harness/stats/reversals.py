"""Winner reversals: descriptive, pointwise and simultaneous (study §4.3, Appendix H).

For one evaluator and one shared factor, a *candidate* is two levels l1, l2 whose unique
sample winners a ≠ b differ. It is a pointwise (simultaneous) reversal when the interval
of Δ_ab at l1 lies above zero and the interval of Δ_ab at l2 lies below zero. Both are
confirmations: with fewer prompts than the interval policy's minimum
(:meth:`harness.stats.intervals.IntervalPolicy.min_blocks`) none is called, and the search
says why (``reason``: "not confirmable: 2 prompts (needs 6)").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.stats._nan import nanmean
from harness.stats.bootstrap import prompt_mean_draws
from harness.stats.family import ContrastFamily
from harness.stats.intervals import DEFAULT_POLICY, IntervalPolicy, block_bounds
from harness.stats.rank import unique_winners
from harness.stats.simultaneous import Band
from harness.stats.table import EvaluatorScores, generator_means
from harness.vocab.factors import shared_factor_names


@dataclass(frozen=True)
class Reversal:
    """One confirmed opposite-interval pair: Δ_ab = L(a) − L(b) at two levels of a factor.

    ``gap1``/``gap2`` are the point margins at ``level1``/``level2``; ``ci1``/``ci2`` the
    intervals of the kind named by ``kind`` ("pointwise" or "simultaneous");
    ``band1``/``band2`` the simultaneous-band intervals at the same two levels (NaN for an
    ineligible contrast), so a pointwise instance shows what the band says about it.
    """

    evaluator: str
    factor: str
    winner1: str
    winner2: str
    level1: str
    level2: str
    gap1: float
    gap2: float
    ci1: tuple[float, float]
    ci2: tuple[float, float]
    kind: str
    band1: tuple[float, float] = (float("nan"), float("nan"))
    band2: tuple[float, float] = (float("nan"), float("nan"))


@dataclass(frozen=True)
class ReversalSearch:
    """Per-evaluator flags and every confirmed instance, in search order (evaluator, factor,
    winner pair); each instance is the most separated level pair of its winner pair.
    ``reason``: why nothing could be confirmed ("not confirmable: ..."), ``""`` otherwise."""

    descriptive: dict[str, bool]
    pointwise: dict[str, bool]
    simultaneous: dict[str, bool]
    instances: tuple[Reversal, ...]
    reason: str = ""

    def counts(self) -> dict[str, int]:
        return {
            "descriptive": sum(self.descriptive.values()),
            "pointwise": sum(self.pointwise.values()),
            "simultaneous": sum(self.simultaneous.values()),
        }


def search_reversals(
    evaluators: list[EvaluatorScores],
    weights: np.ndarray,
    family: ContrastFamily,
    band: Band,
    level: float = 0.95,
    *,
    policy: IntervalPolicy = DEFAULT_POLICY,
) -> ReversalSearch:
    """Search every (evaluator, shared factor) of ``family`` for reversals.

    ``weights`` (B, P) are the audit's shared prompt counts; pointwise intervals are the
    policy's intervals of the paired differences over the P prompts
    (:func:`harness.stats.intervals.block_bounds`), simultaneous ones come from ``band``.
    Below ``policy.min_blocks()`` prompts every reversal stays descriptive (``reason``).
    """
    n_blocks = int(np.asarray(weights).shape[1])
    reason = policy.not_confirmable(n_blocks, level)
    desc: dict[str, bool] = {}
    point: dict[str, bool] = {}
    simul: dict[str, bool] = {}
    found: list[Reversal] = []
    for ev in evaluators:
        name = ev.evaluator
        desc[name] = point[name] = simul[name] = False
        for factor in shared_factor_names():
            if factor not in ev.factors:
                continue
            fs = ev.factors[factor]
            win = unique_winners(generator_means(fs.scores))
            winners = sorted(set(win[win >= 0].tolist()))
            if len(winners) < 2:
                continue
            desc[name] = True
            if reason:
                continue
            for i_a, a in enumerate(winners):
                for b in winners[i_a + 1 :]:
                    la = np.flatnonzero(win == a)
                    lb = np.flatnonzero(win == b)
                    levels = np.concatenate([la, lb])
                    d = fs.scores[a][:, levels] - fs.scores[b][:, levels]  # (P, k)
                    gaps = nanmean(d, axis=0)
                    lo, hi = block_bounds(prompt_mean_draws(d, weights), n_blocks, level, policy=policy)
                    s_lo, s_hi = _simultaneous(family, band, name, factor, fs.levels, a, b, levels)
                    for kind, (L, H), flags in (
                        ("pointwise", (lo, hi), point),
                        ("simultaneous", (s_lo, s_hi), simul),
                    ):
                        r = _best_pair(L, H, gaps, len(la))
                        if r is None:
                            continue
                        i, k = r
                        flags[name] = True
                        found.append(
                            Reversal(
                                evaluator=name,
                                factor=factor,
                                winner1=ev.generators[a],
                                winner2=ev.generators[b],
                                level1=fs.levels[levels[i]],
                                level2=fs.levels[levels[k]],
                                gap1=float(gaps[i]),
                                gap2=float(gaps[k]),
                                ci1=(float(L[i]), float(H[i])),
                                ci2=(float(L[k]), float(H[k])),
                                kind=kind,
                                band1=(float(s_lo[i]), float(s_hi[i])),
                                band2=(float(s_lo[k]), float(s_hi[k])),
                            )
                        )
    return ReversalSearch(desc, point, simul, tuple(found), reason)


def _best_pair(lo: np.ndarray, hi: np.ndarray, gaps: np.ndarray, n_a: int):
    """Indices (i in the a-won levels with lo > 0, k in the b-won levels with hi < 0),
    choosing the most separated of each side; None when no such pair exists."""
    pos = np.flatnonzero(np.nan_to_num(lo[:n_a], nan=-np.inf) > 0)
    neg = n_a + np.flatnonzero(np.nan_to_num(hi[n_a:], nan=np.inf) < 0)
    if pos.size == 0 or neg.size == 0:
        return None
    return int(pos[np.argmax(lo[pos])]), int(neg[np.argmin(hi[neg])])


def _simultaneous(family, band, name, factor, levels, a, b, idx):
    """Band intervals of Δ_ab at the levels ``idx``, oriented as L(a) − L(b)."""
    pair = (min(a, b), max(a, b))
    sign = 1.0 if a < b else -1.0
    cols = np.array([family.column(name, pair, f"{factor}={levels[i]}") for i in idx])
    lo, hi = band.interval(cols)
    if sign < 0:
        lo, hi = -hi, -lo
    return lo, hi
