"""Factorial blocks: main effects, interaction and ranking flips inside a full cross.

A block crosses 2 or 3 factors; each scene s (generator × prompt) has a score y_s(c) in every
cell c. Within a scene, the balanced ANOVA decomposition splits the protocol sum of squares
SS_tot = Σ_c (y(c) − ȳ)² into main effects SS_i = Σ_c (ȳ_i(c_i) − ȳ)² (ȳ_i: the marginal mean
over the other factors) and the non-additive rest SS_int = Σ_c r(c)², r the residual of the
additive model ȳ + Σ_i (ȳ_i − ȳ) (for two factors: the A×B interaction). The shares are pooled
over scenes, η²_X = Σ_s SS_X(s) / Σ_s SS_tot(s), and sum to 1. A block that moves no score at
all (Σ SS_tot numerically zero) has nothing to attribute: its interaction share is 0 and its
main shares 0 (never NaN: a perfectly protocol-invariant evaluator has no interaction).

The generator × protocol interaction that flips rankings is read off the generator means per
cell: margin envelopes over the cells (:mod:`harness.stats.envelopes`) and the distinct unique
winners. Additivity compares the observed cell means with the OFAT prediction
ŷ(c) = Σ_i y(factor_i = c_i) − (k − 1)·y(c0), each term the OFAT row of that level.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.stats import bootstrap as bs
from harness.stats._nan import nanmean
from harness.stats.envelopes import SIGN_CROSSING, STRICT, Envelopes, envelopes
from harness.stats.intervals import interval
from harness.stats.rank import unique_winners
from harness.stats.rho import generator_signal

ZERO_RTOL = 1e-12  # SS_tot below (ZERO_RTOL · score scale)² per cell counts as zero

CI = tuple[float, float]  # a pointwise 95 % interval in memory: NaN ends where undefined
NAN_CI: CI = (float("nan"), float("nan"))


def scene_sums_of_squares(y: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Within-scene decomposition of a block.

    ``y``: (..., L1, ..., Lk) scores, the last ``k`` axes the block's factors. Returns
    ``(main, interaction, total)``: main (k, ...) the main-effect sums of squares per factor,
    interaction (...) the non-additive rest, total (...) Σ (y − ȳ)²; score units squared. A
    scene with any NaN cell gets NaN everywhere (the design must be complete to decompose).
    """
    y = np.asarray(y, dtype=np.float64)
    cell_axes = tuple(range(y.ndim - k, y.ndim))
    complete = np.isfinite(y).all(axis=cell_axes)
    filled = np.where(np.isfinite(y), y, 0.0)
    grand = filled.mean(axis=cell_axes, keepdims=True)
    fitted = np.broadcast_to(grand, y.shape).copy()
    main = []
    for ax in cell_axes:
        others = tuple(a for a in cell_axes if a != ax)
        effect = np.broadcast_to(filled.mean(axis=others, keepdims=True) - grand, y.shape)
        main.append((effect**2).sum(axis=cell_axes))
        fitted = fitted + effect
    interaction = ((filled - fitted) ** 2).sum(axis=cell_axes)
    total = ((filled - grand) ** 2).sum(axis=cell_axes)
    nan = np.where(complete, 1.0, np.nan)
    return np.stack(main) * nan, interaction * nan, total * nan


def zero_tolerance(y: np.ndarray, n_cells: int) -> float:
    """The per-scene mean sum of squares below which a block of ``n_cells`` cells with scores
    ``y`` moves nothing (rounding noise relative to the scores' scale), score units squared."""
    finite = np.isfinite(y)
    scale = float(np.abs(y[finite]).max()) if finite.any() else 0.0
    return n_cells * (ZERO_RTOL * max(scale, 1.0)) ** 2


def shares(parts: np.ndarray, total: np.ndarray, tol: float) -> np.ndarray:
    """``parts / total`` along the last axis pairing, 0 where ``total`` ≤ ``tol``; NaN stays NaN."""
    with np.errstate(invalid="ignore", divide="ignore"):
        out = parts / total
    return np.where(np.isfinite(total) & (total <= tol), 0.0, out)


@dataclass(frozen=True)
class BlockStats:
    """Statistics of one evaluator on one block (see the module docstring).

    ``main_share`` per factor and ``interaction_share``: fractions of the pooled within-scene
    protocol sum of squares (they sum to 1, or are all 0 when the block moves nothing);
    ``*_ci`` their pointwise 95 % prompt-bootstrap intervals. ``rho_interaction``: the
    interaction's mean per-cell variance over the generator signal (a ratio comparable with
    ρ); ``rho_block`` the same for the block's whole within-scene variance. ``envelopes``:
    margin envelopes over the block's cells; ``new_sign_crossings``: pairs crossing zero in
    the block while strictly ordered over the OFAT shared protocols (``None`` without those);
    ``winner_count``: distinct unique winners over the cells. ``cell_means`` (G, cells) and
    ``predicted`` (G, cells): observed generator means per cell and the OFAT additive
    prediction, cells in :meth:`cells` order; ``additivity_rmse`` (score units) the RMS of
    their difference over generators × cells, ``max_additivity_error`` its largest |value|.
    """

    id: str
    factors: tuple[str, ...]
    levels: tuple[tuple[str, ...], ...]
    main_share: dict[str, float]
    main_share_ci: dict[str, CI]
    interaction_share: float
    interaction_share_ci: CI
    rho_interaction: float
    rho_interaction_ci: CI
    rho_block: float
    envelopes: Envelopes
    new_sign_crossings: int | None
    winner_count: int
    cell_means: np.ndarray
    predicted: np.ndarray
    additivity_rmse: float
    max_additivity_error: float
    n_scenes: int

    def cells(self) -> list[tuple[str, ...]]:
        """Cell levels in the order of ``cell_means``' last axis (last factor fastest)."""
        from itertools import product

        return list(product(*self.levels))

    @property
    def sign_crossings(self) -> int:
        return self.envelopes.counts()[SIGN_CROSSING]


