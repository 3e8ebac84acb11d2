"""Assertion helpers (messages, NaN handling, interval ends) and threshold tables."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.checks.assertions import (
    AuditCheck,
    Bound,
    assert_at_least,
    assert_at_most,
    check,
    message,
)
from harness.checks.thresholds import KNOWN, ThresholdError, Thresholds, direction
from harness.vocab.probes import probe_names, probe_threshold


def test_failure_message_has_estimate_interval_threshold_and_card():
    with pytest.raises(AssertionError) as info:
        assert_at_most(
            "peak_rho", 1.42, 1.0, threshold_name="peak_rho_max", interval=[1.05, 2.1],
            evaluator="clip-vit-b32", card_id="ecc-v1-sha256:" + "ab" * 32,
        )
    text = str(info.value)
    assert text == (
        "peak ρ of clip-vit-b32 1.42 (95% CI [1.05, 2.10]), must be ≤ 1.00 (peak_rho_max): fails "
        "[card ecc-v1-sha256:" + "ab" * 32 + "]"
    )
    assert "\n" not in text  # one line: the terminal prints it as it is


def test_a_passing_check_reads_holds_and_an_interval_over_few_prompts_is_flagged():
    from harness.checks.wording import SMALL_SAMPLE_BLOCKS, rule

    out = check("rho[pitch]", 0.5, "<=", 1.0, threshold_name="peak_rho_max", interval=[0.41, 200.1])
    assert rule(out) == "ρ[pitch] 0.50 (95% CI [0.41, 200.10]), must be ≤ 1.00 (peak_rho_max): holds"
    small = {**out, "blocks": 2}
    assert "95% CI [0.41, 200.10]; small sample: 2 prompt blocks, under 10)" in rule(small)
    enough = {**out, "blocks": SMALL_SAMPLE_BLOCKS}
    assert "small sample" not in rule(enough)
    assert "small sample" not in rule({**out, "interval": None, "blocks": 2})  # no interval, no flag


def test_lower_bound_comparison_reports_the_bound():
    out = check("peak_rho", 1.4, "<=", 1.0, interval=[0.8, 2.0], bound=Bound.LOWER)
    assert out["passed"] and out["tested"] == 0.8
    with pytest.raises(AssertionError, match=r"the bootstrap lower bound 1\.20 \(estimate 1\.40, 95% CI \[1\.20, 2\.00\]\), must be ≤ 1\.00"):
        assert_at_most("peak_rho", 1.4, 1.0, interval=[1.2, 2.0], bound=Bound.LOWER)


@pytest.mark.parametrize("bad", [math.nan, None, "n/a", math.inf])
def test_missing_estimate_fails_never_passes(bad):
    with pytest.raises(AssertionError, match="not available"):
        assert_at_least("discrimination", bad, 0.5)


def test_at_least_direction_and_boundary():
    assert assert_at_least("w", 0.5, 0.5)["passed"]
    with pytest.raises(AssertionError, match=r"w 0\.49 \(no interval\), must be ≥ 0\.50 \(min_kendall_w\): fails"):
        assert_at_least("w", 0.49, 0.5, threshold_name="min_kendall_w")


@given(st.floats(allow_nan=False, allow_infinity=False, width=32), st.floats(allow_nan=False, allow_infinity=False, width=32))
def test_check_agrees_with_comparison(estimate, threshold):
    assert check("m", estimate, "<=", threshold)["passed"] == (estimate <= threshold)
    assert check("m", estimate, ">=", threshold)["passed"] == (estimate >= threshold)
    message(check("m", estimate, "<=", threshold))  # always renders


def test_audit_check_records_and_uses_declared_direction():
    seen = []
    checker = AuditCheck(
        evaluator="e", thresholds={"min_kendall_w": 0.5, "peak_rho_max": 1.0}, card_id=lambda: "ecc-x", record=seen.append
    )
    checker("kendall_w[pitch]", 0.7, "min_kendall_w")
    with pytest.raises(AssertionError, match=r"ρ\[pitch\] of e 3\.00"):
        checker("rho[pitch]", 3.0, "peak_rho_max")
    assert [o["passed"] for o in seen] == [True, False]
    assert seen[1]["card_id"] == "ecc-x" and seen[1]["op"] == "<="


def test_audit_check_skips_undeclared_threshold():
    reasons = []

    def skip(reason):
        reasons.append(reason)
        raise RuntimeError("skipped")

    checker = AuditCheck(evaluator="e", thresholds={}, skip=skip)
    with pytest.raises(RuntimeError):
        checker("strict pairs", 3, "min_strict_pairs")
    assert "no threshold min_strict_pairs declared for e" in reasons[0]


def test_a_misspelt_threshold_in_a_test_fails_instead_of_skipping():
    # regression: any undeclared name skipped the check, so a typo in an audit file gated nothing
    table = Thresholds.from_table({"peak_rho_max": 1.0, "custom": {"max_lighting_dispersion": 0.1}})
    checker = AuditCheck(
        evaluator="e",
        thresholds=table.for_evaluator("e"),
        skip=lambda reason: pytest.fail("skipped: " + reason),
        declared=table.is_declared,
    )
    with pytest.raises(AssertionError, match=r"unknown threshold .max_lighting_dispersoin..*did you mean max_lighting_dispersion"):
        checker("dispersion", 0.05, "max_lighting_dispersoin")
    assert checker("dispersion", 0.05, "max_lighting_dispersion")["passed"]


def test_thresholds_overrides_apply_in_order_with_globs():
    t = Thresholds.from_table(
        {
            "peak_rho_max": 1.0,
            "min_kendall_w": 0.5,
            "overrides": {"clip-*": {"peak_rho_max": 2.0}, "clip-vit-l14": {"peak_rho_max": 3.0}},
        }
    )
    assert t.for_evaluator("siglip")["peak_rho_max"] == 1.0
    assert t.for_evaluator("clip-vit-b32")["peak_rho_max"] == 2.0
    assert t.for_evaluator("clip-vit-l14") == {"min_kendall_w": 0.5, "peak_rho_max": 3.0}


@pytest.mark.parametrize(
    ("table", "match"),
    [
        ({"peak_rho_mx": 1.0}, "unknown threshold 'peak_rho_mx'"),
        ({"max_top1_cont": 1.0}, "did you mean max_top1_count"),
        ({"lighting_limit": 1.0}, r"thresholds\.custom"),
        # regression: a reordered known name passed as a custom max_ threshold, removing 18 checks
        ({"max_peak_rho": 1.0}, "did you mean peak_rho_max"),
        ({"max_lighting_dispersion": 0.1}, "unknown threshold 'max_lighting_dispersion'"),
        ({"custom": {"lighting": 0.1}}, "must be named min_<what> or max_<what>"),
        ({"custom": {"peak_rho_max": 0.1}}, "is a known threshold"),
        ({"custom": 3}, "custom must be a table"),
        ({"custom": {"max_a": 1.0}, "overrides": {"x": {"max_b": 1}}}, "unknown threshold 'max_b'"),
        ({"peak_rho_max": "high"}, "must be a finite number"),
        ({"peak_rho_max": True}, "must be a finite number"),
        ({"overrides": {"x": 3}}, "inline table"),
        ({"overrides": {"x": {"nope": 1}}}, r"overrides\.x"),
    ],
)
def test_bad_threshold_tables_are_rejected(table, match):
    with pytest.raises(ThresholdError, match=match):
        Thresholds.from_table(table)


def test_custom_min_max_thresholds_take_their_direction_from_the_prefix():
    t = Thresholds.from_table(
        {
            "custom": {"max_lighting_dispersion": 0.1, "min_pitch_w": 0.3},
            "overrides": {"y*": {"min_pitch_w": 0.5}},
        }
    )
    assert t.for_evaluator("x") == {"max_lighting_dispersion": 0.1, "min_pitch_w": 0.3}
    assert t.for_evaluator("yz")["min_pitch_w"] == 0.5
    assert t.is_declared("min_pitch_w") and t.is_declared("peak_rho_max")
    assert not t.is_declared("min_pitch_ww")
    assert direction("max_lighting_dispersion") == "max" and direction("min_pitch_w") == "min"


def test_repository_thresholds_parse_and_every_probe_has_a_gate_name():
    import tomllib

    from harness.core.paths import REPO_ROOT

    data = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
    Thresholds.from_table(data["tool"]["t3d-audit"]["thresholds"])
    assert {probe_threshold(p) for p in probe_names()} <= set(KNOWN)
    assert direction("peak_rho_max") == "max" and direction("min_kendall_w") == "min"
