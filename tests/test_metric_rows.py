"""The registry row is the metric: every built-in row names how it is estimated, the metric
engine (harness/stats/engine.py) estimates each metric through its row
(``MetricSpec.estimate``), an estimator group runs once per sample however many of its rows
are asked for, and a row registered with an estimator of its own is estimated, planned and
compared like the study's."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from harness.stats import bootstrap as bs
from harness.stats import engine, estimators
from harness.stats.engine import Estimate, EstimatorGroup, Planned, Sample, estimator_group
from harness.stats.table import BlockScores, EvaluatorScores, pivot_records
from harness.vocab import metrics as m
from harness.vocab.metrics import METRICS, MetricSpec, ThresholdSpec, register_metric
from tests._metric_registry import scoped_metrics

BLOCK = "lighting:pitch"


def _scores() -> EvaluatorScores:
    """One evaluator with every kind of subject: factors (pitch and yaw among them), probes
    and a factorial block."""
    from harness.stats.synthetic import SyntheticSpec, synthetic_records

    records = synthetic_records(SyntheticSpec(evaluators=1, prompt_free=0, generators=4, prompts=8,
                                              templates=3, paraphrases=2, render_levels=3, seed=2))
    t = pivot_records(records)["eval0"]
    rng = np.random.default_rng(0)
    cells = rng.normal(size=(*t.baseline.shape, 2, 2)) + t.baseline[:, :, None, None]
    block = BlockScores(BLOCK, ("lighting", "pitch"), (("city", "night"), ("0", "90")), cells)
    return replace(t, blocks={BLOCK: block})


def _sample(t: EvaluatorScores, draws: int = 16) -> Sample:
    """Every input the engine reads: draws, per-prompt failed counts and human ratings."""
    p = len(t.prompts)
    human = np.random.default_rng(1).normal(size=t.baseline.shape)
    return Sample(t, bs.prompt_weights(p, draws, 3), np.ones(p), np.full(p, 40.0), human)


# ------------------------------------------------------------------------------ every row


def test_every_built_in_metric_row_has_an_estimator_or_a_compute():
    assert len(METRICS) and all(spec.estimated for spec in METRICS)


def test_every_built_in_estimator_is_a_group_that_gives_its_rows():
    """A row naming a group that never gives it would be silently missing everywhere."""
    t = _scores()
    for spec in METRICS.where(lambda s: s.estimator is not None):
        group = spec.resolved_estimator()
        assert isinstance(group, EstimatorGroup), spec.name
        assert spec.name in {kind for kind, _ in group.plan(t, True)}, spec.name


def test_each_metric_is_estimated_exactly_through_its_row():
    t = _scores()
    sample = _sample(t)
    everything = engine.estimate(sample)
    assert [(e.kind, e.subject) for e in everything] == engine.plan(t, human=True)
    for spec in METRICS:
        own = spec.estimate(sample)
        assert own, spec.name  # the table has every subject: each row gives a value
        assert all(e.kind == spec.name and e.draws.shape == (16,) for e in own)
        alone = engine.estimate(sample, lambda s, name=spec.name: s.name == name)
        assert len(alone) == len(own) and all(a is b for a, b in zip(alone, own, strict=True))
        assert [e for e in everything if e.kind == spec.name] == own


def test_the_engine_asks_the_row_so_a_replaced_estimator_is_what_it_gives():
    t = _scores()
    fixed = Estimate(m.BEST_VIEW_INFLATION, None, 7.0, np.full(16, 7.0))

    @estimator_group(lambda t, human: [(m.BEST_VIEW_INFLATION, None)])
    def always_seven(s: Sample) -> list[Estimate]:
        return [fixed]

    with scoped_metrics():
        row = METRICS.get(m.BEST_VIEW_INFLATION)
        register_metric(replace(row, estimator=always_seven), replace=True)
        got = engine.estimate(_sample(t), lambda s: s.name == m.BEST_VIEW_INFLATION)
    assert got == [fixed]
    assert engine.estimate(_sample(t), lambda s: s.name == m.BEST_VIEW_INFLATION)[0].point != 7.0


def test_the_audit_reads_the_engines_values():
    """Discrimination, best-view inflation, ρ and peak ρ in the audit are the rows' estimates
    (on the audit's own draws)."""
    from harness.stats.audit_stats import compute_audit
    from harness.stats.intervals import interval
    from harness.stats.synthetic import SyntheticSpec, synthetic_records

    records = synthetic_records(SyntheticSpec(evaluators=1, prompt_free=0, generators=4, prompts=8,
                                              templates=3, paraphrases=2, render_levels=3, seed=2))
    audit = compute_audit(records, bootstrap=40, seed=5).evaluators["eval0"]
    t = pivot_records(records)["eval0"]
    sample = Sample(t, bs.prompt_weights(len(t.prompts), 40, 5))
    for e in m.metric(m.DISCRIMINATION).estimate(sample):
        assert audit.discrimination[e.subject] == e.point
        assert audit.probes[e.subject].ci[m.DISCRIMINATION] == interval(e.draws, n_blocks=len(t.prompts)).as_tuple()
    (views,) = m.metric(m.BEST_VIEW_INFLATION).estimate(sample)
    assert audit.best_view_inflation == views.point
    (peak,) = m.metric(m.PEAK_RHO).estimate(sample)
    low, high = audit.peak_rho_ci  # the upper end withheld below ρ's minimum prompt blocks
    assert audit.peak_rho == peak.point and low == interval(peak.draws, n_blocks=len(t.prompts)).low
    assert math.isnan(high) == (len(t.prompts) < m.metric(m.PEAK_RHO).upper_min_blocks)
    assert audit.rho == {e.subject: e.point for e in m.metric(m.RHO).estimate(sample)}


# ------------------------------------------------------------------------------ memoisation


def test_a_group_runs_once_per_sample(monkeypatch):
    calls: list[str] = []
    real_factor_draws, real_w_draws = estimators.factor_draws, estimators.kendall_w_draws

    def counted_factor_draws(*args: object) -> object:
        calls.append("factor_draws")
        return real_factor_draws(*args)

    def counted_w_draws(*args: object) -> object:
        calls.append("kendall_w_draws")
        return real_w_draws(*args)

    monkeypatch.setattr(estimators, "factor_draws", counted_factor_draws)
    monkeypatch.setattr(estimators, "kendall_w_draws", counted_w_draws)
    t = _scores()
    sample = _sample(t)
    engine.estimate(sample)
    first = list(calls)
    for spec in METRICS.where(lambda s: s.estimator == METRICS.get(m.RHO).estimator):
        spec.estimate(sample)
    engine.estimate(sample, lambda s: s.name in (m.RHO, m.KENDALL_W))
    shared = [f for f in t.factors if f in estimators.factor_ranks(sample)]
    assert calls == first == ["factor_draws"] + ["kendall_w_draws"] * len(shared)
    engine.estimate(_sample(t))  # a new sample computes again
    assert calls.count("factor_draws") == 2


def test_rows_sharing_a_group_share_one_run_and_its_values():
    runs: list[int] = []

    def plan(t: EvaluatorScores, human: bool) -> list[Planned]:
        return [("test_c0_low", None), ("test_c0_high", None)]

    @estimator_group(plan)
    def c0_extremes(s: Sample) -> list[Estimate]:
        runs.append(1)
        base = s.scores.baseline
        return [Estimate("test_c0_low", None, float(np.nanmin(base)), np.zeros(s.weights.shape[0])),
                Estimate("test_c0_high", None, float(np.nanmax(base)), np.ones(s.weights.shape[0]))]

    with scoped_metrics():
        low = register_metric(MetricSpec("test_c0_low", "c0 low", unit="score", estimator=c0_extremes))
        high = register_metric(MetricSpec("test_c0_high", "c0 high", unit="score", estimator=c0_extremes))
        sample = _sample(_scores())
        (lo,) = low.estimate(sample)
        (hi,) = high.estimate(sample)
        both = engine.estimate(sample, lambda s: s.name.startswith("test_c0_"))
    assert runs == [1]
    assert both == [lo, hi] and lo.point < hi.point


# ------------------------------------------------------------------------------ a registered estimator


def c0_range(s: Sample) -> list[Estimate]:
    """Range of the generator means at c0 (score units) and its prompt-bootstrap draws."""
    base = s.scores.baseline
    means = np.nanmean(base, axis=1)
    draws = bs.generator_mean_draws(base, s.weights)  # (B, G)
    return [Estimate("test_c0_range", None, float(np.ptp(means)), np.ptp(draws, axis=1))]


c0_range_group = estimator_group(lambda t, human: [("test_c0_range", None)])(c0_range)


@pytest.fixture
def range_row():
    with scoped_metrics():
        yield register_metric(
            MetricSpec("test_c0_range", "c0 range", unit="score", harmful=+1, margin=0.05,
                       threshold="max_test_c0_range", estimator=f"{__name__}:c0_range_group"),
            threshold=ThresholdSpec("max_test_c0_range", "max", 100.0, "range of the c0 generator means"),
        )
    assert "test_c0_range" not in METRICS


def test_a_registered_estimator_is_estimated_planned_and_compared(range_row):
    from harness.release.comparison import REGRESSION, compare_records, planned_metrics
    from harness.stats.synthetic import SyntheticSpec, synthetic_records

    assert range_row.estimated and range_row.resolved_estimator() is c0_range_group
    t = _scores()
    sample = _sample(t)
    (got,) = range_row.estimate(sample)
    means = np.nanmean(t.baseline, axis=1)
    assert got.point == pytest.approx(means.max() - means.min()) and got.draws.shape == (16,)
    assert ("test_c0_range", None) in engine.plan(t) and got in engine.estimate(sample)
    assert ("test_c0_range", None) in planned_metrics(t)

    records = synthetic_records(SyntheticSpec(evaluators=1, prompt_free=0, generators=4, prompts=10,
                                              templates=3, paraphrases=2, seed=5))
    wider = records.copy()
    ok = (wider["status"] == "ok") & (wider["generator"] == "gen0")
    wider.loc[ok, "score"] += 5.0
    result = compare_records(records, wider, baseline_evaluator="eval0", candidate_evaluator="eval0",
                             bootstrap=100, seed=2)
    found = {c.metric: c for c in result.metrics}["test_c0_range"]
    assert found.difference == pytest.approx(found.candidate - found.baseline)
    assert found.margin == 0.05 and found.verdict == REGRESSION


def test_a_row_with_only_a_compute_is_estimated_as_before():
    """The documented extension path: ``compute`` alone, estimated by the engine's compute path."""
    t = _scores()
    spec = MetricSpec("test_c0_sd", "c0 sd", unit="score", compute=lambda s: float(np.nanstd(s.baseline)))
    with scoped_metrics():
        register_metric(spec)
        sample = _sample(t)
        (own,) = spec.estimate(sample)
        (batch,) = engine.computed_estimates(t, sample.weights, [spec])
        assert engine.estimate(sample)[-1] is own
    assert own.point == batch.point and np.array_equal(own.draws, batch.draws)
