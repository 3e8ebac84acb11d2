"""Every statistic of the audit from one tidy record table: :func:`compute_audit`.

The result is a frozen :class:`AuditResult`; ``to_summary()`` gives the ``summary.json``
mapping of docs/formats.md ("summary.json") with plain fractions and ``null`` for undefined values.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np
import pandas as pd

from harness.core.errors import AuditError, RecordsError
from harness.core.numbers import finite_or_none
from harness.stats import bootstrap as bs
from harness.stats import engine, estimators
from harness.stats.confirmation import FamilyConfirmation, family_confirmation
from harness.stats.envelopes import (
    SIGN_CROSSING,
    STRICT,
    TIE_BOUNDARY,
    Envelopes,
    generator_pairs,
)
from harness.stats.family import build_family
from harness.stats.interactions import CI, NAN_CI, BlockStats, block_stats
from harness.stats.intervals import block_bounds, interval, withheld_ends
from harness.stats.levels import best_worst, lighting_correlation, mean_standardised_shift
from harness.stats.logo import logo_peak_rho
from harness.stats.probe_stats import ProbeOutcome, content_accuracy
from harness.stats.rank import RankStability
from harness.stats.reversals import ReversalSearch, search_reversals
from harness.stats.rho import rho
from harness.stats.simultaneous import SEMethod, simultaneous_band
from harness.stats.summary import (
    Band,
    BlockSummary,
    EnvelopeCounts,
    EvaluatorSummary,
    Interval,
    PanelSummary,
    RegisteredInterval,
    Reversals,
    as_floats,
    as_interval,
    as_intervals,
    as_registered,
    as_registered_intervals,
)
from harness.stats.table import EvaluatorScores, generator_means, pivot_records
from harness.stats.template_effects import (
    SlotEffect,
    TemplateGain,
    average_slot_effects,
    slot_effects,
    template_gain,
)
from harness.vocab import metrics as m
from harness.vocab.factors import rendered_factor_names
from harness.vocab.metrics import MetricSpec, computed_metrics


@dataclass(frozen=True)
class ProbeStats:
    """One probe: the outcome decomposition and pointwise bootstrap intervals (fractions)
    of the strict-drop, tie and rise rates and of the tie-adjusted discrimination."""

    outcome: ProbeOutcome
    ci: Mapping[str, CI]


@dataclass(frozen=True)
class TopGap:
    """Baseline gap between the two leading generators, L(top1) − L(top2), score units."""

    top1: str
    top2: str
    gap: float
    ci: CI


@dataclass(frozen=True)
class EvaluatorAudit:
    """All per-evaluator statistics. Fractions, ratios or score units as named; intervals are
    pointwise 95 % prompt-bootstrap intervals read by the interval policy over the run's
    prompts (:func:`harness.stats.intervals.interval`; NaN when the bootstrap is off)."""

    evaluator: str
    prompt_free: bool
    generators: tuple[str, ...]
    n_prompts: int
    n_records: int
    failed: int
    failed_by_factor: Mapping[str, int]
    dispersion: Mapping[str, float]
    dispersion_ci: Mapping[str, CI]
    rho: Mapping[str, float]
    rho_sample: Mapping[str, float]
    rho_ci: Mapping[str, CI]
    peak_factor: str | None
    peak_rho: float
    peak_rho_ci: CI
    logo_peak_rho_range: CI
    rank: Mapping[str, RankStability]
    best_view_inflation: float
    probes: Mapping[str, ProbeStats]
    envelopes: Envelopes
    baseline_means: tuple[float, ...]
    top_gap: TopGap | None
    separable_pairs: int | None
    best_worst: Mapping[str, tuple[str, str]]
    template_gain: TemplateGain | None
    slot_effects: Mapping[str, SlotEffect] = field(default_factory=dict)
    blocks: Mapping[str, BlockStats] = field(default_factory=dict)
    registered: Mapping[str, float | Mapping[str, float]] = field(default_factory=dict)
    registered_ci: Mapping[str, CI | Mapping[str, CI]] = field(default_factory=dict)
    confirmation: FamilyConfirmation | None = None  # the confirmed tier's intervals (bootstrap on)

    @property
    def template_rho(self) -> float:
        return self.rho.get("template", float("nan"))

    @property
    def kendall_w(self) -> dict[str, float]:
        return {f: r.kendall_w for f, r in self.rank.items()}

    @property
    def top1_count(self) -> dict[str, int]:
        return {f: r.top1_count for f, r in self.rank.items()}

    @property
    def min_w(self) -> float:
        vals = [w for w in self.kendall_w.values() if np.isfinite(w)]
        return float(min(vals)) if vals else float("nan")

    @property
    def max_top1(self) -> int:
        return max(self.top1_count.values(), default=0)

    @property
    def top1_summary(self) -> dict[str, int | None]:
        """``top1_count`` with ``None`` for factors that were not measured (all failed)."""
        return {f: r.top1_count if r.measured else None for f, r in self.rank.items()}

    @property
    def discrimination(self) -> dict[str, float]:
        return {p: s.outcome.discrimination for p, s in self.probes.items()}

    @property
    def content_accuracy(self) -> float:
        return content_accuracy(self.discrimination)

    @property
    def stable_winner(self) -> str | None:
        w = self.envelopes.stable_winner
        return None if w is None else self.generators[w]


@dataclass(frozen=True)
class LightingSummary:
    """Mean standardised shift per lighting map and its correlation with EV and CCT."""

    levels: tuple[str, ...]
    z_shift: tuple[float, ...]
    scalars: Mapping[str, tuple[float, float]]
    correlation: Mapping[str, float]


@dataclass(frozen=True)
class AuditResult:
    """Everything :func:`compute_audit` computes; ``to_summary()`` is ``summary.json``."""

    evaluators: Mapping[str, EvaluatorAudit]
    band: Band
    reversals: ReversalSearch
    slot_effects: Mapping[str, SlotEffect]
    lighting: LightingSummary | None
    bootstrap: int
    seed: int
    n_records: int
    n_failed: int

    @property
    def alignment(self) -> tuple[str, ...]:
        """Evaluators that read the prompt (the prompt-free controls left out)."""
        return tuple(k for k, v in self.evaluators.items() if not v.prompt_free)

    def summary(self, *, intervals: bool = False) -> PanelSummary:
        """The typed summary (the one form every reader takes: fixtures, cards, report,
        terminal); ``intervals`` adds each evaluator's pointwise bootstrap intervals of
        ``rho``, ``dispersion`` and ``discrimination``."""
        return PanelSummary(
            evaluators=MappingProxyType(
                {name: _evaluator_summary(ev, intervals) for name, ev in self.evaluators.items()}
            ),
            reversals=Reversals(**self.reversals.counts()),
            band=self.band,
        )

    def to_summary(self) -> dict[str, object]:
        """The summary.json mapping (docs/formats.md): exactly its keys, fractions, NaN → None."""
        return self.summary().to_summary()


def _evaluator_summary(ev: EvaluatorAudit, with_intervals: bool) -> EvaluatorSummary:
    counts = ev.envelopes.counts()
    measured = bool(np.isfinite(ev.baseline_means).any())
    intervals: dict[str, Mapping[str, Interval | None]] = {}
    registered_intervals: Mapping[str, RegisteredInterval] = MappingProxyType({})
    if with_intervals:
        intervals = {
            m.RHO: as_intervals(ev.rho_ci),
            m.DISPERSION: as_intervals(ev.dispersion_ci),
            m.DISCRIMINATION: as_intervals({p: st.ci.get(m.DISCRIMINATION) for p, st in ev.probes.items()}),
        }
        registered_intervals = as_registered_intervals(ev.registered_ci)
    elif m.PEAK_MOVEMENT in ev.registered_ci:  # the headline keeps its interval, as peak ρ does
        registered_intervals = as_registered_intervals({m.PEAK_MOVEMENT: ev.registered_ci[m.PEAK_MOVEMENT]})
    return EvaluatorSummary(
        evaluator=ev.evaluator,
        rho=as_floats(ev.rho),
        dispersion=as_floats(ev.dispersion),
        kendall_w=as_floats(ev.kendall_w),
        top1_count=MappingProxyType(dict(ev.top1_summary)),
        discrimination=as_floats(ev.discrimination),
        peak_rho=finite_or_none(ev.peak_rho),
        peak_rho_ci=as_interval(ev.peak_rho_ci),
        template_rho=finite_or_none(ev.template_rho),
        min_w=finite_or_none(ev.min_w),
        max_top1=ev.max_top1 if any(r.measured for r in ev.rank.values()) else None,
        best_view_inflation=finite_or_none(ev.best_view_inflation),
        content_accuracy=finite_or_none(ev.content_accuracy),
        envelopes=EnvelopeCounts(  # counts of a never-measured evaluator are unknown, not 0
            strict=counts[STRICT] if measured else None,
            sign_crossing=counts[SIGN_CROSSING] if measured else None,
            tie_boundary=counts[TIE_BOUNDARY] if measured else None,
            stable_winner=ev.stable_winner,
        ),
        logo_peak_rho_range=as_interval(ev.logo_peak_rho_range),
        failed=ev.failed,
        failed_share=ev.failed / ev.n_records if ev.n_records else None,
        intervals=MappingProxyType(intervals),
        blocks=MappingProxyType({b: _block_summary(st) for b, st in ev.blocks.items()}),
        registered=as_registered(ev.registered),
        registered_intervals=registered_intervals,
        confirmation=ev.confirmation,  # summary.json carries the confirmed level (the cards read it)
    )


def _block_summary(st: BlockStats) -> BlockSummary:
    """One block's entry of ``summary.json#/evaluators/<id>/blocks`` (docs/formats.md)."""
    counts = st.envelopes.counts()
    measured = bool(np.isfinite(st.cell_means).any())
    return BlockSummary(
        factors=tuple(st.factors),
        levels=tuple(tuple(lv) for lv in st.levels),
        main_share=as_floats(st.main_share),
        main_share_ci=as_intervals(st.main_share_ci),
        interaction_share=finite_or_none(st.interaction_share),
        interaction_share_ci=as_interval(st.interaction_share_ci),
        rho_interaction=finite_or_none(st.rho_interaction),
        rho_interaction_ci=as_interval(st.rho_interaction_ci),
        rho_block=finite_or_none(st.rho_block),
        sign_crossings=counts[SIGN_CROSSING] if measured else None,
        strict=counts[STRICT] if measured else None,
        new_sign_crossings=st.new_sign_crossings if measured else None,
        winner_count=st.winner_count if measured else None,
        additivity_rmse=finite_or_none(st.additivity_rmse),
        max_additivity_error=finite_or_none(st.max_additivity_error),
        n_scenes=st.n_scenes,
    )


