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
and every statistic with a ``compute``. Their values and draws come from the metric engine
(:mod:`harness.stats.engine`, the same computation as the audit's); this module pairs the
releases, masks them jointly, builds the band (:func:`harness.stats.intervals.max_t_band`) and
gives the verdicts.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from harness.core.errors import AuditError
from harness.core.numbers import finite_or_none
from harness.protocol.configurations import record_factors
from harness.stats import bootstrap as bs
from harness.stats import engine
from harness.stats.engine import Estimate
from harness.stats.intervals import block_bounds, max_t_band
from harness.stats.table import EvaluatorScores, level_sort_key, pivot_records
from harness.vocab.metrics import METRICS, THRESHOLDS, MetricSpec

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


def human_kinds() -> tuple[str, ...]:
    """The metrics compared only when human ratings are given (``compare_records(human=...)``),
    read from the registry at the call (a metric registered later counts)."""
    return tuple(s.name for s in METRICS if is_compared(s) and _threshold_scope(s) == "human")


def block_kinds() -> tuple[str, ...]:
    """The metrics compared only when the records have factorial blocks (one per block)."""
    return tuple(s.name for s in METRICS if is_compared(s) and s.key == "block")


def metric_id(kind: str, subject: str | None) -> str:
    """``rho-pitch``, ``discrimination-scrambled``, ``peak_rho``: the name in every output."""
    return f"{kind}-{subject}" if subject else kind


def margin_for(margins: Mapping[str, float], kind: str, subject: str | None) -> float:
    """``kind.subject`` (e.g. ``rho.pitch``) if set, else ``kind``, else the default."""
    if subject and f"{kind}.{subject}" in margins:
        return float(margins[f"{kind}.{subject}"])
    return float(margins.get(kind, DEFAULT_MARGINS[kind]))


#: The evidence a comparison's verdicts rest on: ``confirmed`` (the default: the simultaneous
#: interval of the difference lies beyond the margin) or ``descriptive`` (the point difference
#: does, as the study's thresholds read point estimates).
COMPARE_EVIDENCE = ("confirmed", "descriptive")


def point_verdict(difference: float, margin: float, harmful: int) -> str:
    """The descriptive verdict of one metric: its point difference (candidate − baseline) in the
    harmful orientation against the margin; regression beyond it, improvement beyond −margin,
    no change between; an undefined difference is inconclusive."""
    if not math.isfinite(difference):
        return INCONCLUSIVE
    h = harmful * difference
    return REGRESSION if h > margin else IMPROVEMENT if h < -margin else NO_CHANGE


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
    ``ci_pointwise`` the interval policy's pointwise 95 % interval over the P prompts (the
    expanded percentile, :func:`harness.stats.intervals.block_bounds`); ``se`` the bootstrap SD."""

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

    def to_dict(self) -> dict[str, object]:
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

    def to_dict(self) -> dict[str, object]:
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
    evidence: str = "confirmed"

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

    def to_dict(self) -> dict[str, object]:
        return {
            "baseline_evaluator": self.baseline_evaluator,
            "candidate_evaluator": self.candidate_evaluator,
            "n_prompts": self.n_prompts,
            "bootstrap": self.bootstrap,
            "seed": self.seed,
            "level": self.level,
            "correction": self.correction,
            "evidence": self.evidence,
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


def planned_metrics(t: EvaluatorScores, human: bool = False) -> list[tuple[str, str | None]]:
    """(kind, subject) of every metric :func:`side_metrics` computes for ``t``, in order
    (``human``: with human ratings): the engine's plan of the compared rows
    (:func:`harness.stats.engine.plan`)."""
    return engine.plan(t, human, is_compared)


def side_metrics(
    t: EvaluatorScores,
    failed: np.ndarray,
    total: np.ndarray,
    weights: np.ndarray,
    human: np.ndarray | None = None,
) -> list[Estimate]:
    """Every compared metric of one release: point estimate and bootstrap replicates, from the
    metric engine (:func:`harness.stats.engine.estimate`).

    ``t`` the evaluator's (jointly masked) arrays; ``failed`` and ``total`` (P,) the failed
    and all record counts per prompt (for the failed share); ``weights`` (B, P); ``human``
    (G, P) the mean human rating of each scene (NaN: not rated), or ``None``.
    """
    return engine.estimate(engine.Sample(t, weights, failed, total, human), is_compared)


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


def _span(kind: str) -> float:
    """The largest possible |difference| of metric ``kind`` between two releases: the width
    of its ``bounds`` (inf for an unbounded one or a kind the registry does not know)."""
    spec = METRICS.find(kind)
    bounds = None if spec is None else spec.bounds
    return math.inf if bounds is None else float(bounds[1] - bounds[0])


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
    evidence: str = "confirmed",
) -> Comparison:
    """Compare one evaluator pair of two releases; pure function of the two record tables.

    ``evidence``: ``confirmed`` (a verdict from the simultaneous interval, :func:`verdict`) or
    ``descriptive`` (from the point difference, :func:`point_verdict`); the intervals are
    computed and reported either way.

    ``baseline_evaluator`` / ``candidate_evaluator`` select the evaluator on each side
    (default: the single alignment evaluator, see :func:`auto_pairs`). ``margins`` maps a
    metric kind (``rho``) or ``kind.subject`` (``rho.pitch``) to its margin; missing ones
    take :data:`DEFAULT_MARGINS`. ``bootstrap`` B ≥ 2 prompt-block draws from ``seed``,
    shared by both releases. ``human`` maps (generator, prompt_id) to the mean human rating:
    agreement with it becomes a metric (:func:`human_kinds`; a release that loses agreement
    regresses). Raises :class:`CompareError` for an impossible pairing and
    :class:`harness.core.errors.RecordsError` for an unusable table.
    """
    if evidence not in COMPARE_EVIDENCE:
        raise AuditError(f"evidence must be one of {', '.join(COMPARE_EVIDENCE)}, got {evidence!r}",
                         where="compare", hint="--evidence confirmed|descriptive")  # fmt: skip
    confirmed = evidence == "confirmed"
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

    kept: list[tuple[Estimate, Estimate]] = []
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
    band = max_t_band(diff, draws, level)
    lo, hi = band.interval()
    se, q = band.se, band.q
    pointwise = block_bounds(draws, len(b_t.prompts), level) if kept else np.zeros((2, 0))
    # a difference of a bounded statistic cannot leave ±(its range): W's Δ lies in [−1, 1]
    span = np.array([_span(mb.kind) for mb, _ in kept]) if kept else np.zeros(0)
    lo, hi = np.maximum(lo, -span), np.minimum(hi, span)
    pointwise = np.stack([np.maximum(pointwise[0], -span), np.minimum(pointwise[1], span)]) if kept else pointwise
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
                verdict=(verdict(float(lo[j]), float(hi[j]), margin, kind.harmful) if confirmed
                         else point_verdict(float(diff[j]), margin, kind.harmful)),
            )
        )
    human_only, block_only = human_kinds(), block_kinds()
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
                 if (human is not None or k not in human_only) and (b_t.blocks or k not in block_only)} | {
            k: float(v) for k, v in margins.items() if "." in k
        },
        evidence=evidence,
    )


def _aligned(base: list[Estimate], cand: list[Estimate]) -> list[tuple[Estimate, Estimate]]:
    """The two sides' metrics paired by (kind, subject): the baseline's order, then any only
    the candidate has (a keyed registered statistic may find other keys); a metric missing
    on one side is NaN there."""

    def missing(m: Estimate) -> Estimate:
        return Estimate(m.kind, m.subject, math.nan, np.full(m.draws.shape, np.nan))

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
