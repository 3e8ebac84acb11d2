"""The typed results API for audit authors: summary objects, ``AuditCheck.metric`` and its one
rule for missing data (hand-computed values, a Hypothesis property, a real summary entry)."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.checks import assertions
from harness.checks.assertions import AuditCheck, Bound, CheckSkipped
from harness.checks.thresholds import Thresholds
from harness.stats.summary import (
    EvaluatorSummary,
    Interval,
    MetricError,
    PanelSummary,
    Status,
)

ENTRY = {
    "rho": {"pitch": 1.5, "yaw": 0.25, "lighting": None},
    "dispersion": {"pitch": 0.125, "lighting": 0.0625},
    "kendall_w": {"pitch": 0.75, "yaw": float("nan")},
    "top1_count": {"pitch": 2, "yaw": None},
    "discrimination": {"scrambled": 0.875, "keep_half": 0.5},
    "peak_rho": 1.5,
    "peak_rho_ci": [1.25, 2.0],
    "template_rho": None,
    "min_w": 0.75,
    "max_top1": 2,
    "best_view_inflation": 1.0625,
    "content_accuracy": 0.6875,
    "envelopes": {"strict": 12, "sign_crossing": 3, "tie_boundary": 0, "stable_winner": "faithful"},
    "logo_peak_rho_range": [1.0, 3.0],
    "failed": 4,
    "failed_share": 0.03125,
    "intervals": {
        "rho": {"pitch": [1.25, 1.75], "yaw": [None, 0.5]},
        "dispersion": {"pitch": [0.0625, 0.25]},
        "discrimination": {"scrambled": [0.75, 1.0], "keep_half": None},
    },
}

PANEL = {
    "evaluators": {"e": ENTRY},
    "reversals": {"descriptive": 5, "pointwise": 2, "simultaneous": 1},
    "simultaneous": {"q95": 2.5, "contrasts": 90, "B": 200, "seed": 42},
}

THRESHOLDS = Thresholds.from_table(
    {
        "peak_rho_max": 1.0,
        "min_kendall_w": 0.5,
        "max_top1_count": 1,
        "min_scramble_discrimination": 0.6,
        "min_removal_discrimination": 0.7,
        "max_failed_share": 0.05,
        "max_sign_crossings": 0,
        "max_confirmed_reversals": 0,
        "custom": {"max_lighting_dispersion": 0.05},
    }
)


class Skip(Exception):
    pass


def checker(evaluator: str = "e", table: Thresholds = THRESHOLDS) -> tuple[AuditCheck, list]:
    seen: list = []

    def skip(reason: str) -> None:
        raise Skip(reason)

    check = AuditCheck(
        evaluator=evaluator,
        thresholds=table.for_evaluator(evaluator),
        card_id="ecc-x",
        record=seen.append,
        skip=skip,
        declared=table.is_declared,
    )
    return check, seen


@pytest.fixture
def summary() -> EvaluatorSummary:
    return EvaluatorSummary.from_entry("e", ENTRY)


def test_summary_fields_read_the_entry_with_nan_as_none(summary):
    assert summary.rho["pitch"] == 1.5 and summary.rho["lighting"] is None
    assert summary.kendall_w["yaw"] is None  # NaN in the entry
    assert summary.top1_count == {"pitch": 2, "yaw": None}
    assert summary.peak_rho_ci == Interval(1.25, 2.0)
    assert summary.envelopes.strict == 12 and summary.envelopes.stable_winner == "faithful"
    assert summary.failed == 4 and summary.failed_share == 0.03125
    assert summary.template_rho is None
    with pytest.raises(TypeError):
        summary.rho["pitch"] = 0.0  # read-only
    with pytest.raises(dataclasses.FrozenInstanceError):
        summary.peak_rho = 0.0


def test_interval_lookup(summary):
    assert summary.interval("rho", "pitch") == Interval(1.25, 1.75)
    assert summary.interval("rho", "yaw") == Interval(None, 0.5)
    assert summary.interval("rho", "background") is None  # not measured
    assert summary.interval("discrimination", "keep_half") is None
    assert summary.interval("peak_rho") == Interval(1.25, 2.0)
    assert summary.interval("kendall_w", "pitch") is None  # no interval for W
    with pytest.raises(MetricError, match="did you mean rho"):
        summary.interval("rhoo", "pitch")


def test_an_entry_read_from_summary_json_has_no_intervals():
    entry = {k: v for k, v in ENTRY.items() if k != "intervals"}
    summary = EvaluatorSummary.from_entry("e", entry)
    assert summary.interval("rho", "pitch") is None
    assert summary.metric("rho", "pitch").value == 1.5


@pytest.mark.parametrize(
    ("name", "key", "label", "value", "threshold", "status"),
    [
        ("rho", "pitch", "rho[pitch]", 1.5, "peak_rho_max", Status.MEASURED),
        ("rho", "lighting", "rho[lighting]", None, "peak_rho_max", Status.NO_DATA),
        ("rho", "background", "rho[background]", None, "peak_rho_max", Status.NOT_IN_PROFILE),
        ("dispersion", "lighting", "dispersion[lighting]", 0.0625, None, Status.MEASURED),
        ("kendall_w", "yaw", "kendall_w[yaw]", None, "min_kendall_w", Status.NO_DATA),
        ("top1_count", "pitch", "top1_count[pitch]", 2.0, "max_top1_count", Status.MEASURED),
        ("discrimination", "scrambled", "discrimination[scrambled]", 0.875, "min_scramble_discrimination", Status.MEASURED),
        ("discrimination", "keep_half", "discrimination[keep_half]", 0.5, "min_removal_discrimination", Status.MEASURED),
        ("discrimination", "worst_objects", "discrimination[worst_objects]", None, "min_worst_objects_discrimination", Status.NOT_IN_PROFILE),
        ("peak_rho", None, "peak_rho", 1.5, "peak_rho_max", Status.MEASURED),
        ("best_view_inflation", None, "best_view_inflation", 1.0625, "max_best_view_inflation", Status.MEASURED),
        ("failed_share", None, "failed share", 0.03125, "max_failed_share", Status.MEASURED),
        ("envelopes", "strict", "strictly ordered pairs", 12.0, "min_strict_pairs", Status.MEASURED),
        ("envelopes", "sign_crossing", "sign-crossing pairs", 3.0, "max_sign_crossings", Status.MEASURED),
        ("envelopes", "tie_boundary", "tie-boundary pairs", 0.0, None, Status.MEASURED),
    ],
)
def test_metric_lookup_names_label_value_threshold_and_status(summary, name, key, label, value, threshold, status):
    found = summary.metric(name, key)
    assert (found.label, found.value, found.threshold, found.status) == (label, value, threshold, status)
    assert (found.reason == "") == (status is Status.MEASURED)


@pytest.mark.parametrize(
    ("name", "key", "match"),
    [
        ("rhoo", "pitch", "unknown metric 'rhoo' .did you mean rho"),
        ("rho", "pitchh", "rho has no factor 'pitchh' .did you mean pitch"),
        ("kendall_w", "paraphrase", "kendall_w has no shared factor 'paraphrase'"),
        ("rho", None, "needs a factor"),
        ("peak_rho", "pitch", "takes no key"),
        ("envelopes", "strictly", "did you mean strict"),
    ],
)
def test_a_misspelt_metric_or_key_is_an_error_not_an_absence(summary, name, key, match):
    with pytest.raises(MetricError, match=match):
        summary.metric(name, key)


def test_panel_summary_reads_reversals_band_and_evaluators():
    panel = PanelSummary.from_summary(PANEL)
    assert panel.reversals.simultaneous == 1 and panel.reversals.descriptive == 5
    assert (panel.band.q95, panel.band.contrasts, panel.band.bootstrap, panel.band.seed) == (2.5, 90, 200, 42)
    assert panel.evaluators["e"].rho["pitch"] == 1.5
    found = panel.metric("reversals", "simultaneous")
    assert (found.label, found.value, found.threshold) == (
        "confirmed reversals (simultaneous band)", 1.0, "max_confirmed_reversals"
    )


def test_check_metric_gives_the_outcome_of_the_hand_written_check(summary):
    # results.json stays as it was: the typed check records exactly the old call's outcome
    by_metric, new = checker()
    by_hand, old = checker()
    with pytest.raises(AssertionError, match=r"ρ\[pitch\] of e 1\.50 \(95% CI \[1\.25, 1\.75\]\), must be ≤ 1\.00 \(peak_rho_max\): fails"):
        by_metric.metric(summary, "rho", "pitch")
    with pytest.raises(AssertionError):
        by_hand("rho[pitch]", 1.5, "peak_rho_max", interval=[1.25, 1.75])
    assert new == old
    assert new[0]["passed"] is False and new[0]["interval"] == [1.25, 1.75]
    by_metric.metric(summary, "kendall_w", "pitch")  # 0.75 >= 0.5
    by_hand("kendall_w[pitch]", 0.75, "min_kendall_w")
    assert new == old and new[-1]["op"] == ">="


def test_lower_bound_check_tests_the_interval_end(summary):
    check, seen = checker()
    with pytest.raises(AssertionError, match=r"peak ρ of e: the bootstrap lower bound 1\.25 \(estimate 1\.50"):
        check.metric(summary, "peak_rho", bound=Bound.LOWER)
    assert seen[0]["compare"] == "lower" and seen[0]["tested"] == 1.25
    lenient = Thresholds.from_table({"peak_rho_max": 1.3})
    check, seen = checker(table=lenient)
    assert check.metric(summary, "peak_rho", bound="lower")["passed"]  # 1.25 <= 1.3
    check.metric(summary, "rho", "yaw", bound=Bound.UPPER)  # 0.5 <= 1.3
    with pytest.raises(AssertionError, match=r"its bootstrap interval is not available \(the bootstrap is off"):
        check.metric(summary, "rho", "yaw", bound=Bound.LOWER)  # no lower end
    with pytest.raises(ValueError, match="bound must be one of"):
        check.metric(summary, "peak_rho", bound="low")


def test_the_removed_compare_keyword_is_an_error_and_bound_records_the_same_outcome():
    check, seen = checker()
    with pytest.raises(TypeError, match="compare"):
        check("peak_rho", 1.5, "peak_rho_max", interval=[0.5, 2.0], compare="lower")
    with pytest.raises(TypeError, match="compare"):
        assertions.check("peak_rho", 1.5, "<=", 1.0, interval=[0.5, 2.0], compare="lower")
    assert not seen
    check("peak_rho", 1.5, "peak_rho_max", interval=[0.5, 2.0], bound=Bound.LOWER)
    assert seen[0]["compare"] == "lower" and seen[0]["passed"]  # the outcome's field keeps its name


def test_custom_threshold_names_and_metrics_without_a_default(summary):
    check, seen = checker()
    with pytest.raises(
        AssertionError, match=r"dispersion\[lighting\] of e 0\.06 \(no interval\), must be ≤ 0\.05 \(max_lighting_dispersion\): fails"
    ):
        check.metric(summary, "dispersion", "lighting", threshold="max_lighting_dispersion")
    assert seen[0]["threshold_name"] == "max_lighting_dispersion" and seen[0]["op"] == "<="
    with pytest.raises(AssertionError, match="has no default threshold"):
        check.metric(summary, "dispersion", "lighting")
    with pytest.raises(AssertionError, match="did you mean max_lighting_dispersion"):
        check.metric(summary, "dispersion", "lighting", threshold="max_lighting_dispersoin")


def test_missing_data_reasons(summary):
    check, seen = checker()
    with pytest.raises(Skip, match=r"rho\[background\] is not measured in this run"):
        check.metric(summary, "rho", "background")
    with pytest.raises(Skip, match="no threshold min_strict_pairs declared for e"):
        check.metric(summary, "envelopes", "strict")
    with pytest.raises(AssertionError, match=r"ρ\[lighting\] of e: its estimate is not available \(undefined on this run's records \(4 failed\)"):
        check.metric(summary, "rho", "lighting")
    assert seen[-1]["reason"].startswith("undefined") and seen[-1]["passed"] is False
    all_failed = dataclasses.replace(summary, failed=96, failed_share=1.0)
    with pytest.raises(AssertionError, match="no successful records: all 96 measurements failed"):
        check.metric(all_failed, "kendall_w", "yaw")
    # outside pytest (no skip hook) a skip is a typed exception, not a KeyError
    bare = AuditCheck(evaluator="e", thresholds={})
    with pytest.raises(CheckSkipped, match="no threshold peak_rho_max"):
        bare.metric(summary, "peak_rho")


def test_panel_metric_check():
    check, seen = checker(evaluator="panel")
    with pytest.raises(AssertionError, match=r"confirmed reversals \(simultaneous band\) of panel 1\.00 \(no interval\), must be ≤ 0\.00 \(max_confirmed_reversals\): fails"):
        check.metric(PanelSummary.from_summary(PANEL), "reversals", "simultaneous")
    assert seen[0]["threshold_name"] == "max_confirmed_reversals"


def test_every_key_of_a_real_summary_entry_is_a_field():
    from harness.stats.audit_stats import compute_audit
    from harness.stats.synthetic import SyntheticSpec, synthetic_records

    records = synthetic_records(SyntheticSpec(evaluators=1, prompt_free=0, prompts=4, templates=4, failure_rate=0.02))
    doc = compute_audit(records, bootstrap=20, seed=1).to_summary()
    (name, entry), = doc["evaluators"].items()
    summary = EvaluatorSummary.from_entry(name, entry)
    fields = {f.name for f in dataclasses.fields(EvaluatorSummary)}
    assert set(entry) <= fields
    for key in ("rho", "dispersion", "kendall_w", "top1_count", "discrimination"):
        assert dict(getattr(summary, key)) == entry[key], key
    assert summary.peak_rho == entry["peak_rho"] and list(summary.peak_rho_ci) == entry["peak_rho_ci"]
    assert summary.failed_share == entry["failed_share"] and summary.failed == entry["failed"]
    assert dataclasses.asdict(summary.envelopes) == entry["envelopes"]
    panel = PanelSummary.from_summary(doc)
    assert panel.reversals.simultaneous == doc["reversals"]["simultaneous"]
    assert panel.band.bootstrap == doc["simultaneous"]["B"] == 20


# ------------------------------------------------------------------ the missing-data rule

VALUES = st.one_of(
    st.floats(min_value=-10, max_value=10, allow_nan=False),
    st.just(float("nan")),
    st.none(),
)


@given(
    present=st.booleans(),
    value=VALUES,
    threshold_state=st.sampled_from(["declared", "undeclared", "unknown"]),
    limit=st.floats(min_value=-10, max_value=10, allow_nan=False),
    all_failed=st.booleans(),
)
def test_one_rule_for_missing_data(present, value, threshold_state, limit, all_failed):
    """unknown threshold: fail; else not in profile: skip; undeclared: skip; no data: fail with
    a reason; else pass exactly when the value is within the limit."""
    entry = {
        "rho": {"pitch": value} if present else {},
        "failed": 8 if all_failed else 1,
        "failed_share": 1.0 if all_failed else 0.125,
    }
    summary = EvaluatorSummary.from_entry("e", entry)
    table = Thresholds.from_table({"peak_rho_max": limit} if threshold_state == "declared" else {})
    name = "peak_rho_mx" if threshold_state == "unknown" else "peak_rho_max"
    check, seen = checker(table=table)
    measured = value is not None and math.isfinite(value)
    try:
        check.metric(summary, "rho", "pitch", threshold=name)
        result = "passed"
    except Skip:
        result = "skipped"
    except AssertionError as exc:
        result, text = "failed", str(exc)
    if threshold_state == "unknown":
        assert result == "failed" and "unknown threshold" in text and not seen
    elif not present or threshold_state == "undeclared":
        assert result == "skipped" and not seen
    elif not measured:
        assert result == "failed" and seen[0]["passed"] is False
        assert ("no successful records" in seen[0]["reason"]) == all_failed
        assert seen[0]["reason"] in text
    else:
        assert result == ("passed" if value <= limit else "failed")
        assert seen[0]["estimate"] == value and seen[0]["threshold"] == limit


def test_a_skip_names_the_real_cause_when_the_run_knows_it(summary):
    # regression: "its profile has no probe keep_half" on object scenes, whose profile has it
    from harness.stats.summary import metric_kind

    asked = []

    def absent(name, key):
        asked.append((metric_kind(name), key))
        return "probe keep_half edits the layout of a room and this run's scenes are single objects"

    def skip(reason):
        raise Skip(reason)

    check = AuditCheck(evaluator="e", thresholds=THRESHOLDS.for_evaluator("e"), skip=skip,
                       declared=THRESHOLDS.is_declared, absent=absent)
    with pytest.raises(Skip, match="single objects"):
        check.metric(summary, "discrimination", "biggest_only")  # absent from the entry
    assert asked == [("probe", "biggest_only")]