def summary_with_intervals(result: AuditResult) -> dict[str, object]:
    """``result.to_summary()`` where each evaluator entry also carries ``intervals``: pointwise
    95 % bootstrap intervals ``[lo, hi]`` of ``rho`` and ``dispersion`` (per factor) and of
    ``discrimination`` (per probe); an end is ``None`` where the bootstrap is off or undefined.
    The audit session's per-evaluator summaries (assertion messages, cards) are these."""
    return result.summary(intervals=True).to_summary()


def compute_audit(
    records: pd.DataFrame,
    *,
    bootstrap: int = 2000,
    seed: int = 42,
    template_slots: Mapping[str, Mapping[str, str | None]] | None = None,
    default_template: str | None = None,
    lighting_scalars: Mapping[str, tuple[float, float]] | None = None,
    se_method: SEMethod = "bootstrap",
    max_bytes: int = 256 * 2**20,
) -> AuditResult:
    """Compute every statistic of the study from the tidy ``records`` alone.

    ``bootstrap``: B prompt-block draws (0 turns intervals and the band off), drawn once
    from ``seed`` and shared by every interval. ``template_slots`` (template id → slot
    choices) enables Table 3; ``default_template`` the best-template-vs-default gain;
    ``lighting_scalars`` (map → (EV, CCT K)) the lighting correlation. Failed records are
    excluded and counted. Raises :class:`RecordsError` for an unusable table, and for scores
    so large that a statistic would overflow (never a silent ``inf``).
    """
    try:
        with np.errstate(over="raise"):
            return _compute_audit(
                records, bootstrap, seed, template_slots, default_template, lighting_scalars,
                se_method, max_bytes,
            )
    except FloatingPointError as exc:
        scores = pd.to_numeric(records["score"], errors="coerce").abs()
        raise RecordsError(
            f"a statistic would overflow ({exc}); the largest |score| is {scores.max():.3g}",
            where="score records",
            hint="scores must be on the evaluator's own bounded scale: declare its score_range "
            "and record out-of-range outputs as failed",
        ) from exc


