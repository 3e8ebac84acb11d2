"""The one interval module: hand-computed percentiles, its invariants, and that no other module
of the harness reads a quantile for an interval."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from harness.stats.intervals import (
    DEFAULT_POLICY,
    IntervalPolicy,
    block_bounds,
    block_columns,
    critical_value,
    expanded_level,
    interval,
    max_t_band,
    percentile_bounds,
    percentile_columns,
    share_interval,
)

HARNESS = Path(__file__).resolve().parents[1] / "harness"
QUANTILE_NAMES = {"percentile", "quantile", "nanpercentile", "nanquantile", "quantiles", "mquantiles",
                  "scoreatpercentile", "median_low", "median_high"}
#: Modules allowed a quantile call that is not an interval, each with its reason.
NOT_INTERVALS: dict[str, str] = {}


def test_percentile_interval_by_hand():
    # 0..10: the 2.5 % quantile sits at virtual index 0.25 (linear rule) → 0.25, the 97.5 % at 9.75
    found = interval(np.arange(11.0))
    assert found.as_tuple() == pytest.approx((0.25, 9.75), abs=1e-12)
    assert (found.method, found.level, found.percentile_level, found.confirmable) == ("percentile", 0.95, 0.95, True)
    # 1, 2, 3, 4 at 50 %: quantiles 0.25 and 0.75 at virtual indices 0.75 and 2.25 → 1.75, 3.25
    assert interval(np.array([4.0, 1.0, 3.0, 2.0]), level=0.5).as_tuple() == (1.75, 3.25)
    # NaN draws are skipped
    assert interval(np.array([4.0, np.nan, 1.0, 3.0, 2.0]), level=0.5).as_tuple() == (1.75, 3.25)


def test_no_finite_draw_gives_an_undefined_interval():
    lo, hi = interval(np.full(5, np.nan)).as_tuple()
    assert math.isnan(lo) and math.isnan(hi)
    np.testing.assert_array_equal(percentile_bounds(np.array([[np.nan, 1.0]] * 3)), [[np.nan, 1.0], [np.nan, 1.0]])


def test_no_draws_at_all_give_an_undefined_interval():
    assert all(math.isnan(x) for x in interval(np.zeros(0)).as_tuple())
    assert percentile_bounds(np.zeros((0, 3))).shape == (2, 3)


def test_the_expanded_percentile_reads_at_the_expanded_level_and_knows_its_minimum():
    draws = np.linspace(-1.0, 3.0, 401)
    found = interval(draws, method="expanded percentile", n_blocks=6)
    assert found.percentile_level == pytest.approx(0.995136, abs=1e-6) == expanded_level(6)
    a = (1 - found.percentile_level) / 2
    assert found.as_tuple() == pytest.approx((-1 + 4 * a, 3 - 4 * a), abs=1e-12)
    assert found.confirmable and DEFAULT_POLICY.min_blocks() == 6
    few = interval(draws, method="expanded percentile", n_blocks=5)
    assert not few.confirmable
    assert few.low < interval(draws).low  # wider than the plain percentile interval
    assert interval(draws, method="expanded percentile", n_blocks=5, min_blocks=2).confirmable
    assert math.isnan(interval(draws, method="expanded percentile", n_blocks=1).low)
    with pytest.raises(ValueError, match="n_blocks"):
        interval(draws, method="expanded percentile")
    with pytest.raises(ValueError, match="unknown interval method"):
        interval(draws, method="bca")  # type: ignore[arg-type]


def test_the_policy_is_one_frozen_value():
    assert IntervalPolicy(0.95, "linear", "expanded percentile", 2000, True) == DEFAULT_POLICY
    assert DEFAULT_POLICY.study_method == "expanded percentile" and DEFAULT_POLICY.refuse_below_min_blocks
    with pytest.raises(AttributeError):
        DEFAULT_POLICY.level = 0.9  # type: ignore[misc]
    narrower = IntervalPolicy(level=0.5)
    assert interval(np.array([1.0, 2.0, 3.0, 4.0]), policy=narrower).as_tuple() == (1.75, 3.25)
    assert IntervalPolicy(level=0.99).min_blocks() == 8  # 2**-8 <= 0.5 % < 2**-7


def test_every_prompt_block_interval_reads_the_study_method_over_its_blocks():
    draws = np.linspace(-1.0, 3.0, 401)
    given = interval(draws, n_blocks=6)
    assert given.method == "expanded percentile" and given.percentile_level == expanded_level(6)
    assert given.as_tuple() == interval(draws, method="expanded percentile", n_blocks=6).as_tuple()
    assert interval(draws).method == "percentile"  # no blocks named: nothing to correct for
    np.testing.assert_array_equal(block_bounds(draws[:, None], 6)[:, 0], given.as_tuple())
    wide = np.column_stack([draws, draws[::-1] * 2])
    np.testing.assert_array_equal(block_columns(wide, 6), block_bounds(wide, 6))
    assert np.isnan(block_bounds(wide, 1)).all() and block_bounds(wide, 1).shape == (2, 2)
    plain = IntervalPolicy(study_method="percentile")
    np.testing.assert_array_equal(block_bounds(wide, 6, policy=plain), percentile_bounds(wide))
    assert plain.read_level(6) == 0.95 == DEFAULT_POLICY.read_level(None)
    assert DEFAULT_POLICY.read_level(6) == expanded_level(6)


def test_not_confirmable_below_the_minimum_and_only_there():
    assert DEFAULT_POLICY.not_confirmable(2) == "not confirmable: 2 prompts (needs 6)"
    assert DEFAULT_POLICY.not_confirmable(3, noun="held-out prompts") == "not confirmable: 3 held-out prompts (needs 6)"
    assert DEFAULT_POLICY.not_confirmable(6) == ""
    assert IntervalPolicy(refuse_below_min_blocks=False).not_confirmable(2) == ""
    assert not interval(np.arange(5.0), n_blocks=5).confirmable
    assert interval(np.arange(5.0), n_blocks=5, policy=IntervalPolicy(refuse_below_min_blocks=False)).confirmable


def test_critical_value_and_the_one_width_band_by_hand():
    assert critical_value(np.array([3.0, 1.0, 2.0]), 0.5) == 2.0
    assert math.isnan(critical_value(np.zeros(0)))
    # one width: |θ* − θ| per draw = 1, 0, 1 → max over the family per draw; q = its 50 % quantile
    band = max_t_band(np.array([0.0, 1.0]), np.array([[1.0, 1.0], [0.0, 1.5], [-1.0, 1.0]]), 0.5,
                      studentize=False)
    assert band.q == 1.0
    lo, hi = band.interval()
    np.testing.assert_array_equal(lo, [-1.0, 0.0])
    np.testing.assert_array_equal(hi, [1.0, 2.0])
    plain = IntervalPolicy(study_method="percentile")
    widened = max_t_band(np.array([0.0]), np.array([[1.0], [0.0], [-1.0]]), 0.5, studentize=False, clusters=6,
                         policy=plain)
    assert widened.q == pytest.approx(math.sqrt(6 / 5))
    off = max_t_band(np.array([0.0]), np.array([[1.0], [0.0], [-1.0]]), 0.5, studentize=False, clusters=6,
                     policy=IntervalPolicy(study_method="percentile", few_block_widening=False))
    assert off.q == 1.0
    # the study method reads q at the expanded level instead: |θ* − θ| = 0, 1, 2, 3 → the
    # linear rule's virtual index 3 · level is the quantile itself
    expanded = max_t_band(np.array([0.0]), np.array([[0.0], [1.0], [-2.0], [3.0]]), 0.5, studentize=False,
                          clusters=6)
    assert expanded.q == pytest.approx(3 * expanded_level(6, 0.5), abs=1e-12)
    assert expanded_level(6, 0.5) > 0.5


def test_an_empty_family_has_no_band():
    band = max_t_band(np.zeros(0), np.zeros((4, 0)))
    assert math.isnan(band.q) and band.interval()[0].shape == (0,)


def test_share_interval_by_hand():
    assert share_interval(0, 64)[0] == 0.0 and share_interval(64, 64)[1] == 1.0
    lo, hi = share_interval(32, 64)
    assert (lo, hi) == pytest.approx((0.38102, 0.61898), abs=1e-5)  # centre 0.5, half z·0.06435/1.06002
    assert all(math.isnan(x) for x in share_interval(0, 0))


finite_or_nan = st.one_of(st.floats(-1e6, 1e6), st.just(math.nan))
draw_vectors = arrays(np.float64, st.integers(1, 60), elements=finite_or_nan)


@settings(max_examples=80, deadline=None)
@given(draw_vectors, st.floats(0.05, 0.99))
def test_low_never_exceeds_high(draws, level):
    lo, hi = interval(draws, level=level).as_tuple()
    assert (math.isnan(lo) and math.isnan(hi)) == (not np.isfinite(draws).any())
    if np.isfinite(draws).any():
        assert lo <= hi
        assert np.nanmin(draws) <= lo and hi <= np.nanmax(draws)


@settings(max_examples=80, deadline=None)
@given(draw_vectors, st.floats(0.05, 0.9), st.floats(0.01, 0.09))
def test_a_higher_level_gives_a_wider_interval(draws, level, more):
    narrow, wide = interval(draws, level=level), interval(draws, level=level + more)
    if np.isfinite(draws).any():
        assert wide.low <= narrow.low and narrow.high <= wide.high


@settings(max_examples=80, deadline=None)
@given(draw_vectors, st.randoms(use_true_random=False))
def test_the_order_of_the_draws_does_not_matter(draws, rnd):
    shuffled = draws.copy()
    rnd.shuffle(shuffled)
    assert interval(shuffled).as_tuple() == pytest.approx(interval(draws).as_tuple(), nan_ok=True)
    np.testing.assert_array_equal(interval(shuffled).as_tuple(), interval(draws).as_tuple())


@settings(max_examples=60, deadline=None)
@given(draw_vectors, st.integers(0, 5))
def test_nan_draws_are_skipped_as_if_absent(draws, n_nan):
    padded = np.concatenate([draws, np.full(n_nan, np.nan)])
    np.testing.assert_array_equal(interval(padded).as_tuple(), interval(draws[~np.isnan(draws)]).as_tuple())


@settings(max_examples=40, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 40), st.integers(1, 6)),
              elements=finite_or_nan), st.floats(0.05, 0.99))
def test_the_column_fast_path_equals_the_quantile_call_bit_for_bit(draws, level):
    np.testing.assert_array_equal(percentile_columns(draws, level), percentile_bounds(draws, level))


def _quantile_calls(path: Path) -> list[str]:
    """Calls of a quantile function by attribute (``np.quantile``, ``x.quantile``) or by a
    name imported from numpy, scipy, pandas or statistics."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                and (n.module or "").split(".")[0] in ("numpy", "scipy", "pandas", "statistics")
                for a in n.names if a.name in QUANTILE_NAMES}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if (isinstance(f, ast.Attribute) and f.attr in QUANTILE_NAMES) or (isinstance(f, ast.Name) and f.id in imported):
            found.append(f"{path.relative_to(HARNESS.parent)}:{node.lineno}: {ast.unparse(f)}")
    return found


