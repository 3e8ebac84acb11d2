"""Envelopes (Eq. 1–2, Table 9) and content probes (Table 10, Appendix I)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from harness.stats.envelopes import (
    CATEGORIES,
    SIGN_CROSSING,
    STRICT,
    TIE_BOUNDARY,
    envelopes,
    generator_pairs,
    margins,
    protocol_shifts,
)
from harness.stats.probe_stats import content_accuracy, pair_credit, probe_outcome
from tests._probe_pairs import table10_pairs


def test_margins_and_envelope_hand_computed():
    # 3 generators x 4 protocols
    means = np.array(
        [
            [5.0, 6.0, 5.0, 7.0],
            [4.0, 6.0, 6.0, 5.0],
            [1.0, 2.0, 1.0, 3.0],
        ]
    )
    assert generator_pairs(3) == [(0, 1), (0, 2), (1, 2)]
    np.testing.assert_allclose(
        margins(means), [[1, 0, -1, 2], [4, 4, 4, 4], [3, 4, 5, 2]]
    )
    env = envelopes(means)
    np.testing.assert_allclose(env.lo, [-1, 4, 2])
    np.testing.assert_allclose(env.hi, [2, 4, 5])
    assert env.categories == (SIGN_CROSSING, STRICT, STRICT)
    assert env.stable_winner is None  # generator 0 ties generator 1 at protocol 1
    assert env.counts() == {STRICT: 2, SIGN_CROSSING: 1, TIE_BOUNDARY: 0}


def test_tie_boundary_and_stable_winner():
    means = np.array([[3.0, 3.0], [2.0, 3.0], [1.0, 0.0]])
    env = envelopes(means)
    assert env.categories == (TIE_BOUNDARY, STRICT, STRICT)
    assert env.stable_winner is None
    env2 = envelopes(np.array([[3.0, 4.0], [2.0, 3.0], [1.0, 0.0]]))
    assert env2.stable_winner == 0


def test_equation_1_holds():
    rng = np.random.default_rng(1)
    means = rng.normal(size=(6, 387))
    d = margins(means)
    u = protocol_shifts(means, base=0)
    pairs = generator_pairs(6)
    a = [m for m, _ in pairs]
    b = [n for _, n in pairs]
    np.testing.assert_allclose(d, d[:, [0]] + u[a] - u[b], atol=1e-12)


@settings(max_examples=50, deadline=None)
@given(
    arrays(np.float64, (6, 9), elements=st.integers(-3, 3).map(float)),
    st.floats(-50, 50),
)
def test_common_shift_leaves_margins_and_categories_unchanged(means, shift):
    shifted = means + shift
    np.testing.assert_allclose(margins(shifted), margins(means), atol=1e-9)
    env = envelopes(means)
    assert len(env.categories) == 15
    assert set(env.categories) <= set(CATEGORIES)
    assert sum(env.counts().values()) == 15
    if float(shift).is_integer():  # exact arithmetic: categories identical
        assert envelopes(shifted).categories == env.categories


def test_pair_credit():
    np.testing.assert_allclose(
        pair_credit(np.array([2.0, 2.0, 2.0, np.nan]), np.array([1.0, 2.0, 3.0, 1.0])),
        [1.0, 0.5, 0.0, np.nan],
    )


def test_table_10_reproduced():
    intact, probe = table10_pairs()
    out = probe_outcome(intact, probe)
    assert (out.drops, out.ties, out.rises) == (124, 77, 99)
    assert round(100 * out.strict_drop, 1) == 41.3
    assert round(100 * out.tie_rate, 1) == 25.7
    assert round(100 * out.rise_rate, 1) == 33.0
    assert round(100 * out.discrimination, 1) == 54.2
    assert out.n_zero == 23
    assert out.clean_credit == 149.0
    assert round(100 * out.clean_discrimination, 1) == 53.8
    lo, hi = out.sensitivity_bounds
    assert (lo, hi) == (149 / 300, 172 / 300)
    assert (round(100 * lo, 1), round(100 * hi, 1)) == (49.7, 57.3)


def test_failed_pairs_counted_and_widen_bounds():
    intact = np.array([2.0, 2.0, np.nan, 2.0])
    probe = np.array([1.0, 3.0, 1.0, np.nan])
    recorded = np.array([True, True, True, True])
    out = probe_outcome(intact, probe, recorded)
    assert (out.drops, out.ties, out.rises, out.n_failed) == (1, 0, 1, 2)
    assert out.discrimination == 0.5
    assert out.sensitivity_bounds == (0.25, 0.75)


def test_content_accuracy_is_plain_mean():
    acc = {"keep_half": 0.64, "biggest_only": 0.74, "scrambled": 0.56, "worst_objects": 0.72}
    assert content_accuracy(acc) == pytest.approx(0.665)