def _compute_audit(
    records: pd.DataFrame,
    bootstrap: int,
    seed: int,
    template_slots: Mapping[str, Mapping[str, str | None]] | None,
    default_template: str | None,
    lighting_scalars: Mapping[str, tuple[float, float]] | None,
    se_method: SEMethod,
    max_bytes: int,
) -> AuditResult:
    if bootstrap < 0:
        raise RecordsError(f"bootstrap must be ≥ 0, got {bootstrap}", where="--bootstrap")
    tables = pivot_records(records)
    if not tables:
        raise RecordsError("no score records", where="score records", hint="pass raw score files")
    first = next(iter(tables.values()))
    n_prompts = len(first.prompts)
    weights = bs.prompt_weights(n_prompts, bootstrap, seed) if bootstrap else None
    per_eval = {
        name: _evaluator_audit(t, weights, template_slots, default_template)
        for name, t in tables.items()
    }
    alignment = [tables[k] for k, v in per_eval.items() if not v.prompt_free]
    family = build_family(alignment)
    if weights is not None and family.n_contrasts:
        band = simultaneous_band(family.d, weights, se_method=se_method, max_bytes=max_bytes)
        reversals = search_reversals(alignment, weights, family, band)
        q = band.q
    else:
        q = float("nan")
        reversals = _descriptive_only([v for v in per_eval.values() if not v.prompt_free])
    slot_avg = average_slot_effects(
        [v.slot_effects for v in per_eval.values() if v.slot_effects and not v.prompt_free]
    )
    return AuditResult(
        evaluators=per_eval,
        band=Band(finite_or_none(q), family.n_contrasts, bootstrap, seed),
        reversals=reversals,
        slot_effects=slot_avg,
        lighting=_lighting(list(tables.values()), lighting_scalars),
        bootstrap=bootstrap,
        seed=seed,
        n_records=sum(t.n_records for t in tables.values()),
        n_failed=sum(t.n_failed for t in tables.values()),
    )


