"""The vectorised human-agreement path: the same outputs as the frozen reference
(tests/_human_reference.py) to the last digit, hand-computed draws, and its invariants."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from harness.human import agreement_draws as hb
from harness.human import agreement_table as hs
from harness.human import item_agreement as hc
from harness.stats.intervals import DEFAULT_POLICY
from tests import _human_reference as ref

KEYS = hb.POOLED


def _panel(seed: int, series: int, prompts: int, per_prompt: int, *, holes: float = 0.0,
           uneven: bool = False, quantise: bool = False):
    """scores (E, n), mean ratings (n,), blocks (n,): a study-like random panel."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 2 * per_prompt, prompts) if uneven else np.full(prompts, per_prompt)
    blocks = np.repeat(np.arange(prompts), sizes)
    rng.shuffle(blocks)
    n = blocks.size
    true = rng.normal(3, 1, n)
    human = np.clip(np.round(true[:, None] + rng.normal(0, 0.8, (n, 3))), 1, 5).mean(axis=1)
    scores = true[None, :] + rng.normal(0, 1, (series, n)) / rng.uniform(0.2, 1.5, (series, 1))
    if quantise:
        scores[::2] = np.round(scores[::2] * 2) / 2
    scores[rng.random(scores.shape) < holes] = np.nan
    return scores, human, blocks


def _weights(prompts: int, draws: int, seed: int) -> np.ndarray:
    w = hs.draw_weights(prompts, draws, seed)
    return np.vstack([np.ones((1, prompts), dtype=w.dtype), w])


def _assert_same(a: dict, b: dict) -> None:
    for k in KEYS:
        assert np.array_equal(a[k], b[k], equal_nan=True), k


# --- the same outputs as the reference, to the last digit ---------------------------------------


@pytest.mark.parametrize("grouped", [False, True])
def test_series_agreement_equals_the_reference_on_a_moderate_panel(grouped):
    scores, human, blocks = _panel(3, 120, 12, 5, holes=0.02, quantise=True)
    scores[7] = 2.0  # a constant series: statistics undefined
    scores[9, :40] = np.nan  # a series missing a third of its items
    weights = hs.draw_weights(12, 300, 42)
    got = hs.series_agreement(scores, human, blocks, 12, weights, grouped=grouped, chunk=50)
    # the frozen reference reads plain percentiles: hand it the level the interval policy reads
    # an interval over 12 prompt blocks at
    want = ref.series_agreement(scores, human, blocks, 12, weights, grouped=grouped, chunk=50,
                                level=DEFAULT_POLICY.read_level(12))
    assert json.dumps(got) == json.dumps(want)  # every printed digit


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), prompts=st.integers(1, 9), per_prompt=st.integers(1, 6),
       holes=st.sampled_from([0.0, 0.15]), uneven=st.booleans(), quantise=st.booleans())
def test_pooled_draws_equal_the_reference(seed, prompts, per_prompt, holes, uneven, quantise):
    scores, human, blocks = _panel(seed, 5, prompts, per_prompt, holes=holes, uneven=uneven, quantise=quantise)
    eps = hc.tie_calibrated_epsilons(scores, human)
    w = _weights(prompts, 20, seed)
    _assert_same(hb.pooled_draws(scores, human, blocks, w, eps), ref.pooled_draws(scores, human, blocks, w, eps))


def test_pooled_draws_equal_the_reference_with_unused_blocks_and_one_item_per_block():
    scores, human, _ = _panel(11, 4, 1, 30)
    blocks = np.arange(30) + 5  # 35 blocks, the first five with no item
    w = _weights(35, 15, 1)
    eps = np.array([0.0, 0.3, 1.0, 0.05])
    _assert_same(hb.pooled_draws(scores, human, blocks, w, eps), ref.pooled_draws(scores, human, blocks, w, eps))


def test_pooled_draws_in_slices_of_block_pairs_and_series_equal_the_reference(monkeypatch):
    scores, human, blocks = _panel(5, 6, 8, 4, holes=0.1)
    w = _weights(8, 25, 2)
    eps = hc.tie_calibrated_epsilons(scores, human)
    monkeypatch.setattr(hb, "OUTER_BUDGET", 30)  # a few block pairs per GEMM
    monkeypatch.setattr(hb, "COUNT_BUDGET", 400)  # two series' pair counts at a time
    _assert_same(hb.pooled_draws(scores, human, blocks, w, eps), ref.pooled_draws(scores, human, blocks, w, eps))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 40), levels=st.integers(1, 6), quantise=st.booleans())
