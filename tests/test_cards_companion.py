"""The card's companion check: filled from the run's symbolic companion evaluator."""

from __future__ import annotations

import re

import pytest

from harness.cards import NOT_REPORTED, validate_card
from harness.session import AuditOptions, AuditSession


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache")
    options = AuditOptions(
        profile="smoke",
        evaluators=("planted-robust", "planted-bow", "planted-pitch", "companion"),
        cache_dir=cache,
        report_dir=cache / "reports",
        bootstrap=50,
    )
    return AuditSession(options)


def _numbers(details: str) -> dict[str, str]:
    pairs = re.search(r"orders (\S+) of the (\d+) within-prompt", details)
    tau = re.search(r"Kendall tau-b (\S+?);", details)
    scramble = re.search(r"scrambled: drops on (\S+) of the (\d+) edits", details)
    assert pairs and tau and scramble, details
    return {
        "pairs": pairs.group(1),
        "n_pairs": pairs.group(2),
        "tau": tau.group(1),
        "scrambled": scramble.group(1),
        "n_scrambled": scramble.group(2),
    }


def test_an_evaluator_without_protocol_effect_agrees_fully(session):
    card = session.card("planted-robust")
    validate_card(card)
    check = card["companion_check"]
    assert check["kind"] == "geometry_grounded"
    got = _numbers(check["details"])
    assert got["pairs"] == "100%" and got["tau"] == "+1.00" and got["scrambled"] == "100%"
    assert int(got["n_pairs"]) > 0 and int(got["n_scrambled"]) > 0
    assert "c0 winner faithful (companion: faithful)" in check["details"]
    missing = card["released_or_missing_evidence"]["known_missing"]
    assert not any("companion" in m for m in missing)


def test_a_layout_blind_evaluator_misses_the_broken_layouts(session):
    got = _numbers(session.card("planted-bow")["companion_check"]["details"])
    # it sees which objects are there, not where: scrambles the companion flags look intact
    assert int(got["scrambled"].rstrip("%")) <= 70


def test_the_companion_card_says_what_it_is(session):
    check = session.card("companion")["companion_check"]
    assert check["kind"] == "geometry_grounded"
    assert check["details"].startswith("this evaluator is the symbolic companion `companion`")


def test_without_a_companion_the_field_is_not_reported(tmp_path):
    options = AuditOptions(
        profile="smoke", evaluators=("planted-robust",), cache_dir=tmp_path, bootstrap=20
    )
    card = AuditSession(options).card("planted-robust")
    assert card["companion_check"]["kind"] == NOT_REPORTED
    assert any("companion" in m for m in card["released_or_missing_evidence"]["known_missing"])