def _descriptive_only(alignment: list[EvaluatorAudit]) -> ReversalSearch:
    desc = {ev.evaluator: any(r.top1_count >= 2 for r in ev.rank.values()) for ev in alignment}
    off = dict.fromkeys(desc, False)
    return ReversalSearch(desc, off, dict(off), ())


def _ci(draws: np.ndarray | None, n_blocks: int) -> CI:
    """The policy's interval of ``draws`` over ``n_blocks`` resampled prompts."""
    return interval(draws, n_blocks=n_blocks).as_tuple() if draws is not None else NAN_CI


def _evaluator_audit(
    t: EvaluatorScores,
    weights: np.ndarray | None,
    template_slots: Mapping[str, Mapping[str, str | None]] | None,
    default_template: str | None,
) -> EvaluatorAudit:
    sample = engine.Sample(t, weights) if weights is not None else engine.Sample.points_only(t)
    discrimination = {e.subject: e for e in m.metric(m.DISCRIMINATION).estimate(sample)}
    # the audit shows no interval of best-view inflation: its point alone, without draws
    views = m.metric(m.BEST_VIEW_INFLATION).estimate(engine.Sample.points_only(t))

    n_blocks = len(t.prompts)

    def ci(draws: np.ndarray) -> CI:
        return _ci(draws, n_blocks) if weights is not None else NAN_CI

    factor_names = list(t.factors)
    blocks = {f: t.factors[f].scores for f in factor_names}
    # ρ and dispersion (and below the ranks, probe outcomes and envelopes): the engine's values
    # per sample that its estimates are built from, read without running the factor group,
    # whose W and winner draws the audit shows no interval of
    spread = estimators.factor_spread(sample)
    disp = dict(spread.dispersion)
    rhos = dict(spread.rho)
    rhos_sample = {f: rho(s, t.baseline, ddof=1) for f, s in blocks.items()}
    peak_factor, peak_rho = spread.peak
    disp_ci = {f: ci(spread.dispersion_draws[:, i]) for i, f in enumerate(factor_names)}
    rho_ci = {f: withheld_ends(ci(spread.rho_draws[:, i]), m.RHO, n_blocks) for i, f in enumerate(factor_names)}
    peak_ci = withheld_ends(ci(spread.peak_draws), m.PEAK_RHO, n_blocks) if factor_names else NAN_CI
    rank = estimators.factor_ranks(sample)
    inflation = views[0].point if views else float("nan")

    probes: dict[str, ProbeStats] = {}
    outcomes, credits = estimators.probe_outcomes(sample), estimators.probe_credits(sample)
    for name in t.probes:
        cis: dict[str, CI] = dict.fromkeys(("strict_drop", "tie", "rise"), NAN_CI)
        if weights is not None:
            credit = credits[name]
            ok = np.isfinite(credit)
            parts = np.stack([np.where(ok, credit == c, np.nan) for c in (1.0, 0.5, 0.0)])
            draws = bs.scene_mean_draws(parts, weights)
            cis = {k: _ci(draws[:, i], n_blocks) for i, k in enumerate(("strict_drop", "tie", "rise"))}
        probes[name] = ProbeStats(outcomes[name], {**cis, m.DISCRIMINATION: ci(discrimination[name].draws)})

    env = estimators.shared_envelopes(sample)
    block_results = {b: _block(t, bs_, weights, env) for b, bs_ in t.blocks.items()}
    base_means = generator_means(t.baseline)
    top_gap, separable = _baseline_gap(t, base_means, weights)

    bw = {}
    for f in rendered_factor_names():
        if f in t.factors:
            r = best_worst(t.factors[f].scores, t.factors[f].levels)
            if r is not None:
                bw[f] = r
    gain = None
    effects: dict[str, SlotEffect] = {}
    if "template" in t.factors and not t.prompt_free:
        fs = t.factors["template"]
        if default_template is not None:
            gain = template_gain(fs.scores, fs.levels, default_template)
        if template_slots is not None:
            from harness.stats.levels import level_means

            means = dict(zip(fs.levels, level_means(fs.scores).tolist(), strict=True))
            effects = slot_effects(means, template_slots)

    registered, registered_ci = _computed_statistics(t, weights)
    confirmation = None
    if weights is not None:  # the gated interval estimates, read at the family-wise level
        members = [(m.RHO, f, spread.rho_draws[:, i]) for i, f in enumerate(factor_names)]
        members += [(m.PEAK_RHO, None, spread.peak_draws)] if factor_names else []
        members += [(m.DISCRIMINATION, name, discrimination[name].draws) for name in t.probes]
        confirmation = family_confirmation(members, len(t.prompts))
    return EvaluatorAudit(
        evaluator=t.evaluator,
        prompt_free=t.prompt_free,
        generators=t.generators,
        n_prompts=len(t.prompts),
        n_records=t.n_records,
        failed=t.n_failed,
        failed_by_factor=dict(t.failed_by_factor),
        dispersion=disp,
        dispersion_ci=disp_ci,
        rho=rhos,
        rho_sample=rhos_sample,
        rho_ci=rho_ci,
        peak_factor=peak_factor,
        peak_rho=peak_rho,
        peak_rho_ci=peak_ci,
        logo_peak_rho_range=logo_peak_rho(blocks, t.baseline),
        rank=rank,
        best_view_inflation=inflation,
        probes=probes,
        envelopes=env,
        baseline_means=tuple(float(x) for x in base_means),
        top_gap=top_gap,
        separable_pairs=separable,
        best_worst=bw,
        template_gain=gain,
        slot_effects=effects,
        blocks=block_results,
        registered=registered,
        registered_ci=registered_ci,
        confirmation=confirmation,
    )