def test_the_scan_finds_a_planted_quantile(tmp_path):
    planted = HARNESS / "stats" / "intervals.py"
    assert any("np.quantile" in hit for hit in _quantile_calls(planted))
    other = tmp_path / "x.py"
    other.write_text("from numpy import nanpercentile as p\nimport pandas as pd\n"
                     "a = p([1.0], 5)\nb = pd.Series([1.0]).quantile(0.5)\n", encoding="utf-8")
    assert len(_quantile_calls_in(other)) == 2


def _quantile_calls_in(path: Path) -> list[str]:
    global HARNESS
    saved, HARNESS = HARNESS, path.parent / "harness"
    try:
        return _quantile_calls(path)
    finally:
        HARNESS = saved


def test_no_module_but_the_interval_module_reads_a_quantile():
    """Every interval goes through ``harness/stats/intervals.py``: a quantile anywhere else is a
    second interval rule (or, if it is not an interval, an entry of ``NOT_INTERVALS``)."""
    hits = [hit for p in sorted(HARNESS.rglob("*.py")) if p != HARNESS / "stats" / "intervals.py"
            and str(p.relative_to(HARNESS.parent)) not in NOT_INTERVALS for hit in _quantile_calls(p)]
    assert hits == []
    stale = [m for m in NOT_INTERVALS if not (HARNESS.parent / m).exists() or not _quantile_calls(HARNESS.parent / m)]
    assert stale == []


