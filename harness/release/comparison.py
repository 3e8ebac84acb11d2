"""Paired comparison of two releases of one evaluator (the release gate, docs/release-gate.md).

:func:`compare_records` is a pure function of two record tables. It pairs the rows of the
baseline and the candidate on (generator, prompt_id, scene_sha256, factor, level, caption) —
the frozen scenes and the protocol must be identical, else :class:`CompareError` names the
first mismatch — and computes every gated metric on the cells measured on *both* sides.
Uncertainty comes from one prompt-block bootstrap whose draws resample the same prompts for
both releases, so each draw gives a paired difference (candidate − baseline). Multiplicity
across the metric family is handled by a studentised max-t band (the construction of the
study's Eq. 3): CI_j = Δ_j ± q·SE_j with q the 95 % quantile over draws of
max_j |Δ*_j − Δ_j| / SE_j. Each metric then gets a verdict against its margin.

The compared metrics are the rows of :data:`harness.vocab.metrics.METRICS` with ``compare``
in their places and a margin (:data:`KINDS`): the study's own, the factorial-block metrics
(only when the records have blocks), the human-agreement metrics (only with human ratings),
and every statistic registered with a ``compute`` (its point on the jointly masked scores,
its draws on prompt-bootstrap resamples of them, :func:`resample_prompts`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from harness.core.errors import AuditError
from harness.core.numbers import finite_or_nan, finite_or_none
from harness.protocol.configurations import record_factors
from harness.stats import bootstrap as bs
from harness.stats._nan import nanmax, nanmean, nanmin
from harness.stats.dispersion import dispersion, scene_dispersion
from harness.stats.envelopes import SIGN_CROSSING, STRICT, envelopes, generator_pairs
from harness.stats.human_protocol import configuration_draws, factor_envelopes
from harness.stats.interactions import scene_sums_of_squares, shares, zero_tolerance
from harness.stats.probe_stats import pair_credit, probe_outcome
from harness.stats.rank import kendall_w, rank_stability
from harness.stats.rho import peak, rho, scene_level_variance
from harness.stats.table import (
    BlockScores,
    EvaluatorScores,
    generator_means,
    level_sort_key,
    pivot_records,
)
from harness.stats.views import best_view_inflation, scene_view_inflation
from harness.vocab.factors import PITCH, YAW, shared_factor_names
from harness.vocab.metrics import (
    BEST_VIEW_INFLATION,
    BLOCK_SIGN_CROSSINGS,
    DISCRIMINATION,
    DISPERSION,
    FAILED_SHARE,
    HUMAN_AGREEMENT,
    HUMAN_AGREEMENT_DROP,
    INTERACTION_SHARE,
    KENDALL_W,
    METRICS,
    PEAK_RHO,
    RHO,
    SIGN_CROSSINGS,
    STRICT_PAIRS,
    THRESHOLDS,
    TOP1_COUNT,
    MetricSpec,
    computed_metrics,
)

KEY: tuple[str, ...] = ("generator", "prompt_id", "scene_sha256", "factor", "level", "caption")

REGRESSION = "regression"
IMPROVEMENT = "improvement"
NO_CHANGE = "no change"
INCONCLUSIVE = "inconclusive"
VERDICTS = (REGRESSION, INCONCLUSIVE, IMPROVEMENT, NO_CHANGE)
CORRECTION = "max-t"
#: The subject kind of a metric without a key (one value per evaluator).
EVALUATOR = "evaluator"


class CompareError(AuditError):
    """Two releases cannot be compared (different scenes, protocol or evaluators)."""


def is_compared(spec: MetricSpec) -> bool:
    """A registry row that compare gates: ``compare`` in its places and a margin."""
    return spec.shown_in("compare") and spec.margin is not None


@dataclass(frozen=True)
class MetricKind:
    """A gated metric: ``harmful`` +1 when an increase is worse, −1 when a decrease is;
    ``margin`` the default tolerated change in the harmful direction (``unit``); ``scope``
    the kind of its subject (a factor, a probe, a block, ... or ``evaluator``)."""

    name: str
    harmful: int
    margin: float
    unit: str
    scope: str
    description: str

    @classmethod
    def of(cls, spec: MetricSpec) -> MetricKind:
        """The compared kind of registry row ``spec`` (which has a margin)."""
        if spec.margin is None:
            raise ValueError(f"metric {spec.name!r} has no compare margin")
        return cls(spec.name, spec.harmful, float(spec.margin), spec.unit, spec.key or EVALUATOR,
                   spec.description)


class _Kinds(Mapping[str, MetricKind]):
    """The compared metrics by name, read from :data:`METRICS` at each use (registry order),
    so a statistic registered after import is compared, and takes margins, too."""

    def __getitem__(self, name: str) -> MetricKind:
        spec = METRICS.get(name) if name in METRICS else None
        if spec is None or not is_compared(spec):
            raise KeyError(name)
        return MetricKind.of(spec)

    def __iter__(self) -> Iterator[str]:
        return iter([s.name for s in METRICS if is_compared(s)])

    def __len__(self) -> int:
        return sum(1 for s in METRICS if is_compared(s))

    def __repr__(self) -> str:
        return f"KINDS({', '.join(self)})"


class _DefaultMargins(Mapping[str, float]):
    """Kind → its registry margin, read like :data:`KINDS` (live)."""

    def __getitem__(self, name: str) -> float:
        return KINDS[name].margin

    def __iter__(self) -> Iterator[str]:
        return iter(KINDS)

    def __len__(self) -> int:
        return len(KINDS)

    def __repr__(self) -> str:
        return repr(dict(self))


#: Every compared metric kind (live view of the registry).
KINDS: Mapping[str, MetricKind] = _Kinds()
#: Kind → default margin (live view of the registry).
DEFAULT_MARGINS: Mapping[str, float] = _DefaultMargins()


def _threshold_scope(spec: MetricSpec) -> str | None:
    return THRESHOLDS.get(spec.threshold).scope if spec.threshold in THRESHOLDS else None


# compared only when human ratings are given (compare_records(human=...))
HUMAN_KINDS: tuple[str, ...] = tuple(
    s.name for s in METRICS if is_compared(s) and _threshold_scope(s) == "human"
)
# compared only when the records have factorial blocks (one comparison per block)
BLOCK_KINDS: tuple[str, ...] = tuple(s.name for s in METRICS if is_compared(s) and s.key == "block")


def registered_kinds() -> tuple[MetricSpec, ...]:
    """The statistics registered with their own ``compute`` that compare gates."""
    return tuple(s for s in computed_metrics() if is_compared(s))


def metric_id(kind: str, subject: str | None) -> str:
    """``rho-pitch``, ``discrimination-scrambled``, ``peak_rho``: the name in every output."""
    return f"{kind}-{subject}" if subject else kind


def margin_for(margins: Mapping[str, float], kind: str, subject: str | None) -> float:
    """``kind.subject`` (e.g. ``rho.pitch``) if set, else ``kind``, else the default."""
    if subject and f"{kind}.{subject}" in margins:
        return float(margins[f"{kind}.{subject}"])
    return float(margins.get(kind, DEFAULT_MARGINS[kind]))


def verdict(lo: float, hi: float, margin: float, harmful: int) -> str:
    """Verdict of one metric from its (multiplicity-corrected) CI of candidate − baseline.

    In the harmful orientation h = harmful·Δ with interval [a, b]: regression when a > margin
    (the CI excludes the margin on the harmful side), inconclusive when a ≤ margin < b (it
    straddles the margin), improvement when b < −margin, otherwise no change. An undefined
    interval is inconclusive: nothing is established.
    """
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return INCONCLUSIVE
    a, b = sorted((harmful * lo, harmful * hi))
    if a > margin:
        return REGRESSION
    if b > margin:
        return INCONCLUSIVE
    if b < -margin:
        return IMPROVEMENT
    return NO_CHANGE


@dataclass(frozen=True)
class MetricComparison:
    """One metric of one evaluator pair. Values in the metric's unit; ``difference`` is
    candidate − baseline; ``ci`` the simultaneous (max-t) interval of the difference,
    ``ci_pointwise`` the plain 95 % percentile interval; ``se`` the bootstrap SD."""

    metric: str
    kind: str
    subject: str | None
    baseline: float
    candidate: float
    difference: float
    ci: tuple[float, float]
    ci_pointwise: tuple[float, float]
    se: float
    margin: float
    harmful: int
    verdict: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "kind": self.kind,
            "subject": self.subject,
            "baseline": finite_or_none(self.baseline),
            "candidate": finite_or_none(self.candidate),
            "difference": finite_or_none(self.difference),
            "ci": [finite_or_none(x) for x in self.ci],
            "ci_pointwise": [finite_or_none(x) for x in self.ci_pointwise],
            "se": finite_or_none(self.se),
            "margin": self.margin,
            "harmful": "increase" if self.harmful > 0 else "decrease",
            "verdict": self.verdict,
        }


@dataclass(frozen=True)
class Failures:
    """Failed rows of one side: total, per factor, and rows whose pair partner failed."""

    rows: int
    failed: int
    by_factor: Mapping[str, int]

    def to_dict(self) -> dict[str, Any]:
        return {"rows": self.rows, "failed": self.failed, "by_factor": dict(self.by_factor)}


@dataclass(frozen=True)
class Comparison:
    """The comparison of one (baseline, candidate) evaluator pair."""

    baseline_evaluator: str
    candidate_evaluator: str
    metrics: tuple[MetricComparison, ...]
    not_compared: tuple[str, ...]
    baseline_failures: Failures
    candidate_failures: Failures
    excluded_rows: int
    n_prompts: int
    bootstrap: int
    seed: int
    level: float
    q: float
    correction: str = CORRECTION
    margins: Mapping[str, float] = field(default_factory=dict)

    def with_verdict(self, verdict_name: str) -> list[MetricComparison]:
        return [m for m in self.metrics if m.verdict == verdict_name]

    @property
    def regressions(self) -> list[MetricComparison]:
        return self.with_verdict(REGRESSION)

    @property
    def inconclusive(self) -> list[MetricComparison]:
        return self.with_verdict(INCONCLUSIVE)

    def counts(self) -> dict[str, int]:
        return {v: len(self.with_verdict(v)) for v in VERDICTS}

    def to_dict(self) -> dict[str, Any]:
        return {
            "baseline_evaluator": self.baseline_evaluator,
            "candidate_evaluator": self.candidate_evaluator,
            "n_prompts": self.n_prompts,
            "bootstrap": self.bootstrap,
            "seed": self.seed,
            "level": self.level,
            "correction": self.correction,
            "q": finite_or_none(self.q),
            "margins": dict(sorted(self.margins.items())),
            "failures": {
                "baseline": self.baseline_failures.to_dict(),
                "candidate": self.candidate_failures.to_dict(),
                "excluded_rows": self.excluded_rows,
            },
            "verdicts": self.counts(),
            "metrics": [m.to_dict() for m in self.metrics],
            "not_compared": list(self.not_compared),
        }


# ------------------------------------------------------------------------------ pairing


def _short(value: str, n: int = 60) -> str:
    return value if len(value) <= n else value[: n - 1] + "…"


def _factor_order(factor: str) -> int:
    order = record_factors()
    return order.index(factor) if factor in order else len(order)


def check_pairing(baseline: pd.DataFrame, candidate: pd.DataFrame) -> None:
    """Raise :class:`CompareError` naming the first difference in frozen scenes, protocol
    or rows between two single-evaluator record tables (in that order of checks)."""
    hint_scenes = "compare releases measured on the same frozen scene set"
    scene_cols = ["generator", "prompt_id", "scene_sha256"]
    scenes = [
        t.loc[t["factor"] != "probe", scene_cols].drop_duplicates() for t in (baseline, candidate)
    ]
    merged = scenes[0].merge(
        scenes[1], on=["generator", "prompt_id"], how="outer", suffixes=("_b", "_c"), indicator=True
    )
    bad = merged[(merged["_merge"] != "both") | (merged["scene_sha256_b"] != merged["scene_sha256_c"])]
    if len(bad):
        row = bad.sort_values(["generator", "prompt_id"]).iloc[0]
        where = f"generator {row['generator']!r}, prompt {row['prompt_id']!r}"
        if row["_merge"] == "left_only":
            what = f"frozen scenes differ: {where} is only in the baseline"
        elif row["_merge"] == "right_only":
            what = f"frozen scenes differ: {where} is only in the candidate"
        else:
            what = (
                f"frozen scenes differ: {where} has scene_sha256 {row['scene_sha256_b'][:12]}… "
                f"in the baseline and {row['scene_sha256_c'][:12]}… in the candidate"
            )
        raise CompareError(what, where="compare", hint=hint_scenes)

    protocol = [set(zip(t["factor"], t["level"], strict=True)) for t in (baseline, candidate)]
    only = [(fl, "baseline") for fl in protocol[0] - protocol[1]]
    only += [(fl, "candidate") for fl in protocol[1] - protocol[0]]
    if only:
        (factor, level), side = min(only, key=lambda x: (_factor_order(x[0][0]), x[0][0], level_sort_key(x[0][1])))
        raise CompareError(
            f"protocols differ: {factor}={level} is measured only in the {side}",
            where="compare",
            hint="run both releases with the same profile and evaluator options",
        )

    rows = baseline[list(KEY)].merge(candidate[list(KEY)], on=list(KEY), how="outer", indicator=True)
    bad = rows[rows["_merge"] != "both"]
    if len(bad):
        row = bad.sort_values(list(KEY)).iloc[0]
        side = "baseline" if row["_merge"] == "left_only" else "candidate"
        what = (
            f"rows differ: generator {row['generator']!r}, prompt {row['prompt_id']!r}, "
            f"{row['factor']}={row['level']}, scene_sha256 {row['scene_sha256'][:12]}…, "
            f"caption {_short(str(row['caption']))!r} is only in the {side}"
        )
        raise CompareError(
            what, where="compare", hint="captions and probe scenes must match between releases"
        )


def evaluators_of(records: pd.DataFrame) -> dict[str, bool]:
    """Evaluator id → whether it is an alignment evaluator (some caption is non-empty)."""
    caption = records["caption"].fillna("").astype(str) != ""
    return {str(k): bool(v) for k, v in caption.groupby(records["evaluator"], sort=True).any().items()}


def auto_pairs(baseline: pd.DataFrame, candidate: pd.DataFrame) -> list[tuple[str, str]]:
    """Default pairing: the single alignment evaluator of each side, else equal ids.

    Raises :class:`CompareError` when neither rule gives a pair.
    """
    b, c = evaluators_of(baseline), evaluators_of(candidate)
    b_align = [k for k, v in b.items() if v]
    c_align = [k for k, v in c.items() if v]
    if len(b_align) == 1 and len(c_align) == 1:
        return [(b_align[0], c_align[0])]
    same = sorted(set(b) & set(c))
    if same:
        return [(e, e) for e in same]
    raise CompareError(
        f"cannot pair evaluators: baseline has {sorted(b)}, candidate has {sorted(c)}",
        where="compare",
        hint="name the pairs with --pair BASE_ID=CAND_ID",
    )


# ------------------------------------------------------------------------------ metrics


def _joint_mask(a: EvaluatorScores, b: EvaluatorScores) -> tuple[EvaluatorScores, EvaluatorScores]:
    """Both sides with NaN wherever either side is NaN (failed on either release)."""

    def both(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        ok = np.isfinite(x) & np.isfinite(y)
        return np.where(ok, x, np.nan), np.where(ok, y, np.nan)

    base_a, base_b = both(a.baseline, b.baseline)
    fa, fb = {}, {}
    for name in a.factors:
        sa, sb = both(a.factors[name].scores, b.factors[name].scores)
        fa[name] = replace(a.factors[name], scores=sa)
        fb[name] = replace(b.factors[name], scores=sb)
    pa, pb = {}, {}
    for name in a.probes:
        pa[name], pb[name] = both(a.probes[name], b.probes[name])
    ba, bb = {}, {}
    for name in a.blocks:
        sa, sb = both(a.blocks[name].scores, b.blocks[name].scores)
        ba[name] = replace(a.blocks[name], scores=sa)
        bb[name] = replace(b.blocks[name], scores=sb)
    return (
        replace(a, baseline=base_a, factors=fa, probes=pa, blocks=ba),
        replace(b, baseline=base_b, factors=fb, probes=pb, blocks=bb),
    )


def resample_prompts(t: EvaluatorScores, counts: np.ndarray) -> EvaluatorScores:
    """One prompt-bootstrap resample of ``t``: prompt p repeated ``counts[p]`` times.

    ``counts`` (P,) is one row of :func:`harness.stats.bootstrap.prompt_weights`; every
    array's prompt axis (axis 1) is taken in that order, and ``prompts`` repeats the ids
    alike. ``n_records``, ``n_failed`` and ``failed_by_factor`` stay those of ``t``.
    """
    idx = np.repeat(np.arange(len(t.prompts)), np.asarray(counts, dtype=np.int64))

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
    n_draws, m, n = r.shape
    out = np.full(n_draws, np.nan)
    if m < 2 or n < 2:
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
        s = ((col - m * (n + 1) / 2.0) ** 2).sum(axis=1)
        den = m * m * (n**3 - n) - m * ties
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
    a = np.array([m for m, _ in pairs], dtype=np.int64)
    b = np.array([n for _, n in pairs], dtype=np.int64)
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


def _keys(value: Any) -> list[str]:
    """The keys of a keyed statistic's value (none for a scalar)."""
    return [str(k) for k in value] if isinstance(value, Mapping) else []


