"""Evaluator–human agreement with prompt-block intervals, assembled as plain dicts (no I/O).

:func:`agreement_table` is the one entry point of ``t3d-audit agreement`` and of the plugin:
arrays in, a JSON-ready dict out.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from harness.core.numbers import finite_or_none
from harness.human import agreement_draws as hb
from harness.human import degenerate as dg
from harness.human import generator_agreement as hr
from harness.human import item_agreement as hc
from harness.human import rater_reliability as rel
from harness.stats.bootstrap import prompt_weights
from harness.stats.intervals import block_bounds, block_columns

# chunks are independent and numpy releases the GIL in its loops, partitions and sorts, so two
# threads keep two cores busy; each chunk's result does not depend on the thread that ran it
WORKERS = 2
KEYS = ("pearson", "spearman", "kendall_tau_b", "kendall_tau_c", "pairwise_accuracy")


def _ci(draws: np.ndarray, n_blocks: int, level: float) -> list:
    """The interval policy's interval of ``draws`` over ``n_blocks`` resampled blocks."""
    lo, hi = block_bounds(draws, n_blocks, level)
    return [finite_or_none(lo), finite_or_none(hi)]


def epsilons(scores: np.ndarray, human: np.ndarray, groups: np.ndarray | None) -> np.ndarray:
    """Full-sample tie-calibration ε per series: (E, n), (n,) → (E,). O(E n² log n)."""
    return hc.tie_calibrated_epsilons(scores, human, groups)


def series_agreement(
    scores: np.ndarray,
    human: np.ndarray,
    blocks: np.ndarray,
    n_blocks: int,
    weights: np.ndarray,
    *,
    grouped: bool = False,
    level: float = 0.95,
    chunk: int = 256,
    workers: int = WORKERS,
) -> list[dict]:
    """Agreement of every series with intervals.

    ``scores`` (E, n), ``human`` (n,) mean rating, ``blocks`` (n,) prompt index, ``weights``
    (B, P). Returns one dict per series with the keys n, pearson, spearman, kendall_tau_b,
    kendall_tau_c, pairwise_accuracy, pairwise_epsilon, ``ci`` {key: [lo, hi]} and ``flags``
    (reasons from :mod:`harness.human.degenerate`: a degenerate series has its statistics
    or its intervals ``None`` rather than a number without meaning). With ``grouped`` the
    statistics are computed within each block and averaged.

    Series are computed ``chunk`` at a time (the floating-point moment sums of Pearson and
    Spearman are matrix products whose rounding can depend on the number of series in them, so
    the chunk is part of the result's last digit), ``workers`` chunks at once in threads.
    """
    x = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    groups = blocks if grouped else None
    # row 0 of the weights is the original sample (every prompt once): the point estimates
    w = np.vstack([np.ones((1, weights.shape[1]), dtype=weights.dtype), weights])
    y = np.asarray(human, dtype=np.float64)
    both = np.isfinite(x) & np.isfinite(y)[None, :]
    n_ok = both.sum(axis=1)
    blk = np.asarray(blocks, dtype=np.int64)
    spanned = np.array([np.unique(blk[row]).size for row in both])
    y_hi = np.where(both, y[None, :], -np.inf).max(axis=1, initial=-np.inf)
    y_lo = np.where(both, y[None, :], np.inf).min(axis=1, initial=np.inf)

    def one_chunk(c0: int) -> tuple[np.ndarray, dict, dict]:
        xc = x[c0 : c0 + chunk]
        eps = epsilons(xc, y, groups)
        if grouped:
            draws = hb.grouped_draws(hb.per_block_values(xc, y, blocks, n_blocks, eps), w)
        else:
            draws = hb.pooled_draws(xc, y, blocks, w, eps)
        cis = {k: block_columns(draws[k][1:], n_blocks, level) for k in KEYS}  # (2, chunk) each
        return eps, {k: draws[k][0] for k in KEYS}, cis

    out = []
    starts = range(0, x.shape[0], chunk)  # bounded memory: (B, chunk) draws per chunk in flight
    with ThreadPoolExecutor(max_workers=max(1, int(workers))) as pool:
        results = pool.map(one_chunk, starts) if workers > 1 else map(one_chunk, starts)
        for c0, (eps, point, cis) in zip(starts, results, strict=True):
            for e in range(eps.size):
                i = c0 + e
                reasons, refuse, refuse_ci = dg.series_reasons(int(n_ok[i]), int(spanned[i]), bool(y_hi[i] == y_lo[i]))
                entry = {"n": int(n_ok[i])}
                entry.update({k: None if refuse else finite_or_none(point[k][e]) for k in KEYS})
                entry["pairwise_epsilon"] = None if refuse else finite_or_none(eps[e])
                entry["ci"] = {k: [None, None] if refuse_ci else [finite_or_none(cis[k][0, e]), finite_or_none(cis[k][1, e])] for k in KEYS}
                entry["flags"] = reasons
                out.append(entry)
    return out


