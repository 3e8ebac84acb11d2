"""Template slot effects (Table 3), best template, best/worst levels, lighting, LOGO."""

from __future__ import annotations

import numpy as np
import pytest

from harness.stats.levels import (
    best_worst,
    lighting_correlation,
    mean_standardised_shift,
    standardised_shift,
)
from harness.stats.logo import logo_peak_rho
from harness.stats.rho import peak, rho
from harness.stats.template_effects import (
    NONE_LABEL,
    average_slot_effects,
    slot_effects,
    template_gain,
)

SLOTS = {
    "t1": {"viewpoint": "top-down", "noun": "view"},
    "t2": {"viewpoint": "top-down", "noun": "photo"},
    "t3": {"viewpoint": None, "noun": "view"},
    "t4": {"viewpoint": None, "noun": None},
}
RULES = {"viewpoint": {}, "noun": {"viewpoint": "present"}}


def test_slot_effects_hand_computed():
    means = {"t1": 12.0, "t2": 8.0, "t3": 6.0, "t4": 2.0}
    eff = slot_effects(means, SLOTS, RULES)
    # viewpoint: top-down mean 10, none mean 4 -> slot mean 7
    vp = eff["viewpoint"]
    assert vp.shifts["top-down"] == pytest.approx(3 / 7)
    assert vp.shifts[NONE_LABEL] == pytest.approx(-3 / 7)
    assert vp.dispersion == pytest.approx(6 / 7)
    # noun, matched on viewpoint present: view 12, photo 8 -> mean 10
    noun = eff["noun"]
    assert noun.n_templates == 2
    assert noun.shifts == pytest.approx({"view": 0.2, "photo": -0.2})
    assert list(noun.shifts) == ["view", "photo"]  # sorted best first
    avg = average_slot_effects([eff, slot_effects({k: 2 * v for k, v in means.items()}, SLOTS, RULES)])
    assert avg["noun"].dispersion == pytest.approx(0.4)


def test_template_gain_and_default_rank():
    # (G=1, P=2, T=3): template 'b' best, default 'a' second
    scores = np.array([[[2.0, 3.0, 1.0], [4.0, 5.0, 0.5]]])
    gain = template_gain(scores, ("a", "b", "c"), "a")
    assert gain.best == "b"
    assert gain.gain == pytest.approx(np.median([1.5, 1.25]) - 1)
    assert gain.default_rank == 2
    assert template_gain(scores, ("a", "b", "c"), "zzz") is None


def test_best_worst_level():
    scores = np.zeros((2, 2, 3))
    scores[..., 1] = 5.0
    scores[..., 2] = -1.0
    assert best_worst(scores, ("x", "y", "z")) == ("y", "z")


def test_standardised_shift_and_correlation():
    # one scene, levels shift -1, 0, +1 around the scene mean; pooled SD sqrt(2/3)
    scores = np.array([[[1.0, 2.0, 3.0]]])
    z = standardised_shift(scores)
    np.testing.assert_allclose(z, np.array([-1.0, 0.0, 1.0]) / np.sqrt(2 / 3))
    # scale-free: a second evaluator on a 10x scale gives the same z
    np.testing.assert_allclose(mean_standardised_shift([scores, 10 * scores]), z)
    scalars = {"a": (-3.0, 5000.0), "b": (-2.0, 6000.0), "c": (-1.0, 5500.0)}
    corr = lighting_correlation(("a", "b", "c"), z, scalars)
    assert corr["ev"] == pytest.approx(1.0)
    assert corr["cct"] == pytest.approx(0.5)


def test_logo_range_brackets_recomputed_peaks():
    rng = np.random.default_rng(0)
    base = rng.normal(size=(4, 6)) + np.arange(4)[:, None]
    factors = {"a": rng.normal(size=(4, 6, 3)), "b": 2 * rng.normal(size=(4, 6, 5))}
    lo, hi = logo_peak_rho(factors, base)
    peaks = [
        peak({f: rho(np.delete(s, g, 0), np.delete(base, g, 0)) for f, s in factors.items()})[1]
        for g in range(4)
    ]
    assert (lo, hi) == (min(peaks), max(peaks))
    assert all(np.isnan(logo_peak_rho(factors, base[:2])))