def test_epsilons_equal_the_reference_and_the_one_series_search(seed, n, levels, quantise):
    rng = np.random.default_rng(seed)
    human = rng.integers(0, levels, n) / 2.0
    x = human + rng.normal(0, rng.uniform(0.1, 2.0), (4, n))
    if quantise:
        x = np.round(x)
    got = hc.tie_calibrated_epsilons(x, human, chunk=3)
    assert np.array_equal(got, ref.tie_calibrated_epsilons(x, human, chunk=2))
    assert list(got) == [hc.tie_calibrated_accuracy(row, human).epsilon for row in x]


# --- hand-computed draws ---------------------------------------------------------------------------


def test_pooled_draw_hand_computed():
    # items (x, y): (1, 1), (2, 3) in block 0; (3, 2) in block 1, drawn twice. The multiset's
    # 6 pairs: 3 concordant (the first item with the rest), 2 discordant ((2,3) with both
    # copies of (3,2)), 1 tied on both sides (the two copies).
    x = np.array([[1.0, 2.0, 3.0]])
    y = np.array([1.0, 3.0, 2.0])
    blocks = np.array([0, 0, 1])
    w = np.array([[1, 1], [1, 2]])
    d = hb.pooled_draws(np.vstack([x, x]), y, blocks, w, np.array([0.0, 1.0]))
    assert d["kendall_tau_b"][1, 0] == pytest.approx(1 / 5)  # (3 − 2) / √((6 − 1)(6 − 1))
    assert d["kendall_tau_c"][1, 0] == pytest.approx(2 * 1 / (16 * 2 / 3))  # m = 3 classes
    assert d["pairwise_accuracy"][1, 0] == pytest.approx(4 / 6)  # 3 concordant + the double tie
    # at ε = 1 the pairs one apart are metric ties, wrong against the humans' order: left are
    # (1,1) with both copies of (3,2) and the double tie
    assert d["pairwise_accuracy"][1, 1] == pytest.approx(3 / 6)
    # x (1, 2, 3, 3), y (1, 3, 2, 2): cov 1, Σdx² 2.75, Σdy² 2
    assert d["pearson"][1, 0] == pytest.approx(1 / np.sqrt(5.5))
    # the original sample: 2 concordant, 1 discordant of 3 pairs
    assert d["kendall_tau_b"][0, 0] == pytest.approx(1 / 3)
    assert d["pairwise_accuracy"][0, 0] == pytest.approx(2 / 3)


# --- invariants of the fast path -------------------------------------------------------------------


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), holes=st.sampled_from([0.0, 0.1]))
def test_permuting_series_permutes_the_draws(seed, holes):
    scores, human, blocks = _panel(seed, 7, 5, 4, holes=holes, quantise=True)
    w = _weights(5, 15, seed)
    eps = hc.tie_calibrated_epsilons(scores, human)
    perm = np.random.default_rng(seed).permutation(7)
    a = hb.pooled_draws(scores, human, blocks, w, eps)
    b = hb.pooled_draws(scores[perm], human, blocks, w, eps[perm])
    for k in KEYS:
        np.testing.assert_allclose(b[k], a[k][:, perm], rtol=0, atol=1e-12, err_msg=k)
    assert np.array_equal(hc.tie_calibrated_epsilons(scores[perm], human), eps[perm])


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), holes=st.sampled_from([0.0, 0.1]))
def test_permuting_items_and_relabelling_prompts_changes_nothing(seed, holes):
    scores, human, blocks = _panel(seed, 4, 6, 4, holes=holes, quantise=True)
    w = _weights(6, 15, seed)
    eps = hc.tie_calibrated_epsilons(scores, human)
    rng = np.random.default_rng(seed + 1)
    items = rng.permutation(human.size)
    relabel = rng.permutation(6)  # prompt p becomes relabel[p]; its weight column moves along
    w2 = np.empty_like(w)
    w2[:, relabel] = w
    a = hb.pooled_draws(scores, human, blocks, w, eps)
    b = hb.pooled_draws(scores[:, items], human[items], relabel[blocks[items]], w2, eps)
    for k in KEYS:  # pair counts are exact; the moment sums may differ in the last bits
        np.testing.assert_allclose(b[k], a[k], rtol=0, atol=1e-12, err_msg=k)
    assert np.array_equal(hc.tie_calibrated_epsilons(scores[:, items], human[items]), eps)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), prompts=st.integers(2, 6), per_prompt=st.integers(1, 4),
       quantise=st.booleans())
