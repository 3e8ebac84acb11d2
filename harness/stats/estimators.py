"""The study's estimator groups: each computes the values of the metric rows that name it.

A built-in row of :data:`harness.vocab.metrics.METRICS` names its group here as
``"harness.stats.estimators:NAME"``; the metric engine (``stats/engine.py``) runs a group
once per :class:`~harness.stats.engine.Sample`, however many of its rows are asked for. The
groups, in the order the engine lists their values (their order here):

* :func:`factor_levels`: ρ and dispersion per factor, W and distinct winners per shared
  factor, peak ρ, template ρ, min W and max winners (one pass over the factor levels);
* :func:`protocol_envelopes`: sign-crossing and strictly ordered pairs over every shared
  protocol, and the envelope counts;
* :func:`probes`: discrimination per probe and content accuracy;
* :func:`best_view`, :func:`failed_records`, :func:`human_agreement`,
  :func:`factorial_blocks`.

Values that a group and the audit (``stats/audit_stats.py``) both read are computed once per
sample too: :func:`factor_spread` (ρ and dispersion with their draws, peak ρ),
:func:`factor_ranks`, :func:`probe_outcomes`, :func:`probe_credits`, :func:`shared_envelopes`.
Pure: arrays in, arrays out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from harness.human.protocol_dependence import configuration_draws
from harness.stats import bootstrap as bs
from harness.stats._nan import nanmax, nanmean, nanmin
from harness.stats.dispersion import dispersion
from harness.stats.engine import Estimate, Planned, Sample, estimator_group
from harness.stats.envelopes import (
    CATEGORIES,
    SIGN_CROSSING,
    STRICT,
    Envelopes,
    envelopes,
    generator_pairs,
)
from harness.stats.probe_stats import ProbeOutcome, content_accuracy, pair_credit, probe_outcome
from harness.stats.rank import RankStability, rank_stability
from harness.stats.replicates import (
    block_sign_crossing_draws,
    envelope_count_draws,
    factor_draws,
    interaction_share_draws,
    kendall_w_draws,
    level_mean_draws,
    top1_count_draws,
    weighted_median_draws,
)
from harness.stats.rho import peak, rho
from harness.stats.table import EvaluatorScores, generator_means
from harness.stats.views import best_view_inflation, scene_view_inflation
from harness.vocab import metrics as m
from harness.vocab.factors import PITCH, TEMPLATE, YAW, shared_factor_names

# ------------------------------------------------------------------------------ values read twice


def factor_ranks(s: Sample) -> dict[str, RankStability]:
    """Rank stability of each shared factor of the sample (``shared_factor_names`` order),
    from the generator means per level; kept with the sample."""
    return s.once(_factor_ranks)


def _factor_ranks(s: Sample) -> dict[str, RankStability]:
    t = s.scores
    return {f: rank_stability(generator_means(t.factors[f].scores)) for f in shared_factor_names()
            if f in t.factors}


def probe_outcomes(s: Sample) -> dict[str, ProbeOutcome]:
    """The outcome decomposition of each probe (the recorded cells mark attempted pairs);
    kept with the sample."""
    return s.once(_probe_outcomes)


def _probe_outcomes(s: Sample) -> dict[str, ProbeOutcome]:
    t = s.scores
    return {name: probe_outcome(t.baseline, scores, t.probe_recorded.get(name))
            for name, scores in t.probes.items()}


def probe_credits(s: Sample) -> dict[str, np.ndarray]:
    """The directional credit of each probe's (c0, probe) pairs, (G, P) each (1 drop, 0.5
    tie, 0 rise, NaN failed); kept with the sample."""
    return s.once(_probe_credits)


def _probe_credits(s: Sample) -> dict[str, np.ndarray]:
    return {name: pair_credit(s.scores.baseline, scores) for name, scores in s.scores.probes.items()}


def shared_envelopes(s: Sample) -> Envelopes:
    """The margin envelopes of the generator pairs over every shared protocol; kept with the
    sample."""
    return s.once(_shared_envelopes)


def _shared_envelopes(s: Sample) -> Envelopes:
    _ids, shared = s.scores.shared_protocols()
    return envelopes(generator_means(shared))


@dataclass(frozen=True)
class FactorSpread:
    """ρ and dispersion of every factor of a sample (``t.factors`` order): the points by
    factor (a ratio; a fraction), their (B, F) prompt-bootstrap draws (column i: factor i),
    the peak (the factor with the largest finite ρ and that ρ; ``(None, NaN)`` without one)
    and the peak's (B,) draws (each draw's largest ρ)."""

    rho: Mapping[str, float]
    dispersion: Mapping[str, float]
    rho_draws: np.ndarray
    dispersion_draws: np.ndarray
    peak: tuple[str | None, float]
    peak_draws: np.ndarray


def factor_spread(s: Sample) -> FactorSpread:
    """The :class:`FactorSpread` of the sample; kept with it (the group :func:`factor_levels`
    and the audit read it)."""
    return s.once(_factor_spread)


def _factor_spread(s: Sample) -> FactorSpread:
    t = s.scores
    rho_d, disp_d = factor_draws(t, s.weights)
    rhos = {f: rho(fs.scores, t.baseline) for f, fs in t.factors.items()}
    return FactorSpread(
        rho=rhos,
        dispersion={f: dispersion(fs.scores) for f, fs in t.factors.items()},
        rho_draws=rho_d,
        dispersion_draws=disp_d,
        peak=peak(rhos),
        peak_draws=nanmax(rho_d, axis=1) if t.factors else np.full(s.weights.shape[0], np.nan),
    )


def view_poses(t: EvaluatorScores) -> np.ndarray | None:
    """The pitch and yaw poses of ``t`` side by side, (G, P, L_pitch + L_yaw); ``None`` when
    the run has neither."""
    views = [t.factors[f].scores for f in (PITCH, YAW) if f in t.factors]
    return np.concatenate(views, axis=-1) if views else None


# ------------------------------------------------------------------------------ the groups


def _plan_factor_levels(t: EvaluatorScores, human: bool) -> list[Planned]:
    out: list[Planned] = []
    for f in t.factors:
        out += [(m.RHO, f), (m.DISPERSION, f)]
        if f in shared_factor_names():
            out += [(m.KENDALL_W, f), (m.TOP1_COUNT, f)]
    if t.factors:
        out.append((m.PEAK_RHO, None))
    if TEMPLATE in t.factors:
        out.append((m.TEMPLATE_RHO, None))
    if any(f in t.factors for f in shared_factor_names()):
        out += [(m.MIN_W, None), (m.MAX_TOP1, None)]
    return out


@estimator_group(_plan_factor_levels)
def factor_levels(s: Sample) -> list[Estimate]:
    """ρ and dispersion per factor, W and distinct winners per shared factor, then peak ρ,
    template ρ (with a template factor), the smallest W and the most winners over the shared
    factors (with one)."""
    t, weights = s.scores, s.weights
    out: list[Estimate] = []
    if not t.factors:
        return out
    spread, ranks = factor_spread(s), factor_ranks(s)
    w_est: list[Estimate] = []
    top_est: list[Estimate] = []
    for i, (f, fs) in enumerate(t.factors.items()):
        out.append(Estimate(m.RHO, f, spread.rho[f], spread.rho_draws[:, i]))
        out.append(Estimate(m.DISPERSION, f, spread.dispersion[f], spread.dispersion_draws[:, i]))
        if f in ranks:
            means = level_mean_draws(fs.scores, weights)
            w_est.append(Estimate(m.KENDALL_W, f, ranks[f].kendall_w, kendall_w_draws(means)))
            top_est.append(Estimate(m.TOP1_COUNT, f, float(ranks[f].top1_count), top1_count_draws(means)))
            out += [w_est[-1], top_est[-1]]
    out.append(Estimate(m.PEAK_RHO, None, spread.peak[1], spread.peak_draws))
    if TEMPLATE in t.factors:
        i = list(t.factors).index(TEMPLATE)
        out.append(Estimate(m.TEMPLATE_RHO, None, spread.rho[TEMPLATE], spread.rho_draws[:, i]))
    if w_est:
        finite_w = [e.point for e in w_est if np.isfinite(e.point)]
        out.append(Estimate(m.MIN_W, None, float(min(finite_w)) if finite_w else math.nan,
                            nanmin(np.stack([e.draws for e in w_est], axis=1), axis=1)))
        out.append(Estimate(m.MAX_TOP1, None, max(e.point for e in top_est),
                            nanmax(np.stack([e.draws for e in top_est], axis=1), axis=1)))
    return out


def _plan_envelopes(t: EvaluatorScores, human: bool) -> list[Planned]:
    return [(m.SIGN_CROSSINGS, None), (m.STRICT_PAIRS, None)] + [(m.ENVELOPES, c) for c in CATEGORIES]


@estimator_group(_plan_envelopes)
def protocol_envelopes(s: Sample) -> list[Estimate]:
    """Sign-crossing and strictly ordered generator pairs over every shared protocol, then
    the envelope counts keyed by category (strict, sign crossing, tie boundary)."""
    _ids, shared = s.scores.shared_protocols()
    counts = shared_envelopes(s).counts()
    strict_d, cross_d = envelope_count_draws(level_mean_draws(shared, s.weights))
    tie_d = len(generator_pairs(shared.shape[0])) - strict_d - cross_d  # the categories partition the pairs
    by_category = {STRICT: strict_d, SIGN_CROSSING: cross_d}
    return [
        Estimate(m.SIGN_CROSSINGS, None, float(counts[SIGN_CROSSING]), cross_d),
        Estimate(m.STRICT_PAIRS, None, float(counts[STRICT]), strict_d),
    ] + [Estimate(m.ENVELOPES, c, float(counts[c]), by_category.get(c, tie_d)) for c in CATEGORIES]


def _plan_probes(t: EvaluatorScores, human: bool) -> list[Planned]:
    return [(m.DISCRIMINATION, p) for p in t.probes] + ([(m.CONTENT_ACCURACY, None)] if t.probes else [])


@estimator_group(_plan_probes)
def probes(s: Sample) -> list[Estimate]:
    """Tie-adjusted directional discrimination per probe, then content accuracy (their mean)."""
    outcomes, credits = probe_outcomes(s), probe_credits(s)
    out = [Estimate(m.DISCRIMINATION, name, outcomes[name].discrimination,
                    bs.scene_mean_draws(credits[name], s.weights)) for name in s.scores.probes]
    if out:
        point = content_accuracy({e.subject or "": e.point for e in out})
        out.append(Estimate(m.CONTENT_ACCURACY, None, point,
                            nanmean(np.stack([e.draws for e in out], axis=1), axis=1)))
    return out


def _plan_best_view(t: EvaluatorScores, human: bool) -> list[Planned]:
    return [(m.BEST_VIEW_INFLATION, None)] if PITCH in t.factors or YAW in t.factors else []


@estimator_group(_plan_best_view)
def best_view(s: Sample) -> list[Estimate]:
    """Median best-view inflation over the pitch and yaw poses (when the run has them)."""
    t = s.scores
    stacked = view_poses(t)
    if stacked is None:
        return []
    return [Estimate(m.BEST_VIEW_INFLATION, None, best_view_inflation(t.baseline, stacked),
                     weighted_median_draws(scene_view_inflation(t.baseline, stacked), s.weights))]


@estimator_group(lambda t, human: [(m.FAILED_SHARE, None)])
def failed_records(s: Sample) -> list[Estimate]:
    """The share of failed records (from the per-prompt counts; none without them)."""
    if s.failed is None or s.total is None:
        return []
    w = np.asarray(s.weights, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        share_d = (w @ s.failed) / (w @ s.total)
    share = float(s.failed.sum() / s.total.sum()) if s.total.sum() else float("nan")
    return [Estimate(m.FAILED_SHARE, None, share, share_d)]


def _plan_human(t: EvaluatorScores, human: bool) -> list[Planned]:
    if not human:
        return []
    return [(m.HUMAN_AGREEMENT, None)] + [(m.HUMAN_AGREEMENT_DROP, f) for f in t.factors]


@estimator_group(_plan_human)
def human_agreement(s: Sample) -> list[Estimate]:
    """Human agreement at c0 and its largest drop per factor (harness.human.protocol_dependence);
    none without human ratings."""
    if s.human is None:
        return []
    t = s.scores
    g, p = t.baseline.shape
    blocks = np.tile(np.arange(p), g)  # items flattened generator-major: (G·P,)
    series = [t.baseline.reshape(-1)]
    cols_of: dict[str, list[int]] = {}
    for f, fs in t.factors.items():
        for i in range(len(fs.levels)):
            series.append(fs.scores[:, :, i].reshape(-1))
            cols_of.setdefault(f, []).append(len(series) - 1)
    human = np.asarray(s.human, dtype=np.float64).reshape(-1)
    draws = configuration_draws(np.stack(series), human, blocks, s.weights)
    out = [Estimate(m.HUMAN_AGREEMENT, None, float(draws[0, 0]), draws[1:, 0])]
    for f in t.factors:
        cols = cols_of.get(f, [])
        drops = draws[0, 0] - draws[0, cols]  # the point: c0's agreement less each level's
        point = float(np.max(drops[np.isfinite(drops)])) if np.isfinite(drops).any() else math.nan
        per_draw = nanmax(draws[1:, :1] - draws[1:, cols], axis=1)  # paired: max within a draw
        out.append(Estimate(m.HUMAN_AGREEMENT_DROP, f, point, per_draw))
    return out


def _plan_blocks(t: EvaluatorScores, human: bool) -> list[Planned]:
    return [(k, b) for b in t.blocks for k in (m.INTERACTION_SHARE, m.BLOCK_SIGN_CROSSINGS)]


@estimator_group(_plan_blocks)
def factorial_blocks(s: Sample) -> list[Estimate]:
    """Interaction share and block sign crossings of each factorial block (subject: its id)."""
    out = []
    for block in s.scores.blocks.values():
        share, share_d = interaction_share_draws(block, s.weights)
        cross, cross_d = block_sign_crossing_draws(block, s.weights)
        out += [
            Estimate(m.INTERACTION_SHARE, block.id, share, share_d),
            Estimate(m.BLOCK_SIGN_CROSSINGS, block.id, cross, cross_d),
        ]
    return out
