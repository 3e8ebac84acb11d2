"""Protocol dependence of evaluator–human agreement (pure functions, no I/O).

Inputs of one evaluator: ``scores`` (C, n) over C configurations of the audit (row ``c0`` is
the default render) and the same n human-rated items, ``human`` (n,) the mean rating,
``blocks`` (n,) each item's prompt index (0..P−1), ``weights`` (B, P) the study's prompt-block
counts. The agreement statistic is Pearson r with the mean rating: the unit of the raters'
noise ceiling (:func:`harness.stats.human_reliability.noise_ceiling`).

- :func:`factor_envelopes`: per factor, agreement at each level, its envelope [min, max] and
  the *largest drop from c0* over the levels, ``max_l (r_c0 − r_l)``, with a paired bootstrap
  interval (both terms from the same draw, the max taken within each draw).
- :func:`best_configuration`: the configuration that agrees best, *selected* on one half of the
  prompts and *confirmed* on the other (:func:`split_prompts`), so the choice is not fit to noise.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence

import numpy as np

from harness.stats.bootstrap import percentile_ci
from harness.stats.human_bootstrap import pearson_draws

SPLIT_RULE = (
    "prompts sorted by id and shuffled with numpy's default_rng(seed); the first ceil(P/2) "
    "select the configuration with the highest Pearson r, the other floor(P/2) confirm it"
)


def _f(v: float) -> float | None:
    return float(v) if v is not None and np.isfinite(v) else None


def split_prompts(prompts: Sequence[str], seed: int) -> tuple[list[str], list[str]]:
    """(selection, confirmation) halves of ``prompts`` (see :data:`SPLIT_RULE`); needs P ≥ 2."""
    ordered = sorted(prompts)
    if len(ordered) < 2:
        raise ValueError("splitting needs at least two prompts")
    perm = np.random.default_rng(seed).permutation(len(ordered))
    half = (len(ordered) + 1) // 2
    return sorted(ordered[i] for i in perm[:half]), sorted(ordered[i] for i in perm[half:])


def configuration_draws(
    scores: np.ndarray, human: np.ndarray, blocks: np.ndarray, weights: np.ndarray
) -> np.ndarray:
    """(1 + B, C) Pearson r per configuration: row 0 the estimate, rows 1.. the paired draws."""
    w = np.asarray(weights)
    full = np.vstack([np.ones((1, w.shape[1]), dtype=np.float64), w.astype(np.float64)])
    return pearson_draws(scores, human, blocks, full)


def factor_envelopes(
    draws: np.ndarray,
    configurations: Sequence[str],
    factor_of: Mapping[str, tuple[str, str]],
    c0: str,
    level: float = 0.95,
) -> dict[str, dict]:
    """Per factor: ``levels`` {level: r}, ``envelope`` [min, max] r over the levels,
    ``max_drop`` = max over levels of r(c0) − r(level) with ``max_drop_ci`` (paired draws) and
    ``worst_level`` (the level of the largest drop).

    ``draws`` (1 + B, C) from :func:`configuration_draws`; ``factor_of`` maps a configuration
    to its (factor, level) (c0 and unlisted configurations are not a factor's level).
    """
    index = {c: i for i, c in enumerate(configurations)}
    base = draws[:, index[c0]]
    out: dict[str, dict] = {}
    by_factor: dict[str, list[tuple[str, int]]] = {}
    for conf, (factor, lvl) in factor_of.items():
        if conf in index and conf != c0:
            by_factor.setdefault(factor, []).append((lvl, index[conf]))
    for factor in sorted(by_factor):
        levels = by_factor[factor]
        cols = [i for _, i in levels]
        drops = base[:, None] - draws[:, cols]  # (1 + B, L)
        with warnings.catch_warnings():  # all-NaN draws (an undefined r) stay NaN
            warnings.simplefilter("ignore", RuntimeWarning)
            point = drops[0]
            worst = int(np.nanargmax(point)) if np.isfinite(point).any() else None
            per_draw = np.nanmax(drops[1:], axis=1) if drops.shape[0] > 1 else np.empty(0)
        values = draws[0, cols]
        finite = values[np.isfinite(values)]
        lo, hi = percentile_ci(per_draw, level) if per_draw.size else (np.nan, np.nan)
        out[factor] = {
            "levels": {lvl: _f(draws[0, i]) for lvl, i in levels},
            "envelope": [_f(finite.min()), _f(finite.max())] if finite.size else [None, None],
            "max_drop": None if worst is None else _f(point[worst]),
            "max_drop_ci": [_f(lo), _f(hi)],
            "worst_level": None if worst is None else levels[worst][0],
        }
    return out


def best_configuration(
    scores: np.ndarray,
    human: np.ndarray,
    item_prompts: Sequence[str],
    configurations: Sequence[str],
    c0: str,
    seed: int,
) -> dict | None:
    """The configuration with the highest Pearson r on the selection half of the prompts, and
    its r beside c0's on the confirmation half (``confirmed``: it still agrees better there).

    ``scores`` (C, n), ``human`` (n,), ``item_prompts`` (n,) prompt ids. ``None`` with fewer
    than two prompts (no split).
    """
    prompts = sorted(set(item_prompts))
    if len(prompts) < 2:
        return None
    select, confirm = split_prompts(prompts, seed)
    ip = np.asarray(item_prompts)
    x = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    zeros = np.zeros(ip.size, dtype=np.int64)

    def r_on(half: list[str]) -> np.ndarray:
        keep = np.isin(ip, half)
        return pearson_draws(x[:, keep], np.asarray(human)[keep], zeros[keep], np.ones((1, 1)))[0]

    r_sel, r_conf = r_on(select), r_on(confirm)
    if not np.isfinite(r_sel).any():
        return None
    pick = int(np.nanargmax(r_sel))
    c0_i = list(configurations).index(c0)
    if not r_sel[pick] > r_sel[c0_i] + 1e-12:  # a tie with c0 (same scores) keeps c0
        pick = c0_i
    confirmed = bool(np.isfinite(r_conf[pick]) and np.isfinite(r_conf[c0_i]) and r_conf[pick] > r_conf[c0_i])
    return {
        "split": {"rule": SPLIT_RULE, "seed": int(seed), "selection": select, "confirmation": confirm},
        "configuration": configurations[pick],
        "selection_pearson": _f(r_sel[pick]),
        "confirmation_pearson": _f(r_conf[pick]),
        "c0_selection_pearson": _f(r_sel[c0_i]),
        "c0_confirmation_pearson": _f(r_conf[c0_i]),
        "confirmed": confirmed if configurations[pick] != c0 else False,
    }