def _statistic_failed(spec: MetricSpec, t: EvaluatorScores, exc: Exception) -> AuditError:
    """The error of a statistic's ``compute`` (or ``draws``) that raised: a broken statistic
    must stop the audit rather than pass as an undefined value."""
    return AuditError(
        f"registered statistic {spec.name!r} failed on evaluator {t.evaluator!r}: "
        f"{type(exc).__name__}: {exc}",
        where=getattr(spec.compute, "__qualname__", spec.name),
        hint="fix the statistic's compute function; it receives an EvaluatorScores",
    )


def _computed_statistics(
    t: EvaluatorScores, weights: np.ndarray | None
) -> tuple[dict[str, float | Mapping[str, float]], dict[str, CI | Mapping[str, CI]]]:
    """Every metric row with a ``compute`` (harness.vocab.metrics) on ``t``, and its pointwise
    95 % prompt-bootstrap interval from the metric engine's draws (none when the bootstrap
    is off): ``(name → value or key → value, name → CI or key → CI)``."""
    specs = computed_metrics()
    out: dict[str, float | Mapping[str, float]] = {}
    for spec in specs:
        assert spec.compute is not None
        try:
            value = spec.compute(t)
            if isinstance(value, Mapping):
                out[spec.name] = {str(k): float(v) for k, v in value.items()}
            else:
                out[spec.name] = float(value)
        except AuditError:
            raise
        except Exception as exc:  # user code: any failure, reported with its metric
            raise _statistic_failed(spec, t, exc) from exc
    cis: dict[str, CI | Mapping[str, CI]] = {}
    if weights is None or not specs:
        return out, cis
    estimates = engine.computed_estimates(t, weights, specs, points=out,
                                          guard=lambda spec, exc: _statistic_failed(spec, t, exc))
    for spec in specs:
        mine = [e for e in estimates if e.kind == spec.name]
        if spec.key is None:
            cis[spec.name] = withheld_ends(_ci(mine[0].draws, len(t.prompts)), spec.name, len(t.prompts)) if mine else NAN_CI
        else:
            cis[spec.name] = {str(e.subject): withheld_ends(_ci(e.draws, len(t.prompts)), spec.name, len(t.prompts))
                              for e in mine}
    return out, cis


