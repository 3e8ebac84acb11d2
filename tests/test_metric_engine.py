"""The metric engine (harness/stats/engine.py): one computation per metric row, for the audit,
its intervals and the release comparison.

A built-in statistic is added the documented way (docs/vocabulary.md, "Adding a statistic"):
its function in a stats module and one ``MetricSpec`` row naming it as ``"module:function"``,
with the threshold that gates it. Here the row goes into the product's registry for one test
only (:func:`temporary_metric`: removed afterwards, so nothing leaks into other tests), and
the statistic then reaches everything a study metric reaches: the summary, an audit check,
the card, the report's tables, ``compare`` (paired, with its margin) and a bootstrap interval.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pandas as pd
import pytest

from harness.stats import bootstrap as bs
from harness.stats import engine
from harness.stats.intervals import interval
from harness.stats.replicates import factor_draws
from harness.stats.table import EvaluatorScores, pivot_records
from harness.vocab import metrics as m
from harness.vocab.metrics import METRICS, THRESHOLDS, MetricSpec, ThresholdSpec, register_metric

NAME = "test_c0_spread"
THRESHOLD = "max_test_c0_spread"


def c0_spread(scores: EvaluatorScores) -> float:
    """The statistic under test: SD of the c0 scores over every scene (score units)."""
    return float(np.nanstd(scores.baseline))


def c0_mean(scores: EvaluatorScores) -> float:
    return float(np.nanmean(scores.baseline))


def c0_mean_draws(scores: EvaluatorScores, weights: np.ndarray) -> np.ndarray:
    """:func:`c0_mean`'s prompt-bootstrap replicates, vectorised: (B,)."""
    return bs.scene_mean_draws(scores.baseline, weights)


#: The one row a built-in statistic adds (its function above is the other place).
ROW = MetricSpec(NAME, "c0 spread", unit="score", harmful=+1, threshold=THRESHOLD, margin=0.05,
                 compute=f"{__name__}:c0_spread", description="SD of the c0 scores")
GATE = ThresholdSpec(THRESHOLD, "max", 10.0, "SD of the c0 scores (test)")


@contextmanager
def temporary_metric(*rows: MetricSpec, threshold: ThresholdSpec | None = None) -> Iterator[None]:
    """``rows`` (and ``threshold``) registered for the ``with`` block only."""
    try:
        for i, row in enumerate(rows):
            register_metric(row, threshold=threshold if i == 0 else None)
        yield
    finally:
        for row in rows:
            METRICS.unregister(row.name)
        if threshold is not None:
            THRESHOLDS.unregister(threshold.name)


def _records(shift: float = 0.0, spread: float = 1.0) -> pd.DataFrame:
    from harness.stats.synthetic import SyntheticSpec, synthetic_records

    records = synthetic_records(SyntheticSpec(evaluators=1, prompt_free=0, generators=4, prompts=10,
                                              templates=3, paraphrases=2, seed=5))
    ok = records["status"] == "ok"
    mean = records.loc[ok, "score"].mean()
    records.loc[ok, "score"] = mean + (records.loc[ok, "score"] - mean) * spread + shift
    return records


@pytest.fixture
def built_in() -> Iterator[None]:
    with temporary_metric(ROW, threshold=GATE):
        yield


def test_the_row_is_estimated_by_the_engine_and_leaves_no_trace():
    with temporary_metric(ROW, threshold=GATE):
        assert METRICS.get(NAME).estimated
    assert NAME not in METRICS and THRESHOLD not in THRESHOLDS


def test_every_compared_row_is_estimated():
    """A compared row nobody computes would be silently missing from ``compare``."""
    compared = [s for s in METRICS if s.shown_in("compare") and s.margin is not None]
    assert compared and all(s.estimated for s in compared)


def test_the_built_in_statistic_is_in_the_summary_with_an_interval_and_checked(built_in):
    from harness.checks.assertions import AuditCheck
    from harness.stats.audit_stats import compute_audit, summary_with_intervals
    from harness.stats.summary import EvaluatorSummary, Status

    records = _records()
    summary = summary_with_intervals(compute_audit(records, bootstrap=200, seed=1))
    ev_id, entry = next(iter(summary["evaluators"].items()))
    value = entry["registered"][NAME]
    c0 = records[(records["factor"] == "baseline") & (records["status"] == "ok")]["score"]
    assert value == pytest.approx(float(np.std(c0)))
    lo, hi = entry["intervals"][NAME]  # beside rho's and dispersion's
    assert lo < value < hi

    typed = EvaluatorSummary.from_entry(ev_id, entry)
    assert typed.to_entry() == entry
    metric = typed.metric(NAME)
    assert metric.status is Status.MEASURED and metric.threshold == THRESHOLD
    assert metric.interval == (lo, hi)

    outcomes: list[dict] = []
    AuditCheck(evaluator=ev_id, thresholds={THRESHOLD: 10.0}, record=outcomes.append).metric(typed, NAME)
    assert outcomes[-1]["passed"] is True and outcomes[-1]["interval"] == [lo, hi]
    with pytest.raises(AssertionError, match=rf"c0 spread|{NAME}"):
        AuditCheck(evaluator=ev_id, thresholds={THRESHOLD: value / 2}).metric(typed, NAME)
    # like rho's, its interval can be the thing checked: the lower bound against the limit
    AuditCheck(evaluator=ev_id, thresholds={THRESHOLD: (lo + value) / 2}).metric(typed, NAME, bound="lower")
    with pytest.raises(AssertionError):
        AuditCheck(evaluator=ev_id, thresholds={THRESHOLD: (lo + value) / 2}).metric(typed, NAME, bound="upper")


