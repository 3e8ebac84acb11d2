"""Human-agreement statistics: hand-computed values, published expectations, properties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from harness.human import agreement_draws as hb
from harness.human import generator_agreement as hr
from harness.human import item_agreement as hc
from harness.human import rater_reliability as rel

NAN = np.nan


def test_correlations_hand_computed():
    x = np.array([1.0, 2.0, 3.0, 4.0])
    y = np.array([1.0, 3.0, 2.0, 4.0])
    # Pearson: centred x (-1.5,-.5,.5,1.5), y (-1.5,.5,-.5,1.5): 4/5
    assert hc.pearson(x, y) == pytest.approx(0.8)
    assert hc.spearman(x, y) == pytest.approx(0.8)
    # 6 pairs, one discordant: (5 - 1) / 6
    assert hc.kendall_tau(x, y, "b") == pytest.approx(4 / 6)
    # tau-c = 2 (C - D) / (n^2 (m-1)/m) = 8 / (16 * 3/4)
    assert hc.kendall_tau(x, y, "c") == pytest.approx(8 / 12)
    assert np.isnan(hc.pearson(x, np.ones(4)))
    assert hc.pearson(np.array([1.0, NAN, 2.0, 3.0]), np.array([1.0, 5.0, 2.0, 3.0])) == pytest.approx(1.0)


def test_tau_b_with_ties_hand_computed():
    x = np.array([1.0, 1.0, 2.0])
    y = np.array([1.0, 2.0, 3.0])
    # pairs: (0,1) tied in x, (0,2) C, (1,2) C -> 2 / sqrt((3-1)(3-0))
    assert hc.kendall_tau(x, y, "b") == pytest.approx(2 / np.sqrt(6))


# Published expectations of mt-metrics-eval's tau_optimization tests (acc_23).
def test_tie_calibration_zero_threshold_is_best():
    r = hc.tie_calibrated_accuracy(np.array([0, 2, 6, 8.0]), np.array([1, 2, 3, 4.0]))
    np.testing.assert_allclose(r.thresholds, [0, 2, 4, 6, 8])
    np.testing.assert_allclose(r.accuracies, [6 / 6, 4 / 6, 3 / 6, 1 / 6, 0])
    assert r.epsilon == 0 and r.accuracy == pytest.approx(1.0, abs=1e-15)


def test_tie_calibration_nonzero_threshold_is_best():
    r = hc.tie_calibrated_accuracy(np.array([0, 2, 6, 8.0]), np.array([1, 1, 1, 4.0]))
    np.testing.assert_allclose(r.accuracies, [3 / 6, 3 / 6, 4 / 6, 4 / 6, 3 / 6])
    assert r.epsilon == 4 and r.accuracy == pytest.approx(4 / 6)


def test_tie_calibration_grouped_regression_example():
    metric = np.array(
        [[0, 5, 2, 3, 2], [NAN, 2, 1, 5, 3], [9, 1, 5, 3, 8], [9, 3, 4, 4, 1], [NAN] * 5]
    )
    human = np.array(
        [[1, 5, 2, 1, 1], [4, 2, 2, 1, 4], [5, 9, 2, 8, 7], [7, 6, NAN, 3, 2], [NAN] * 5]
    )
    groups = np.repeat(np.arange(5), 5)
    r = hc.tie_calibrated_accuracy(metric.ravel(), human.ravel(), groups)
    np.testing.assert_allclose(r.thresholds, np.arange(9))
    expected = [0.4666666666666667, 0.4916666666666668, 0.38333333333333347, 0.29166666666666674,
                0.2666666666666667, 0.2, 0.15833333333333335, 0.15833333333333335, 0.1166666666666667]
    np.testing.assert_allclose(r.accuracies, expected, atol=1e-12)
    assert r.epsilon == 1 and r.accuracy == pytest.approx(0.4916666666666668, abs=1e-12)
    assert hc.accuracy_at(metric.ravel(), human.ravel(), 1.0, groups) == pytest.approx(r.accuracy)


def test_item_agreement_keys_and_grouped():
    x = np.array([1.0, 2.0, 3.0, 1.0, 3.0, 2.0])
    y = np.array([1.0, 2.0, 3.0, 1.0, 2.0, 3.0])
    g = np.array(["a", "a", "a", "b", "b", "b"])
    out = hc.item_agreement(x, y, g)
    assert set(out) == {"n", "pearson", "spearman", "kendall_tau_b", "kendall_tau_c",
                        "pairwise_accuracy", "pairwise_epsilon"}
    # prompt a: r = 1; prompt b: x (1,3,2) y (1,2,3): r = 0.5 -> mean 0.75
    assert out["pearson"] == pytest.approx(0.75)
    # tau-b: a 1, b (2 C, 1 D)/3 = 1/3 -> 2/3
    assert out["kendall_tau_b"] == pytest.approx(2 / 3)


# Krippendorff's alpha -------------------------------------------------------------------------


def test_alpha_hand_computed_zero():
    # items (1,1), (2,2), (3,1): o11=2, o22=2, o13=o31=1; n=(3,2,1), n=6
    # interval: D_o sum 2*4 = 8; D_e sum 2*(3*2*1 + 3*1*4 + 2*1*1) = 40; alpha = 1 - 5*8/40 = 0
    r = np.array([[1.0, 1.0], [2.0, 2.0], [3.0, 1.0]])
    assert rel.krippendorff_alpha(r, "interval") == pytest.approx(0.0, abs=1e-12)


def test_alpha_krippendorff_2011_reliability_data():
    # Krippendorff (2011) "Computing Krippendorff's alpha-reliability", 4 coders x 12 units:
    # published ordinal 0.815, interval 0.849.
    d = np.array([
        [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
        [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
    ]).T
    assert rel.krippendorff_alpha(d, "interval") == pytest.approx(0.849, abs=5e-4)
    assert rel.krippendorff_alpha(d, "ordinal") == pytest.approx(0.815, abs=5e-4)
    assert rel.krippendorff_alpha(np.array([[1.0, 1.0], [2.0, 2.0]])) == pytest.approx(1.0)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000))
def test_alpha_matches_reference_package(seed):
    kd = pytest.importorskip("krippendorff", reason="the krippendorff package is an optional cross-check")
    rng = np.random.default_rng(seed)
    r = rng.integers(1, 6, size=(15, 3)).astype(float)
    r[rng.random(r.shape) < 0.2] = NAN
    if np.isfinite(r).sum(axis=1).max() < 2 or np.unique(r[np.isfinite(r)]).size < 2:
        return
    for level in ("interval", "ordinal"):
        ours = rel.krippendorff_alpha(r, level)
        ref = kd.alpha(reliability_data=r.T, level_of_measurement=level)
        assert ours == pytest.approx(ref, abs=1e-9)


def test_loro_split_half_and_ceiling_hand_computed():
    r = np.array([[1.0, 2.0], [2.0, 3.0], [3.0, 5.0]])
    loro = rel.leave_one_rater_out(r)
    np.testing.assert_allclose(loro, [np.corrcoef([1, 2, 3], [2, 3, 5])[0, 1]] * 2)
    half, sb = rel.split_half(r)
    assert half == pytest.approx(loro[0])
    assert sb == pytest.approx(2 * half / (1 + half))
    assert rel.noise_ceiling(0.5, 3) == pytest.approx(np.sqrt(1.5 / 2.0))
    assert rel.noise_ceiling(-0.2, 3) == 0.0
    assert rel.effective_raters(np.array([[1, 2, NAN], [1, 2, 3.0]])) == pytest.approx(2 / (1 / 2 + 1 / 3))


def test_simulated_reliability_is_recovered():
    rng = np.random.default_rng(42)
    true = rng.normal(0, 1, 4000)
    r = np.round((true[:, None] + rng.normal(0, 1, (4000, 3))) * 4) / 4  # reliability ~0.5
    a = rel.krippendorff_alpha(r, "interval")
    assert a == pytest.approx(0.5, abs=0.03)
    ceiling = rel.noise_ceiling(a, 3)
    assert np.corrcoef(true, r.mean(1))[0, 1] == pytest.approx(ceiling, abs=0.02)


# Generator level and Bradley-Terry ------------------------------------------------------------


def test_generator_level():
    assert hr.generator_kendall(np.array([1.0, 2, 3]), np.array([1.0, 3, 2])) == pytest.approx(1 / 3)
    assert hr.winner_match(np.array([1.0, 3, 2]), np.array([0.0, 5, 1]))
    assert not hr.winner_match(np.array([3.0, 3, 2]), np.array([0.0, 5, 1]))


def test_bradley_terry_hand_computed():
    # 3 wins to 1: ML log-odds log 3, centred +-log(3)/2
    np.testing.assert_allclose(hr.bradley_terry(np.array([[0, 3], [1, 0.0]]), prior=0), [np.log(3) / 2, -np.log(3) / 2])
    # undefeated: with one virtual tie the odds are 2.5 : 0.5
    np.testing.assert_allclose(hr.bradley_terry(np.array([[0, 2], [0, 0.0]]), prior=1), [np.log(5) / 2, -np.log(5) / 2])
    wins = hr.win_matrices(np.array([0, 0, 1]), np.array([1, 1, 0]), np.array([1.0, 0.5, 1.0]), np.zeros(3, int), 2, 1)
    np.testing.assert_allclose(wins[0], [[0, 1.5], [1.5, 0]])
    draws = hr.bradley_terry_draws(wins, np.ones((2, 1)))
    np.testing.assert_allclose(draws, 0.0, atol=1e-9)


# Bootstrap engine: an all-ones draw is the point estimate; a draw equals the expanded multiset ---


def _expand(blocks, w):
    return np.concatenate([np.flatnonzero(blocks == p) for p in range(w.size) for _ in range(w[p])])


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 100_000), st.integers(2, 6), st.integers(2, 5), st.booleans())
def test_pooled_draws_equal_statistics_of_the_resampled_multiset(seed, n_prompts, per_prompt, quantise):
    rng = np.random.default_rng(seed)
    n = n_prompts * per_prompt
    blocks = np.repeat(np.arange(n_prompts), per_prompt)
    human = rng.integers(1, 4, n).astype(float)
    x = human + rng.normal(0, 1, (2, n))
    if quantise:
        x = np.round(x)
    eps = np.array([hc.tie_calibrated_accuracy(x[e], human).epsilon for e in range(2)])
    w = rng.multinomial(n_prompts, np.ones(n_prompts) / n_prompts, size=3)
    w = np.vstack([np.ones(n_prompts, dtype=int), w])
    d = hb.pooled_draws(x, human, blocks, w, eps)
    for b in range(w.shape[0]):
        idx = _expand(blocks, w[b])
        for e in range(2):
            xe, he = x[e, idx], human[idx]
            for name, val in (
                ("pearson", hc.pearson(xe, he)),
                ("kendall_tau_b", hc.kendall_tau(xe, he, "b")),
                ("kendall_tau_c", hc.kendall_tau(xe, he, "c")),
                ("pairwise_accuracy", hc.accuracy_at(xe, he, eps[e])),
            ):
                got = d[name][b, e]
                assert (np.isnan(got) and np.isnan(val)) or got == pytest.approx(val, abs=1e-9), name
    point = hc.item_agreement(x[0], human)
    assert d["spearman"][0, 0] == pytest.approx(point["spearman"], nan_ok=True)


def test_pooled_draws_skip_missing_scores():
    rng = np.random.default_rng(5)
    blocks = np.repeat(np.arange(4), 3)
    human = rng.integers(1, 5, 12).astype(float)
    x = human + rng.normal(0, 1, (1, 12))
    x[0, 4] = NAN
    d = hb.pooled_draws(x, human, blocks, np.ones((1, 4)), np.array([0.0]))
    assert d["kendall_tau_b"][0, 0] == pytest.approx(hc.kendall_tau(x[0], human, "b"))
    assert d["pearson"][0, 0] == pytest.approx(hc.pearson(x[0], human))


def test_grouped_draws_point_and_weights():
    rng = np.random.default_rng(9)
    blocks = np.repeat(np.arange(5), 4)
    human = rng.integers(1, 5, 20).astype(float)
    x = human + rng.normal(0, 1, (2, 20))
    pb = hb.per_block_values(x, human, blocks, 5, np.array([0.0, 0.0]))
    g = hb.grouped_draws(pb, np.vstack([np.ones(5), [5, 0, 0, 0, 0]]))
    point = hc.item_agreement(x[1], human, blocks)
    assert g["kendall_tau_b"][0, 1] == pytest.approx(point["kendall_tau_b"])
    assert g["pearson"][1, 1] == pytest.approx(hc.pearson(x[1, :4], human[:4]))
    assert pb["spearman"][0, 2] == pytest.approx(sps.spearmanr(x[0, 8:12], human[8:12]).statistic)


def test_alpha_draws_match_expanded_units():
    rng = np.random.default_rng(3)
    r = rng.integers(1, 6, size=(12, 3)).astype(float)
    r[rng.random(r.shape) < 0.15] = NAN
    blocks = np.repeat(np.arange(4), 3)
    per, vals = rel.coincidences(r, blocks, 4)
    w = np.array([[1, 1, 1, 1], [2, 0, 1, 1], [0, 0, 4, 0]])
    for level in ("interval", "ordinal"):
        d = rel.alpha_draws(per, vals, w, level)
        for b in range(3):
            expanded = r[_expand(blocks, w[b])]
            want = rel.krippendorff_alpha(expanded, level)
            assert (np.isnan(want) and np.isnan(d[b])) or d[b] == pytest.approx(want, abs=1e-12)


def test_pooled_draws_many_blocks_path_matches(monkeypatch):
    rng = np.random.default_rng(11)
    blocks = np.repeat(np.arange(6), 2)
    human = rng.integers(1, 4, 12).astype(float)
    x = human + rng.normal(0, 1, (2, 12))
    w = rng.multinomial(6, np.ones(6) / 6, size=5)
    fast = hb.pooled_draws(x, human, blocks, w, np.array([0.1, 0.0]))
    monkeypatch.setattr(hb, "OUTER_BUDGET", 0)
    slow = hb.pooled_draws(x, human, blocks, w, np.array([0.1, 0.0]))
    for k in hb.POOLED:
        np.testing.assert_allclose(slow[k], fast[k], rtol=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 100_000), st.integers(2, 30), st.booleans())
def test_batched_epsilon_search_matches_the_single_search(seed, n, quantise):
    rng = np.random.default_rng(seed)
    human = rng.integers(1, 4, n).astype(float)
    x = human + rng.normal(0, 1, (5, n))
    if quantise:
        x = np.round(x)
    x[4] = -x[4]  # an anti-correlated series: ties everywhere may win
    got = hc.tie_calibrated_epsilons(x, human, chunk=2)
    want = [hc.tie_calibrated_accuracy(x[e], human).epsilon for e in range(5)]
    np.testing.assert_array_equal(got, want)
    groups = np.arange(n) % 3
    got = hc.tie_calibrated_epsilons(x, human, groups, chunk=2)
    want = [hc.tie_calibrated_accuracy(x[e], human, groups).epsilon for e in range(5)]
    np.testing.assert_array_equal(got, want)


def test_series_agreement_points_equal_the_scalar_statistics():
    from harness.human import agreement_table as hs

    rng = np.random.default_rng(21)
    blocks = np.repeat(np.arange(6), 4)
    human = rng.integers(1, 5, 24).astype(float)
    x = human + rng.normal(0, 1, (3, 24))
    x[2] = np.round(x[2])
    x[1, 3] = NAN
    w = hs.draw_weights(6, 50, 42)
    for grouped in (False, True):
        got = hs.series_agreement(x, human, blocks, 6, w, grouped=grouped)
        for e in range(3):
            want = hc.item_agreement(x[e], human, blocks if grouped else None)
            for k, v in want.items():
                assert got[e][k] == pytest.approx(v, abs=1e-12), (grouped, e, k)
            for k in hs.KEYS:
                lo, hi = got[e]["ci"][k]
                assert lo <= hi


def test_epsilon_search_is_not_moved_by_summation_rounding():
    # accuracy 10/15 at both ε = 1 and ε = 2; a running float sum once made ε = 2 look higher
    x = np.array([3.0, 2.0, 1.0, 1.0, 3.0, 1.0])
    human = np.array([2.0, 2.0, 2.0, 2.0, 3.0, 2.0])
    r = hc.tie_calibrated_accuracy(x, human)
    assert r.epsilon == 1.0 and r.accuracy == pytest.approx(10 / 15)
    assert hc.tie_calibrated_epsilons(x[None], human)[0] == 1.0


def test_generator_level_draws_identity_and_expansion():
    rng = np.random.default_rng(4)
    gen = np.tile(np.arange(3), 5)
    blocks = np.repeat(np.arange(5), 3)
    human = rng.integers(1, 6, 15).astype(float)
    x = human + rng.normal(0, 1, 15)
    w = np.array([[1, 1, 1, 1, 1], [2, 0, 0, 3, 0]])
    tau, match = hr.generator_level_draws(x, human, gen, blocks, w)
    ev = np.array([x[gen == k].mean() for k in range(3)])
    hu = np.array([human[gen == k].mean() for k in range(3)])
    assert tau[0] == pytest.approx(hr.generator_kendall(ev, hu))
    assert match[0] == hr.winner_match(ev, hu)
    idx = _expand(blocks, w[1])
    ev1 = np.array([x[idx][gen[idx] == k].mean() for k in range(3)])
    hu1 = np.array([human[idx][gen[idx] == k].mean() for k in range(3)])
    assert tau[1] == pytest.approx(hr.generator_kendall(ev1, hu1), nan_ok=True)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 100_000), st.floats(0.1, 10.0), st.floats(-5.0, 5.0))
def test_statistics_are_invariant_to_increasing_affine_maps_of_the_scores(seed, scale, shift):
    rng = np.random.default_rng(seed)
    human = rng.integers(1, 6, 20).astype(float)
    x = human + rng.normal(0, 1, 20)
    a = hc.item_agreement(x, human)
    b = hc.item_agreement(scale * x + shift, human)
    for k in ("pearson", "spearman", "kendall_tau_b", "kendall_tau_c"):
        assert b[k] == pytest.approx(a[k], abs=1e-9)
    # ε is in metric units, so it scales; the accuracy it buys does not move
    assert b["pairwise_accuracy"] == pytest.approx(a["pairwise_accuracy"], abs=1e-9)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 100_000))
def test_pairwise_accuracy_bounds_and_perfect_metric(seed):
    rng = np.random.default_rng(seed)
    human = rng.integers(1, 4, 12).astype(float)
    x = rng.normal(0, 1, 12)
    r = hc.tie_calibrated_accuracy(x, human)
    assert 0.0 <= r.accuracy <= 1.0
    # the humans' own ratings as the metric: every pair right at ε = 0
    assert hc.tie_calibrated_accuracy(human, human).accuracy == pytest.approx(1.0)
    assert hc.tie_calibrated_accuracy(human, human).epsilon == 0.0


def test_simulated_panel_recovers_the_planted_reliability_within_intervals():
    from harness.human import agreement_table as hs

    rng = np.random.default_rng(7)
    blocks = np.repeat(np.arange(50), 6)  # 6 generators x 50 prompts, like the bundled scenes
    true = rng.normal(0, 1, 300) + np.repeat(rng.normal(0, 0.5, 50), 6)
    for rho in (0.3, 0.6, 0.9):
        panel = rel.simulate_panel(true, 3, rho, seed=42)
        summary = hs.reliability_summary(panel, blocks, 50, hs.draw_weights(50, 2000, 42))
        lo, hi = summary["ci"]["krippendorff_alpha_interval"]
        assert lo <= rho <= hi, (rho, lo, hi)
        planted = rel.noise_ceiling(rho, 3)
        lo, hi = summary["ci"]["noise_ceiling"]
        assert lo <= planted <= hi, (rho, lo, hi)
        # and the ceiling is what the true score reaches against the panel mean
        assert np.corrcoef(true, panel.mean(1))[0, 1] == pytest.approx(planted, abs=0.06)
    with pytest.raises(ValueError):
        rel.simulate_panel(true, 1, 0.5)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 100_000), st.booleans())
def test_sparse_alpha_draws_equal_the_coincidence_form(seed, continuous):
    rng = np.random.default_rng(seed)
    r = rng.integers(1, 6, size=(12, 3)).astype(float)
    if continuous:
        r = r + rng.normal(0, 0.3, r.shape)
    r[rng.random(r.shape) < 0.2] = NAN
    blocks = np.repeat(np.arange(4), 3)
    w = np.vstack([np.ones(4), rng.multinomial(4, np.ones(4) / 4, size=4)])
    per, vals = rel.coincidences(r, blocks, 4)
    for level in ("interval", "ordinal"):
        want = rel.alpha_draws(per, vals, w, level) if vals.size else np.full(5, np.nan)
        got = rel.alpha_draws_sparse(r, blocks, w, level, draw_chunk=2)
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