def additive_prediction(
    ofat: list[np.ndarray | None], baseline: np.ndarray
) -> np.ndarray:
    """ŷ(c) = Σ_i OFAT_i(c_i) − (k − 1)·baseline, per scene.

    ``ofat[i]``: (G, P, L_i) the OFAT rows of factor i at the block's levels (``None`` or NaN
    where a level has no OFAT row), ``baseline`` (G, P). Returns (G, P, L1, ..., Lk).
    """
    k = len(ofat)
    base = np.asarray(baseline, dtype=np.float64)
    shape = [int(o.shape[-1]) for o in ofat if o is not None]
    if len(shape) != k:
        return np.full((*base.shape, *(1,) * k), np.nan)
    out = -(k - 1) * base.reshape(*base.shape, *(1,) * k)
    for i, o in enumerate(ofat):
        idx = [slice(None), slice(None)] + [None] * k
        idx[2 + i] = slice(None)
        out = out + np.asarray(o, dtype=np.float64)[tuple(idx)]
    return out


def block_stats(
    block_id: str,
    factors: tuple[str, ...],
    levels: tuple[tuple[str, ...], ...],
    scores: np.ndarray,
    baseline: np.ndarray,
    ofat: list[np.ndarray | None],
    weights: np.ndarray | None,
    ofat_envelopes: Envelopes | None = None,
) -> BlockStats:
    """Every statistic of one block for one evaluator.

    ``scores`` (G, P, L1, ..., Lk); ``baseline`` (G, P) the c0 scores; ``ofat`` per factor the
    (G, P, L_i) OFAT scores at the block's levels (see :func:`additive_prediction`);
    ``weights`` (B, P) the audit's shared prompt-bootstrap counts (``None``: no intervals);
    ``ofat_envelopes`` the envelopes over the OFAT shared protocols (for new crossings).
    """
    k = len(factors)
    y = np.asarray(scores, dtype=np.float64)
    G, P = y.shape[:2]
    n_cells = int(np.prod(y.shape[2:]))
    main, inter, total = scene_sums_of_squares(y, k)
    tol = zero_tolerance(y, n_cells)
    parts = np.concatenate([main, inter[None]], axis=0)  # (k+1, G, P)
    mean_parts = nanmean(parts.reshape(k + 1, -1), axis=1)
    mean_total = float(nanmean(total))
    part_shares = shares(mean_parts, np.full(k + 1, mean_total), tol)
    share_ci: list[CI] = [NAN_CI] * (k + 1)
    signal = generator_signal(baseline)
    rho_int = float(nanmean(inter)) / n_cells / signal if signal > 0 else float("nan")
    rho_blk = mean_total / n_cells / signal if signal > 0 else float("nan")
    rho_int_ci = NAN_CI
    if weights is not None:
        draws = bs.scene_mean_draws(np.concatenate([parts, total[None]], axis=0), weights)
        d = shares(draws[:, :-1], draws[:, -1:], tol)
        share_ci = [interval(d[:, i], n_blocks=P).as_tuple() for i in range(k + 1)]
        rho_int_ci = interval(bs.rho_draws((inter / n_cells)[None], baseline, weights)[:, 0], n_blocks=P).as_tuple()
    means = nanmean(y.reshape(G, P, n_cells), axis=1)  # (G, cells)
    env = envelopes(means)
    winners = unique_winners(means)
    predicted = nanmean(additive_prediction(ofat, baseline).reshape(G, P, -1), axis=1)
    if predicted.shape != means.shape:
        predicted = np.full(means.shape, np.nan)
    resid = means - predicted
    ok = np.isfinite(resid)
    rmse = float(np.sqrt((resid[ok] ** 2).mean())) if ok.any() else float("nan")
    worst = float(np.abs(resid[ok]).max()) if ok.any() else float("nan")
    new = None
    if ofat_envelopes is not None and len(ofat_envelopes.categories) == len(env.categories):
        new = sum(
            1
            for b, o in zip(env.categories, ofat_envelopes.categories, strict=True)
            if b == SIGN_CROSSING and o == STRICT
        )
    complete_scenes = int(np.isfinite(total).sum())
    return BlockStats(
        id=block_id,
        factors=factors,
        levels=levels,
        main_share={f: float(part_shares[i]) for i, f in enumerate(factors)},
        main_share_ci={f: share_ci[i] for i, f in enumerate(factors)},
        interaction_share=float(part_shares[k]),
        interaction_share_ci=share_ci[k],
        rho_interaction=rho_int,
        rho_interaction_ci=rho_int_ci,
        rho_block=rho_blk,
        envelopes=env,
        new_sign_crossings=new,
        winner_count=len(set(winners[winners >= 0].tolist())),
        cell_means=means,
        predicted=predicted,
        additivity_rmse=rmse,
        max_additivity_error=worst,
        n_scenes=complete_scenes,
    )
