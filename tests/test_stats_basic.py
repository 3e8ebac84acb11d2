"""Hand-computed checks and invariants for dispersion, ρ, rank stability and best view."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.stats import friedmanchisquare

from harness.stats.dispersion import dispersion, scene_dispersion
from harness.stats.rank import kendall_w, rank_stability, unique_winners
from harness.stats.rho import generator_signal, peak, rho
from harness.stats.views import best_view_inflation, scene_view_inflation


def test_dispersion_hand_computed():
    # scene 1: range 2, mean 2 -> 1.0 ; scene 2: range 0 -> 0 ; scene 3: range 4, mean 4 -> 1
    scores = np.array([[1.0, 2.0, 3.0], [5.0, 5.0, 5.0], [2.0, 4.0, 6.0]])
    np.testing.assert_allclose(scene_dispersion(scores), [1.0, 0.0, 1.0])
    assert dispersion(scores) == pytest.approx(2 / 3)


def test_dispersion_skips_nan_levels_and_zero_means():
    scores = np.array([[1.0, np.nan, 3.0], [0.0, 0.0, 0.0]])
    np.testing.assert_allclose(scene_dispersion(scores), [1.0, np.nan])
    assert dispersion(scores) == pytest.approx(1.0)


def test_rho_hand_computed():
    # 2 generators x 2 prompts x 2 levels.
    scores = np.array([[[1.0, 3.0], [2.0, 2.0]], [[0.0, 2.0], [4.0, 8.0]]])
    # per-scene population variances: 1, 0, 1, 4 -> mean 1.5
    baseline = np.array([[1.0, 3.0], [5.0, 7.0]])  # generator means 2 and 6 -> var 4
    assert generator_signal(baseline) == pytest.approx(4.0)
    assert rho(scores, baseline) == pytest.approx(1.5 / 4.0)
    # sample variance in the denominator: 8 -> rho halves for two generators ((G-1)/G)
    assert rho(scores, baseline, ddof=1) == pytest.approx(1.5 / 8.0)


def test_rho_sample_variance_rescales_by_five_sixths():
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(6, 5, 4))
    base = rng.normal(size=(6, 5))
    assert rho(scores, base, ddof=1) == pytest.approx(rho(scores, base) * 5 / 6)


def test_peak():
    assert peak({"a": 0.5, "b": 2.0, "c": float("nan")}) == ("b", 2.0)
    key, val = peak({"a": float("nan")})
    assert key is None and np.isnan(val)


def test_kendall_w_hand_computed():
    # 3 raters, 3 items: rank sums 3, 6, 9 -> S = 18, W = 12*18 / (9 * 24) = 1
    assert kendall_w(np.array([[1, 2, 3], [1, 2, 3], [1, 2, 3]])) == pytest.approx(1.0)
    # Two raters in opposite order: rank sums 4,4,4 -> W = 0
    assert kendall_w(np.array([[1, 2, 3], [3, 2, 1]])) == pytest.approx(0.0)
    # Ties: rater 1 ranks (1.5, 1.5, 3), rater 2 (1, 2, 3): sums 2.5, 3.5, 6 ; mean 4
    # S = 2.25 + 0.25 + 4 = 6.5 ; T = 2^3 - 2 = 6 ; W = 12*6.5 / (4*24 - 2*6) = 78/84
    assert kendall_w(np.array([[1, 1, 3], [1, 2, 3]])) == pytest.approx(78 / 84)


def test_kendall_w_degenerate():
    assert np.isnan(kendall_w(np.array([[1.0, 2.0, 3.0]])))
    assert np.isnan(kendall_w(np.ones((3, 4))))


@settings(max_examples=50, deadline=None)
@given(
    arrays(np.float64, (5, 4), elements=st.integers(0, 3).map(float)),
)
def test_kendall_w_matches_friedman(ratings):
    m, n = ratings.shape
    w = kendall_w(ratings)
    if np.isnan(w):
        return
    chi2, _ = friedmanchisquare(*ratings.T)  # items are the "treatments", raters the blocks
    assert chi2 == pytest.approx(m * (n - 1) * w, rel=1e-9, abs=1e-9)


@settings(max_examples=50, deadline=None)
@given(
    arrays(np.float64, (6,), elements=st.floats(-10, 10), unique=True),
    st.integers(2, 8),
)
def test_kendall_w_identical_orders_is_one(row, m):
    assert kendall_w(np.tile(row, (m, 1))) == pytest.approx(1.0)


def test_unique_winners_keep_exact_ties():
    means = np.array([[3.0, 1.0, 2.0], [3.0, 2.0, 1.0], [1.0, 0.0, 2.0]])
    np.testing.assert_array_equal(unique_winners(means), [-1, 1, -1])


def test_rank_stability_counts_winner_changes():
    # levels:      0   1   2   3
    means = np.array(
        [
            [3.0, 3.0, 1.0, 1.0],  # gen 0 wins levels 0, 1
            [1.0, 2.0, 3.0, 2.0],  # gen 1 wins level 2
            [2.0, 1.0, 2.0, 2.0],  # level 3 tied between gens 1 and 2
        ]
    )
    rs = rank_stability(means)
    assert rs.winners == (0, 0, 1, -1)
    assert rs.top1_count == 2
    assert rs.winner_changes == 2  # (0,2) and (1,2)


def test_best_view_inflation_hand_computed():
    base = np.array([2.0, 4.0, 0.0, -1.0])
    views = np.array([[3.0, 1.0], [4.0, 2.0], [5.0, 5.0], [1.0, 1.0]])
    np.testing.assert_allclose(scene_view_inflation(base, views), [1.5, 1.0, np.nan, np.nan])
    assert best_view_inflation(base, views) == pytest.approx(1.25)


@settings(max_examples=40, deadline=None)
@given(
    arrays(np.float64, (3, 4, 5), elements=st.floats(0.1, 100)),
    arrays(np.float64, (3, 4), elements=st.floats(0.1, 100)),
    st.floats(0.01, 100),
)
def test_dispersion_and_rho_scale_invariant(scores, base, c):
    assert dispersion(scores * c) == pytest.approx(dispersion(scores), rel=1e-9)
    r = rho(scores, base)
    if np.isfinite(r) and generator_signal(base) > 1e-9:
        assert rho(scores * c, base * c) == pytest.approx(r, rel=1e-6)
