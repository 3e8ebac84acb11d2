"""Prompt-block bootstrap helpers and the simultaneous band (Eq. 3)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.stats import bootstrap as bs
from harness.stats.intervals import interval
from harness.stats.rho import rho, scene_level_variance
from harness.stats.simultaneous import naive_band, simultaneous_band


def test_prompt_weights_are_multinomial_counts_and_seeded():
    w = bs.prompt_weights(7, 50, 42)
    assert w.shape == (50, 7)
    assert (w.sum(axis=1) == 7).all()
    np.testing.assert_array_equal(w, bs.prompt_weights(7, 50, 42))
    assert not np.array_equal(w, bs.prompt_weights(7, 50, 43))
    with pytest.raises(ValueError):
        bs.prompt_weights(0, 5, 1)


def test_prompt_mean_draws_hand_computed():
    values = np.array([[1.0], [2.0], [3.0]])
    weights = np.array([[3, 0, 0], [1, 1, 1], [0, 1, 2]])
    np.testing.assert_allclose(bs.prompt_mean_draws(values, weights)[:, 0], [1.0, 2.0, 8 / 3])
    holes = np.array([[1.0], [np.nan], [3.0]])
    out = bs.prompt_mean_draws(holes, np.array([[0, 3, 0], [1, 1, 1], [2, 1, 0]]))[:, 0]
    np.testing.assert_allclose(out, [np.nan, 2.0, 1.0])


def test_scene_mean_draws_hand_computed():
    values = np.array([[1.0, 2.0], [3.0, np.nan]])  # (G=2, P=2)
    w = np.array([[1, 1], [2, 0], [0, 2]])
    # draw 0: (1+2+3)/3 ; draw 1: prompt 0 twice -> (1+3)*2/4 ; draw 2: prompt 1 twice -> 2
    np.testing.assert_allclose(bs.scene_mean_draws(values, w), [2.0, 2.0, 2.0])
    stacked = np.stack([values, 2 * values])
    np.testing.assert_allclose(bs.scene_mean_draws(stacked, w), [[2, 4], [2, 4], [2, 4]])


def test_identity_draw_reproduces_point_estimates():
    rng = np.random.default_rng(3)
    scores = rng.normal(10, 2, size=(6, 5, 4))
    base = rng.normal(10, 2, size=(6, 5))
    w = np.ones((1, 5), dtype=int)
    r = bs.rho_draws(scene_level_variance(scores)[None], base, w)
    assert r[0, 0] == pytest.approx(rho(scores, base))
    assert bs.paired_gap(base, 0, 1, w)[0] == pytest.approx(base[0].mean() - base[1].mean())


def test_percentile_interval():
    draws = np.arange(101, dtype=float)
    np.testing.assert_allclose(interval(draws).as_tuple(), (2.5, 97.5))
    np.testing.assert_allclose(interval(np.append(draws, np.nan)).as_tuple(), (2.5, 97.5))


def test_band_hand_computed():
    d = np.array([[0.0, 1.0], [2.0, 1.0]])  # contrast 1 is constant
    w = np.array([[2, 0], [0, 2], [1, 1]])
    band = simultaneous_band(d, w)
    # draws of contrast 0: 0, 2, 1 -> SD 1 ; T = 1, 1, 0 ; q95 by linear interpolation = 1
    np.testing.assert_allclose(band.mean, [1.0, 1.0])
    assert band.se[0] == pytest.approx(1.0)
    np.testing.assert_array_equal(band.eligible, [True, False])
    np.testing.assert_allclose(band.t_max, [1.0, 1.0, 0.0])
    assert band.q == pytest.approx(1.0)
    lo, hi = band.interval(np.array([0, 1]))
    assert (lo[0], hi[0]) == (0.0, 2.0)
    assert np.isnan(lo[1]) and np.isnan(hi[1])
    analytic = simultaneous_band(d, w, se_method="analytic")
    assert analytic.se[0] == pytest.approx(np.std([0, 2], ddof=1) / np.sqrt(2))


def test_band_matches_naive_loop_and_is_chunk_independent():
    rng = np.random.default_rng(5)
    d = rng.normal(size=(12, 300))
    d[:, 7] = 0.25  # constant: ineligible
    w = bs.prompt_weights(12, 400, 42)
    band = simultaneous_band(d, w)
    assert band.q == pytest.approx(naive_band(d, w), rel=1e-10)
    small = simultaneous_band(d, w, max_bytes=8 * 4 * 400 * 7)  # 7 columns per chunk
    assert small.q == pytest.approx(band.q, rel=1e-12)
    np.testing.assert_allclose(small.se, band.se)
    assert band.n_eligible == 299


def test_band_handles_missing_prompts():
    rng = np.random.default_rng(2)
    d = rng.normal(size=(10, 20))
    d[3, 4] = np.nan
    band = simultaneous_band(d, bs.prompt_weights(10, 200, 1))
    assert np.isfinite(band.q)
    assert band.mean[4] == pytest.approx(np.nanmean(d[:, 4]))


@settings(max_examples=15, deadline=None)
@given(st.floats(0.01, 100), st.floats(-100, 100), st.integers(0, 10_000))
def test_band_q_scale_and_shift_invariant(c, shift, seed):
    rng = np.random.default_rng(seed)
    d = rng.normal(size=(8, 30))
    w = bs.prompt_weights(8, 100, seed)
    q = simultaneous_band(d, w).q
    assert simultaneous_band(c * d + shift, w).q == pytest.approx(q, rel=1e-6)


def test_margin_ci_brackets_margins_and_matches_paired_gap():
    rng = np.random.default_rng(8)
    scores = rng.normal(size=(3, 15, 4)) + np.arange(3)[:, None, None]
    w = bs.prompt_weights(15, 300, 42)
    ci = bs.margin_ci(scores, w)
    assert ci.shape == (2, 3, 4)
    margin = scores[0].mean(0) - scores[1].mean(0)
    assert (ci[0, 0] <= margin).all() and (margin <= ci[1, 0]).all()
    lo, hi = interval(bs.paired_gap(scores[:, :, 2], 1, 2, w), n_blocks=15).as_tuple()
    np.testing.assert_allclose(ci[:, 2, 2], [lo, hi])