def test_the_built_in_statistic_is_on_the_card_and_in_the_tables(built_in, tmp_path):
    from harness.report.writer import write_derived
    from harness.stats.audit_stats import compute_audit, summary_with_intervals
    from tests._card_inputs import card_of_stats

    result = compute_audit(_records(), bootstrap=50, seed=1)
    stats = next(iter(summary_with_intervals(result)["evaluators"].values()))
    card = card_of_stats(stats, {THRESHOLD: 10.0})
    shown = card["registered_metrics"][NAME]
    assert shown["value"] == pytest.approx(stats["registered"][NAME]) and shown["passed"] is True

    summary, _notes = write_derived(result, tmp_path, figures=False)
    value = next(iter(summary["evaluators"].values()))["registered"][NAME]
    table = (tmp_path / "tables" / "table_registered.csv").read_text(encoding="utf-8")
    assert NAME in table and f"{value:.4g}" in table


def test_compare_pairs_the_built_in_statistic_with_its_margin(built_in):
    from harness.release.comparison import KINDS, REGRESSION, compare_records, planned_metrics

    assert KINDS[NAME].margin == 0.05 and KINDS[NAME].harmful == +1
    baseline, candidate = _records(), _records(spread=1.5)
    t = pivot_records(baseline)["eval0"]
    assert (NAME, None) in planned_metrics(t)
    result = compare_records(baseline, candidate, baseline_evaluator="eval0", candidate_evaluator="eval0",
                             bootstrap=200, seed=3)
    found = {c.metric: c for c in result.metrics}[NAME]
    assert found.difference == pytest.approx(found.candidate - found.baseline)
    assert found.difference > 0 and found.ci[0] > 0.05 and found.verdict == REGRESSION
    assert result.margins[NAME] == 0.05
    same = compare_records(baseline, baseline, baseline_evaluator="eval0", candidate_evaluator="eval0",
                           bootstrap=200, seed=3)
    assert {c.metric: c for c in same.metrics}[NAME].difference == 0.0


def test_a_row_with_vectorised_draws_matches_the_resampled_ones():
    """``draws`` (a row's own replicates) and the per-draw resample give one statistic."""
    t = pivot_records(_records())["eval0"]
    weights = bs.prompt_weights(len(t.prompts), 64, 7)
    plain = MetricSpec("test_c0_mean", "c0 mean", compute=c0_mean)
    fast = MetricSpec("test_c0_mean", "c0 mean", compute=c0_mean, draws=f"{__name__}:c0_mean_draws")
    (a,), (b,) = (engine.computed_estimates(t, weights, [spec]) for spec in (plain, fast))
    assert a.point == b.point == pytest.approx(c0_mean(t))
    np.testing.assert_allclose(a.draws, b.draws, rtol=1e-12)


def test_the_engine_plan_lists_what_it_estimates():
    t = pivot_records(_records())["eval0"]
    weights = bs.prompt_weights(len(t.prompts), 8, 1)
    sample = engine.Sample(t, weights, np.zeros(len(t.prompts)), np.full(len(t.prompts), 10.0))
    got = [(e.kind, e.subject) for e in engine.estimate(sample)]
    assert got == engine.plan(t)
    assert all(e.draws.shape == (8,) for e in engine.estimate(sample))
    only_rho = engine.estimate(sample, lambda s: s.name == m.RHO)
    assert {e.kind for e in only_rho} == {m.RHO} and len(only_rho) == len(t.factors)


def test_the_audit_and_the_comparison_share_the_factor_draws():
    """ρ's interval in the audit is the policy's interval (over the run's prompts) of the draws ``compare`` pairs,
    its upper end withheld below ρ's minimum prompt blocks."""
    from harness.stats.audit_stats import compute_audit
    from harness.stats.intervals import withheld_ends

    records = _records()
    t = pivot_records(records)["eval0"]
    weights = bs.prompt_weights(len(t.prompts), 100, 4)
    rho_d, _disp_d = factor_draws(t, weights)
    audit = compute_audit(records, bootstrap=100, seed=4).evaluators["eval0"]
    for i, f in enumerate(t.factors):
        lo, hi = withheld_ends(interval(rho_d[:, i], n_blocks=len(t.prompts)).as_tuple(), "rho", len(t.prompts))
        got = audit.rho_ci[f]
        assert (math.isnan(lo) and math.isnan(got[0])) or got[0] == lo
        assert math.isnan(hi) and math.isnan(got[1])  # fewer than 20 prompts


def test_a_statistic_that_fails_on_a_resample_stops_the_audit_naming_it():
    """Its interval's draws run its code again: a failure there is no missing interval."""
    from harness.core.errors import AuditError
    from harness.stats.audit_stats import compute_audit

    def fragile(scores: EvaluatorScores) -> float:
        if len(set(scores.prompts)) < len(scores.prompts):
            raise ValueError("repeated prompt")
        return 0.0

    with temporary_metric(MetricSpec("test_fragile", "fragile", compute=fragile)):
        compute_audit(_records(), bootstrap=0)  # no draws: no failure
        with pytest.raises(AuditError, match=r"test_fragile.*repeated prompt"):
            compute_audit(_records(), bootstrap=20, seed=1)
