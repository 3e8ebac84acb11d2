"""The card's companion check: filled from the run's symbolic companion evaluator."""

from __future__ import annotations

import copy

import pytest

from harness.cards import NOT_REPORTED, validate_card
from harness.run.options import AuditOptions
from harness.run.session import AuditSession


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


def test_an_evaluator_without_protocol_effect_agrees_fully(session):
    card = session.cards.card("planted-robust")
    validate_card(card)
    check = card["companion_check"]
    assert check["kind"] == "geometry_grounded"
    got = check["agreement"]
    assert got["pair_agreement"] == 1.0 and got["ranking_tau"] == pytest.approx(1.0)
    assert got["probes"]["scrambled"]["drop_credit"] == 1.0
    assert got["n_pairs"] > 0 and got["probes"]["scrambled"]["n_edits"] > 0
    assert got["winner"] == got["companion_winner"] == "faithful"
    missing = card["released_or_missing_evidence"]["known_missing"]
    assert not any("companion" in m for m in missing)


def test_a_layout_blind_evaluator_misses_the_broken_layouts(session):
    scrambled = session.cards.card("planted-bow")["companion_check"]["agreement"]["probes"]["scrambled"]
    # it sees which objects are there, not where: scrambles the companion flags look intact
    assert scrambled["drop_credit"] <= 0.7 and scrambled["n_edits"] > 0


@pytest.mark.parametrize("evaluator", ["planted-robust", "planted-bow", "planted-pitch"])
def test_the_prose_states_the_numbers_of_the_data(session, evaluator):
    check = session.cards.card(evaluator)["companion_check"]
    got, text = check["agreement"], check["details"]
    assert f"orders {100 * got['pair_agreement']:.0f}% of the {got['n_pairs']} within-prompt" in text
    assert f"Kendall tau-b {got['ranking_tau']:+.2f};" in text
    assert f"c0 winner {got['winner'] or 'tied'} (companion: {got['companion_winner'] or 'tied'})" in text
    for probe, p in got["probes"].items():
        assert f"{probe}: drops on {100 * p['drop_credit']:.0f}% of the {p['n_edits']} edits" in text


def test_the_companion_card_says_what_it_is(session):
    check = session.cards.card("companion")["companion_check"]
    assert check["kind"] == "geometry_grounded"
    assert check["details"].startswith("this evaluator is the symbolic companion `companion`")
    assert "agreement" not in check  # nothing to agree with: itself


def test_without_a_companion_the_field_is_not_reported(tmp_path):
    options = AuditOptions(
        profile="smoke", evaluators=("planted-robust",), cache_dir=tmp_path, bootstrap=20
    )
    card = AuditSession(options).cards.card("planted-robust")
    assert card["companion_check"]["kind"] == NOT_REPORTED
    assert any("companion" in m for m in card["released_or_missing_evidence"]["known_missing"])


def test_the_schema_rejects_malformed_agreement_data(session):
    from harness.cards import card_id
    from harness.core.errors import CardError

    card = copy.deepcopy(session.cards.card("planted-robust"))
    del card["companion_check"]["agreement"]["n_pairs"]
    card["card_id"] = card_id(card)
    with pytest.raises(CardError, match="n_pairs"):
        validate_card(card)