def test_draws_are_the_scipy_statistics_of_the_resampled_items(seed, prompts, per_prompt, quantise):
    scores, human, blocks = _panel(seed, 3, prompts, per_prompt, quantise=quantise)
    w = _weights(prompts, 6, seed)
    d = hb.pooled_draws(scores, human, blocks, w, np.zeros(3))
    for k in KEYS:
        finite = d[k][np.isfinite(d[k])]
        assert np.all((finite >= -1.0) & (finite <= 1.0)), k
    for b in range(w.shape[0]):
        idx = np.concatenate([np.flatnonzero(blocks == p) for p in range(prompts) for _ in range(w[b, p])])
        for e in range(3):
            xe, ye = scores[e, idx], human[idx]
            constant = np.all(xe == xe[0]) or np.all(ye == ye[0])
            want_r = np.nan if constant else sps.pearsonr(xe, ye).statistic
            want_tau = np.nan if constant else sps.kendalltau(xe, ye, variant="b").statistic
            for name, want in (("pearson", want_r), ("kendall_tau_b", want_tau)):
                got = d[name][b, e]
                assert (np.isnan(got) and np.isnan(want)) or got == pytest.approx(want, abs=1e-9), name


def test_epsilons_one_series_per_step_equal_the_reference(monkeypatch):
    scores, human, _ = _panel(8, 9, 10, 5, quantise=True)
    monkeypatch.setattr(hc, "EPSILON_BUDGET", 10)  # fewer pairs than one series has: one per step
    assert np.array_equal(hc.tie_calibrated_epsilons(scores, human), ref.tie_calibrated_epsilons(scores, human))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), draws=st.integers(1, 300), columns=st.integers(1, 6),
       nan_share=st.sampled_from([0.0, 0.3, 1.0]), rounded=st.booleans(),
       level=st.sampled_from([0.5, 0.9, 0.95, 0.99]))
def test_interval_by_sorting_equals_percentile_bounds_bit_for_bit(seed, draws, columns, nan_share, rounded, level):
    from harness.stats.intervals import percentile_bounds, percentile_columns

    rng = np.random.default_rng(seed)
    d = rng.normal(size=(draws, columns))
    d = np.round(d, 1) if rounded else d
    d[rng.random(d.shape) < nan_share] = np.nan
    got = percentile_columns(d, level)
    assert np.array_equal(got, percentile_bounds(d, level), equal_nan=True)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 120), cap=st.integers(1, 60),
       shape=st.sampled_from(["normal", "rounded", "clustered", "reversed"]), levels=st.integers(2, 40))
def test_smallest_rightly_ordered_differences_equal_a_brute_force(seed, n, cap, shape, levels):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, levels, n).astype(float)
    x = y[None, :] + rng.normal(0, 2, (3, n))
    if shape == "rounded":
        x = np.round(x)
    elif shape == "clustered":  # a dense cluster makes close pairs far apart in metric order
        x[:, : n // 2] = rng.normal(0, 1e-3, (3, n // 2))
    elif shape == "reversed":  # few close pairs rightly ordered: the search widens, up to all pairs
        x = -y[None, :] + rng.normal(0, 0.5, (3, n))
    got = hc._smallest_rightly_ordered(x, y, cap)
    i, j = np.triu_indices(n, k=1)
    for row, want_row in zip(got, x, strict=True):
        dx = want_row[j] - want_row[i]
        right = np.sort(np.abs(dx[np.sign(dx) * np.sign(y[j] - y[i]) > 0]))[:cap]
        want = np.full(cap, np.inf)
        want[: right.size] = right
        assert np.array_equal(row, want)
