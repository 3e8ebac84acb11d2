"""Competence at c0 next to fragility: harness.report.competence and the terminal summary."""

from __future__ import annotations

import re

from harness.report.competence import COMPETENT_AGREEMENT, agreement_of, contrast, contrasts
from harness.report.terminal import headlines, render_table, rows_from

AGREE = {"pair_agreement": 0.8, "n_pairs": 700, "ranking_tau": 0.6, "winner": "faithful",
         "companion_winner": "faithful", "probes": {}}  # fmt: skip


def _card(agreement):
    return {"companion_check": {"kind": "geometry_grounded", "details": "x",
                                **({"agreement": agreement} if agreement else {})}}  # fmt: skip


def test_competent_yet_moved_reads_as_the_headline():
    c = contrast({"peak_rho": 2.5, "min_w": 0.4, "max_top1": 3}, AGREE)
    assert c["competent"] is True and c["winner_moves"] is True
    assert c["headline"] == (
        "ranks generators like the symbolic companion at the default view (80% of generator pairs "
        "in the same order; its winner faithful, the companion's faithful), yet changing the camera, "
        "lighting, background or caption wording changes its winner (3 different winners across "
        "the levels of one setting)")
    # the technical names live in the tooltip, not in the words
    assert c["terms"] == ("c0 (default configuration) pair agreement 80%, Kendall tau-b +0.60; "
                          "peak rho 2.50, min Kendall W 0.40, 3 distinct top-1 generators over one factor")


def test_not_competent_and_stable_and_unknown():
    low = contrast({"peak_rho": 0.3, "min_w": 0.9, "max_top1": 1}, {**AGREE, "pair_agreement": 0.55})
    assert low["competent"] is False and low["winner_moves"] is False
    assert low["headline"].startswith("ranks generators unlike the symbolic companion at the default view (55%")
    assert low["headline"].endswith("and changing the protocol keeps its winner")
    edge = contrast({"max_top1": 2}, {**AGREE, "pair_agreement": COMPETENT_AGREEMENT})
    assert edge["competent"] is True and "peak rho n/a" in edge["terms"]
    none = contrast({"max_top1": None}, None)
    assert none["competent"] is None and none["winner_moves"] is None
    assert none["headline"] == ("not compared with the symbolic companion in this run, its "
                                "sensitivity to the protocol was not measured")
    for c in (low, edge, none):
        assert not re.search(r"\bc0\b|tau-b|\brho\b|min W|ρ|τ", c["headline"]), c["headline"]


def test_contrasts_skip_cards_without_an_agreement():
    summary = {"evaluators": {"a": {"max_top1": 2}, "companion": {"max_top1": 1}, "b": {}}}
    cards = {"a": _card(AGREE), "companion": _card(None)}
    assert list(contrasts(summary, cards)) == ["a"]
    assert agreement_of(None) is None and agreement_of({"companion_check": "not_reported"}) is None


def test_terminal_rows_put_c0_agreement_next_to_fragility():
    summary = {"evaluators": {"a": {"peak_rho": 1.5, "min_w": 0.5, "max_top1": 2}, "b": {"peak_rho": 0.2}}}
    rows = rows_from(summary, [], {"a": _card(AGREE)})
    assert rows[0]["c0_agree"] == "80%" and rows[0]["c0_winner"] == "faithful"
    assert rows[1]["c0_agree"] == "— no card" and "headline" not in rows[1]
    header = render_table(rows)[0]
    assert header.index("c0 agree") < header.index("c0 winner") < header.index("peak ρ")
    (line,) = headlines(rows)
    assert line.startswith("a: ranks generators like the symbolic companion") and "yet changing the camera" in line
    assert rows_from(summary, [])[0]["c0_agree"] == "— no card"  # no cards: no agreement


def test_every_dash_says_why():
    from harness.report.terminal import dash_notes

    summary = {"evaluators": {"companion": {"peak_rho": 0.0}, "x": {"peak_rho": 0.5}, "y": {}}}
    companion = {"companion_check": {"kind": "geometry_grounded",
                                     "details": "this evaluator is the symbolic companion `companion`: ..."}}
    cards = {"companion": companion, "x": {"companion_check": {"kind": "not_reported", "details": "none"}},
             "y": _card(None)}
    rows = {r["evaluator"]: r for r in rows_from(summary, [], cards)}
    assert rows["companion"]["c0_agree"] == "— it is the companion"
    assert rows["x"]["c0_agree"] == "— no companion in this run"
    assert rows["y"]["c0_agree"] == "— agreement undefined"
    assert rows["x"]["gate"] == "no tests ran"
    (note,) = dash_notes(list(rows.values()))  # bare dashes (c0 winner, y's statistics) explained
    assert "c0 winner needs a c0 agreement" in note and "does not measure it" in note
    full = rows_from({"evaluators": {"a": {"peak_rho": 1, "peak_rho_ci": [0.5, 2], "min_w": 1, "max_top1": 1,
                                           "discrimination": {"scrambled": 1}, "best_view_inflation": 1,
                                           "failed": 0, "registered": {"movement": {"pitch": 0.4},
                                                                        "peak_movement": 0.4}}}},
                     [{"evaluator": "a", "outcome": "passed"}], {"a": _card(AGREE)})
    assert dash_notes(full) == []  # nothing to explain
