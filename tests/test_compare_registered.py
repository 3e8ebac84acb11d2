"""Release compare gates every statistic registered with a ``compute`` (and "compare" in its
places, and a margin): point on the jointly masked scores, replicates on prompt resamples,
one comparison per key of a keyed statistic, verdicts from the spec's direction."""

from __future__ import annotations

import numpy as np
import pytest

from harness.release import comparison as cmp
from harness.release.margins import parse_margin_args
from harness.stats import replicates
from harness.stats._nan import nanmean
from harness.stats.synthetic import SyntheticSpec, synthetic_records
from harness.stats.table import pivot_records
from harness.vocab.metrics import METRICS, MetricSpec, register_metric
from tests._compare_tables import BASE_PITCH, tiny_release

C0_MEAN = "test_c0_mean"
FACTOR_MEAN = "test_factor_mean"
HIDDEN = "test_not_compared"


def c0_mean(t) -> float:
    return float(nanmean(t.baseline))


def factor_mean(t) -> dict[str, float]:
    return {f: float(nanmean(fs.scores)) for f, fs in t.factors.items()}


@pytest.fixture
def registered():
    """Three computed metrics: mean c0 score (a drop is harmful), mean score per factor (a
    rise is harmful, keyed by factor), and one without a margin (never compared)."""
    names = (C0_MEAN, FACTOR_MEAN, HIDDEN)
    try:
        register_metric(MetricSpec(C0_MEAN, "mean c0", unit="score", harmful=-1, margin=0.1, compute=c0_mean))
        register_metric(MetricSpec(FACTOR_MEAN, "mean per factor", unit="score", harmful=+1, key="factor",
                                   margin=0.1, compute=factor_mean))
        register_metric(MetricSpec(HIDDEN, "no margin", unit="score", compute=c0_mean))
        yield names
    finally:
        for name in names:
            METRICS.unregister(name)


def test_resample_prompts_repeats_prompt_columns():
    t = pivot_records(tiny_release(BASE_PITCH))["ev"]
    r = replicates.resample_prompts(t, np.array([0, 2]))
    assert r.prompts == ("p1", "p1")
    np.testing.assert_array_equal(r.baseline, t.baseline[:, [1, 1]])
    np.testing.assert_array_equal(r.factors["pitch"].scores, t.factors["pitch"].scores[:, [1, 1], :])
    assert r.factors["pitch"].levels == t.factors["pitch"].levels
    r = replicates.resample_prompts(t, np.array([1, 1]))
    np.testing.assert_array_equal(r.baseline, t.baseline)


def test_registered_metrics_are_kinds_while_registered(registered):
    assert {C0_MEAN, FACTOR_MEAN} <= set(cmp.KINDS) and HIDDEN not in cmp.KINDS
    assert cmp.KINDS[C0_MEAN] == cmp.MetricKind(C0_MEAN, -1, 0.1, "score", "evaluator", "")
    assert cmp.KINDS[FACTOR_MEAN].scope == "factor"
    assert cmp.DEFAULT_MARGINS[FACTOR_MEAN] == 0.1
    assert parse_margin_args([f"{C0_MEAN}=0.3", f"{FACTOR_MEAN}.pitch=0.2"]) == {
        C0_MEAN: 0.3, f"{FACTOR_MEAN}.pitch": 0.2}


def test_unregistered_metrics_leave_the_kinds(registered):
    METRICS.unregister(C0_MEAN)
    assert C0_MEAN not in cmp.KINDS and C0_MEAN not in cmp.DEFAULT_MARGINS


def test_planned_metrics_list_the_registered_ones_in_side_metrics_order(registered):
    t = pivot_records(tiny_release(BASE_PITCH))["ev"]
    planned = cmp.planned_metrics(t)
    assert planned[-2:] == [(C0_MEAN, None), (FACTOR_MEAN, "pitch")]
    metrics = cmp.side_metrics(t, np.zeros(2), np.full(2, 6.0), np.ones((1, 2), dtype=np.int64))
    assert [(m.kind, m.subject) for m in metrics] == planned
    by = {(m.kind, m.subject): m for m in metrics}
    # c0: g0 (4, 2), g1 (1, 1) → 2; pitch: (4, 6, 2, 2, 1, 1, 0, 2) → 18/8
    assert by[(C0_MEAN, None)].point == 2.0 and by[(C0_MEAN, None)].draws[0] == 2.0
    assert by[(FACTOR_MEAN, "pitch")].point == pytest.approx(18 / 8)