def reliability_summary(
    ratings: np.ndarray, blocks: np.ndarray, n_blocks: int, weights: np.ndarray, level: float = 0.95
) -> dict:
    """The "human" block: items, raters, ratings, α (interval, ordinal), noise ceiling, with
    intervals; leave-one-rater-out and split-half. ``ratings`` (U, R), ``blocks`` (U,)."""
    r = np.asarray(ratings, dtype=np.float64)
    figures = rel.human_reliability(r)
    flags, refuse = dg.reliability_reasons(r)
    if refuse:
        for k in ("krippendorff_alpha_interval", "krippendorff_alpha_ordinal", "noise_ceiling"):
            figures[k] = float("nan")
    else:
        gap = dg.scale_reason(figures["krippendorff_alpha_interval"],
                              rel.krippendorff_alpha(dg.standardize_raters(r), "interval"))
        flags += [gap] if gap else []
    ci = {}
    if np.isfinite(figures["krippendorff_alpha_interval"]) and n_blocks >= 2:
        a_int = rel.alpha_draws_sparse(r, blocks, weights, "interval")
        a_ord = rel.alpha_draws_sparse(r, blocks, weights, "ordinal")
        ci = {
            "krippendorff_alpha_interval": _ci(a_int, n_blocks, level),
            "krippendorff_alpha_ordinal": _ci(a_ord, n_blocks, level),
            "noise_ceiling": _ci(rel.noise_ceiling(a_int, figures["effective_raters"]), n_blocks, level),
        }
    out = {
        "items": int(np.isfinite(r).any(axis=1).sum()),
        "raters": int(np.isfinite(r).any(axis=0).sum()),
        "ratings": int(np.isfinite(r).sum()),
    }
    for k, v in figures.items():
        out[k] = [finite_or_none(x) for x in v] if isinstance(v, list) else finite_or_none(v)
    out["ci"] = ci
    if n_blocks < 2 and not refuse:
        flags.append(f"the items span {n_blocks} prompt block(s): no interval (it would have zero width)")
    out["flags"] = flags
    return out


def generator_level(
    scores: np.ndarray,
    human: np.ndarray,
    generators: Sequence[str],
    blocks: np.ndarray | None = None,
    weights: np.ndarray | None = None,
    level: float = 0.95,
) -> dict:
    """Generator means of the evaluator and of the humans over the same items; τ-b and winners.

    ``scores`` (n,), ``human`` (n,), ``generators`` (n,) labels; with ``blocks`` (n,) and
    ``weights`` (B, P) also the τ-b interval and the share of draws whose winners agree.
    """
    g = np.asarray(generators)
    names = sorted(set(g.tolist()))
    keep = np.isfinite(scores) & np.isfinite(human)
    ev = np.array([np.mean(scores[keep & (g == n)]) if (keep & (g == n)).any() else np.nan for n in names])
    hu = np.array([np.mean(human[keep & (g == n)]) if (keep & (g == n)).any() else np.nan for n in names])
    ew, hw = hr.winners(ev), hr.winners(hu)
    out = {
        "generators": names,
        "evaluator_means": [finite_or_none(v) for v in ev],
        "human_means": [finite_or_none(v) for v in hu],
        "kendall_tau_b": finite_or_none(hr.generator_kendall(ev, hu)),
        "evaluator_winner": [names[i] for i in sorted(ew)],
        "human_winner": [names[i] for i in sorted(hw)],
        "winner_match": hr.winner_match(ev, hu),
    }
    if blocks is not None and weights is not None and len(names) > 1:
        gidx = np.searchsorted(np.array(names), g)
        tau, match = hr.generator_level_draws(scores, human, gidx, np.asarray(blocks), weights)
        out["ci"] = {"kendall_tau_b": _ci(tau, np.asarray(weights).shape[1], level)}
        out["winner_match_rate"] = float(np.mean(match))
    return out


def bradley_terry_summary(
    a: np.ndarray,
    b: np.ndarray,
    outcome: np.ndarray,
    block: np.ndarray,
    generators: Sequence[str],
    n_blocks: int,
    weights: np.ndarray,
    level: float = 0.95,
    prior: float = 1.0,
) -> dict:
    """Bradley–Terry log-strengths from pairwise votes with prompt-block intervals.

    Strengths are ranked within the connected components of the vote graph only (mean 0 in each,
    ``component`` per generator, ``components`` the groups): generators never linked by votes
    have no relative strength, and a fit across components would report the normalisation's
    arbitrary offset with a zero-width interval. A generator in no vote has ``beta`` ``None``;
    draws that break a component apart are left out of its interval (counted in ``flags``).
    """
    wins = hr.win_matrices(a, b, outcome, block, len(generators), n_blocks)
    labels = hr.comparison_components(wins.sum(axis=0))
    beta = hr.centre_within(hr.bradley_terry(wins.sum(axis=0), prior=prior), labels)
    draws, broken = hr.bradley_terry_within_components(wins, weights, labels, prior=prior)
    ci = block_bounds(draws, n_blocks, level)
    groups = [[g for g, lab in zip(generators, labels, strict=True) if lab == k] for k in range(int(labels.max()) + 1)]
    flags = []
    if len(groups) > 1:
        flags.append(f"the votes form {len(groups)} disconnected groups of generators: strengths are "
                     "ranked within a group only (mean 0 in each) and are not comparable across groups")
    flags += [f"{g} is in no vote: no strength" for g, lab in zip(generators, labels, strict=True) if lab < 0]
    flags += [f"group {k} fell apart in {int(n)} of {draws.shape[0]} draws (a linking vote not drawn); "
              "those draws are left out of its intervals" for k, n in enumerate(broken) if n]
    return {
        "votes": len(a),
        "prior_virtual_ties": prior,
        "components": groups,
        "strengths": {
            g: {"beta": finite_or_none(beta[i]), "ci": [finite_or_none(ci[0, i]), finite_or_none(ci[1, i])],
                "component": int(labels[i]) if labels[i] >= 0 else None}
            for i, g in enumerate(generators)
        },
        "flags": flags,
    }


def draw_weights(n_blocks: int, n_draws: int, seed: int) -> np.ndarray:
    """The study's prompt-block weights (B, P) for ``seed`` (one matrix for every statistic)."""
    return prompt_weights(n_blocks, n_draws, seed)
