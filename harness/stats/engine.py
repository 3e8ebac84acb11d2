"""The metric engine: every evaluator metric's point estimate and prompt-bootstrap draws.

One engine serves the audit (``stats/audit_stats.py``: the intervals of ρ, dispersion,
peak ρ and of every statistic with a ``compute``), the release comparison
(``release/comparison.py``: the paired draws of every compared metric) and the release gate's
planned tests. Each metric row of :data:`harness.vocab.metrics.METRICS` is estimated by one
:class:`Estimator`:

* the study's metrics by the estimators of :data:`STUDY` (one per group of rows that share
  their draws: ρ, dispersion, W and winners per factor share the level means, peak ρ the
  ρ draws), in the order the comparison lists them;
* a row with its own ``compute`` (a built-in statistic named ``"module:function"``, or one
  registered from outside) by :func:`computed_estimates`: its point is ``compute`` on the
  scores, its draws ``compute`` on each prompt-bootstrap resample (:func:`resample_prompts`),
  or the row's own vectorised ``draws(scores, weights)`` when it has one.

So a statistic added by one row is estimated like the study's own: a value, an interval and
paired compare draws. An :class:`Estimate` is ``(kind, subject, point, draws)``: the metric
row's name, its key (a factor, probe, block id, ...; ``None`` for a scalar), the value on
the sample and its (B,) replicates. Pure: arrays in, arrays out; no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from harness.core.errors import AuditError
from harness.core.numbers import finite_or_nan
from harness.human.protocol_dependence import configuration_draws
from harness.stats import bootstrap as bs
from harness.stats._nan import nanmax, nanmean, nanmin
from harness.stats.dispersion import dispersion, scene_dispersion
from harness.stats.envelopes import SIGN_CROSSING, STRICT, envelopes, generator_pairs
from harness.stats.interactions import scene_sums_of_squares, shares, zero_tolerance
from harness.stats.probe_stats import pair_credit, probe_outcome
from harness.stats.rank import kendall_w, rank_stability
from harness.stats.rho import peak, rho, scene_level_variance
from harness.stats.table import BlockScores, EvaluatorScores, generator_means
from harness.stats.views import best_view_inflation, scene_view_inflation
from harness.vocab import metrics as m
from harness.vocab.factors import PITCH, YAW, shared_factor_names
from harness.vocab.metrics import METRICS, MetricSpec

#: (metric row name, subject): one value of one metric (subject ``None`` for a scalar).
Planned = tuple[str, str | None]


@dataclass(frozen=True)
class Estimate:
    """One metric value: ``kind`` the metric row's name, ``subject`` its key (``None`` for a
    scalar), ``point`` the value on the sample (the row's unit; NaN when undefined) and
    ``draws`` its (B,) prompt-bootstrap replicates."""

    kind: str
    subject: str | None
    point: float
    draws: np.ndarray


@dataclass(frozen=True)
class Sample:
    """What the engine estimates from: one evaluator's ``scores``, the prompt-bootstrap
    ``weights`` (B, P) shared by every metric, and optionally ``failed`` / ``total`` (P,) the
    failed and all record counts per prompt (the failed share) and ``human`` (G, P) the mean
    human rating of each scene (NaN: not rated; the human-agreement metrics)."""

    scores: EvaluatorScores
    weights: np.ndarray
    failed: np.ndarray | None = None
    total: np.ndarray | None = None
    human: np.ndarray | None = None


@dataclass(frozen=True)
class Estimator:
    """The computation of a group of metric rows (``metrics``) that share their draws.

    ``plan(scores, human)`` lists the (metric, subject) values it gives for ``scores`` (with
    human ratings when ``human``), in order; ``estimate(sample)`` computes them."""

    metrics: tuple[str, ...]
    plan: Callable[[EvaluatorScores, bool], list[Planned]]
    estimate: Callable[[Sample], list[Estimate]]


# ------------------------------------------------------------------------------ resampling


def prompt_index(counts: np.ndarray) -> np.ndarray:
    """The prompt columns of one bootstrap draw: prompt p repeated ``counts[p]`` times, in
    prompt order; ``counts`` (P,) is one row of :func:`harness.stats.bootstrap.prompt_weights`."""
    return np.repeat(np.arange(len(counts)), np.asarray(counts, dtype=np.int64))


def resampled_draws(
    statistic: Callable[..., float], arrays: Sequence[np.ndarray], weights: np.ndarray
) -> np.ndarray:
    """Replicates of ``statistic(*arrays)`` with every array's prompt axis (axis 1) resampled by
    each draw of ``weights`` (B, P), the same prompts for every array (paired): (B,) floats,
    NaN where the statistic is undefined. The general path for a statistic without vectorised
    draws (the search's held-out effects)."""
    out = np.empty(np.asarray(weights).shape[0])
    for b, counts in enumerate(np.asarray(weights)):
        idx = prompt_index(counts)
        out[b] = statistic(*(a[:, idx] for a in arrays))
    return out


def resample_prompts(t: EvaluatorScores, counts: np.ndarray) -> EvaluatorScores:
    """One prompt-bootstrap resample of ``t``: prompt p repeated ``counts[p]`` times.

    ``counts`` (P,) is one row of :func:`harness.stats.bootstrap.prompt_weights`; every
    array's prompt axis (axis 1) is taken in that order, and ``prompts`` repeats the ids
    alike. ``n_records``, ``n_failed`` and ``failed_by_factor`` stay those of ``t``.
    """
    idx = prompt_index(counts)

    def take(a: np.ndarray) -> np.ndarray:
        return np.take(a, idx, axis=1)

    return replace(
        t,
        prompts=tuple(t.prompts[i] for i in idx),
        baseline=take(t.baseline),
        factors={f: replace(fs, scores=take(fs.scores)) for f, fs in t.factors.items()},
        probes={n: take(v) for n, v in t.probes.items()},
        probe_recorded={n: take(v) for n, v in t.probe_recorded.items()},
        blocks={n: replace(b, scores=take(b.scores)) for n, b in t.blocks.items()},
    )


# ------------------------------------------------------------------------------ vectorised draws


def level_mean_draws(scores: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Bootstrap replicates of the generator means per level: (G, P, L) → (B, G, L)."""
    s = np.asarray(scores, dtype=np.float64)
    g, p, n_levels = s.shape
    flat = np.transpose(s, (1, 0, 2)).reshape(p, g * n_levels)
    return bs.prompt_mean_draws(flat, weights).reshape(-1, g, n_levels)


def kendall_w_draws(means: np.ndarray) -> np.ndarray:
    """:func:`harness.stats.rank.kendall_w` per draw; ``means`` (B, G, L) → (B,).

    Levels are the raters and generators the items, as in :func:`rank_stability`. Draws
    with a NaN mean take the scalar path (it drops the affected generators).
    """
    r = np.transpose(np.asarray(means, dtype=np.float64), (0, 2, 1))  # (B, m, n)
    n_draws, m_, n = r.shape
    out = np.full(n_draws, np.nan)
    if m_ < 2 or n < 2:
        return out
    finite = np.isfinite(r).all(axis=(1, 2))
    idx = np.flatnonzero(finite)
    for start in range(0, idx.size, 256):  # bounds the (chunk, m, n, n) comparison block
        sub = r[idx[start : start + 256]]
        less = (sub[..., None, :] < sub[..., :, None]).sum(axis=-1)
        equal = (sub[..., None, :] == sub[..., :, None]).sum(axis=-1)
        ranks = less + (equal + 1) / 2.0
        ties = (equal.astype(np.float64) ** 2 - 1).sum(axis=(1, 2))
        col = ranks.sum(axis=1)
        s = ((col - m_ * (n + 1) / 2.0) ** 2).sum(axis=1)
        den = m_ * m_ * (n**3 - n) - m_ * ties
        with np.errstate(divide="ignore", invalid="ignore"):
            out[idx[start : start + 256]] = np.where(den > 0, 12.0 * s / den, np.nan)
    for b in np.flatnonzero(~finite):
        out[b] = kendall_w(r[b])
    return out


def top1_count_draws(means: np.ndarray) -> np.ndarray:
    """Distinct unique winners over levels per draw; ``means`` (B, G, L) → (B,) float.

    A level counts only when every generator mean is finite and the top is not shared
    (as :func:`harness.stats.rank.unique_winners`).
    """
    mu = np.asarray(means, dtype=np.float64)
    finite = np.isfinite(mu).all(axis=1)  # (B, L)
    top = nanmax(mu, axis=1)
    hits = mu == top[:, None, :]
    unique = finite & (hits.sum(axis=1) == 1)
    won = (hits & unique[:, None, :]).any(axis=2)  # (B, G)
    return won.sum(axis=1).astype(np.float64)


def envelope_count_draws(means: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(strict, sign-crossing) pair counts per draw from (B, G, Π) protocol means.

    Categories as :func:`harness.stats.envelopes.envelopes`: a pair without a finite
    envelope counts as a sign crossing.
    """
    mu = np.asarray(means, dtype=np.float64)
    pairs = generator_pairs(mu.shape[1])
    a = np.array([i for i, _ in pairs], dtype=np.int64)
    b = np.array([j for _, j in pairs], dtype=np.int64)
    strict = np.zeros(mu.shape[0])
    cross = np.zeros(mu.shape[0])
    for start in range(0, mu.shape[0], 256):
        block = mu[start : start + 256]
        d = block[:, a] - block[:, b]  # (chunk, pairs, Π)
        lo, hi = nanmin(d, axis=2), nanmax(d, axis=2)
        ok = np.isfinite(lo) & np.isfinite(hi)
        strict[start : start + 256] = (ok & ((lo > 0) | (hi < 0))).sum(axis=1)
        cross[start : start + 256] = (~ok | ((lo < 0) & (hi > 0))).sum(axis=1)
    return strict, cross


def weighted_median_draws(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Replicates of the NaN-skipping median over scenes; ``values`` (G, P), weights (B, P).

    A draw repeats every scene of prompt p ``weights[b, p]`` times; its median is exactly
    ``np.nanmedian`` of that repeated sample (the mean of the two middle values when the
    count is even). Returns (B,); NaN for a draw without a finite value.
    """
    v = np.asarray(values, dtype=np.float64)
    prompt = np.broadcast_to(np.arange(v.shape[1]), v.shape).ravel()
    flat = v.ravel()
    ok = np.isfinite(flat)
    order = np.argsort(flat[ok], kind="stable")
    sorted_v = flat[ok][order]
    w = np.asarray(weights, dtype=np.int64)
    out = np.full(w.shape[0], np.nan)
    if sorted_v.size == 0:
        return out
    cum = np.cumsum(w[:, prompt[ok][order]], axis=1)  # (B, S)
    total = cum[:, -1]
    has = total > 0
    lo_k = (total - 1) // 2
    hi_k = total // 2
    i_lo = np.minimum((cum <= lo_k[:, None]).sum(axis=1), sorted_v.size - 1)
    i_hi = np.minimum((cum <= hi_k[:, None]).sum(axis=1), sorted_v.size - 1)
    out[has] = (sorted_v[i_lo[has]] + sorted_v[i_hi[has]]) / 2.0
    return out


def factor_draws(t: EvaluatorScores, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The prompt-bootstrap replicates of ρ and of dispersion of every factor of ``t``
    (``t.factors`` order): two (B, F) arrays (ratios, fractions). Peak ρ's draws are the
    row maximum of the first."""
    names = list(t.factors)
    if not names:
        empty = np.zeros((weights.shape[0], 0))
        return empty, empty
    blocks = [t.factors[f].scores for f in names]
    rho_d = bs.rho_draws(np.stack([scene_level_variance(s) for s in blocks]), t.baseline, weights)
    disp_d = bs.scene_mean_draws(np.stack([scene_dispersion(s) for s in blocks]), weights)
    return rho_d, disp_d


def interaction_share_draws(block: BlockScores, weights: np.ndarray) -> tuple[float, np.ndarray]:
    """The block's interaction share (pooled non-additive SS / pooled SS_tot over scenes with
    every cell measured, :func:`harness.stats.interactions.block_stats`) and its prompt-bootstrap
    replicates: (point, (B,))."""
    y = np.asarray(block.scores, dtype=np.float64)
    k = len(block.factors)
    n_cells = int(np.prod(y.shape[2:]))
    _main, inter, total = scene_sums_of_squares(y, k)
    tol = zero_tolerance(y, n_cells)
    point = float(shares(nanmean(inter), nanmean(total), tol))
    d = bs.scene_mean_draws(np.stack([inter, total]), weights)  # (B, 2)
    return point, shares(d[:, 0], d[:, 1], tol)


def block_sign_crossing_draws(block: BlockScores, weights: np.ndarray) -> tuple[float, np.ndarray]:
    """Generator pairs whose margin envelope over the block's cells crosses zero (NaN when no
    cell has a mean) and its prompt-bootstrap replicates: (point, (B,))."""
    y = np.asarray(block.scores, dtype=np.float64)
    g, p = y.shape[:2]
    cells = y.reshape(g, p, -1)
    means = nanmean(cells, axis=1)  # (G, cells)
    point = float(envelopes(means).counts()[SIGN_CROSSING]) if np.isfinite(means).any() else math.nan
    draw_means = level_mean_draws(cells, weights)  # (B, G, cells)
    _strict, cross = envelope_count_draws(draw_means)
    return point, np.where(np.isfinite(draw_means).any(axis=(1, 2)), cross, np.nan)


# ------------------------------------------------------------------------------ the study's estimators


def _plan_factors(t: EvaluatorScores, human: bool) -> list[Planned]:
    out: list[Planned] = []
    for f in t.factors:
        out += [(m.RHO, f), (m.DISPERSION, f)]
        if f in shared_factor_names():
            out += [(m.KENDALL_W, f), (m.TOP1_COUNT, f)]
    if t.factors:
        out.append((m.PEAK_RHO, None))
    return out


def _factors(s: Sample) -> list[Estimate]:
    """ρ and dispersion per factor, W and distinct winners per shared factor, peak ρ."""
    t, weights = s.scores, s.weights
    out: list[Estimate] = []
    if not t.factors:
        return out
    rho_d, disp_d = factor_draws(t, weights)
    rhos: dict[str, float] = {}
    for i, (f, fs) in enumerate(t.factors.items()):
        rhos[f] = rho(fs.scores, t.baseline)
        out.append(Estimate(m.RHO, f, rhos[f], rho_d[:, i]))
        out.append(Estimate(m.DISPERSION, f, dispersion(fs.scores), disp_d[:, i]))
        if f in shared_factor_names():
            point = rank_stability(generator_means(fs.scores))
            means = level_mean_draws(fs.scores, weights)
            out.append(Estimate(m.KENDALL_W, f, point.kendall_w, kendall_w_draws(means)))
            out.append(Estimate(m.TOP1_COUNT, f, float(point.top1_count), top1_count_draws(means)))
    out.append(Estimate(m.PEAK_RHO, None, peak(rhos)[1], nanmax(rho_d, axis=1)))
    return out


def _envelopes(s: Sample) -> list[Estimate]:
    """Sign-crossing and strictly ordered generator pairs over every shared protocol."""
    _ids, shared = s.scores.shared_protocols()
    counts = envelopes(generator_means(shared)).counts()
    strict_d, cross_d = envelope_count_draws(level_mean_draws(shared, s.weights))
    return [
        Estimate(m.SIGN_CROSSINGS, None, float(counts[SIGN_CROSSING]), cross_d),
        Estimate(m.STRICT_PAIRS, None, float(counts[STRICT]), strict_d),
    ]


def _probes(s: Sample) -> list[Estimate]:
    """Tie-adjusted directional discrimination per probe."""
    t = s.scores
    out = []
    for name, scores in t.probes.items():
        credit = pair_credit(t.baseline, scores)
        point = probe_outcome(t.baseline, scores).discrimination
        out.append(Estimate(m.DISCRIMINATION, name, point, bs.scene_mean_draws(credit, s.weights)))
    return out


def view_poses(t: EvaluatorScores) -> np.ndarray | None:
    """The pitch and yaw poses of ``t`` side by side, (G, P, L_pitch + L_yaw); ``None`` when
    the run has neither."""
    views = [t.factors[f].scores for f in (PITCH, YAW) if f in t.factors]
    return np.concatenate(views, axis=-1) if views else None


def best_view_inflation_point(t: EvaluatorScores) -> float:
    """Median best-view inflation over scenes (a ratio; NaN without pitch and yaw): the one
    point computation, the audit's and :func:`_views`'s."""
    stacked = view_poses(t)
    return math.nan if stacked is None else best_view_inflation(t.baseline, stacked)


def _views(s: Sample) -> list[Estimate]:
    """Median best-view inflation over the pitch and yaw poses (when the run has them)."""
    t = s.scores
    stacked = view_poses(t)
    if stacked is None:
        return []
    return [
        Estimate(
            m.BEST_VIEW_INFLATION,
            None,
            best_view_inflation_point(t),
            weighted_median_draws(scene_view_inflation(t.baseline, stacked), s.weights),
        )
    ]


def _failed(s: Sample) -> list[Estimate]:
    """The share of failed records (from the per-prompt counts; none without them)."""
    if s.failed is None or s.total is None:
        return []
    w = np.asarray(s.weights, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        share_d = (w @ s.failed) / (w @ s.total)
    share = float(s.failed.sum() / s.total.sum()) if s.total.sum() else float("nan")
    return [Estimate(m.FAILED_SHARE, None, share, share_d)]


def _human(s: Sample) -> list[Estimate]:
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


def _blocks(s: Sample) -> list[Estimate]:
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


#: The study's estimators, in the order the comparison lists their metrics.
STUDY: tuple[Estimator, ...] = (
    Estimator((m.RHO, m.DISPERSION, m.KENDALL_W, m.TOP1_COUNT, m.PEAK_RHO), _plan_factors, _factors),
    Estimator((m.SIGN_CROSSINGS, m.STRICT_PAIRS), lambda t, h: [(m.SIGN_CROSSINGS, None), (m.STRICT_PAIRS, None)],
              _envelopes),
    Estimator((m.DISCRIMINATION,), lambda t, h: [(m.DISCRIMINATION, p) for p in t.probes], _probes),
    Estimator((m.BEST_VIEW_INFLATION,),
              lambda t, h: [(m.BEST_VIEW_INFLATION, None)] if PITCH in t.factors or YAW in t.factors else [],
              _views),
    Estimator((m.FAILED_SHARE,), lambda t, h: [(m.FAILED_SHARE, None)], _failed),
    Estimator((m.HUMAN_AGREEMENT, m.HUMAN_AGREEMENT_DROP),
              lambda t, h: [(m.HUMAN_AGREEMENT, None)] + [(m.HUMAN_AGREEMENT_DROP, f) for f in t.factors] if h else [],
              _human),
    Estimator((m.INTERACTION_SHARE, m.BLOCK_SIGN_CROSSINGS),
              lambda t, h: [(k, b) for b in t.blocks for k in (m.INTERACTION_SHARE, m.BLOCK_SIGN_CROSSINGS)],
              _blocks),
)


# ------------------------------------------------------------------------------ rows with a compute


def value_of(value: object, key: str | None) -> float:
    """One value of a statistic's result: the scalar, or ``key``'s entry (NaN when absent)."""
    if key is None:
        return math.nan if isinstance(value, Mapping) else finite_or_nan(value)
    if not isinstance(value, Mapping):
        return math.nan
    found = {str(k): v for k, v in value.items()}.get(key)
    return finite_or_nan(found)


def subjects_of(spec: MetricSpec, point: object) -> list[str | None]:
    """A scalar statistic's one subject (``None``), or a keyed one's keys in ``point``."""
    if spec.key is None:
        return [None]
    return [str(k) for k in point] if isinstance(point, Mapping) else []


#: What a caller makes of an exception raised by a row's ``compute`` or ``draws``: the error to
#: raise instead (the audit names the statistic; ``None`` re-raises it as it is).
Guard = Callable[[MetricSpec, Exception], Exception]


def _call(spec: MetricSpec, fn: Callable[..., object], *args: object, guard: Guard | None) -> object:
    if guard is None:
        return fn(*args)
    try:
        return fn(*args)
    except AuditError:
        raise
    except Exception as exc:  # a row's own code: any failure, reported with its metric
        raise guard(spec, exc) from exc


def computed_estimates(
    t: EvaluatorScores,
    weights: np.ndarray,
    specs: Iterable[MetricSpec],
    points: Mapping[str, object] | None = None,
    guard: Guard | None = None,
) -> list[Estimate]:
    """Every row of ``specs`` (each with a ``compute``): the point is ``compute(t)`` (or
    ``points[name]`` when given), the draws the row's ``draws(t, weights)`` when it has one,
    else ``compute`` on each draw's :func:`resample_prompts` (one resample per draw, shared by
    every row). A keyed row gives one estimate per key of its point, registry order.
    ``guard`` turns an exception of a row's code into the error raised (see :data:`Guard`)."""
    specs = [s for s in specs if s.compute is not None]
    if not specs:
        return []
    values = [points[s.name] if points is not None and s.name in points
              else _call(s, s.compute, t, guard=guard) for s in specs]  # fmt: skip
    subjects = [subjects_of(spec, point) for spec, point in zip(specs, values, strict=True)]
    n_draws = np.asarray(weights).shape[0]
    draws = [np.full((n_draws, len(keys)), np.nan) for keys in subjects]
    resampled = [i for i, spec in enumerate(specs) if spec.draws is None]
    for i, spec in enumerate(specs):
        if spec.draws is not None:
            given = _call(spec, spec.draws, t, weights, guard=guard)
            for j, key in enumerate(subjects[i]):
                column = given if key is None else (given.get(key) if isinstance(given, Mapping) else None)
                if column is not None:
                    draws[i][:, j] = np.asarray(column, dtype=np.float64)
    if resampled:
        for b, counts in enumerate(np.asarray(weights)):
            sample = resample_prompts(t, counts)
            for i in resampled:
                value = _call(specs[i], specs[i].compute, sample, guard=guard)
                draws[i][b] = [value_of(value, key) for key in subjects[i]]
    out = []
    for spec, point, keys, d in zip(specs, values, subjects, draws, strict=True):
        out += [Estimate(spec.name, key, value_of(point, key), d[:, j]) for j, key in enumerate(keys)]
    return out


# ------------------------------------------------------------------------------ the engine


def study_metric_names() -> frozenset[str]:
    """The metric rows the study's estimators compute."""
    return frozenset(name for est in STUDY for name in est.metrics)


def has_estimator(spec: MetricSpec) -> bool:
    """Whether the engine estimates row ``spec`` (a study row, or one with a ``compute``)."""
    return spec.compute is not None or spec.name in study_metric_names()


def _wanted(select: Callable[[MetricSpec], bool]) -> tuple[set[str], list[MetricSpec]]:
    """(study rows selected, rows with a compute selected), registry order."""
    study = study_metric_names()
    chosen = [s for s in METRICS if select(s)]
    return ({s.name for s in chosen if s.name in study and s.compute is None},
            [s for s in chosen if s.compute is not None])


def plan(t: EvaluatorScores, human: bool = False,
         select: Callable[[MetricSpec], bool] = lambda s: True) -> list[Planned]:
    """(metric, subject) of every value :func:`estimate` gives for ``t`` with the same
    ``select``, in order (``human``: with human ratings). A keyed row with a ``compute`` is
    computed on ``t`` to find its keys."""
    study, computed = _wanted(select)
    out = [p for est in STUDY for p in est.plan(t, human) if p[0] in study]
    for spec in computed:
        point = spec.compute(t) if spec.key is not None and spec.compute is not None else None
        out += [(spec.name, key) for key in subjects_of(spec, point)]
    return out


def estimate(sample: Sample, select: Callable[[MetricSpec], bool] = lambda s: True) -> list[Estimate]:
    """Every metric row ``select`` accepts, estimated on ``sample``: the study's in
    :data:`STUDY` order, then the rows with a ``compute`` in registry order."""
    study, computed = _wanted(select)
    out = [e for est in STUDY if study.intersection(est.metrics) for e in est.estimate(sample)
           if e.kind in study]
    return out + computed_estimates(sample.scores, sample.weights, computed)