def _value_of(value: Any, key: str | None) -> float:
    """One value of a statistic's result: the scalar, or ``key``'s entry (NaN when absent)."""
    if key is None:
        return math.nan if isinstance(value, Mapping) else finite_or_nan(value)
    if not isinstance(value, Mapping):
        return math.nan
    found = {str(k): v for k, v in value.items()}.get(key)
    return finite_or_nan(found)


def _registered_subjects(spec: MetricSpec, point: Any) -> list[str | None]:
    """A scalar statistic's one subject (``None``), or a keyed one's keys in ``point``."""
    return [None] if spec.key is None else list(_keys(point))


def planned_metrics(t: EvaluatorScores, human: bool = False) -> list[tuple[str, str | None]]:
    """(kind, subject) of every metric :func:`side_metrics` computes for ``t``, in order
    (``human``: with human ratings). A keyed registered statistic is computed on ``t`` to
    find its keys."""
    out: list[tuple[str, str | None]] = []
    for f in t.factors:
        out += [(RHO, f), (DISPERSION, f)]
        if f in shared_factor_names():
            out += [(KENDALL_W, f), (TOP1_COUNT, f)]
    if t.factors:
        out.append((PEAK_RHO, None))
    out += [(SIGN_CROSSINGS, None), (STRICT_PAIRS, None)]
    out += [(DISCRIMINATION, p) for p in t.probes]
    if PITCH in t.factors or YAW in t.factors:
        out.append((BEST_VIEW_INFLATION, None))
    out.append((FAILED_SHARE, None))
    if human:
        out.append((HUMAN_AGREEMENT, None))
        out += [(HUMAN_AGREEMENT_DROP, f) for f in t.factors]
    for b in t.blocks:
        out += [(INTERACTION_SHARE, b), (BLOCK_SIGN_CROSSINGS, b)]
    for spec in registered_kinds():
        point = spec.compute(t) if spec.key is not None and spec.compute is not None else None
        out += [(spec.name, key) for key in _registered_subjects(spec, point)]
    return out