def _block(t: EvaluatorScores, block: object, weights: np.ndarray | None, ofat_env: Envelopes) -> BlockStats:
    """:func:`block_stats` of one block, its OFAT rows picked from ``t`` (NaN where absent)."""
    ofat: list[np.ndarray | None] = []
    G, P = t.baseline.shape
    for factor, levels in zip(block.factors, block.levels, strict=True):
        fs = t.factors.get(factor)
        cols = np.full((G, P, len(levels)), np.nan)
        if fs is not None:
            for j, level in enumerate(levels):
                if level in fs.levels:
                    cols[:, :, j] = fs.scores[:, :, fs.levels.index(level)]
        ofat.append(cols)
    return block_stats(
        block.id, block.factors, block.levels, block.scores, t.baseline, ofat, weights, ofat_env
    )


def _baseline_gap(
    t: EvaluatorScores, means: np.ndarray, weights: np.ndarray | None
) -> tuple[TopGap | None, int | None]:
    finite = np.flatnonzero(np.isfinite(means))
    if finite.size < 2:
        return None, None
    order = finite[np.argsort(-means[finite], kind="stable")]
    a, b = int(order[0]), int(order[1])
    gap = float(means[a] - means[b])
    if weights is None:
        return TopGap(t.generators[a], t.generators[b], gap, NAN_CI), None
    n_blocks = len(t.prompts)
    top = TopGap(t.generators[a], t.generators[b], gap, _ci(bs.paired_gap(t.baseline, a, b, weights), n_blocks))
    pairs = generator_pairs(len(t.generators))
    d = np.stack([t.baseline[m] - t.baseline[n] for m, n in pairs], axis=1)  # (P, pairs)
    lo, hi = block_bounds(bs.prompt_mean_draws(d, weights), n_blocks)
    return top, int(((lo > 0) | (hi < 0)).sum())


def _lighting(
    tables: list[EvaluatorScores], scalars: Mapping[str, tuple[float, float]] | None
) -> LightingSummary | None:
    blocks = [t.factors["lighting"] for t in tables if "lighting" in t.factors]
    if not blocks:
        return None
    levels = blocks[0].levels
    same = [b.scores for b in blocks if b.levels == levels]
    z = mean_standardised_shift(same)
    corr = lighting_correlation(levels, z, scalars) if scalars else {}
    return LightingSummary(levels, tuple(float(x) for x in z), dict(scalars or {}), corr)
