"""Protocol movement M: hand-computed values, invariances, draws, and the two-release known answer."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.stats.movement import (
    factor_movement,
    movement,
    movement_draws,
    peak_movement,
    peak_movement_draws,
    within_generator_variance,
    within_generator_variance_draws,
)
from harness.stats.rho import rho
from harness.stats.table import EvaluatorScores, FactorScores


def _table(baseline: np.ndarray, factors: dict[str, np.ndarray]) -> EvaluatorScores:
    g, p = baseline.shape
    return EvaluatorScores(
        evaluator="e", generators=tuple(f"g{i}" for i in range(g)), prompts=tuple(f"p{i}" for i in range(p)),
        baseline=baseline,
        factors={f: FactorScores(factor=f, levels=tuple(str(i) for i in range(s.shape[-1])), scores=s)
                 for f, s in factors.items()},
        probes={}, probe_recorded={}, prompt_free=False, n_records=0, n_failed=0)


def test_movement_by_hand():
    baseline = np.array([[1.0, 3.0], [5.0, 7.0]])  # within-generator sample variances 2 and 2
    levels = np.array([[[1.0, 3.0], [3.0, 3.0]], [[5.0, 5.0], [7.0, 9.0]]])  # level variances 1, 0, 0, 1
    assert within_generator_variance(baseline) == pytest.approx(2.0)
    assert factor_movement(levels, baseline) == pytest.approx(math.sqrt(0.5 / 2.0))


def test_undefined_without_two_prompts_or_without_c0_spread():
    assert math.isnan(within_generator_variance(np.array([[1.0], [2.0]])))
    flat = np.array([[1.0, 1.0], [2.0, 2.0]])
    assert math.isnan(factor_movement(np.ones((2, 2, 3)), flat))


def test_nan_cells_are_skipped():
    baseline = np.array([[1.0, 3.0, np.nan], [5.0, 7.0, 9.0]])  # variances 2 and 4
    assert within_generator_variance(baseline) == pytest.approx(3.0)


@settings(max_examples=40, deadline=None)
@given(a=st.floats(0.05, 20.0), b=st.floats(-5.0, 5.0), sign=st.sampled_from([1.0, -1.0]),
       seed=st.integers(0, 10_000))
def test_affine_rescaling_leaves_movement_unchanged(a, b, sign, seed):
    rng = np.random.default_rng(seed)
    baseline, sweep = rng.normal(size=(3, 4)), rng.normal(size=(3, 4, 5))
    before = factor_movement(sweep, baseline)
    after = factor_movement(sign * a * sweep + b, sign * a * baseline + b)
    assert after == pytest.approx(before, rel=1e-9)


@settings(max_examples=40, deadline=None)
@given(offsets=st.lists(st.floats(-50.0, 50.0), min_size=3, max_size=3), seed=st.integers(0, 10_000))
def test_moving_the_generators_apart_leaves_movement_unchanged(offsets, seed):
    """A per-generator constant changes ρ's denominator, never M."""
    rng = np.random.default_rng(seed)
    baseline, sweep = rng.normal(size=(3, 4)), rng.normal(size=(3, 4, 5))
    shift = np.asarray(offsets)
    moved = factor_movement(sweep + shift[:, None, None], baseline + shift[:, None])
    assert moved == pytest.approx(factor_movement(sweep, baseline), rel=1e-9)


def test_draws_at_unit_weights_are_the_point():
    rng = np.random.default_rng(0)
    t = _table(rng.normal(size=(4, 6)), {"lighting": rng.normal(size=(4, 6, 3)),
                                        "pitch": rng.normal(size=(4, 6, 4))})
    ones = np.ones((3, 6))
    draws = movement_draws(t, ones)
    for f, value in movement(t).items():
        np.testing.assert_allclose(draws[f], value, rtol=1e-12)
    np.testing.assert_allclose(peak_movement_draws(t, ones), peak_movement(t), rtol=1e-12)
    np.testing.assert_allclose(within_generator_variance_draws(t.baseline, ones),
                               within_generator_variance(t.baseline), rtol=1e-12)


def test_a_draw_of_one_prompt_has_no_spread():
    t = _table(np.array([[1.0, 3.0, 2.0], [5.0, 7.0, 6.0]]), {"lighting": np.ones((2, 3, 3))})
    assert math.isnan(movement_draws(t, np.array([[3.0, 0.0, 0.0]]))["lighting"][0])
    assert np.isfinite(movement_draws(t, np.array([[1.0, 1.0, 1.0]]))["lighting"][0])


def test_a_run_of_two_prompts_has_no_movement():
    """Two prompts: each generator's c0 spread is one difference, and half the resamples have none."""
    t = _table(np.array([[1.0, 3.0], [5.0, 7.0]]), {"lighting": np.ones((2, 2, 3))})
    assert math.isnan(movement(t)["lighting"]) and math.isnan(peak_movement(t))
    assert np.isnan(movement_draws(t, np.ones((4, 2)))["lighting"]).all()


def test_the_lighting_fragile_release_ranks_worse_where_rho_ranks_it_steadier():
    """Release v2 spreads the generators ten times further apart at c0 and collapses every score
    under most lighting maps; v1 moves a little under every factor. ρ calls v2 the steadier
    release; M calls it the more fragile one, and for lighting."""
    rng = np.random.default_rng(7)
    g, p = 6, 6
    gen = np.linspace(-1, 1, g)[:, None]
    scene = rng.normal(scale=0.3, size=(g, p))
    v1_base = 5 + 0.2 * gen + scene
    v1 = {f: v1_base[:, :, None] + rng.normal(scale=0.3, size=(g, p, 8)) for f in ("lighting", "pitch")}
    v2_base = 5 + 2.0 * gen + scene
    collapse = np.array([1, 1, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2])  # 6 of 8 maps
    v2 = {"lighting": v2_base[:, :, None] * collapse,
          "pitch": v2_base[:, :, None] + rng.normal(scale=0.3, size=(g, p, 8))}
    t1, t2 = _table(v1_base, v1), _table(v2_base, v2)
    assert rho(v2["lighting"], v2_base) < rho(v1["lighting"], v1_base)
    m1, m2 = movement(t1), movement(t2)
    assert m2["lighting"] > 3 * m1["lighting"]
    assert max(m2, key=m2.__getitem__) == "lighting"
    assert m2["pitch"] == pytest.approx(m1["pitch"], rel=0.3)


def test_the_registry_rows_estimate_movement_through_the_engine():
    from harness.stats import engine
    from harness.vocab.metrics import MOVEMENT, PEAK_MOVEMENT, metric

    t = _sample_table()
    sample = engine.Sample.points_only(t)
    values = {e.subject: e.point for e in metric(MOVEMENT).estimate(sample)}
    assert values == pytest.approx(movement(t))
    (peak_est,) = metric(PEAK_MOVEMENT).estimate(sample)
    assert peak_est.point == pytest.approx(peak_movement(t))


def _sample_table() -> EvaluatorScores:
    rng = np.random.default_rng(11)
    return _table(rng.normal(size=(3, 5)), {"lighting": rng.normal(size=(3, 5, 4)),
                                           "yaw": rng.normal(scale=0.1, size=(3, 5, 2))})


def test_no_factor_carries_a_peak_of_zero():
    from harness.stats.movement import peak_movement_factor

    assert peak_movement_factor({"template": 0.0, "pitch": 0.0}) is None
    assert peak_movement_factor({"template": 0.0, "pitch": 0.3, "yaw": None}) == "pitch"
    assert peak_movement_factor({}) is None
