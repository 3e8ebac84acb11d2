"""Protocol dependence of evaluator–human agreement (pure functions, no I/O).

Inputs of one evaluator: ``scores`` (C, n) over C configurations of the audit (row ``c0`` is
the default render) and the same n human-rated items, ``human`` (n,) the mean rating,
``blocks`` (n,) each item's prompt index (0..P−1), ``weights`` (B, P) the study's prompt-block
counts. The agreement statistic is Pearson r with the mean rating: the unit of the raters'
noise ceiling (:func:`harness.human.rater_reliability.noise_ceiling`).

- :func:`factor_envelopes`: per factor, agreement at each level, its envelope [min, max] and
  the *largest drop from c0* over the levels, ``max_l (r_c0 − r_l)``, with a paired bootstrap
  interval (both terms from the same draw). The drop intervals are simultaneous over a factor's levels (max-t), each level compared with
  c0 on the items both cover (:func:`paired_drop_draws`).
- :func:`best_configuration`: the configuration that agrees best, *selected* on one half of the
  prompts and *confirmed* on the other (:func:`split_prompts`) only when the held-out paired
  interval of its gain over c0 excludes 0, so the choice is not fit to noise, and never with
  fewer held-out prompts than the interval policy's minimum (``reason``: "not confirmable").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from harness.core.numbers import finite_or_none
from harness.human.agreement_draws import pearson_draws
from harness.stats._nan import nanmax
from harness.stats.bootstrap import prompt_weights
from harness.stats.intervals import DEFAULT_POLICY, IntervalPolicy, interval, max_t_band

SPLIT_RULE = (
    "prompts sorted by id and shuffled with numpy's default_rng(seed); the first ceil(P/2) "
    "select the configuration with the highest Pearson r, the other floor(P/2) confirm it when "
    "they are at least the interval policy's minimum (6 at 95%) and the paired 95% prompt-block "
    "interval of its gain in r over c0 on them (the expanded percentile interval over the "
    "held-out prompts) lies above 0"
)



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


def paired_drop_draws(
    scores: np.ndarray, human: np.ndarray, blocks: np.ndarray, weights: np.ndarray, c0_row: int
) -> np.ndarray:
    """(1 + B, C) drops r(c0) − r(configuration), each on the items *both* have a score for.

    A level measured on fewer items (a failed render, a paraphrase covering some scenes) is
    compared with c0 on those same items, not with c0 on all of them: otherwise the drop mixes
    the protocol's effect with a change of items. Row 0 is the estimate, rows 1.. the paired
    draws; column ``c0_row`` is 0 wherever c0 itself is defined. Fewer than
    :data:`harness.human.degenerate.MIN_ITEMS` shared items give NaN (no drop: r of two
    points is ±1 whatever the scores).
    """
    from harness.human.degenerate import MIN_ITEMS

    x = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    both = np.isfinite(x) & np.isfinite(x[c0_row])[None, :] & np.isfinite(np.asarray(human, dtype=np.float64))
    base = np.where(both, x[c0_row][None, :], np.nan)
    other = np.where(both, x, np.nan)
    r = configuration_draws(np.vstack([base, other]), human, blocks, weights)
    drops = r[:, : x.shape[0]] - r[:, x.shape[0]:]
    drops[:, both.sum(axis=1) < MIN_ITEMS] = np.nan
    return drops


def factor_envelopes(
    draws: np.ndarray,
    configurations: Sequence[str],
    factor_of: Mapping[str, tuple[str, str]],
    c0: str,
    level: float = 0.95,
    drops: np.ndarray | None = None,
    n_blocks: int | None = None,
    *,
    policy: IntervalPolicy = DEFAULT_POLICY,
) -> dict[str, dict]:
    """Per factor: ``levels`` {level: r}, ``envelope`` [min, max] r over the levels,
    ``max_drop`` = max over levels of r(c0) − r(level), ``worst_level`` (the level of the largest
    drop), ``drops`` {level: {drop, ci}} and ``max_drop_ci``.

    Every ``drops[level].ci`` is *simultaneous* over the factor's levels (:func:`max_t_band` over
    the paired draws, one width for the factor: with 6 prompts a per-level SE is too noisy to
    divide by): all of them cover their true drops together at ``level``. ``max_drop_ci``
    is [max_l lo_l, max_l hi_l], an interval for the largest true drop implied by that joint
    coverage, so a check on its lower bound fails by noise at most (1 − level)/2 of the time
    however many levels the factor has (a pointwise interval of the sample maximum would fail
    more often the more levels there are). ``interval`` names the kind.

    ``draws`` (1 + B, C) from :func:`configuration_draws`; ``drops`` (1 + B, C) from
    :func:`paired_drop_draws` (each level against c0 on the items both cover; default
    ``draws[:, c0] − draws``, right when every configuration has the same items);
    ``factor_of`` maps a configuration to its (factor, level) (c0 and unlisted configurations
    are not a factor's level). ``n_blocks`` (the prompts resampled) reads the critical value at
    the interval policy's level for P blocks (:meth:`IntervalPolicy.read_level`: the expanded
    level, which holds at the check's boundary with 6 prompts; docs/intervals.md); without it
    the plain bootstrap quantile. ``interval.confirmable`` says whether P reaches the policy's
    minimum (``reason`` why not).
    """
    index = {c: i for i, c in enumerate(configurations)}
    reason = "" if n_blocks is None else policy.not_confirmable(n_blocks, level)
    if drops is None:
        drops = draws[:, [index[c0]]] - draws
    out: dict[str, dict] = {}
    by_factor: dict[str, list[tuple[str, int]]] = {}
    for conf, (factor, lvl) in factor_of.items():
        if conf in index and conf != c0:
            by_factor.setdefault(factor, []).append((lvl, index[conf]))
    for factor in sorted(by_factor):
        levels = by_factor[factor]
        cols = [i for _, i in levels]
        d = drops[:, cols]  # (1 + B, L)
        point = d[0]
        worst = int(np.nanargmax(point)) if np.isfinite(point).any() else None
        band = max_t_band(point, d[1:], level, studentize=False, clusters=n_blocks, policy=policy)
        lo, hi = band.interval()
        values = draws[0, cols]
        finite = values[np.isfinite(values)]
        out[factor] = {
            "levels": {lvl: finite_or_none(draws[0, i]) for lvl, i in levels},
            "envelope": [finite_or_none(finite.min()), finite_or_none(finite.max())] if finite.size else [None, None],
            "max_drop": None if worst is None else finite_or_none(point[worst]),
            "max_drop_ci": [finite_or_none(nanmax(lo)), finite_or_none(nanmax(hi))] if np.isfinite(lo).any() else [None, None],
            "worst_level": None if worst is None else levels[worst][0],
            "drops": {lvl: {"drop": finite_or_none(point[k]), "ci": [finite_or_none(lo[k]), finite_or_none(hi[k])]} for k, (lvl, _) in enumerate(levels)},
            "interval": {"kind": "simultaneous", "over_levels": len(levels), "half_width": finite_or_none(band.q),
                         "level": level, "few_prompt_correction": n_blocks is not None,
                         "confirmable": not reason, "reason": reason},
        }
    return out


def best_configuration(
    scores: np.ndarray,
    human: np.ndarray,
    item_prompts: Sequence[str],
    configurations: Sequence[str],
    c0: str,
    seed: int,
    n_draws: int = 2000,
    level: float = 0.95,
    *,
    policy: IntervalPolicy = DEFAULT_POLICY,
) -> dict | None:
    """The configuration with the highest Pearson r on the selection half of the prompts, and
    whether the held-out half confirms that it agrees better than c0.

    ``confirmed`` needs at least ``policy.min_blocks()`` confirmation prompts and the lower bound
    of ``confirmation_gain_ci`` above 0: the paired interval of r(pick) − r(c0) on the
    confirmation half (its prompts resampled, ``n_draws`` draws of seed ``seed``; both r on the
    items both configurations cover), the policy's interval over those prompts
    (:func:`harness.stats.intervals.interval`, the expanded percentile). A larger point value
    alone is a coin flip when nothing is better (it confirmed 40 %); the plain percentile
    interval confirmed 7.6 % of null picks with 3 held-out prompts at a nominal 2.5 %
    (benchmarks/bench_calibration.py). With fewer held-out prompts than the minimum the interval
    is still given, but ``confirmed`` is False and ``reason`` says "not confirmable: 3 held-out
    prompts (needs 6)"; with one the half cannot be resampled and there is no interval.

    ``scores`` (C, n), ``human`` (n,), ``item_prompts`` (n,) prompt ids. ``None`` with fewer
    than two prompts (no split).
    """
    prompts = sorted(set(item_prompts))
    if len(prompts) < 2:
        return None
    select, confirm = split_prompts(prompts, seed)
    ip = np.asarray(item_prompts)
    x = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    y = np.asarray(human, dtype=np.float64)
    zeros = np.zeros(ip.size, dtype=np.int64)

    def r_on(half: list[str]) -> np.ndarray:
        keep = np.isin(ip, half)
        return pearson_draws(x[:, keep], y[keep], zeros[keep], np.ones((1, 1)))[0]

    r_sel, r_conf = r_on(select), r_on(confirm)
    if not np.isfinite(r_sel).any():
        return None
    pick = int(np.nanargmax(r_sel))
    c0_i = list(configurations).index(c0)
    if not r_sel[pick] > r_sel[c0_i] + 1e-12:  # a tie with c0 (same scores) keeps c0
        pick = c0_i
    gain, gain_ci, reason = None, [None, None], None
    if pick == c0_i:
        reason = "c0 agrees best on the selection half: nothing to confirm"
    elif len(confirm) < 2:
        reason = "one confirmation prompt: the held-out half cannot be resampled, so no interval"
    if pick != c0_i and len(confirm) >= 2:
        keep = np.isin(ip, confirm)
        cidx = {p: k for k, p in enumerate(confirm)}
        blocks = np.array([cidx[p] for p in ip[keep]], dtype=np.int64)
        w = prompt_weights(len(confirm), max(int(n_draws), 2), seed)
        d = paired_drop_draws(x[[c0_i, pick]][:, keep], y[keep], blocks, w, 0)[:, 1]  # r(c0) − r(pick)
        gain = finite_or_none(-d[0])
        found = interval(-d[1:], level=level, n_blocks=len(confirm), policy=policy)
        gain_ci = [finite_or_none(found.low), finite_or_none(found.high)]
        if policy.not_confirmable(len(confirm), level):
            reason = policy.not_confirmable(len(confirm), level, noun="held-out prompts")
        elif gain_ci[0] is None or not gain_ci[0] > 0:
            reason = f"the held-out {int(level * 100)}% interval of the gain over c0 does not exclude 0"
    confirmed = reason is None and gain_ci[0] is not None and gain_ci[0] > 0
    return {
        "split": {"rule": SPLIT_RULE, "seed": int(seed), "selection": select, "confirmation": confirm},
        "configuration": configurations[pick],
        "selection_pearson": finite_or_none(r_sel[pick]),
        "confirmation_pearson": finite_or_none(r_conf[pick]),
        "c0_selection_pearson": finite_or_none(r_sel[c0_i]),
        "c0_confirmation_pearson": finite_or_none(r_conf[c0_i]),
        "confirmation_gain": gain,
        "confirmation_gain_ci": gain_ci,
        "confirmed": bool(confirmed),
        "reason": reason,
    }
