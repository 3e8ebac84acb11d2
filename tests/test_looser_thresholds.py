"""A threshold looser than the study's is marked so in the card and the report; the
study's own values and stricter ones leave both as they were."""

from __future__ import annotations

import json

import pytest

from harness.checks.thresholds import looser_than_study
from harness.vocab.metrics import default_thresholds

pytest_plugins = ["pytester"]


def test_looser_means_a_higher_max_or_a_lower_min():
    study = default_thresholds()
    assert looser_than_study(study) == {}
    loose = {**study, "peak_rho_max": study["peak_rho_max"] * 3, "min_kendall_w": study["min_kendall_w"] / 2,
             "max_failed_share": study["max_failed_share"] / 2, "min_my_metric": 0.0}  # fmt: skip
    assert looser_than_study(loose) == {
        "min_kendall_w": {"value": study["min_kendall_w"] / 2, "study": study["min_kendall_w"]},
        "peak_rho_max": {"value": study["peak_rho_max"] * 3, "study": study["peak_rho_max"]},
    }  # a stricter max_failed_share and a custom threshold are not looser


def test_a_card_with_the_study_thresholds_has_no_looser_entry():
    from harness.cards.card_format import _looser

    assert _looser(default_thresholds()) == {}
    assert "looser_than_study" in _looser({**default_thresholds(), "max_top1_count": 99})


@pytest.mark.slow
def test_the_tiny_reports_lenient_thresholds_are_marked_in_card_and_page(tiny_report):
    from harness.cards.card_format import card_id, validate_card

    study = default_thresholds()
    card = json.loads((tiny_report / "cards" / "tiny-pairs.json").read_text())
    looser = card["score_uncertainty"]["looser_than_study"]
    assert looser["peak_rho_max"] == {"value": 1000.0, "study": study["peak_rho_max"]}
    assert looser["max_failed_share"] == {"value": 1.0, "study": study["max_failed_share"]}
    validate_card(card)  # the schema holds
    assert card_id(card) == card["card_id"]
    page = (tiny_report / "report.html").read_text()
    assert "tiny-pairs was gated with thresholds looser than the study" in page
    assert "peak_rho_max 1000 (study" in page


@pytest.mark.slow
def test_the_terminal_summary_names_looser_thresholds(pytester):
    from tests._audit_project import make_project

    make_project(pytester)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "0",
                                           "--audit-cache-dir", str(pytester.path / "cache"), timeout=300)
    result.stdout.fnmatch_lines(["*looser than the study: tiny-grid was gated with *peak_rho_max 1000 (study *"])
