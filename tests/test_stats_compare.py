"""Paired release comparison (harness.release.comparison): hand-computed bootstrap, vectorised
replicates against the scalar statistics, verdicts, and planted releases."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.release import comparison as cmp
from harness.stats import bootstrap as bs
from harness.stats import replicates
from harness.stats.envelopes import envelopes
from harness.stats.intervals import max_t_band
from harness.stats.rank import kendall_w, rank_stability
from harness.stats.synthetic import SyntheticSpec, synthetic_records
from harness.stats.table import pivot_records
from tests._compare_tables import BASE_PITCH, CAND_PITCH, tiny_release

# ------------------------------------------------------------------------------ hand-computed


def test_paired_bootstrap_by_hand():
    # rho = mean scene variance over levels / variance of the generator c0 means.
    # Baseline: scene variances (1, 0, 0, 1) → 0.5; generator means (3, 1) → var 1; rho 0.5.
    # Candidate: g0/p0 now (4, 8) → variance 4 → mean 1.25; rho 1.25. Difference 0.75.
    # With two prompts a paired draw holds prompt p0 k times and p1 2 − k times:
    #   k = 2: means (4, 1) var 2.25; numerators 0.5 / 2.0 → Δ* = (2 − 0.5) / 2.25 = 2/3
    #   k = 0: means (2, 1) var 0.25; numerators 0.5 / 0.5 → Δ* = 0
    #   k = 1: the original sample → Δ* = 0.75
    # (an unpaired bootstrap would also give e.g. 2.0 − 2/9 when the sides drew differently)
    b, c = tiny_release(BASE_PITCH), tiny_release(CAND_PITCH)
    out = cmp.compare_records(b, c, bootstrap=400, seed=7)
    m = {x.metric: x for x in out.metrics}["rho-pitch"]
    assert (m.baseline, m.candidate, m.difference) == pytest.approx((0.5, 1.25, 0.75))
    k = bs.prompt_weights(2, 400, 7)[:, 0]
    expected = np.select([k == 2, k == 0], [2 / 3, 0.0], 0.75)
    assert m.se == pytest.approx(np.std(expected, ddof=1))
    assert m.ci_pointwise == pytest.approx(tuple(np.quantile(expected, [0.025, 0.975])))
    # the family's q scales this metric's SE into its simultaneous interval
    assert m.ci == pytest.approx((0.75 - out.q * m.se, 0.75 + out.q * m.se))
    assert m.verdict == cmp.INCONCLUSIVE  # lower end 0.75 − q·SE < 0.10 < upper end


def test_max_t_band_by_hand():
    draws = np.array([[1.0, 0.0, 5.0], [2.0, 0.0, 5.0], [3.0, 2.0, 5.0]])  # (B=3, J=3)
    diff = np.array([2.0, 0.0, 5.0])
    band = max_t_band(diff, draws, level=0.5)
    (lo, hi), se, q = band.interval(), band.se, band.q
    # SE: 1, sqrt(4/3), 0 (third metric never varies: a point interval, not in the max)
    np.testing.assert_allclose(se, [1.0, math.sqrt(4 / 3), 0.0])
    t_max = [max(1 / 1, 0 / math.sqrt(4 / 3)), 0.0, max(1.0, 2 / math.sqrt(4 / 3))]  # per draw
    assert q == pytest.approx(np.quantile(t_max, 0.5))
    np.testing.assert_allclose(lo, [2 - q, -q * math.sqrt(4 / 3), 5.0])
    np.testing.assert_allclose(hi, [2 + q, q * math.sqrt(4 / 3), 5.0])


@pytest.mark.parametrize(
    "lo, hi, margin, harmful, expected",
    [
        (0.2, 0.5, 0.1, +1, cmp.REGRESSION),
        (0.05, 0.5, 0.1, +1, cmp.INCONCLUSIVE),
        (-0.05, 0.05, 0.1, +1, cmp.NO_CHANGE),
        (-0.5, -0.2, 0.1, +1, cmp.IMPROVEMENT),
        (-0.15, -0.05, 0.1, +1, cmp.NO_CHANGE),  # better, but not beyond the margin
        (-0.5, -0.2, 0.1, -1, cmp.REGRESSION),  # a drop where a drop is harmful
        (0.2, 0.5, 0.1, -1, cmp.IMPROVEMENT),
        (1.0, 1.0, 1.0, +1, cmp.NO_CHANGE),  # a count up by exactly its margin is tolerated
        (0.0, 0.0, 0.0, +1, cmp.NO_CHANGE),
        (float("nan"), 1.0, 0.1, +1, cmp.INCONCLUSIVE),
    ],
)
def test_verdicts(lo, hi, margin, harmful, expected):
    assert cmp.verdict(lo, hi, margin, harmful) == expected


# ------------------------------------------------------------------------------ replicates


@st.composite
def _means(draw):
    b, g, n_levels = draw(st.integers(1, 4)), draw(st.integers(1, 5)), draw(st.integers(1, 5))
    values = draw(
        st.lists(st.sampled_from([0.0, 1.0, 2.0, 2.5, -1.0, float("nan")]), min_size=b * g * n_levels,
                 max_size=b * g * n_levels)
    )
    return np.array(values).reshape(b, g, n_levels)


@settings(max_examples=150, deadline=None)
@given(_means())
def test_rank_and_envelope_replicates_match_the_scalar_statistics(means):
    w = replicates.kendall_w_draws(means)
    top1 = replicates.top1_count_draws(means)
    strict, cross = replicates.envelope_count_draws(means)
    for i, mu in enumerate(means):
        np.testing.assert_equal(w[i], kendall_w(mu.T))
        assert top1[i] == rank_stability(mu).top1_count
        counts = envelopes(mu).counts()
        assert (strict[i], cross[i]) == (counts["strict"], counts["sign_crossing"])


@settings(max_examples=150, deadline=None)
@given(
    st.integers(1, 4).flatmap(
        lambda p: st.tuples(
            st.lists(st.sampled_from([1.0, 1.5, 2.0, 3.0, float("nan")]), min_size=3 * p, max_size=3 * p),
            st.lists(st.lists(st.integers(0, 3), min_size=p, max_size=p), min_size=1, max_size=4),
        )
    )
)
def test_weighted_median_is_the_median_of_the_repeated_sample(data):
    flat, weights = data
    values = np.array(flat).reshape(3, -1)
    w = np.array(weights)
    got = replicates.weighted_median_draws(values, w)
    for b in range(w.shape[0]):
        sample = np.repeat(values, w[b], axis=1)
        finite = sample[np.isfinite(sample)]
        want = np.median(finite) if finite.size else np.nan
        np.testing.assert_equal(got[b], want)


def test_unit_weights_reproduce_every_point_estimate():
    records = synthetic_records(SyntheticSpec(evaluators=1, prompt_free=0, prompts=6, templates=5,
                                              paraphrases=3, failure_rate=0.02, seed=5))
    t = pivot_records(records)["eval0"]
    failed = records.groupby("prompt_id")["status"].apply(lambda s: (s == "failed").sum()).reindex(t.prompts)
    total = records.groupby("prompt_id").size().reindex(t.prompts)
    metrics = cmp.side_metrics(t, failed.to_numpy(float), total.to_numpy(float), np.ones((1, 6), dtype=np.int32))
    assert {m.kind for m in metrics} == set(cmp.KINDS) - set(cmp.human_kinds()) - set(cmp.block_kinds())
    for m in metrics:
        np.testing.assert_allclose(m.draws[0], m.point, rtol=1e-12, err_msg=cmp.metric_id(m.kind, m.subject))


# ------------------------------------------------------------------------------ planted releases

SPEC = SyntheticSpec(evaluators=1, prompt_free=1, prompts=20, templates=8, paraphrases=3, seed=11)


@pytest.fixture(scope="module")
def release() -> pd.DataFrame:
    return synthetic_records(SPEC)


def _verdicts(comparison: cmp.Comparison) -> dict[str, str]:
    return {m.metric: m.verdict for m in comparison.metrics}


def test_generator_dependent_pitch_effect_is_a_regression_naming_pitch(release):
    cand = release.copy()
    pitch = (cand["factor"] == "pitch") & (cand["evaluator"] == "eval0")
    gen = cand["generator"].str[3:].astype(int)
    sign = np.where(gen % 2 == 0, 1.0, -1.0)
    level = pd.to_numeric(cand["level"].where(pitch, "0"))
    base = release[(release["factor"] == "baseline") & (release["evaluator"] == "eval0")]
    spread = base.groupby("generator")["score"].mean().std()
    cand.loc[pitch, "score"] += (sign * 2.0 * spread * level / 90)[pitch]
    out = cmp.compare_records(release, cand, bootstrap=1000)
    v = _verdicts(out)
    assert (out.baseline_evaluator, out.candidate_evaluator) == ("eval0", "eval0")
    assert v["rho-pitch"] == cmp.REGRESSION
    regressed = [m.metric for m in out.regressions]
    assert "rho-pitch" in regressed and all("pitch" in r or r in ("peak_rho", "sign_crossings",
                                            "strict_pairs", "best_view_inflation") for r in regressed)
    for f in ("resolution", "lighting", "template", "yaw"):
        assert v[f"rho-{f}"] == cmp.NO_CHANGE


def test_identical_release_is_no_change_everywhere(release):
    shuffled = release.sample(frac=1.0, random_state=3).reset_index(drop=True)
    out = cmp.compare_records(release, shuffled, bootstrap=500)
    assert set(_verdicts(out).values()) == {cmp.NO_CHANGE}
    assert all(m.difference == 0 and m.ci == (0.0, 0.0) for m in out.metrics)


def test_half_the_protocol_variance_is_no_regression():
    # the same seed draws the same normal variates; only the level and interaction effects
    # are scaled, so their variance halves and everything else is identical
    half = SyntheticSpec(**{**SPEC.__dict__, "level_sd": SPEC.level_sd / math.sqrt(2),
                            "interaction_sd": SPEC.interaction_sd / math.sqrt(2)})
    out = cmp.compare_records(synthetic_records(SPEC), synthetic_records(half), bootstrap=1000)
    v = _verdicts(out)
    assert not out.regressions
    rho_factors = [m for m in out.metrics if m.kind == "rho" and m.subject != "paraphrase"]
    assert all(m.difference < 0 for m in rho_factors)
    assert any(m.verdict == cmp.IMPROVEMENT for m in rho_factors), v


def test_noise_floor_of_a_rerun_is_no_regression(release):
    """A re-run with another batch size or thread count changes scores in the last bits
    (float32 accumulation order): relative noise of 1e-6 and a different row order."""
    rng = np.random.default_rng(0)
    rerun = release.copy()
    rerun["score"] = rerun["score"] * (1 + 1e-6 * rng.standard_normal(len(rerun)))
    rerun["score"] = rerun["score"].astype(np.float32).astype(np.float64)
    rerun = rerun.iloc[::-1].reset_index(drop=True)
    out = cmp.compare_records(release, rerun, bootstrap=500)
    assert not out.regressions and not out.inconclusive
    assert max(abs(m.difference) for m in out.metrics if m.kind in ("rho", "dispersion")) < 1e-3


def test_failed_rows_are_reported_and_excluded_on_both_sides(release):
    cand = release.copy()
    hit = cand.index[(cand["evaluator"] == "eval0") & (cand["factor"] == "yaw")][:7]
    cand.loc[hit, ["score", "status", "error"]] = [np.nan, "failed", "timeout"]
    out = cmp.compare_records(release, cand, bootstrap=200)
    assert out.baseline_failures.failed == 0
    assert out.candidate_failures.failed == 7 and out.candidate_failures.by_factor == {"yaw": 7}
    assert out.excluded_rows == 7
    share = {m.metric: m for m in out.metrics}["failed_share"]
    assert share.candidate == pytest.approx(7 / out.candidate_failures.rows)
    # the baseline's yaw rho is computed on the same 7-cell-short sample as the candidate's
    assert {m.metric: m for m in out.metrics}["rho-yaw"].difference == 0.0


# ------------------------------------------------------------------------------ usage errors


def test_different_frozen_scenes_name_the_first_mismatch(release):
    cand = release.copy()
    rows = (cand["generator"] == "gen2") & (cand["prompt_id"] == "q004") & (cand["factor"] != "probe")
    cand.loc[rows, "scene_sha256"] = "f" * 64
    with pytest.raises(cmp.CompareError, match=r"frozen scenes differ: generator 'gen2', prompt 'q004'"):
        cmp.compare_records(release, cand, bootstrap=10)
    missing = release[release["generator"] != "gen5"]
    with pytest.raises(cmp.CompareError, match=r"generator 'gen5', prompt 'q000' is only in the baseline"):
        cmp.compare_records(release, missing, bootstrap=10)


def test_different_protocol_and_captions_are_usage_errors(release):
    fewer = release[~((release["factor"] == "pitch") & (release["level"] == "90"))]
    with pytest.raises(cmp.CompareError, match=r"protocols differ: pitch=90 is measured only in the baseline"):
        cmp.compare_records(release, fewer, bootstrap=10)
    reworded = release.copy()
    first = reworded.index[(reworded["evaluator"] == "eval0") & (reworded["factor"] == "baseline")][0]
    reworded.loc[first, "caption"] = "another wording"
    with pytest.raises(cmp.CompareError, match=r"rows differ: .*baseline=c0"):
        cmp.compare_records(release, reworded, bootstrap=10)


def test_pairing_rules(release):
    assert cmp.auto_pairs(release, release) == [("eval0", "eval0")]
    renamed = release.assign(evaluator=release["evaluator"].replace({"eval0": "eval0-v2"}))
    assert cmp.auto_pairs(release, renamed) == [("eval0", "eval0-v2")]
    two = pd.concat([release, renamed[renamed["evaluator"] == "eval0-v2"]], ignore_index=True)
    assert cmp.auto_pairs(two, two) == [("eval0", "eval0"), ("eval0-v2", "eval0-v2"), ("iqa1", "iqa1")]
    with pytest.raises(cmp.CompareError, match="3 evaluator pairs"):
        cmp.compare_records(two, two, bootstrap=10)
    with pytest.raises(cmp.CompareError, match="'nope' is not in the candidate"):
        cmp.compare_records(release, release, baseline_evaluator="eval0", candidate_evaluator="nope")


def test_a_bounded_statistics_difference_interval_stays_within_its_range(monkeypatch):
    """Regression: W's difference got an interval reaching 1.03; a difference of a statistic in
    [0, 1] lies in [-1, 1], of human agreement r in [-2, 2]; ρ is unbounded."""
    assert cmp._span("kendall_w") == 1.0 and cmp._span("human_agreement") == 2.0
    assert math.isinf(cmp._span("rho")) and math.isinf(cmp._span("not-a-metric"))
    real = cmp.max_t_band

    def wide(point, draws, level):
        band = real(point, draws, level)
        return type(band)(**{**band.__dict__, "q": band.q * 1e6})  # absurdly wide: every end clipped

    monkeypatch.setattr(cmp, "max_t_band", wide)
    records = synthetic_records(SyntheticSpec(evaluators=2, prompt_free=0, generators=4, prompts=6, templates=3,
                                              paraphrases=2, render_levels=3, seed=3))
    comparison = cmp.compare_records(records, records, baseline_evaluator="eval0", candidate_evaluator="eval1",
                                     bootstrap=200, seed=1)  # fmt: skip
    for m in comparison.metrics:
        span = cmp._span(m.kind)
        assert -span <= m.ci[0] <= m.ci[1] <= span or not math.isfinite(m.se) or m.se == 0, m
    w = [m for m in comparison.metrics if m.kind == "kendall_w" and m.se > 0]
    assert w and all(m.ci == (-1.0, 1.0) for m in w)  # the widened band reached both ends