def _unpoliced_calls(path: Path) -> list[str]:
    """Calls, by a name imported from ``harness.stats.intervals``, of ``interval`` without
    ``n_blocks`` or of the raw percentile primitives."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = {a.asname or a.name: a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
             and n.module == "harness.stats.intervals" for a in n.names}
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names):
            continue
        real = names[node.func.id]
        blocks = any(k.arg == "n_blocks" for k in node.keywords)
        if real in ("percentile_bounds", "percentile_columns") or (real == "interval" and not blocks):
            found.append(f"{path.relative_to(HARNESS.parent)}:{node.lineno}: {ast.unparse(node)[:80]}")
    return found


def test_every_prompt_block_interval_in_the_harness_knows_its_blocks(tmp_path):
    """The policy reads an interval by its P prompt blocks: a call that does not pass them would
    silently read a plain percentile (the scan is shown to find one first)."""
    planted = tmp_path / "x.py"
    planted.write_text("from harness.stats.intervals import interval as iv, percentile_bounds\n"
                       "a = iv(d)\nb = iv(d, n_blocks=6)\nc = percentile_bounds(d)\n", encoding="utf-8")
    global HARNESS
    saved, HARNESS = HARNESS, tmp_path / "harness"
    try:
        assert len(_unpoliced_calls(planted)) == 2
    finally:
        HARNESS = saved
    hits = [hit for p in sorted(HARNESS.rglob("*.py")) if p != HARNESS / "stats" / "intervals.py"
            for hit in _unpoliced_calls(p)]
    assert hits == []


def test_a_spread_of_rounding_residue_does_not_set_the_max_t_quantile():
    """An estimate whose draws equal its point up to a few ulps has no sampling spread: studentized,
    its rounding residue read as t statistics of order one and widened every other interval."""
    from harness.stats.intervals import max_t_band

    rng = np.random.default_rng(0)
    real = rng.normal(size=400)
    flat = 6.466918377220553 + rng.choice([-1, 0, 1], size=400) * 8.9e-16
    alone = max_t_band(np.array([0.0]), real[:, None])
    both = max_t_band(np.array([0.0, 6.466918377220553]), np.stack([real, flat], axis=1))
    assert not both.eligible[1]
    assert both.q == pytest.approx(alone.q)


def test_rho_upper_end_is_withheld_below_its_measured_minimum():
    """ρ's interval misses above with few prompts (coverage 0.865 at 6): its upper end is
    withheld below 20 prompt blocks; a statistic without the setting keeps both ends."""
    from harness.stats.intervals import withheld_ends
    from harness.vocab.metrics import KENDALL_W, PEAK_RHO, RHO, RHO_UPPER_MIN_BLOCKS

    lo, hi = withheld_ends((0.4, 2.8), RHO, 6)
    assert lo == 0.4 and math.isnan(hi)
    assert math.isnan(withheld_ends((0.4, 2.8), PEAK_RHO, RHO_UPPER_MIN_BLOCKS - 1)[1])
    assert withheld_ends((0.4, 2.8), RHO, RHO_UPPER_MIN_BLOCKS) == (0.4, 2.8)
    assert withheld_ends((0.4, 0.8), KENDALL_W, 2) == (0.4, 0.8)
    assert withheld_ends((0.4, 0.8), "not-a-metric", 2) == (0.4, 0.8)


def test_a_one_sided_interval_confirms_a_failure_but_never_that_a_check_holds():
    from harness.checks.evidence import FAILS, INCONCLUSIVE, confirmed_level
    from harness.stats.confirmation import FamilyConfirmation

    def level(lo: float, hi: float) -> str:
        fam = FamilyConfirmation(13, 0.992, 12, 9, {"rho": {"pitch": (lo, hi)}})
        return confirmed_level("<=", 1.0, fam, "rho", "pitch")["status"]

    assert level(1.3, math.nan) == FAILS
    assert level(0.2, math.nan) == INCONCLUSIVE


def test_an_estimate_without_sampling_spread_gets_its_point_as_interval():
    from harness.stats.intervals import max_t_band

    rng = np.random.default_rng(1)
    flat = -1.0 + rng.choice([-1, 0, 1], size=300) * 2.2e-16
    band = max_t_band(np.array([0.0, -1.0]), np.stack([rng.normal(size=300), flat], axis=1))
    lo, hi = band.interval()
    assert (lo[1], hi[1]) == (-1.0, -1.0)


def test_draws_equal_to_the_point_only_where_defined_give_no_interval():
    """At 2 prompts a within-generator spread is undefined on half the resamples and equals the
    point on the rest: that is no evidence of precision, so no zero-width interval."""
    from harness.stats.intervals import max_t_band

    rng = np.random.default_rng(2)
    partial = np.where(rng.random(300) < 0.5, np.nan, 6.47)
    band = max_t_band(np.array([0.0, 6.47]), np.stack([rng.normal(size=300), partial], axis=1))
    lo, hi = band.interval()
    assert np.isnan(lo[1]) and np.isnan(hi[1])


def test_movement_lower_end_is_withheld_below_its_measured_minimum():
    """Movement is biased high with few prompts (coverage 0.745 at 6, misses below)."""
    from harness.stats.intervals import withheld_ends
    from harness.vocab.metrics import MOVEMENT, MOVEMENT_LOWER_MIN_BLOCKS, PEAK_MOVEMENT

    lo, hi = withheld_ends((0.4, 2.8), MOVEMENT, 6)
    assert math.isnan(lo) and hi == 2.8
    assert math.isnan(withheld_ends((0.4, 2.8), PEAK_MOVEMENT, 12)[0])
    assert withheld_ends((0.4, 2.8), MOVEMENT, MOVEMENT_LOWER_MIN_BLOCKS) == (0.4, 2.8)