@dataclass(frozen=True)
class _Metric:
    kind: str
    subject: str | None
    point: float
    draws: np.ndarray  # (B,)


def side_metrics(
    t: EvaluatorScores,
    failed: np.ndarray,
    total: np.ndarray,
    weights: np.ndarray,
    human: np.ndarray | None = None,
) -> list[_Metric]:
    """Every gated metric of one release: point estimate and bootstrap replicates.

    ``t`` the evaluator's (jointly masked) arrays; ``failed`` and ``total`` (P,) the failed
    and all record counts per prompt (for the failed share); ``weights`` (B, P); ``human``
    (G, P) the mean human rating of each scene (NaN: not rated), or ``None``.
    """
    out: list[_Metric] = []
    names = list(t.factors)
    rho_d = np.zeros((weights.shape[0], 0))
    rhos: dict[str, float] = {}
    if names:
        blocks = [t.factors[f].scores for f in names]
        rho_d = bs.rho_draws(np.stack([scene_level_variance(s) for s in blocks]), t.baseline, weights)
        disp_d = bs.scene_mean_draws(np.stack([scene_dispersion(s) for s in blocks]), weights)
        for i, (f, s) in enumerate(zip(names, blocks, strict=True)):
            rhos[f] = rho(s, t.baseline)
            out.append(_Metric(RHO, f, rhos[f], rho_d[:, i]))
            out.append(_Metric(DISPERSION, f, dispersion(s), disp_d[:, i]))
            if f in shared_factor_names():
                point = rank_stability(generator_means(s))
                means = level_mean_draws(s, weights)
                out.append(_Metric(KENDALL_W, f, point.kendall_w, kendall_w_draws(means)))
                out.append(_Metric(TOP1_COUNT, f, float(point.top1_count), top1_count_draws(means)))
        out.append(_Metric(PEAK_RHO, None, peak(rhos)[1], nanmax(rho_d, axis=1)))

    _ids, shared = t.shared_protocols()
    counts = envelopes(generator_means(shared)).counts()
    strict_d, cross_d = envelope_count_draws(level_mean_draws(shared, weights))
    out.append(_Metric(SIGN_CROSSINGS, None, float(counts[SIGN_CROSSING]), cross_d))
    out.append(_Metric(STRICT_PAIRS, None, float(counts[STRICT]), strict_d))

    for name, scores in t.probes.items():
        credit = pair_credit(t.baseline, scores)
        point = probe_outcome(t.baseline, scores).discrimination
        out.append(_Metric(DISCRIMINATION, name, point, bs.scene_mean_draws(credit, weights)))

    views = [t.factors[f].scores for f in (PITCH, YAW) if f in t.factors]
    if views:
        stacked = np.concatenate(views, axis=-1)
        out.append(
            _Metric(
                BEST_VIEW_INFLATION,
                None,
                best_view_inflation(t.baseline, stacked),
                weighted_median_draws(scene_view_inflation(t.baseline, stacked), weights),
            )
        )

    w = np.asarray(weights, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        share_d = (w @ failed) / (w @ total)
    share = float(failed.sum() / total.sum()) if total.sum() else float("nan")
    out.append(_Metric(FAILED_SHARE, None, share, share_d))
    if human is not None:
        out += _human_metrics(t, human, weights)
    for block in t.blocks.values():
        out += _block_metrics(block, weights)
    out += _registered_metrics(t, weights)
    return out


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


def _block_metrics(block: BlockScores, weights: np.ndarray) -> list[_Metric]:
    """Interaction share and block sign crossings of one factorial block (subject: its id)."""
    share, share_d = interaction_share_draws(block, weights)
    cross, cross_d = block_sign_crossing_draws(block, weights)
    return [
        _Metric(INTERACTION_SHARE, block.id, share, share_d),
        _Metric(BLOCK_SIGN_CROSSINGS, block.id, cross, cross_d),
    ]


def _registered_metrics(t: EvaluatorScores, weights: np.ndarray) -> list[_Metric]:
    """Every registered statistic compare gates: ``compute`` on ``t`` for the point and on
    each draw's :func:`resample_prompts` for the replicates (one resample per draw, shared by
    all statistics); a keyed one gives one metric per key of its point."""
    specs = [s for s in registered_kinds() if s.compute is not None]
    if not specs:
        return []
    points = [spec.compute(t) for spec in specs]
    subjects = [_registered_subjects(spec, point) for spec, point in zip(specs, points, strict=True)]
    draws = [np.full((weights.shape[0], len(keys)), np.nan) for keys in subjects]
    for b, counts in enumerate(np.asarray(weights)):
        sample = resample_prompts(t, counts)
        for i, spec in enumerate(specs):
            value = spec.compute(sample)
            draws[i][b] = [_value_of(value, key) for key in subjects[i]]
    out = []
    for spec, point, keys, d in zip(specs, points, subjects, draws, strict=True):
        out += [_Metric(spec.name, key, _value_of(point, key), d[:, j]) for j, key in enumerate(keys)]
    return out


def _human_metrics(t: EvaluatorScores, human: np.ndarray, weights: np.ndarray) -> list[_Metric]:
    """Human agreement at c0 and its largest drop per factor (harness.stats.human_protocol)."""
    g, p = t.baseline.shape
    blocks = np.tile(np.arange(p), g)  # items flattened generator-major: (G·P,)
    series = [t.baseline.reshape(-1)]
    confs = ["c0"]
    factor_of: dict[str, tuple[str, str]] = {}
    for f, fs in t.factors.items():
        for i, lv in enumerate(fs.levels):
            series.append(fs.scores[:, :, i].reshape(-1))
            confs.append(f"{f}={lv}")
            factor_of[confs[-1]] = (f, str(lv))
    draws = configuration_draws(np.stack(series), np.asarray(human, dtype=np.float64).reshape(-1), blocks, weights)
    out = [_Metric(HUMAN_AGREEMENT, None, float(draws[0, 0]), draws[1:, 0])]
    envelopes_ = factor_envelopes(draws, confs, factor_of, "c0")
    index = {c: i for i, c in enumerate(confs)}
    for f in t.factors:
        cols = [index[c] for c, (ff, _) in factor_of.items() if ff == f]
        per_draw = nanmax(draws[1:, :1] - draws[1:, cols], axis=1)  # paired: max within a draw
        point = envelopes_.get(f, {}).get("max_drop")
        out.append(_Metric(HUMAN_AGREEMENT_DROP, f, float("nan") if point is None else point, per_draw))
    return out


# ------------------------------------------------------------------------------ comparison


def _failures(records: pd.DataFrame) -> Failures:
    failed = records["status"] == "failed"
    by_factor = records.loc[failed, "factor"].value_counts()
    return Failures(
        rows=len(records),
        failed=int(failed.sum()),
        by_factor={str(k): int(v) for k, v in sorted(by_factor.items())},
    )


def _per_prompt(records: pd.DataFrame, prompts: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    failed = (records["status"] == "failed").astype(np.float64)
    grouped = failed.groupby(records["prompt_id"]).agg(["sum", "count"]).reindex(list(prompts), fill_value=0)
    return grouped["sum"].to_numpy(np.float64), grouped["count"].to_numpy(np.float64)


def max_t_band(
    diff_draws: np.ndarray, diff: np.ndarray, level: float = 0.95
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Simultaneous intervals for a family of differences.

    ``diff_draws`` (B, J) bootstrap replicates, ``diff`` (J,) the original-sample values.
    SE_j is the SD over draws (ddof 1); q is the ``level`` quantile over draws of
    max_j |Δ*_j − Δ_j| / SE_j over metrics with finite SE > 0. Returns (lo, hi, se, q):
    Δ ± q·SE; a metric whose replicates never vary (SE 0) gets the point [Δ, Δ]; one
    without finite replicates gets NaN.
    """
    d = np.asarray(diff_draws, dtype=np.float64)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        se = np.nanstd(d, axis=0, ddof=1) if d.shape[0] > 1 else np.full(d.shape[1], np.nan)
    eligible = np.isfinite(se) & (se > 0) & np.isfinite(diff)
    q = float("nan")
    if eligible.any():
        t = np.abs(d[:, eligible] - diff[eligible]) / se[eligible]
        t_max = nanmax(t, axis=1)
        t_max = t_max[np.isfinite(t_max)]
        q = float(np.quantile(t_max, level)) if t_max.size else float("nan")
    half = np.where(eligible, q * np.where(eligible, se, 0.0), np.where(se == 0, 0.0, np.nan))
    return diff - half, diff + half, se, q


def compare_records(
    baseline: pd.DataFrame,
    candidate: pd.DataFrame,
    *,
    baseline_evaluator: str | None = None,
    candidate_evaluator: str | None = None,
    margins: Mapping[str, float] | None = None,
    bootstrap: int = 2000,
    seed: int = 42,
    level: float = 0.95,
    human: Mapping[tuple[str, str], float] | None = None,
) -> Comparison:
    """Compare one evaluator pair of two releases; pure function of the two record tables.

    ``baseline_evaluator`` / ``candidate_evaluator`` select the evaluator on each side
    (default: the single alignment evaluator, see :func:`auto_pairs`). ``margins`` maps a
    metric kind (``rho``) or ``kind.subject`` (``rho.pitch``) to its margin; missing ones
    take :data:`DEFAULT_MARGINS`. ``bootstrap`` B ≥ 2 prompt-block draws from ``seed``,
    shared by both releases. ``human`` maps (generator, prompt_id) to the mean human rating:
    agreement with it becomes a metric (:data:`HUMAN_KINDS`; a release that loses agreement
    regresses). Raises :class:`CompareError` for an impossible pairing and
    :class:`harness.core.errors.RecordsError` for an unusable table.
    """
    if bootstrap < 2:
        raise CompareError(f"bootstrap must be ≥ 2, got {bootstrap}", where="--bootstrap")
    margins = dict(margins or {})
    if baseline_evaluator is None or candidate_evaluator is None:
        found = auto_pairs(baseline, candidate)
        if len(found) != 1:
            raise CompareError(
                f"{len(found)} evaluator pairs found ({', '.join(f'{b}={c}' for b, c in found)})",
                where="compare",
                hint="name the pair to compare",
            )
        baseline_evaluator, candidate_evaluator = found[0]
    sides = []
    for records, name, side in (
        (baseline, baseline_evaluator, "baseline"),
        (candidate, candidate_evaluator, "candidate"),
    ):
        rows = records[records["evaluator"] == name]
        if rows.empty:
            present = sorted(evaluators_of(records))
            raise CompareError(
                f"evaluator {name!r} is not in the {side} (it has {present})",
                where="compare",
                hint="check --pair BASE_ID=CAND_ID",
            )
        sides.append(rows.reset_index(drop=True))
    b_rows, c_rows = sides
    check_pairing(b_rows, c_rows)
    b_t = pivot_records(b_rows)[baseline_evaluator]
    c_t = pivot_records(c_rows)[candidate_evaluator]
    b_m, c_m = _joint_mask(b_t, c_t)
    excluded = _excluded(b_rows, c_rows)
    weights = bs.prompt_weights(len(b_t.prompts), bootstrap, seed)
    target = None
    if human is not None:
        target = np.array([[human.get((g, p), np.nan) for p in b_t.prompts] for g in b_t.generators])
        if not np.isfinite(target).any():
            raise CompareError("no scene of the releases has a human rating", where="--human",
                               hint="the ratings join on (generator, prompt_id)")
    base = side_metrics(b_m, *_per_prompt(b_rows, b_t.prompts), weights, target)
    cand = side_metrics(c_m, *_per_prompt(c_rows, c_t.prompts), weights, target)

    kept: list[tuple[_Metric, _Metric]] = []
    skipped: list[str] = []
    for mb, mc in _aligned(base, cand):
        if not (math.isfinite(mb.point) or math.isfinite(mc.point)):
            skipped.append(metric_id(mb.kind, mb.subject))
        else:
            kept.append((mb, mc))
    diff = np.array([mc.point - mb.point for mb, mc in kept])
    draws = (
        np.stack([mc.draws - mb.draws for mb, mc in kept], axis=1)
        if kept
        else np.zeros((bootstrap, 0))
    )
    lo, hi, se, q = max_t_band(draws, diff, level)
    pointwise = bs.percentile_ci(draws, level) if kept else np.zeros((2, 0))
    metrics = []
    for j, (mb, mc) in enumerate(kept):
        kind = KINDS[mb.kind]
        margin = margin_for(margins, mb.kind, mb.subject)
        metrics.append(
            MetricComparison(
                metric=metric_id(mb.kind, mb.subject),
                kind=mb.kind,
                subject=mb.subject,
                baseline=float(mb.point),
                candidate=float(mc.point),
                difference=float(diff[j]),
                ci=(float(lo[j]), float(hi[j])),
                ci_pointwise=(float(pointwise[0, j]), float(pointwise[1, j])),
                se=float(se[j]),
                margin=margin,
                harmful=kind.harmful,
                verdict=verdict(float(lo[j]), float(hi[j]), margin, kind.harmful),
            )
        )
    return Comparison(
        baseline_evaluator=baseline_evaluator,
        candidate_evaluator=candidate_evaluator,
        metrics=tuple(metrics),
        not_compared=tuple(skipped),
        baseline_failures=_failures(b_rows),
        candidate_failures=_failures(c_rows),
        excluded_rows=excluded,
        n_prompts=len(b_t.prompts),
        bootstrap=bootstrap,
        seed=seed,
        level=level,
        q=q,
        margins={k: margin_for(margins, k, None) for k in KINDS
                 if (human is not None or k not in HUMAN_KINDS) and (b_t.blocks or k not in BLOCK_KINDS)} | {
            k: float(v) for k, v in margins.items() if "." in k
        },
    )


def _aligned(base: list[_Metric], cand: list[_Metric]) -> list[tuple[_Metric, _Metric]]:
    """The two sides' metrics paired by (kind, subject): the baseline's order, then any only
    the candidate has (a keyed registered statistic may find other keys); a metric missing
    on one side is NaN there."""

    def missing(m: _Metric) -> _Metric:
        return _Metric(m.kind, m.subject, math.nan, np.full(m.draws.shape, np.nan))

    by_cand = {(m.kind, m.subject): m for m in cand}
    in_base = {(m.kind, m.subject) for m in base}
    out = [(mb, by_cand.get((mb.kind, mb.subject)) or missing(mb)) for mb in base]
    out += [(missing(mc), mc) for mc in cand if (mc.kind, mc.subject) not in in_base]
    return out


def _excluded(b_rows: pd.DataFrame, c_rows: pd.DataFrame) -> int:
    """Paired rows left out because they failed on either side."""
    fb = b_rows.loc[b_rows["status"] == "failed", list(KEY)]
    fc = c_rows.loc[c_rows["status"] == "failed", list(KEY)]
    if fb.empty and fc.empty:
        return 0
    return len(pd.concat([fb, fc], ignore_index=True).drop_duplicates())


def compare_pairs(
    baseline: pd.DataFrame,
    candidate: pd.DataFrame,
    pairs: Iterable[tuple[str, str]] | None = None,
    **options: Any,
) -> list[Comparison]:
    """:func:`compare_records` for each (baseline id, candidate id) pair (default:
    :func:`auto_pairs`). ``options`` go to :func:`compare_records`; ``margins`` may also be
    a callable ``candidate id → margins`` for per-evaluator margins."""
    chosen = list(pairs) if pairs else auto_pairs(baseline, candidate)
    margins = options.pop("margins", None)
    out = []
    for b, c in chosen:
        m = margins(c) if callable(margins) else margins
        out.append(
            compare_records(
                baseline, candidate, baseline_evaluator=b, candidate_evaluator=c, margins=m, **options
            )
        )
    return out
