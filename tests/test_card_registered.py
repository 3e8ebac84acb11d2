"""Statistics registered from outside the study's code appear on the card (and only then).

A metric registered with a ``compute`` and ``card`` among its places gives every card a
``registered_metrics`` group: its value(s) from the summary entry's ``registered`` mapping,
label, unit, the threshold that applies to the evaluator and whether it passes. With nothing
registered the card, and so its id, is what it always was.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterator
from typing import Any

import pytest

from harness.cards import NOT_REPORTED, build_card, validate_card
from harness.cards.assemble import assemble_card
from harness.checks.thresholds import layered
from harness.checks.wording import metric_name
from harness.vocab.metrics import (
    METRICS,
    MetricSpec,
    ThresholdSpec,
    computed_metrics,
    register_metric,
)
from harness.vocab.probes import KEEP_HALF, SCRAMBLED
from tests._card_inputs import base_inputs, stats_entry
from tests._metric_registry import own_statistics

SPREAD, GAP, HIDDEN = "c0_spread_test", "probe_gap_test", "hidden_stat_test"
MAX_SPREAD = "max_c0_spread_test"


@pytest.fixture
def registered() -> Iterator[None]:
    """A scalar statistic gated by a new threshold, a probe-keyed one, and one kept off cards
    (the only statistics with a ``compute`` while the test runs)."""
    with own_statistics(
        [
            MetricSpec(SPREAD, "c0 spread", unit="score", harmful=+1, threshold=MAX_SPREAD,
                       compute=lambda scores: math.nan),
            MetricSpec(GAP, "probe gap", unit="fraction", harmful=-1, key="probe",
                       compute=lambda scores: {}),
            MetricSpec(HIDDEN, "hidden", places=frozenset({"summary"}), compute=lambda scores: math.nan),
        ],
        thresholds=[ThresholdSpec(MAX_SPREAD, "max", 0.5, "spread of c0 scores (test)")],
    ):
        yield


@pytest.fixture
def nothing_registered() -> Iterator[None]:
    """No statistic with its own ``compute``: neither one of the harness nor of a test."""
    with own_statistics():
        yield


def _options(thresholds: dict[str, float]) -> dict[str, Any]:
    """``manifest.json#/options`` of a one-evaluator run without a companion."""
    return {
        "profile": "smoke",
        "bootstrap": 40,
        "seed": 42,
        "probe_seed": 0,
        "renderer": "tiny-box-rasterizer/1",
        "scene_set_sha256": "cd" * 32,
        "evaluators": {"tiny-a": "ab" * 32},
        "card_facts": {
            "companion": None,
            "scenes": {"dataset": "bundled", "generators": ["g1", "g2"], "kind": "room",
                       "n_prompts": 12, "n_scenes": 24, "prompt_source": "tiny prompts"},
            "evaluators": {"tiny-a": {
                "identity": {"evaluator_id": "tiny-a", "name": "tiny A", "checkpoint": "tiny-v1",
                             "prompt_free": False},
                "judge": False,
                "thresholds": thresholds,
            }},
        },
    }


def _entry(**registered: Any) -> dict[str, Any]:
    return stats_entry(failed_share=0.0, registered=registered)


def test_a_registered_statistic_gets_its_group_on_the_card(registered):
    thresholds = layered(None).for_evaluator("tiny-a")  # the registered default is in it
    assert thresholds[MAX_SPREAD] == 0.5
    entry = _entry(**{SPREAD: 0.7, GAP: {SCRAMBLED: 0.4, KEEP_HALF: math.nan}, HIDDEN: 1.0})
    card = assemble_card("tiny-a", _options(thresholds), entry)
    validate_card(card)
    group = card["registered_metrics"]
    assert list(group) == [SPREAD, GAP]  # registration order; the summary-only one is left off
    assert group[SPREAD] == {"label": "c0 spread", "unit": "score", "value": 0.7,
                             "threshold": MAX_SPREAD, "threshold_value": 0.5, "passed": False}
    gap = group[GAP]
    assert (gap["label"], gap["unit"], gap["key"]) == ("probe gap", "fraction", "probe")
    scrambled = gap["values"][SCRAMBLED]
    assert scrambled["label"] == f"{GAP}[{SCRAMBLED}]" and scrambled["value"] == 0.4
    # a probe-keyed statistic is gated by its probe's threshold
    assert scrambled["threshold"] == "min_scramble_discrimination"
    assert scrambled["passed"] is False and scrambled["threshold_value"] == 0.6
    assert gap["values"][KEEP_HALF]["value"] is None  # undefined: null, and never a pass
    assert gap["values"][KEEP_HALF]["passed"] is False
    # the registered threshold is listed with the card's decision thresholds
    assert card["score_uncertainty"]["decision_thresholds"][MAX_SPREAD] == 0.5


def test_a_passing_value_an_undeclared_threshold_and_a_missing_value(registered):
    inputs = base_inputs()
    inputs["stats"]["registered"] = {SPREAD: 0.2}
    inputs["thresholds"] = {**inputs["thresholds"], MAX_SPREAD: 0.5}
    card = build_card(**inputs)
    validate_card(card)
    assert card["registered_metrics"][SPREAD]["passed"] is True
    assert card["registered_metrics"][GAP]["values"] == NOT_REPORTED  # not in the entry
    inputs["thresholds"] = {k: v for k, v in inputs["thresholds"].items() if k != MAX_SPREAD}
    ungated = build_card(**inputs)["registered_metrics"][SPREAD]
    assert ungated == {"label": "c0 spread", "unit": "score", "value": 0.2, "threshold": MAX_SPREAD}
    inputs["stats"].pop("registered")
    missing = build_card(**inputs)
    validate_card(missing)
    assert missing["registered_metrics"][SPREAD]["value"] == NOT_REPORTED
    assert "/registered_metrics/c0_spread_test/value" in missing["schema_and_status"]["not_reported_fields"]


def test_without_registration_the_card_has_no_group_and_keeps_its_id(nothing_registered):
    assert not [m for m in computed_metrics() if m.shown_in("card")]
    inputs = base_inputs()
    card = build_card(**copy.deepcopy(inputs))
    assert "registered_metrics" not in card
    # a stray "registered" mapping in the entry changes nothing while nothing is registered
    inputs["stats"]["registered"] = {SPREAD: 0.2}
    assert build_card(**inputs) == card
    assert "registered_metrics" not in assemble_card("tiny-a", _options({}), _entry())


def test_a_registered_statistic_kept_off_cards_adds_no_group(registered):
    METRICS.unregister(SPREAD)
    METRICS.unregister(GAP)
    assert "registered_metrics" not in build_card(**base_inputs())


def test_check_wording_names_a_metric_by_its_registered_label():
    assert metric_name("rho[pitch]") == "ρ[pitch]"
    assert metric_name("peak_rho") == "peak ρ" and metric_name("template_rho") == "template ρ"
    assert metric_name("kendall_w[yaw]") == "kendall_w[yaw]"  # ASCII labels: the name stays
    register_metric(MetricSpec("kappa_test", "κ", compute=lambda scores: math.nan))
    try:
        assert metric_name("kappa_test") == "κ"
        assert metric_name("kappa_tests") == "kappa_tests"
    finally:
        METRICS.unregister("kappa_test")