SPEC = SyntheticSpec(evaluators=1, prompt_free=0, generators=4, prompts=20, templates=4, paraphrases=2,
                     render_levels=3, seed=4)


def test_a_candidate_that_shifts_scores_regresses_on_the_registered_metrics(registered):
    base = synthetic_records(SPEC)
    cand = base.copy()
    cand.loc[cand["factor"] == "baseline", "score"] -= 1.0  # c0 mean drops: harmful for C0_MEAN
    cand.loc[cand["factor"] == "pitch", "score"] += 1.0  # pitch mean rises: harmful for FACTOR_MEAN
    out = cmp.compare_records(base, cand, bootstrap=200, seed=3)
    by = {m.metric: m for m in out.metrics}
    c0 = by[C0_MEAN]
    assert (c0.kind, c0.subject, c0.harmful) == (C0_MEAN, None, -1)
    t = pivot_records(base)["eval0"]
    assert c0.baseline == pytest.approx(c0_mean(t)) and c0.difference == pytest.approx(-1.0)
    assert c0.verdict == cmp.REGRESSION
    assert by[f"{FACTOR_MEAN}-pitch"].verdict == cmp.REGRESSION
    assert by[f"{FACTOR_MEAN}-pitch"].difference == pytest.approx(1.0)
    for f in ("yaw", "lighting", "resolution"):
        assert by[f"{FACTOR_MEAN}-{f}"].verdict == cmp.NO_CHANGE
        assert by[f"{FACTOR_MEAN}-{f}"].difference == 0.0
    assert HIDDEN not in {m.kind for m in out.metrics}
    assert out.margins[C0_MEAN] == 0.1 and out.margins[FACTOR_MEAN] == 0.1
    # a margin wider than the drop tolerates it
    wide = cmp.compare_records(base, cand, bootstrap=200, seed=3, margins={C0_MEAN: 2.0})
    assert {m.metric: m for m in wide.metrics}[C0_MEAN].verdict == cmp.NO_CHANGE
    # and an improvement the other way round
    back = cmp.compare_records(cand, base, bootstrap=200, seed=3)
    assert {m.metric: m for m in back.metrics}[C0_MEAN].verdict == cmp.IMPROVEMENT


def test_registered_draws_are_the_statistic_on_each_resample(registered):
    base = tiny_release(BASE_PITCH)
    t = pivot_records(base)["ev"]
    weights = np.array([[2, 0], [0, 2], [1, 1]])
    metrics = cmp.side_metrics(t, np.zeros(2), np.full(2, 6.0), weights)
    c0 = next(m for m in metrics if m.kind == C0_MEAN)
    # c0 g0 (4, 2), g1 (1, 1): p0 twice → (4 + 1) / 2; p1 twice → (2 + 1) / 2
    np.testing.assert_allclose(c0.draws, [2.5, 1.5, 2.0])


def test_a_key_only_one_release_has_is_compared_as_undefined_on_the_other(registered):
    def odd(t):
        return {"both": 1.0, **({"only_cand": 2.0} if nanmean(t.baseline) < 1.9 else {})}

    register_metric(MetricSpec("test_odd", "odd keys", unit="score", key="factor", margin=0.1, compute=odd))
    try:
        cand = tiny_release(BASE_PITCH)
        cand.loc[cand["factor"] == "baseline", "score"] -= 0.5
        out = cmp.compare_records(tiny_release(BASE_PITCH), cand, bootstrap=20)
        by = {m.metric: m for m in out.metrics}
        assert by["test_odd-both"].verdict == cmp.NO_CHANGE
        assert np.isnan(by["test_odd-only_cand"].baseline) and by["test_odd-only_cand"].candidate == 2.0
        assert by["test_odd-only_cand"].verdict == cmp.INCONCLUSIVE
        assert [m.metric for m in out.metrics][-2:] == ["test_odd-both", "test_odd-only_cand"]
    finally:
        METRICS.unregister("test_odd")
